//! `mcp-sidecar.readSkill`: one file of a skill, verified against its manifest.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, to_lsp};
use crate::contract::{self, ReadSkillArgs};
use crate::mcp::Reply;

pub struct ReadSkill;

impl Handler for ReadSkill {
    const NAME: &'static str = contract::CMD_READ_SKILL;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ReadSkillArgs;

    async fn run(cx: &Context<'_>, args: ReadSkillArgs, _: Delivery) -> Result<Reply> {
        let contents = cx
            .manager
            .read_skill(&args.server, &args.uri, args.file.as_deref())
            .await
            .map_err(to_lsp)?;
        Ok(Reply::Json(
            serde_json::to_value(contents).unwrap_or_default(),
        ))
    }
}
