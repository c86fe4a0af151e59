//! The tasks the sidecar follows (Tasks extension, SEP-2663): what each one is, for the faces
//! (`listTasks`, `taskStatus`, an agent's own polls) and for a sidecar started later. Kept in
//! `<state>/tasks/<workspace>.json` (`0600`), rewritten atomically when a task changes (never
//! for a poll that changes nothing); running tasks are followed again after a restart.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use tokio::sync::{Notify, watch};

use crate::contract::{TaskInfo, TaskState};
use crate::mcp::host::{Event, Host};
use serde_json::Value;

/// Finished tasks are kept this long, and at most [`KEEP_FINISHED`] of them.
const KEEP_FOR: Duration = Duration::from_secs(24 * 3600);
const KEEP_FINISHED: usize = 100;
/// A finished task's result is kept for `listTasks` up to this size (JSON bytes).
const MAX_KEPT_RESULT: usize = 256 * 1024;
/// The file is read up to this size.
const MAX_FILE: u64 = 16 * 1024 * 1024;

/// One task as the book keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stored {
    info: TaskInfo,
    /// The input request keys already answered (never answered twice).
    #[serde(default)]
    answered: BTreeSet<String>,
    #[serde(default)]
    poll_interval_ms: Option<u64>,
    #[serde(default)]
    ttl_ms: Option<u64>,
    /// When the sidecar first saw the task (seconds since the epoch), for its `ttlMs`.
    seen: u64,
    /// The 2025-11-25 form (`tasks/result`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    legacy: bool,
}

struct Entry {
    stored: Stored,
    changes: watch::Sender<TaskInfo>,
    /// Set when a cancel was asked for; `cancel` wakes the task's follower.
    cancel_asked: bool,
    cancel: Arc<Notify>,
}

pub struct TaskBook {
    host: Arc<Host>,
    path: Option<PathBuf>,
    entries: Mutex<Vec<Entry>>,
    stopping: AtomicBool,
}

/// What a follower needs to know of its task before each poll.
#[derive(Debug, Clone)]
pub struct Plan {
    pub interval: Option<u64>,
    /// Whether the task's `ttlMs` has passed.
    pub expired: bool,
    pub cancel_asked: bool,
    pub answered: BTreeSet<String>,
    /// The 2025-11-25 form.
    pub legacy: bool,
    pub cancel: Arc<Notify>,
}

impl TaskBook {
    /// The book of the workspace named `workspace`, read from its file (a file that cannot be
    /// read is left alone: one log line, an empty book).
    pub fn load(host: Arc<Host>, workspace: &str) -> Arc<TaskBook> {
        let path =
            crate::store::state_file("tasks").map(|dir| dir.join(format!("{workspace}.json")));
        TaskBook::open(host, path)
    }

