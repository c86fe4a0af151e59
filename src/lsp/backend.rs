//! The `LanguageServer` implementation (the lifecycle and the workspace's notifications), and
//! the way into the commands ([`Backend::command`]). `initialize` only records what the editor
//! sent (no server is started inside it); servers start after `initialized`. No handler here
//! awaits a person.

use std::sync::Arc;

use parking_lot::Mutex;

use tower_lsp_server::gen_lsp_types::{
    CodeActionParams, CodeActionResponse, CodeLens, CodeLensParams, DidChangeConfigurationParams,
    DidChangeTextDocumentParams, DidChangeWatchedFilesParams, DidChangeWorkspaceFoldersParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, DidSaveTextDocumentParams,
    ExecuteCommandOptions, InitializeParams, InitializeResult, InitializedParams, ProgressToken,
    RootPath, ServerCapabilities, ServerInfo, WorkDoneProgressCancelParams,
    WorkDoneProgressOptions, WorkspaceFolder, WorkspaceFolders, WorkspaceFoldersServerCapabilities,
    WorkspaceOptions,
};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::{Client, LanguageServer};

use super::commands;
use super::editor::Editor;
use super::gate::{Gate, LONG_OPERATION_CAP};
use super::plain::PlainCapabilities;
use super::plain_face;
use super::reconfigure::{self, ConfigState};
use crate::config;
use crate::contract::{self, EditorCapabilities};
use crate::gateway::Gateway;
use crate::guard;
use crate::mcp::{EventReceiver, Manager};
use crate::roots::Folder;
use crate::views::Apps;

/// The backend, a cheap handle: the serve loop keeps one to answer `workspace/executeCommand`
/// itself (see [`super::serve`]) while tower-lsp-server's service holds another.
#[derive(Clone)]
pub struct Backend(Arc<Inner>);

impl std::ops::Deref for Backend {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}

pub struct Inner {
    client: Client,
    manager: Arc<Manager>,
    gate: Gate,
    editor: Mutex<Option<Editor>>,
    events: Mutex<Option<EventReceiver>>,
    config: Arc<ConfigState>,
    reconfig: Mutex<Option<tokio::sync::mpsc::UnboundedSender<()>>>,
    /// The agents' face, once the editor is connected (see [`crate::gateway`]).
    gateway: Arc<Mutex<Option<Arc<Gateway>>>>,
    /// Servers' views (MCP Apps, see [`crate::views`]).
    apps: Arc<Apps>,
    /// Whether a `workspace/didChangeConfiguration` has replaced what `initializationOptions`
    /// gave.
    changed_settings: std::sync::atomic::AtomicBool,
}

impl Backend {
    pub fn new(client: Client) -> Self {
        let (manager, events) = Manager::new();
        Self(Arc::new(Inner {
            client,
            apps: Apps::new(manager.clone()),
            manager,
            gate: Gate::new(LONG_OPERATION_CAP),
            editor: Mutex::new(None),
            events: Mutex::new(Some(events)),
            config: Arc::default(),
            reconfig: Mutex::new(None),
            gateway: Arc::default(),
            changed_settings: Default::default(),
        }))
    }

    pub fn manager(&self) -> Arc<Manager> {
        self.manager.clone()
    }

    fn editor(&self) -> Editor {
        self.editor
            .lock()
            .clone()
            .unwrap_or_else(|| Editor::new(self.client.clone(), EditorCapabilities::default()))
    }

    /// Asks the configuration task to re-read everything (it never blocks the caller).
    fn reconfigure(&self) {
        if let Some(tx) = self.reconfig.lock().as_ref() {
            let _ = tx.send(());
        }
    }

    fn folders(&self) -> Vec<Folder> {
        self.config.folders.lock().clone()
    }

    // The gateway ---------------------------------------------------------------------------

    /// The workspace folders on disk (they key the gateway's discovery files).
    fn folder_paths(&self) -> Vec<std::path::PathBuf> {
        self.folders()
            .iter()
            .filter_map(|f| f.uri.to_file_path().ok())
            .collect()
    }

    /// Starts the gateway beside the editor's face: it serves agents while `gateway.enabled`.
    fn start_gateway(&self) {
        let gateway = Gateway::spawn(self.manager.clone(), self.apps.clone(), self.folder_paths());
        if let Some(old) = self.gateway.lock().replace(gateway) {
            old.stop();
        }
    }

    /// Stops the gateway (on `shutdown`).
    fn stop_gateway(&self) {
        if let Some(gateway) = self.gateway.lock().take() {
            gateway.stop();
        }
    }

