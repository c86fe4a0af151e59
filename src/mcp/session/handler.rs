//! The one place that answers a server's questions, whether they arrive as legacy
//! server→client requests (through rmcp's `ClientHandler`) or as 2026-07-28 `inputRequests`
//! entries (through [`Handler::answer_input`]). Also receives the server's notifications.

use std::sync::Arc;

use rmcp::ClientHandler;
use rmcp::model::CustomNotification;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorData,
    FormElicitationCapability, Implementation, InputRequest, ListRootsResult, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion, RequestMetaObject,
    Root as McpRoot, RootsCapabilities, SamplingCapability, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::Value;

use crate::config::RootsFilter;
use crate::elicitation::{self, Policy};
use crate::guard;
use crate::mcp::flood;
use crate::mcp::host::{CLIENT_NAME, progress_key};
use crate::mcp::host::{Event, Host, LogLevel, Observed, ProgressUpdate};
use crate::mcp::requester::{Asker, Calls};
use crate::mcp::wire::raw;
use crate::sampling;

/// Invalidated when the server says its tool list changed.
pub type ToolCache = parking_lot::Mutex<Option<Arc<Vec<rmcp::model::Tool>>>>;

/// A server's resource and prompt lists, each dropped when the server says it changed.
#[derive(Default)]
pub struct Lists {
    pub resources: parking_lot::Mutex<Option<Arc<Vec<rmcp::model::Resource>>>>,
    pub templates: parking_lot::Mutex<Option<Arc<Vec<rmcp::model::ResourceTemplate>>>>,
    pub prompts: parking_lot::Mutex<Option<Arc<Vec<rmcp::model::Prompt>>>>,
}

pub struct Handler {
    pub server: Arc<str>,
    pub roots: RootsFilter,
    pub host: Arc<Host>,
    pub tools: Arc<ToolCache>,
    pub protocol_version: ProtocolVersion,
    pub elicitation: Policy,
    pub sampling: sampling::Policy,
    pub refresh: Arc<flood::ToolsRefresh>,
    pub lists: Arc<Lists>,
    /// The calls open on this connection, with who made each (see [`crate::mcp::requester`]).
    pub calls: Arc<Calls>,
}

/// The answer to one input request, or the reason the whole call must end.
pub type Answer = Result<Value, String>;

impl Handler {
    fn roots_declared(&self) -> bool {
        self.roots != RootsFilter::None
    }

    /// Sampling is declared when a provider is available: a person with drafts (`manual`
    /// counts), or a configured model.
    fn sampling_declared(&self) -> bool {
        self.sampling != sampling::Policy::Never
            && (self.host.sampling_settings().provider != sampling::ProviderKind::Manual
                || self
                    .host
                    .ui()
                    .is_some_and(|ui| ui.capabilities().edit_draft))
    }

    /// Elicitation is declared when someone can answer: an editor with input boxes and
    /// quick-picks, or a policy that answers without asking.
    fn elicitation_declared(&self) -> bool {
        self.elicitation != Policy::Ask
            || self
                .host
                .ui()
                .is_some_and(|ui| ui.capabilities().input_box && ui.capabilities().quick_pick)
    }

    pub fn current_roots(&self) -> ListRootsResult {
        let roots = crate::roots::for_server(&self.host.roots(), &self.roots);
        ListRootsResult::new(
            roots
                .into_iter()
                .map(|r| McpRoot::new(r.uri).with_name(r.name))
                .collect(),
        )
    }

    /// Answers one 2026-07-28 input request. Roots are answered at once; questions this sidecar
    /// has not declared are refused the way the spec asks (no retry). A panic while answering
    /// (a bug) ends the call with an error naming the server, not the sidecar.
    pub async fn answer_input(&self, key: &str, request: InputRequest, asker: &Asker) -> Answer {
        guard::catch(self.answer_input_inner(key, request, asker))
            .await
            .unwrap_or_else(|panic| Err(self.panicked(&format!("input request \"{key}\""), &panic)))
    }