    /// The book kept in `path` (`None`: in memory only).
    pub fn open(host: Arc<Host>, path: Option<PathBuf>) -> Arc<TaskBook> {
        let stored: Vec<Stored> = match &path {
            Some(path) if path.exists() => match crate::store::read_private(path, MAX_FILE)
                .map_err(|e| e.to_string())
                .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()))
            {
                Ok(stored) => stored,
                Err(e) => {
                    tracing::warn!("the tasks file {} cannot be read: {e}", path.display());
                    Vec::new()
                }
            },
            _ => Vec::new(),
        };
        let entries = stored.into_iter().map(Entry::new).collect();
        let book = TaskBook {
            host,
            path,
            entries: Mutex::new(entries),
            stopping: AtomicBool::new(false),
        };
        // A book read as it was is not written (a workspace without tasks gets no file).
        if book.prune() {
            book.save();
        }
        Arc::new(book)
    }

    /// Records a task a `tools/call` became, from its `CreateTaskResult` state.
    pub fn start(&self, server: &str, tool: &str, task_id: &str, poll: &Poll, legacy: bool) {
        let now = now();
        // A handle carries no result: a task born ended is polled once for it.
        let status = if poll.status.is_terminal() {
            TaskState::Working
        } else {
            poll.status
        };
        let info = TaskInfo {
            server: server.to_string(),
            task_id: task_id.to_string(),
            tool: tool.to_string(),
            status,
            status_message: poll.status_message.clone(),
            started_at: rfc3339(now),
            updated_at: rfc3339(now),
            result: None,
            error: None,
        };
        let stored = Stored {
            info: info.clone(),
            answered: BTreeSet::new(),
            poll_interval_ms: poll.poll_interval_ms,
            ttl_ms: poll.ttl_ms,
            seen: now.as_secs(),
            legacy,
        };
        {
            let mut entries = self.entries.lock();
            entries
                .retain(|e| !(e.stored.info.server == server && e.stored.info.task_id == task_id));
            entries.push(Entry::new(stored));
        }
        self.changed(info);
    }

    /// What one poll said: a change of status, message, result or interval is kept (and told);
    /// the same answer again changes nothing.
    pub fn record(&self, server: &str, task_id: &str, poll: &Poll) {
        let info = {
            let mut entries = self.entries.lock();
            let Some(entry) = find(&mut entries, server, task_id) else {
                return;
            };
            let s = &mut entry.stored;
            if poll.poll_interval_ms.is_some() {
                s.poll_interval_ms = poll.poll_interval_ms;
            }
            if poll.ttl_ms.is_some() {
                s.ttl_ms = poll.ttl_ms;
            }
            let result = poll.result.clone();
            let same = s.info.status == poll.status
                && s.info.status_message == poll.status_message
                && s.info.result == result
                && s.info.error == poll.error;
            if same || s.info.status.is_terminal() {
                return;
            }
            s.info.status = poll.status;
            s.info.status_message = poll.status_message.clone();
            s.info.result = result;
            s.info.error = poll.error.clone();
            s.info.updated_at = rfc3339(now());
            s.info.clone()
        };
        self.changed(info);
    }

    /// Marks `keys` answered (before they are asked, so a key is never asked twice).
    pub fn answered(&self, server: &str, task_id: &str, keys: &[String]) {
        {
            let mut entries = self.entries.lock();
            let Some(entry) = find(&mut entries, server, task_id) else {
                return;
            };
            entry.stored.answered.extend(keys.iter().cloned());
        }
        self.save();
    }

    /// What the follower of a task needs before its next poll; `None` once the task is gone
    /// from the book.
    pub fn plan(&self, server: &str, task_id: &str) -> Option<Plan> {
        let mut entries = self.entries.lock();
        let entry = find(&mut entries, server, task_id)?;
        let s = &entry.stored;
        let expired = s
            .ttl_ms
            .is_some_and(|ttl| now().as_millis() > u128::from(s.seen) * 1000 + u128::from(ttl));
        Some(Plan {
            interval: s.poll_interval_ms,
            expired,
            cancel_asked: entry.cancel_asked,
            answered: s.answered.clone(),
            legacy: s.legacy,
            cancel: entry.cancel.clone(),
        })
    }

    /// Asks the task's follower to send `tasks/cancel`; `None` for a task the book does not
    /// know, else the task as it is now.
    pub fn cancel(&self, server: &str, task_id: &str) -> Option<TaskInfo> {
        let mut entries = self.entries.lock();
        let entry = find(&mut entries, server, task_id)?;
        if !entry.stored.info.status.is_terminal() {
            entry.cancel_asked = true;
            entry.cancel.notify_one();
        }
        Some(entry.stored.info.clone())
    }

    /// The task's changes, from its state now.
    pub fn watch(&self, server: &str, task_id: &str) -> Option<watch::Receiver<TaskInfo>> {
        let mut entries = self.entries.lock();
        find(&mut entries, server, task_id).map(|e| e.changes.subscribe())
    }

    /// One task.
    pub fn get(&self, server: &str, task_id: &str) -> Option<TaskInfo> {
        let mut entries = self.entries.lock();
        find(&mut entries, server, task_id).map(|e| e.stored.info.clone())
    }

    /// Every task: running ones first, then the finished, newest first in each.
    pub fn list(&self) -> Vec<TaskInfo> {
        let mut rows: Vec<TaskInfo> = self
            .entries
            .lock()
            .iter()
            .map(|e| e.stored.info.clone())
            .collect();
        rows.sort_by(|a, b| {
            (a.status.is_terminal(), std::cmp::Reverse(&a.started_at))
                .cmp(&(b.status.is_terminal(), std::cmp::Reverse(&b.started_at)))
        });
        rows
    }

    /// The running tasks (server, task id, tool), to follow again.
    pub fn running(&self) -> Vec<(String, String)> {
        self.entries
            .lock()
            .iter()
            .filter(|e| !e.stored.info.status.is_terminal())
            .map(|e| (e.stored.info.server.clone(), e.stored.info.task_id.clone()))
            .collect()
    }

    /// The sidecar is stopping: followers end without touching their tasks, and calls that go
    /// away do not cancel theirs.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let entries = self.entries.lock();
        for entry in entries.iter() {
            entry.cancel.notify_one();
        }
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    fn changed(&self, info: TaskInfo) {
        {
            let mut entries = self.entries.lock();
            if let Some(entry) = find(&mut entries, &info.server, &info.task_id) {
                entry.changes.send_replace(info.clone());
            }
        }
        self.prune();
        self.save();
        self.host.emit(Event::Task(info));
    }

    /// Drops finished tasks past [`KEEP_FOR`] or beyond [`KEEP_FINISHED`]; whether it dropped any.
    fn prune(&self) -> bool {
        let mut entries = self.entries.lock();
        let before = entries.len();
        let cutoff = now().saturating_sub(KEEP_FOR).as_secs();
        entries.retain(|e| !e.stored.info.status.is_terminal() || e.stored.seen >= cutoff);
        let finished = entries
            .iter()
            .filter(|e| e.stored.info.status.is_terminal())
            .count();
        let mut extra = finished.saturating_sub(KEEP_FINISHED);
        entries.retain(|e| {
            let drop = extra > 0 && e.stored.info.status.is_terminal();
            extra -= usize::from(drop);
            !drop
        });
        entries.len() != before
    }

    fn save(&self) {
        let Some(path) = &self.path else { return };
        let bytes = {
            let entries = self.entries.lock();
            let stored: Vec<Stored> = entries.iter().map(|e| kept(&e.stored)).collect();
            serde_json::to_vec(&stored).unwrap_or_default()
        };
        if let Err(e) = crate::store::write_atomic(path, &bytes) {
            tracing::warn!("could not write {}: {e}", path.display());
        }
    }
}

