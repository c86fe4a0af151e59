//! A scripted editor for tests: speaks LSP framing over any byte streams (an in-process duplex or
//! the built binary's stdio), records everything the sidecar sends, and lets a test answer the
//! sidecar's requests.
//!
//! It also keeps count of what the test read. A test owns its editor through a
//! [`CheckedEditor`] (from [`in_process`] and [`spawn_editor`]); when that handle is dropped at
//! the test's end, the test fails if the sidecar sent something the test neither read nor said it
//! does not care about (as ruff's `TestServer` does). What counts as read:
//! - a notification a wait returned ([`TestEditor::wait_notification`], [`TestEditor::wait_status`]
//!   and its `needsTrust` lead-in, [`wait_log`], [`wait_shown`]) or that
//!   [`TestEditor::read_notifications`] returned; a server's status repeating a state the test
//!   read for that server; the `stopped` statuses after [`TestEditor::shutdown_and_exit`];
//! - a request the test took ([`TestEditor::next_request`], [`TestEditor::next_prompt`]);
//! - a reply the test awaited (a [`Reply`] that was dropped unawaited leaves its reply unread).
//!
//! What a test may leave unread: the methods of [`UNCHECKED`], those it names with
//! [`TestEditor::ignore`], and `starting` statuses. A reply to nothing the editor asked, or a
//! second reply, is always unexpected. Only what arrived before the drop is seen: a test that
//! does not end with [`TestEditor::shutdown_and_exit`] waits for what it expects.
#![allow(dead_code)]

pub mod gateway;
pub mod http;
mod peers;
mod raw;

pub use peers::*;
pub use raw::*;

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Notify, oneshot};

pub const WAIT: Duration = Duration::from_secs(20);

type Writer = Box<dyn AsyncWrite + Unpin + Send>;

#[derive(Default)]
struct Shared {
    pending: HashMap<i64, oneshot::Sender<Value>>,
    requests: VecDeque<Value>,
    /// The method of every request the sidecar sent, answered or not, in order.
    request_methods: Vec<String>,
    notifications: Vec<Value>,
    /// Whether the test read each of `notifications` (same index).
    read: Vec<bool>,
    /// Replies no one read: to an id this editor never used, a second reply to one, or one
    /// whose [`Reply`] the test dropped without awaiting it.
    unread_replies: Vec<Value>,
    /// Methods whose unread messages the test said it does not care about ([`TestEditor::ignore`]).
    ignored: HashSet<String>,
    /// The settings last sent (`initialize` or `workspace/didChangeConfiguration`), as the test
    /// wrote them.
    settings: Value,
    closed: bool,
    /// When each message of [`BIG_MESSAGE`] bytes or more came, in order.
    big_arrivals: Vec<Arrival>,
}

/// A body at least this long has its [`Arrival`] kept (the bench's 10 MiB series).
pub const BIG_MESSAGE: usize = 512 * 1024;

/// When a message's parts came in: its header read, its body read, the body parsed. Split so a
/// big reply's time can be set apart into the sidecar's sending and the editor's own parse.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub header: Instant,
    pub body: Instant,
    pub parsed: Instant,
}

/// The name prefix of [`TestEditor::settled`]'s probe servers.
pub const SETTLED_PROBE: &str = "settled-probe-";

/// Methods any test may leave unread: the sidecar's log, written on every state change. A test
/// that cares about a line waits for it with [`wait_log`].
pub const UNCHECKED: &[&str] = &["window/logMessage"];

/// The test's own handle on its [`TestEditor`], from [`in_process`] and [`spawn_editor`].
/// It derefs to the shared `Arc<TestEditor>` (so `editor.clone()` gives a task a handle of its
/// own). Dropping it, at the test's end, fails the test when the sidecar sent anything the test
/// did not read and did not say it ignores ([`TestEditor::unread`]), unless the test is already
/// failing. Clones held by tasks do not check: the test's end is when the test drops this.
pub struct CheckedEditor(Arc<TestEditor>);

impl CheckedEditor {
    pub fn new(editor: Arc<TestEditor>) -> CheckedEditor {
        CheckedEditor(editor)
    }
}

