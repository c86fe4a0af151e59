//! Tasks (SEP-2663) as agents see them through the gateway. An agent that declares the
//! extension and calls a tool that becomes a task gets a handle under an id of the gateway's
//! own; its `tasks/get` and `tasks/cancel` are answered from the sidecar's task book, which the
//! sidecar keeps up to date by polling the server itself (the task's questions are asked in the
//! editor, so the agent sees `working` meanwhile).
//!
//! An id the agent sees is a keyed hash of (server, the server's task id), under a key random
//! for each gateway: it cannot be guessed, and it names one server's task only. Each id belongs
//! to the agent session that started the task (a tunnel or a legacy HTTP session); a
//! 2026-07-28 agent over HTTP has no session (each request stands alone), so its ids are
//! reachable by any such request that knows them, and by no session.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;
use rmcp::model::{
    CreateTaskResult, DetailedTask, ErrorData, GetTaskResult, JsonObject, Task, TaskPayload,
    TaskStatus,
};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::contract::{TaskInfo, TaskState};
use crate::mcp::Manager;

use super::names::Scope;

/// At most this many task ids are remembered; the oldest go first.
const MAX_TASKS: usize = 1024;

/// Who may reach a task by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The agent session (a tunnel or a legacy HTTP session) that started it.
    Session(u64),
    /// Any request without a session (2026-07-28 over HTTP) that knows the id.
    Sessionless,
}

struct Entry {
    server: String,
    task_id: String,
    owner: Owner,
    /// The server's `ttlMs` (`None`: no limit) and `pollIntervalMs`.
    ttl_ms: Option<u64>,
    poll_ms: u64,
    made: Instant,
}

/// The tasks agents started through one gateway, by the ids they see.
pub struct AgentTasks {
    key: [u8; 32],
    table: Mutex<HashMap<String, Entry>>,
}

impl Default for AgentTasks {
    fn default() -> Self {
        let mut key = [0u8; 32];
        match crate::net::secret() {
            Ok(secret) => key.copy_from_slice(&Sha256::digest(secret.as_bytes())),
            Err(e) => {
                // Still distinct per process and start; the session check stays.
                tracing::warn!("gateway: no random key for task ids ({e})");
                let seed = format!("{:?}{:?}", std::process::id(), std::time::SystemTime::now());
                key.copy_from_slice(&Sha256::digest(seed.as_bytes()));
            }
        }
        AgentTasks {
            key,
            table: Mutex::default(),
        }
    }
}

/// The interval an agent is asked to poll at: the one the sidecar polls the server at (its own
/// state changes no faster).
fn poll_ms(asked: Option<u64>) -> u64 {
    crate::mcp::task_poll_interval(asked).as_millis() as u64
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "no task {} here (unknown, expired, or another session's)",
            crate::contract::shown::line(id, crate::contract::shown::MAX_NAME)
        ),
        None,
    )
}

