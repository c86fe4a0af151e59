//! `mcp-sidecar.getPrompt`: a server's prompt; the arguments it lacks are asked first (see
//! [`arguments::ask_prompt`]), with the server's completions as suggestions.

use serde_json::Value;
use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, not_asked, to_lsp};
use crate::contract::{self, CallError, GetPromptArgs};
use crate::elicitation::arguments;
use crate::mcp::{Caller, Manager, Reply};

pub struct GetPrompt;

impl Handler for GetPrompt {
    const NAME: &'static str = contract::CMD_GET_PROMPT;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = GetPromptArgs;

    async fn run(cx: &Context<'_>, args: GetPromptArgs, _: Delivery) -> Result<Reply> {
        let GetPromptArgs {
            server,
            name,
            arguments,
        } = args;
        let declared: Vec<arguments::PromptArgument> = cx
            .manager
            .list_prompts(Some(&server))
            .await
            .map_err(to_lsp)?
            .into_iter()
            .find(|p| p.name == name)
            .and_then(|p| p.arguments)
            .unwrap_or_default()
            .iter()
            .map(|a| arguments::PromptArgument {
                name: a["name"].as_str().unwrap_or_default().to_owned(),
                title: a["title"].as_str().map(str::to_owned),
                description: a["description"].as_str().map(str::to_owned),
                required: a["required"] == true,
            })
            .collect();
        let completions = Completions {
            manager: cx.manager,
            server: &server,
            prompt: &name,
            given: arguments.clone().unwrap_or_default(),
        };
        let asked = arguments::ask_prompt(
            &cx.editor,
            &server,
            &name,
            &declared,
            arguments,
            Some(&completions),
        )
        .await
        .map_err(|why| not_asked(why, &format!("prompt {name}"), "the prompt was not fetched"))?;
        let got = cx
            .manager
            .get_prompt(&server, &name, Some(asked), Caller::default());
        got.await.map_err(to_lsp)
    }
}

/// A prompt argument's suggestions: the server's `completion/complete` for an empty value, in
/// the context of the arguments known so far. A server without completions, or one whose
/// completion fails, suggests nothing.
struct Completions<'a> {
    manager: &'a Manager,
    server: &'a str,
    prompt: &'a str,
    given: serde_json::Map<String, Value>,
}

impl arguments::Suggest for Completions<'_> {
    fn suggest<'a>(
        &'a self,
        field: &'a str,
        earlier: serde_json::Map<String, Value>,
    ) -> futures::future::BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let mut known = self.given.clone();
            known.extend(earlier);
            let params = serde_json::json!({
                "ref": {"type": "ref/prompt", "name": self.prompt},
                "argument": {"name": field, "value": ""},
                "context": {"arguments": known},
            });
            match self.manager.complete(self.server, params).await {
                Ok(result) => result["completion"]["values"]
                    .as_array()
                    .map(|values| {
                        values
                            .iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                Err(CallError::Refused(_)) => Vec::new(),
                Err(e) => {
                    tracing::debug!(server = self.server, field, "completion failed: {e}");
                    Vec::new()
                }
            }
        })
    }
}
