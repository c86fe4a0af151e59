//! The open views: each with its id (what the editor names it by), its token (what the loopback
//! page's paths carry), what it was opened with, and what the app said since. At most [`MAX`]
//! are open; a closed view's state is gone.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::watch;

/// At most this many views are open; one more closes the oldest.
pub const MAX: usize = 16;
/// A view whose app has not finished its handshake this long after it opened is closed.
pub const HANDSHAKE: Duration = Duration::from_secs(60);
/// Messages a view may send a second, and at once.
pub const RATE: f64 = 20.0;
pub const BURST: f64 = 40.0;
/// A view's `ui/message` is shown to the person at most once in this long (the latest is kept).
pub const MESSAGE_EVERY: Duration = Duration::from_secs(5);

/// What a view is opened with.
#[derive(Debug, Clone)]
pub struct Opening {
    pub server: String,
    /// The tool's definition, as the server listed it.
    pub tool: Value,
    pub title: String,
    pub resource_uri: String,
    /// The CSP it runs under.
    pub csp: String,
    pub arguments: Value,
    pub result: Value,
    /// The app's HTML, until the page has served it once.
    pub html: Option<String>,
}

/// One open view.
#[derive(Debug)]
pub struct View {
    pub id: String,
    pub token: String,
    pub opened: Instant,
    pub opening: Opening,
    state: Mutex<State>,
    closed: watch::Sender<Option<String>>,
}

#[derive(Debug)]
struct State {
    html: Option<String>,
    initialized: Option<Instant>,
    model_context: Option<Value>,
    message: Option<String>,
    message_shown: Option<Instant>,
    allowance: f64,
    checked: Instant,
    limited: bool,
}

/// What `listApps` shows of a view.
#[derive(Debug, Clone)]
pub struct Shown {
    pub initialized: bool,
    pub model_context: Option<Value>,
    pub message: Option<String>,
}

impl View {
    pub fn server(&self) -> &str {
        &self.opening.server
    }

    /// The tool's name.
    pub fn tool_name(&self) -> &str {
        self.opening
            .tool
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The app's HTML if the page has not served it yet (it is kept only until then).
    pub fn take_html(&self) -> Option<String> {
        self.state.lock().html.take()
    }

    /// The app finished its handshake; how long after the view opened (the first time only).
    pub fn initialized(&self) -> Option<Duration> {
        let mut state = self.state.lock();
        if state.initialized.is_some() {
            return None;
        }
        let now = Instant::now();
        state.initialized = Some(now);
        Some(now - self.opened)
    }

    pub fn is_initialized(&self) -> bool {
        self.state.lock().initialized.is_some()
    }

    pub fn set_model_context(&self, context: Value) {
        self.state.lock().model_context = Some(context);
    }

    /// Keeps the view's latest `ui/message`; whether to show it to the person now (at most
    /// once in [`MESSAGE_EVERY`]).
    pub fn set_message(&self, message: String) -> bool {
        let mut state = self.state.lock();
        state.message = Some(message);
        let now = Instant::now();
        let show = state
            .message_shown
            .is_none_or(|at| now.duration_since(at) >= MESSAGE_EVERY);
        if show {
            state.message_shown = Some(now);
        }
        show
    }

    pub fn shown(&self) -> Shown {
        let state = self.state.lock();
        Shown {
            initialized: state.initialized.is_some(),
            model_context: state.model_context.clone(),
            message: state.message.clone(),
        }
    }

    /// Takes one message from the view's allowance ([`RATE`] a second, [`BURST`] at once);
    /// `Err(first)`: none left, `first` the first refusal since the last allowed message.
    pub fn admit(&self) -> Result<(), bool> {
        let mut state = self.state.lock();
        let now = Instant::now();
        let refill = (now - state.checked).as_secs_f64() * RATE;
        state.allowance = (state.allowance + refill).min(BURST);
        state.checked = now;
        if state.allowance >= 1.0 {
            state.allowance -= 1.0;
            state.limited = false;
            Ok(())
        } else {
            let first = !state.limited;
            state.limited = true;
            Err(first)
        }
    }

    /// Why it closed, once it has.
    pub fn closed(&self) -> watch::Receiver<Option<String>> {
        self.closed.subscribe()
    }

    pub fn is_closed(&self) -> bool {
        self.closed.borrow().is_some()
    }

    fn close(&self, reason: &str) {
        self.closed.send_if_modified(|r| {
            if r.is_some() {
                return false;
            }
            *r = Some(reason.to_string());
            true
        });
        let mut state = self.state.lock();
        state.html = None;
        state.model_context = None;
    }
}

/// The open views, oldest first.
#[derive(Debug, Default)]
pub struct Views {
    open: Mutex<VecDeque<Arc<View>>>,
    next: AtomicU64,
}

impl Views {
    /// Opens a view; the one it pushed out (more than [`MAX`] open), closed.
    pub fn open(&self, mut opening: Opening, token: String) -> (Arc<View>, Option<Arc<View>>) {
        let id = format!("v{}", self.next.fetch_add(1, Ordering::Relaxed) + 1);
        let now = Instant::now();
        let html = opening.html.take();
        let view = Arc::new(View {
            id,
            token,
            opened: now,
            opening,
            state: Mutex::new(State {
                html,
                initialized: None,
                model_context: None,
                message: None,
                message_shown: None,
                allowance: BURST,
                checked: now,
                limited: false,
            }),
            closed: watch::channel(None).0,
        });
        let mut open = self.open.lock();
        open.push_back(view.clone());
        let pushed = (open.len() > MAX).then(|| open.pop_front()).flatten();
        drop(open);
        if let Some(old) = &pushed {
            old.close("more than 16 views were open");
        }
        (view, pushed)
    }

