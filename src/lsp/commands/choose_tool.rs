//! `mcp-sidecar.chooseTool` (plain LSP): a tool call that asks for what it is not given, for
//! editors that run a command by name with no arguments (Helix `:lsp-workspace-command`,
//! eglot `eglot-execute-command`): which server, which tool, then the tool's arguments.

use tower_lsp_server::jsonrpc::Result;

use super::{Class, Context, Delivery, Handler, Trust, call_tool::CallTool, to_lsp};
use crate::contract::{
    self, CallError, CallToolArgs, ChooseToolArgs, QuickPickItem, QuickPickParams, shown,
};
use crate::mcp::Reply;
use crate::ui::Prompter;

pub struct ChooseTool;

impl Handler for ChooseTool {
    const NAME: &'static str = contract::CMD_CHOOSE_TOOL;
    const CLASS: Class = Class::Long;
    const TRUST: Trust = Trust::Follows;
    type Args = ChooseToolArgs;

    async fn run(cx: &Context<'_>, args: ChooseToolArgs, delivery: Delivery) -> Result<Reply> {
        let tools = cx
            .manager
            .list_tools(args.server.as_deref())
            .await
            .map_err(to_lsp)?;
        let mut servers: Vec<&str> = Vec::new();
        for tool in &tools {
            if !servers.contains(&tool.server.as_str()) {
                servers.push(&tool.server);
            }
        }
        let server = match servers.as_slice() {
            [] => {
                return Err(to_lsp(CallError::Refused(
                    "no running server has a tool".into(),
                )));
            }
            [one] => one.to_string(),
            many => {
                let items = many
                    .iter()
                    .map(|s| QuickPickItem::new(shown::line(s, shown::MAX_NAME)))
                    .collect();
                let picked = pick(cx, "Which server?".into(), items).await?;
                many[picked].to_string()
            }
        };
        let offered: Vec<_> = tools.iter().filter(|t| t.server == server).collect();
        let items = offered
            .iter()
            .map(|t| {
                let item = QuickPickItem::new(shown::line(&t.name, shown::MAX_NAME));
                match t.title.as_ref().or(t.description.as_ref()) {
                    Some(d) => item.with_description(shown::line(d, shown::MAX_TEXT)),
                    None => item,
                }
            })
            .collect();
        let picked = pick(cx, format!("Which tool of {server}?"), items).await?;
        let args = CallToolArgs {
            server,
            tool: offered[picked].name.clone(),
            arguments: None,
        };
        CallTool::run(cx, args, delivery).await
    }
}

/// The index the person picked; dismissing is "cancelled".
async fn pick(cx: &Context<'_>, title: String, items: Vec<QuickPickItem>) -> Result<usize> {
    let n = items.len();
    let params = QuickPickParams {
        title,
        items,
        ..Default::default()
    };
    cx.editor
        .quick_pick(params)
        .await
        .and_then(|r| r.first())
        .filter(|&i| i < n)
        .ok_or_else(|| to_lsp(CallError::Cancelled))
}
