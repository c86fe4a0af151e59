//! `mcp-sidecar.listServers`: one row per configured server.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, NoArgs, Trust, json};
use crate::contract::{self, shown::Shown};
use crate::mcp::Reply;

pub struct ListServers;

impl Handler for ListServers {
    const NAME: &'static str = contract::CMD_LIST_SERVERS;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = NoArgs;

    async fn run(cx: &Context<'_>, _: NoArgs, _: Delivery) -> Result<Reply> {
        json(cx.manager.list_servers().shown())
    }
}
