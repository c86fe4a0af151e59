//! What the MCP side shares with every connection and reports to the editor: the current roots,
//! progress routing, and the event stream the LSP layer turns into notifications.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use crate::contract::ServerStatusParams;
use crate::elicitation;
use crate::mcp::flood;
use crate::roots::Root;
use crate::sampling;
use crate::ui::Prompter;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    Error,
    Warning,
    Info,
    Debug,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Everything the MCP side tells the editor, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// `mcp-sidecar/serverStatus`.
    Status(ServerStatusParams),
    /// `window/logMessage`: a server's own log messages and notable sidecar events.
    Log { level: LogLevel, message: String },
    /// `window/showMessage`: something the person should act on.
    Message { level: LogLevel, message: String },
    /// A server's tool list changed.
    ToolsChanged { server: String },
    /// A resource the editor subscribed to changed (`notifications/resources/updated`).
    ResourceUpdated { server: String, uri: String },
    /// A task started, changed or ended (`mcp-sidecar/taskStatus`).
    Task(crate::contract::TaskInfo),
}

/// Server notifications that faces other than the editor's follow (the gateway passes them on to
/// agents); a receiver that falls behind by more than [`OBSERVED_BACKLOG`] loses the oldest.
#[derive(Debug, Clone)]
pub enum Observed {
    /// A server's `notifications/message`, as sent.
    Log {
        server: String,
        level: rmcp::model::LoggingLevel,
        logger: Option<String>,
        data: serde_json::Value,
    },
    ResourceUpdated {
        server: String,
        uri: String,
    },
    ResourcesChanged {
        server: String,
    },
    PromptsChanged {
        server: String,
    },
}

/// How many [`Observed`] notifications wait for a slow receiver.
pub const OBSERVED_BACKLOG: usize = 256;

pub type EventReceiver = mpsc::UnboundedReceiver<Event>;
pub type ProgressFn = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

pub struct Host {
    events: mpsc::UnboundedSender<Event>,
    /// Counts the events that may change what a face lists (a server's state or its tools), for
    /// faces other than the editor's, which has `events` to itself.
    changes: tokio::sync::watch::Sender<u64>,
    observers: tokio::sync::broadcast::Sender<Observed>,
    roots: RwLock<Vec<Root>>,
    progress: Mutex<HashMap<String, ProgressFn>>,
    ui: RwLock<Option<Arc<dyn Prompter>>>,
    /// The browser step of OAuth sign-in, once the face has one.
    sign_in: RwLock<Option<Arc<dyn crate::auth::SignIn>>>,
    elicitation: RwLock<elicitation::Settings>,
    pub limiter: elicitation::RateLimiter,
    /// The sampling settings and the provider built from them when they were applied.
    sampling: RwLock<Arc<sampling::Applied>>,
    pub sampling_sessions: sampling::Sessions,
    clocks: Mutex<foldhash::HashMap<String, Arc<HumanClock>>>,
    completions: Mutex<HashMap<String, Arc<tokio::sync::Notify>>>,
    floods: Floods,
    update_floods: UpdateFloods,
}

/// Each server's log window (see [`Host::server_log`]).
type Floods = Arc<Mutex<HashMap<String, flood::Window>>>;

/// One server's `notifications/resources/updated` over its current window: the URIs of the
/// updates held back (at most [`flood::MAX_HELD_UPDATES`]), each to be passed on once.
#[derive(Default)]
struct HeldUpdates {
    window: flood::Window,
    uris: BTreeSet<String>,
}

type UpdateFloods = Arc<Mutex<HashMap<String, HeldUpdates>>>;

/// Time a person has spent answering one server's questions; a request's timeout counts only
/// the server's own time.
#[derive(Default)]
pub struct HumanClock {
    state: Mutex<Busy>,
}

/// A [`HumanClock`]'s state.
#[derive(Default)]
struct Busy {
    /// Questions a person is answering now.
    answering: usize,
    /// Since when, while `answering > 0`.
    since: Option<Instant>,
    /// Time spent in earlier busy spells.
    spent: Duration,
}

impl HumanClock {
    /// Marks a person busy with this server until the guard drops.
    pub fn busy(self: &Arc<Self>) -> HumanGuard {
        let mut s = self.state.lock();
        if s.answering == 0 {
            s.since = Some(Instant::now());
        }
        s.answering += 1;
        HumanGuard(self.clone())
    }