impl std::ops::Deref for CheckedEditor {
    type Target = Arc<TestEditor>;
    fn deref(&self) -> &Arc<TestEditor> {
        &self.0
    }
}

impl Drop for CheckedEditor {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let unread = self.0.unread();
        assert!(
            unread.is_empty(),
            "the sidecar sent {} message(s) the test did not read; read them (and assert on \
             them), or say the test does not care with `editor.ignore(method)`:\n{}",
            unread.len(),
            unread.join("\n")
        );
    }
}

/// The reply to a request the editor sent ([`TestEditor::start_request`]): a future of the whole
/// response message. Dropped without being awaited to the end, its reply counts as unread (now,
/// or when it comes).
pub struct Reply {
    rx: oneshot::Receiver<Value>,
    shared: Arc<Mutex<Shared>>,
    read: bool,
}

impl Future for Reply {
    type Output = Result<Value, oneshot::error::RecvError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.rx).poll(cx);
        if polled.is_ready() {
            this.read = true;
        }
        polled
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if self.read {
            return;
        }
        // Not come yet: the reader finds this receiver gone and keeps the reply as unread.
        if let Ok(reply) = self.rx.try_recv() {
            self.shared.lock().unwrap().unread_replies.push(reply);
        }
    }
}

pub struct TestEditor {
    writer: tokio::sync::Mutex<Writer>,
    shared: Arc<Mutex<Shared>>,
    changed: Arc<Notify>,
    next_id: AtomicI64,
    /// Whether settings sent to the sidecar get `serverScopes` with every server as "user".
    user_scopes: std::sync::atomic::AtomicBool,
}

