//! One task per configured server: start it, report every state change, notice when it dies,
//! restart it with bounded backoff, stop it on request. Callers reach the live connection
//! through the [`Slot`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::auth::status::Status as AuthStatus;
use crate::config::ServerSpec;
use crate::contract::{ServerState, ServerStatusParams};
use crate::guard;
use crate::mcp::host::{Event, Host, LogLevel};
use crate::mcp::session::connection::{self, Connection, Started};
use crate::mcp::wire::process::{Diagnostics, describe_exit};
use crate::roots::Root;

/// A connection that stayed up this long resets the restart budget.
const HEALTHY_AFTER: Duration = Duration::from_secs(60);
const MAX_BACKOFF: Duration = Duration::from_secs(10);

pub enum Control {
    Restart,
    Stop(oneshot::Sender<()>),
}

pub struct SlotState {
    pub status: ServerStatusParams,
    pub connection: Option<Arc<Connection>>,
    pub restarts: u32,
    /// The roots this server was last told about (legacy `roots/list_changed` bookkeeping).
    pub roots_seen: Vec<Root>,
    /// How many times the server entered `starting`.
    pub starts: u64,
}

pub struct Slot {
    pub name: String,
    pub spec: Option<ServerSpec>,
    pub transport: &'static str,
    state: Mutex<SlotState>,
    control: Option<mpsc::UnboundedSender<Control>>,
    retired: AtomicBool,
    host: Arc<Host>,
    /// The server's sign-in (OAuth), shared with the transports of its connections.
    pub auth: Arc<AuthStatus>,
    /// Bumped on every state change (see [`Slot::restart_and_settle`]).
    changes: tokio::sync::watch::Sender<u64>,
}

/// Limits that apply to every server, from the settings.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_message_bytes: usize,
    pub max_restarts: u32,
}

impl Slot {
    /// A slot that never runs: a definition with an error, or a disabled server.
    pub fn inert(
        name: String,
        spec: Option<ServerSpec>,
        state: ServerState,
        source: Option<String>,
        message: String,
        host: Arc<Host>,
    ) -> Arc<Slot> {
        let slot = Arc::new(Slot {
            transport: spec.as_ref().map_or("unknown", |s| s.transport.kind()),
            spec,
            state: Mutex::new(SlotState {
                status: ServerStatusParams {
                    name: name.clone(),
                    label: None,
                    state,
                    protocol_version: None,
                    source,
                    message: Some(message),
                },
                connection: None,
                restarts: 0,
                roots_seen: Vec::new(),
                starts: 0,
            }),
            name,
            control: None,
            retired: AtomicBool::new(false),
            host,
            auth: Arc::default(),
            changes: tokio::sync::watch::Sender::new(0),
        });
        slot.publish();
        slot
    }

    /// Starts the supervisor task for `spec`.
    pub fn start(spec: ServerSpec, host: Arc<Host>, limits: Limits) -> Arc<Slot> {
        let (tx, rx) = mpsc::unbounded_channel();
        let slot = Arc::new(Slot {
            name: spec.name.clone(),
            transport: spec.transport.kind(),
            state: Mutex::new(SlotState {
                status: ServerStatusParams {
                    name: spec.name.clone(),
                    label: None,
                    state: ServerState::Starting,
                    protocol_version: None,
                    source: Some(spec.source.to_string()),
                    message: None,
                },
                connection: None,
                restarts: 0,
                roots_seen: Vec::new(),
                starts: 0,
            }),
            spec: Some(spec),
            control: Some(tx),
            retired: AtomicBool::new(false),
            host,
            auth: Arc::default(),
            changes: tokio::sync::watch::Sender::new(0),
        });
        tokio::spawn(supervise_guarded(slot.clone(), limits, rx));
        slot
    }

