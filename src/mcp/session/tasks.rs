//! The Tasks extension (SEP-2663) on one session: a task handle's id checked, `tasks/get` read
//! into a [`Poll`], a task's questions answered through the handler and sent with
//! `tasks/update`, and `tasks/cancel`. Following a task over time is `servers::follow`'s.

use rmcp::model::{
    CancelTaskParams, CancelTaskRequest, ClientRequest, GetTaskParams, GetTaskRequest,
    InputResponses, UpdateTaskParams, UpdateTaskRequest,
};
use serde_json::Value;

use super::connection::Connection;
use crate::contract::CallError;
use crate::mcp::requester::Asker;
use crate::mcp::tasks::{Poll, read_poll};

/// An unknown or expired task (`tasks.mdx`: -32602).
const INVALID_PARAMS: i32 = -32602;

impl Connection {
    /// `tasks/get`: the task's state; a task the server does not know (-32602) is lost.
    pub async fn get_task(&self, task_id: &str) -> Result<Poll, CallError> {
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
    pub async fn cancel_task(&self, task_id: &str) -> Result<(), CallError> {
        let request = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(
            CancelTaskParams::new(task_id),
        ));
        self.send(request, None).await.map(drop)
    }
}
