//! `mcp-sidecar.signOut`: revokes and forgets a server's grant.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, json, to_lsp};
use crate::contract::{self, ServerArgs};
use crate::mcp::Reply;

pub struct SignOut;

impl Handler for SignOut {
    const NAME: &'static str = contract::CMD_SIGN_OUT;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ServerArgs;

    async fn run(cx: &Context<'_>, args: ServerArgs, _: Delivery) -> Result<Reply> {
        json(cx.manager.sign_out(&args.server).await.map_err(to_lsp)?)
    }
}
