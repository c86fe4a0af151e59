//! `mcp-sidecar.listApps`: the open views of servers' tools (MCP Apps).

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, NoArgs, Trust};
use crate::contract;
use crate::mcp::Reply;

pub struct ListApps;

impl Handler for ListApps {
    const NAME: &'static str = contract::CMD_LIST_APPS;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = NoArgs;

    async fn run(cx: &Context<'_>, _: NoArgs, _: Delivery) -> Result<Reply> {
        let rows = cx.apps.list().await;
        Ok(Reply::Json(serde_json::to_value(rows).unwrap_or_default()))
    }
}
