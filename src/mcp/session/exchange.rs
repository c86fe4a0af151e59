//! A call driven to its [`Reply`]: `tools/call`, `prompts/get` and `resources/read`, each
//! 2026-07-28 `input_required` round answered through the handler and the request sent again,
//! a legacy URL step retried after the browser; on a stdio session the request goes past rmcp's
//! peer (`wire::direct`), elsewhere through it.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    GetPromptRequest, GetPromptRequestParams, InputResponses, ReadResourceRequest,
    ReadResourceRequestParams, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient, ServiceError};
use serde_json::Value;

use super::connection::{Connection, MAX_MRTR_ROUNDS, SERVER_LOG_LEVEL, within_server_time};
use crate::contract::CallError;
use crate::mcp::host::progress_key;
use crate::mcp::host::{Host, ProgressFn};
use crate::mcp::reply::{Caller, Reply};
use crate::mcp::wire::direct::Direct;

/// `URLElicitationRequiredError` (2025-11-25 only).
const URL_ELICITATION_REQUIRED: i32 = -32042;

impl Connection {
    /// Runs `tools/call` to completion (see [`Connection::exchange`]).
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<ToolArguments>,
        caller: Caller,
    ) -> Result<Reply, CallError> {
        // 2026-07-28 over HTTP mirrors `x-mcp-header` arguments into `Mcp-Param-*` headers from
        // the listed input schemas (and drops tools whose declarations are invalid): a call made
        // before any `tools/list` would go without them.
        if self.modern
            && self.cached_tool_count() == 0
            && let Err(e) = Box::pin(self.tools()).await
        {
            tracing::debug!(server = %self.server, "listing tools before the first call failed: {e}");
        }
        self.visible(name, caller.surface).await?;
        // Arguments as text are written as they came only where the sidecar writes the line
        // (`direct`); elsewhere rmcp's typed request needs the object.
        let mut call = ToolCall::new(name, arguments, self.direct.is_some()).map_err(|e| {
            CallError::Refused(format!(
                "the arguments for {name} cannot be read as an object: {e}"
            ))
        })?;
        call.task = self.task_augmentation(name).await;
        self.exchange(call, caller).await
    }

    /// Refuses a call of a tool whose visibility (MCP Apps) leaves out `surface`: a tool for
    /// views only, called by a person or an agent, or one for the model only, called by a view.
    async fn visible(&self, name: &str, surface: crate::apps::Surface) -> Result<(), CallError> {
        let tools = match self.tools().await {
            Ok(tools) => tools,
            // The call itself says what is wrong with the server.
            Err(_) => return Ok(()),
        };
        let Some(tool) = tools.iter().find(|t| t.name == name) else {
            return Ok(());
        };
        if crate::apps::meta::visibility(tool.meta.as_deref()).allows(surface) {
            return Ok(());
        }
        let who = match surface {
            crate::apps::Surface::Model => "its server's views only",
            crate::apps::Surface::App => "people and agents only, not views",
        };
        Err(CallError::Refused(format!(
            "the tool \"{}\" is for {who}",
            crate::contract::shown::line(name, crate::contract::shown::MAX_NAME)
        )))
    }

    /// Runs `prompts/get` to completion (see [`Connection::exchange`]).
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        caller: Caller,
    ) -> Result<Reply, CallError> {
        let mut params = GetPromptRequestParams::new(name);
        params.arguments = arguments;
        self.exchange(params, caller).await
    }

    /// Runs `resources/read` to completion (see [`Connection::exchange`]).
    pub async fn read_resource(&self, uri: &str, caller: Caller) -> Result<Reply, CallError> {
        self.exchange(ReadResourceRequestParams::new(uri), caller)
            .await
    }

    /// Runs a request that may ask for input to completion: each 2026-07-28 `input_required`
    /// round is answered through the handler (roots at once, questions one after another) and
    /// sent again with a new id, the original parameters and the byte-identical
    /// `requestState`; a legacy URL-elicitation-required error is retried after the browser
    /// step if the person says so. Legacy server→client requests are answered by the handler
    /// while the request is open.
    async fn exchange<P: Exchange>(
        &self,
        mut params: P,
        caller: Caller,
    ) -> Result<Reply, CallError> {
        let Caller {
            agent, progress, ..
        } = caller;
        if self.modern && self.direct.is_none() {
            // 2026-07-28 servers log only for requests that ask (there is no
            // `logging/setLevel`); legacy servers log at their own level.
            let mut meta = RequestMetaObject::new();
            meta.set_log_level(SERVER_LOG_LEVEL);
            params.set_meta(meta);
        }
        let asker = crate::mcp::requester::Asker::of(agent);
        let _open = self.handler.calls.enter(asker.agent.clone());
        let mut url_retries = 0;
        for _round in 0..MAX_MRTR_ROUNDS {
            let answered = match &self.direct {
                Some((direct, meta)) => {
                    let request = Direct::request(direct, meta, progress.clone());
                    self.send_direct(request, &mut params).await
                }
                // Boxed, as the rarer paths below: the call's future, copied into a box for every
                // call, holds only what the common one needs (see `the_commands_future_holds_no_command_inline`).
                None => Box::pin(self.send(params.clone().request(), progress.clone()))
                    .await
                    .and_then(|result| self.answered::<P>(result)),
            };
            let required = match answered {
                // 2025-11-25 URLElicitationRequiredError: the person visits the URLs, then the
                // request is retried only if they say so (or the server says the step finished).
                Err(CallError::Server {
                    code: URL_ELICITATION_REQUIRED,
                    data: Some(data),
                    message,
                    ..
                }) if !self.modern && url_retries < 3 => {
                    url_retries += 1;
                    if Box::pin(self.handler.url_required(&data, &asker)).await {
                        continue;
                    }
                    return Err(CallError::Refused(format!(
                        "{} needs a step in the browser first ({message}); the request was not retried",
                        self.server
                    )));
                }
                // Lines are refused past the depth bound as they are read; a JSON body over
                // HTTP reaches rmcp unseen (its parse stops only past 128).
                Ok(Answered::Final(Reply::Json(result)))
                    if crate::mcp::wire::scan::value_nests_deeper(
                        &result,
                        crate::mcp::wire::scan::MAX_DEPTH,
                    ) =>
                {
                    tracing::warn!(server = %self.server, "refused an answer nested deeper than {} levels", crate::mcp::wire::scan::MAX_DEPTH);
                    return Err(self.protocol(crate::mcp::wire::scan::refusal("result")));
                }
                Ok(Answered::Final(reply)) => return Ok(reply),
                Ok(Answered::Required(required)) => required,
                Err(e) => return Err(e),
            };
            if !self.modern {
                return Err(
                    self.protocol("sent input_required on a legacy (initialize) session".into())
                );
            }
            let requests = required.input_requests.unwrap_or_default();
            if requests.is_empty() && required.request_state.is_none() {
                return Err(self.protocol(
                    "sent input_required with neither inputRequests nor requestState".into(),
                ));
            }
            let mut responses = InputResponses::new();
            for (key, request) in requests {
                let answer = Box::pin(self.handler.answer_input(&key, request, &asker))
                    .await
                    .map_err(CallError::Refused)?;
                responses.insert(key, answer);
            }
            params.retry_with(
                (!responses.is_empty()).then_some(responses),
                required.request_state,
            );
        }
        Err(self.protocol(format!(
            "still asked for input after {MAX_MRTR_ROUNDS} rounds; the request was abandoned"
        )))
    }

    /// What rmcp's typed answer to `P`'s request is.
    fn answered<P: Exchange>(&self, result: ServerResult) -> Result<Answered, CallError> {
        match result {
            ServerResult::InputRequiredResult(required) => Ok(Answered::Required(required)),
            ServerResult::CreateTaskResult(created) => {
                let value = serde_json::to_value(created).unwrap_or_default();
                self.task_handle(value, P::METHOD).map(Answered::Final)
            }
            ServerResult::CustomResult(custom)
                if custom.0.get("resultType").and_then(Value::as_str) == Some("task") =>
            {
                self.task_handle(custom.0, P::METHOD).map(Answered::Final)
            }
            other => match P::finished(other) {
                Some(result) => result
                    .map(|value| Answered::Final(Reply::Json(value)))
                    .map_err(|e| self.protocol(e.to_string())),
                None => {
                    Err(self.protocol(format!("answered {} with an unexpected result", P::METHOD)))
                }
            },
        }
    }

    /// A `CreateTaskResult` (Tasks extension): only `tools/call` may become a task, and its id
    /// must be a string of at most [`crate::mcp::tasks::MAX_TASK_ID`] bytes.
    fn task_handle(&self, created: Value, method: &str) -> Result<Reply, CallError> {
        self.handle_of(created, method, false)
    }

    fn handle_of(&self, created: Value, method: &str, legacy: bool) -> Result<Reply, CallError> {
        if method != CallToolRequestParams::METHOD {
            return Err(self.protocol(format!("answered {method} with a task handle")));
        }
        let task_id = crate::mcp::tasks::task_id(&created).map_err(|e| self.protocol(e))?;
        Ok(Reply::Task(crate::mcp::reply::TaskHandle {
            server: self.server.to_string(),
            task_id,
            created,
            legacy,
        }))
    }

    /// [`Connection::send`] past rmcp's peer, on a stdio session (see `direct.rs`): the same
    /// progress, timeout and cancellation, and the answer read as rmcp's types read it.
    async fn send_direct<P: Exchange>(
        &self,
        request: DirectRequest<'_>,
        params: &mut P,
    ) -> Result<Answered, CallError> {
        let DirectRequest {
            direct,
            meta,
            progress,
        } = request;
        let id = direct.next_id();
        let mut guard = CancelGuard {
            via: Via::Direct(direct.clone()),
            id: None,
            host: self.handler.host.clone(),
            progress_key: None,
        };
        let mut meta = meta.clone();
        if let Some(sink) = progress {
            let token = rmcp::model::ProgressToken(id.clone());
            meta.set_progress_token(token.clone());
            let key = progress_key(&token);
            self.handler.host.register_progress(key.clone(), sink);
            guard.progress_key = Some(key);
        }
        if !meta.0.is_empty() {
            params.set_meta(meta);
        }
        let closed = || self.service_error(ServiceError::TransportClosed);
        let answer = direct.send(&id, P::METHOD, params).ok_or_else(closed)?;
        guard.id = Some(id);
        let outcome =
            within_server_time(&self.handler.host.clock(&self.server), self.timeout, answer)
                .await
                .ok_or_else(|| self.timeout_error())?;
        guard.id = None;
        match outcome.map_err(|_| closed())? {
            Ok(result) if params.augmented() => {
                let created = serde_json::from_slice::<Value>(&result)
                    .ok()
                    .filter(|v| v.get("task").is_some_and(Value::is_object));
                match created {
                    Some(created) => self
                        .handle_of(super::tasks::legacy_task(created), P::METHOD, true)
                        .map(Answered::Final),
                    None => self.judge::<P::Result>(result, P::METHOD),
                }
            }
            Ok(result) => self.judge::<P::Result>(result, P::METHOD),
            Err(error) => Err(self.service_error(ServiceError::McpError(error))),
        }
    }

    /// A result as the server sent it, read as rmcp's types read it, building as little as it
    /// can: a plain one ([`reply::plain`]) is handed on as its bytes; an `input_required` round
    /// (a 2026-07-28 session's; its forms and sampling params kept raw, see `raw.rs`) is read
    /// into rmcp's type; anything else is read through rmcp's result type `R` and written back.
    fn judge<R: serde::de::DeserializeOwned + serde::Serialize>(
        &self,
        result: bytes::Bytes,
        method: &str,
    ) -> Result<Answered, CallError> {
        if crate::mcp::reply::plain(&result) {
            return Ok(Answered::Final(Reply::Raw(result)));
        }
        let unexpected = || self.protocol(format!("answered {method} with an unexpected result"));
        let value = serde_json::from_slice::<Value>(&result).map_err(|_| unexpected())?;
        if value.get("resultType").and_then(Value::as_str) == Some("input_required") {
            let mut message = serde_json::json!({ "result": value });
            crate::mcp::wire::raw::stash_schemas(&mut message);
            return serde_json::from_value(message["result"].take())
                .map(Answered::Required)
                .map_err(|e| {
                    self.protocol(format!(
                        "sent an input_required result that cannot be read: {e}"
                    ))
                });
        }
        if value.get("resultType").and_then(Value::as_str) == Some("task") {
            return self.task_handle(value, method).map(Answered::Final);
        }
        serde_json::from_value::<R>(value)
            .ok()
            .and_then(|typed| serde_json::to_value(typed).ok())
            .map(|value| Answered::Final(Reply::Json(value)))
            .ok_or_else(unexpected)
    }

    /// One request: progress routed to `progress`, a timeout on the server's own time, and
    /// `notifications/cancelled` if the caller gives up (drops this future) first.
    pub(super) async fn send(
        &self,
        request: ClientRequest,
        progress: Option<ProgressFn>,
    ) -> Result<ServerResult, CallError> {
        let handle = self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| self.service_error(e))?;
        let mut guard = CancelGuard {
            via: Via::Peer(self.peer.clone()),
            id: Some(handle.id.clone()),
            host: self.handler.host.clone(),
            progress_key: None,
        };
        let reports_progress = progress.is_some();
        if let Some(sink) = progress {
            let key = progress_key(&handle.progress_token);
            self.handler.host.register_progress(key.clone(), sink);
            guard.progress_key = Some(key);
        }
        let outcome = within_server_time(
            &self.handler.host.clock(&self.server),
            self.timeout,
            handle.await_response(),
        )
        .await;
        match outcome {
            Some(result) => {
                guard.id = None;
                if reports_progress {
                    // rmcp hands each notification to its own task but completes the response
                    // directly: a progress notification the server sent just before its result
                    // may still be queued. Let it run before the sink is unregistered.
                    tokio::task::yield_now().await;
                }
                result.map_err(|e| self.service_error(e))
            }
            None => Err(self.timeout_error()),
        }
    }
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting, and always
/// unregisters its progress sink.
struct CancelGuard {
    via: Via,
    /// The request, while it waits for its answer.
    id: Option<RequestId>,
    host: Arc<Host>,
    progress_key: Option<String>,
}

