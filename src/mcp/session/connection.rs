//! One live connection to a server: start-up in either era, its lists, subscriptions and
//! completions. Its calls are in `exchange.rs`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientRequest, CompleteRequest, CompleteRequestParams, Prompt, ProtocolVersion,
    RequestMetaObject, Resource, ResourceTemplate, ServerResult, SubscribeRequest,
    SubscribeRequestParams, Tool, UnsubscribeRequest, UnsubscribeRequestParams,
};
use rmcp::service::{
    ClientInitializeError, ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService,
    ServiceError,
};
use rmcp::transport::IntoTransport;
use serde_json::Value;

use crate::config::{ProtocolPin, RootsFilter, ServerSpec, TransportSpec};
use crate::contract::CallError;
use crate::mcp::host::{Host, HumanClock};
use crate::mcp::session::handler::{Handler, ToolCache};
use crate::mcp::session::listing;
use crate::mcp::wire::direct::Direct;
use crate::mcp::wire::http;
use crate::mcp::wire::process::{self, Diagnostics, ServerProcess};
use crate::mcp::wire::transport::StdioTransport;

/// How many `input_required` rounds one call may take before the sidecar gives up.
pub const MAX_MRTR_ROUNDS: usize = 16;

/// The level 2026-07-28 servers are asked to log at, per request: everything, as legacy servers
/// send without `logging/setLevel` (the editor shows debug messages at its lowest level).
pub(super) const SERVER_LOG_LEVEL: rmcp::model::LoggingLevel = rmcp::model::LoggingLevel::Debug;

pub struct Connection {
    pub(super) server: Arc<str>,
    pub(super) peer: Peer<RoleClient>,
    pub(super) handler: Arc<Handler>,
    pub protocol_version: String,
    pub modern: bool,
    pub server_info: Option<Value>,
    /// The sign-in of an `http` server.
    pub(super) auth: Option<Arc<crate::auth::status::Status>>,
    /// The server's capabilities, as JSON (what it offers besides tools).
    pub(super) capabilities: Option<Value>,
    pub(super) tools: Arc<ToolCache>,
    pub(super) diag: Arc<Diagnostics>,
    pub(super) timeout: Duration,
    /// A 2026-07-28 server's `subscriptions/listen` stream (`listen.rs`).
    pub(super) listener: Option<crate::mcp::session::listen::Listener>,
    /// A stdio session's calls made past rmcp's peer (`direct.rs`), with the `_meta` each of
    /// them carries (a 2026-07-28 session's per-request protocol version, client and
    /// capabilities, which rmcp's peer would add).
    pub(super) direct: Option<(Arc<Direct>, RequestMetaObject)>,
    /// A legacy (2025-11-25) server's tools that require a task-augmented call
    /// (`execution.taskSupport: "required"`), read once from its raw `tools/list`.
    pub(super) task_tools: tokio::sync::OnceCell<std::collections::HashSet<String>>,
}

/// What `connect` hands the supervisor: the shared connection, the rmcp service (whose end means
/// the connection is gone) and the process, if any.
pub struct Started {
    pub connection: Arc<Connection>,
    pub service: RunningService<RoleClient, Arc<Handler>>,
    /// The stdio server's process; HTTP servers have none.
    pub process: Option<ServerProcess>,
}

/// Starts the server and runs the handshake of the era it speaks.
pub async fn connect(
    spec: &ServerSpec,
    host: Arc<Host>,
    max_message_bytes: usize,
    diag: Arc<Diagnostics>,
    auth: Arc<crate::auth::status::Status>,
) -> Result<Started, String> {
    diag.route_progress(host.clone());
    let (command, args, env, cwd) = match &spec.transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => (command, args, env, cwd),
        TransportSpec::Http {
            url,
            headers,
            oauth,
        } => {
            let signer = host.clone();
            let transport = http::transport(
                &spec.name,
                url,
                headers,
                http::Options {
                    timeout: spec.timeout,
                    max_message_bytes,
                    oauth: oauth.clone(),
                    sign_in: Arc::new(move || signer.sign_in()),
                    status: auth.clone(),
                    clock: host.clock(&spec.name),
                },
                diag.clone(),
            )?;
            return handshake(spec, host, transport, None, None, diag, Some(auth)).await;
        }
    };
    let spawned = process::spawn(&spec.name, command, args, env, cwd.as_ref(), diag.clone())?;
    let transport = StdioTransport::new(
        &spec.name,
        spawned.stdin,
        spawned.stdout,
        max_message_bytes,
        diag.clone(),
    );
    let direct = Some(transport.direct());
    let process = Some(spawned.process);
    handshake(spec, host, transport, process, direct, diag, None).await
}