    /// Stops the gateway when called: for when the stream to the editor has ended.
    pub fn gateway_stopper(&self) -> impl FnOnce() + use<> {
        let gateway = self.gateway.clone();
        move || {
            if let Some(gateway) = gateway.lock().take() {
                gateway.stop();
            }
        }
    }
}

fn folder_from(folder: WorkspaceFolder) -> Folder {
    Folder {
        uri: folder.uri,
        name: folder.name,
    }
}

/// The folders from `initialize`: `workspaceFolders`, else `rootUri`, else `rootPath`.
#[allow(deprecated)]
fn initial_folders(params: &InitializeParams) -> Vec<Folder> {
    if let Some(WorkspaceFolders::WorkspaceFolderList(folders)) = params
        .workspace_folders_initialize_params
        .workspace_folders
        .clone()
    {
        return folders.into_iter().map(folder_from).collect();
    }
    let uri = params.root_uri.clone().or_else(|| match &params.root_path {
        Some(RootPath::String(path)) => url::Url::from_directory_path(path).ok(),
        _ => None,
    });
    uri.map(|uri| {
        let name = uri
            .path_segments()
            .and_then(|mut s| s.rfind(|p| !p.is_empty()).map(str::to_string))
            .unwrap_or_else(|| uri.to_string());
        vec![Folder { uri, name }]
    })
    .unwrap_or_default()
}

/// A request handler's body under the panic guard: a panic is answered with -32603 naming the
/// method, and one log line; the sidecar goes on serving.
async fn request<T>(
    method: impl std::fmt::Display,
    body: impl Future<Output = Result<T>>,
) -> Result<T> {
    guard::catch(body).await.unwrap_or_else(|panic| {
        tracing::error!(method = %method, "{method} failed: {panic}");
        Err(Error {
            code: ErrorCode::InternalError,
            message: format!("{method} failed: {panic}").into(),
            data: None,
        })
    })
}

/// A notification handler's body under the panic guard: a panic is one log line.
async fn notification(method: &str, body: impl Future<Output = ()>) {
    if let Err(panic) = guard::catch(body).await {
        tracing::error!(method, "{method} failed: {panic}");
    }
}

// Every method body runs under `request` or `notification`: tower-lsp-server polls handlers
// inside its serve loop, so an unguarded panic would end the whole sidecar.
impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        request("initialize", self.initialize_inner(params)).await
    }

    async fn initialized(&self, params: InitializedParams) {
        notification("initialized", self.initialized_inner(params)).await;
    }

    async fn shutdown(&self) -> Result<()> {
        request("shutdown", async {
            self.stop_gateway();
            self.manager.shutdown().await;
            Ok(())
        })
        .await
    }

    async fn did_change_workspace_folders(&self, params: DidChangeWorkspaceFoldersParams) {
        notification(
            "workspace/didChangeWorkspaceFolders",
            self.did_change_workspace_folders_inner(params),
        )
        .await;
    }

    async fn did_change_configuration(&self, params: DidChangeConfigurationParams) {
        notification(
            "workspace/didChangeConfiguration",
            self.did_change_configuration_inner(params),
        )
        .await;
    }

    async fn did_change_watched_files(&self, _params: DidChangeWatchedFilesParams) {
        notification("workspace/didChangeWatchedFiles", async {
            self.reconfigure();
        })
        .await;
    }

    // Plain LSP (an editor without the plugin): the questions' documents, and code actions.

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        notification("textDocument/didOpen", async {
            let item = params.text_document;
            let language = serde_json::to_value(&item.language_id)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            if let Some(plain) = self.editor().plain() {
                plain.documents().did_open(item.uri, language, item.text);
            }
        })
        .await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        notification("textDocument/didChange", async {
            if let Some(plain) = self.editor().plain() {
                let uri = &params.text_document.text_document_identifier.uri;
                plain.documents().did_change(uri, params.content_changes);
            }
        })
        .await;
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        notification("textDocument/didSave", async {
            if let Some(plain) = self.editor().plain() {
                plain
                    .documents()
                    .did_save(&params.text_document.uri, params.text);
            }
        })
        .await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        notification("textDocument/didClose", async {
            if let Some(plain) = self.editor().plain() {
                plain.documents().did_close(&params.text_document.uri);
            }
        })
        .await;
    }

    async fn code_action(
        &self,
        params: CodeActionParams,
    ) -> Result<Option<Vec<CodeActionResponse>>> {
        request("textDocument/codeAction", async {
            let Some(plain) = self.editor().plain().cloned() else {
                return Ok(None);
            };
            let actions = plain_face::code_actions(&plain, &self.manager, params).await;
            Ok(Some(actions))
        })
        .await
    }

    async fn code_lens(&self, params: CodeLensParams) -> Result<Option<Vec<CodeLens>>> {
        request("textDocument/codeLens", async {
            let editor = self.editor();
            Ok(editor
                .plain()
                .map(|plain| plain_face::code_lenses(plain, &params.text_document.uri)))
        })
        .await
    }
}

