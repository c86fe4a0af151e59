//! `mcp-sidecar.cancelTask`: `tasks/cancel` for a running task; its state now.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, to_lsp};
use crate::contract::{self, TaskArgs};
use crate::mcp::Reply;

pub struct CancelTask;

impl Handler for CancelTask {
    const NAME: &'static str = contract::CMD_CANCEL_TASK;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = TaskArgs;

    async fn run(cx: &Context<'_>, args: TaskArgs, _: Delivery) -> Result<Reply> {
        let info = cx
            .manager
            .cancel_task(&args.server, &args.task_id)
            .map_err(to_lsp)?;
        Ok(Reply::Json(serde_json::to_value(info).unwrap_or_default()))
    }
}
