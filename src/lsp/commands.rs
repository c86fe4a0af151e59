//! `workspace/executeCommand`: the `mcp-sidecar.*` commands. Commands that wait on people or on
//! servers run under the [`Gate`](super::gate::Gate).

use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::watch;
use tower_lsp_server::Client;
use tower_lsp_server::gen_lsp_types::{ExecuteCommandParams, ProgressToken};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};

use super::editor::Editor;
use super::gate::Gate;
use crate::contract::CallError;
use crate::contract::shown::{self, Shown};
use crate::contract::{
    self, CallToolArgs, CompleteArgs, GetPromptArgs, ListToolsArgs, QuickPickItem, QuickPickParams,
    QuickPickResult, ResourceArgs, RestartServerArgs, ServerArgs,
};
use crate::elicitation::arguments::{self, NoArguments};
use crate::mcp::{Caller, Manager, ProgressUpdate, Reply, ToolArguments};

/// What a command works with: the backend's handles, lent for one command.
pub struct Context<'a> {
    pub client: &'a Client,
    pub manager: &'a Manager,
    pub gate: &'a Gate,
    pub editor: Editor,
    /// Asks for the configuration to be re-read (after a trust decision).
    pub reconfigure: &'a (dyn Fn() + Sync),
}

/// Each command's work that awaits a server or a person is boxed, sized to that command: inline,
/// the largest (forms asked step by step, sign-in) made this future some tens of KiB, and every
/// command paid for copying it whole into its box, the quickest included (a `tools/call` future
/// is about 10 KiB at opt-level 3, most of it rmcp's request).
pub async fn execute(cx: &Context<'_>, command: Command) -> Result<Reply> {
    let Command { name, arg, token } = command;
    let result = match name.as_str() {
        contract::CMD_LIST_SERVERS => to_value(cx.manager.list_servers().shown()),
        contract::CMD_LIST_TOOLS => {
            let args: ListToolsArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            to_value(
                Box::pin(cx.manager.list_tools(args.server.as_deref()))
                    .await
                    .map_err(to_lsp)?
                    .shown(),
            )
        }
        contract::CMD_CALL_TOOL => {
            let args: CallToolArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            return Box::pin(call_tool(cx, args, token)).await;
        }
        contract::CMD_RESTART_SERVER => {
            let args: RestartServerArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            Box::pin(restart_server(cx, args)).await?
        }
        contract::CMD_OPEN_SAMPLING_LOG => Box::pin(open_sampling_log(cx)).await?,
        contract::CMD_TRUST_SERVER | contract::CMD_UNTRUST_SERVER => {
            let args: ServerArgs = parse_arg(arg)?;
            set_trust(cx, &args.server, name == contract::CMD_TRUST_SERVER)?
        }
        contract::CMD_SIGN_IN => {
            let args: ServerArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            to_value(
                Box::pin(cx.manager.sign_in(&args.server))
                    .await
                    .map_err(to_lsp)?
                    .shown(),
            )
        }
        contract::CMD_SIGN_OUT => {
            let args: ServerArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            to_value(
                Box::pin(cx.manager.sign_out(&args.server))
                    .await
                    .map_err(to_lsp)?,
            )
        }
        contract::CMD_LIST_RESOURCES => {
            let args: ListToolsArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            let rows = Box::pin(cx.manager.list_resources(args.server.as_deref())).await;
            to_value(rows.map_err(to_lsp)?.shown())
        }
        contract::CMD_LIST_RESOURCE_TEMPLATES => {
            let args: ListToolsArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            let rows = Box::pin(cx.manager.list_resource_templates(args.server.as_deref())).await;
            to_value(rows.map_err(to_lsp)?.shown())
        }
        contract::CMD_LIST_PROMPTS => {
            let args: ListToolsArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            let rows = Box::pin(cx.manager.list_prompts(args.server.as_deref())).await;
            to_value(rows.map_err(to_lsp)?.shown())
        }
        contract::CMD_READ_RESOURCE => {
            let args: ResourceArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            let read = cx
                .manager
                .read_resource(&args.server, &args.uri, Caller::default());
            return Box::pin(read).await.map_err(to_lsp);
        }
        contract::CMD_SUBSCRIBE_RESOURCE | contract::CMD_UNSUBSCRIBE_RESOURCE => {
            let args: ResourceArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            let on = name == contract::CMD_SUBSCRIBE_RESOURCE;
            let done = Box::pin(cx.manager.subscribe(&args.server, &args.uri, on)).await;
            done.map_err(to_lsp)?;
            serde_json::json!({"server": args.server, "uri": args.uri, "subscribed": on})
        }
        contract::CMD_GET_PROMPT => {
            let args: GetPromptArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            return Box::pin(get_prompt(cx, args)).await;
        }
        contract::CMD_COMPLETE => {
            let args: CompleteArgs = parse_arg(arg)?;
            let _permit = cx.gate.enter().map_err(to_lsp)?;
            let mut mcp = serde_json::json!({"ref": args.reference, "argument": args.argument});
            if let Some(context) = args.context {
                mcp["context"] = context;
            }
            Box::pin(cx.manager.complete(&args.server, mcp))
                .await
                .map_err(to_lsp)?
        }
        other => {
            return Err(Error::invalid_params(format!(
                "unknown command \"{other}\""
            )));
        }
    };
    Ok(Reply::Json(result))
}

