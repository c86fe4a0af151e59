//! `mcp-sidecar.trustServer`: records that the person trusts a workspace-defined server.

use tower_lsp_server::jsonrpc::{Error, Result};

use super::{Class, Context, Delivery, Handler, Trust, json};
use crate::contract::{self, ServerArgs};
use crate::mcp::Reply;

pub struct TrustServer;

impl Handler for TrustServer {
    const NAME: &'static str = contract::CMD_TRUST_SERVER;
    const CLASS: Class = Class::Quick;
    const TRUST: Trust = Trust::Decides;
    type Args = ServerArgs;

    async fn run(cx: &Context<'_>, args: ServerArgs, _: Delivery) -> Result<Reply> {
        record(cx, &args.server, true)
    }
}

/// Records the person's trust decision for a workspace-defined server (the configuration is
/// re-read after it: see [`Trust::Decides`]).
pub(super) fn record(cx: &Context<'_>, server: &str, trusted: bool) -> Result<Reply> {
    let info = cx.manager.trust_info(server).ok_or_else(|| {
        Error::invalid_params(format!(
            "\"{server}\" is not a server defined in the workspace (only those need trust)"
        ))
    })?;
    crate::config::trust::record(server, &info, trusted);
    json(serde_json::json!({"server": server, "trusted": trusted}))
}
