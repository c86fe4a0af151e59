//! The built-in demo MCP server (`mcp-sidecar demo-server`).
//!
//! A real MCP server, built on `rmcp`, that speaks both protocol eras so the sidecar (and the two
//! editors) can be exercised end to end without a third-party server:
//!
//! - **legacy** (`initialize`, 2024-11-05 … 2025-11-25): client features are real server→client
//!   JSON-RPC requests (`roots/list`, `elicitation/create`, `sampling/createMessage`);
//! - **2026-07-28** (`server/discover`, per-request `_meta`): the same questions come back as an
//!   `InputRequiredResult` and the client retries with `inputResponses` + `requestState` (MRTR).
//!
//! Every tool asks the client through one helper (`ask::Call::ask`) that picks the era's
//! mechanism, so the tools themselves are era-agnostic. `tools.rs` lists the tools; `task.rs` runs
//! `slow_task`, as a task (the Tasks extension) when the client declared it; `skills.rs` serves
//! the skills (the Skills extension) built in from `fixtures/skills-demo/`; `gate.rs` refuses the
//! lifecycle request of the era a `--era` excludes; `state.rs` seals `requestState`.
//!
//! stdout carries the protocol; logs go to stderr only.

mod ask;
mod gate;
mod skills;
mod state;
mod task;
mod tools;

#[cfg(test)]
mod tests;

use std::{
    borrow::Cow,
    fmt,
    io::IsTerminal,
    str::FromStr,
    sync::atomic::{AtomicU64, Ordering},
};

use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CancelTaskParams, GetSkillRequestParams,
        GetSkillResult, GetTaskParams, GetTaskResult, Implementation, ListSkillsResult,
        ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
        ReadResourceResponse, ReadResourceResult, ResourceContents, ServerCapabilities,
        ServerConfig, UpdateTaskParams,
    },
    service::{NotificationContext, QuitReason, RequestContext, ServerInitializeError},
    task_manager::TaskManager,
    transport::IntoTransport,
};

use self::{ask::Call, skills::Catalog, state::StateCodec};

/// Which protocol era(s) the demo server accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Era {
    /// Whatever the client uses: `initialize` or `server/discover` + per-request `_meta`.
    #[default]
    Both,
    /// Only the `initialize` handshake; `server/discover` is answered with -32601.
    Legacy,
    /// Only 2026-07-28; `initialize` is answered with -32022 (unsupported protocol version).
    Modern,
}

impl Era {
    /// The protocol versions served in this era.
    fn supported_versions(self) -> &'static [ProtocolVersion] {
        const MODERN: &[ProtocolVersion] = &[ProtocolVersion::V_2026_07_28];
        match self {
            Era::Both => ProtocolVersion::KNOWN_VERSIONS,
            Era::Legacy => ProtocolVersion::known_up_to(&ProtocolVersion::LATEST_WITH_INITIALIZE),
            Era::Modern => MODERN,
        }
    }
}

impl fmt::Display for Era {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Era::Both => "both",
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        })
    }
}

impl FromStr for Era {
    /// A message naming the accepted values (the CLI prints it as is).
    type Err = String;

    fn from_str(value: &str) -> Result<Self, Self::Err> {
        match value {
            "both" => Ok(Era::Both),
            "legacy" => Ok(Era::Legacy),
            "modern" => Ok(Era::Modern),
            other => Err(format!(
                "unknown era {other:?}: expected \"both\", \"legacy\" or \"modern\""
            )),
        }
    }
}

/// Serves the demo server on this process's stdin/stdout until EOF.
///
/// Installs a stderr-only `tracing` subscriber unless the caller already installed one.
pub async fn run_stdio(era: Era) -> anyhow::Result<()> {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| "info,rmcp=warn".into());
    let _already_installed = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // The sidecar that runs it puts its own time, level and server name before each line.
        .without_time()
        .with_target(false)
        .with_env_filter(filter)
        .try_init();
    serve(crate::lsp::process_stdio(), era).await
}

