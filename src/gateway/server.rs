#![allow(deprecated)] // logging and sampling: deprecated by SEP-2577, still in the protocol
//! The MCP server the agents talk to, on rmcp's server side: one handler per agent session, all
//! over the one [`Manager`] the editor's face uses (the same running servers, roots and flows;
//! a question a server asks during an agent's call is answered in the editor, like one asked
//! during the editor's own call).

use std::borrow::Cow;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use rmcp::{
    ErrorData, RoleServer, ServerHandler, ServiceExt,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams,
        CompleteRequestParams, CompleteResult, ContentBlock, ErrorCode, GetPromptRequestParams,
        GetPromptResponse, GetPromptResult, GetSkillRequestParams, GetSkillResult, GetTaskParams,
        GetTaskResult, Implementation, ListPromptsResult, ListResourceTemplatesResult,
        ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams,
        ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult,
        Reference, ServerCapabilities, ServerConfig, SetLevelRequestParams, SubscribeRequestParams,
        SubscriptionFilter, UnsubscribeRequestParams, UpdateTaskParams,
    },
    service::{NotificationContext, RequestContext, SubscriptionContext},
};
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};

use super::agent;
use super::pass::{self, Kind, Tunnel};
use crate::contract::CallError;
use crate::mcp::{Caller, Reply, Tasks, ToolArguments};
use crate::views::By;

use super::shared::{self, Scope, Session, Shared};
use super::tasks::Owner;

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
        self.as_agent_with(context, Tasks::Await, operation).await
    }

    /// [`Self::as_agent`], with what a task handle becomes.
    async fn as_agent_with<T, F>(
        &self,
        context: &RequestContext<RoleServer>,
        tasks: Tasks,
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
            tasks,
            ..Caller::default()
        });
        // Dropping the call on the agent's `notifications/cancelled` cancels it downstream.
        tokio::select! {
            outcome = call => outcome,
            _ = context.ct.cancelled() => Err(CallError::Cancelled),
        }
    }

    /// Who may reach the tasks this request starts: this session, or, for a request without
    /// one (2026-07-28 over HTTP: each request stands alone), any such request.
    fn owner(&self, context: &RequestContext<RoleServer>) -> Owner {
        let sessionless = context
            .extensions
            .get::<http::request::Parts>()
            .is_some_and(|parts| !parts.headers.contains_key(SESSION_HEADER));
        if sessionless {
            Owner::Sessionless
        } else {
            Owner::Session(self.session.id)
        }
    }
}

/// The header of a Streamable HTTP session (legacy protocol versions).
const SESSION_HEADER: &str = "mcp-session-id";

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
            .enable_tasks()
            .enable_skills()
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
        let arguments = || {
            request
                .arguments
                .clone()
                .map(Value::Object)
                .unwrap_or_default()
        };
        let view = (self.shared.apps)
            .pending(&server, &tool, arguments, By::Agent)
            .await;
        // An agent that declared the Tasks extension gets the handle of a task; others wait.
        let tasks = if context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks())
        {
            Tasks::Handle
        } else {
            Tasks::Await
        };
        let outcome = self
            .as_agent_with(&context, tasks, |caller| {
                manager.call_tool(
                    &server,
                    &tool,
                    request.arguments.map(ToolArguments::Object),
                    caller,
                )
            })
            .await;
        let passing = &self.shared.passing;
        if let Ok(Reply::Task(handle)) = &outcome {
            let info = manager
                .task(&handle.server, &handle.task_id)
                .ok_or_else(|| {
                    ErrorData::internal_error("mcp-sidecar gateway: the task was forgotten", None)
                })?;
            let owner = self.owner(&context);
            let created = self.shared.tasks.start(owner, &info, &handle.created);
            return Ok(CallToolResponse::Task(created));
        }
        if let (Some(view), Ok(reply)) = (view, &outcome) {
            view.done(reply);
        }
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

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let owner = self.owner(&context);
        self.shared
            .tasks
            .get(&self.shared.manager, owner, &self.scope, &request.task_id)
    }

    /// The task's questions are answered in the editor: there is never anything for the agent
    /// to answer.
    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = self.owner(&context);
        self.shared
            .tasks
            .update(owner, &self.scope, &request.task_id)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let owner = self.owner(&context);
        self.shared
            .tasks
            .cancel(&self.shared.manager, owner, &self.scope, &request.task_id)
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let skills = self.shared.skills(&self.scope).await.map_err(to_error)?;
        Ok(ListSkillsResult::with_all_items(skills))
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let server = self.shared.skill_route(&self.scope, &request.uri).await?;
        let entry = self
            .shared
            .manager
            .skill_entry(&server, &request.uri)
            .await
            .map_err(to_error)?;
        let skill = shared::agent_skill(&server, entry).ok_or_else(|| {
            ErrorData::internal_error(
                format!("server \"{server}\" answered skills/get with a skill the gateway cannot pass on"),
                None,
            )
        })?;
        Ok(GetSkillResult::new(skill))
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