/// How a request was sent, and so how it is cancelled.
enum Via {
    Peer(Peer<RoleClient>),
    Direct(Arc<Direct>),
}

const CANCELLED: &str = "cancelled by the editor";

impl Drop for CancelGuard {
    fn drop(&mut self) {
        if let Some(key) = &self.progress_key {
            self.host.unregister_progress(key);
        }
        let Some(id) = self.id.take() else { return };
        match &self.via {
            Via::Direct(direct) => direct.cancel(&id, CANCELLED),
            Via::Peer(peer) => {
                let peer = peer.clone();
                tokio::spawn(async move {
                    let params = CancelledNotificationParam::new(Some(id), Some(CANCELLED.into()));
                    let _ = peer.notify_cancelled(params).await;
                });
            }
        }
    }
}

/// A request's answer: final, or a 2026-07-28 `input_required` round.
enum Answered {
    Final(Reply),
    Required(rmcp::model::InputRequiredResult),
}

/// One request past rmcp: where it goes, the `_meta` it carries, and where its progress goes.
struct DirectRequest<'a> {
    direct: &'a Arc<Direct>,
    meta: &'a RequestMetaObject,
    progress: Option<ProgressFn>,
}

impl Direct {
    fn request<'a>(
        self: &'a Arc<Self>,
        meta: &'a RequestMetaObject,
        progress: Option<ProgressFn>,
    ) -> DirectRequest<'a> {
        DirectRequest {
            direct: self,
            meta,
            progress,
        }
    }
}

