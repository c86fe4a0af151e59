#![allow(deprecated)] // logging and sampling: deprecated by SEP-2577, still in the protocol
//! The MCP server the agents talk to, on rmcp's server side: one handler per agent session, all
//! over the one [`Manager`] the editor's face uses (the same running servers, roots and flows;
//! a question a server asks during an agent's call is answered in the editor, like one asked
//! during the editor's own call).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams,
        CompleteResult, ContentBlock, ErrorCode, GetPromptRequestParams, GetPromptResponse,
        GetPromptResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListToolsResult, LoggingLevel, LoggingMessageNotificationParam,
        PaginatedRequestParams, Prompt, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, Reference, Resource, ResourceTemplate,
        ResourceUpdatedNotificationParam, ServerCapabilities, ServerConfig, SetLevelRequestParams,
        SubscribeRequestParams, SubscriptionFilter, Tool, UnsubscribeRequestParams,
    },
    service::{NotificationContext, Peer, RequestContext, SubscriptionContext, SubscriptionSink},
};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::broadcast;

use super::agent;
use super::names;
use super::pass::{self, Kind, Tunnel};
use super::routes::Routes;
use crate::contract::CallError;
use crate::mcp::{Caller, Manager, Observed, ToolArguments};

/// Which tools an endpoint offers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every running server's tools, named `<server>__<tool>` ([`names`]).
    All,
    /// One server's tools under their own names (`mcp-sidecar gateway --server NAME`).
    One(String),
}

/// What every agent session shares.
pub struct Shared {
    pub manager: Arc<Manager>,
    routes: Routes,
    /// Legacy sessions, told about changes (`notifications/*/list_changed`, logs, updates).
    sessions: Mutex<Vec<Arc<Session>>>,
    /// 2026-07-28 `subscriptions/listen` streams: (id, scope, sink).
    listeners: Mutex<Vec<(u64, Scope, SubscriptionSink)>>,
    next: AtomicU64,
    /// Results on their way to agents as the bytes the servers sent.
    pub passing: Arc<pass::Passing>,
}

/// One agent session's own state.
pub struct Session {
    id: u64,
    scope: Scope,
    peer: OnceLock<Peer<RoleServer>>,
    /// Set by `logging/setLevel`: the servers' log messages at or above it are passed on.
    log_level: Mutex<Option<LoggingLevel>>,
    /// URIs of `resources/subscribe`.
    subscribed: Mutex<HashSet<String>>,
}

/// A list that can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Tools,
    Prompts,
    Resources,
}

impl Scope {
    fn server(&self) -> Option<&str> {
        match self {
            Scope::All => None,
            Scope::One(name) => Some(name),
        }
    }

    fn covers(&self, server: &str) -> bool {
        self.server().is_none_or(|one| one == server)
    }
}

fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Shared {
    pub fn new(manager: Arc<Manager>) -> Arc<Shared> {
        let observed = manager.observe();
        let shared = Arc::new(Shared {
            manager,
            routes: Routes::default(),
            sessions: Mutex::default(),
            listeners: Mutex::default(),
            next: AtomicU64::new(1),
            passing: Arc::default(),
        });
        tokio::spawn(follow(Arc::downgrade(&shared), observed));
        shared
    }

    /// The tools `scope` offers, each under the name the agent sees; remembers the routes.
    async fn tools(&self, scope: &Scope) -> Result<Vec<Tool>, CallError> {
        let listed = self.manager.server_tools(scope.server()).await?;
        let mut out = Vec::new();
        let mut routes = self.routes.tools.lock();
        let mut seen = HashSet::new();
        for (server, tools) in listed {
            for tool in tools.iter() {
                let name = match scope {
                    Scope::All => names::exposed(&server, &tool.name),
                    Scope::One(_) => tool.name.to_string(),
                };
                if !seen.insert(name.clone()) {
                    tracing::warn!(%server, tool = %tool.name, "gateway: a second tool named {name} is left out");
                    continue;
                }
                if matches!(scope, Scope::All) {
                    routes.insert(name.clone(), (server.clone(), tool.name.to_string()));
                }
                let mut tool = tool.clone();
                tool.name = Cow::Owned(name);
                out.push(tool);
            }
        }
        Ok(out)
    }

    /// The (server, tool) an exposed name stands for; lists again once when it is not known.
    async fn route(&self, scope: &Scope, name: &str) -> Option<(String, String)> {
        routed(scope, name, &self.routes.tools, self.tools(scope)).await
    }

    /// The prompts `scope` offers, named like tools; remembers the routes.
    async fn prompts(&self, scope: &Scope) -> Result<Vec<Prompt>, CallError> {
        let listed = self.manager.list_prompts(scope.server()).await?;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for row in listed {
            let name = match scope {
                Scope::All => names::exposed(&row.server, &row.name),
                Scope::One(_) => row.name.clone(),
            };
            if !seen.insert(name.clone()) {
                tracing::warn!(server = %row.server, prompt = %row.name, "gateway: a second prompt named {name} is left out");
                continue;
            }
            let Some(prompt) = agent_row::<Prompt>(&row, "name", &name) else {
                continue;
            };
            if matches!(scope, Scope::All) {
                self.routes
                    .prompts
                    .lock()
                    .insert(name, (row.server.clone(), row.name.clone()));
            }
            out.push(prompt);
        }
        Ok(out)
    }

    /// The (server, prompt) an exposed name stands for; lists again once when it is not known.
    async fn prompt_route(&self, scope: &Scope, name: &str) -> Option<(String, String)> {
        routed(scope, name, &self.routes.prompts, self.prompts(scope)).await
    }

    /// The resources `scope` offers, with their own URIs; a URI a second server lists too is
    /// left out. Remembers which server lists each.
    async fn resources(&self, scope: &Scope) -> Result<Vec<Resource>, CallError> {
        let listed = self.manager.list_resources(scope.server()).await?;
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for row in listed {
            if !seen.insert(row.uri.clone()) {
                tracing::warn!(server = %row.server, uri = %row.uri, "gateway: a resource another server lists too is left out");
                continue;
            }
            let Some(resource) = agent_row::<Resource>(&row, "uri", &row.uri) else {
                continue;
            };
            self.routes
                .resources
                .lock()
                .insert(row.uri.clone(), row.server.clone());
            out.push(resource);
        }
        Ok(out)
    }

    async fn templates(&self, scope: &Scope) -> Result<Vec<ResourceTemplate>, CallError> {
        let listed = self.manager.list_resource_templates(scope.server()).await?;
        let mut out = Vec::new();
        let mut known = Vec::new();
        for row in listed {
            let Some(template) =
                agent_row::<ResourceTemplate>(&row, "uriTemplate", &row.uri_template)
            else {
                continue;
            };
            known.push((row.server.clone(), row.uri_template.clone()));
            out.push(template);
        }
        if matches!(scope, Scope::All) {
            *self.routes.templates.lock() = known;
        }
        Ok(out)
    }

    /// The server of a resource URI (see [`Routes::resource`]); lists again once when unknown.
    async fn resource_route(&self, scope: &Scope, uri: &str) -> Result<String, ErrorData> {
        if let Scope::One(server) = scope {
            return Ok(server.clone());
        }
        if let Some(server) = self.routes.resource(uri) {
            return Ok(server);
        }
        let _ = self.resources(scope).await;
        let _ = self.templates(scope).await;
        self.routes.resource(uri).ok_or_else(|| {
            ErrorData::resource_not_found(
                format!(
                    "no server of this gateway lists the resource {uri}, and no one server's \
                     template matches it (see resources/list and resources/templates/list)"
                ),
                None,
            )
        })
    }

    /// A fingerprint of every server's tools, and one of the running servers (whose prompts
    /// and resources the gateway offers).
    pub async fn fingerprint(&self) -> (u64, u64) {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let tools = match self.manager.server_tools(None).await {
            Ok(listed) => serde_json::to_string(&listed).unwrap_or_default(),
            Err(_) => String::new(),
        };
        let running: Vec<String> = self
            .manager
            .list_servers()
            .into_iter()
            .filter(|s| s.status.state == crate::contract::ServerState::Running)
            .map(|s| s.status.name)
            .collect();
        let hash = |text: String| BuildHasherDefault::<DefaultHasher>::default().hash_one(text);
        (hash(tools), hash(running.join("\0")))
    }

    fn open_sessions(&self) -> Vec<Arc<Session>> {
        let mut sessions = self.sessions.lock();
        sessions.retain(|s| s.peer.get().is_some_and(|p| !p.is_transport_closed()));
        sessions.clone()
    }

    /// Tells every open session whose scope covers `server` (every one for `None`) that `list`
    /// changed: legacy sessions by notification, 2026-07-28 ones on their listen streams.
    pub async fn notify(&self, list: List, server: Option<&str>) {
        let covers = |scope: &Scope| server.is_none_or(|s| scope.covers(s));
        for session in self.open_sessions() {
            let Some(peer) = session.peer.get().filter(|_| covers(&session.scope)) else {
                continue;
            };
            let sent = match list {
                List::Tools => peer.notify_tool_list_changed().await,
                List::Prompts => peer.notify_prompt_list_changed().await,
                List::Resources => peer.notify_resource_list_changed().await,
            };
            if let Err(e) = sent {
                tracing::debug!("gateway: could not send a list_changed: {e}");
            }
        }
        let sinks: Vec<_> = self
            .listeners
            .lock()
            .iter()
            .filter(|(_, scope, _)| covers(scope))
            .map(|(_, _, sink)| sink.clone())
            .collect();
        for sink in sinks {
            // A stream that did not ask for this list refuses it; that is fine.
            let _ = match list {
                List::Tools => sink.notify_tool_list_changed().await,
                List::Prompts => sink.notify_prompt_list_changed().await,
                List::Resources => sink.notify_resource_list_changed().await,
            };
        }
    }

    /// Passes one server notification on to the sessions that follow it.
    async fn pass_on(&self, observed: Observed) {
        match observed {
            Observed::Log {
                server,
                level,
                logger,
                data,
            } => {
                for session in self.open_sessions() {
                    let wanted = *session.log_level.lock();
                    let Some(peer) = session.peer.get().filter(|_| {
                        session.scope.covers(&server)
                            && wanted.is_some_and(|min| severity(level) >= severity(min))
                    }) else {
                        continue;
                    };
                    let mut param = LoggingMessageNotificationParam::new(level, data.clone());
                    param.logger = Some(match &logger {
                        Some(logger) => format!("{server}/{logger}"),
                        None => server.clone(),
                    });
                    let _ = peer.notify_logging_message(param).await;
                }
            }
            Observed::ResourceUpdated { server, uri } => {
                for session in self.open_sessions() {
                    if !session.scope.covers(&server) || !session.subscribed.lock().contains(&uri) {
                        continue;
                    }
                    if let Some(peer) = session.peer.get() {
                        let _ = peer
                            .notify_resource_updated(ResourceUpdatedNotificationParam::new(
                                uri.clone(),
                            ))
                            .await;
                    }
                }
                let sinks: Vec<_> = self
                    .listeners
                    .lock()
                    .iter()
                    .filter(|(_, scope, _)| scope.covers(&server))
                    .map(|(_, _, sink)| sink.clone())
                    .collect();
                for sink in sinks {
                    let _ = sink.notify_resource_updated(uri.clone()).await;
                }
            }
            Observed::ResourcesChanged { server } => {
                self.notify(List::Resources, Some(&server)).await;
            }
            Observed::PromptsChanged { server } => {
                self.notify(List::Prompts, Some(&server)).await;
            }
        }
    }
}

