//! `mcp-sidecar.signIn`: signs in to an `http` server now, without the "Sign in / Not now"
//! question.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, json, to_lsp};
use crate::contract::{self, ServerArgs, shown::Shown};
use crate::mcp::Reply;

pub struct SignIn;

impl Handler for SignIn {
    const NAME: &'static str = contract::CMD_SIGN_IN;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ServerArgs;

    async fn run(cx: &Context<'_>, args: ServerArgs, _: Delivery) -> Result<Reply> {
        let row = cx.manager.sign_in(&args.server).await;
        json(row.map_err(to_lsp)?.shown())
    }
}
