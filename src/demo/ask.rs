//! Asking the client something (roots, elicitation, sampling) in whichever era the call came in.
//!
//! - Legacy session (`initialize`): a real server→client JSON-RPC request; the answer is its result.
//! - 2026-07-28 request: the first round returns an `InputRequiredResult` (`inputRequests` +
//!   sealed `requestState`); the client's retry carries the answer in `inputResponses[key]`.
//!
//! Either way a tool sees `Ok(answer JSON)` or a [`Stop`] it passes up with `?`.

// Sampling and roots are deprecated (SEP-2577) but still part of the protocol this demo exercises.
#![allow(deprecated)]

use rmcp::{
    ErrorData, RoleServer, ServiceError,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ClientResult,
        ConstString, ContentBlock, CreateMessageRequest, CreateMessageRequestMethod,
        CreateMessageRequestParams, CustomRequest, CustomResult, ElicitRequestParams, InputRequest,
        InputRequests, InputRequiredResult, JsonRpcMessage, LoggingLevel,
        LoggingMessageNotificationParam, ProgressNotificationParam, ServerJsonRpcMessage,
        ServerRequest, ServerResult,
    },
    service::{PeerRequestOptions, RequestContext},
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::state::{CallState, StateCodec};

/// Why a tool stops before producing its own result.
#[derive(Debug)]
pub(super) enum Stop {
    /// 2026-07-28: return this to the client; it retries with the answers.
    InputRequired(Box<InputRequiredResult>),
    /// The tool ran but failed in a way the caller should read (`isError: true`), e.g. the client
    /// refused a legacy request or the arguments are invalid.
    ToolError(String),
    /// A JSON-RPC error for the whole `tools/call`.
    Error(ErrorData),
}

impl From<ErrorData> for Stop {
    fn from(error: ErrorData) -> Self {
        Stop::Error(error)
    }
}

/// Turns a tool's outcome into the `tools/call` response.
pub(super) fn respond(
    outcome: Result<CallToolResult, Stop>,
) -> Result<CallToolResponse, ErrorData> {
    match outcome {
        Ok(result) => Ok(result.into()),
        Err(Stop::InputRequired(result)) => Ok((*result).into()),
        Err(Stop::ToolError(message)) => {
            Ok(CallToolResult::error(vec![ContentBlock::text(message)]).into())
        }
        Err(Stop::Error(error)) => Err(error),
    }
}

/// One `tools/call` as the tools see it.
pub(super) struct Call<'a> {
    params: &'a CallToolRequestParams,
    context: &'a RequestContext<RoleServer>,
    codec: &'a StateCodec,
    /// Fresh for a legacy call or a first modern round; the verified echoed state on a retry.
    state: CallState,
    /// The request came in on 2026-07-28 (or later): ask through MRTR.
    modern: bool,
}

impl<'a> Call<'a> {
    pub(super) fn new(
        params: &'a CallToolRequestParams,
        context: &'a RequestContext<RoleServer>,
        codec: &'a StateCodec,
    ) -> Result<Self, ErrorData> {
        let modern = context
            .protocol_version()
            .is_some_and(|version| !version.has_initialize());
        let fresh = codec.fresh(&params.name, params.arguments.as_ref());
        let state = match (&params.request_state, modern) {
            (Some(sealed), true) => codec.open(sealed, &fresh)?,
            _ => fresh,
        };
        Ok(Self {
            params,
            context,
            codec,
            state,
            modern,
        })
    }

    pub(super) fn tool(&self) -> &str {
        &self.params.name
    }

    /// The call's arguments decoded as `T`; a mismatch is a tool error (SEP-1303).
    pub(super) fn arguments<T: DeserializeOwned>(&self) -> Result<T, Stop> {
        let arguments = Value::Object(self.params.arguments.clone().unwrap_or_default());
        serde_json::from_value(arguments).map_err(|error| {
            Stop::ToolError(format!("invalid arguments for {}: {error}", self.tool()))
        })
    }