    /// A panic while answering the server (a bug in the sidecar): one log line naming the
    /// server, in the sidecar's log and the editor's; returns the error that replaces the answer.
    fn panicked(&self, what: &str, panic: &guard::Panic) -> String {
        let message = format!("answering {what} from \"{}\" failed: {panic}", self.server);
        tracing::error!(server = %self.server, "{message}");
        self.host.emit(Event::Log {
            level: LogLevel::Error,
            message: message.clone(),
        });
        message
    }

    async fn answer_input_inner(&self, key: &str, request: InputRequest, asker: &Asker) -> Answer {
        match request {
            InputRequest::ListRoots(_) => {
                if !self.roots_declared() {
                    return Err(format!(
                        "the server asked for roots (\"{key}\"), which are turned off for it"
                    ));
                }
                serde_json::to_value(self.current_roots()).map_err(|e| e.to_string())
            }
            InputRequest::Elicitation(request) => {
                // A question that cannot be shown is declined (2026-07-28 has no error channel).
                let meta = request.extensions.get::<RequestMetaObject>();
                let result = self
                    .elicit(request.params, meta, asker)
                    .await
                    .unwrap_or_else(|_| ElicitResult::new(ElicitationAction::Decline));
                serde_json::to_value(result).map_err(|e| e.to_string())
            }
            InputRequest::CreateMessage(request) => {
                if !self.sampling_declared() {
                    return Err(format!(
                        "the server asked for a model answer (\"{key}\"), which is not offered to it"
                    ));
                }
                let meta = request.extensions.get::<RequestMetaObject>();
                let raw = raw::sampling_params(meta, &request.params);
                // A refusal ends the call: 2026-07-28 has no way to say no but not retrying.
                self.sample(raw, &request.params, asker)
                    .await
                    .map_err(|refusal| {
                        format!(
                            "{} asked for a model answer and it was refused: {refusal}",
                            self.server
                        )
                    })
            }
            _ => Err(format!(
                "the server sent an input request of an unknown kind (\"{key}\")"
            )),
        }
    }

    /// `-32042` on a legacy call: the browser steps the error names, through the retry flow
    /// (`elicitation::retry`). True = retry the call.
    pub async fn url_required(&self, data: &Value, asker: &Asker) -> bool {
        let Some(ui) = self.host.ui() else {
            return false;
        };
        let ui = asker.ui(ui.as_ref());
        let _answering = asker.person_answering();
        elicitation::retry::after_browser(
            &ui,
            &self.server,
            &browser_steps(data),
            |request| self.ask(request, asker),
            |ids| self.host.any_completion(&self.server, ids),
        )
        .await
    }

    /// One sampling exchange: by the agent that asks, when it answers questions itself; else
    /// through the drafts and the configured provider.
    async fn sample(
        &self,
        raw: Value,
        params: &CreateMessageRequestParams,
        asker: &Asker,
    ) -> Result<Value, sampling::Refusal> {
        if let Some(agent) = &asker.agent
            && let Some(answers) = agent.answers.as_ref().filter(|a| a.samples())
        {
            tracing::info!(server = %self.server, agent = %agent.name, "a sampling request goes to the agent");
            // The agent's time answering is not the server's, as a person's is not.
            let _busy = self.host.clock(&self.server).busy();
            let result = answers.sample(params.clone()).await.map_err(|e| {
                sampling::Refusal::Provider(format!("the agent {} did not answer: {e}", agent.name))
            })?;
            return serde_json::to_value(result)
                .map_err(|e| sampling::Refusal::Invalid(e.to_string()));
        }
        let Some(ui) = self.host.ui() else {
            return Err(sampling::Refusal::Person("no editor is attached".into()));
        };
        let _busy = self.host.clock(&self.server).busy();
        let _answering = asker.person_answering();
        let applied = self.host.sampling();
        let provider = applied.provider(ui.as_ref());
        let ui = asker.ui(ui.as_ref());
        let audit_log = sampling::audit::log_path();
        let exchange = sampling::Exchange {
            ui: &ui,
            provider: provider.as_ref(),
            server: &self.server,
            policy: self.sampling,
            settings: &applied.settings,
            sessions: &self.host.sampling_sessions,
            audit_log: audit_log.as_deref(),
        };
        let result = exchange.run(&raw).await?;
        serde_json::to_value(result).map_err(|e| sampling::Refusal::Invalid(e.to_string()))
    }

