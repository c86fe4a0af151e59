//! `mcp-sidecar.listResources`: the resources of one server, or of every running one.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, json, to_lsp};
use crate::contract::{self, ListToolsArgs, shown::Shown};
use crate::mcp::Reply;

pub struct ListResources;

impl Handler for ListResources {
    const NAME: &'static str = contract::CMD_LIST_RESOURCES;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ListToolsArgs;

    async fn run(cx: &Context<'_>, args: ListToolsArgs, _: Delivery) -> Result<Reply> {
        let rows = cx.manager.list_resources(args.server.as_deref()).await;
        json(rows.map_err(to_lsp)?.shown())
    }
}
