//! The server manager: applies configuration (starting, stopping and restarting only what
//! changed), keeps the roots, and routes the editor's operations to the right connection.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::apps::{self, Surface};
use crate::config::{OAuthSpec, Resolved, Settings, TransportSpec};
use crate::contract::CallError;
use crate::contract::{
    PromptSummary, ResourceSummary, ResourceTemplateSummary, ServerState, ServerSummary,
    SignOutResult, ToolSummary, ToolUi,
};
use crate::mcp::host::{Event, EventReceiver, Host, LogLevel};
use crate::mcp::reply::{Caller, Reply};
use crate::mcp::servers::supervisor::{Limits, Slot};
use crate::mcp::session::connection::Connection;
use crate::roots::{self, Folder};

/// A workspace-defined server the person has not decided about yet.
#[derive(Debug, Clone, PartialEq)]
pub struct TrustRequest {
    pub server: String,
    pub origin: String,
    /// The definition as written: the command line (or the URL), the names of its env variables
    /// and headers, its `envFile`; never a value.
    pub description: String,
    /// The loosening settings it asks for ("sampling without review", ...).
    pub asks_for: Vec<String>,
    /// The file that defines it (absent for the editor's settings), shown on request.
    pub file: Option<std::path::PathBuf>,
}

impl TrustRequest {
    fn new(spec: &crate::config::ServerSpec) -> TrustRequest {
        let info = spec.trust.as_ref();
        TrustRequest {
            server: spec.name.clone(),
            origin: spec.source.to_string(),
            description: info.map(|i| i.summary.clone()).unwrap_or_default(),
            asks_for: info.map(|i| i.asks_for.clone()).unwrap_or_default(),
            file: match &spec.source {
                crate::config::Source::File(path) => Some(path.into()),
                crate::config::Source::EditorSettings => None,
            },
        }
    }
}

/// Why a server waits for trust (its `needsTrust` message), if it does: `trusted` is the
/// stored decision for its subject (`None`: it needs none; `Some(None)`: not decided yet).
fn waiting_for_trust(
    spec: &crate::config::ServerSpec,
    restricted: bool,
    trusted: Option<Option<bool>>,
) -> Option<&'static str> {
    match trusted {
        Some(_) if restricted => Some("the editor's workspace is in Restricted Mode"),
        Some(Some(false)) => Some("not trusted: trust the server to start it"),
        Some(None) => Some("defined in the workspace; waiting for your decision to trust it"),
        _ => None,
    }
    .filter(|_| spec.trust.is_some())
}

/// How long roots changes are gathered before legacy servers are told.
const ROOTS_DEBOUNCE: Duration = Duration::from_millis(150);
/// How long shutdown waits for all servers together.
const SHUTDOWN_BOUND: Duration = Duration::from_secs(5);

pub struct Manager {
    /// Itself, for the tasks it follows (each holds it weakly).
    pub(super) me: std::sync::Weak<Manager>,
    pub(super) host: Arc<Host>,
    /// The tasks followed for this workspace (read when first needed, see `calls.rs`).
    pub(super) tasks: std::sync::OnceLock<Arc<crate::mcp::tasks::TaskBook>>,
    inner: Mutex<Inner>,
    roots_generation: AtomicU64,
}

#[derive(Default)]
struct Inner {
    settings: Settings,
    folders: Vec<Folder>,
    slots: BTreeMap<String, Arc<Slot>>,
    /// A configuration has been applied (the settings are the person's, not the defaults).
    applied: bool,
}

impl Manager {
    pub fn new() -> (Arc<Manager>, EventReceiver) {
        let (host, events) = Host::new();
        let manager = Arc::new_cyclic(|me| Manager {
            me: me.clone(),
            host,
            tasks: std::sync::OnceLock::new(),
            inner: Mutex::new(Inner::default()),
            roots_generation: AtomicU64::new(0),
        });
        (manager, events)
    }