    /// Total human time so far, and whether a person is answering right now.
    pub fn total(&self) -> (Duration, bool) {
        let s = self.state.lock();
        let running = s.since.map(|t| t.elapsed()).unwrap_or_default();
        (s.spent + running, s.answering > 0)
    }
}

pub struct HumanGuard(Arc<HumanClock>);

impl Drop for HumanGuard {
    fn drop(&mut self) {
        let mut s = self.0.state.lock();
        s.answering -= 1;
        if s.answering == 0
            && let Some(since) = s.since.take()
        {
            s.spent += since.elapsed();
        }
    }
}

/// Forgets a call's completion waiters when it stops waiting (see [`Host::any_completion`]).
struct Waiting<'a> {
    host: &'a Host,
    server: String,
    ids: Vec<String>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        for id in &self.ids {
            self.host.forget_completion(&self.server, id);
        }
    }
}

impl Host {
    pub fn new() -> (Arc<Host>, EventReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        let host = Host {
            events: tx,
            changes: tokio::sync::watch::Sender::new(0),
            observers: tokio::sync::broadcast::Sender::new(OBSERVED_BACKLOG),
            roots: RwLock::new(Vec::new()),
            progress: Mutex::new(HashMap::new()),
            ui: RwLock::new(None),
            sign_in: RwLock::new(None),
            elicitation: RwLock::new(elicitation::Settings::default()),
            limiter: elicitation::RateLimiter::default(),
            sampling: RwLock::new(Arc::default()),
            sampling_sessions: sampling::Sessions::default(),
            clocks: Mutex::new(foldhash::HashMap::default()),
            completions: Mutex::new(HashMap::new()),
            floods: Floods::default(),
            update_floods: UpdateFloods::default(),
        };
        (Arc::new(host), rx)
    }

    pub fn emit(&self, event: Event) {
        if matches!(event, Event::Status(_) | Event::ToolsChanged { .. }) {
            self.changed();
        }
        // The receiver is gone only while the sidecar shuts down.
        let _ = self.events.send(event);
    }

    /// Tells the watchers of [`Host::changes`] that what the servers offer may have changed.
    pub fn changed(&self) {
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }

    /// A receiver that sees a new value whenever a server's state or tools may have changed.
    pub fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Passes a server's notification on to the faces that follow them ([`Host::observe`]).
    pub fn observed(&self, notification: Observed) {
        // No receiver: nobody follows them now.
        let _ = self.observers.send(notification);
    }

    pub fn observe(&self) -> tokio::sync::broadcast::Receiver<Observed> {
        self.observers.subscribe()
    }