impl TestEditor {
    /// An editor on these streams that checks nothing when dropped (the benches' editor); a
    /// test gets a [`CheckedEditor`] from [`in_process`] or [`spawn_editor`].
    pub fn new<R, W>(reader: R, writer: W) -> Arc<TestEditor>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let editor = Arc::new(TestEditor {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            shared: Arc::default(),
            changed: Arc::default(),
            next_id: AtomicI64::new(1),
            user_scopes: Default::default(),
        });
        let shared = editor.shared.clone();
        let changed = editor.changed.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            while let Some((message, arrival)) = read_message(&mut reader).await {
                let mut s = shared.lock().unwrap();
                if let Some(arrival) = arrival {
                    s.big_arrivals.push(arrival);
                }
                let is_response = message.get("method").is_none();
                if is_response {
                    let waiting = message["id"].as_i64().and_then(|id| s.pending.remove(&id));
                    match waiting {
                        Some(tx) => {
                            if let Err(unread) = tx.send(message) {
                                s.unread_replies.push(unread);
                            }
                        }
                        None => s.unread_replies.push(message),
                    }
                } else if message.get("id").is_some() {
                    let method = message["method"].as_str().unwrap_or_default().to_owned();
                    s.request_methods.push(method);
                    s.requests.push_back(message);
                } else {
                    s.notifications.push(message);
                    s.read.push(false);
                }
                drop(s);
                changed.notify_waiters();
            }
            let mut s = shared.lock().unwrap();
            s.closed = true;
            // No reply can come now: the requests still waiting end ("connection closed").
            s.pending.clear();
            drop(s);
            changed.notify_waiters();
        });
        editor
    }

    async fn send(&self, message: Value) {
        let body = serde_json::to_vec(&message).unwrap();
        let mut w = self.writer.lock().await;
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        let _ = w.write_all(header.as_bytes()).await;
        let _ = w.write_all(&body).await;
        let _ = w.flush().await;
    }

    /// Sends a request and returns its id and its [`Reply`].
    pub async fn start_request(&self, method: &str, params: Value) -> (i64, Reply) {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        self.shared.lock().unwrap().pending.insert(id, tx);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let reply = Reply {
            rx,
            shared: self.shared.clone(),
            read: false,
        };
        (id, reply)
    }

    /// Sends a request and waits for its response message (`result` or `error`).
    pub async fn request(&self, method: &str, params: Value) -> Value {
        let (_, rx) = self.start_request(method, params).await;
        tokio::time::timeout(WAIT, rx)
            .await
            .unwrap_or_else(|_| panic!("no response to {method}"))
            .expect("editor connection closed")
    }

    /// Runs a command and returns its `result`, panicking on an error response.
    pub async fn command(&self, command: &str, argument: Value) -> Value {
        let response = self.command_response(command, argument).await;
        if let Some(error) = response.get("error") {
            panic!("{command} failed: {error}");
        }
        response["result"].clone()
    }

    pub async fn command_response(&self, command: &str, argument: Value) -> Value {
        self.request(
            "workspace/executeCommand",
            json!({"command": command, "arguments": [argument]}),
        )
        .await
    }

    pub async fn notify(&self, method: &str, mut params: Value) {
        if method == "workspace/didChangeConfiguration" {
            self.shared.lock().unwrap().settings = params["settings"].clone();
            if self.user_scopes.load(Ordering::SeqCst) {
                params["settings"] = with_user_scopes(params["settings"].take());
            }
        }
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// A barrier instead of a sleep: returns once the sidecar's configuration task has finished
    /// every pass asked for so far, and a pass after them (which read every config file again).
    /// The task runs one pass at a time, so: the settings last sent plus a disabled probe server
    /// go out as `workspace/didChangeConfiguration`, and the probe's `serverStatus` (published
    /// while that pass applies its result) means every earlier pass is done. Then the settings go
    /// out again without the probe, and this returns once `listServers` no longer shows it.
    /// Editor-defined servers need `serverScopes` here: the probe is a "user" server.
    pub async fn settled(&self) {
        assert!(
            self.user_scopes.load(Ordering::SeqCst),
            "settled() needs an editor that reports serverScopes"
        );
        let probe = format!(
            "{SETTLED_PROBE}{}",
            self.next_id.fetch_add(1, Ordering::SeqCst)
        );
        let settings = self.shared.lock().unwrap().settings.clone();
        let mut with_probe = settings.clone();
        let target = if with_probe.get("mcpSidecar").is_some_and(Value::is_object) {
            &mut with_probe["mcpSidecar"]
        } else {
            &mut with_probe
        };
        if !target.is_object() {
            *target = json!({});
        }
        let definition = json!({"command": "mcp-sidecar-settled-probe", "disabled": true});
        match target.get_mut("servers").and_then(Value::as_object_mut) {
            Some(servers) => {
                servers.insert(probe.clone(), definition);
            }
            None => target["servers"] = json!({ probe.clone(): definition }),
        }
        if let Some(scopes) = target
            .get_mut("serverScopes")
            .and_then(Value::as_object_mut)
        {
            scopes.insert(probe.clone(), json!("user"));
        }
        let mark = self.mark();
        self.send_settings(with_probe).await;
        self.wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/serverStatus" && n["params"]["name"] == probe
        })
        .await;
        self.send_settings(settings).await;
        eventually("the settled() probe to be removed", || async {
            let listed = self.command("mcp-sidecar.listServers", json!({})).await;
            !listed
                .as_array()
                .is_some_and(|l| l.iter().any(|s| s["name"] == probe))
        })
        .await;
    }

    async fn send_settings(&self, settings: Value) {
        let settings = with_user_scopes(settings);
        self.send(
            json!({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration",
                         "params": {"settings": settings}}),
        )
        .await;
    }

    /// How many prompts (`mcp-sidecar/*` requests) the sidecar has sent so far, answered or not.
    pub fn prompts_seen(&self) -> usize {
        self.requests_seen("mcp-sidecar/")
    }

    /// How many requests whose method starts with `prefix` the sidecar has sent so far.
    pub fn requests_seen(&self, prefix: &str) -> usize {
        let s = self.shared.lock().unwrap();
        s.request_methods
            .iter()
            .filter(|m| m.starts_with(prefix))
            .count()
    }

    /// Waits until the sidecar closed the connection (after `exit`): nothing more can arrive.
    pub async fn wait_closed(&self) {
        let closed = self.wait(|s| s.closed.then_some(())).await.is_some();
        assert!(closed, "the sidecar did not close the connection");
    }

    pub async fn respond(&self, request: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": request["id"].clone(), "result": result}))
            .await;
    }

    /// The next request the sidecar sent to the editor with this method.
    pub async fn next_request(&self, method: &str) -> Value {
        self.wait(|s| {
            let pos = s.requests.iter().position(|r| r["method"] == method)?;
            s.requests.remove(pos)
        })
        .await
        .unwrap_or_else(|| panic!("no {method} request from the sidecar"))
    }

    /// The next prompt the sidecar sent (any `mcp-sidecar/*` request).
    pub async fn next_prompt(&self) -> Value {
        self.wait(|s| {
            let pos = s.requests.iter().position(|r| {
                r["method"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("mcp-sidecar/"))
            })?;
            s.requests.remove(pos)
        })
        .await
        .expect("no prompt from the sidecar")
    }

    /// Answers the next prompts in order, checking each one's method; returns what was shown.
    pub async fn answer_prompts(&self, script: &[(&str, Value)]) -> Vec<Value> {
        let mut shown = Vec::new();
        for (method, answer) in script {
            let prompt = self.next_prompt().await;
            assert_eq!(prompt["method"], *method, "unexpected prompt {prompt:#}");
            self.respond(&prompt, answer.clone()).await;
            shown.push(prompt);
        }
        shown
    }

    /// How many notifications have arrived so far (a mark for `wait_notification`).
    pub fn mark(&self) -> usize {
        self.shared.lock().unwrap().notifications.len()
    }

    /// Every notification so far; looking does not count as reading (see
    /// [`TestEditor::read_notifications`]).
    pub fn notifications(&self) -> Vec<Value> {
        self.shared.lock().unwrap().notifications.clone()
    }

    /// Waits for a notification after `mark` that satisfies `pred`.
    pub async fn wait_notification(&self, mark: usize, pred: impl Fn(&Value) -> bool) -> Value {
        self.try_wait_notification(mark, pred, WAIT)
            .await
            .unwrap_or_else(|| {
                panic!(
                    "expected notification did not arrive; got {:#?}",
                    self.notifications()
                )
            })
    }

    pub async fn try_wait_notification(
        &self,
        mark: usize,
        pred: impl Fn(&Value) -> bool,
        within: Duration,
    ) -> Option<Value> {
        let (_, found) = self.find_notification(mark, pred, within).await?;
        Some(found)
    }

    /// The first notification after `mark` that satisfies `pred` (waiting `within` at most for
    /// it), and where it is; it counts as read.
    async fn find_notification(
        &self,
        mark: usize,
        pred: impl Fn(&Value) -> bool,
        within: Duration,
    ) -> Option<(usize, Value)> {
        tokio::time::timeout(
            within,
            self.wait(|s| {
                let at = mark + s.notifications.iter().skip(mark).position(&pred)?;
                s.read[at] = true;
                Some((at, s.notifications[at].clone()))
            }),
        )
        .await
        .ok()
        .flatten()
    }

    /// The notifications after `mark` that satisfy `pred`, as they are now; they count as read.
    pub fn read_notifications(&self, mark: usize, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
        let mut s = self.shared.lock().unwrap();
        let mut found = Vec::new();
        for at in mark..s.notifications.len() {
            if pred(&s.notifications[at]) {
                s.read[at] = true;
                found.push(s.notifications[at].clone());
            }
        }
        found
    }

    /// Says the test does not care about unread messages with this method (a notification the
    /// sidecar sends on its own that this test does not look at), for the rest of the test.
    pub fn ignore(&self, method: &str) {
        self.shared
            .lock()
            .unwrap()
            .ignored
            .insert(method.to_owned());
    }

    /// What the sidecar sent that the test did not read, one line each, leaving out the
    /// methods of [`UNCHECKED`], those the test ignores, `starting` statuses (a step to an
    /// outcome, `running` or `failed`, which is checked itself; a retry's comes when it comes),
    /// and [`TestEditor::settled`]'s probes.
    pub fn unread(&self) -> Vec<String> {
        let s = self.shared.lock().unwrap();
        let skipped = |message: &Value| {
            let method = message["method"].as_str().unwrap_or_default();
            let status = &message["params"];
            UNCHECKED.contains(&method)
                || s.ignored.contains(method)
                || (method == "mcp-sidecar/serverStatus"
                    && (status["state"] == "starting"
                        || status["name"]
                            .as_str()
                            .is_some_and(|n| n.starts_with(SETTLED_PROBE))))
        };
        // A server's status repeating a state the test read for that server (the same state,
        // sent again with another message, or not folded into one by the sidecar's coalescing)
        // tells the test nothing new.
        let status_of = |n: &Value| {
            (n["method"] == "mcp-sidecar/serverStatus")
                .then(|| (n["params"]["name"].clone(), n["params"]["state"].clone()))
        };
        let states_read: HashSet<_> = s
            .notifications
            .iter()
            .zip(&s.read)
            .filter(|(_, read)| **read)
            .filter_map(|(n, _)| status_of(n))
            .collect();
        let repeat = |n: &Value| status_of(n).is_some_and(|s| states_read.contains(&s));
        let notifications = s
            .notifications
            .iter()
            .zip(&s.read)
            .filter(|(n, read)| !**read && !skipped(n) && !repeat(n))
            .map(|(n, _)| format!("  notification {}", brief(n)));
        let requests = s
            .requests
            .iter()
            .filter(|r| !skipped(r))
            .map(|r| format!("  request {}", brief(r)));
        let replies = s
            .unread_replies
            .iter()
            .map(|r| format!("  reply {}", brief(r)));
        notifications.chain(requests).chain(replies).collect()
    }

    /// Waits until a `serverStatus` for `server` reports `state`. The server's `needsTrust`
    /// statuses after `mark` and before that one count as read too: they are the way there (a
    /// workspace's server waits for trust, then starts).
    pub async fn wait_status(&self, mark: usize, server: &str, state: &str) -> Value {
        let status =
            |n: &Value| n["method"] == "mcp-sidecar/serverStatus" && n["params"]["name"] == server;
        let (at, reached) = self
            .find_notification(mark, |n| status(n) && n["params"]["state"] == state, WAIT)
            .await
            .unwrap_or_else(|| {
                panic!(
                    "{server} never reported {state}; got {:#?}",
                    self.notifications()
                )
            });
        let mut s = self.shared.lock().unwrap();
        for i in mark..at {
            let n = &s.notifications[i];
            if status(n) && n["params"]["state"] == "needsTrust" {
                s.read[i] = true;
            }
        }
        reached["params"].clone()
    }

    /// When the messages of [`BIG_MESSAGE`] bytes or more came, oldest first.
    pub fn big_arrivals(&self) -> Vec<Arrival> {
        self.shared.lock().unwrap().big_arrivals.clone()
    }

    pub fn is_closed(&self) -> bool {
        self.shared.lock().unwrap().closed
    }

    async fn wait<T>(&self, mut check: impl FnMut(&mut Shared) -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + WAIT;
        loop {
            let notified = self.changed.notified();
            {
                let mut s = self.shared.lock().unwrap();
                if let Some(v) = check(&mut s) {
                    return Some(v);
                }
                if s.closed {
                    return None;
                }
            }
            if tokio::time::timeout_at(deadline.into(), notified)
                .await
                .is_err()
            {
                return None;
            }
        }
    }

    /// `initialize` + `initialized` with the given folders and settings.
    pub async fn initialize(
        &self,
        folders: &[(&Path, &str)],
        settings: Value,
        experimental: Value,
    ) -> Value {
        // Like the editors the project ships, the test editor reports its servers' scopes (and
        // they are the person's own, "user") unless the test says otherwise: `serverScopes:
        // false` in `experimental.mcpSidecar`, or its own `serverScopes` map in the settings.
        let mut experimental = experimental;
        if experimental.is_null() {
            experimental = json!({});
        }
        if let Some(obj) = experimental.as_object_mut() {
            let caps = obj.entry("mcpSidecar").or_insert_with(|| json!({}));
            if let Some(caps) = caps.as_object_mut() {
                caps.entry("serverScopes").or_insert(json!(true));
            }
        }
        let reports = experimental["mcpSidecar"]["serverScopes"] == true;
        self.initialize_with(
            folders,
            settings,
            json!({"experimental": experimental}),
            reports,
        )
        .await
    }

    /// `initialize` (the settings as `initializationOptions`, with every server's scope "user"
    /// when `reports`) and `initialized`; the `initialize` result.
    async fn initialize_with(
        &self,
        folders: &[(&Path, &str)],
        settings: Value,
        capabilities: Value,
        reports: bool,
    ) -> Value {
        self.user_scopes.store(reports, Ordering::SeqCst);
        self.shared.lock().unwrap().settings = settings.clone();
        let settings = if reports {
            with_user_scopes(settings)
        } else {
            settings
        };
        let folders: Vec<Value> = folders
            .iter()
            .map(|(p, n)| json!({"uri": file_uri(p), "name": n}))
            .collect();
        let response = self
            .request(
                "initialize",
                json!({"processId": null, "rootUri": null, "capabilities": capabilities,
                    "workspaceFolders": folders, "initializationOptions": settings}),
            )
            .await;
        assert!(
            response.get("error").is_none(),
            "initialize failed: {response}"
        );
        self.notify("initialized", json!({})).await;
        response["result"].clone()
    }

    /// `initialize` + `initialized` as an editor without the sidecar's plugin: `capabilities`
    /// as given (no `experimental.mcpSidecar`), no server scopes reported.
    pub async fn initialize_plain(
        &self,
        folders: &[(&Path, &str)],
        settings: Value,
        capabilities: Value,
    ) -> Value {
        self.initialize_with(folders, settings, capabilities, false)
            .await
    }

    /// `shutdown`, then `exit`, then waits until the sidecar closed the connection (so all it
    /// sent is in). The `stopped` statuses sent from `shutdown` on count as read: stopping the
    /// servers is what the test asked for.
    pub async fn shutdown_and_exit(&self) {
        let mark = self.mark();
        let response = self.request("shutdown", Value::Null).await;
        assert!(response.get("error").is_none(), "{response}");
        self.notify("exit", Value::Null).await;
        self.wait_closed().await;
        self.read_notifications(mark, |n| {
            n["method"] == "mcp-sidecar/serverStatus" && n["params"]["state"] == "stopped"
        });
    }
}

