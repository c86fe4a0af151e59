//! Plain LSP's face for an editor without the sidecar's plugin: what its `initialize` result
//! adds (document sync, code actions, code lenses, plain commands), the code actions (a
//! question's document's Send/Decline/Cancel, else "MCP: call ‹server›/‹tool›…"), and how a
//! command runs for it: under cancellable progress the sidecar creates, its result opened as a
//! document.

use serde::Deserialize;
use serde_json::{Value, json};
use tower_lsp_server::gen_lsp_types::{
    CodeAction, CodeActionParams, CodeActionResponse, CodeLens, CodeLensOptions,
    Command as LspCommand, Position, ProgressNotification, ProgressParams, ProgressToken, Range,
    Save, SaveOptions, ServerCapabilities, TextDocumentSync, TextDocumentSyncKind,
    TextDocumentSyncOptions, Uri, WorkDoneProgressOptions,
};
use tower_lsp_server::jsonrpc::Result;

use super::commands::{Arg, Class, Command, Context, Entry, to_lsp};
use super::plain::{Plain, results};
use crate::contract::{self, CallError};
use crate::mcp::{Manager, Reply};

/// What the `initialize` result adds for a plain editor.
pub fn capabilities(capabilities: &mut ServerCapabilities) {
    capabilities.text_document_sync = Some(TextDocumentSync::Options(TextDocumentSyncOptions {
        open_close: Some(true),
        change: Some(TextDocumentSyncKind::Incremental),
        save: Some(Save::SaveOptions(SaveOptions::new(Some(true)))),
        ..Default::default()
    }));
    capabilities.code_action_provider = Some(true.into());
    capabilities.code_lens_provider = Some(CodeLensOptions::new(
        Some(false),
        WorkDoneProgressOptions::default(),
    ));
    if let Some(commands) = capabilities.execute_command_provider.as_mut() {
        commands
            .commands
            .extend(contract::PLAIN_COMMANDS.iter().map(|c| c.to_string()));
    }
}

/// A question's document's actions as LSP commands.
fn document_commands(plain: &Plain, uri: &Uri) -> Vec<LspCommand> {
    plain
        .documents()
        .actions(uri)
        .into_iter()
        .map(|a| LspCommand {
            title: a.title,
            tooltip: None,
            command: contract::CMD_ANSWER_DOCUMENT.into(),
            arguments: Some(vec![json!({"uri": uri.as_str(), "action": a.action})]),
        })
        .collect()
}

/// `textDocument/codeAction`: a question's document's own actions; in another document (of a
/// language `plainLsp.toolActions` allows) one "MCP: call ‹server›/‹tool›…" per running tool.
pub async fn code_actions(
    plain: &Plain,
    manager: &Manager,
    params: CodeActionParams,
) -> Vec<CodeActionResponse> {
    let uri = params.text_document.uri;
    if plain.documents().is_question(&uri) {
        return document_commands(plain, &uri)
            .into_iter()
            .map(|command| {
                CodeActionResponse::CodeAction(CodeAction {
                    title: command.title.clone(),
                    command: Some(command),
                    ..Default::default()
                })
            })
            .collect();
    }
    let language = plain.documents().language(&uri);
    if !manager
        .plain_lsp_settings()
        .tool_actions_in(language.as_deref())
    {
        return Vec::new();
    }
    let tools = manager.list_tools(None).await.unwrap_or_default();
    tools
        .into_iter()
        .map(|tool| {
            let title = format!(
                "MCP: call {}/{}…",
                contract::shown::line(&tool.server, contract::shown::MAX_NAME),
                contract::shown::line(&tool.name, contract::shown::MAX_NAME)
            );
            CodeActionResponse::CodeAction(CodeAction {
                title: title.clone(),
                command: Some(LspCommand {
                    title,
                    tooltip: None,
                    command: contract::CMD_CALL_TOOL.into(),
                    arguments: Some(vec![
                        json!({"server": tool.server, "tool": tool.name, "detach": true}),
                    ]),
                }),
                ..Default::default()
            })
        })
        .collect()
}

/// `textDocument/codeLens`: a question's document's actions on its first line.
pub fn code_lenses(plain: &Plain, uri: &Uri) -> Vec<CodeLens> {
    let top = Range::new(Position::new(0, 0), Position::new(0, 0));
    document_commands(plain, uri)
        .into_iter()
        .map(|command| CodeLens {
            range: top,
            command: Some(command),
            data: None,
        })
        .collect()
}

