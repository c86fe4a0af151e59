//! The Tasks extension (SEP-2663) on one session: a task handle's id checked, `tasks/get` read
//! into a [`Poll`], a task's questions answered through the handler and sent with
//! `tasks/update`, and `tasks/cancel`. Following a task over time is `servers::follow`'s.

use rmcp::model::{
    CancelTaskParams, CancelTaskRequest, ClientRequest, GetTaskParams, GetTaskRequest,
    InputResponses, UpdateTaskParams, UpdateTaskRequest,
};
use serde_json::Value;

use std::collections::HashSet;

use rmcp::service::ServiceError;
use serde_json::json;

use super::connection::{Connection, within_server_time};
use crate::contract::CallError;
use crate::mcp::requester::Asker;
use crate::mcp::tasks::{Poll, read_poll};

/// An unknown or expired task (`tasks.mdx`: -32602).
const INVALID_PARAMS: i32 = -32602;

impl Connection {
    /// `tasks/get`: the task's state; a task the server does not know (-32602) is lost. A task
    /// of the 2025-11-25 form (`legacy`) that asks or has ended is read with
    /// `tasks/result`, during which the server asks its questions as requests (answered for
    /// `asker`).
    pub async fn get_task(
        &self,
        task_id: &str,
        legacy: bool,
        asker: &Asker,
    ) -> Result<Poll, CallError> {
        if legacy {
            return self.get_legacy_task(task_id, asker).await;
        }
        let request =
            ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(task_id)));
        match self.send(request, None).await {
            Ok(result) => {
                let value = serde_json::to_value(result).unwrap_or_default();
                read_poll(&value).map_err(|e| self.protocol(e))
            }
            Err(CallError::Server {
                code: INVALID_PARAMS,
                message,
                ..
            }) => Ok(Poll::lost(format!(
                "the server no longer knows the task: {}",
                crate::contract::shown::line(&message, crate::contract::shown::MAX_TEXT)
            ))),
            Err(e) => Err(e),
        }
    }

    /// Asks the task's questions (`requests`, each as the same request outside a task would be
    /// asked: same policy, same trust, same UI) and sends the answers with `tasks/update`.
    pub async fn answer_task(
        &self,
        task_id: &str,
        requests: Vec<(String, Value)>,
        asker: &Asker,
    ) -> Result<(), CallError> {
        let mut responses = InputResponses::new();
        for (key, request) in requests {
            let request = serde_json::from_value(request).map_err(|e| {
                self.protocol(format!("sent a task question that cannot be read: {e}"))
            })?;
            let answer = Box::pin(self.handler.answer_input(&key, request, asker))
                .await
                .map_err(CallError::Refused)?;
            responses.insert(key, answer);
        }
        let request = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
            UpdateTaskParams::new(task_id, responses),
        ));
        self.send(request, None).await.map(drop)
    }

    /// `tasks/cancel` (never `notifications/cancelled`, which the spec forbids for tasks).
    pub async fn cancel_task(&self, task_id: &str, legacy: bool) -> Result<(), CallError> {
        if legacy {
            return self
                .raw_request("tasks/cancel", &json!({"taskId": task_id}))
                .await
                .map(drop);
        }
        let request = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(
            CancelTaskParams::new(task_id),
        ));
        self.send(request, None).await.map(drop)
    }
}

/// The TTL a task-augmented call of the 2025-11-25 form asks for.
const LEGACY_TTL_MS: u64 = 300_000;

impl Connection {
    /// Whether this session's tasks take the 2025-11-25 form: a legacy stdio session (the
    /// sidecar writes those lines, so the form's members reach the server as written).
    fn legacy_tasks(&self) -> bool {
        !self.modern && self.direct.is_some()
    }

    /// The `params.task` of a call of `tool` in the 2025-11-25 form: for a legacy stdio server
    /// that lists the tool with `execution.taskSupport: "required"` (read once from its raw
    /// `tools/list`: rmcp's tool type drops `execution`, and its capabilities type `tasks`).
    pub(super) async fn task_augmentation(&self, tool: &str) -> Option<Value> {
        if !self.legacy_tasks() {
            return None;
        }
        let tools = self
            .task_tools
            .get_or_init(|| self.required_task_tools())
            .await;
        tools.contains(tool).then(|| json!({"ttl": LEGACY_TTL_MS}))
    }

