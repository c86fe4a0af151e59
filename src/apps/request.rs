//! What a view may ask, answered the same way whatever runs it (the editor's webview, the
//! loopback page): one JSON-RPC message in, its answer out. The view reaches only its own server,
//! only the tools whose visibility has `app`, opens a link only with the person's consent, and
//! sends at most [`super::views::RATE`] messages a second.

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use super::meta::{self, Surface};
use super::views::View;
use crate::contract::shown;
use crate::elicitation::{self, Outcome};
use crate::ui::{Level, Prompter};

/// A view's message, at most (the page's `/rpc` body, the webview's `appRequest`).
pub const MAX_MESSAGE: usize = 1024 * 1024;
/// A refusal of the host's: `-32000`.
pub const DENIED: i64 = -32000;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// An error for the view: its JSON-RPC code and message.
pub type HostError = (i64, String);

/// What the views reach through the host: their server, and the editor.
pub trait AppHost: Send + Sync {
    /// `tools/call` of `name` on `server`, as a view's call (visibility `app`).
    fn call_tool<'a>(
        &'a self,
        server: &'a str,
        name: &'a str,
        arguments: Option<Map<String, Value>>,
    ) -> BoxFuture<'a, Result<Value, HostError>>;
    /// The server's tools, as it listed them.
    fn tools<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Vec<Value>, HostError>>;
    /// `resources/read`, `resources/list` or `resources/templates/list` on `server`.
    fn resources<'a>(
        &'a self,
        server: &'a str,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, HostError>>;
    /// The editor, for consent and messages.
    fn ui(&self) -> &dyn Prompter;
}

/// The answer to one message of a view.
#[derive(Debug, Default, PartialEq)]
pub struct Answer {
    /// The JSON-RPC response (none for a notification).
    pub response: Option<Value>,
    /// The view asked to be closed (`ui/notifications/request-teardown`).
    pub close: bool,
}

/// Answers one message the app of `view` sent.
pub async fn answer(host: &dyn AppHost, view: &View, message: &Value) -> Answer {
    let id = message
        .get("id")
        .filter(|id| id.is_string() || id.is_number());
    let Some(method) = message.get("method").and_then(Value::as_str) else {
        return match id {
            Some(id) => respond(id, Err((INVALID_PARAMS, "not a JSON-RPC request".into()))),
            None => Answer::default(),
        };
    };
    if let Err(first) = view.admit() {
        if first {
            tracing::warn!(
                server = view.server(),
                view = view.id,
                "the view sends more than {} messages a second; refusing them",
                super::views::RATE
            );
        }
        return match id {
            Some(id) => respond(
                id,
                Err((
                    DENIED,
                    "too many messages: a view may send 20 a second".into(),
                )),
            ),
            None => Answer::default(),
        };
    }
    let empty = Value::Object(Map::new());
    let params = message.get("params").unwrap_or(&empty);
    let Some(id) = id else {
        return notification(view, method, params);
    };
    let outcome = match method {
        "tools/call" => call(host, view, params).await,
        "tools/list" => tools(host, view).await,
        "resources/read" | "resources/list" | "resources/templates/list" => {
            host.resources(view.server(), method, params).await
        }
        "ui/open-link" => open_link(host, view, params).await,
        "ui/message" => {
            let text = text_of(params.get("content"));
            let shown = shown::line(&text, shown::MAX_MESSAGE).into_owned();
            let message = format!("{} (view of {}): {shown}", view.server(), view.tool_name());
            if view.set_message(shown) {
                host.ui().show_message(Level::Info, message);
            }
            Ok(json!({}))
        }
        "ui/update-model-context" => {
            view.set_model_context(params.clone());
            Ok(json!({}))
        }
        "ui/request-display-mode" => Ok(json!({"mode": "inline"})),
        "ping" => Ok(json!({})),
        other => Err((
            METHOD_NOT_FOUND,
            format!(
                "a view may not ask \"{}\"",
                shown::line(other, shown::MAX_NAME)
            ),
        )),
    };
    respond(id, outcome)
}

fn respond(id: &Value, outcome: Result<Value, HostError>) -> Answer {
    let response = match outcome {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    };
    Answer {
        response: Some(response),
        close: false,
    }
}

fn notification(view: &View, method: &str, params: &Value) -> Answer {
    match method {
        "ui/notifications/initialized" => {
            if let Some(after) = view.initialized() {
                tracing::debug!(
                    server = view.server(),
                    view = view.id,
                    "the view is initialized {} ms after it opened",
                    after.as_millis()
                );
            }
        }
        "ui/notifications/request-teardown" => {
            return Answer {
                response: None,
                close: true,
            };
        }
        "notifications/message" => {
            let data = params.get("data").map(Value::to_string).unwrap_or_default();
            tracing::debug!(
                server = view.server(),
                view = view.id,
                "view log: {}",
                shown::line(&data, shown::MAX_TEXT)
            );
        }
        _ => {}
    }
    Answer::default()
}

/// A view's `tools/call`: a tool of its own server whose visibility has `app`.
async fn call(host: &dyn AppHost, view: &View, params: &Value) -> Result<Value, HostError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or((INVALID_PARAMS, "tools/call needs a \"name\"".to_string()))?;
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => None,
        Some(Value::Object(a)) => Some(a.clone()),
        Some(_) => return Err((INVALID_PARAMS, "\"arguments\" must be an object".into())),
    };
    let tools = host.tools(view.server()).await?;
    let shown_name = shown::line(name, shown::MAX_NAME);
    let tool = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
        .ok_or_else(|| {
            (
                DENIED,
                format!("{} has no tool \"{shown_name}\"", view.server()),
            )
        })?;
    if !meta::visibility(tool.get("_meta").and_then(Value::as_object)).allows(Surface::App) {
        return Err((
            DENIED,
            format!("the tool \"{shown_name}\" is not for views (its visibility has no \"app\")"),
        ));
    }
    host.call_tool(view.server(), name, arguments).await
}

/// A view's `tools/list`: its server's tools whose visibility has `app`.
async fn tools(host: &dyn AppHost, view: &View) -> Result<Value, HostError> {
    let tools: Vec<Value> = host
        .tools(view.server())
        .await?
        .into_iter()
        .filter(|t| {
            meta::visibility(t.get("_meta").and_then(Value::as_object)).allows(Surface::App)
        })
        .collect();
    Ok(json!({"tools": tools}))
}

/// `ui/open-link`: the person is asked first, as URL elicitation asks.
async fn open_link(host: &dyn AppHost, view: &View, params: &Value) -> Result<Value, HostError> {
    let url = params
        .get("url")
        .and_then(Value::as_str)
        .ok_or((INVALID_PARAMS, "ui/open-link needs a \"url\"".to_string()))?;
    let message = format!("the view of {} wants to open a link", view.tool_name());
    match elicitation::url::run(host.ui(), view.server(), &message, url).await {
        Outcome::Accept(_) => Ok(json!({})),
        _ => Err((DENIED, "the link was not opened".into())),
    }
}

/// The text of `ui/message`'s content: an object or a list of content blocks (both are sent).
fn text_of(content: Option<&Value>) -> String {
    let blocks: Vec<&Value> = match content {
        Some(Value::Array(list)) => list.iter().collect(),
        Some(block @ Value::Object(_)) => vec![block],
        Some(Value::String(s)) => return s.clone(),
        _ => Vec::new(),
    };
    blocks
        .iter()
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests;
