//! `mcp-sidecar.listSkills`: the skills servers offer (Skills extension); nothing is read.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, to_lsp};
use crate::contract::{self, ListSkillsArgs};
use crate::mcp::Reply;

pub struct ListSkills;

impl Handler for ListSkills {
    const NAME: &'static str = contract::CMD_LIST_SKILLS;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ListSkillsArgs;

    async fn run(cx: &Context<'_>, args: ListSkillsArgs, _: Delivery) -> Result<Reply> {
        let rows = cx
            .manager
            .list_skills(args.server.as_deref())
            .await
            .map_err(to_lsp)?;
        Ok(Reply::Json(serde_json::to_value(rows).unwrap_or_default()))
    }
}