/// The handshake, the same over every transport; `process` is the stdio server's, if any, and
/// `direct` its transport's calls past rmcp (see `direct.rs`).
async fn handshake<T, E, A>(
    spec: &ServerSpec,
    host: Arc<Host>,
    transport: T,
    mut process: Option<ServerProcess>,
    direct: Option<Arc<Direct>>,
    diag: Arc<Diagnostics>,
    auth: Option<Arc<crate::auth::status::Status>>,
) -> Result<Started, String>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let tools: Arc<ToolCache> = Arc::default();
    let (lifecycle, legacy_version) = lifecycle(&spec.protocol);
    let handler = Arc::new(Handler {
        server: spec.name.as_str().into(),
        roots: spec.roots.clone(),
        host,
        tools: tools.clone(),
        protocol_version: legacy_version,
        elicitation: spec.elicitation,
        sampling: spec.sampling,
        refresh: Default::default(),
        lists: Default::default(),
        calls: Default::default(),
    });
    // The time a person spends signing in is not the server's: the deadline waits for it.
    let clock = handler.host.clock(&spec.name);
    let started = within_server_time(
        &clock,
        spec.timeout,
        handler.clone().serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .ok_or(());
    let service = match started {
        Ok(Ok(service)) => service,
        Ok(Err(e)) => {
            let status = match process.as_mut() {
                Some(process) => process.stop(Duration::from_millis(200)).await,
                None => None,
            };
            if status.is_some() {
                diag.stderr_read(Duration::from_millis(500)).await;
            }
            return Err(startup_failure(&e, status, &diag));
        }
        Err(_) => {
            if let Some(process) = process.as_mut() {
                process.stop(Duration::from_millis(200)).await;
            }
            return Err(format!(
                "did not complete the MCP handshake (server/discover or initialize) within {} s{}",
                spec.timeout.as_secs_f64(),
                stderr_suffix(&diag)
            ));
        }
    };
    let info = service.peer_info();
    let protocol_version = info
        .as_ref()
        .map(|i| i.protocol_version.to_string())
        .unwrap_or_default();
    let modern = !version(&protocol_version).has_initialize();
    let server_info = info
        .as_ref()
        .and_then(|i| i.server_info.as_ref())
        .and_then(|s| serde_json::to_value(s).ok());
    let capabilities = info
        .as_ref()
        .and_then(|i| serde_json::to_value(&i.capabilities).ok());
    let direct = direct.map(|direct| {
        let mut meta = RequestMetaObject::new();
        if let Some(info) = info.as_ref().filter(|_| modern) {
            let client = rmcp::ClientHandler::get_info(handler.as_ref());
            meta.set_protocol_version(info.protocol_version.clone());
            meta.set_client_info(client.client_info);
            meta.set_client_capabilities(client.capabilities);
            meta.set_log_level(SERVER_LOG_LEVEL);
        }
        (direct, meta)
    });
    let listener = modern
        .then(|| {
            let (name, peer) = (spec.name.as_str().into(), service.peer().clone());
            crate::mcp::session::listen::Listener::new(
                name,
                peer,
                handler.clone(),
                capabilities.as_ref(),
            )
        })
        .flatten();
    if let Some(listener) = &listener
        && let Err(e) = listener.start().await
    {
        tracing::warn!(server = %spec.name, "{e}; its list changes are not followed");
    }
    let connection = Arc::new(Connection {
        server: spec.name.as_str().into(),
        peer: service.peer().clone(),
        handler,
        listener,
        protocol_version,
        modern,
        server_info,
        auth,
        capabilities,
        tools,
        diag,
        timeout: spec.timeout,
        direct,
        task_tools: tokio::sync::OnceCell::new(),
    });
    Ok(Started {
        connection,
        service,
        process,
    })
}

fn lifecycle(pin: &ProtocolPin) -> (ClientLifecycleMode, ProtocolVersion) {
    let legacy = ProtocolVersion::V_2025_11_25;
    match pin {
        ProtocolPin::Auto => (
            ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(legacy.clone()),
            },
            legacy,
        ),
        ProtocolPin::Version(v) => {
            let version = version(v);
            if version.has_initialize() {
                (ClientLifecycleMode::Initialize, version)
            } else {
                (
                    ClientLifecycleMode::Discover {
                        preferred_versions: vec![version],
                    },
                    legacy,
                )
            }
        }
    }
}

/// A protocol revision by name (config validates pins against the known list).
fn version(name: &str) -> ProtocolVersion {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|v| v.as_str() == name)
        .cloned()
        .or_else(|| serde_json::from_value(Value::String(name.to_string())).ok())
        .unwrap_or(ProtocolVersion::V_2025_11_25)
}

