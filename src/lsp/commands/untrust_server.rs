//! `mcp-sidecar.untrustServer`: records "don't trust" for a workspace-defined server.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, trust_server};
use crate::contract::{self, ServerArgs};
use crate::mcp::Reply;

pub struct UntrustServer;

impl Handler for UntrustServer {
    const NAME: &'static str = contract::CMD_UNTRUST_SERVER;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Decides;
    type Args = ServerArgs;

    async fn run(cx: &Context<'_>, args: ServerArgs, _: Delivery) -> Result<Reply> {
        trust_server::record(cx, &args.server, false)
    }
}