fn to_value<T: serde::Serialize>(value: T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A `workspace/executeCommand` as the commands read it: its name, its first argument (the
/// only one they take) and the editor's progress token.
pub struct Command {
    pub name: String,
    pub arg: Arg,
    pub token: Option<ProgressToken>,
}

/// A command's argument: parsed already (tower-lsp-server's params), or the JSON as the serve
/// loop's lane read it, which becomes the command's typed arguments in one parse, with no
/// `Value` tree built first.
pub enum Arg {
    None,
    Value(Value),
    Raw(Box<serde_json::value::RawValue>),
}

impl From<ExecuteCommandParams> for Command {
    fn from(params: ExecuteCommandParams) -> Self {
        let arg = params.arguments.unwrap_or_default().into_iter().next();
        Command {
            name: params.command,
            arg: arg.map_or(Arg::None, Arg::Value),
            token: params.work_done_progress_params.work_done_token,
        }
    }
}

/// The command's single argument object; a missing argument is an empty object.
fn parse_arg<T: DeserializeOwned>(arg: Arg) -> Result<T> {
    let parsed = match arg {
        Arg::None => serde_json::from_value(Value::Object(Default::default())),
        Arg::Value(value) => serde_json::from_value(value),
        Arg::Raw(raw) => serde_json::from_str(raw.get()),
    };
    parsed.map_err(|e| Error::invalid_params(format!("bad command argument: {e}")))
}

/// Maps an operation's error to an LSP error with `data.kind` for the editor.
pub fn to_lsp(error: CallError) -> Error {
    // -32800 (RequestCancelled) is only ever the answer to the editor's own `$/cancelRequest`
    // (tower-lsp-server sends it); a person dismissing a prompt is a -32000 with
    // `data.kind = "cancelled"`, which editors such as Neovim do not swallow.
    let code = match error {
        CallError::UnknownServer(_) => ErrorCode::InvalidParams,
        _ => ErrorCode::ServerError(-32000),
    };
    Error {
        code,
        // The message quotes servers (their errors, names): shown, so cleaned; `data` is exact.
        message: shown::block(&error.to_string(), shown::MAX_MESSAGE)
            .into_owned()
            .into(),
        data: Some(error.data()),
    }
}

async fn call_tool(
    cx: &Context<'_>,
    args: CallToolArgs,
    token: Option<ProgressToken>,
) -> Result<Reply> {
    let (progress, reporter) = match token {
        Some(token) => {
            let title = format!("{}: {}", args.server, args.tool);
            let (tx, rx) = watch::channel::<Option<ProgressUpdate>>(None);
            let reporter = tokio::spawn(report_progress(cx.client.clone(), token, title, rx));
            let sink: crate::mcp::ProgressFn = Arc::new(move |u| {
                tx.send_replace(Some(u));
            });
            (Some(sink), Some(reporter))
        }
        None => (None, None),
    };
    let arguments = match args.arguments {
        Some(text) => ToolArguments::Text(text),
        None => ToolArguments::Object(ask_arguments(cx, &args.server, &args.tool).await?),
    };
    let caller = Caller {
        agent: None,
        progress,
    };
    let result = cx
        .manager
        .call_tool(&args.server, &args.tool, Some(arguments), caller)
        .await;
    if let Some(reporter) = reporter {
        // The sender is dropped with the call; the reporter ends its progress and exits.
        let _ = reporter.await;
    }
    result.map_err(to_lsp)
}

/// `callTool` without `arguments`: ask for them with the tool's own `inputSchema`.
async fn ask_arguments(
    cx: &Context<'_>,
    server: &str,
    tool: &str,
) -> Result<serde_json::Map<String, Value>> {
    let tools = cx.manager.list_tools(Some(server)).await.map_err(to_lsp)?;
    let schema = tools
        .into_iter()
        .find(|t| t.name == tool)
        .map(|t| t.input_schema)
        .ok_or_else(|| {
            Error::invalid_params(format!("server \"{server}\" has no tool \"{tool}\""))
        })?;
    arguments::ask(&cx.editor, server, tool, &schema)
        .await
        .map_err(|why| not_asked(why, tool, "the tool was not called"))
}

/// The error of a command whose arguments the person declined (`refused`) or dismissed.
fn not_asked(why: NoArguments, what: &str, so: &str) -> Error {
    to_lsp(match why {
        NoArguments::Declined => {
            CallError::Refused(format!("the arguments for {what} were declined; {so}"))
        }
        NoArguments::Cancelled => CallError::Cancelled,
    })
}

/// `getPrompt`: the arguments it lacks are asked first (see [`arguments::ask_prompt`]), with
/// the server's completions as suggestions.
async fn get_prompt(cx: &Context<'_>, args: GetPromptArgs) -> Result<Reply> {
    let GetPromptArgs {
        server,
        name,
        arguments,
    } = args;
    let declared: Vec<arguments::PromptArgument> = cx
        .manager
        .list_prompts(Some(&server))
        .await
        .map_err(to_lsp)?
        .into_iter()
        .find(|p| p.name == name)
        .and_then(|p| p.arguments)
        .unwrap_or_default()
        .iter()
        .map(|a| arguments::PromptArgument {
            name: a["name"].as_str().unwrap_or_default().to_owned(),
            title: a["title"].as_str().map(str::to_owned),
            description: a["description"].as_str().map(str::to_owned),
            required: a["required"] == true,
        })
        .collect();
    let completions = Completions {
        manager: cx.manager,
        server: &server,
        prompt: &name,
        given: arguments.clone().unwrap_or_default(),
    };
    let asked = arguments::ask_prompt(
        &cx.editor,
        &server,
        &name,
        &declared,
        arguments,
        Some(&completions),
    )
    .await
    .map_err(|why| not_asked(why, &format!("prompt {name}"), "the prompt was not fetched"))?;
    let got = cx
        .manager
        .get_prompt(&server, &name, Some(asked), Caller::default());
    got.await.map_err(to_lsp)
}

/// A prompt argument's suggestions: the server's `completion/complete` for an empty value, in
/// the context of the arguments known so far. A server without completions, or one whose
/// completion fails, suggests nothing.
struct Completions<'a> {
    manager: &'a Manager,
    server: &'a str,
    prompt: &'a str,
    given: serde_json::Map<String, Value>,
}

impl arguments::Suggest for Completions<'_> {
    fn suggest<'a>(
        &'a self,
        field: &'a str,
        earlier: serde_json::Map<String, Value>,
    ) -> futures::future::BoxFuture<'a, Vec<String>> {
        Box::pin(async move {
            let mut known = self.given.clone();
            known.extend(earlier);
            let params = serde_json::json!({
                "ref": {"type": "ref/prompt", "name": self.prompt},
                "argument": {"name": field, "value": ""},
                "context": {"arguments": known},
            });
            match self.manager.complete(self.server, params).await {
                Ok(result) => result["completion"]["values"]
                    .as_array()
                    .map(|values| {
                        values
                            .iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                Err(CallError::Refused(_)) => Vec::new(),
                Err(e) => {
                    tracing::debug!(server = self.server, field, "completion failed: {e}");
                    Vec::new()
                }
            }
        })
    }
}