    /// Asks the person (or applies the policy). `Err` when the form cannot be shown.
    async fn elicit(
        &self,
        params: ElicitRequestParams,
        context_meta: Option<&RequestMetaObject>,
        asker: &Asker,
    ) -> Result<ElicitResult, elicitation::Unsupported> {
        let url = matches!(params, ElicitRequestParams::UrlElicitationParams { .. });
        if self.elicitation == Policy::Ask
            && let Some(agent) = &asker.agent
            && let Some(answers) = agent.answers.as_ref().filter(|a| a.elicits(url))
        {
            tracing::info!(server = %self.server, agent = %agent.name, "a question goes to the agent");
            let _busy = self.host.clock(&self.server).busy();
            return Ok(answers.elicit(params).await.unwrap_or_else(|e| {
                tracing::info!(server = %self.server, agent = %agent.name, "the agent did not answer the question ({e}); cancelled");
                ElicitResult::new(ElicitationAction::Cancel)
            }));
        }
        let request = match params {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                meta,
            } => {
                let schema = raw::form_schema(&[meta.as_ref(), context_meta], &requested_schema);
                elicitation::Request::Form { message, schema }
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                elicitation::Request::Url { message, url }
            }
            _ => {
                return Err(elicitation::Unsupported {
                    property: None,
                    message: "unknown elicitation mode".into(),
                });
            }
        };
        Ok(match self.ask(request, asker).await? {
            elicitation::Outcome::Accept(content) => {
                let result = ElicitResult::new(ElicitationAction::Accept);
                match content {
                    Some(c) => result.with_content(Value::Object(c)),
                    None => result,
                }
            }
            elicitation::Outcome::Decline => ElicitResult::new(ElicitationAction::Decline),
            elicitation::Outcome::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    /// One question through the elicitation feature, under this server's policy and limits,
    /// with the person's time on its clock. No editor: cancelled.
    async fn ask(
        &self,
        request: elicitation::Request,
        asker: &Asker,
    ) -> Result<elicitation::Outcome, elicitation::Unsupported> {
        guard::inject(|| format!("elicitation:{}", self.server));
        let Some(ui) = self.host.ui() else {
            return Ok(elicitation::Outcome::Cancel);
        };
        let _busy = self.host.clock(&self.server).busy();
        let _answering = asker.person_answering();
        let settings = self.host.elicitation_settings();
        let ui = asker.ui(ui.as_ref());
        let outcome = elicitation::elicit(
            &ui,
            &self.server,
            self.elicitation,
            &settings,
            &self.host.limiter,
            &request,
        )
        .await?;
        tracing::info!(server = %self.server, action = outcome.action(), "answered an elicitation");
        Ok(outcome)
    }
}

/// The browser steps of a `-32042` error's `data.elicitations` (entries without a URL or a
/// message are skipped).
fn browser_steps(data: &Value) -> Vec<elicitation::retry::BrowserStep> {
    let list = data.get("elicitations").and_then(Value::as_array);
    let text = |entry: &Value, key| entry.get(key).and_then(Value::as_str).map(str::to_string);
    list.into_iter()
        .flatten()
        .filter_map(|entry| {
            Some(elicitation::retry::BrowserStep {
                url: text(entry, "url")?,
                message: text(entry, "message")?,
                id: text(entry, "elicitationId").unwrap_or_default(),
            })
        })
        .collect()
}

/// The capabilities declared to a server, in both eras.
pub fn capabilities(roots: bool, elicitation: bool, sampling: bool) -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    // MCP Apps: the sidecar hosts views, in both eras.
    let mut ui = rmcp::model::JsonObject::new();
    ui.insert(
        "mimeTypes".into(),
        serde_json::json!([crate::apps::MIME_TYPE]),
    );
    caps.extensions = Some(
        [
            (crate::apps::EXTENSION.to_string(), ui),
            // Tasks (SEP-2663): a tool call may become a task the sidecar polls.
            (
                rmcp::model::TASKS_EXTENSION_ID.to_string(),
                rmcp::model::JsonObject::new(),
            ),
        ]
        .into(),
    );
    if sampling {
        let mut sc = SamplingCapability::default();
        sc.tools = Some(Default::default());
        caps.sampling = Some(sc);
    }
    if roots {
        let mut rc = RootsCapabilities::default();
        rc.list_changed = Some(true);
        caps.roots = Some(rc);
    }
    if elicitation {
        let mut ec = ElicitationCapability::new();
        ec.form = Some(FormElicitationCapability::default());
        ec.url = Some(UrlElicitationCapability::new());
        caps.elicitation = Some(ec);
    }
    caps
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            capabilities(
                self.roots_declared(),
                self.elicitation_declared(),
                self.sampling_declared(),
            ),
            Implementation::new(CLIENT_NAME, env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(self.protocol_version.clone())
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        guard::catch(async move {
            if !self.roots_declared() {
                return Err(ErrorData::method_not_found::<
                    rmcp::model::ListRootsRequestMethod,
                >());
            }
            Ok(self.current_roots())
        })
        .await
        .unwrap_or_else(|panic| {
            Err(ErrorData::internal_error(
                self.panicked("roots/list", &panic),
                None,
            ))
        })
    }

    /// A legacy `elicitation/create`. The server cancelling it closes the prompt; a form that
    /// cannot be shown is answered with -32602 naming the property.
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        guard::catch(async move {
            if !self.elicitation_declared() {
                return Err(ErrorData::method_not_found::<
                    rmcp::model::ElicitationCreateRequestMethod,
                >());
            }
            let asker = self.calls.unrelated();
            tokio::select! {
                result = self.elicit(request, Some(&context.meta), &asker) => result.map_err(|e| {
                    ErrorData::invalid_params(format!("unsupported elicitation schema: {e}"), None)
                }),
                _ = context.ct.cancelled() => {
                    tracing::info!(server = %self.server, "the server cancelled its question; closing the prompt");
                    Ok(ElicitResult::new(ElicitationAction::Cancel))
                }
            }
        })
        .await
        .unwrap_or_else(|panic| {
            Err(ErrorData::internal_error(
                self.panicked("elicitation/create", &panic),
                None,
            ))
        })
    }