    pub fn lock(&self) -> parking_lot::MutexGuard<'_, SlotState> {
        self.state.lock()
    }

    pub fn connection(&self) -> Option<Arc<Connection>> {
        self.lock().connection.clone()
    }

    pub fn restart(&self) -> bool {
        self.control
            .as_ref()
            .is_some_and(|c| c.send(Control::Restart).is_ok())
    }

    /// Restarts the server and waits until that start has ended (running, failed, waiting for
    /// trust or a sign-in, stopped); `None` when the slot cannot be restarted.
    pub async fn restart_and_settle(&self) -> Option<ServerStatusParams> {
        let mut changes = self.changes.subscribe();
        let starts = self.lock().starts;
        if !self.restart() {
            return None;
        }
        loop {
            {
                let state = self.lock();
                if state.starts > starts && state.status.state != ServerState::Starting {
                    return Some(state.status.clone());
                }
            }
            changes.changed().await.ok()?;
        }
    }

    /// Waits (at most `within`) until the server is no longer running.
    pub async fn left_running(&self, within: Duration) {
        let mut changes = self.changes.subscribe();
        let _ = tokio::time::timeout(within, async {
            while self.lock().status.state == ServerState::Running {
                if changes.changed().await.is_err() {
                    return;
                }
            }
        })
        .await;
    }

    /// Stops the server and waits (bounded by the caller) until it is down. A retired slot
    /// reports nothing more: a replacement may already be reporting under the same name.
    pub async fn stop(&self, retire: bool) {
        if retire {
            self.retired.store(true, Ordering::SeqCst);
        }
        let Some(control) = &self.control else { return };
        let (tx, rx) = oneshot::channel();
        if control.send(Control::Stop(tx)).is_ok() {
            let _ = rx.await;
        }
    }

    fn set(
        &self,
        state: ServerState,
        message: Option<String>,
        connection: Option<Arc<Connection>>,
    ) {
        {
            let mut s = self.lock();
            if state == ServerState::Starting {
                s.starts += 1;
            }
            s.status.state = state;
            s.status.message = message;
            s.status.protocol_version = connection.as_ref().map(|c| c.protocol_version.clone());
            if let Some(c) = &connection {
                s.roots_seen = crate::roots::for_server(&self.host.roots(), c.roots_filter());
            }
            s.connection = connection;
        }
        self.changes.send_modify(|n| *n += 1);
        self.publish();
    }

    fn publish(&self) {
        if !self.retired.load(Ordering::SeqCst) {
            let status = self.lock().status.clone();
            self.host.emit(Event::Status(status));
        }
    }

    fn tell(&self, level: LogLevel, message: String) {
        if !self.retired.load(Ordering::SeqCst) {
            self.host.emit(Event::Message { level, message });
        }
    }
}

enum Next {
    Retry,
    Restart,
    Stop(Option<oneshot::Sender<()>>),
    /// Waiting for the person (a sign-in): no retry until restarted.
    Wait,
}

/// [`supervise`] under the panic guard. A panic in it (a bug) drops the connection and the
/// server's process (dropping the service cancels it, the process is killed on drop, so calls
/// waiting on it end with an error), fails the server with a message naming it, and keeps the
/// slot answering: Stop is acknowledged, Restart runs the supervisor again. Without this a
/// panicked slot would say "running" forever, and Restart would do nothing.
async fn supervise_guarded(
    slot: Arc<Slot>,
    limits: Limits,
    mut control: mpsc::UnboundedReceiver<Control>,
) {
    loop {
        let Err(panic) = guard::catch(supervise(slot.clone(), limits, &mut control)).await else {
            return;
        };
        tracing::error!(server = %slot.name, "the server's supervisor stopped: {panic}");
        slot.tell(
            LogLevel::Error,
            format!("MCP server \"{}\" stopped: {panic}", slot.name),
        );
        slot.set(
            ServerState::Failed,
            Some(format!("{panic}; restart the server to try again")),
            None,
        );
        match on_control(control.recv().await) {
            Next::Stop(ack) => {
                slot.set(ServerState::Stopped, None, None);
                if let Some(ack) = ack {
                    let _ = ack.send(());
                }
                return;
            }
            Next::Restart | Next::Retry | Next::Wait => {}
        }
    }
}

async fn supervise(
    slot: Arc<Slot>,
    limits: Limits,
    control: &mut mpsc::UnboundedReceiver<Control>,
) {
    let Some(spec) = slot.spec.clone() else {
        return;
    };
    let mut failures: u32 = 0;
    loop {
        slot.auth.clear_need();
        slot.set(ServerState::Starting, None, None);
        let diag = Arc::new(Diagnostics::default());
        let connecting = connection::connect(
            &spec,
            slot.host.clone(),
            limits.max_message_bytes,
            diag.clone(),
            slot.auth.clone(),
        );
        let next = tokio::select! {
            started = connecting => match started {
                Ok(started) => run_connected(&slot, started, &diag, control, &mut failures).await,
                Err(message) if slot.auth.needed().is_some() => {
                    tracing::info!(server = %slot.name, "waiting for a sign-in: {message}");
                    needs_auth(&slot);
                    Next::Wait
                }
                Err(message) => {
                    tracing::warn!(server = %slot.name, "failed to start: {message}");
                    if failures == 0 {
                        slot.tell(LogLevel::Error, format!("MCP server \"{}\" failed to start: {message}", slot.name));
                    }
                    slot.set(ServerState::Failed, Some(message), None);
                    Next::Retry
                }
            },
            c = control.recv() => on_control(c),
        };
        match next {
            Next::Stop(ack) => {
                slot.set(ServerState::Stopped, None, None);
                if let Some(ack) = ack {
                    let _ = ack.send(());
                }
                return;
            }
            Next::Restart => {
                failures = 0;
                continue;
            }
            Next::Wait => match on_control(control.recv().await) {
                Next::Stop(ack) => {
                    slot.set(ServerState::Stopped, None, None);
                    if let Some(ack) = ack {
                        let _ = ack.send(());
                    }
                    return;
                }
                _ => {
                    failures = 0;
                    continue;
                }
            },
            Next::Retry => {}
        }
        failures += 1;
        let wait = if failures > limits.max_restarts {
            let message = format!(
                "{}; gave up after {} restarts (restart the server to try again)",
                slot.lock().status.message.clone().unwrap_or_default(),
                limits.max_restarts
            );
            slot.tell(
                LogLevel::Error,
                format!("MCP server \"{}\": {message}", slot.name),
            );
            slot.set(ServerState::Failed, Some(message), None);
            None
        } else {
            Some(backoff(failures))
        };
        let next = match wait {
            Some(delay) => tokio::select! {
                _ = tokio::time::sleep(delay) => Next::Retry,
                c = control.recv() => on_control(c),
            },
            None => on_control(control.recv().await),
        };
        match next {
            Next::Stop(ack) => {
                slot.set(ServerState::Stopped, None, None);
                if let Some(ack) = ack {
                    let _ = ack.send(());
                }
                return;
            }
            Next::Restart | Next::Wait => failures = 0,
            Next::Retry => slot.lock().restarts += 1,
        }
    }
}