/// The (server, name) an exposed name stands for in `routes`: the name itself in one server's
/// scope; else the route recorded by the last list, or by `relist` when it is not known yet.
async fn routed<T>(
    scope: &Scope,
    name: &str,
    routes: &Mutex<HashMap<String, (String, String)>>,
    relist: impl Future<Output = T>,
) -> Option<(String, String)> {
    if let Scope::One(server) = scope {
        return Some((server.clone(), name.to_string()));
    }
    if let Some(route) = routes.lock().get(name).cloned() {
        return Some(route);
    }
    // Not known: its server may have started since the agent listed (the list records it).
    let _ = relist.await;
    routes.lock().get(name).cloned()
}

/// Follows the servers' notifications for as long as the gateway exists.
async fn follow(shared: Weak<Shared>, mut observed: broadcast::Receiver<Observed>) {
    loop {
        let notification = match observed.recv().await {
            Ok(notification) => notification,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "gateway: fell behind the servers' notifications");
                continue;
            }
            Err(broadcast::error::RecvError::Closed) => break,
        };
        let Some(shared) = shared.upgrade() else {
            break;
        };
        shared.pass_on(notification).await;
    }
}

/// A manager's row as the agent sees it: without the `server` field, `key` set to the name the
/// agent sees, and `_meta["mcp-sidecar/server"]` saying which server it is from.
fn agent_row<T: serde::de::DeserializeOwned>(
    row: &impl serde::Serialize,
    key: &str,
    shown: &str,
) -> Option<T> {
    let mut value = serde_json::to_value(row).ok()?;
    let object = value.as_object_mut()?;
    let server = object.remove("server")?;
    object.insert(key.into(), Value::String(shown.into()));
    object.insert("_meta".into(), serde_json::json!({ SERVER_META: server }));
    serde_json::from_value(value)
        .map_err(|e| tracing::warn!("gateway: a row the agent cannot be sent: {e}"))
        .ok()
}

