//! `mcp-sidecar.closeApp`: the editor closed a view's panel; its state is gone.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust};
use crate::contract::{self, AppArgs};
use crate::mcp::Reply;

pub struct CloseApp;

impl Handler for CloseApp {
    const NAME: &'static str = contract::CMD_CLOSE_APP;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = AppArgs;

    async fn run(cx: &Context<'_>, args: AppArgs, _: Delivery) -> Result<Reply> {
        cx.apps.close(&args.view, "the editor closed it");
        Ok(Reply::Json(serde_json::Value::Null))
    }
}
