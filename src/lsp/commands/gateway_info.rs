//! `mcp-sidecar.gatewayInfo`: where agents in the editor's terminal reach the gateway.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, NoArgs, Trust, to_lsp};
use crate::contract::{self, CallError};
use crate::mcp::Reply;

pub struct GatewayInfo;

impl Handler for GatewayInfo {
    const NAME: &'static str = contract::CMD_GATEWAY_INFO;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Follows;
    type Args = NoArgs;

    async fn run(cx: &Context<'_>, _: NoArgs, _: Delivery) -> Result<Reply> {
        let gateway = cx.gateway.lock().clone();
        let info = gateway
            .ok_or_else(|| CallError::Refused("the editor has not finished starting".into()))
            .and_then(|g| g.info())
            .map_err(to_lsp)?;
        Ok(Reply::Json(serde_json::to_value(info).unwrap_or_default()))
    }
}