/// The `_meta` key of a listed prompt, resource or template that names its server.
pub const SERVER_META: &str = "mcp-sidecar/server";

/// One agent session.
pub struct GatewayServer {
    shared: Arc<Shared>,
    scope: Scope,
    session: Arc<Session>,
}

impl GatewayServer {
    pub fn new(shared: Arc<Shared>, scope: Scope) -> Self {
        let session = Arc::new(Session {
            id: shared.next.fetch_add(1, Ordering::Relaxed),
            scope: scope.clone(),
            peer: OnceLock::new(),
            log_level: Mutex::new(None),
            subscribed: Mutex::default(),
        });
        Self {
            shared,
            scope,
            session,
        }
    }

    /// Runs `operation` as this agent's: prompts say who asks, questions go to the agent when
    /// the setting says so, and the agent gets progress (with keep-alives) when it asked.
    async fn as_agent<T, F>(
        &self,
        context: &RequestContext<RoleServer>,
        operation: impl FnOnce(Caller) -> F,
    ) -> Result<T, CallError>
    where
        F: Future<Output = Result<T, CallError>>,
    {
        let questions = self
            .shared
            .manager
            .gateway_settings()
            .unwrap_or_default()
            .questions;
        let open = Arc::new(tokio::sync::watch::Sender::new(0));
        let progress = agent::progress(context, &open);
        let agent = agent::of(context, self.session.id, questions, open);
        let call = operation(Caller {
            agent: Some(agent),
            progress,
        });
        // Dropping the call on the agent's `notifications/cancelled` cancels it downstream.
        tokio::select! {
            outcome = call => outcome,
            _ = context.ct.cancelled() => Err(CallError::Cancelled),
        }
    }
}

/// Serves one agent over a byte stream (the `mcp-sidecar gateway` tunnel) until it goes away.
pub async fn serve_stream<R, W>(shared: Arc<Shared>, scope: Scope, read: R, write: W)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let passing = shared.passing.clone();
    let session = GatewayServer::new(shared, scope);
    match session.serve((read, Tunnel::new(write, passing))).await {
        Ok(running) => {
            let _ = running.waiting().await;
        }
        Err(e) => tracing::debug!("gateway: a stdio session ended before it started: {e}"),
    }
}

