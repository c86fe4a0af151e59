//! What a view reaches, over the manager: its own server's tools (called as a view's, so
//! visibility applies twice: in `apps::request` and in the connection) and resources, and the
//! editor.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};

use crate::apps::{AppHost, HostError, Surface, request::DENIED};
use crate::contract::CallError;
use crate::mcp::{Caller, Manager, Reply, ToolArguments};
use crate::ui::Prompter;

pub struct Reach<'a> {
    pub manager: &'a Manager,
    pub ui: Arc<dyn Prompter>,
}

fn as_view() -> Caller {
    Caller {
        surface: Surface::App,
        ..Caller::default()
    }
}

/// A failed call as the view sees it: the server's own code, or a refusal.
pub fn host_error(e: CallError) -> HostError {
    match e {
        CallError::Server { code, message, .. } => (i64::from(code), message),
        other => (DENIED, other.to_string()),
    }
}

/// A reply as JSON (a result the sidecar could not read is the server's fault).
pub fn value_of(reply: Reply) -> Result<Value, HostError> {
    reply
        .into_value()
        .ok_or((DENIED, "the server's answer is not JSON".to_string()))
}

impl AppHost for Reach<'_> {
    fn call_tool<'a>(
        &'a self,
        server: &'a str,
        name: &'a str,
        arguments: Option<Map<String, Value>>,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        Box::pin(async move {
            let arguments = ToolArguments::Object(arguments.unwrap_or_default());
            let reply = self
                .manager
                .call_tool(server, name, Some(arguments), as_view())
                .await
                .map_err(host_error)?;
            value_of(reply)
        })
    }

    fn tools<'a>(&'a self, server: &'a str) -> BoxFuture<'a, Result<Vec<Value>, HostError>> {
        Box::pin(async move {
            self.manager
                .tool_definitions(server)
                .await
                .map_err(host_error)
        })
    }

    fn resources<'a>(
        &'a self,
        server: &'a str,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        Box::pin(async move {
            match method {
                "resources/read" => {
                    let uri = params
                        .get("uri")
                        .and_then(Value::as_str)
                        .ok_or((-32602, "resources/read needs a \"uri\"".to_string()))?;
                    let reply = self
                        .manager
                        .read_resource(server, uri, as_view())
                        .await
                        .map_err(host_error)?;
                    value_of(reply)
                }
                "resources/list" => {
                    let list = self
                        .manager
                        .list_resources(Some(server))
                        .await
                        .map_err(host_error)?;
                    Ok(json!({"resources": rows(list)}))
                }
                _ => {
                    let list = self
                        .manager
                        .list_resource_templates(Some(server))
                        .await
                        .map_err(host_error)?;
                    Ok(json!({"resourceTemplates": rows(list)}))
                }
            }
        })
    }

    fn ui(&self) -> &dyn Prompter {
        &*self.ui
    }
}

/// The manager's rows as the protocol's: without the sidecar's own `server` and `label`.
fn rows<T: serde::Serialize>(list: Vec<T>) -> Vec<Value> {
    list.into_iter()
        .filter_map(|row| serde_json::to_value(row).ok())
        .map(|mut row| {
            if let Some(o) = row.as_object_mut() {
                o.remove("server");
                o.remove("label");
            }
            row
        })
        .collect()
}
