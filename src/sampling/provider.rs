//! Where model answers come from. Each provider is real: the editor's own model
//! (`mcp-sidecar/languageModel`), an OpenAI-compatible HTTP endpoint ([`super::openai`]), or
//! `manual` (a person writes the answer in the response draft). The trait and the two providers
//! that need no network are here.

use futures::future::BoxFuture;

use super::types::{Block, CreateMessageParams, CreateMessageResult, Role};
use crate::ui::Prompter;

/// A provider's failure, phrased for the person reading the response draft.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderError(pub String);

/// Where a request goes, as the request draft names it (read-only there).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Destination {
    /// `manual`, `editor` or `openai`.
    pub provider: String,
    /// The endpoint's host (and port when not the default), for a network provider.
    pub host: Option<String>,
    /// The model asked when the request names none.
    pub default_model: Option<String>,
}

pub trait Provider: Send + Sync {
    /// Shown in drafts and the audit log.
    fn name(&self) -> &str;
    /// Something the person must know about this provider before it is used (shown once).
    fn warning(&self) -> Option<String> {
        None
    }
    /// Where requests go; by default the provider's name and nothing else.
    fn destination(&self) -> Destination {
        Destination {
            provider: self.name().to_string(),
            ..Destination::default()
        }
    }
    /// Asks the model. `model` is the model id chosen for this request (from the draft header),
    /// if any. `maxTokens` must be respected.
    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageParams,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ProviderError>>;
}

/// A provider shared by reference (the one built when the settings were applied).
impl<P: Provider + ?Sized> Provider for &P {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn warning(&self) -> Option<String> {
        (**self).warning()
    }
    fn destination(&self) -> Destination {
        (**self).destination()
    }
    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageParams,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ProviderError>> {
        (**self).complete(request, model)
    }
}

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