/// A request that a 2026-07-28 server may answer with `input_required`, sent again with the
/// answers (`tools/call`, `prompts/get`, `resources/read`).
trait Exchange: Clone + serde::Serialize {
    const METHOD: &'static str;
    /// The final result's type.
    type Result: serde::de::DeserializeOwned + serde::Serialize;
    fn request(self) -> ClientRequest;
    fn set_meta(&mut self, meta: RequestMetaObject);
    fn retry_with(&mut self, responses: Option<InputResponses>, state: Option<String>);
    /// The final result as JSON; `None` for a result of another kind.
    fn finished(result: ServerResult) -> Option<Result<Value, serde_json::Error>>;
    /// Whether the request is task-augmented (the 2025-11-25 form): its answer is `{task}`.
    fn augmented(&self) -> bool {
        false
    }
}

macro_rules! exchange {
    ($params:ty, $request:ident, $result:ident, $method:literal) => {
        impl Exchange for $params {
            const METHOD: &'static str = $method;
            type Result = rmcp::model::$result;
            fn request(self) -> ClientRequest {
                ClientRequest::$request($request::new(self))
            }
            fn set_meta(&mut self, meta: RequestMetaObject) {
                self.meta = Some(meta);
            }
            fn retry_with(&mut self, responses: Option<InputResponses>, state: Option<String>) {
                self.input_responses = responses;
                self.request_state = state;
            }
            fn finished(result: ServerResult) -> Option<Result<Value, serde_json::Error>> {
                match result {
                    ServerResult::$result(result) => Some(serde_json::to_value(result)),
                    _ => None,
                }
            }
        }
    };
}

