//! `mcp-sidecar.openApp`: shows an open view again (the editor hosts it, or its page opens).

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, to_lsp};
use crate::contract::{self, AppArgs, CallError, OpenAppResult};
use crate::mcp::Reply;

pub struct OpenApp;

impl Handler for OpenApp {
    const NAME: &'static str = contract::CMD_OPEN_APP;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = AppArgs;

    async fn run(cx: &Context<'_>, args: AppArgs, _: Delivery) -> Result<Reply> {
        let view = cx.apps.by_id(&args.view).ok_or_else(|| {
            to_lsp(CallError::Refused(format!(
                "no view \"{}\" is open",
                contract::shown::line(&args.view, contract::shown::MAX_NAME)
            )))
        })?;
        let opened = cx.apps.show(&view).await;
        Ok(Reply::Json(
            serde_json::to_value(OpenAppResult { opened }).unwrap_or_default(),
        ))
    }
}
