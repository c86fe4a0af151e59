//! Who made a call: the editor, or an agent through the gateway (the [`Caller`](super::Caller)'s
//! `agent`). The connection records each open call with its requester, so the
//! handler can say on every prompt who is asking, hand the question to the agent itself when the
//! agent answers questions, and tell the agent's call that a person is answering (keep-alive).
//!
//! A 2026-07-28 server's questions come inside the call's own result, so their requester is
//! exact. A legacy server's `elicitation/create` or `sampling/createMessage` does not say which
//! call it belongs to: it is the agent's when every call open on that connection is that agent
//! session's, and the editor's (no attribution) otherwise.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures::future::BoxFuture;
use parking_lot::Mutex;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
};
use tokio::sync::watch;

/// An agent's call through the gateway.
#[derive(Clone)]
pub struct Agent {
    /// The agent's session: calls of one session have one requester.
    pub session: u64,
    /// The agent's name, already safe to show (the face sanitizes it).
    pub name: String,
    /// Set when the agent answers the questions itself (the gateway's `questions` setting and
    /// the capabilities the agent declared).
    pub answers: Option<Arc<dyn AgentAnswers>>,
    /// How many of this call's questions a person is answering now.
    pub open: Arc<watch::Sender<usize>>,
}

/// The agent's side of a question it answers itself.
pub trait AgentAnswers: Send + Sync {
    /// Whether it declared elicitation (URL mode when `url`).
    fn elicits(&self, url: bool) -> bool;
    /// Whether it declared sampling.
    fn samples(&self) -> bool;
    fn elicit(&self, params: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, String>>;
    fn sample(
        &self,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'_, Result<CreateMessageResult, String>>;
}

/// Who a question is asked for, and whose calls wait while a person answers it.
#[derive(Clone, Default)]
pub struct Asker {
    pub agent: Option<Agent>,
    /// What the questions are for, when not the call just made (a task's: "for the task
    /// started …").
    pub purpose: Option<String>,
    waiting: Vec<Arc<watch::Sender<usize>>>,
}

impl Asker {
    /// A question that belongs to this call.
    pub fn of(agent: Option<Agent>) -> Self {
        let waiting = agent.iter().map(|a| a.open.clone()).collect();
        Asker {
            agent,
            purpose: None,
            waiting,
        }
    }

    /// The editor's UI, saying on every prompt who asks.
    pub fn ui<'a>(&'a self, inner: &'a dyn crate::ui::Prompter) -> crate::ui::Via<'a> {
        crate::ui::Via {
            inner,
            agent: self.agent.as_ref().map(|a| a.name.as_str()),
            purpose: self.purpose.as_deref(),
        }
    }

    /// Marks the calls as waiting for a person until the guard drops.
    pub fn person_answering(&self) -> Answering {
        for open in &self.waiting {
            open.send_modify(|n| *n += 1);
        }
        Answering(self.waiting.clone())
    }
}

pub struct Answering(Vec<Arc<watch::Sender<usize>>>);

impl Drop for Answering {
    fn drop(&mut self) {
        for open in &self.0 {
            open.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

/// The calls open on one connection, each with its requester (`None`: the editor).
#[derive(Default)]
pub struct Calls {
    open: Mutex<Vec<(u64, Option<Agent>)>>,
    next: AtomicU64,
}

impl Calls {
    /// Records a call until the guard drops.
    pub fn enter(self: &Arc<Self>, agent: Option<Agent>) -> Open {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.open.lock().push((id, agent));
        Open {
            calls: self.clone(),
            id,
        }
    }

    /// The asker of a question that does not say which call it belongs to: the agent when
    /// every open call is that agent session's; every open agent call waits while it is
    /// answered.
    pub fn unrelated(&self) -> Asker {
        let open = self.open.lock();
        let waiting = open
            .iter()
            .filter_map(|(_, a)| a.as_ref().map(|a| a.open.clone()))
            .collect();
        let first = open.first().and_then(|(_, a)| a.clone());
        let agent = first.filter(|first| {
            open.iter()
                .all(|(_, a)| a.as_ref().is_some_and(|a| a.session == first.session))
        });
        Asker {
            agent,
            purpose: None,
            waiting,
        }
    }
}

pub struct Open {
    calls: Arc<Calls>,
    id: u64,
}

impl Drop for Open {
    fn drop(&mut self) {
        self.calls.open.lock().retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(session: u64) -> Agent {
        Agent {
            session,
            name: format!("agent-{session}"),
            answers: None,
            open: Arc::new(watch::Sender::new(0)),
        }
    }

    #[test]
    fn an_unrelated_question_is_the_agents_only_when_every_open_call_is_its_own() {
        let calls = Arc::new(Calls::default());
        assert!(
            calls.unrelated().agent.is_none(),
            "nothing open: the editor"
        );
        let a = agent(1);
        let first = calls.enter(Some(a.clone()));
        let second = calls.enter(Some(a.clone()));
        assert_eq!(calls.unrelated().agent.unwrap().name, "agent-1");
        let other = calls.enter(Some(agent(2)));
        assert!(calls.unrelated().agent.is_none(), "two sessions: unknown");
        drop(other);
        let editor = calls.enter(None);
        assert!(calls.unrelated().agent.is_none(), "the editor's call too");
        drop(editor);
        let asker = calls.unrelated();
        let answering = asker.person_answering();
        assert_eq!(*a.open.borrow(), 2, "each open call of the agent waits");
        drop(answering);
        assert_eq!(*a.open.borrow(), 0);
        drop((first, second));
        assert!(calls.unrelated().agent.is_none());
    }
}