impl AgentTasks {
    /// The id the agent sees for `task_id` of `server`.
    fn id_of(&self, server: &str, task_id: &str) -> String {
        let mut hash = Sha256::new();
        hash.update(self.key);
        hash.update(server.as_bytes());
        hash.update([0]);
        hash.update(task_id.as_bytes());
        hash.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// Records a task a call of `owner` became (`created`: the server's `CreateTaskResult`);
    /// the handle the agent gets, from the sidecar's state of the task.
    pub fn start(&self, owner: Owner, info: &TaskInfo, created: &Value) -> CreateTaskResult {
        let number = |key: &str| created.get(key).and_then(Value::as_u64);
        let id = self.id_of(&info.server, &info.task_id);
        let entry = Entry {
            server: info.server.clone(),
            task_id: info.task_id.clone(),
            owner,
            ttl_ms: number("ttlMs"),
            poll_ms: poll_ms(number("pollIntervalMs")),
            made: Instant::now(),
        };
        let task = task_of(&id, info, &entry);
        let mut table = self.table.lock();
        table.insert(id, entry);
        while table.len() > MAX_TASKS {
            let oldest = table
                .iter()
                .min_by_key(|(_, e)| e.made)
                .map(|(id, _)| id.clone());
            match oldest {
                Some(id) => table.remove(&id),
                None => break,
            };
        }
        CreateTaskResult::new(task)
    }

    /// The (server, task id) behind `id`, when `owner` in `scope` may reach it.
    fn find(&self, owner: Owner, scope: &Scope, id: &str) -> Result<(String, String), ErrorData> {
        let table = self.table.lock();
        table
            .get(id)
            .filter(|e| e.owner == owner && scope.covers(&e.server))
            .map(|e| (e.server.clone(), e.task_id.clone()))
            .ok_or_else(|| unknown(id))
    }

    /// `tasks/get`: the task as the sidecar knows it now.
    pub fn get(
        &self,
        manager: &Manager,
        owner: Owner,
        scope: &Scope,
        id: &str,
    ) -> Result<GetTaskResult, ErrorData> {
        let (server, task_id) = self.find(owner, scope, id)?;
        let Some(info) = manager.task(&server, &task_id) else {
            // The book forgot it (finished long ago): so does the gateway.
            self.table.lock().remove(id);
            return Err(unknown(id));
        };
        let table = self.table.lock();
        let entry = table.get(id).ok_or_else(|| unknown(id))?;
        let task = task_of(id, &info, entry);
        let payload = match info.status {
            TaskState::Working | TaskState::InputRequired => TaskPayload::Working,
            TaskState::Completed => match info.result.clone() {
                Some(Value::Object(result)) => TaskPayload::Completed { result },
                _ => failed("the task completed without a result"),
            },
            TaskState::Cancelled => TaskPayload::Cancelled,
            TaskState::Failed => failed(info.error.as_deref().unwrap_or("the task failed")),
            TaskState::Lost => failed(&format!(
                "the sidecar lost the task: {}",
                info.error
                    .as_deref()
                    .unwrap_or("the server no longer knows it")
            )),
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// `tasks/update`: nothing to answer (the task's questions are answered in the editor),
    /// once the task is known.
    pub fn update(&self, owner: Owner, scope: &Scope, id: &str) -> Result<(), ErrorData> {
        self.find(owner, scope, id).map(|_| ())
    }

    /// `tasks/cancel`: asks the sidecar to cancel the task at its server; a task that has ended
    /// is invalid params.
    pub fn cancel(
        &self,
        manager: &Manager,
        owner: Owner,
        scope: &Scope,
        id: &str,
    ) -> Result<(), ErrorData> {
        let (server, task_id) = self.find(owner, scope, id)?;
        let info = manager
            .cancel_task(&server, &task_id)
            .map_err(|_| unknown(id))?;
        if info.status.is_terminal() {
            return Err(ErrorData::invalid_params(
                format!("the task {id} has ended already ({:?})", info.status),
                None,
            ));
        }
        Ok(())
    }
}

/// A failed task's payload: a JSON-RPC error object (the sidecar keeps the server's message,
/// with its code in it, not the code alone).
fn failed(message: &str) -> TaskPayload {
    let mut error = JsonObject::new();
    error.insert("code".into(), Value::from(-32603));
    error.insert("message".into(), Value::from(message));
    TaskPayload::Failed { error }
}

/// The task as the agent sees it: its id, and the sidecar's state and times.
fn task_of(id: &str, info: &TaskInfo, entry: &Entry) -> Task {
    let status = match info.status {
        TaskState::Working | TaskState::InputRequired => TaskStatus::Working,
        TaskState::Completed => TaskStatus::Completed,
        TaskState::Cancelled => TaskStatus::Cancelled,
        TaskState::Failed | TaskState::Lost => TaskStatus::Failed,
    };
    let mut task = Task::new(id, status, &info.started_at, &info.updated_at);
    task.ttl_ms = entry.ttl_ms;
    task.poll_interval_ms = Some(entry.poll_ms);
    task.status_message = info.status_message.clone();
    task
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_one_servers_task_and_cannot_be_made_elsewhere() {
        let one = AgentTasks::default();
        let other = AgentTasks::default();
        let id = one.id_of("a", "t1");
        assert_eq!(id.len(), 32);
        assert_eq!(id, one.id_of("a", "t1"));
        assert_ne!(id, one.id_of("b", "t1"));
        assert_ne!(id, one.id_of("a", "t2"));
        // (server, id) pairs that run together as bytes differ.
        assert_ne!(one.id_of("ab", "c"), one.id_of("a", "bc"));
        assert_ne!(id, other.id_of("a", "t1"), "another gateway's key");
    }

    #[test]
    fn the_poll_interval_is_the_servers_within_bounds() {
        assert_eq!(poll_ms(Some(250)), 250);
        assert_eq!(poll_ms(Some(0)), 100);
        assert_eq!(poll_ms(None), 1000);
        assert_eq!(poll_ms(Some(u64::MAX)), 60_000);
    }
}
