//! `mcp-sidecar.listTasks`: the tasks tool calls became (Tasks extension), running ones first.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, NoArgs, Trust};
use crate::contract;
use crate::mcp::Reply;

pub struct ListTasks;

impl Handler for ListTasks {
    const NAME: &'static str = contract::CMD_LIST_TASKS;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = NoArgs;

    async fn run(cx: &Context<'_>, _: NoArgs, _: Delivery) -> Result<Reply> {
        let rows = cx.manager.list_tasks();
        Ok(Reply::Json(serde_json::to_value(rows).unwrap_or_default()))
    }
}
