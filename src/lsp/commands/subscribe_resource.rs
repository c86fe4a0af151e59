//! `mcp-sidecar.subscribeResource`: the server's `notifications/resources/updated` for a URI
//! reach the editor.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, json, to_lsp};
use crate::contract::{self, ResourceArgs};
use crate::mcp::Reply;

pub struct SubscribeResource;

impl Handler for SubscribeResource {
    const NAME: &'static str = contract::CMD_SUBSCRIBE_RESOURCE;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ResourceArgs;

    fn run<'a>(
        cx: &'a Context<'a>,
        args: ResourceArgs,
        _: Delivery,
    ) -> impl Future<Output = Result<Reply>> + Send + 'a {
        subscribe(cx, args, true)
    }
}

/// Subscribes to (`on`) or unsubscribes from a resource of a server.
pub(super) async fn subscribe(cx: &Context<'_>, args: ResourceArgs, on: bool) -> Result<Reply> {
    let done = cx.manager.subscribe(&args.server, &args.uri, on).await;
    done.map_err(to_lsp)?;
    json(serde_json::json!({"server": args.server, "uri": args.uri, "subscribed": on}))
}
