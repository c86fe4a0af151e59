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
    KeepAlive,
}

/// The progress of one call, when the agent asked for it (a `progressToken`): the server's
/// progress passed on in order, and while a person answers one of the call's questions
/// (`open` > 0) a keep-alive every interval. The values sent always increase: a keep-alive
/// repeats the last one plus a thousandth.
pub fn progress(
    context: &RequestContext<RoleServer>,
    open: &Arc<watch::Sender<usize>>,
) -> Option<ProgressFn> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    let (tx, mut rx) = mpsc::unbounded_channel::<Up>();
    tokio::spawn(async move {
        let mut last: Option<(f64, Option<f64>)> = None;
        while let Some(up) = rx.recv().await {
            let (value, total, message) = match up {
                Up::Server(update) => {
                    let value = match last {
                        Some((before, _)) if update.progress <= before => before + KEEP_ALIVE_STEP,
                        _ => update.progress,
                    };
                    (value, update.total, update.message)
                }
                Up::KeepAlive => {
                    let (value, total) = last.map_or((0.0, None), |(before, total)| {
                        (before + KEEP_ALIVE_STEP, total)
                    });
                    (value, total, Some(KEEP_ALIVE_MESSAGE.to_string()))
                }
            };
            last = Some((value, total));
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
    tokio::spawn(async move {
        // Ends when the call is over (every sender of `open` is gone) or the agent went.
        while waiting.wait_for(|n| *n > 0).await.is_ok() {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(keep_alive_interval()) => {
                        if ticks.send(Up::KeepAlive).is_err() {
                            return;
                        }
                    }
                    changed = waiting.changed() => {
                        if changed.is_err() {
                            return;
                        }
                        if *waiting.borrow() == 0 {
                            break;
                        }
                    }
                }
            }
        }
    });
    Some(Arc::new(move |update| {
        let _ = tx.send(Up::Server(update));
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