    /// Reports progress on the call's progress token, when the client gave one.
    pub(super) async fn progress(&self, progress: f64, total: Option<f64>, message: String) {
        let Some(token) = self.context.meta.get_progress_token() else {
            return;
        };
        let mut param = ProgressNotificationParam::new(token, progress).with_message(message);
        if let Some(total) = total {
            param = param.with_total(total);
        }
        if let Err(e) = self.context.peer.notify_progress(param).await {
            tracing::warn!("progress notification not sent: {e}");
        }
    }

    /// Logs to the client. A 2026-07-28 request gets messages only at or above the level its
    /// `_meta` asks for (none when it does not ask); legacy clients get every message.
    pub(super) async fn log(&self, level: LoggingLevel, message: String) {
        if self.modern
            && self
                .context
                .meta
                .log_level()
                .is_none_or(|min| (level as u8) < (min as u8))
        {
            return;
        }
        let param = LoggingMessageNotificationParam::new(level, json!(message)).with_logger("demo");
        if let Err(e) = self.context.peer.notify_logging_message(param).await {
            tracing::warn!("log notification not sent: {e}");
        }
    }

    /// Random per call, and stable across the MRTR rounds of one call.
    pub(super) fn nonce(&self) -> &str {
        &self.state.nonce
    }

    /// Asks the client `request`; `key` names it in `inputRequests`/`inputResponses`.
    ///
    /// One question per call: the state does not carry earlier answers to later rounds.
    pub(super) async fn ask(&self, key: &str, request: InputRequest) -> Result<Value, Stop> {
        let need = self.may_ask(&request)?;
        if self.modern {
            self.ask_modern(key, request)
        } else {
            self.ask_legacy(need, request).await
        }
    }

    fn ask_modern(&self, key: &str, mut request: InputRequest) -> Result<Value, Stop> {
        let responses = self.params.input_responses.as_ref();
        if self.state.round > 0
            && let Some(answer) = responses.and_then(|map| map.get(key))
        {
            return Ok(answer.clone());
        }
        drop_legacy_fields(&mut request);
        let next = self.state.next_round();
        tracing::info!(
            tool = self.tool(),
            key,
            round = next.round,
            "input_required"
        );
        let requests = InputRequests::from([(key.to_owned(), request)]);
        let state = self.codec.seal(&next);
        let result = InputRequiredResult::new(Some(requests), Some(state));
        Err(Stop::InputRequired(Box::new(result)))
    }

    async fn ask_legacy(&self, need: Need, request: InputRequest) -> Result<Value, Stop> {
        tracing::info!(
            tool = self.tool(),
            method = need.method(),
            "asking the client"
        );
        match self
            .send_or_withdraw(need, server_request(request)?)
            .await?
        {
            Ok(result) => serde_json::to_value(result)
                .map_err(|error| ErrorData::internal_error(error.to_string(), None).into()),
            Err(ServiceError::McpError(error)) => Err(Stop::ToolError(format!(
                "The client refused {} ({}): {} (code {})",
                need.feature(),
                need.method(),
                error.message,
                error.code.0
            ))),
            Err(error) => Err(failed(need, error).into()),
        }
    }

    /// Sends `request` to the client and waits for the answer; if the client cancels this
    /// `tools/call` first, withdraws the request (`notifications/cancelled`) and stops.
    async fn send_or_withdraw(
        &self,
        need: Need,
        request: ServerRequest,
    ) -> Result<Result<ClientResult, ServiceError>, Stop> {
        let options = PeerRequestOptions::no_options();
        let peer = &self.context.peer;
        let mut pending = (peer.send_cancellable_request(request, options).await)
            .map_err(|error| failed(need, error))?;
        tokio::select! {
            answer = &mut pending.rx => Ok(answer.unwrap_or(Err(ServiceError::TransportClosed))),
            () = self.context.ct.cancelled() => {
                let reason = format!("{} was cancelled", self.tool());
                if let Err(error) = pending.cancel(Some(reason)).await {
                    tracing::warn!(%error, "could not withdraw {}", need.method());
                }
                Err(failed(need, ServiceError::Cancelled { reason: None }).into())
            }
        }
    }

