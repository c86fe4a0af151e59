//! `mcp-sidecar.appRequest`: one message of a view the editor hosts, answered as the loopback
//! page's are (`crate::apps::request`). Long: a link waits for the person's consent.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, to_lsp};
use crate::contract::{self, AppRequestArgs, CallError};
use crate::mcp::Reply;

pub struct AppRequest;

impl Handler for AppRequest {
    const NAME: &'static str = contract::CMD_APP_REQUEST;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = AppRequestArgs;

    async fn run(cx: &Context<'_>, args: AppRequestArgs, _: Delivery) -> Result<Reply> {
        // As the page's `/rpc` body: a view's message is at most 1 MiB.
        let size = serde_json::to_vec(&args.message).map_or(usize::MAX, |v| v.len());
        if size > crate::apps::request::MAX_MESSAGE {
            return Err(to_lsp(CallError::Refused(format!(
                "a view's message is at most {} bytes; this one is {size}",
                crate::apps::request::MAX_MESSAGE
            ))));
        }
        let answer = cx.apps.answer(&args.view, &args.message).await;
        Ok(Reply::Json(answer.unwrap_or(serde_json::Value::Null)))
    }
}
