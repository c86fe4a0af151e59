//! `mcp-sidecar.complete`: a server's `completion/complete`.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, to_lsp};
use crate::contract::{self, CompleteArgs};
use crate::mcp::Reply;

pub struct Complete;

impl Handler for Complete {
    const NAME: &'static str = contract::CMD_COMPLETE;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = CompleteArgs;

    async fn run(cx: &Context<'_>, args: CompleteArgs, _: Delivery) -> Result<Reply> {
        let mut mcp = serde_json::json!({"ref": args.reference, "argument": args.argument});
        if let Some(context) = args.context {
            mcp["context"] = context;
        }
        let result = cx.manager.complete(&args.server, mcp).await;
        Ok(Reply::Json(result.map_err(to_lsp)?))
    }
}