fn stderr_suffix(diag: &Diagnostics) -> String {
    let tail = diag.stderr_tail(3);
    if tail.is_empty() {
        String::new()
    } else {
        format!("; its last output: {}", tail.join(" | "))
    }
}

fn startup_failure(
    error: &ClientInitializeError,
    status: Option<std::process::ExitStatus>,
    diag: &Diagnostics,
) -> String {
    if let Some(fatal) = diag.fatal() {
        return fatal;
    }
    let exited = status
        .filter(|s| !s.success() || s.code().is_some())
        .map(|s| process::describe_exit(Some(s)));
    match exited {
        Some(exit) => format!("the server {exit} during start-up{}", stderr_suffix(diag)),
        None => format!("the MCP handshake failed: {error}{}", stderr_suffix(diag)),
    }
}

impl Connection {
    pub fn roots_filter(&self) -> &RootsFilter {
        &self.handler.roots
    }

    pub fn cached_tool_count(&self) -> usize {
        self.tools.lock().as_ref().map_or(0, |t| t.len())
    }

    /// The listed tools a person or an agent may call (not those for views only), as
    /// `listServers` counts them.
    pub fn listed_tool_count(&self) -> usize {
        self.tools.lock().as_ref().map_or(0, |t| {
            t.iter()
                .filter(|t| {
                    crate::apps::meta::visibility(t.meta.as_deref())
                        .allows(crate::apps::Surface::Model)
                })
                .count()
        })
    }

    /// Tells a legacy server that the roots changed.
    pub async fn notify_roots_changed(&self) {
        if self.modern {
            return;
        }
        if let Err(e) = self.peer.notify_roots_list_changed().await {
            tracing::warn!(server = %self.server, "could not send roots/list_changed: {e}");
        }
    }

    /// The tools, from the cache or fetched (every page) when the cache is empty; asked of
    /// every server, whether it declares the capability or not.
    pub async fn tools(&self) -> Result<Arc<Vec<Tool>>, CallError> {
        self.list(&self.tools, true, || {
            listing::all_pages(&self.server, |p| self.peer.list_tools(p))
        })
        .await
    }

    /// One of the server's lists, from its cache or fetched (every page, following
    /// `nextCursor`, within `listing`'s bounds) when the cache is empty; a server without the
    /// capability has none.
    pub(super) async fn list<T, F, Fut>(
        &self,
        cache: &parking_lot::Mutex<Option<Arc<Vec<T>>>>,
        offered: bool,
        fetch: F,
    ) -> Result<Arc<Vec<T>>, CallError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<Vec<T>, listing::Failed>>,
    {
        if !offered {
            return Ok(Arc::default());
        }
        if let Some(list) = cache.lock().clone() {
            return Ok(list);
        }
        // The fetch is boxed: it is rare (the list is cached), and rmcp's paging requests
        // inline would make every listing's future over 10 KiB, copied into its box each time.
        let list = Box::pin(within_server_time(
            &self.handler.host.clock(&self.server),
            self.timeout,
            fetch(),
        ))
        .await
        .ok_or_else(|| self.timeout_error())?
        .map_err(|e| match e {
            listing::Failed::Service(e) => self.service_error(e),
            listing::Failed::Bound(message) => self.protocol(message),
        })?;
        let list = Arc::new(list);
        *cache.lock() = Some(list.clone());
        Ok(list)
    }

    fn offers(&self, capability: &str) -> bool {
        self.capabilities
            .as_ref()
            .is_some_and(|c| c.get(capability).is_some_and(|v| !v.is_null()))
    }

    pub async fn resources(&self) -> Result<Arc<Vec<Resource>>, CallError> {
        let lists = self.handler.lists.clone();
        self.list(&lists.resources, self.offers("resources"), || {
            listing::all_pages(&self.server, |p| self.peer.list_resources(p))
        })
        .await
    }

    pub async fn resource_templates(&self) -> Result<Arc<Vec<ResourceTemplate>>, CallError> {
        let lists = self.handler.lists.clone();
        self.list(&lists.templates, self.offers("resources"), || {
            listing::all_pages(&self.server, |p| self.peer.list_resource_templates(p))
        })
        .await
    }

    pub async fn prompts(&self) -> Result<Arc<Vec<Prompt>>, CallError> {
        let lists = self.handler.lists.clone();
        self.list(&lists.prompts, self.offers("prompts"), || {
            listing::all_pages(&self.server, |p| self.peer.list_prompts(p))
        })
        .await
    }