/// Runs a command for a plain editor: a long one under progress the sidecar begins
/// (cancellable: cancelling drops the command, which cancels its MCP request) when the editor
/// gave no token of its own; a result a person reads opens as a document.
pub async fn run(
    cx: &Context<'_>,
    plain: &std::sync::Arc<Plain>,
    entry: &Entry,
    mut command: Command,
) -> Result<Reply> {
    let heading = heading(entry.name, &command.arg);
    let own = entry.class == Class::Long
        && command.token.is_none()
        && plain.capabilities().work_done_progress;
    let progress = match own {
        true => begin(plain, &heading).await,
        false => None,
    };
    let result = match progress {
        Some((token, cancelled)) => {
            command.token = Some(ProgressToken::String(token.clone()));
            command.begun = true;
            // Ends the progress however the command ends: done, cancelled by the person through
            // the progress, or dropped (the editor's `$/cancelRequest`).
            let _end = Ending {
                plain: plain.clone(),
                token,
            };
            tokio::select! {
                result = entry.run(cx, command) => result,
                _ = cancelled => Err(to_lsp(CallError::Cancelled)),
            }
        }
        None => entry.run(cx, command).await,
    };
    if let Ok(reply) = &result {
        let shown_as = match entry.name {
            contract::CMD_CHOOSE_TOOL => contract::CMD_CALL_TOOL,
            name => name,
        };
        let value = match reply {
            Reply::Json(value) => Some(value.clone()),
            Reply::Task(handle) => Some(handle.created.clone()),
            Reply::Raw(bytes) => serde_json::from_slice(bytes).ok(),
        };
        if let Some(text) = value.and_then(|v| results::render(shown_as, &heading, &v)) {
            // The reply does not wait for the editor to open it.
            let plain = plain.clone();
            tokio::spawn(async move { plain.show_result(&text).await });
        }
    }
    result
}

/// Creates and begins the sidecar's own cancellable progress; `None` when the editor refused.
async fn begin(plain: &Plain, title: &str) -> Option<(String, tokio::sync::oneshot::Receiver<()>)> {
    let (token, cancelled) = plain.progress_token();
    let created = tokio::time::timeout(
        CREATE_LIMIT,
        plain
            .client()
            .create_work_done_progress(ProgressToken::String(token.clone())),
    )
    .await;
    if !matches!(created, Ok(Ok(()))) {
        plain.forget_token(&token);
        return None;
    }
    send(
        plain,
        &token,
        json!({"kind": "begin", "title": title, "cancellable": true}),
    )
    .await;
    Some((token, cancelled))
}

async fn send(plain: &Plain, token: &str, value: Value) {
    plain
        .client()
        .send_notification::<ProgressNotification>(ProgressParams::new(
            ProgressToken::String(token.to_string()),
            value,
        ))
        .await;
}

/// The end of the sidecar's own progress, sent when this is dropped.
struct Ending {
    plain: std::sync::Arc<Plain>,
    token: String,
}

impl Drop for Ending {
    fn drop(&mut self) {
        self.plain.forget_token(&self.token);
        let plain = self.plain.clone();
        let token = std::mem::take(&mut self.token);
        tokio::spawn(async move { send(&plain, &token, json!({"kind": "end"})).await });
    }
}

/// How long a detached command waits after its reply before it sends anything.
pub const DETACHED_PAUSE: std::time::Duration = std::time::Duration::from_millis(100);

/// How long the editor has to accept the sidecar's own progress; past it the command goes on
/// without (an editor that lost the request must not hold the call).
const CREATE_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Whether a plain editor's command is answered at once and run on its own, its result opening
/// as a document: `chooseTool`, and a command whose argument says `"detach": true` (the tool
/// code actions do). Editors such as eglot and lsp-mode wait for a code action's command before
/// going on, and a form waits for the person.
pub fn detached(entry: &Entry, command: &Command) -> bool {
    #[derive(serde::Deserialize)]
    struct Detach {
        #[serde(default)]
        detach: bool,
    }
    if entry.name == contract::CMD_CHOOSE_TOOL {
        return true;
    }
    let read = match &command.arg {
        Arg::None => return false,
        Arg::Value(value) => Detach::deserialize(value).ok(),
        Arg::Raw(raw) => serde_json::from_str::<Detach>(raw.get()).ok(),
    };
    entry.class == Class::Long && read.is_some_and(|d| d.detach)
}

/// What a detached command's person hears of an error (a cancel is theirs: nothing).
pub fn report(plain: &Plain, entry: &Entry, result: Result<Reply>) {
    let Err(error) = result else { return };
    let cancelled = error
        .data
        .as_ref()
        .is_some_and(|d| d["kind"] == "cancelled");
    if !cancelled {
        plain.say(
            tower_lsp_server::gen_lsp_types::MessageType::Error,
            format!(
                "{}: {}",
                entry
                    .name
                    .strip_prefix("mcp-sidecar.")
                    .unwrap_or(entry.name),
                error.message
            ),
        );
    }
}

/// What a command's progress and result document are titled: "‹server›: ‹tool›" and the like.
fn heading(name: &str, arg: &Arg) -> String {
    let value: Value = match arg {
        Arg::None => Value::Null,
        Arg::Value(value) => value.clone(),
        Arg::Raw(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
    };
    let field = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or("");
    let what = match name {
        contract::CMD_CALL_TOOL => field("tool"),
        contract::CMD_READ_RESOURCE => field("uri"),
        contract::CMD_GET_PROMPT => field("name"),
        contract::CMD_CHOOSE_TOOL => "a tool",
        _ => name.strip_prefix("mcp-sidecar.").unwrap_or(name),
    };
    match field("server") {
        "" => format!("MCP: {what}"),
        server => format!("{server}: {what}"),
    }
}
