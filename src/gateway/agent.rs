#![allow(deprecated)] // sampling: deprecated by SEP-2577, still in the protocol
//! The agent behind one call: its name as prompts show it, whether it answers the servers'
//! questions itself (`gateway.questions`), and the progress it is sent: the server's own, and
//! keep-alive notifications while a person answers a question of the call.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use rmcp::{
    RoleServer,
    model::{
        CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
        ProgressNotificationParam,
    },
    service::{ElicitationMode, Peer, RequestContext},
};
use tokio::sync::{mpsc, watch};

use crate::config::Questions;
use crate::mcp::requester::{Agent, AgentAnswers};
use crate::mcp::{ProgressFn, ProgressUpdate};

/// Longest agent name a prompt shows (longer names are cut, with `…`).
pub const MAX_NAME: usize = 48;
/// The name shown for an agent that gave none.
pub const UNNAMED: &str = "an agent";
/// The message of a keep-alive progress notification.
pub const KEEP_ALIVE_MESSAGE: &str = "waiting for the person to answer in the editor";
/// How much a keep-alive notification adds to the last progress sent (progress must increase).
const KEEP_ALIVE_STEP: f64 = 0.001;

/// Milliseconds between keep-alive notifications (10 s; tests shorten it).
static KEEP_ALIVE_MS: AtomicU64 = AtomicU64::new(10_000);

/// Sets the time between keep-alive notifications, for the whole process (an internal knob
/// for tests).
#[doc(hidden)]
pub fn set_keep_alive_interval(every: Duration) {
    KEEP_ALIVE_MS.store(every.as_millis().max(1) as u64, Ordering::Relaxed);
}

fn keep_alive_interval() -> Duration {
    Duration::from_millis(KEEP_ALIVE_MS.load(Ordering::Relaxed))
}

/// An agent's self-declared name made safe to show: control, bidi and invisible characters
/// removed, whitespace runs made one space, at most [`MAX_NAME`] characters. It is shown as
/// plain text only.
pub fn display_name(raw: Option<&str>) -> String {
    let kept: String = raw
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .filter(|c| !c.is_control() && !invisible(*c))
        .collect();
    let words: Vec<&str> = kept.split_whitespace().collect();
    let name = words.join(" ");
    if name.is_empty() {
        return UNNAMED.to_string();
    }
    if name.chars().count() <= MAX_NAME {
        return name;
    }
    let cut: String = name.chars().take(MAX_NAME - 1).collect();
    format!("{}…", cut.trim_end())
}

/// Bidi controls and zero-width characters, which could make a name read as something else.
fn invisible(c: char) -> bool {
    matches!(c,
        '\u{061C}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}'
        | '\u{FEFF}' | '\u{00AD}')
}

/// The agent asking in `context`: its name (the request's `_meta` client info on 2026-07-28,
/// else `initialize`'s `clientInfo.name`), and its own answers when `questions` is `agent` and
/// the session can take server→client requests (a legacy one).
pub fn of(
    context: &RequestContext<RoleServer>,
    session: u64,
    questions: Questions,
    open: Arc<watch::Sender<usize>>,
) -> Agent {
    let info = context.client_info();
    let name = display_name(info.as_ref().map(|i| i.name.as_str()));
    let legacy = context
        .protocol_version()
        .is_some_and(|v| v.as_str() < rmcp::model::ProtocolVersion::V_2026_07_28.as_str());
    let answers = (questions == Questions::Agent && legacy)
        .then(|| Arc::new(PeerAnswers(context.peer.clone())) as Arc<dyn AgentAnswers>);
    Agent {
        session,
        name,
        answers,
        open,
    }
}

/// A legacy agent session's own elicitation and sampling, as it declared them.
struct PeerAnswers(Peer<RoleServer>);

impl AgentAnswers for PeerAnswers {
    fn elicits(&self, url: bool) -> bool {
        let mode = if url {
            ElicitationMode::Url
        } else {
            ElicitationMode::Form
        };
        self.0.supported_elicitation_modes().contains(&mode)
    }

    fn samples(&self) -> bool {
        self.0
            .peer_info()
            .is_some_and(|info| info.capabilities.sampling.is_some())
    }