/// Serves the demo server over any rmcp server transport until the peer goes away.
pub async fn serve<T, E, A>(transport: T, era: Era) -> anyhow::Result<()>
where
    T: IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    tracing::info!(%era, "demo MCP server starting");
    let transport = gate::EraGate::new(transport.into_transport(), era);
    let server = DemoServer::new(era);
    let tasks = server.tasks.clone();
    let served = async {
        let running = match server.serve(transport).await {
            Ok(running) => running,
            Err(ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("demo MCP server: client closed the connection before starting");
                return Ok(());
            }
            Err(error) => return Err(error.into()),
        };
        match running.waiting().await? {
            QuitReason::JoinError(error) => Err(error.into()),
            reason => {
                tracing::info!(?reason, "demo MCP server stopped");
                Ok(())
            }
        }
    }
    .await;
    // The tasks still running (e.g. `forever`) end with the connection.
    tasks.shutdown();
    served
}

/// The `rmcp` handler. One instance serves one connection (one process on stdio).
struct DemoServer {
    era: Era,
    states: StateCodec,
    /// `notifications/roots/list_changed` received so far (legacy only).
    roots_list_changed: AtomicU64,
    /// `slow_task`'s tasks (`tasks/get`, `tasks/update`, `tasks/cancel`).
    tasks: TaskManager,
    skills: Catalog,
}

impl DemoServer {
    fn new(era: Era) -> Self {
        Self {
            era,
            states: StateCodec::new(),
            roots_list_changed: AtomicU64::new(0),
            tasks: TaskManager::new(),
            skills: Catalog::new(),
        }
    }
}

impl ServerHandler for DemoServer {
    // Logging is deprecated by SEP-2577 but still part of the protocol: count_down uses it.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_logging()
                .enable_tasks()
                .enable_skills()
                .build(),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
        .with_server_info(
            Implementation::new("mcp-sidecar-demo", env!("CARGO_PKG_VERSION"))
                .with_title("mcp-sidecar demo server"),
        )
        .with_instructions(
            "Demo server for the MCP client features: book_trip (form elicitation), \
                 login (URL elicitation), analyze_flights (sampling), list_roots (roots), \
                 count_down (progress and logging), slow_task (a task when the client declares \
                 the tasks extension); add and echo need nothing from the client. Skills: \
                 flight-report and trip-checklist.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(self.era.supported_versions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = Call::new(&request, &context, &self.states)?;
        if call.tool() == task::NAME {
            return task::call(&call, &self.tasks).await;
        }
        let roots_list_changed = self.roots_list_changed.load(Ordering::Relaxed);
        ask::respond(tools::run(&call, roots_list_changed).await)
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let UpdateTaskParams {
            task_id,
            input_responses,
            ..
        } = request;
        let keys: Vec<&String> = input_responses.keys().collect();
        tracing::info!(task = task_id, ?keys, "tasks/update");
        self.tasks.update_task(&task_id, input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tracing::info!(task = request.task_id, "tasks/cancel");
        self.tasks.cancel_task(&request.task_id)
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(ListSkillsResult::with_all_items(self.skills.list()))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        Ok(GetSkillResult::new(self.skills.get(&request.uri)?))
    }

    /// The skills' files, and the clock's view (not listed: a view, not a document to open).
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        if Catalog::owns(&request.uri) {
            let contents = self.skills.read(&request.uri)?;
            return Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
                vec![contents],
            )));
        }
        if request.uri != tools::CLOCK_VIEW {
            return Err(ErrorData::resource_not_found(
                format!("no resource {:?}", request.uri),
                None,
            ));
        }
        Ok(ReadResourceResponse::Complete(ReadResourceResult::new(
            vec![ResourceContents::TextResourceContents {
                uri: tools::CLOCK_VIEW.into(),
                mime_type: Some(crate::apps::MIME_TYPE.into()),
                text: tools::CLOCK_HTML.into(),
                meta: None,
            }],
        )))
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        let count = self.roots_list_changed.fetch_add(1, Ordering::Relaxed) + 1;
        tracing::info!(count, "client sent notifications/roots/list_changed");
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let version = context
            .peer
            .peer_info()
            .map(|info| info.protocol_version.clone());
        tracing::info!(?version, "legacy client initialized");
    }
}