/// A task as the file keeps it: a result over [`MAX_KEPT_RESULT`] is replaced by a note (the
/// call, the editor and an agent got it whole).
fn kept(stored: &Stored) -> Stored {
    let mut kept = stored.clone();
    if let Some(result) = &stored.info.result {
        let size = serde_json::to_vec(result).map_or(0, |v| v.len());
        if size > MAX_KEPT_RESULT {
            kept.info.result = Some(serde_json::json!({"content": [{"type": "text",
                "text": format!("the result ({size} bytes) was delivered; it is too big to keep")}]}));
        }
    }
    kept
}

impl Entry {
    fn new(stored: Stored) -> Entry {
        Entry {
            changes: watch::Sender::new(stored.info.clone()),
            stored,
            cancel_asked: false,
            cancel: Arc::new(Notify::new()),
        }
    }
}

fn find<'a>(entries: &'a mut [Entry], server: &str, task_id: &str) -> Option<&'a mut Entry> {
    entries
        .iter_mut()
        .find(|e| e.stored.info.server == server && e.stored.info.task_id == task_id)
}

fn now() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// `since` (from the epoch) as RFC 3339 UTC, to the second.
pub fn rfc3339(since: Duration) -> String {
    let secs = since.as_secs();
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// A task that ended badly, for a caller that waited for its result.
pub fn outcome(info: &TaskInfo) -> Result<serde_json::Value, crate::contract::CallError> {
    use crate::contract::CallError;
    use crate::contract::shown;
    let why = || info.error.clone().unwrap_or_default();
    // The id is the server's: shown as one short line.
    let task = shown::line(&info.task_id, shown::MAX_NAME);
    match info.status {
        TaskState::Completed => Ok(info.result.clone().unwrap_or_default()),
        TaskState::Cancelled => Err(CallError::Cancelled),
        TaskState::Failed => Err(CallError::Refused(format!(
            "the task {task} of \"{}\" failed: {}",
            info.server,
            why()
        ))),
        TaskState::Lost => Err(CallError::Refused(format!(
            "the task {task} of \"{}\" was lost: {}",
            info.server,
            why()
        ))),
        TaskState::Working | TaskState::InputRequired => Err(CallError::Refused(format!(
            "the task {task} of \"{}\" has not ended",
            info.server
        ))),
    }
}

/// The longest task id the sidecar keeps (bytes); a longer one is a protocol error.
pub const MAX_TASK_ID: usize = 1024;
/// At most this many questions in one `tasks/get` answer.
const MAX_INPUT_REQUESTS: usize = 16;

/// The id of a `CreateTaskResult`.
pub fn task_id(created: &Value) -> Result<String, String> {
    let id = created
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or("sent a task handle without a taskId string")?;
    if id.is_empty() || id.len() > MAX_TASK_ID {
        return Err(format!(
            "sent a task id of {} bytes (at most {MAX_TASK_ID})",
            id.len()
        ));
    }
    Ok(id.to_string())
}

/// What one `tasks/get` (or the `CreateTaskResult`) says of a task.
#[derive(Debug, Clone, PartialEq)]
pub struct Poll {
    pub status: TaskState,
    pub status_message: Option<String>,
    pub poll_interval_ms: Option<u64>,
    pub ttl_ms: Option<u64>,
    /// The questions of an `input_required` task: key and request, as sent (forms' schemas
    /// stashed raw by the transport).
    pub input_requests: Vec<(String, Value)>,
    /// A completed task's `CallToolResult`.
    pub result: Option<Value>,
    /// Why a task failed or was lost.
    pub error: Option<String>,
}

impl Poll {
    /// A task the server no longer knows.
    pub fn lost(why: String) -> Poll {
        Poll {
            status: TaskState::Lost,
            status_message: None,
            poll_interval_ms: None,
            ttl_ms: None,
            input_requests: Vec::new(),
            result: None,
            error: Some(why),
        }
    }
}

/// Reads a task's state from a `tasks/get` result or a `CreateTaskResult`.
pub fn read_poll(value: &Value) -> Result<Poll, String> {
    let status = match value.get("status").and_then(Value::as_str) {
        Some("working") => TaskState::Working,
        Some("input_required") => TaskState::InputRequired,
        Some("completed") => TaskState::Completed,
        Some("failed") => TaskState::Failed,
        Some("cancelled") => TaskState::Cancelled,
        Some(other) => {
            return Err(format!(
                "sent the unknown task status \"{}\"",
                crate::contract::shown::line(other, crate::contract::shown::MAX_NAME)
            ));
        }
        None => return Err("sent a task without a status".into()),
    };
    let number = |key| value.get(key).and_then(Value::as_u64);
    let mut input_requests = Vec::new();
    if status == TaskState::InputRequired {
        let requests = value
            .get("inputRequests")
            .and_then(Value::as_object)
            .ok_or("sent an input_required task without inputRequests")?;
        if requests.len() > MAX_INPUT_REQUESTS {
            return Err(format!(
                "asked {} questions at once (at most {MAX_INPUT_REQUESTS})",
                requests.len()
            ));
        }
        input_requests = requests
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
    }
    let result = (status == TaskState::Completed)
        .then(|| value.get("result").filter(|r| r.is_object()).cloned())
        .flatten();
    if status == TaskState::Completed && result.is_none() {
        return Err("sent a completed task without a result object".into());
    }
    let error = (status == TaskState::Failed).then(|| {
        let error = value.get("error");
        let message = error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the task failed");
        let code = error.and_then(|e| e.get("code")).and_then(Value::as_i64);
        let message = crate::contract::shown::line(message, crate::contract::shown::MAX_TEXT);
        match code {
            Some(code) => format!("{message} ({code})"),
            None => message.into_owned(),
        }
    });
    Ok(Poll {
        status,
        status_message: value
            .get("statusMessage")
            .and_then(Value::as_str)
            .map(|m| crate::contract::shown::line(m, crate::contract::shown::MAX_TEXT).into()),
        poll_interval_ms: number("pollIntervalMs"),
        ttl_ms: number("ttlMs"),
        input_requests,
        result,
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn poll(status: &str, result: Option<Value>) -> Poll {
        let mut value = json!({"status": status});
        if let Some(result) = result {
            value["result"] = result;
        }
        read_poll(&value).unwrap()
    }

    #[test]
    fn a_task_born_ended_is_polled_for_its_result_and_a_big_one_is_kept_whole_in_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.json");
        let (host, _events) = Host::new();
        let book = TaskBook::open(host.clone(), Some(path.clone()));
        book.start("s", "slow", "t1", &poll("working", None), false);
        // A handle that says "completed" has no result: the task stays to be polled.
        let mut born_ended = poll("working", None);
        born_ended.status = TaskState::Completed;
        book.start("s", "quick", "t2", &born_ended, false);
        assert_eq!(book.get("s", "t2").unwrap().status, TaskState::Working);
        let big = json!({"content": [{"type": "text", "text": "x".repeat(MAX_KEPT_RESULT + 1)}]});
        book.record("s", "t2", &poll("completed", Some(big.clone())));
        assert_eq!(book.get("s", "t2").unwrap().result, Some(big));
        // The file has a note instead, and the running task; it is private.
        let file: Vec<Stored> = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let done = file.iter().find(|s| s.info.task_id == "t2").unwrap();
        let text = done.info.result.as_ref().unwrap()["content"][0]["text"].to_string();
        assert!(text.contains("too big to keep"), "{text}");
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        // A book with nothing to change writes nothing (a workspace without tasks has no file).
        let empty = dir.path().join("none.json");
        drop(TaskBook::open(host.clone(), Some(empty.clone())));
        assert!(!empty.exists());
        // A file that is not a book is left alone: an empty book, no panic, nothing written.
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, b"{\"not\": [a book").unwrap();
        std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert!(
            TaskBook::open(host.clone(), Some(broken.clone()))
                .list()
                .is_empty()
        );
        assert_eq!(std::fs::read(&broken).unwrap(), b"{\"not\": [a book");
        // A new book of the same file follows the running task again, and lists the finished.
        let again = TaskBook::open(host, Some(path));
        assert_eq!(again.running(), vec![("s".to_string(), "t1".to_string())]);
        assert_eq!(again.list().len(), 2);
        // An ended task does not come back to life.
        again.record("s", "t2", &poll("working", None));
        assert_eq!(again.get("s", "t2").unwrap().status, TaskState::Completed);
    }

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(rfc3339(Duration::ZERO), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            rfc3339(Duration::from_secs(1_796_445_045)),
            "2026-12-05T04:30:45Z"
        );
    }

    use serde_json::json;

    #[test]
    fn a_poll_reads_every_status_and_refuses_what_does_not_fit() {
        let working = read_poll(&json!({"status": "working", "statusMessage": "a\nb", "pollIntervalMs": 0, "ttlMs": null})).unwrap();
        assert_eq!(working.status, TaskState::Working);
        assert_eq!(working.status_message.as_deref(), Some("a b"));
        assert_eq!(working.poll_interval_ms, Some(0));
        assert_eq!(working.ttl_ms, None);
        let asks = read_poll(&json!({"status": "input_required", "inputRequests": {"k": {"method": "elicitation/create"}}})).unwrap();
        assert_eq!(asks.input_requests.len(), 1);
        let done = read_poll(&json!({"status": "completed", "result": {"content": []}})).unwrap();
        assert_eq!(done.result, Some(json!({"content": []})));
        let failed =
            read_poll(&json!({"status": "failed", "error": {"code": -32000, "message": "boom"}}))
                .unwrap();
        assert_eq!(failed.error.as_deref(), Some("boom (-32000)"));
        for bad in [
            json!({"status": "sleeping"}),
            json!({}),
            json!({"status": "input_required"}),
            json!({"status": "completed"}),
        ] {
            assert!(read_poll(&bad).is_err(), "{bad}");
        }
        let many: serde_json::Map<String, Value> =
            (0..17).map(|i| (format!("k{i}"), json!({}))).collect();
        assert!(read_poll(&json!({"status": "input_required", "inputRequests": many})).is_err());
    }

    #[test]
    fn a_task_id_is_a_short_string() {
        assert_eq!(task_id(&json!({"taskId": "t1"})).unwrap(), "t1");
        assert!(task_id(&json!({"taskId": 1})).is_err());
        assert!(task_id(&json!({"taskId": ""})).is_err());
        assert!(task_id(&json!({"taskId": "x".repeat(MAX_TASK_ID + 1)})).is_err());
    }
}
