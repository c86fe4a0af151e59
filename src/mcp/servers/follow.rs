//! Following one task (Tasks extension) to its end: `tasks/get` at the server's
//! `pollIntervalMs` (never faster than [`MIN_POLL`], whatever it asks), its questions asked once
//! each and answered with `tasks/update`, a cancel sent as `tasks/cancel`. The follower runs on
//! its own, apart from the call that started the task: a caller that stops waiting asks for
//! the cancel through the book; a sidecar that stops leaves the task running, to be followed
//! again by the next one.

use std::sync::Arc;
use std::time::Duration;

use crate::contract::{CallError, TaskState};
use crate::mcp::requester::{Agent, Asker};
use crate::mcp::session::connection::Connection;
use crate::mcp::tasks::{Poll, TaskBook};

/// The shortest wait between two polls of one task.
pub const MIN_POLL: Duration = Duration::from_millis(100);
/// The wait when the server gives none, and the longest one the sidecar keeps to.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
const MAX_POLL: Duration = Duration::from_secs(60);
/// At most this many questions over a task's life.
pub const MAX_QUESTIONS: usize = 8;
/// Polls that fail in a row before the task is given up as lost.
const MAX_FAILURES: u32 = 5;
/// Polls after `tasks/cancel` before a task the server still runs is marked cancelled here.
const MAX_POLLS_AFTER_CANCEL: u32 = 10;

/// The connection a server has now, if it runs.
pub type Connect = Arc<dyn Fn(&str) -> Option<Arc<Connection>> + Send + Sync>;

/// How long to wait before the next poll, from what the server last asked.
pub fn interval(asked: Option<u64>) -> Duration {
    asked
        .map(Duration::from_millis)
        .unwrap_or(DEFAULT_POLL)
        .clamp(MIN_POLL, MAX_POLL)
}

/// Follows the task `task_id` of `server` until it ends, the book forgets it, or the sidecar
/// stops. Questions are asked for `agent` (`None`: the editor's own call).
pub async fn follow(
    book: Arc<TaskBook>,
    connect: Connect,
    mut changes: tokio::sync::watch::Receiver<u64>,
    server: String,
    task_id: String,
    agent: Option<Agent>,
) {
    let mut asker = Asker::of(agent);
    // "2026-12-05T10:30:00Z" → "10:30 UTC".
    asker.purpose = book.get(&server, &task_id).and_then(|info| {
        info.started_at
            .get(11..16)
            .map(|hm| format!("for the task started {hm} UTC"))
    });
    let mut failures = 0;
    let mut cancel_sent = false;
    let mut polls_after_cancel = 0;
    loop {
        let Some(plan) = book.plan(&server, &task_id) else {
            return;
        };
        if !plan.cancel_asked {
            tokio::select! {
                _ = tokio::time::sleep(interval(plan.interval)) => {}
                _ = plan.cancel.notified() => {}
            }
        } else {
            tokio::time::sleep(interval(plan.interval)).await;
        }
        if book.stopping() {
            return;
        }
        let Some(plan) = book.plan(&server, &task_id) else {
            return;
        };
        if plan.expired {
            book.record(&server, &task_id, &Poll::lost("its ttlMs passed".into()));
            return;
        }
        let Some(connection) = connect(&server) else {
            // Wait for the server to run again (a restart, a crash), and poll then.
            let _ = tokio::time::timeout(MAX_POLL, changes.changed()).await;
            continue;
        };
        if plan.cancel_asked && !cancel_sent {
            cancel_sent = true;
            if let Err(e) = Box::pin(connection.cancel_task(&task_id, plan.legacy)).await {
                tracing::info!(server, "tasks/cancel failed: {e}");
            }
        }
        if cancel_sent {
            polls_after_cancel += 1;
            if polls_after_cancel > MAX_POLLS_AFTER_CANCEL {
                let mut poll = Poll::lost("still running after tasks/cancel".into());
                poll.status = TaskState::Cancelled;
                book.record(&server, &task_id, &poll);
                return;
            }
        }
        // Boxed: a task waits far longer between polls than in one, and the request's future
        // (rmcp's, with its timeout) would otherwise stay in every follower's state.
        let poll = match Box::pin(connection.get_task(&task_id, plan.legacy, &asker)).await {
            Ok(poll) => {
                failures = 0;
                poll
            }
            Err(e) => {
                failures += 1;
                tracing::info!(server, "tasks/get failed ({failures} in a row): {e}");
                if failures >= MAX_FAILURES {
                    book.record(&server, &task_id, &Poll::lost(e.to_string()));
                    return;
                }
                continue;
            }
        };
        book.record(&server, &task_id, &poll);
        if poll.status.is_terminal() {
            return;
        }
        if poll.status == TaskState::InputRequired
            && !cancel_sent
            && let Err(e) = Box::pin(answer(
                &book,
                &connection,
                &server,
                &task_id,
                poll,
                &plan,
                &asker,
            ))
            .await
        {
            book.cancel(&server, &task_id);
            let mut failed = Poll::lost(e.to_string());
            failed.status = TaskState::Failed;
            if let Err(e) = Box::pin(connection.cancel_task(&task_id, plan.legacy)).await {
                tracing::info!(server, "tasks/cancel failed: {e}");
            }
            book.record(&server, &task_id, &failed);
            return;
        }
    }
}

/// Asks the questions not asked before (each key once over the task's life, marked before it is
/// asked) and sends the answers.
async fn answer(
    book: &TaskBook,
    connection: &Connection,
    server: &str,
    task_id: &str,
    poll: Poll,
    plan: &crate::mcp::tasks::Plan,
    asker: &Asker,
) -> Result<(), CallError> {
    let new: Vec<_> = poll
        .input_requests
        .into_iter()
        .filter(|(key, _)| !plan.answered.contains(key))
        .collect();
    if new.is_empty() {
        return Ok(());
    }
    if plan.answered.len() + new.len() > MAX_QUESTIONS {
        return Err(CallError::Refused(format!(
            "the task asked more than {MAX_QUESTIONS} questions; it was cancelled"
        )));
    }
    let keys: Vec<String> = new.iter().map(|(k, _)| k.clone()).collect();
    book.answered(server, task_id, &keys);
    connection.answer_task(task_id, new, asker).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interval_is_the_servers_within_bounds() {
        assert_eq!(interval(Some(250)), Duration::from_millis(250));
        assert_eq!(interval(Some(0)), MIN_POLL);
        assert_eq!(interval(None), DEFAULT_POLL);
        assert_eq!(interval(Some(u64::MAX)), MAX_POLL);
    }
}