    /// Whether the client may be asked `request`: the [`Stop`] asking it would end in if not.
    pub(super) fn may_ask(&self, request: &InputRequest) -> Result<Need, Stop> {
        let need = Need::of(request)?;
        if need.declared_in(&self.client_capabilities()) {
            Ok(need)
        } else {
            Err(self.missing_capability(need))
        }
    }

    /// The request (2026-07-28) or the session (legacy) declared the Tasks extension.
    pub(super) fn declares_tasks(&self) -> bool {
        (self.context.client_capabilities()).is_some_and(|caps| caps.supports_tasks())
    }

    /// A 2026-07-28 retry: the client answers a question this call asked.
    pub(super) fn is_retry(&self) -> bool {
        self.modern && self.state.round > 0
    }

    /// Resolves when the client cancels this call.
    pub(super) async fn cancelled(&self) {
        self.context.ct.cancelled().await;
    }

    /// The capabilities this request may rely on: its own `_meta` (2026-07-28) or the session's.
    pub(super) fn client_capabilities(&self) -> Value {
        serde_json::to_value(self.context.client_capabilities().unwrap_or_default())
            .unwrap_or_default()
    }

    fn missing_capability(&self, need: Need) -> Stop {
        if self.modern {
            let required: ClientCapabilities =
                serde_json::from_value(need.required()).unwrap_or_default();
            Stop::Error(ErrorData::missing_required_client_capability(required))
        } else {
            Stop::ToolError(format!(
                "The client did not declare the {} capability ({}), so {} cannot ask it",
                need.feature(),
                need.required(),
                self.tool()
            ))
        }
    }
}

/// 2026-07-28 removed `elicitationId` from URL-mode elicitation. (rmcp still writes the field,
/// as `""`, because its model type has a plain `String` there.)
fn drop_legacy_fields(request: &mut InputRequest) {
    if let InputRequest::Elicitation(request) = request
        && let ElicitRequestParams::UrlElicitationParams { elicitation_id, .. } =
            &mut request.params
    {
        elicitation_id.clear();
    }
}

/// The JSON a question was built from, kept in its request's extensions (never on the wire) and
/// sent as it is. rmcp holds a sampling request's `temperature` and model-preference priorities
/// as `f32` and writes its params through a `serde_json::Value`, which widens them
/// (`0.2` → `0.20000000298023224`); a question built with [`exact_sampling`] goes out exact:
/// legacy as a custom `sampling/createMessage` request ([`server_request`]), 2026-07-28 as an
/// `InputRequiredResult` the era gate rewrites ([`exact_results`]).
#[derive(Clone, Debug)]
pub(super) struct Exact(Value);

/// A `sampling/createMessage` question from its params as JSON, sent exactly as written.
pub(super) fn exact_sampling(params: Value) -> Result<InputRequest, Stop> {
    let typed: CreateMessageRequestParams =
        serde_json::from_value(params.clone()).map_err(|error| {
            ErrorData::internal_error(format!("bad sampling params: {error}"), None)
        })?;
    let mut request = CreateMessageRequest::new(typed);
    request.extensions.insert(Exact(params));
    Ok(InputRequest::CreateMessage(request))
}

