//! `mcp-sidecar.readResource`: a server's resource, after the whole exchange (run as a tool
//! call runs).

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, to_lsp};
use crate::contract::{self, ResourceArgs};
use crate::mcp::{Caller, Reply};

pub struct ReadResource;

impl Handler for ReadResource {
    const NAME: &'static str = contract::CMD_READ_RESOURCE;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ResourceArgs;

    async fn run(cx: &Context<'_>, args: ResourceArgs, _: Delivery) -> Result<Reply> {
        let read = cx
            .manager
            .read_resource(&args.server, &args.uri, Caller::default());
        read.await.map_err(to_lsp)
    }
}