/// A [`CallError`] as the agent gets it: the server's own JSON-RPC error as that error, an
/// unknown tool as invalid params, anything else (a crash mid-call, a timeout, a question the
/// person declined) as a tool result with `isError`, which agents show to the model.
fn to_agent(error: CallError) -> Result<CallToolResponse, ErrorData> {
    match error {
        CallError::Server { .. } | CallError::UnknownServer(_) => Err(to_error(error)),
        other => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
                "mcp-sidecar gateway: {other}"
            ))]);
            result.structured_content = None;
            Ok(CallToolResponse::Complete(result))
        }
    }
}

/// A [`CallError`] of a request other than `tools/call`: the server's own JSON-RPC error as
/// that error, an unknown server as invalid params, anything else as an internal error that
/// says what happened.
fn to_error(error: CallError) -> ErrorData {
    match error {
        CallError::Server {
            code,
            message,
            data,
            server,
        } => ErrorData::new(
            ErrorCode(code),
            format!("server \"{server}\": {message}"),
            data,
        ),
        CallError::UnknownServer(_) => ErrorData::invalid_params(error.to_string(), None),
        other => ErrorData::internal_error(format!("mcp-sidecar gateway: {other}"), None),
    }
}

/// A server's (finished) result as the agent's result type. A legacy server's result has no
/// `resultType`; 2026-07-28 agents need it.
fn read_back<T: serde::de::DeserializeOwned>(
    server: &str,
    mut result: Value,
) -> Result<T, ErrorData> {
    if let Some(object) = result.as_object_mut() {
        object
            .entry("resultType")
            .or_insert_with(|| Value::String("complete".into()));
    }
    serde_json::from_value(result).map_err(|e| {
        ErrorData::internal_error(
            format!("server \"{server}\" answered a result the gateway cannot read: {e}"),
            None::<Value>,
        )
    })
}