    /// A server's own log message, rate-limited per server: at most [`flood::PER_SECOND`] a
    /// second reach the editor; the rest are counted and reported in one line when the window
    /// ends (at once if the flood goes on, else a second after it began).
    pub fn server_log(&self, server: &str, level: LogLevel, message: String) {
        let admit = {
            let mut floods = self.floods.lock();
            let window = floods.entry(server.to_string()).or_default();
            let admit = window.admit(Instant::now());
            (admit, window.end())
        };
        let (admit, end) = admit;
        if let Some(dropped) = admit.summary {
            self.emit(dropped_summary(server, dropped));
        }
        if admit.pass {
            self.emit(Event::Log { level, message });
        }
        if admit.first_drop
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let (floods, events, server) =
                (self.floods.clone(), self.events.clone(), server.to_string());
            runtime.spawn(async move {
                tokio::time::sleep_until(end.into()).await;
                let dropped = floods
                    .lock()
                    .get_mut(&server)
                    .and_then(|w| w.flush(Instant::now()));
                if let Some(dropped) = dropped {
                    let _ = events.send(dropped_summary(&server, dropped));
                }
            });
        }
    }

    /// A server's `notifications/resources/updated` (a legacy notification or on a 2026-07-28
    /// listen stream), for the editor and the agents ([`Observed`]). Rate-limited per server
    /// like its log, but without losing a resource's last change: at most [`flood::PER_SECOND`]
    /// a second are passed on at once; of the rest only the URIs are kept (a set, at most
    /// [`flood::MAX_HELD_UPDATES`]), and each is passed on once when the window ends. A flood
    /// costs the editor one re-read per resource, and one log line.
    pub fn resource_updated(&self, server: &str, uri: String) {
        let (admit, end, held) = {
            let mut floods = self.update_floods.lock();
            let state = floods.entry(server.to_string()).or_default();
            let admit = state.window.admit(Instant::now());
            // The previous window is over: what it held goes out now.
            let held = match admit.summary {
                Some(_) => std::mem::take(&mut state.uris),
                None => BTreeSet::new(),
            };
            if !admit.pass
                && (state.uris.len() < flood::MAX_HELD_UPDATES || state.uris.contains(&uri))
            {
                state.uris.insert(uri.clone());
            }
            (admit, state.window.end(), held)
        };
        for held in held {
            send_update(&self.events, &self.observers, server, held);
        }
        if admit.pass {
            send_update(&self.events, &self.observers, server, uri);
            return;
        }
        if admit.first_drop {
            tracing::warn!(
                server,
                "resource update flood: more than {} a second; the rest are passed on once per resource when the second ends",
                flood::PER_SECOND
            );
            if let Ok(runtime) = tokio::runtime::Handle::try_current() {
                let (floods, events, observers, server) = (
                    self.update_floods.clone(),
                    self.events.clone(),
                    self.observers.clone(),
                    server.to_string(),
                );
                runtime.spawn(async move {
                    tokio::time::sleep_until(end.into()).await;
                    let held = floods
                        .lock()
                        .get_mut(&server)
                        .and_then(|state| {
                            state
                                .window
                                .flush(Instant::now())
                                .map(|_| std::mem::take(&mut state.uris))
                        })
                        .unwrap_or_default();
                    for uri in held {
                        send_update(&events, &observers, &server, uri);
                    }
                });
            }
        }
    }

    pub fn roots(&self) -> Vec<Root> {
        self.roots.read().clone()
    }

    pub fn set_roots(&self, roots: Vec<Root>) {
        *self.roots.write() = roots;
    }

    /// The editor's UI, once `initialize` has said what it can do.
    pub fn set_ui(&self, ui: Arc<dyn Prompter>) {
        *self.ui.write() = Some(ui);
    }

    pub fn ui(&self) -> Option<Arc<dyn Prompter>> {
        self.ui.read().clone()
    }

    /// Sets the person's side of OAuth sign-in (the conformance client's headless one);
    /// without it the editor's UI asks ([`crate::auth::prompt::EditorSignIn`]), and without
    /// that a server that asks for sign-in waits in `needsAuth` with a sentence saying so.
    pub fn set_sign_in(&self, sign_in: Arc<dyn crate::auth::SignIn>) {
        *self.sign_in.write() = Some(sign_in);
    }

    pub fn sign_in(&self) -> Option<Arc<dyn crate::auth::SignIn>> {
        if let Some(sign_in) = self.sign_in.read().clone() {
            return Some(sign_in);
        }
        let ui = self.ui()?;
        Some(Arc::new(crate::auth::prompt::EditorSignIn::new(ui)))
    }

    pub fn set_elicitation_settings(&self, settings: elicitation::Settings) {
        *self.elicitation.write() = settings;
    }

    pub fn elicitation_settings(&self) -> elicitation::Settings {
        self.elicitation.read().clone()
    }

    /// Applies new sampling settings; the provider they name is built here, once (unchanged
    /// settings keep the provider already built). Returns why that provider cannot be used, when
    /// it was just built and failed.
    pub fn set_sampling_settings(&self, settings: sampling::Settings) -> Option<String> {
        if self.sampling.read().settings == settings {
            return None;
        }
        let (applied, problem) = sampling::Applied::new(settings);
        *self.sampling.write() = Arc::new(applied);
        problem
    }

    pub fn sampling_settings(&self) -> sampling::Settings {
        self.sampling.read().settings.clone()
    }

    /// The sampling settings in force with their provider, for one request.
    pub fn sampling(&self) -> Arc<sampling::Applied> {
        self.sampling.read().clone()
    }

    pub fn clock(&self, server: &str) -> Arc<HumanClock> {
        let mut clocks = self.clocks.lock();
        // Looked up before an entry is made: a call's clock is almost always there already.
        if let Some(clock) = clocks.get(server) {
            return clock.clone();
        }
        clocks.entry(server.to_string()).or_default().clone()
    }

    /// Something a call waiting on a browser step can await (URL elicitation completion).
    pub fn completion(&self, server: &str, id: &str) -> Arc<tokio::sync::Notify> {
        self.completions
            .lock()
            .entry(format!("{server}\0{id}"))
            .or_default()
            .clone()
    }

    /// Resolves when `server` completes one of `ids` (`notifications/elicitation/complete`).
    /// The ids are waited on from this call; they are forgotten when the future resolves or is
    /// dropped.
    pub fn any_completion<'a>(
        &'a self,
        server: &str,
        ids: &[String],
    ) -> impl Future<Output = ()> + Send + use<'a> {
        let waits: Vec<_> = ids.iter().map(|id| self.completion(server, id)).collect();
        let waiting = Waiting {
            host: self,
            server: server.to_string(),
            ids: ids.to_vec(),
        };
        async move {
            let _waiting = waiting;
            if waits.is_empty() {
                return std::future::pending().await;
            }
            futures::future::select_all(waits.iter().map(|n| Box::pin(n.notified()))).await;
        }
    }

    fn forget_completion(&self, server: &str, id: &str) {
        self.completions.lock().remove(&format!("{server}\0{id}"));
    }

    /// Signals a completion; false for ids nobody waits on (which the spec says to ignore). The
    /// first one counts: repeats for the same id are ignored too.
    pub fn complete(&self, server: &str, id: &str) -> bool {
        let waiter = self.completions.lock().remove(&format!("{server}\0{id}"));
        waiter.map(|n| n.notify_one()).is_some()
    }

    pub fn register_progress(&self, token: String, sink: ProgressFn) {
        self.progress.lock().insert(token, sink);
    }

    pub fn unregister_progress(&self, token: &str) {
        self.progress.lock().remove(token);
    }

    pub fn progress(&self, token: &str, update: ProgressUpdate) {
        let sink = self.progress.lock().get(token).cloned();
        if let Some(sink) = sink {
            sink(update);
        }
    }
}