/// A message on one line, its text cut at 400 characters.
fn brief(message: &Value) -> String {
    let text = message.to_string();
    match text.char_indices().nth(400) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The next message, with its [`Arrival`] when its body is [`BIG_MESSAGE`] bytes or more.
async fn read_message<R: AsyncRead + Unpin>(
    reader: &mut BufReader<R>,
) -> Option<(Value, Option<Arrival>)> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length:") {
            length = v.trim().parse::<usize>().ok();
        }
    }
    let header = Instant::now();
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).await.ok()?;
    let read = Instant::now();
    let message = serde_json::from_slice(&body).ok()?;
    let arrival = (body.len() >= BIG_MESSAGE).then(|| Arrival {
        header,
        body: read,
        parsed: Instant::now(),
    });
    Some((message, arrival))
}

pub fn file_uri(path: &Path) -> String {
    url::Url::from_directory_path(path)
        .unwrap()
        .as_str()
        .trim_end_matches('/')
        .to_string()
}

/// The built binary (run with the isolated home of [`isolate_user_config`]).
pub fn sidecar_bin() -> PathBuf {
    isolate_user_config();
    PathBuf::from(env!("CARGO_BIN_EXE_mcp-sidecar"))
}

/// The built binary as an editor starts it: `lsp`, stdio piped, killed with the test, stderr
/// shown only with `SIDECAR_STDERR` set. Add arguments and environment, then [`spawn_editor`].
pub fn sidecar_command() -> tokio::process::Command {
    let mut command = tokio::process::Command::new(sidecar_bin());
    command
        .arg("lsp")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(if std::env::var_os("SIDECAR_STDERR").is_some() {
            std::process::Stdio::inherit()
        } else {
            std::process::Stdio::null()
        })
        .kill_on_drop(true);
    command
}