    fn inner(&self) -> parking_lot::MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Applies a new configuration: servers whose definition is unchanged keep running.
    /// Returns the workspace-defined servers that wait for a trust decision.
    pub async fn apply(self: &Arc<Self>, resolved: Resolved) -> Vec<TrustRequest> {
        let mut retired = Vec::new();
        let mut asks = Vec::new();
        {
            let mut inner = self.inner();
            let restricted = resolved.restricted;
            // A workspace server may run only with a stored "trust" for its exact subject and
            // outside Restricted Mode; checked for running servers too (untrusting stops them).
            let decision = |name: &str, spec: &crate::config::ServerSpec| {
                spec.trust
                    .as_ref()
                    .map(|t| crate::config::trust::decision(name, t))
            };
            let roots_changed = inner.settings.roots != resolved.settings.roots;
            self.host
                .set_elicitation_settings(resolved.settings.elicitation.clone());
            if let Some(problem) = self
                .host
                .set_sampling_settings(resolved.settings.sampling.clone())
            {
                tracing::warn!("{problem}");
                self.host.emit(Event::Message {
                    level: LogLevel::Error,
                    message: problem,
                });
            }
            inner.settings = resolved.settings;
            inner.applied = true;
            let limits = Limits {
                max_message_bytes: inner.settings.max_message_bytes,
                max_restarts: inner.settings.max_restarts,
            };
            let mut next = BTreeMap::new();
            for entry in resolved.servers {
                let name = match &entry {
                    Ok(spec) => spec.name.clone(),
                    Err(e) => e.server.clone().unwrap_or_default(),
                };
                // A server waiting for trust is looked at again: the decision may have changed.
                let unchanged = inner.slots.get(&name).is_some_and(|slot| match &entry {
                    Ok(spec) => {
                        slot.spec.as_ref() == Some(spec)
                            && slot.lock().status.state != ServerState::NeedsTrust
                            && (spec.trust.is_none()
                                || (!restricted && decision(&name, spec) == Some(Some(true))))
                    }
                    Err(_) => false,
                });
                if unchanged {
                    if let Some(slot) = inner.slots.remove(&name) {
                        next.insert(name, slot);
                    }
                    continue;
                }
                let trusted = entry.as_ref().ok().and_then(|spec| decision(&name, spec));
                let waiting = entry
                    .as_ref()
                    .ok()
                    .and_then(|spec| waiting_for_trust(spec, restricted, trusted));
                if let (Ok(spec), Some(_)) = (&entry, waiting)
                    && trusted == Some(None)
                    && !restricted
                {
                    asks.push(TrustRequest::new(spec));
                }
                // Still waiting for the same reason: the slot stays, and says nothing new.
                if let (Ok(spec), Some(message)) = (&entry, waiting)
                    && let Some(old) = inner.slots.get(&name)
                    && old.spec.as_ref() == Some(spec)
                    && {
                        let state = old.lock();
                        state.status.state == ServerState::NeedsTrust
                            && state.status.message.as_deref() == Some(message)
                    }
                {
                    if let Some(slot) = inner.slots.remove(&name) {
                        next.insert(name, slot);
                    }
                    continue;
                }
                if let Some(old) = inner.slots.remove(&name) {
                    retired.push(old);
                }
                let slot = match entry {
                    Ok(spec) if waiting.is_some() => Slot::inert(
                        name.clone(),
                        Some(spec.clone()),
                        ServerState::NeedsTrust,
                        Some(spec.source.to_string()),
                        waiting.unwrap_or_default().into(),
                        self.host.clone(),
                    ),
                    Ok(spec) if spec.disabled => Slot::inert(
                        name.clone(),
                        Some(spec.clone()),
                        ServerState::Stopped,
                        Some(spec.source.to_string()),
                        "disabled in its configuration".into(),
                        self.host.clone(),
                    ),
                    Ok(spec) if !spec.missing_inputs.is_empty() => Slot::inert(
                        name.clone(),
                        Some(spec.clone()),
                        ServerState::Failed,
                        Some(spec.source.to_string()),
                        format!(
                            "not started: {} not answered",
                            spec.missing_inputs
                                .iter()
                                .map(|id| format!("${{input:{id}}}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        self.host.clone(),
                    ),
                    Ok(spec) => Slot::start(spec, self.host.clone(), limits),
                    Err(e) => {
                        self.host.emit(Event::Message {
                            level: LogLevel::Error,
                            message: e.to_string(),
                        });
                        Slot::inert(
                            name.clone(),
                            None,
                            ServerState::Failed,
                            Some(e.origin.to_string()),
                            e.message,
                            self.host.clone(),
                        )
                    }
                };
                next.insert(name, slot);
            }
            retired.extend(std::mem::take(&mut inner.slots).into_values());
            inner.slots = next;
            if roots_changed {
                drop(inner);
                self.recompute_roots();
            }
        }
        for slot in retired {
            tokio::spawn(async move { slot.stop(true).await });
        }
        self.host.changed();
        asks
    }

    /// The trust subject of a configured server, if it comes from the workspace.
    pub fn trust_info(&self, server: &str) -> Option<crate::config::TrustInfo> {
        self.inner()
            .slots
            .get(server)
            .and_then(|s| s.spec.as_ref())
            .and_then(|s| s.trust.clone())
    }

    /// The editor's UI, known once `initialize` has declared it (before any server starts).
    /// A line for the editor's log (`window/logMessage`).
    pub fn log(&self, level: LogLevel, message: String) {
        self.host.emit(Event::Log { level, message });
    }

    pub fn set_ui(&self, ui: Arc<dyn crate::ui::Prompter>) {
        self.host.set_ui(ui);
    }

    /// The editor's UI, once `initialize` has declared it.
    pub fn ui(&self) -> Option<Arc<dyn crate::ui::Prompter>> {
        self.host.ui()
    }

    /// The browser step of OAuth sign-in (see [`crate::auth::SignIn`]).
    pub fn set_sign_in(&self, sign_in: Arc<dyn crate::auth::SignIn>) {
        self.host.set_sign_in(sign_in);
    }

    /// The editor's workspace folders changed (or were first given).
    /// The editor's workspace folders now.
    pub(super) fn folders(&self) -> Vec<Folder> {
        self.inner().folders.clone()
    }

    pub fn set_folders(self: &Arc<Self>, folders: Vec<Folder>) {
        self.inner().folders = folders;
        self.recompute_roots();
    }

    /// Recomputes the roots. Folders, extras and exclusions apply at once; nested-project
    /// discovery walks the disk on a blocking thread and applies when done. Legacy servers are
    /// told once the set has been stable for [`ROOTS_DEBOUNCE`].
    fn recompute_roots(self: &Arc<Self>) {
        let (folders, settings) = {
            let inner = self.inner();
            (inner.folders.clone(), inner.settings.roots.clone())
        };
        let generation = self.roots_generation.fetch_add(1, Ordering::SeqCst) + 1;
        let quick = roots::RootsSettings {
            discover: None,
            ..settings.clone()
        };
        self.host.set_roots(roots::compute(&folders, &quick));
        let this = self.clone();
        tokio::spawn(async move {
            if settings.discover.is_some() {
                let walked =
                    tokio::task::spawn_blocking(move || roots::compute(&folders, &settings)).await;
                if this.roots_generation.load(Ordering::SeqCst) != generation {
                    return;
                }
                if let Ok(all) = walked {
                    this.host.set_roots(all);
                }
            }
            // Each server is told only if its own view changed (see notify_roots_changed), so a
            // later change that restores nothing still delivers an earlier one it superseded.
            tokio::time::sleep(ROOTS_DEBOUNCE).await;
            if this.roots_generation.load(Ordering::SeqCst) == generation {
                this.notify_roots_changed().await;
            }
        });
    }

    /// Tells each running legacy server whose own view of the roots changed.
    async fn notify_roots_changed(&self) {
        let all = self.host.roots();
        let slots: Vec<_> = self.inner().slots.values().cloned().collect();
        for slot in slots {
            let Some(connection) = slot.connection() else {
                continue;
            };
            let view = roots::for_server(&all, connection.roots_filter());
            let changed = {
                let mut state = slot.lock();
                let changed = state.roots_seen != view;
                state.roots_seen = view;
                changed
            };
            if changed {
                connection.notify_roots_changed().await;
            }
        }
    }

    /// The roots as the given server would see them now.
    pub fn roots(&self) -> Vec<roots::Root> {
        self.host.roots()
    }

    pub fn server_names(&self) -> Vec<String> {
        self.inner().slots.keys().cloned().collect()
    }

    pub fn list_servers(&self) -> Vec<ServerSummary> {
        let slots: Vec<_> = self.inner().slots.values().cloned().collect();
        slots
            .iter()
            .map(|slot| {
                let state = slot.lock();
                ServerSummary {
                    status: state.status.clone(),
                    transport: slot.transport.to_string(),
                    server_info: state
                        .connection
                        .as_ref()
                        .and_then(|c| c.server_info.clone()),
                    tool_count: state
                        .connection
                        .as_ref()
                        .map_or(0, |c| c.listed_tool_count()),
                    restarts: state.restarts,
                    auth: slot.auth.summary(),
                }
            })
            .collect()
    }

    fn slot(&self, server: &str) -> Result<Arc<Slot>, CallError> {
        self.inner()
            .slots
            .get(server)
            .cloned()
            .ok_or_else(|| CallError::UnknownServer(server.to_string()))
    }

    pub(super) fn running(
        &self,
        server: &str,
    ) -> Result<Arc<crate::mcp::session::connection::Connection>, CallError> {
        let slot = self.slot(server)?;
        let state = slot.lock();
        state
            .connection
            .clone()
            .ok_or_else(|| CallError::NotRunning {
                server: server.to_string(),
                state: serde_json::to_value(state.status.state)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                detail: state.status.message.clone(),
            })
    }

    /// Rows from one server (its error stands) or from every running one (a server whose
    /// list fails is left out, with a log line).
    pub(super) async fn across<T>(
        &self,
        server: Option<&str>,
        what: &str,
        rows: impl AsyncFn(&str, &Connection) -> Result<Vec<T>, CallError>,
    ) -> Result<Vec<T>, CallError> {
        let names = match server {
            Some(name) => vec![name.to_string()],
            None => self.server_names(),
        };
        let mut out = Vec::new();
        for name in names {
            let connection = match self.running(&name) {
                Ok(c) => c,
                Err(e) if server.is_some() => return Err(e),
                Err(_) => continue,
            };
            match rows(&name, &connection).await {
                Ok(rows) => out.extend(rows),
                Err(e) if server.is_some() => return Err(e),
                Err(e) => tracing::warn!(server = %name, "listing {what} failed: {e}"),
            }
        }
        Ok(out)
    }

    /// The tools of one server, or of every running server, as the servers listed them.
    pub async fn server_tools(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<(String, Arc<Vec<rmcp::model::Tool>>)>, CallError> {
        self.across(server, "tools", async |name, connection| {
            Ok(vec![(name.to_owned(), connection.tools().await?)])
        })
        .await
    }

    /// One server's tools as JSON, as it listed them (`_meta` included): what the views face
    /// reads.
    pub async fn tool_definitions(&self, server: &str) -> Result<Vec<Value>, CallError> {
        let tools = self.running(server)?.tools().await?;
        Ok(tools
            .iter()
            .filter_map(|t| serde_json::to_value(t).ok())
            .collect())
    }

    /// The tools a person or an agent may call (visibility with `model`), each marked with its
    /// view's resource when it has one.
    pub async fn list_tools(&self, server: Option<&str>) -> Result<Vec<ToolSummary>, CallError> {
        self.across(server, "tools", async |name, connection| {
            Ok(connection
                .tools()
                .await?
                .iter()
                .filter(|t| apps::meta::visibility(t.meta.as_deref()).allows(Surface::Model))
                .map(|t| ToolSummary {
                    server: name.to_owned(),
                    name: t.name.to_string(),
                    label: None,
                    title: t.title.clone(),
                    description: t.description.as_ref().map(|d| d.to_string()),
                    input_schema: Value::Object((*t.input_schema).clone()),
                    ui: apps::meta::resource_uri(t.meta.as_deref()).map(|uri| ToolUi {
                        resource_uri: uri.to_string(),
                    }),
                })
                .collect())
        })
        .await
    }

    pub async fn list_resources(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<ResourceSummary>, CallError> {
        self.across(server, "resources", async |name, connection| {
            Ok(connection
                .resources()
                .await?
                .iter()
                .map(|r| ResourceSummary {
                    server: name.to_owned(),
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    label: None,
                    title: r.title.clone(),
                    description: r.description.clone(),
                    mime_type: r.mime_type.clone(),
                    size: r.size,
                })
                .collect())
        })
        .await
    }

    pub async fn list_resource_templates(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<ResourceTemplateSummary>, CallError> {
        self.across(server, "resource templates", async |name, connection| {
            Ok(connection
                .resource_templates()
                .await?
                .iter()
                .map(|t| ResourceTemplateSummary {
                    server: name.to_owned(),
                    uri_template: t.uri_template.clone(),
                    name: t.name.clone(),
                    label: None,
                    title: t.title.clone(),
                    description: t.description.clone(),
                    mime_type: t.mime_type.clone(),
                })
                .collect())
        })
        .await
    }

    pub async fn list_prompts(
        &self,
        server: Option<&str>,
    ) -> Result<Vec<PromptSummary>, CallError> {
        self.across(server, "prompts", async |name, connection| {
            Ok(connection
                .prompts()
                .await?
                .iter()
                .map(|p| PromptSummary {
                    server: name.to_owned(),
                    name: p.name.clone(),
                    label: None,
                    title: p.title.clone(),
                    description: p.description.clone(),
                    arguments: p.arguments.as_ref().map(|args| {
                        args.iter()
                            .filter_map(|a| serde_json::to_value(a).ok())
                            .collect()
                    }),
                })
                .collect())
        })
        .await
    }

    /// Reads a resource to completion: the MCP `ReadResourceResult`.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        caller: Caller,
    ) -> Result<Reply, CallError> {
        self.running(server)?.read_resource(uri, caller).await
    }

    /// Gets a prompt to completion: the MCP `GetPromptResult`.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        caller: Caller,
    ) -> Result<Reply, CallError> {
        self.running(server)?
            .get_prompt(name, arguments, caller)
            .await
    }

    pub async fn subscribe(&self, server: &str, uri: &str, on: bool) -> Result<(), CallError> {
        self.running(server)?.subscribe(uri, on).await
    }

    /// `completion/complete` with `params` as MCP spells them (`ref`, `argument`, `context?`).
    pub async fn complete(&self, server: &str, params: Value) -> Result<Value, CallError> {
        self.running(server)?.complete(params).await
    }

    /// Sees a new value whenever servers start or stop, change state or change their tools,
    /// and when a configuration was applied (for the gateway's `tools/list_changed`).
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.host.changes()
    }

    /// The servers' notifications that the gateway passes on to agents.
    pub fn observe(&self) -> tokio::sync::broadcast::Receiver<crate::mcp::host::Observed> {
        self.host.observe()
    }

    /// The `gateway` settings last applied; `None` before the first configuration.
    pub fn apps_settings(&self) -> crate::config::AppsSettings {
        self.inner().settings.apps.clone()
    }

    /// The `plainLsp` settings last applied.
    pub fn plain_lsp_settings(&self) -> crate::config::PlainLspSettings {
        self.inner().settings.plain_lsp.clone()
    }

    /// The `ui://` resource of `tool`'s view on `server`, if it has one (from the listed tools).
    pub async fn tool_view(&self, server: &str, tool: &str) -> Option<String> {
        let tools = self.running(server).ok()?.tools().await.ok()?;
        let tool = tools.iter().find(|t| t.name == tool)?;
        apps::meta::resource_uri(tool.meta.as_deref()).map(str::to_string)
    }

    pub fn gateway_settings(&self) -> Option<crate::config::GatewaySettings> {
        let inner = self.inner();
        inner.applied.then(|| inner.settings.gateway.clone())
    }

    /// Restarts a server now (also one that gave up after too many crashes).
    pub fn restart(&self, server: &str) -> Result<(), CallError> {
        let slot = self.slot(server)?;
        if slot.restart() {
            return Ok(());
        }
        let message = slot.lock().status.message.clone().unwrap_or_default();
        Err(CallError::Refused(format!(
            "server \"{server}\" cannot be started: {message}"
        )))
    }

    /// The spec of an `http` server, for signing in or out.
    fn http_slot(&self, server: &str) -> Result<(Arc<Slot>, url::Url, OAuthSpec), CallError> {
        let slot = self.slot(server)?;
        match slot.spec.as_ref().map(|s| &s.transport) {
            Some(TransportSpec::Http { url, oauth, .. }) => {
                let (url, oauth) = (url.clone(), oauth.clone());
                Ok((slot, url, oauth))
            }
            Some(TransportSpec::Stdio { .. }) => Err(CallError::Refused(format!(
                "server \"{server}\" is a stdio server: only http servers sign in"
            ))),
            None => Err(CallError::Refused(format!(
                "server \"{server}\" cannot be started: {}",
                slot.lock().status.message.clone().unwrap_or_default()
            ))),
        }
    }

    /// Signs in to an `http` server now (no "Sign in / Not now" question) by restarting it,
    /// and waits until that start has ended; the server's row after it.
    pub async fn sign_in(&self, server: &str) -> Result<ServerSummary, CallError> {
        let (slot, _, _) = self.http_slot(server)?;
        slot.auth.request();
        let Some(status) = slot.restart_and_settle().await else {
            let message = slot.lock().status.message.clone().unwrap_or_default();
            return Err(CallError::Refused(format!(
                "server \"{server}\" cannot be started: {message}"
            )));
        };
        // A start that never got to ask (no 401) leaves no request behind for a later one.
        slot.auth.take_requested();
        let need = slot.auth.needed();
        match status.state {
            ServerState::Running => {}
            ServerState::NeedsAuth if need.as_ref().is_some_and(|n| n.cancelled) => {
                return Err(CallError::Cancelled);
            }
            state => {
                return Err(CallError::NotRunning {
                    server: server.to_owned(),
                    state: serde_json::to_value(state)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_owned))
                        .unwrap_or_default(),
                    detail: status.message,
                });
            }
        }
        self.list_servers()
            .into_iter()
            .find(|s| s.status.name == server)
            .ok_or_else(|| CallError::UnknownServer(server.to_owned()))
    }

    /// Signs out of an `http` server: revokes and forgets its grant, ends its connection; the
    /// server waits in `needsAuth`.
    pub async fn sign_out(&self, server: &str) -> Result<SignOutResult, CallError> {
        let (slot, url, oauth) = self.http_slot(server)?;
        let revoked = crate::mcp::wire::http::sign_out(&url, &oauth)
            .await
            .map_err(|e| CallError::Refused(format!("could not sign out of \"{server}\": {e}")))?;
        let host = slot
            .auth
            .host()
            .unwrap_or_else(|| url.host_str().unwrap_or_default().to_owned());
        slot.auth.need(crate::auth::status::Need {
            message: format!("needs you to sign in at {host} (signed out)"),
            cancelled: false,
        });
        slot.left_running(Duration::from_secs(5)).await;
        tracing::info!(server, revoked, "signed out");
        Ok(SignOutResult {
            server: server.to_owned(),
            signed_out: true,
            revoked,
        })
    }

    /// Stops every server, waiting a bounded time; called on `shutdown`, `exit` and EOF.
    pub async fn shutdown(&self) {
        // Tasks outlive the sidecar: their followers stop, the calls waiting on them do not
        // cancel them, and the next sidecar follows them again.
        if let Some(book) = self.tasks.get() {
            book.stop();
        }
        let slots: Vec<_> = std::mem::take(&mut self.inner().slots)
            .into_values()
            .collect();
        let stops = slots.iter().map(|s| s.stop(false));
        if tokio::time::timeout(SHUTDOWN_BOUND, futures::future::join_all(stops))
            .await
            .is_err()
        {
            tracing::warn!("some servers did not stop in time; they are killed on exit");
        }
    }
}
