//! The providers that need no network: `manual` and the editor's own model.

use futures::future::BoxFuture;

use super::provider::{Provider, ProviderError};
use super::types::{Block, CreateMessageParams, CreateMessageResult, Role};
use crate::ui::Prompter;

/// No model: the answer draft starts empty for the person to write.
pub struct Manual;

impl Provider for Manual {
    fn name(&self) -> &str {
        "manual"
    }

    fn complete<'a>(
        &'a self,
        _request: &'a CreateMessageParams,
        _model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ProviderError>> {
        Box::pin(async {
            Ok(CreateMessageResult {
                role: Role::Assistant,
                content: vec![Block::text("")],
                model: "manual".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
    }
}

/// The editor's own model, through `mcp-sidecar/languageModel`.
pub struct EditorModel<'a> {
    pub ui: &'a dyn Prompter,
}

impl Provider for EditorModel<'_> {
    fn name(&self) -> &str {
        "editor"
    }

    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageParams,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ProviderError>> {
        Box::pin(async move {
            let mut params =
                serde_json::to_value(request).map_err(|e| ProviderError(e.to_string()))?;
            if let Some(model) = model {
                params["model"] = serde_json::Value::String(model.to_string());
            }
            let answer = self
                .ui
                .language_model(params)
                .await
                .map_err(ProviderError)?;
            serde_json::from_value(answer).map_err(|e| {
                ProviderError(format!(
                    "the editor's model answered something unreadable: {e}"
                ))
            })
        })
    }
}
