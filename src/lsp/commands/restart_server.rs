//! `mcp-sidecar.restartServer`: restarts a server now; without one named, asks which.

use serde_json::Value;
use tower_lsp_server::jsonrpc::{Error, Result};

use super::{Class, Context, Delivery, Handler, Trust, json, to_lsp, to_value};
use crate::contract::{self, QuickPickItem, QuickPickParams, QuickPickResult, RestartServerArgs};
use crate::mcp::Reply;

pub struct RestartServer;

impl Handler for RestartServer {
    const NAME: &'static str = contract::CMD_RESTART_SERVER;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = RestartServerArgs;

    async fn run(cx: &Context<'_>, args: RestartServerArgs, _: Delivery) -> Result<Reply> {
        let server = match args.server {
            Some(server) => server,
            None => match pick(cx).await? {
                Some(server) => server,
                None => return json(Value::Null),
            },
        };
        cx.manager.restart(&server).map_err(to_lsp)?;
        json(serde_json::json!({ "server": server }))
    }
}

/// The server the person picks; `None` when they dismissed the question.
async fn pick(cx: &Context<'_>) -> Result<Option<String>> {
    let servers = cx.manager.list_servers();
    if servers.is_empty() {
        return Err(Error::invalid_params("no MCP servers are configured"));
    }
    let items = servers
        .iter()
        .map(|s| {
            QuickPickItem::new(s.status.name.clone())
                .with_description(to_value(s.status.state).as_str().unwrap_or_default())
        })
        .collect();
    let picked = cx
        .editor
        .try_quick_pick(QuickPickParams {
            title: "Restart which MCP server?".into(),
            items,
            ..Default::default()
        })
        .await
        .map_err(to_lsp)?;
    Ok(match picked.as_ref().and_then(QuickPickResult::first) {
        Some(i) if i < servers.len() => Some(servers[i].status.name.clone()),
        _ => None,
    })
}