    async fn required_task_tools(&self) -> HashSet<String> {
        let mut names = HashSet::new();
        let mut cursor: Option<String> = None;
        for _ in 0..super::listing::MAX_PAGES {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let page = match self.raw_request("tools/list", &params).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::info!(server = %self.server, "tools/list for task support failed: {e}");
                    break;
                }
            };
            for tool in page
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let required = tool
                    .pointer("/execution/taskSupport")
                    .and_then(Value::as_str)
                    == Some("required");
                if let (true, Some(name)) = (required, tool.get("name").and_then(Value::as_str)) {
                    names.insert(name.to_string());
                }
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) if cursor.as_deref() != Some(next) => cursor = Some(next.to_string()),
                _ => break,
            }
        }
        names
    }

    async fn get_legacy_task(&self, task_id: &str, asker: &Asker) -> Result<Poll, CallError> {
        let value = match self
            .raw_request("tasks/get", &json!({"taskId": task_id}))
            .await
        {
            Ok(value) => legacy_task(value),
            Err(CallError::Server {
                code: INVALID_PARAMS,
                message,
                ..
            }) => {
                return Ok(Poll::lost(format!(
                    "the server no longer knows the task: {}",
                    crate::contract::shown::line(&message, crate::contract::shown::MAX_TEXT)
                )));
            }
            Err(e) => return Err(e),
        };
        let status = value.get("status").and_then(Value::as_str).unwrap_or("");
        if !matches!(status, "input_required" | "completed") {
            return read_poll(&value).map_err(|e| self.protocol(e));
        }
        // The server asks its questions while `tasks/result` is open, as it does during a call.
        let _open = self.handler.calls.enter(asker.agent.clone());
        let mut poll = read_poll(&json!({"status": "working"})).map_err(|e| self.protocol(e))?;
        match self
            .raw_request("tasks/result", &json!({"taskId": task_id}))
            .await
        {
            Ok(result) => {
                poll.status = crate::contract::TaskState::Completed;
                poll.result = Some(result);
            }
            Err(CallError::Server { code, message, .. }) => {
                poll.status = crate::contract::TaskState::Failed;
                poll.error = Some(format!(
                    "{} ({code})",
                    crate::contract::shown::line(&message, crate::contract::shown::MAX_TEXT)
                ));
            }
            Err(e) => return Err(e),
        }
        Ok(poll)
    }

    /// A request written past rmcp's peer (a stdio session), its answer as JSON; the same time
    /// bound as any request, the person's time not counted.
    async fn raw_request(&self, method: &str, params: &Value) -> Result<Value, CallError> {
        let closed = || self.service_error(ServiceError::TransportClosed);
        let (direct, _) = self.direct.as_ref().ok_or_else(closed)?;
        let id = direct.next_id();
        let answer = direct.send(&id, method, params).ok_or_else(closed)?;
        let outcome =
            within_server_time(&self.handler.host.clock(&self.server), self.timeout, answer).await;
        let Some(outcome) = outcome else {
            direct.cancel(&id, "timed out");
            return Err(self.timeout_error());
        };
        match outcome.map_err(|_| closed())? {
            Ok(bytes) => serde_json::from_slice(&bytes)
                .map_err(|e| self.protocol(format!("answered {method} with {e}"))),
            Err(error) => Err(self.service_error(ServiceError::McpError(error))),
        }
    }
}

/// A 2025-11-25 task (`ttl`, `pollInterval`) in the 2026-07-28 spelling (`ttlMs`,
/// `pollIntervalMs`); a `CreateTaskResult`'s `{task: {…}}` unwrapped.
pub fn legacy_task(mut value: Value) -> Value {
    if let Some(task) = value.get_mut("task").filter(|t| t.is_object()) {
        value = task.take();
        value["resultType"] = json!("task");
    }
    if let Some(object) = value.as_object_mut() {
        for (old, new) in [("ttl", "ttlMs"), ("pollInterval", "pollIntervalMs")] {
            if let Some(v) = object.remove(old) {
                object.entry(new).or_insert(v);
            }
        }
    }
    value
}