/// At most this many progress reports a second reach the editor for one call.
pub const PROGRESS_PER_SECOND: u32 = 100;

/// Turns MCP `notifications/progress` into LSP work-done progress on the editor's token: `begin`,
/// a `report` per update (its message with the amount; `percentage` when the server gives a
/// total), `end`. Updates coalesce to the latest one: at most [`PROGRESS_PER_SECOND`] reports a
/// second, and the last update before the call ends is always reported.
async fn report_progress(
    client: tower_lsp_server::Client,
    token: ProgressToken,
    title: String,
    mut updates: watch::Receiver<Option<ProgressUpdate>>,
) {
    let send = |value: Value| {
        client.send_notification::<tower_lsp_server::gen_lsp_types::ProgressNotification>(
            tower_lsp_server::gen_lsp_types::ProgressParams::new(token.clone(), value),
        )
    };
    send(serde_json::json!({"kind": "begin", "title": title})).await;
    let pace = std::time::Duration::from_secs(1) / PROGRESS_PER_SECOND;
    // `changed` reports a value not yet seen before it reports the sender gone.
    while updates.changed().await.is_ok() {
        let update = updates.borrow_and_update().clone();
        if let Some(update) = update {
            send(progress_report(&update)).await;
        }
        tokio::time::sleep(pace).await;
    }
    send(serde_json::json!({"kind": "end"})).await;
}