impl Backend {
    /// `window/workDoneProgress/cancel`: the person cancelled one of the sidecar's own progress
    /// reports (plain LSP), so what it reports on is cancelled.
    pub async fn progress_cancel(&self, params: WorkDoneProgressCancelParams) {
        notification("window/workDoneProgress/cancel", async {
            if let (ProgressToken::String(token), Some(plain)) =
                (&params.token, self.editor().plain())
            {
                plain.cancel(token);
            }
        })
        .await;
    }
}

impl Backend {
    /// `workspace/executeCommand`: the serve loop's one way into the commands (see
    /// [`super::serve`]), under the panic guard.
    pub async fn command(&self, command: commands::Command) -> Result<crate::mcp::Reply> {
        /// The method a panic names, formatted only then (not for every command).
        struct Method(&'static str);
        impl std::fmt::Display for Method {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "workspace/executeCommand {}", self.0)
            }
        }
        let handler = commands::Entry::find(&command.name);
        let method = Method(handler.map_or("(an unknown command)", |h| h.name));
        request(method, async {
            guard::inject(|| format!("command:{}", command.name));
            let Some(handler) = handler else {
                return Err(commands::unknown(&command.name));
            };
            let editor = self.editor();
            let plain = editor.plain().cloned();
            let cx = commands::Context {
                client: &self.client,
                manager: &self.manager,
                gate: &self.gate,
                editor,
                gateway: &self.gateway,
                reconfigure: &|| self.reconfigure(),
                apps: &self.apps,
            };
            match plain {
                Some(plain) if plain_face::detached(handler, &command) => {
                    // Answered at once, run on its own: its result opens as a document.
                    let backend = self.clone();
                    tokio::spawn(async move {
                        // The reply goes out first, on its own: lsp-mode 8 drops what arrives
                        // in the same read as the reply it waits for (emacs-lsp/lsp-mode#4323).
                        tokio::time::sleep(plain_face::DETACHED_PAUSE).await;
                        let run = backend.plain_command(&plain, handler, command);
                        match guard::catch(Box::pin(run)).await {
                            Ok(result) => plain_face::report(&plain, handler, result),
                            Err(panic) => tracing::error!("{} failed: {panic}", handler.name),
                        }
                    });
                    Ok(crate::mcp::Reply::Json(
                        serde_json::json!({"detached": true}),
                    ))
                }
                // Boxed: the plain path is not the hot one (see the size test below).
                Some(plain) => Box::pin(plain_face::run(&cx, &plain, handler, command)).await,
                None => handler.run(&cx, command).await,
            }
        })
        .await
    }

    /// A command for an editor without the plugin, run on its own ([`plain_face::detached`]).
    async fn plain_command(
        &self,
        plain: &Arc<super::plain::Plain>,
        handler: &'static commands::Entry,
        command: commands::Command,
    ) -> Result<crate::mcp::Reply> {
        let cx = commands::Context {
            client: &self.client,
            manager: &self.manager,
            gate: &self.gate,
            editor: self.editor(),
            gateway: &self.gateway,
            reconfigure: &|| self.reconfigure(),
            apps: &self.apps,
        };
        plain_face::run(&cx, plain, handler, command).await
    }
}

impl Backend {
    async fn initialize_inner(&self, params: InitializeParams) -> Result<InitializeResult> {
        let experimental = params.capabilities.experimental.as_ref();
        let with_plugin = experimental.is_some_and(|e| e.get("mcpSidecar").is_some());
        let editor = if with_plugin {
            let caps = EditorCapabilities::from_experimental(experimental);
            Editor::new(self.client.clone(), caps)
        } else {
            let plain = PlainCapabilities::from_client(&params.capabilities);
            Editor::plain_lsp(self.client.clone(), plain)
        };
        let is_plain = editor.plain().is_some();
        self.manager.set_ui(Arc::new(editor.clone()));
        *self.editor.lock() = Some(editor);
        *self.config.folders.lock() = initial_folders(&params);
        *self.config.settings.lock() =
            config::unwrap_editor_settings(params.initialization_options);
        let mut capabilities = ServerCapabilities {
            execute_command_provider: Some(ExecuteCommandOptions::new(
                contract::COMMANDS.iter().map(|c| c.to_string()).collect(),
                WorkDoneProgressOptions::default(),
            )),
            workspace: Some(WorkspaceOptions {
                workspace_folders: Some(WorkspaceFoldersServerCapabilities {
                    supported: Some(true),
                    change_notifications: Some(true.into()),
                }),
                ..Default::default()
            }),
            experimental: Some(contract::server_experimental()),
            ..Default::default()
        };
        if is_plain {
            plain_face::capabilities(&mut capabilities);
        }
        Ok(InitializeResult {
            capabilities,
            server_info: Some(ServerInfo::new(
                "mcp-sidecar".into(),
                Some(env!("CARGO_PKG_VERSION").into()),
            )),
        })
    }