/// An outgoing message with the exact JSON of its questions: an `InputRequiredResult` whose
/// requests carry [`Exact`] params is sent as the same result in JSON with those params in place.
pub(super) fn exact_results(message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    let JsonRpcMessage::Response(mut response) = message else {
        return message;
    };
    let ServerResult::InputRequiredResult(result) = &response.result else {
        return JsonRpcMessage::Response(response);
    };
    let exact: Vec<(&String, &Value)> = (result.input_requests.iter().flatten())
        .filter_map(|(key, request)| match request {
            InputRequest::CreateMessage(request) => {
                request.extensions.get::<Exact>().map(|Exact(p)| (key, p))
            }
            _ => None,
        })
        .collect();
    if exact.is_empty() {
        return JsonRpcMessage::Response(response);
    }
    let Ok(mut value) = serde_json::to_value(result) else {
        return JsonRpcMessage::Response(response);
    };
    for (key, params) in exact {
        value["inputRequests"][key]["params"] = params.clone();
    }
    response.result = ServerResult::CustomResult(CustomResult::new(value));
    JsonRpcMessage::Response(response)
}

/// The legacy server→client request carrying `request`.
fn server_request(request: InputRequest) -> Result<ServerRequest, Stop> {
    match request {
        InputRequest::CreateMessage(request) => Ok(match request.extensions.get::<Exact>() {
            Some(Exact(params)) => ServerRequest::CustomRequest(CustomRequest::new(
                CreateMessageRequestMethod::VALUE,
                Some(params.clone()),
            )),
            None => request.into(),
        }),
        InputRequest::Elicitation(request) => Ok(request.into()),
        InputRequest::ListRoots(request) => Ok(request.into()),
        other => Err(unsupported(&other)),
    }
}

fn failed(need: Need, error: ServiceError) -> ErrorData {
    ErrorData::internal_error(format!("{} failed: {error}", need.method()), None)
}

fn unsupported(request: &InputRequest) -> Stop {
    Stop::Error(ErrorData::internal_error(
        format!("the demo server cannot send {request:?}"),
        None,
    ))
}

/// The client capability an input request relies on.
#[derive(Clone, Copy, Debug)]
pub(super) enum Need {
    FormElicitation,
    UrlElicitation,
    Sampling,
    Roots,
}

impl Need {
    fn of(request: &InputRequest) -> Result<Self, Stop> {
        Ok(match request {
            InputRequest::Elicitation(request) => match request.params {
                ElicitRequestParams::UrlElicitationParams { .. } => Need::UrlElicitation,
                _ => Need::FormElicitation,
            },
            InputRequest::CreateMessage(_) => Need::Sampling,
            InputRequest::ListRoots(_) => Need::Roots,
            other => return Err(unsupported(other)),
        })
    }

    fn method(self) -> &'static str {
        match self {
            Need::FormElicitation | Need::UrlElicitation => "elicitation/create",
            Need::Sampling => "sampling/createMessage",
            Need::Roots => "roots/list",
        }
    }

    fn feature(self) -> &'static str {
        match self {
            Need::FormElicitation => "form elicitation",
            Need::UrlElicitation => "URL elicitation",
            Need::Sampling => "sampling",
            Need::Roots => "roots",
        }
    }

    /// The `ClientCapabilities` JSON this needs (the `-32021` error's `requiredCapabilities`).
    fn required(self) -> Value {
        match self {
            Need::FormElicitation => json!({"elicitation": {"form": {}}}),
            Need::UrlElicitation => json!({"elicitation": {"url": {}}}),
            Need::Sampling => json!({"sampling": {}}),
            Need::Roots => json!({"roots": {}}),
        }
    }

    fn declared_in(self, capabilities: &Value) -> bool {
        let elicitation = capabilities.get("elicitation");
        match self {
            // A bare `elicitation: {}` means form only.
            Need::FormElicitation => elicitation
                .is_some_and(|modes| modes.get("form").is_some() || modes.get("url").is_none()),
            Need::UrlElicitation => elicitation.is_some_and(|modes| modes.get("url").is_some()),
            Need::Sampling => capabilities.get("sampling").is_some(),
            Need::Roots => capabilities.get("roots").is_some(),
        }
    }
}