impl ServerHandler for GatewayServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_prompts()
            .enable_resources()
            .enable_completions()
            .enable_logging()
            .build();
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = Some(true);
        }
        if let Some(prompts) = capabilities.prompts.as_mut() {
            prompts.list_changed = Some(true);
        }
        if let Some(resources) = capabilities.resources.as_mut() {
            resources.list_changed = Some(true);
            resources.subscribe = Some(true);
        }
        let instructions = match &self.scope {
            Scope::All => "The tools and prompts of the MCP servers of this editor's workspace, \
                 served by mcp-sidecar: each is named <server>__<name>; resources keep their \
                 URIs. Questions a server asks are answered by the person in the editor."
                .to_string(),
            Scope::One(server) => format!(
                "The tools, prompts and resources of the MCP server \"{server}\" of this \
                 editor's workspace, served by mcp-sidecar. Questions it asks are answered by \
                 the person in the editor."
            ),
        };
        ServerConfig::new(capabilities)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
            .with_server_info(
                Implementation::new("mcp-sidecar-gateway", env!("CARGO_PKG_VERSION"))
                    .with_title("mcp-sidecar gateway"),
            )
            .with_instructions(instructions)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        match self.shared.tools(&self.scope).await {
            Ok(tools) => Ok(ListToolsResult::with_all_items(tools)),
            Err(e) => Err(ErrorData::internal_error(e.to_string(), None)),
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some((server, tool)) = self.shared.route(&self.scope, &request.name).await else {
            return Err(ErrorData::invalid_params(
                format!("no tool named \"{}\" (see tools/list)", request.name),
                None,
            ));
        };
        let manager = &self.shared.manager;
        let outcome = self
            .as_agent(&context, |caller| {
                manager.call_tool(
                    &server,
                    &tool,
                    request.arguments.map(ToolArguments::Object),
                    caller,
                )
            })
            .await;
        let passing = &self.shared.passing;
        match outcome {
            Ok(reply) => read_back(
                &server,
                pass::through(reply, Kind::Tool, &context, passing)?,
            )
            .map(CallToolResponse::Complete),
            Err(e) => to_agent(e),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let prompts = self.shared.prompts(&self.scope).await.map_err(to_error)?;
        Ok(ListPromptsResult::with_all_items(prompts))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let Some((server, prompt)) = self.shared.prompt_route(&self.scope, &request.name).await
        else {
            return Err(ErrorData::invalid_params(
                format!("no prompt named \"{}\" (see prompts/list)", request.name),
                None,
            ));
        };
        let manager = &self.shared.manager;
        let result = self
            .as_agent(&context, |caller| {
                manager.get_prompt(&server, &prompt, request.arguments, caller)
            })
            .await
            .map_err(to_error)?;
        let result = pass::through(result, Kind::Prompt, &context, &self.shared.passing)?;
        read_back::<GetPromptResult>(&server, result).map(GetPromptResponse::Complete)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let resources = self.shared.resources(&self.scope).await.map_err(to_error)?;
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = self.shared.templates(&self.scope).await.map_err(to_error)?;
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let server = self
            .shared
            .resource_route(&self.scope, &request.uri)
            .await?;
        let manager = &self.shared.manager;
        let result = self
            .as_agent(&context, |caller| {
                manager.read_resource(&server, &request.uri, caller)
            })
            .await
            .map_err(to_error)?;
        let result = pass::through(result, Kind::Resource, &context, &self.shared.passing)?;
        read_back::<ReadResourceResult>(&server, result).map(ReadResourceResponse::Complete)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let mut params = serde_json::to_value(&request)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
        if let Some(object) = params.as_object_mut() {
            object.remove("_meta");
        }
        let reference = &mut params["ref"];
        let server = match &request.r#ref {
            Reference::Prompt(prompt) => {
                let Some((server, name)) =
                    self.shared.prompt_route(&self.scope, &prompt.name).await
                else {
                    return Err(ErrorData::invalid_params(
                        format!("no prompt named \"{}\" (see prompts/list)", prompt.name),
                        None,
                    ));
                };
                reference["name"] = Value::String(name);
                server
            }
            Reference::Resource(resource) => {
                self.shared
                    .resource_route(&self.scope, &resource.uri)
                    .await?
            }
            _ => {
                return Err(ErrorData::invalid_params(
                    "a completion reference of an unknown type",
                    None,
                ));
            }
        };
        let mut result = self
            .shared
            .manager
            .complete(&server, params)
            .await
            .map_err(to_error)?;
        pass::clean(&mut result);
        read_back(&server, result)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.session.log_level.lock() = Some(request.level);
        Ok(())
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let server = self
            .shared
            .resource_route(&self.scope, &request.uri)
            .await?;
        self.shared
            .manager
            .subscribe(&server, &request.uri, true)
            .await
            .map_err(to_error)?;
        self.session.subscribed.lock().insert(request.uri);
        Ok(())
    }

    /// Stops passing the resource's updates on to this agent. The server's subscription stays:
    /// the editor or another agent may follow the same resource.
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.session.subscribed.lock().remove(&request.uri);
        Ok(())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    /// A 2026-07-28 agent's `subscriptions/listen`: the list changes it asked for, and the
    /// updates of the resources it names (subscribed downstream), until it cancels.
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        for uri in context.accepted().resource_subscriptions.iter().flatten() {
            let subscribed = match self.shared.resource_route(&self.scope, uri).await {
                Ok(server) => self
                    .shared
                    .manager
                    .subscribe(&server, uri, true)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.message.to_string()),
            };
            if let Err(e) = subscribed {
                tracing::info!(
                    uri,
                    "gateway: a listen stream's resource is not followed: {e}"
                );
            }
        }
        let id = self.shared.next.fetch_add(1, Ordering::Relaxed);
        self.shared
            .listeners
            .lock()
            .push((id, self.scope.clone(), context.sink().clone()));
        context.cancelled().await;
        self.shared.listeners.lock().retain(|(i, _, _)| *i != id);
        Ok(())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let agent = context
            .peer
            .peer_info()
            .map(|info| agent::display_name(Some(&info.client_info.name)));
        tracing::info!(?agent, scope = ?self.scope, "gateway: an agent connected");
        let _ = self.session.peer.set(context.peer);
        self.shared.sessions.lock().push(self.session.clone());
    }
}