/// The server waits for a sign-in: `needsAuth`, with why.
fn needs_auth(slot: &Slot) {
    let message = slot.auth.needed().map(|need| need.message);
    slot.set(ServerState::NeedsAuth, message, None);
}

fn on_control(control: Option<Control>) -> Next {
    match control {
        Some(Control::Restart) => Next::Restart,
        Some(Control::Stop(ack)) => Next::Stop(Some(ack)),
        None => Next::Stop(None),
    }
}

fn backoff(failures: u32) -> Duration {
    let millis = 500u64.saturating_mul(1 << failures.saturating_sub(1).min(5));
    Duration::from_millis(millis).min(MAX_BACKOFF)
}

/// Runs while the server is up; returns what to do once it is not.
async fn run_connected(
    slot: &Arc<Slot>,
    started: Started,
    diag: &Diagnostics,
    control: &mut mpsc::UnboundedReceiver<Control>,
    failures: &mut u32,
) -> Next {
    let Started {
        connection,
        service,
        mut process,
    } = started;
    let up_since = Instant::now();
    tracing::info!(server = %slot.name, pid = process.as_ref().and_then(|p| p.pid()), version = %connection.protocol_version, "server running");
    slot.set(ServerState::Running, None, Some(connection.clone()));
    guard::inject(|| format!("supervisor:{}", slot.name));
    prefetch_tools(slot.clone(), connection.clone());
    let cancel = service.cancellation_token();
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let auth = slot.auth.clone();
    tokio::select! {
        need = auth.lost() => {
            // The sign-in was declined, revoked beyond refresh, or signed out: the connection
            // ends (its pending calls fail) and the server waits for a sign-in.
            tracing::info!(server = %slot.name, "the sign-in is gone: {}", need.message);
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(2), &mut waiting).await;
            needs_auth(slot);
            Next::Wait
        }
        _ = &mut waiting => {
            let status = match process.as_mut() {
                Some(process) => match process.try_status() {
                    Some(status) => Some(status),
                    None => process.stop(Duration::from_millis(500)).await,
                },
                None => None,
            };
            let message = diag.fatal().unwrap_or_else(|| {
                let tail = diag.stderr_tail(3);
                let exit = describe_exit(status);
                if tail.is_empty() { format!("the server {exit}") } else { format!("the server {exit}: {}", tail.join(" | ")) }
            });
            if up_since.elapsed() > HEALTHY_AFTER {
                *failures = 0;
            }
            tracing::warn!(server = %slot.name, "{message}");
            if *failures == 0 {
                slot.tell(LogLevel::Warning, format!("MCP server \"{}\" stopped: {message}; restarting", slot.name));
            }
            slot.set(ServerState::Failed, Some(message), None);
            Next::Retry
        }
        c = control.recv() => {
            cancel.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(2), &mut waiting).await;
            if let Some(process) = process.as_mut() {
                process.stop(Duration::from_secs(1)).await;
            }
            slot.set(ServerState::Stopped, None, None);
            on_control(c)
        }
    }
}

/// Fills the tool cache in the background so `listServers` can show a count.
fn prefetch_tools(slot: Arc<Slot>, connection: Arc<Connection>) {
    tokio::spawn(async move {
        if let Err(e) = connection.tools().await {
            tracing::debug!(server = %slot.name, "could not list tools: {e}");
        }
    });
}