/// Waits (10 s at most) for the sidecar binary to exit after `exit`; it must exit cleanly.
pub async fn wait_exit(child: &mut tokio::process::Child) {
    let exited = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert!(
        matches!(&exited, Ok(Ok(status)) if status.success()),
        "the sidecar did not exit cleanly after `exit`: {exited:?}"
    );
}

/// Starts the sidecar and connects a scripted editor to its stdio.
pub fn spawn_editor(
    command: &mut tokio::process::Command,
) -> (tokio::process::Child, CheckedEditor) {
    let mut child = command.spawn().expect("the sidecar binary starts");
    let editor = TestEditor::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    (child, CheckedEditor::new(editor))
}

/// A server definition running the built-in demo server.
pub fn demo_server(era: &str, pin: Option<&str>) -> Value {
    let mut def = json!({"command": sidecar_bin(), "args": ["demo-server", "--era", era]});
    if let Some(pin) = pin {
        def["protocolVersion"] = json!(pin);
    }
    def
}

/// Starts the sidecar in-process over a duplex pipe; no user config file is read.
pub fn in_process() -> CheckedEditor {
    isolate_user_config();
    let (editor_side, sidecar_side) = tokio::io::duplex(1 << 20);
    let (sr, sw) = tokio::io::split(sidecar_side);
    tokio::spawn(mcp_sidecar::lsp::serve(sr, sw));
    let (er, ew) = tokio::io::split(editor_side);
    CheckedEditor::new(TestEditor::new(er, ew))
}