    /// A legacy `sampling/createMessage`: the drafts, then the answer; a refusal is JSON-RPC
    /// error -1 ("User rejected sampling request").
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        guard::catch(async move {
            if !self.sampling_declared() {
                return Err(ErrorData::method_not_found::<
                    rmcp::model::CreateMessageRequestMethod,
                >());
            }
            let raw = raw::sampling_params(Some(&context.meta), &params);
            let asker = self.calls.unrelated();
            let answer = tokio::select! {
                answer = self.sample(raw, &params, &asker) => answer,
                _ = context.ct.cancelled() => Err(sampling::Refusal::Person("the server cancelled its request".into())),
            };
            match answer {
                Ok(result) => serde_json::from_value(result).map_err(|e| {
                    ErrorData::internal_error(format!("could not send the answer: {e}"), None)
                }),
                Err(sampling::Refusal::Invalid(message)) => {
                    Err(ErrorData::invalid_params(message, None))
                }
                Err(refusal) => {
                    tracing::info!(server = %self.server, "sampling refused: {refusal}");
                    Err(ErrorData::new(
                        rmcp::model::ErrorCode(-1),
                        "User rejected sampling request",
                        Some(serde_json::json!({"reason": refusal.to_string()})),
                    ))
                }
            }
        })
        .await
        .unwrap_or_else(|panic| {
            Err(ErrorData::internal_error(
                self.panicked("sampling/createMessage", &panic),
                None,
            ))
        })
    }

    /// Progress the transport did not deliver itself as it read it (see
    /// `Diagnostics::deliver_progress`; both of the sidecar's transports do).
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.host.progress(
            &progress_key(&params.progress_token),
            ProgressUpdate {
                progress: params.progress,
                total: params.total,
                message: params.message,
            },
        );
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = match params.level {
            LoggingLevel::Debug => LogLevel::Debug,
            LoggingLevel::Info | LoggingLevel::Notice => LogLevel::Info,
            LoggingLevel::Warning => LogLevel::Warning,
            _ => LogLevel::Error,
        };
        let text = match &params.data {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        self.host.observed(Observed::Log {
            server: self.server.to_string(),
            level: params.level,
            logger: params.logger.clone(),
            data: params.data.clone(),
        });
        let logger = params.logger.map(|l| format!("{l}: ")).unwrap_or_default();
        self.host.server_log(
            &self.server,
            level,
            format!("[{}] {logger}{text}", self.server),
        );
    }

    /// `notifications/elicitation/complete` (2025-11-25): the browser step finished.
    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleClient>,
    ) {
        if notification.method != "notifications/elicitation/complete" {
            tracing::debug!(server = %self.server, method = %notification.method, "ignoring a notification");
            return;
        }
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("elicitationId"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !self.host.complete(&self.server, id) {
            tracing::debug!(server = %self.server, id, "ignoring completion of an unknown elicitation");
        }
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.resources_changed();
    }

    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        self.prompts_changed();
    }

    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: NotificationContext<RoleClient>,
    ) {
        self.resource_updated(params.uri);
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        self.tools_changed(context.peer);
    }
}

