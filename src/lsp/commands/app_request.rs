//! `mcp-sidecar.appRequest`: one message of a view the editor hosts, answered as the loopback
//! page's are (`crate::apps::request`). Long: a link waits for the person's consent.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust};
use crate::contract::{self, AppRequestArgs};
use crate::mcp::Reply;

pub struct AppRequest;

impl Handler for AppRequest {
    const NAME: &'static str = contract::CMD_APP_REQUEST;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = AppRequestArgs;

    async fn run(cx: &Context<'_>, args: AppRequestArgs, _: Delivery) -> Result<Reply> {
        let answer = cx.apps.answer(&args.view, &args.message).await;
        Ok(Reply::Json(answer.unwrap_or(serde_json::Value::Null)))
    }
}