/// Points HOME, XDG_CONFIG_HOME, XDG_STATE_HOME and XDG_RUNTIME_DIR at empty folders so a
/// developer's own config, trust decisions and sampling log never leak in (nor out). Every
/// in-process test of the one test binary, and every sidecar it starts, shares them.
pub fn isolate_user_config() {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        // SAFETY: set once (the first in-process test), to the same values for every test.
        unsafe {
            std::env::set_var("HOME", dir.path().join("home"));
            std::env::set_var("XDG_CONFIG_HOME", dir.path().join("config"));
            std::env::set_var("XDG_STATE_HOME", dir.path().join("state"));
            // The gateway's discovery files.
            std::env::set_var("XDG_RUNTIME_DIR", dir.path().join("run"));
        }
        dir
    });
}

/// The `structuredContent` of a `callTool` result.
pub fn structured(result: &Value) -> Value {
    result["structuredContent"].clone()
}

/// The editor capabilities of a full editor (every UI primitive but a language model).
pub fn full_ui() -> Value {
    json!({"mcpSidecar": {"inputBox": true, "quickPick": true, "editDraft": true, "clipboard": true, "serverScopes": true}})
}

/// Settings with `serverScopes` naming every server in them "user" (as the Neovim plugin sends
/// them), unless the settings carry their own `serverScopes`. Handles the nested `mcpSidecar`
/// spelling too.
pub fn with_user_scopes(mut settings: Value) -> Value {
    let target = if settings.get("mcpSidecar").is_some_and(Value::is_object) {
        &mut settings["mcpSidecar"]
    } else {
        &mut settings
    };
    let Some(obj) = target.as_object_mut() else {
        return settings;
    };
    if obj.contains_key("serverScopes") {
        return settings;
    }
    let names: serde_json::Map<String, Value> = ["servers", "mcpServers"]
        .iter()
        .filter_map(|k| obj.get(*k).and_then(Value::as_object))
        .flat_map(|m| m.keys().map(|n| (n.clone(), json!("user"))))
        .collect();
    if !names.is_empty() {
        obj.insert("serverScopes".into(), Value::Object(names));
    }
    settings
}