/// What the server's change notifications do, whether they come as legacy notifications or on
/// a 2026-07-28 `subscriptions/listen` stream (`listen.rs`).
impl Handler {
    pub fn resources_changed(&self) {
        *self.lists.resources.lock() = None;
        *self.lists.templates.lock() = None;
        self.host.observed(Observed::ResourcesChanged {
            server: self.server.to_string(),
        });
    }

    pub fn prompts_changed(&self) {
        *self.lists.prompts.lock() = None;
        self.host.observed(Observed::PromptsChanged {
            server: self.server.to_string(),
        });
    }

    pub fn resource_updated(&self, uri: String) {
        self.host.resource_updated(&self.server, uri);
    }

    /// Drops the cached list and fetches the new one in the background, so `listServers` counts
    /// right and the next `listTools` is quick. A burst of notifications is one refresh: it waits
    /// for [`flood::REFRESH_QUIET`] without another one (at most [`flood::REFRESH_MAX_WAIT`]),
    /// then fetches once and tells the editor once.
    pub fn tools_changed(&self, peer: rmcp::service::Peer<RoleClient>) {
        *self.tools.lock() = None;
        if !self.refresh.changed() {
            return;
        }
        let (tools, server) = (self.tools.clone(), self.server.clone());
        let (refresh, host) = (self.refresh.clone(), self.host.clone());
        tokio::spawn(async move {
            let generation = refresh.settle().await;
            match crate::mcp::session::listing::all_pages(&server, |p| peer.list_tools(p)).await {
                Ok(list) if refresh.generation() == generation => {
                    let mut cache = tools.lock();
                    cache.get_or_insert_with(|| Arc::new(list));
                }
                // Changed again meanwhile: the next refresh is already scheduled.
                Ok(_) => {}
                Err(e) => tracing::debug!(%server, "refreshing tools failed: {e:?}"),
            }
            host.emit(Event::ToolsChanged {
                server: server.to_string(),
            });
        });
    }
}
