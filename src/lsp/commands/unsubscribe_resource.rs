//! `mcp-sidecar.unsubscribeResource`: undoes `subscribeResource`.

use tower_lsp_server::jsonrpc::Result;

use super::subscribe_resource::subscribe;
use super::{Class, Context, Delivery, Handler, Trust};
use crate::contract::{self, ResourceArgs};
use crate::mcp::Reply;

pub struct UnsubscribeResource;

impl Handler for UnsubscribeResource {
    const NAME: &'static str = contract::CMD_UNSUBSCRIBE_RESOURCE;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ResourceArgs;

    fn run<'a>(
        cx: &'a Context<'a>,
        args: ResourceArgs,
        _: Delivery,
    ) -> impl Future<Output = Result<Reply>> + Send + 'a {
        subscribe(cx, args, false)
    }
}