/// A server definition running one of the stdlib-only Python fixtures (`fixtures/bad/*.py`).
pub fn python_fixture(script: &str, args: &[&str], timeout_secs: u64) -> Value {
    let mut all = vec![fixture(script).display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    json!({"command": "python3", "args": all, "timeout": timeout_secs})
}

/// Test fixture paths.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// Shared by the interop and HTTP tests.
pub fn peer(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run scripts/install-peers.sh and source .cache/peers/env.sh")
    })
}

pub fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

pub async fn call(editor: &TestEditor, server: &str, tool: &str, arguments: Value) -> Value {
    editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": server, "tool": tool, "arguments": arguments}),
        )
        .await
}

/// Polls `check` until it holds.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + WAIT;
    while !check().await {
        assert!(Instant::now() < deadline, "{what} never happened");
        // A poll interval, for states that are read (a command, a file), not announced.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The `workspace/executeCommand` params of a `callTool` with a `workDoneToken`.
pub fn call_with_token(server: &str, tool: &str, arguments: Value, token: &str) -> Value {
    json!({
        "command": "mcp-sidecar.callTool",
        "arguments": [{"server": server, "tool": tool, "arguments": arguments}],
        "workDoneToken": token,
    })
}

/// `callTool` with a `workDoneToken` in its own task; the task ends with the whole response.
pub fn spawn_call_with_token(
    editor: &Arc<TestEditor>,
    server: &str,
    tool: &str,
    arguments: Value,
    token: &str,
) -> tokio::task::JoinHandle<Value> {
    let editor = editor.clone();
    let params = call_with_token(server, tool, arguments, token);
    tokio::spawn(async move { editor.request("workspace/executeCommand", params).await })
}

/// Runs `callTool` with a `workDoneToken`; returns the response message and the `$/progress`
/// values sent for that token (`begin`, each `report`, `end`), in order.
pub async fn call_with_progress(
    editor: &TestEditor,
    server: &str,
    tool: &str,
    arguments: Value,
    token: &str,
) -> (Value, Vec<Value>) {
    let mark = editor.mark();
    let response = editor
        .request(
            "workspace/executeCommand",
            call_with_token(server, tool, arguments, token),
        )
        .await;
    let mine = |n: &Value| n["method"] == "$/progress" && n["params"]["token"] == token;
    editor
        .wait_notification(mark, |n| mine(n) && n["params"]["value"]["kind"] == "end")
        .await;
    let values = editor
        .read_notifications(mark, mine)
        .into_iter()
        .map(|n| n["params"]["value"].clone())
        .collect();
    (response, values)
}

/// Waits for a `window/logMessage` after `mark` whose text contains `needle`; returns its params.
pub async fn wait_log(editor: &TestEditor, mark: usize, needle: &str) -> Value {
    editor
        .wait_notification(mark, |n| {
            n["method"] == "window/logMessage"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(needle))
        })
        .await["params"]
        .clone()
}