    async fn initialized_inner(&self, _: InitializedParams) {
        if let Some(events) = self.events.lock().take() {
            let plugin = self.editor().plain().is_none();
            let forward =
                super::notify::forward(self.client.clone(), events, self.apps.clone(), plugin);
            tokio::spawn(async move {
                if let Err(panic) = guard::catch(forward).await {
                    tracing::error!("forwarding server events to the editor stopped: {panic}");
                }
            });
        }
        self.manager.set_folders(self.folders());
        // Tasks a sidecar of this workspace left running are followed again.
        self.manager.resume_tasks();
        let tx = reconfigure::spawn(
            self.client.clone(),
            self.editor(),
            self.manager.clone(),
            self.config.clone(),
        );
        let _ = tx.send(());
        *self.reconfig.lock() = Some(tx);
        self.start_gateway();
    }

    async fn did_change_workspace_folders_inner(&self, params: DidChangeWorkspaceFoldersParams) {
        let folders = {
            let mut folders = self.config.folders.lock();
            folders.retain(|f| !params.event.removed.iter().any(|r| r.uri == f.uri));
            for added in params.event.added {
                if !folders.iter().any(|f| f.uri == added.uri) {
                    folders.push(folder_from(added));
                }
            }
            folders.clone()
        };
        self.manager.set_folders(folders);
        if let Some(gateway) = self.gateway.lock().clone() {
            gateway.set_folders(self.folder_paths());
        }
        // Folders bring their own config files.
        self.reconfigure();
    }

    async fn did_change_configuration_inner(&self, params: DidChangeConfigurationParams) {
        // An editor with nothing set says `{}` on connecting (eglot): that keeps the settings
        // `initializationOptions` gave; once settings were sent, `{}` empties them.
        let empty =
            params.settings.is_null() || params.settings.as_object().is_some_and(|o| o.is_empty());
        let changed = self
            .changed_settings
            .swap(true, std::sync::atomic::Ordering::SeqCst);
        if empty && !changed {
            self.changed_settings
                .store(false, std::sync::atomic::Ordering::SeqCst);
            tracing::info!("the editor sent no settings; keeping those it gave at initialize");
            return;
        }
        *self.config.settings.lock() = config::unwrap_editor_settings(Some(params.settings));
        self.reconfigure();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The serve loop boxes a command's future on every request: it stays small, the command's
    /// own work boxed once inside it (sized to that command, see `commands`). About 1.1 KiB in
    /// a test build, where `callTool`'s own future is 2.3 KiB.
    #[test]
    fn the_commands_future_holds_no_command_inline() {
        let (service, _socket) = tower_lsp_server::LspService::new(super::Backend::new);
        let params: tower_lsp_server::gen_lsp_types::ExecuteCommandParams =
            serde_json::from_value(serde_json::json!({"command": "mcp-sidecar.callTool"})).unwrap();
        let future = service.inner().command(params.into());
        let size = std::mem::size_of_val(&future);
        assert!(size < 2048, "{size} bytes");
    }

    /// eglot sends `{}` on connecting when the person set nothing: the settings
    /// `initializationOptions` gave stay; settings that say something replace them, and after
    /// them `{}` does too.
    #[tokio::test]
    async fn empty_settings_keep_those_given_before() {
        use tower_lsp_server::LanguageServer;
        let (service, _socket) = tower_lsp_server::LspService::new(super::Backend::new);
        let backend = service.inner();
        let given = serde_json::json!({"servers": {"demo": {"command": "x"}}});
        *backend.config.settings.lock() = given.clone();
        let change = |settings| {
            serde_json::from_value::<DidChangeConfigurationParams>(
                serde_json::json!({"settings": settings}),
            )
            .unwrap()
        };
        backend
            .did_change_configuration(change(serde_json::json!({})))
            .await;
        backend
            .did_change_configuration(change(serde_json::Value::Null))
            .await;
        assert_eq!(*backend.config.settings.lock(), given);
        let new = serde_json::json!({"servers": {}});
        backend.did_change_configuration(change(new.clone())).await;
        assert_eq!(*backend.config.settings.lock(), new);
        // Once settings were sent, `{}` is what the editor now has.
        backend
            .did_change_configuration(change(serde_json::json!({})))
            .await;
        assert_eq!(*backend.config.settings.lock(), serde_json::json!({}));
    }
}