exchange!(
    CallToolRequestParams,
    CallToolRequest,
    CallToolResult,
    "tools/call"
);

/// A tool's arguments: the object, or its JSON text as the editor sent it.
pub enum ToolArguments {
    Object(serde_json::Map<String, Value>),
    Text(crate::contract::ObjectText),
}

/// `tools/call` whose arguments may still be the editor's JSON text: written to a server as
/// they came where the sidecar writes the request itself (a stdio session, `direct`);
/// read into the object only for rmcp's typed request (the other sessions).
#[derive(Clone, serde::Serialize)]
struct ToolCall {
    #[serde(flatten)]
    params: CallToolRequestParams,
    /// The arguments as text (then `params.arguments` is `None`).
    #[serde(rename = "arguments", skip_serializing_if = "Option::is_none")]
    text: Option<Box<serde_json::value::RawValue>>,
    /// The 2025-11-25 form's task augmentation (`{ttl}`), for a tool that requires it.
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<Value>,
}

impl ToolCall {
    /// The call, its arguments kept as text when `as_text` (the line is written here).
    fn new(
        name: &str,
        arguments: Option<ToolArguments>,
        as_text: bool,
    ) -> Result<Self, serde_json::Error> {
        let mut call = ToolCall {
            params: CallToolRequestParams::new(name.to_string()),
            text: None,
            task: None,
        };
        match arguments {
            Some(ToolArguments::Object(object)) => call.params.arguments = Some(object),
            // JSON's whitespace may be a line break, which must not reach a line-delimited
            // server: such text is read into the object and written compact.
            Some(ToolArguments::Text(text))
                if as_text && memchr::memchr2(b'\n', b'\r', text.get().as_bytes()).is_none() =>
            {
                call.text = Some(text.into_raw());
            }
            Some(ToolArguments::Text(text)) => call.params.arguments = Some(text.to_map()?),
            None => {}
        }
        Ok(call)
    }
}