/// The one line that reports a window's dropped log messages.
fn send_update(
    events: &mpsc::UnboundedSender<Event>,
    observers: &tokio::sync::broadcast::Sender<Observed>,
    server: &str,
    uri: String,
) {
    let _ = observers.send(Observed::ResourceUpdated {
        server: server.to_string(),
        uri: uri.clone(),
    });
    let _ = events.send(Event::ResourceUpdated {
        server: server.to_string(),
        uri,
    });
}

fn dropped_summary(server: &str, dropped: u64) -> Event {
    let message = format!(
        "{dropped} messages from {server} dropped (more than {} a second)",
        flood::PER_SECOND
    );
    tracing::warn!(server, dropped, "log flood: {message}");
    Event::Log {
        level: LogLevel::Warning,
        message: format!("[{server}] {message}"),
    }
}

/// The key progress sinks are registered under.
pub fn progress_key(token: &rmcp::model::ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

/// Client name announced to servers.
pub const CLIENT_NAME: &str = "mcp-sidecar";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OpenAiConfig;

    #[test]
    fn the_provider_is_built_when_the_sampling_settings_change_and_a_failure_told_once() {
        let (host, _events) = Host::new();
        let unset = "MCP_SIDECAR_HOST_UNIT_TEST_UNSET_KEY";
        let mut settings = sampling::Settings {
            provider: sampling::ProviderKind::Openai,
            openai: Some(OpenAiConfig {
                api_key_env: Some(unset.into()),
                ..OpenAiConfig::new("http://127.0.0.1:1/v1", "m")
            }),
            ..sampling::Settings::default()
        };
        let problem = host.set_sampling_settings(settings.clone());
        assert!(problem.is_some_and(|p| p.contains(unset)));
        assert_eq!(
            host.set_sampling_settings(settings.clone()),
            None,
            "unchanged settings are not built (nor reported) again"
        );
        let failed = host.sampling();
        if let Some(openai) = &mut settings.openai {
            openai.api_key_env = None;
        }
        assert_eq!(host.set_sampling_settings(settings.clone()), None);
        let built = host.sampling();
        assert!(!Arc::ptr_eq(&failed, &built), "changed settings are built");
        host.set_sampling_settings(settings);
        assert!(
            Arc::ptr_eq(&built, &host.sampling()),
            "the same provider serves on"
        );
    }

    #[tokio::test]
    async fn a_completion_wakes_its_waiter_and_a_dropped_waiter_is_forgotten() {
        let (host, _events) = Host::new();
        let ids = ["a".to_string(), "b".to_string()];
        let waiting = host.any_completion("s", &ids);
        assert!(host.complete("s", "b"), "registered before it is polled");
        waiting.await;
        assert!(!host.complete("s", "a"), "forgotten once resolved");
        drop(host.any_completion("s", &ids));
        assert!(!host.complete("s", "a"), "forgotten when dropped");
        assert!(!host.complete("other", "a"), "per server");
    }
}