    /// The open view whose token this is (compared in constant time).
    pub fn by_token(&self, token: &str) -> Option<Arc<View>> {
        let open = self.open.lock();
        let mut found = None;
        for view in open.iter() {
            if crate::net::same_secret(token.as_bytes(), view.token.as_bytes()) {
                found = Some(view.clone());
            }
        }
        found
    }

    pub fn by_id(&self, id: &str) -> Option<Arc<View>> {
        self.open.lock().iter().find(|v| v.id == id).cloned()
    }

    pub fn list(&self) -> Vec<Arc<View>> {
        self.open.lock().iter().cloned().collect()
    }

    /// Closes the view `id`; it, if it was open.
    pub fn close(&self, id: &str, reason: &str) -> Option<Arc<View>> {
        let mut open = self.open.lock();
        let at = open.iter().position(|v| v.id == id)?;
        let view = open.remove(at)?;
        drop(open);
        view.close(reason);
        Some(view)
    }

    /// Closes the views whose app has not finished its handshake [`HANDSHAKE`] after they
    /// opened, as of `now`; those closed.
    pub fn expire(&self, now: Instant) -> Vec<Arc<View>> {
        self.close_where("the view did not finish its handshake within 60 s", |v| {
            !v.is_initialized() && now.saturating_duration_since(v.opened) >= HANDSHAKE
        })
    }

    /// Closes the views `which` picks; those closed.
    pub fn close_where(&self, reason: &str, which: impl Fn(&View) -> bool) -> Vec<Arc<View>> {
        let mut open = self.open.lock();
        let (gone, kept): (VecDeque<_>, VecDeque<_>) = open.drain(..).partition(|v| which(v));
        *open = kept;
        drop(open);
        for view in &gone {
            view.close(reason);
        }
        gone.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opening(server: &str) -> Opening {
        Opening {
            server: server.into(),
            tool: serde_json::json!({"name": "t"}),
            title: "t".into(),
            resource_uri: "ui://t".into(),
            csp: String::new(),
            arguments: Value::Null,
            result: Value::Null,
            html: Some("<p>x</p>".into()),
        }
    }

    #[test]
    fn at_most_sixteen_are_open_and_the_oldest_goes() {
        let views = Views::default();
        let first = views.open(opening("a"), "t0".into()).0;
        for i in 1..MAX {
            assert!(views.open(opening("a"), format!("t{i}")).1.is_none());
        }
        let (_, pushed) = views.open(opening("a"), "t16".into());
        assert_eq!(pushed.unwrap().id, first.id);
        assert!(first.is_closed());
        assert!(views.by_token("t0").is_none() && views.by_id(&first.id).is_none());
        assert_eq!(views.list().len(), MAX);
    }

    #[test]
    fn a_closed_views_state_is_gone_and_its_token_no_longer_opens_it() {
        let views = Views::default();
        let (view, _) = views.open(opening("a"), "secret-token".into());
        assert!(views.by_token("secret-token").is_some());
        assert!(views.by_token("secret-tokem").is_none());
        view.set_model_context(serde_json::json!({"a": 1}));
        let closed = views.close(&view.id, "bye").unwrap();
        assert_eq!(closed.closed().borrow().as_deref(), Some("bye"));
        assert!(closed.take_html().is_none() && closed.shown().model_context.is_none());
        assert!(views.by_token("secret-token").is_none());
        let (_, _) = views.open(opening("b"), "x".into());
        let (_, _) = views.open(opening("c"), "y".into());
        assert_eq!(views.close_where("stopped", |v| v.server() == "b").len(), 1);
        assert_eq!(views.list().len(), 1);
    }

    #[test]
    fn the_html_is_served_once_and_initialized_counts_once() {
        let views = Views::default();
        let (view, _) = views.open(opening("a"), "t".into());
        assert_eq!(view.take_html().as_deref(), Some("<p>x</p>"));
        assert!(view.take_html().is_none());
        assert!(view.initialized().is_some());
        assert!(view.initialized().is_none());
        assert!(view.is_initialized());
    }

    #[test]
    fn a_view_that_never_finishes_its_handshake_is_closed() {
        let views = Views::default();
        let (silent, _) = views.open(opening("a"), "t1".into());
        let (talking, _) = views.open(opening("a"), "t2".into());
        talking.initialized();
        assert!(views.expire(silent.opened + HANDSHAKE / 2).is_empty());
        let closed = views.expire(silent.opened + HANDSHAKE);
        assert_eq!(closed.len(), 1);
        assert_eq!(closed[0].id, silent.id);
        assert!(silent.is_closed() && !talking.is_closed());
        assert!(views.by_token("t1").is_none() && views.by_token("t2").is_some());
    }

    /// A view's `ui/message` reaches the person at most once in [`MESSAGE_EVERY`].
    #[test]
    fn messages_are_shown_at_most_once_in_a_while() {
        let views = Views::default();
        let (view, _) = views.open(opening("a"), "t".into());
        assert!(view.set_message("one".into()));
        assert!(!view.set_message("two".into()));
        assert_eq!(view.shown().message.as_deref(), Some("two"));
    }

    #[test]
    fn a_flood_is_limited_after_the_burst() {
        let views = Views::default();
        let (view, _) = views.open(opening("a"), "t".into());
        let allowed = (0..200).filter(|_| view.admit().is_ok()).count();
        // The burst, and what refilled while the loop ran (well under a message).
        assert!(
            (BURST as usize..BURST as usize + 2).contains(&allowed),
            "{allowed}"
        );
        assert_eq!(
            view.admit(),
            Err(false),
            "only the first refusal is reported"
        );
    }
}