impl Exchange for ToolCall {
    const METHOD: &'static str = CallToolRequestParams::METHOD;
    type Result = <CallToolRequestParams as Exchange>::Result;
    fn request(self) -> ClientRequest {
        // Made only for a session whose lines rmcp writes, so its arguments are an object
        // (`ToolCall::new`).
        debug_assert!(
            self.text.is_none(),
            "a tools/call with text arguments for rmcp"
        );
        self.params.request()
    }
    fn set_meta(&mut self, meta: RequestMetaObject) {
        self.params.set_meta(meta);
    }
    fn retry_with(&mut self, responses: Option<InputResponses>, state: Option<String>) {
        self.params.retry_with(responses, state);
    }
    fn finished(result: ServerResult) -> Option<Result<Value, serde_json::Error>> {
        CallToolRequestParams::finished(result)
    }
    fn augmented(&self) -> bool {
        self.task.is_some()
    }
}
exchange!(
    GetPromptRequestParams,
    GetPromptRequest,
    GetPromptResult,
    "prompts/get"
);
exchange!(
    ReadResourceRequestParams,
    ReadResourceRequest,
    ReadResourceResult,
    "resources/read"
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Arguments that came as the editor's text are written as that text where the sidecar
    /// writes the line; rmcp's typed request (other sessions) gets them as the object.
    #[test]
    fn a_tool_calls_text_arguments_are_written_as_they_came() {
        let text = r#"{"b":  [1, {"c":"é\n"}], "a":2}"#;
        let object: crate::contract::ObjectText = serde_json::from_str(text).unwrap();
        let arguments = || Some(ToolArguments::Text(object.clone()));
        let meta = || {
            RequestMetaObject::with_progress_token(rmcp::model::ProgressToken(
                rmcp::model::RequestId::Number(7),
            ))
        };
        let mut call = ToolCall::new("add", arguments(), true).unwrap();
        call.set_meta(meta());
        let line = serde_json::to_string(&call).unwrap();
        assert!(line.contains(&format!(r#""arguments":{text}"#)), "{line}");
        let mut typed = CallToolRequestParams::new("add");
        typed.arguments = Some(object.to_map().unwrap());
        typed.set_meta(meta());
        assert_eq!(
            serde_json::from_str::<Value>(&line).unwrap(),
            serde_json::to_value(&typed).unwrap(),
            "the same request"
        );
        let ClientRequest::CallToolRequest(request) =
            ToolCall::new("add", arguments(), false).unwrap().request()
        else {
            panic!("not a tools/call")
        };
        assert_eq!(request.params.arguments, typed.arguments);
        // Without arguments, none are written.
        let bare = ToolCall::new("add", None, true).unwrap();
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"name":"add"}"#);
        // Text with line breaks (JSON whitespace) would cut a line to a stdio server in two: it
        // is written compact.
        let pretty = "{\r\n  \"a\": 1,\n  \"b\": \"x\\ny\"\n}";
        let object: crate::contract::ObjectText = serde_json::from_str(pretty).unwrap();
        let call = ToolCall::new("add", Some(ToolArguments::Text(object)), true).unwrap();
        let line = serde_json::to_string(&call).unwrap();
        assert_eq!(line, r#"{"name":"add","arguments":{"a":1,"b":"x\ny"}}"#);
    }

    /// Valid JSON that serde_json cannot read into an object goes to a server whose line the
    /// sidecar writes as it came (the server judges its arguments); where rmcp needs the object
    /// it is an error, never an empty or partial object.
    #[test]
    fn arguments_serde_cannot_read_are_relayed_or_refused_never_dropped() {
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(200), "]".repeat(200));
        for text in [r#"{"a":"\ud800"}"#, r#"{"a":1e400}"#, deep.as_str()] {
            let object: crate::contract::ObjectText = serde_json::from_str(text).unwrap();
            let call = ToolCall::new("t", Some(ToolArguments::Text(object.clone())), true).unwrap();
            let line = serde_json::to_string(&call).unwrap();
            assert!(
                line.ends_with(&format!(r#""arguments":{text}}}"#)),
                "{line}"
            );
            assert!(
                ToolCall::new("t", Some(ToolArguments::Text(object)), false).is_err(),
                "{text}"
            );
        }
    }

    /// The editor's arguments must be an object.
    #[test]
    fn arguments_that_are_not_an_object_are_refused() {
        for bad in ["3", "[1]", r#""x""#, "true"] {
            let args = format!(r#"{{"server":"s","tool":"t","arguments":{bad}}}"#);
            let err = serde_json::from_str::<crate::contract::CallToolArgs>(&args).unwrap_err();
            assert!(err.to_string().contains("a JSON object"), "{bad}: {err}");
        }
        let none: crate::contract::CallToolArgs =
            serde_json::from_str(r#"{"server":"s","tool":"t","arguments":null}"#).unwrap();
        assert!(none.arguments.is_none());
        let value: crate::contract::CallToolArgs = serde_json::from_value(
            serde_json::json!({"server": "s", "tool": "t", "arguments": {"a": 1}}),
        )
        .unwrap();
        assert_eq!(value.arguments.unwrap().to_map().unwrap()["a"], 1);
    }
}