    /// `resources/subscribe` (`subscribe: true`) or `resources/unsubscribe`; updates come as
    /// [`Event::ResourceUpdated`](crate::mcp::host::Event::ResourceUpdated).
    pub async fn subscribe(&self, uri: &str, subscribe: bool) -> Result<(), CallError> {
        let subscribes = self
            .capabilities
            .as_ref()
            .and_then(|c| c.get("resources"))
            .and_then(|r| r.get("subscribe"))
            .and_then(Value::as_bool)
            == Some(true);
        if !subscribes {
            return Err(CallError::Refused(format!(
                "{} does not offer resource subscriptions",
                self.server
            )));
        }
        if self.modern {
            // 2026-07-28: the resource joins the filter of the subscriptions/listen stream.
            return match &self.listener {
                Some(listener) if listener.updates => listener
                    .subscribe(uri, subscribe)
                    .await
                    .map_err(|e| self.protocol(e)),
                _ => Err(CallError::Refused(format!(
                    "{} does not offer resource subscriptions",
                    self.server
                ))),
            };
        }
        let request = if subscribe {
            ClientRequest::SubscribeRequest(SubscribeRequest::new(SubscribeRequestParams::new(uri)))
        } else {
            ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(
                UnsubscribeRequestParams::new(uri),
            ))
        };
        self.send(request, None).await.map(|_| ())
    }

    /// `completion/complete`, its result as JSON.
    pub async fn complete(&self, params: Value) -> Result<Value, CallError> {
        if !self.offers("completions") {
            return Err(CallError::Refused(format!(
                "{} does not offer completions",
                self.server
            )));
        }
        let params: CompleteRequestParams = serde_json::from_value(params)
            .map_err(|e| CallError::Refused(format!("not a completion request: {e}")))?;
        match self
            .send(
                ClientRequest::CompleteRequest(CompleteRequest::new(params)),
                None,
            )
            .await?
        {
            ServerResult::CompleteResult(result) => {
                serde_json::to_value(result).map_err(|e| self.protocol(e.to_string()))
            }
            _ => {
                Err(self.protocol("answered completion/complete with an unexpected result".into()))
            }
        }
    }

    pub(super) fn timeout_error(&self) -> CallError {
        CallError::Timeout {
            server: self.server.to_string(),
            seconds: self.timeout.as_secs_f64(),
        }
    }

    pub(super) fn protocol(&self, message: String) -> CallError {
        CallError::Protocol {
            server: self.server.to_string(),
            message,
        }
    }

    /// Maps rmcp's errors; a closed transport becomes the clearest reason known.
    pub fn service_error(&self, error: ServiceError) -> CallError {
        // A request that failed because the sign-in is gone says so, whichever way rmcp
        // reports the transport's refusal.
        if let Some(need) = self.auth.as_ref().and_then(|a| a.needed()) {
            return CallError::NotRunning {
                server: self.server.to_string(),
                state: "needsAuth".into(),
                detail: Some(need.message),
            };
        }
        match error {
            // An answer the transport refused (nested too deep): the sidecar's words.
            ServiceError::McpError(e) if crate::mcp::wire::lines::refused(&e) => {
                self.protocol(e.message.to_string())
            }
            ServiceError::McpError(e) => CallError::Server {
                server: self.server.to_string(),
                code: e.code.0,
                message: e.message.to_string(),
                data: e.data,
            },
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                CallError::ServerGone {
                    server: self.server.to_string(),
                    reason: self.diag.fatal().unwrap_or_else(|| {
                        format!(
                            "the connection closed (the server exited){}",
                            stderr_suffix(&self.diag)
                        )
                    }),
                }
            }
            ServiceError::Timeout { .. } => self.timeout_error(),
            ServiceError::Cancelled { .. } => CallError::Cancelled,
            other => self.protocol(other.to_string()),
        }
    }
}

/// Awaits `fut` for at most `timeout` of the server's own time: time a person spends answering
/// the server's questions, or signing in to it, meanwhile does not count. `None` on timeout.
pub(super) async fn within_server_time<T>(
    clock: &HumanClock,
    timeout: Duration,
    fut: impl Future<Output = T>,
) -> Option<T> {
    let start = tokio::time::Instant::now();
    let (human_at_start, _) = clock.total();
    let mut deadline = start + timeout;
    tokio::pin!(fut);
    loop {
        // `fut` first: its first poll writes the request, before the timer is registered.
        tokio::select! {
            biased;
            out = &mut fut => return Some(out),
            _ = tokio::time::sleep_until(deadline) => {
                let (human, busy) = clock.total();
                let now = tokio::time::Instant::now();
                let extended = start + timeout + (human - human_at_start);
                if busy {
                    deadline = now + timeout;
                } else if extended > now {
                    deadline = extended;
                } else {
                    return None;
                }
            }
        }
    }
}