/// Waits for a `window/showMessage` after `mark` whose text contains `needle`; returns its params.
pub async fn wait_shown(editor: &TestEditor, mark: usize, needle: &str) -> Value {
    editor
        .wait_notification(mark, |n| {
            n["method"] == "window/showMessage"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(needle))
        })
        .await["params"]
        .clone()
}

/// Whether `n` is a `serverStatus` of `server` reporting `state`.
pub fn is_status(n: &Value, server: &str, state: &str) -> bool {
    n["method"] == "mcp-sidecar/serverStatus"
        && n["params"]["name"] == server
        && n["params"]["state"] == state
}

/// The texts of the `window/showMessage`s after `mark`, in order; they count as read.
pub fn read_shown(editor: &TestEditor, mark: usize) -> Vec<String> {
    editor
        .read_notifications(mark, |n| n["method"] == "window/showMessage")
        .iter()
        .map(|n| {
            n["params"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

fn call_arg(server: &str, tool: &str, arguments: Value) -> Value {
    let mut arg = json!({"server": server, "tool": tool});
    if !arguments.is_null() {
        arg["arguments"] = arguments;
    }
    arg
}

/// `mcp-sidecar.callTool` in its own task; the task ends with the command's result. `Null`
/// arguments are left out (the sidecar then asks for them).
pub fn spawn_call(
    editor: &Arc<TestEditor>,
    server: &str,
    tool: &str,
    arguments: Value,
) -> tokio::task::JoinHandle<Value> {
    let editor = editor.clone();
    let arg = call_arg(server, tool, arguments);
    tokio::spawn(async move { editor.command("mcp-sidecar.callTool", arg).await })
}

/// As [`spawn_call`], but the task ends with the whole response (result or error).
pub fn spawn_call_response(
    editor: &Arc<TestEditor>,
    server: &str,
    tool: &str,
    arguments: Value,
) -> tokio::task::JoinHandle<Value> {
    let editor = editor.clone();
    let arg = call_arg(server, tool, arguments);
    tokio::spawn(async move { editor.command_response("mcp-sidecar.callTool", arg).await })
}