/// One `WorkDoneProgressReport` for an MCP progress update.
fn progress_report(update: &ProgressUpdate) -> Value {
    let percentage = match update.total {
        Some(total) if total > 0.0 && update.progress.is_finite() => {
            Some((100.0 * update.progress / total).clamp(0.0, 100.0).round() as u32)
        }
        _ => None,
    };
    let amount = match percentage {
        Some(p) => format!("{p}%"),
        None => format!("{}", update.progress),
    };
    let message = match &update.message {
        Some(m) => format!("{} ({amount})", shown::line(m, shown::MAX_TEXT)),
        None => amount,
    };
    let mut report = serde_json::json!({"kind": "report", "message": message});
    if let Some(p) = percentage {
        report["percentage"] = p.into();
    }
    report
}

/// Records the person's trust decision for a workspace-defined server and re-applies the
/// configuration (trusting starts it; untrusting stops it).
fn set_trust(cx: &Context<'_>, server: &str, trusted: bool) -> Result<Value> {
    let info = cx.manager.trust_info(server).ok_or_else(|| {
        Error::invalid_params(format!(
            "\"{server}\" is not a server defined in the workspace (only those need trust)"
        ))
    })?;
    crate::config::trust::record(server, &info, trusted);
    (cx.reconfigure)();
    Ok(serde_json::json!({"server": server, "trusted": trusted}))
}

/// Opens the sampling audit log in the editor (created empty if nothing was logged yet).
async fn open_sampling_log(cx: &Context<'_>) -> Result<Value> {
    let path = crate::sampling::audit::log_path()
        .ok_or_else(|| Error::invalid_params("no home or state directory is known"))?;
    if !path.exists() {
        // Created as the log itself would be: 0600 in the 0700 state directory.
        let _ = crate::store::open_append(&path);
    }
    let opened = crate::ui::Prompter::show_file(&cx.editor, path.clone()).await;
    Ok(serde_json::json!({"path": path, "opened": opened}))
}