    fn elicit(&self, params: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, String>> {
        Box::pin(async move {
            self.0
                .create_elicitation(params)
                .await
                .map_err(|e| e.to_string())
        })
    }

    fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, String>> {
        Box::pin(async move {
            self.0
                .create_message(params)
                .await
                .map_err(|e| e.to_string())
        })
    }
}

enum Up {
    Server(ProgressUpdate),
    /// A person answers one of the call's questions.
    KeepAlive,
    /// The call waits for its task (the last task status is repeated).
    TaskAlive,
}

/// The value after `last` for an update that has none of its own (a task's status, a
/// keep-alive): one more when there is no total, else a thousandth more.
fn next_value(last: Option<(f64, Option<f64>)>) -> (f64, Option<f64>) {
    match last {
        None => (0.0, None),
        Some((before, None)) => (before + 1.0, None),
        Some((before, total)) => (before + KEEP_ALIVE_STEP, total),
    }
}

/// What the agent is sent for each update: values that always increase, finite ones.
#[derive(Default)]
struct Values {
    last: Option<(f64, Option<f64>)>,
    /// The last task status, repeated while the call waits for its task.
    task: Option<String>,
}

impl Values {
    fn next(&mut self, up: Up) -> (f64, Option<f64>, Option<String>) {
        let (value, total, message) = match up {
            // A task's status has no value of its own (NaN).
            Up::Server(update) if !update.progress.is_finite() => {
                self.task = update.message.clone();
                let (value, total) = next_value(self.last);
                (value, total, update.message)
            }
            Up::Server(update) => {
                let value = match self.last {
                    Some((before, _)) if update.progress <= before => before + KEEP_ALIVE_STEP,
                    _ => update.progress,
                };
                let total = update.total.filter(|t| t.is_finite());
                (value, total, update.message)
            }
            Up::KeepAlive => {
                let (value, total) = self.last.map_or((0.0, None), |(before, total)| {
                    (before + KEEP_ALIVE_STEP, total)
                });
                (value, total, Some(KEEP_ALIVE_MESSAGE.to_string()))
            }
            Up::TaskAlive => {
                let (value, total) = next_value(self.last);
                (value, total, self.task.clone())
            }
        };
        self.last = Some((value, total));
        (value, total, message)
    }
}

/// The progress of one call, when the agent asked for it (a `progressToken`): the server's
/// progress passed on in order; while a person answers one of the call's questions
/// (`open` > 0) a keep-alive every interval; while the call waits for its task, the task's
/// status when it changes and again every interval. The values sent always increase.
pub fn progress(
    context: &RequestContext<RoleServer>,
    open: &Arc<watch::Sender<usize>>,
) -> Option<ProgressFn> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<Up>();
    tokio::spawn(async move {
        let mut values = Values::default();
        while let Some(up) = rx.recv().await {
            let (value, total, message) = values.next(up);
            let mut param = ProgressNotificationParam::new(token.clone(), value);
            param.total = total;
            param.message = message;
            if peer.notify_progress(param).await.is_err() {
                break;
            }
        }
    });
    let ticks = tx.clone();
    let mut waiting = open.subscribe();
    let (tasking, mut task_waits) = watch::channel(false);
    tokio::spawn(async move {
        // Ends when the call is over (its progress is dropped, or every sender of `open` is
        // gone) or the agent went.
        loop {
            let person = *waiting.borrow_and_update() > 0;
            let task = *task_waits.borrow_and_update();
            let tick = async {
                if person || task {
                    tokio::time::sleep(keep_alive_interval()).await
                } else {
                    std::future::pending().await
                }
            };
            tokio::select! {
                _ = tick => {
                    let up = if person { Up::KeepAlive } else { Up::TaskAlive };
                    if ticks.send(up).is_err() {
                        return;
                    }
                }
                changed = waiting.changed() => if changed.is_err() { return },
                changed = task_waits.changed() => if changed.is_err() { return },
            }
        }
    });
    Some(Arc::new(move |update| {
        if !update.progress.is_finite() {
            tasking.send_if_modified(|waits| !std::mem::replace(waits, true));
        }
        let _ = tx.send(Up::Server(update));
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(progress: f64, total: Option<f64>, message: &str) -> Up {
        Up::Server(ProgressUpdate {
            progress,
            total,
            message: Some(message.into()),
        })
    }

    #[test]
    fn a_tasks_status_has_finite_values_that_increase() {
        let mut values = Values::default();
        let sent: Vec<_> = [
            server(f64::NAN, None, "task working: step 1 of 4"),
            Up::TaskAlive,
            server(f64::NAN, None, "task waiting for an answer"),
            Up::KeepAlive,
            Up::TaskAlive,
            server(f64::INFINITY, Some(f64::NAN), "task working: step 3 of 4"),
        ]
        .into_iter()
        .map(|up| values.next(up))
        .collect();
        let numbers: Vec<f64> = sent.iter().map(|(v, _, _)| *v).collect();
        assert!(numbers.iter().all(|v| v.is_finite()), "{numbers:?}");
        assert!(numbers.windows(2).all(|w| w[0] < w[1]), "{numbers:?}");
        assert!(sent.iter().all(|(_, total, _)| total.is_none()), "{sent:?}");
        assert_eq!(sent[1].2.as_deref(), Some("task working: step 1 of 4"));
        assert_eq!(sent[3].2.as_deref(), Some(KEEP_ALIVE_MESSAGE));
        assert_eq!(sent[4].2.as_deref(), Some("task waiting for an answer"));
    }

    #[test]
    fn the_servers_own_progress_is_raised_when_it_would_not_increase() {
        let mut values = Values::default();
        assert_eq!(values.next(server(5.0, Some(10.0), "a")).0, 5.0);
        assert_eq!(
            values.next(server(5.0, Some(10.0), "b")).0,
            5.0 + KEEP_ALIVE_STEP
        );
        assert_eq!(values.next(Up::KeepAlive).1, Some(10.0));
        assert_eq!(values.next(server(8.0, Some(10.0), "c")).0, 8.0);
    }

    #[test]
    fn names_lose_control_bidi_and_invisible_characters_and_are_capped() {
        assert_eq!(display_name(Some("claude-code")), "claude-code");
        assert_eq!(
            display_name(Some("evil\u{1b}[31m\nname\u{202E}txt.exe")),
            "evil[31m nametxt.exe"
        );
        assert_eq!(display_name(Some("  \t ")), UNNAMED);
        assert_eq!(display_name(None), UNNAMED);
        assert_eq!(display_name(Some("a\u{200B}b")), "ab");
        let long = display_name(Some(&"x".repeat(200)));
        assert_eq!(long.chars().count(), MAX_NAME);
        assert!(long.ends_with('…'));
    }
}
