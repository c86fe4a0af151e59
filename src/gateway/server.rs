//! The MCP server the agents talk to, on rmcp's server side: one handler per agent session, all
//! over the one [`Manager`] the editor's face uses (the same running servers, roots and flows;
//! a question a server asks during an agent's call is answered in the editor, like one asked
//! during the editor's own call).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
        Implementation, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
        ProtocolVersion, ResultType, ServerCapabilities, ServerConfig, Tool,
    },
    service::{NotificationContext, Peer, RequestContext},
};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use super::names;
use crate::contract::CallError;
use crate::mcp::{Manager, ProgressFn, ProgressUpdate};

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
    /// The exposed name of every tool listed so far → (server, tool).
    routes: Mutex<HashMap<String, (String, String)>>,
    /// Legacy sessions, told `notifications/tools/list_changed`.
    peers: Mutex<Vec<Peer<RoleServer>>>,
}

impl Shared {
    pub fn new(manager: Arc<Manager>) -> Arc<Shared> {
        Arc::new(Shared {
            manager,
            routes: Mutex::default(),
            peers: Mutex::default(),
        })
    }

    /// The tools `scope` offers, each under the name the agent sees; remembers the routes.
    async fn tools(&self, scope: &Scope) -> Result<Vec<Tool>, CallError> {
        let server = match scope {
            Scope::All => None,
            Scope::One(name) => Some(name.as_str()),
        };
        let listed = self.manager.server_tools(server).await?;
        let mut out = Vec::new();
        let mut routes = self.routes.lock();
        let mut seen = std::collections::HashSet::new();
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
        if let Scope::One(server) = scope {
            return Some((server.clone(), name.to_string()));
        }
        if let Some(route) = self.routes.lock().get(name).cloned() {
            return Some(route);
        }
        let _ = self.tools(scope).await;
        self.routes.lock().get(name).cloned()
    }

    /// A fingerprint of what every scope lists now: the exposed names and definitions.
    pub async fn fingerprint(&self) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let text = match self.manager.server_tools(None).await {
            Ok(listed) => serde_json::to_string(&listed).unwrap_or_default(),
            Err(_) => String::new(),
        };
        BuildHasherDefault::<DefaultHasher>::default().hash_one(text)
    }

    /// Tells every open legacy session that the tool list changed (and forgets closed ones).
    pub async fn notify_tools_changed(&self) {
        let peers: Vec<_> = {
            let mut peers = self.peers.lock();
            peers.retain(|p| !p.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            if let Err(e) = peer.notify_tool_list_changed().await {
                tracing::debug!("gateway: could not send tools/list_changed: {e}");
            }
        }
    }
}

/// One agent session.
pub struct GatewayServer {
    shared: Arc<Shared>,
    scope: Scope,
}

impl GatewayServer {
    pub fn new(shared: Arc<Shared>, scope: Scope) -> Self {
        Self { shared, scope }
    }
}

/// Serves one agent over a byte stream (the `mcp-sidecar gateway` tunnel) until it goes away.
pub async fn serve_stream<R, W>(shared: Arc<Shared>, scope: Scope, read: R, write: W)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    match GatewayServer::new(shared, scope).serve((read, write)).await {
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
        CallError::Server {
            code,
            message,
            data,
            server,
        } => Err(ErrorData::new(
            ErrorCode(code),
            format!("server \"{server}\": {message}"),
            data,
        )),
        CallError::UnknownServer(_) => Err(ErrorData::invalid_params(error.to_string(), None)),
        other => {
            let mut result = CallToolResult::error(vec![ContentBlock::text(format!(
                "mcp-sidecar gateway: {other}"
            ))]);
            result.structured_content = None;
            Ok(CallToolResponse::Complete(result))
        }
    }
}

/// Forwards the downstream server's progress to the agent, in order, when it asked for it.
fn progress_to(context: &RequestContext<RoleServer>) -> Option<ProgressFn> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ProgressUpdate>();
    tokio::spawn(async move {
        while let Some(update) = rx.recv().await {
            let mut param = ProgressNotificationParam::new(token.clone(), update.progress);
            param.total = update.total;
            param.message = update.message;
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    Some(Arc::new(move |update| {
        let _ = tx.send(update);
    }))
}

impl ServerHandler for GatewayServer {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        if let Some(tools) = capabilities.tools.as_mut() {
            tools.list_changed = Some(true);
        }
        let instructions = match &self.scope {
            Scope::All => "The tools of the MCP servers of this editor's workspace, served by \
                 mcp-sidecar: each is named <server>__<tool>. Questions a server asks are \
                 answered by the person in the editor."
                .to_string(),
            Scope::One(server) => format!(
                "The tools of the MCP server \"{server}\" of this editor's workspace, served by \
                 mcp-sidecar. Questions it asks are answered by the person in the editor."
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
        let progress = progress_to(&context);
        let call = self
            .shared
            .manager
            .call_tool(&server, &tool, request.arguments, progress);
        // Dropping the call on the agent's `notifications/cancelled` cancels it downstream.
        let outcome = tokio::select! {
            outcome = call => outcome,
            _ = context.ct.cancelled() => Err(CallError::Cancelled),
        };
        match outcome {
            Ok(result) => serde_json::from_value::<CallToolResult>(result)
                .map(|mut result| {
                    // A legacy server's result has no `resultType`; 2026-07-28 agents need it.
                    result.result_type = Some(ResultType::COMPLETE);
                    CallToolResponse::Complete(result)
                })
                .map_err(|e| {
                    ErrorData::internal_error(
                        format!(
                            "server \"{server}\" answered a result the gateway cannot read: {e}"
                        ),
                        None::<Value>,
                    )
                }),
            Err(e) => to_agent(e),
        }
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let agent = context
            .peer
            .peer_info()
            .map(|info| info.client_info.name.clone());
        tracing::info!(?agent, scope = ?self.scope, "gateway: an agent connected");
        self.shared.peers.lock().push(context.peer);
    }
}