async fn restart_server(cx: &Context<'_>, args: RestartServerArgs) -> Result<Value> {
    let server = match args.server {
        Some(server) => server,
        None => {
            let servers = cx.manager.list_servers();
            if servers.is_empty() {
                return Err(Error::invalid_params("no MCP servers are configured"));
            }
            let items = servers
                .iter()
                .map(|s| {
                    QuickPickItem::new(s.status.name.clone())
                        .with_description(to_value(s.status.state).as_str().unwrap_or_default())
                })
                .collect();
            let picked = cx
                .editor
                .try_quick_pick(QuickPickParams {
                    title: "Restart which MCP server?".into(),
                    items,
                    ..Default::default()
                })
                .await
                .map_err(to_lsp)?;
            match picked.as_ref().and_then(QuickPickResult::first) {
                Some(i) if i < servers.len() => servers[i].status.name.clone(),
                _ => return Ok(Value::Null),
            }
        }
    };
    cx.manager.restart(&server).map_err(to_lsp)?;
    Ok(serde_json::json!({ "server": server }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reports_carry_a_percentage_when_the_total_is_known() {
        let update = |progress, total, message: Option<&str>| ProgressUpdate {
            progress,
            total,
            message: message.map(str::to_string),
        };
        assert_eq!(
            progress_report(&update(1.0, Some(3.0), Some("step 1 of 3"))),
            serde_json::json!({"kind": "report", "message": "step 1 of 3 (33%)", "percentage": 33})
        );
        assert_eq!(
            progress_report(&update(7.0, None, None)),
            serde_json::json!({"kind": "report", "message": "7"})
        );
        // Past the total (servers do that) stays within LSP's 0..=100.
        assert_eq!(
            progress_report(&update(5.0, Some(4.0), None))["percentage"],
            100
        );
    }

    /// Every call moves the commands' future into its box: it holds no command's work inline
    /// (a `tools/call` was about 10 KiB, which each command paid for copying), and the call
    /// itself holds only its common path, as do the commands' own futures around it and the
    /// listings (their fetch is boxed).
    #[test]
    fn the_commands_future_holds_no_command_inline() {
        let mut client = None;
        let (service, _socket) = tower_lsp_server::LspService::new(|c| {
            client = Some(c.clone());
            super::super::Backend::new(c)
        });
        let client = client.unwrap();
        let manager = service.inner().manager();
        let gate = super::Gate::new(4);
        let editor = super::Editor::new(client.clone(), Default::default());
        let cx = super::Context {
            client: &client,
            manager: &manager,
            gate: &gate,
            editor,
            reconfigure: &|| {},
        };
        let params: ExecuteCommandParams =
            serde_json::from_value(serde_json::json!({"command": "x"})).unwrap();
        let size = std::mem::size_of_val(&super::execute(&cx, params.into()));
        assert!(size < 1024, "{size} bytes");
        let call = std::mem::size_of_val(&manager.call_tool("a", "b", None, Caller::default()));
        // The call's own future holds only the common path: a legacy stdio call past rmcp's
        // peer (`mcp/direct.rs`); rmcp's request, URL steps and input rounds are boxed.
        assert!(call < 4096, "the call's future is {call} bytes");
        // The commands' own futures add little to the call's, and a listing's is small: a
        // list's fetch (rmcp's paging requests, the rare path: lists are cached) is boxed. It
        // was inline, and made `callTool` 6 KiB (asking for missing arguments lists the tools)
        // and every listing and `getPrompt` 11 KiB, copied into their boxes on every call.
        let args: super::CallToolArgs =
            serde_json::from_value(serde_json::json!({"server": "a", "tool": "b"})).unwrap();
        let tool = std::mem::size_of_val(&super::call_tool(&cx, args, None));
        assert!(tool < call + 1024, "callTool's future is {tool} bytes");
        let args: super::GetPromptArgs =
            serde_json::from_value(serde_json::json!({"server": "a", "name": "b"})).unwrap();
        let prompt = std::mem::size_of_val(&super::get_prompt(&cx, args));
        let get = std::mem::size_of_val(&manager.get_prompt("a", "b", None, Caller::default()));
        assert!(prompt < get + 1024, "getPrompt's future is {prompt} bytes");
        let lists = [
            std::mem::size_of_val(&manager.list_tools(None)),
            std::mem::size_of_val(&manager.list_resources(None)),
            std::mem::size_of_val(&manager.list_resource_templates(None)),
            std::mem::size_of_val(&manager.list_prompts(None)),
        ];
        assert!(
            lists.iter().all(|&l| l < 1024),
            "the listings' futures: {lists:?}"
        );
    }
}
