//! The LSP face's serve loop, in place of tower-lsp-server's `Server`.
//!
//! tower-lsp-server's `Server` decodes each message through an untagged enum (a buffered copy of
//! the message tried against each variant), routes it through its layers and its router (the
//! params decoded a second time, the handler's future boxed and moved), and sends each reply
//! through two channels and a framed writer. For `workspace/executeCommand`, which an editor sends
//! for every tool call, that was more of the sidecar's own work per call than the relay to the
//! server (docs/benchmarks.md, "Issue 18, fifth round").
//!
//! This loop frames and reads the messages itself and answers `workspace/executeCommand` straight
//! from the [`Backend`] (the fast lane): the same handler under the same panic guard, with
//! `$/cancelRequest` for it answered here with -32800, as tower-lsp-server answers it. Every other
//! message goes to tower-lsp-server's service, which keeps the lifecycle (`initialize`,
//! `shutdown`, `exit`), the other methods and the sidecar's own requests to the editor; so does
//! `workspace/executeCommand` before `initialize` has succeeded, after `shutdown`, and whenever
//! anything about it is unusual (an id that is not an integer or a string, an id already in use,
//! params that do not read), so that those get tower-lsp-server's answers, as before.
//!
//! A `callTool` alone in flight is answered early: its reply is written from the server's read,
//! the moment the transport has the result (`mcp::answering_early`), and the command's own layers
//! finish after it, off the path the editor waits on (docs/benchmarks.md, "Issue 18, twelfth
//! round"). The reply and the loop's own answer to the request claim it once between them
//! ([`Claim`]), so a request is answered once whatever finishes first.
//!
//! Everything runs in one task, as in tower-lsp-server: the handlers' futures are polled here.
//! When the editor's input ends (or after `exit`), the fast lane's commands still running are
//! cancelled (one may be waiting on a person who can no longer answer); the loop returns once the
//! service's handlers have finished and what is queued is written.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::task::{Context, Poll, Waker};

use bytes::{Buf, Bytes, BytesMut};
use futures::future::{AbortHandle, Abortable, BoxFuture};
use futures::stream::FuturesUnordered;
use futures::{Sink, Stream};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::gen_lsp_types::ProgressToken;
use tower_lsp_server::jsonrpc::{Error, Id, Request, Response};
use tower_lsp_server::{ClientSocket, ExitedError, LspService};
use tower_service::Service;

use super::backend::Backend;
use super::commands::{Arg, Command};
use super::gate::CONCURRENCY_LEVEL;
use crate::contract;
use crate::mcp::{Early, answering_early, relay};

/// A header longer than this without its blank line is not LSP framing.
const HEADER_MAX: usize = 8 * 1024;
/// Messages read from the input per turn before the loop lets other tasks run.
const MESSAGES_PER_TURN: usize = 32;
/// Queued output past which the loop stops taking work until the editor reads.
const OUTPUT_HIGH: usize = 8 << 20;
/// The input buffer is read into in pieces of at least this much.
const READ_CHUNK: usize = 16 * 1024;

const EXECUTE_COMMAND: &str = "workspace/executeCommand";
const CANCEL_REQUEST: &str = "$/cancelRequest";

type Handled = Result<Option<Value>, Error>;

/// Serves LSP on `input`/`output` until the input ends or `exit` arrives.
pub(super) async fn run<I, O>(
    input: I,
    output: O,
    service: LspService<Backend>,
    socket: ClientSocket,
) where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let backend = service.inner().clone();
    let (requests, responses) = socket.split();
    let mut serve = Serve {
        input: Input::new(input),
        reading: true,
        shared: Arc::new(Shared {
            output: parking_lot::Mutex::new(Output::new(output)),
            waker: parking_lot::Mutex::new(None),
            jobs: AtomicUsize::new(0),
        }),
        service,
        backend,
        held: None,
        jobs: FuturesUnordered::new(),
        lane: foldhash::HashMap::default(),
        lane_open: false,
        initialize: None,
        requests: Some(requests),
        responses,
        answers: VecDeque::new(),
    };
    std::future::poll_fn(|cx| serve.poll(cx)).await;
}

/// What the loop shares with an early answer, which runs in the server's transport's task.
struct Shared<O> {
    output: parking_lot::Mutex<Output<O>>,
    /// The loop's waker: a reply the editor does not take at once is written on by the loop.
    waker: parking_lot::Mutex<Option<Waker>>,
    /// The loop's jobs (lane and service): an early answer only when its call is the one job.
    /// Several at once keep their replies batched in the loop's writes.
    jobs: AtomicUsize,
}

/// Who answers a lane request that may be answered early: [`Claim::take`] is true once.
#[derive(Default)]
struct Claim(AtomicU8);

impl Claim {
    fn take(&self) -> bool {
        self.0
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }
}

struct Serve<I, O, Q, A> {
    input: Input<I>,
    /// False once the input ended, failed, or `exit` was handed on.
    reading: bool,
    shared: Arc<Shared<O>>,
    service: LspService<Backend>,
    backend: Backend,
    /// A request for the service, waiting for it to be ready (it is not while `initialize` runs).
    held: Option<Request>,
    jobs: FuturesUnordered<Job>,
    /// The fast lane's requests still running, to cancel them.
    lane: foldhash::HashMap<Id, AbortHandle>,
    /// `initialize` has succeeded and `shutdown` has not come.
    lane_open: bool,
    /// The id of the `initialize` request being handled.
    initialize: Option<Id>,
    /// The sidecar's requests to the editor; `None` once the input ended.
    requests: Option<Q>,
    /// Where the editor's answers to them go.
    responses: A,
    answers: VecDeque<Response>,
}

impl<I, O, Q, A> Serve<I, O, Q, A>
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Unpin + Send + 'static,
    Q: Stream<Item = Request> + Unpin,
    A: Sink<Response, Error = ExitedError> + Unpin,
{
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        {
            let mut waker = self.shared.waker.lock();
            if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *waker = Some(cx.waker().clone());
            }
        }
        let done = self.poll_turn(cx);
        self.shared.jobs.store(self.jobs.len(), Ordering::Release);
        done
    }

    fn output(&self) -> parking_lot::MutexGuard<'_, Output<O>> {
        self.shared.output.lock()
    }

    fn poll_turn(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut turn = 0;
        loop {
            let mut progress = self.output().poll_drain(cx);
            while self.output().room() {
                match Pin::new(&mut self.jobs).poll_next(cx) {
                    Poll::Ready(Some(reply)) => {
                        self.finished(reply);
                        progress = true;
                    }
                    _ => break,
                }
            }
            if let Some(requests) = self.requests.as_mut() {
                while self.shared.output.lock().room() {
                    match Pin::new(&mut *requests).poll_next(cx) {
                        Poll::Ready(Some(request)) => {
                            self.shared.output.lock().message(&request);
                            progress = true;
                        }
                        Poll::Ready(None) => {
                            self.requests = None;
                            break;
                        }
                        Poll::Pending => break,
                    }
                }
            }
            progress |= self.poll_answers(cx);
            progress |= self.poll_held(cx);
            while self.reading
                && self.held.is_none()
                && self.output().room()
                && self.jobs.len() < CONCURRENCY_LEVEL
            {
                if turn == MESSAGES_PER_TURN {
                    cx.waker().wake_by_ref();
                    return Poll::Pending;
                }
                match self.input.poll_frame(cx) {
                    Poll::Ready(Some(Ok(body))) => {
                        turn += 1;
                        self.received(&body);
                        progress = true;
                    }
                    Poll::Ready(Some(Err(why))) => {
                        turn += 1;
                        tracing::error!("failed to decode a message from the editor: {why}");
                        self.output().reply(&Id::Null, &Err(Error::parse_error()));
                        progress = true;
                    }
                    Poll::Ready(None) => {
                        self.reading = false;
                        progress = true;
                    }
                    Poll::Pending => break,
                }
            }
            if !self.reading && self.held.is_none() {
                // The editor's side is gone or it said `exit`: no more requests go to it, the
                // commands still running are cancelled (one may wait on a person who can no
                // longer answer), the service's handlers finish, and what is queued goes out.
                self.requests = None;
                for (_, handle) in self.lane.drain() {
                    handle.abort();
                    progress = true;
                }
                if self.jobs.is_empty() {
                    let mut output = self.output();
                    output.poll_drain(cx);
                    return if output.is_empty() {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    };
                }
            }
            if !progress {
                return Poll::Pending;
            }
        }
    }

    /// One message from the editor.
    fn received(&mut self, body: &[u8]) {
        if body.is_empty() {
            return;
        }
        let text = match std::str::from_utf8(body) {
            Ok(text) => text,
            Err(e) => {
                tracing::error!("a message from the editor is not UTF-8: {e}");
                self.output().reply(&Id::Null, &Err(Error::parse_error()));
                return;
            }
        };
        // The hot path: a `workspace/executeCommand` read in one pass. Anything about it that
        // does not read (or any other message) goes the general way below, which decides as
        // before.
        if self.lane_open
            && execute_command_named(body)
            && let Ok(message) = serde_json::from_str::<LaneMessage>(text)
            && message.method == EXECUTE_COMMAND
            && message.jsonrpc == "2.0"
            && let Some(id) = integer_or_string(message.id)
            && !self.lane.contains_key(&id)
        {
            return self.fast(id, message.params.command());
        }
        let head: Head = match serde_json::from_str(text) {
            Ok(head) => head,
            Err(e) => return self.undecodable(&e),
        };
        match head.method.as_deref() {
            Some(EXECUTE_COMMAND) if self.lane_open && head.jsonrpc.as_deref() == Some("2.0") => {
                if let Some(id) = head.id.and_then(integer_or_string)
                    && !self.lane.contains_key(&id)
                    && let Some(params) = head.params
                    && let Some(params) = lane_params(params.get())
                {
                    return self.fast(id, params);
                }
            }
            Some(CANCEL_REQUEST) => {
                let id = head.params.and_then(|p| {
                    let cancel: Cancel = serde_json::from_str(p.get()).ok()?;
                    integer_or_string(cancel.id)
                });
                if let Some(handle) = id.and_then(|id| self.lane.remove(&id)) {
                    handle.abort();
                    return;
                }
            }
            _ => {}
        }
        if head.method.is_some() {
            match serde_json::from_str::<Request>(text) {
                Ok(request) => self.for_service(request),
                Err(e) => self.undecodable(&e),
            }
        } else {
            match serde_json::from_str::<Response>(text) {
                Ok(answer) => self.answers.push_back(answer),
                Err(e) => self.undecodable(&e),
            }
        }
    }

    /// A message that is JSON of the wrong shape is an invalid request; anything else a parse
    /// error (as tower-lsp-server answers them).
    fn undecodable(&mut self, e: &serde_json::Error) {
        tracing::error!("failed to decode a message from the editor: {e}");
        let error = if e.is_data() {
            Error::invalid_request()
        } else {
            Error::parse_error()
        };
        self.output().reply(&Id::Null, &Err(error));
    }

    /// `workspace/executeCommand` on the fast lane.
    fn fast(&mut self, id: Id, command: Command) {
        let backend = self.backend.clone();
        // `callTool` answers with the server's result as it came (unless progress is to end
        // before it): that may be written the moment it is read.
        let claim = (command.name == contract::CMD_CALL_TOOL && command.token.is_none())
            .then(|| Arc::new(Claim::default()));
        let handler: BoxFuture<'static, Handled> = match &claim {
            Some(claim) => Box::pin(answering_early(
                self.early(&id, claim.clone()),
                async move { backend.command(command).await },
            )),
            None => Box::pin(async move { backend.command(command).await }),
        };
        let (handle, registration) = AbortHandle::new_pair();
        self.lane.insert(id.clone(), handle);
        self.jobs.push(Job::Lane {
            id: Some(id),
            claim,
            handler: Abortable::new(handler, registration),
        });
    }

    /// Writes request `id`'s reply with a plain result as the server sent it, from the server's
    /// read: only when its call is the loop's one job and nothing is queued before it.
    fn early(&self, id: &Id, claim: Arc<Claim>) -> Early {
        let shared = self.shared.clone();
        let id = id.clone();
        Box::new(move |result| {
            if shared.jobs.load(Ordering::Acquire) != 1 {
                return false;
            }
            let Some(waker) = shared.waker.lock().clone() else {
                return false;
            };
            let mut output = shared.output.lock();
            if !output.is_empty() || output.gone || !claim.take() {
                return false;
            }
            output.reply_raw(&id, result);
            // What the editor does not take now, the loop writes (its waker is registered).
            output.poll_drain(&mut Context::from_waker(&waker));
            true
        })
    }

    fn for_service(&mut self, request: Request) {
        match request.method() {
            "initialize" => self.initialize = request.id().cloned(),
            "shutdown" => self.lane_open = false,
            _ => {}
        }
        self.held = Some(request);
    }

    /// Hands the held request to the service once it is ready.
    fn poll_held(&mut self, cx: &mut Context<'_>) -> bool {
        let Some(request) = self.held.take() else {
            return false;
        };
        match self.service.poll_ready(cx) {
            Poll::Pending => {
                self.held = Some(request);
                false
            }
            Poll::Ready(Err(_)) => {
                // The service has exited: nothing more is read.
                self.reading = false;
                true
            }
            Poll::Ready(Ok(())) => {
                let exit = request.method() == "exit";
                self.jobs.push(Job::Service(self.service.call(request)));
                self.shared.jobs.store(self.jobs.len(), Ordering::Release);
                if exit {
                    self.reading = false;
                }
                true
            }
        }
    }

    /// Hands the editor's answers to the service's client.
    fn poll_answers(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progress = false;
        while !self.answers.is_empty() {
            match Pin::new(&mut self.responses).poll_ready(cx) {
                Poll::Ready(Ok(())) => {
                    let answer = self.answers.pop_front().expect("not empty");
                    if Pin::new(&mut self.responses).start_send(answer).is_err() {
                        self.answers.clear();
                    }
                    progress = true;
                }
                Poll::Ready(Err(_)) => {
                    self.answers.clear();
                    progress = true;
                }
                Poll::Pending => return progress,
            }
        }
        let _ = Pin::new(&mut self.responses).poll_flush(cx);
        progress
    }

    fn finished(&mut self, reply: Reply) {
        match reply {
            Reply::Service(None) => {}
            Reply::Service(Some(response)) => {
                if self.initialize.as_ref() == Some(response.id()) {
                    self.initialize = None;
                    self.lane_open = response.is_ok();
                }
                self.output().message(&response);
            }
            Reply::Lane(id, handled, claim) => {
                self.lane.remove(&id);
                if claim.is_none_or(|claim| claim.take()) {
                    self.output().reply(&id, &handled);
                }
            }
        }
    }
}

/// What is read of every message before deciding where it goes.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    params: Option<&'a RawValue>,
}

/// `ExecuteCommandParams` as the lane reads them: the same members under the same rules as
/// lsp-types' derived reading (an object only, `command` required, a member named twice refused,
/// others ignored), the first argument kept as its JSON (a command parses its argument into its
/// own types in one go: building `Value` trees first, with `preserve_order`'s hashed maps, was
/// about a tenth of a small call's instructions), borrowed from the message.
struct LaneParams<'a> {
    command: Cow<'a, str>,
    /// The first of `arguments` (the only one a command takes).
    argument: Option<&'a RawValue>,
    work_done_token: Option<ProgressToken>,
}

impl<'a> LaneParams<'a> {
    fn command(self) -> Command {
        Command {
            name: self.command.into_owned(),
            arg: self
                .argument
                .map_or(Arg::None, |raw| Arg::Raw(raw.to_owned())),
            token: self.work_done_token,
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LaneParams<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error as _, IgnoredAny, MapAccess, SeqAccess, Visitor};
        /// `arguments`: a list (its first element kept) or `null`.
        struct First<'a>(Option<&'a RawValue>);
        impl<'de: 'a, 'a> Deserialize<'de> for First<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct List<'a>(std::marker::PhantomData<&'a ()>);
                impl<'de: 'a, 'a> Visitor<'de> for List<'a> {
                    type Value = First<'a>;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a list")
                    }
                    fn visit_seq<S: SeqAccess<'de>>(
                        self,
                        mut seq: S,
                    ) -> Result<First<'a>, S::Error> {
                        let first = seq.next_element()?;
                        while seq.next_element::<IgnoredAny>()?.is_some() {}
                        Ok(First(first))
                    }
                }
                d.deserialize_seq(List(std::marker::PhantomData))
            }
        }
        /// A string borrowed from the message where it can be (one with an escape is copied).
        struct Text<'a>(Cow<'a, str>);
        impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct Str<'a>(std::marker::PhantomData<&'a ()>);
                impl<'de: 'a, 'a> Visitor<'de> for Str<'a> {
                    type Value = Text<'a>;
                    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                        f.write_str("a string")
                    }
                    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Text<'a>, E> {
                        Ok(Text(Cow::Borrowed(text)))
                    }
                    fn visit_str<E>(self, text: &str) -> Result<Text<'a>, E> {
                        Ok(Text(Cow::Owned(text.to_owned())))
                    }
                }
                d.deserialize_str(Str(std::marker::PhantomData))
            }
        }
        struct Members<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Members<'a> {
            type Value = LaneParams<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("ExecuteCommandParams")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<LaneParams<'a>, M::Error> {
                let (mut command, mut arguments, mut token) = (None, None, None);
                while let Some(Text(key)) = map.next_key::<Text<'a>>()? {
                    match &*key {
                        "command" if command.is_none() => {
                            command = Some(map.next_value::<Text<'a>>()?.0);
                        }
                        "arguments" if arguments.is_none() => {
                            arguments = Some(map.next_value::<Option<First<'a>>>()?);
                        }
                        "workDoneToken" if token.is_none() => {
                            token = Some(map.next_value::<Option<ProgressToken>>()?);
                        }
                        "command" | "arguments" | "workDoneToken" => {
                            return Err(M::Error::custom(format_args!("duplicate field `{key}`")));
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(LaneParams {
                    command: command.ok_or_else(|| M::Error::missing_field("command"))?,
                    argument: arguments.flatten().and_then(|first| first.0),
                    work_done_token: token.flatten(),
                })
            }
        }
        d.deserialize_map(Members(std::marker::PhantomData))
    }
}

/// The params of a `workspace/executeCommand`, taken where lsp-types takes them (an object only).
fn lane_params(text: &str) -> Option<Command> {
    serde_json::from_str::<LaneParams>(text)
        .ok()
        .map(LaneParams::command)
}

/// A `workspace/executeCommand` request read in one pass, its params as the lane reads them
/// (rather than the message first with its params skipped, then the params again).
#[derive(Deserialize)]
struct LaneMessage<'a> {
    #[serde(borrow)]
    jsonrpc: Cow<'a, str>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    params: LaneParams<'a>,
}

#[derive(Deserialize)]
struct Cancel<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
}

/// Whether a message's text names `workspace/executeCommand` anywhere (then the one-pass read is
/// tried; a searcher is built once, not per message).
fn execute_command_named(body: &[u8]) -> bool {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(EXECUTE_COMMAND));
    FINDER.find(body).is_some()
}

/// A request id the fast lane takes: an integer or a string.
fn integer_or_string(raw: &RawValue) -> Option<Id> {
    let text = raw.get();
    match text.as_bytes().first()? {
        b'"' => serde_json::from_str(text).ok().map(Id::String),
        b'-' | b'0'..=b'9' => text.parse().ok().map(Id::Number),
        _ => None,
    }
}

enum Job {
    Service(BoxFuture<'static, Result<Option<Response>, ExitedError>>),
    Lane {
        id: Option<Id>,
        /// For a request that may be answered early.
        claim: Option<Arc<Claim>>,
        handler: Abortable<BoxFuture<'static, Handled>>,
    },
}

enum Reply {
    Service(Option<Response>),
    Lane(Id, Handled, Option<Arc<Claim>>),
}

impl Future for Job {
    type Output = Reply;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Reply> {
        match self.get_mut() {
            Job::Service(future) => future
                .as_mut()
                .poll(cx)
                .map(|done| Reply::Service(done.ok().flatten())),
            Job::Lane { id, claim, handler } => {
                let handled = std::task::ready!(Pin::new(handler).poll(cx))
                    .unwrap_or_else(|_aborted| Err(Error::request_cancelled()));
                Poll::Ready(Reply::Lane(
                    id.take().unwrap_or_default(),
                    handled,
                    claim.take(),
                ))
            }
        }
    }
}

/// The reply to a fast-lane request, as tower-lsp-server writes one.
#[derive(Serialize)]
struct LaneReply<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Error>,
    id: &'a Id,
}

/// The editor's input, split into message bodies by their `Content-Length` headers.
struct Input<I> {
    io: I,
    buf: BytesMut,
    /// The body length of the message whose header was read.
    body: Option<usize>,
}

impl<I: AsyncRead + Unpin> Input<I> {
    fn new(io: I) -> Self {
        Self {
            io,
            buf: BytesMut::new(),
            body: None,
        }
    }

    /// The next body; an error for a header that is not LSP framing (what follows it is
    /// skipped up to the next `Content-Length`); `None` at the end of the input.
    fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Bytes, String>>> {
        loop {
            if let Some(frame) = self.frame() {
                return Poll::Ready(Some(frame));
            }
            if self.buf.capacity() - self.buf.len() < READ_CHUNK {
                let want = self.body.unwrap_or(0).clamp(READ_CHUNK, 64 << 20);
                self.buf.reserve(want);
            }
            match tokio_util::io::poll_read_buf(Pin::new(&mut self.io), cx, &mut self.buf) {
                Poll::Ready(Ok(0)) => return Poll::Ready(None),
                Poll::Ready(Ok(_)) => {}
                Poll::Ready(Err(e)) => {
                    tracing::error!("reading from the editor failed: {e}");
                    return Poll::Ready(None);
                }
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// A whole frame from what was read, if there is one.
    fn frame(&mut self) -> Option<Result<Bytes, String>> {
        loop {
            if let Some(len) = self.body {
                if self.buf.len() < len {
                    return None;
                }
                self.body = None;
                return Some(Ok(self.buf.split_to(len).freeze()));
            }
            let end = memchr::memmem::find(&self.buf, b"\r\n\r\n");
            let end = match end {
                Some(end) if end <= HEADER_MAX => end,
                None if self.buf.len() <= HEADER_MAX => return None,
                _ => {
                    self.skip_garbage(1);
                    return Some(Err("a header without its end".into()));
                }
            };
            match content_length(&self.buf[..end]) {
                Ok(len) => {
                    self.buf.advance(end + 4);
                    self.body = Some(len);
                }
                Err(why) => {
                    self.skip_garbage(end + 4);
                    return Some(Err(why.into()));
                }
            }
        }
    }

    /// Drops what was read up to the next `Content-Length` from `from` on (all of it if none).
    fn skip_garbage(&mut self, from: usize) {
        let from = from.min(self.buf.len());
        let next = memchr::memmem::find(&self.buf[from..], b"Content-Length")
            .map_or(self.buf.len(), |at| from + at);
        self.buf.advance(next);
    }
}

/// The `Content-Length` of a header block (without its blank line). The reason never quotes
/// the header: when the framing is lost, what looks like one may be part of a body (an answer the
/// person typed, say), and the reason is logged.
fn content_length(header: &[u8]) -> Result<usize, &'static str> {
    if let Some(length) = super::splice::plain_content_length(header) {
        return Ok(length);
    }
    let header = std::str::from_utf8(header).map_err(|_| "a header that is not text")?;
    let mut length = None;
    for line in header.split("\r\n") {
        let (name, value) = line
            .split_once(':')
            .ok_or("a header line without a colon")?;
        if name.trim().eq_ignore_ascii_case("Content-Length") {
            let value = value.trim().parse();
            length = Some(value.map_err(|_| "a Content-Length that is not a length")?);
        }
    }
    length.ok_or("a header without Content-Length")
}

/// The editor's output: whole frames queued, written as the editor reads.
struct Output<O> {
    io: O,
    queued: Vec<u8>,
    written: usize,
    /// The writer has taken bytes since it was last flushed.
    unflushed: bool,
    /// Writing failed: what would be written is dropped.
    gone: bool,
    body: Vec<u8>,
}

impl<O: AsyncWrite + Unpin> Output<O> {
    fn new(io: O) -> Self {
        Self {
            io,
            queued: Vec::new(),
            written: 0,
            unflushed: false,
            gone: false,
            body: Vec::new(),
        }
    }

    fn room(&self) -> bool {
        self.queued.len() - self.written < OUTPUT_HIGH
    }

    fn is_empty(&self) -> bool {
        self.gone || (self.written == self.queued.len() && !self.unflushed)
    }

    fn reply(&mut self, id: &Id, handled: &Handled) {
        // A small result relayed as the server sent it (`mcp::direct::judge`): written here with
        // the reply, in one piece. (A big one is spliced in by the writer under this, uncopied.)
        if let Ok(Some(Value::String(result))) = handled
            && let Some(raw) = relay::take_small(result)
        {
            return self.reply_raw(id, &raw);
        }
        let (result, error) = match handled {
            Ok(value) => (Some(value.as_ref().unwrap_or(&Value::Null)), None),
            Err(error) => (None, Some(error)),
        };
        self.message(&LaneReply {
            jsonrpc: "2.0",
            result,
            error,
            id,
        });
    }

    /// Queues a reply whose result is `raw`, a JSON value as the server sent it.
    fn reply_raw(&mut self, id: &Id, raw: &[u8]) {
        if self.gone {
            return;
        }
        self.body.clear();
        self.body
            .extend_from_slice(br#"{"jsonrpc":"2.0","result":"#);
        self.body.extend_from_slice(raw);
        self.body.extend_from_slice(br#","id":"#);
        if serde_json::to_writer(&mut self.body, id).is_ok() {
            self.body.push(b'}');
            self.frame();
        }
    }

    /// Queues one message as a frame.
    fn message<T: Serialize>(&mut self, message: &T) {
        if self.gone {
            return;
        }
        self.body.clear();
        if let Err(e) = serde_json::to_writer(&mut self.body, message) {
            tracing::error!("failed to encode a message to the editor: {e}");
            return;
        }
        self.frame();
    }

    /// Queues the body as a frame.
    fn frame(&mut self) {
        self.queued.extend_from_slice(b"Content-Length: ");
        let mut digits = itoa::Buffer::new();
        self.queued
            .extend_from_slice(digits.format(self.body.len()).as_bytes());
        self.queued.extend_from_slice(b"\r\n\r\n");
        self.queued.extend_from_slice(&self.body);
        if self.body.capacity() > 1 << 20 {
            self.body = Vec::new();
        }
    }

    /// Writes what is queued, as far as the editor takes it: whether anything was written.
    fn poll_drain(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progress = false;
        while !self.gone && self.written < self.queued.len() {
            match Pin::new(&mut self.io).poll_write(cx, &self.queued[self.written..]) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    self.written += n;
                    self.unflushed = true;
                    progress = true;
                }
                Poll::Ready(result) => {
                    let why = result
                        .err()
                        .map_or("it took nothing".into(), |e| e.to_string());
                    tracing::error!("writing to the editor failed: {why}");
                    self.gone = true;
                    progress = true;
                }
                Poll::Pending => return progress,
            }
        }
        if self.written == self.queued.len() {
            self.written = 0;
            self.queued.clear();
            if self.queued.capacity() > 1 << 20 {
                self.queued = Vec::new();
            }
        }
        if self.unflushed && !self.gone {
            match Pin::new(&mut self.io).poll_flush(cx) {
                Poll::Ready(Ok(())) => self.unflushed = false,
                Poll::Ready(Err(e)) => {
                    tracing::error!("writing to the editor failed: {e}");
                    self.gone = true;
                }
                Poll::Pending => {}
            }
        }
        progress
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lane reads the params as lsp-types' `ExecuteCommandParams` reads them.
    #[test]
    fn the_lanes_params_are_read_as_lsp_types_reads_them() {
        use tower_lsp_server::gen_lsp_types::ExecuteCommandParams;
        for text in [
            r#"{"command":"c"}"#,
            r#"{"command":"c","arguments":[{"a":[1,{"b":null}]},"x",2.5]}"#,
            r#"{"command":"c","arguments":null,"workDoneToken":"t-1"}"#,
            r#"{"workDoneToken":7,"command":"c","arguments":[],"extra":{"x":1}}"#,
            r#"{"command":"c","workDoneToken":null}"#,
            r#"{"command":"c","workDoneToken":1.5}"#,
            r#"{"command":"c","workDoneToken":[1]}"#,
            r#"{"command":3}"#,
            r#"{"arguments":[]}"#,
            r#"{"command":"c","arguments":{"a":1}}"#,
            r#"["c",[]]"#,
            r#"{"command":"c","command":"d"}"#,
            r#"{"command":"c","arguments":[1],"arguments":[2]}"#,
            r#"{"comm\u0061nd":"c\n\u00e9","arguments":[[1,2],{"x":"y"}]}"#,
            r#"{"command":"c","arguments":"a"}"#,
            r#"{"command":"c","arguments":[],"workDoneToken":"x","workDoneToken":"y"}"#,
            r#"{"command":"c","arguments":[{"deep":[[[{"a":"\"]"}]]]}],"z":[{"command":1}]}"#,
            r#"{"command":null}"#,
            r#"{}"#,
            r#"null"#,
        ] {
            let typed = serde_json::from_str::<ExecuteCommandParams>(text).ok();
            let seen = |c: Command| {
                let arg = match c.arg {
                    Arg::None => None,
                    Arg::Value(v) => Some(v),
                    Arg::Raw(raw) => Some(serde_json::from_str::<Value>(raw.get()).unwrap()),
                };
                (c.name, arg, c.token)
            };
            let lane = lane_params(text).map(seen);
            assert_eq!(lane, typed.map(|t| seen(t.into())), "{text}");
            if let Some(Command { arg, .. }) = lane_params(text) {
                assert!(!matches!(arg, Arg::Value(_)), "the lane keeps the JSON");
            }
        }
    }

    /// A message read in one pass takes the lane exactly when, and as, the general reading
    /// (the message, then its params) takes it.
    #[test]
    fn the_one_pass_reading_decides_as_the_general_one() {
        let general = |text: &str| {
            let head: Head = serde_json::from_str(text).ok()?;
            (head.method.as_deref() == Some(EXECUTE_COMMAND)
                && head.jsonrpc.as_deref() == Some("2.0"))
            .then_some(())?;
            let id = head.id.and_then(integer_or_string)?;
            Some((id, lane_params(head.params?.get())?))
        };
        let one_pass = |text: &str| {
            let m: LaneMessage = serde_json::from_str(text).ok()?;
            (m.method == EXECUTE_COMMAND && m.jsonrpc == "2.0").then_some(())?;
            Some((integer_or_string(m.id)?, m.params.command()))
        };
        let seen = |c: Option<(Id, Command)>| {
            c.map(|(id, c)| {
                let arg = match c.arg {
                    Arg::Raw(raw) => Some(raw.get().to_string()),
                    _ => None,
                };
                (id, c.name, arg, c.token)
            })
        };
        let params = r#"{"command":"mcp-sidecar.callTool","arguments":[{"server":"s","tool":"t","arguments":{"a":1}}]}"#;
        let mut taken = 0;
        for text in [
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{params}}}"#
            ),
            format!(
                r#"{{"params":{params},"method":"workspace/executeCommand","id":"x","jsonrpc":"2.0"}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{params},"extra":[1]}}"#
            ),
            r#"{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand"}"#.to_string(),
            format!(r#"{{"jsonrpc":"2.0","method":"workspace/executeCommand","params":{params}}}"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":7.5,"method":"workspace/executeCommand","params":{params}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"1.0","id":7,"method":"workspace/executeCommand","params":{params}}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":{params},"id":8}}"#
            ),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace\/executeCommand","params":{params}}}"#
            ),
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"other","params":{params}}}"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":7,"method":"workspace/executeCommand","params":[{params}]}}"#
            ),
        ] {
            let one = seen(one_pass(&text));
            if one.is_some() {
                taken += 1;
                assert_eq!(one, seen(general(&text)), "{text}");
            }
        }
        assert_eq!(taken, 4, "the usual requests are read in one pass");
    }

    fn frames(input: &[u8]) -> Vec<Result<Vec<u8>, String>> {
        let mut reader = Input::new(&input[..0]);
        reader.buf.extend_from_slice(input);
        std::iter::from_fn(|| reader.frame())
            .map(|f| f.map(|b| b.to_vec()))
            .collect()
    }

    #[test]
    fn frames_are_split_by_their_content_length() {
        let got = frames(b"Content-Length: 2\r\n\r\n{}content-length:3\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n[1]Content-Length: 5\r\n\r\n{\"a\"");
        assert_eq!(got, vec![Ok(b"{}".to_vec()), Ok(b"[1]".to_vec())]);
    }

    #[test]
    fn a_bad_header_is_an_error_and_framing_resumes_at_the_next_content_length() {
        let got = frames(b"Content-Length: x\r\n\r\njunk junk Content-Length: 2\r\n\r\n{}");
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].as_ref().unwrap_err().contains("not a length"));
        assert_eq!(got[1], Ok(b"{}".to_vec()));
        let got = frames(b"Foo: bar\r\n\r\nContent-Length: 1\r\n\r\n1");
        assert!(
            got[0]
                .as_ref()
                .unwrap_err()
                .contains("without Content-Length")
        );
        assert_eq!(got[1], Ok(b"1".to_vec()));
    }

    #[test]
    fn a_header_that_never_ends_is_dropped() {
        let mut junk = vec![b'x'; HEADER_MAX + 10];
        junk.extend_from_slice(b"Content-Length: 1\r\n\r\n7");
        let got = frames(&junk);
        assert!(got[0].is_err());
        assert_eq!(got[1], Ok(b"7".to_vec()));
        assert_eq!(got.len(), 2);
    }

    proptest::proptest! {
        /// However the stream is cut into reads, the frames are the bodies written, in order,
        /// with the headers editors send (an extra `Content-Type`, any case of the name).
        #[test]
        fn frames_do_not_depend_on_how_the_stream_is_cut(
            bodies in proptest::collection::vec("[ -~é\r\n]{0,60}", 1..8),
            typed in proptest::collection::vec(proptest::bool::ANY, 8),
            cuts in proptest::collection::vec(0usize..400, 0..12),
        ) {
            let mut stream = Vec::new();
            for (i, body) in bodies.iter().enumerate() {
                let name = if typed[i] { "content-length" } else { "Content-Length" };
                stream.extend_from_slice(format!("{name}: {}\r\n", body.len()).as_bytes());
                if typed[i] {
                    stream.extend_from_slice(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n");
                }
                stream.extend_from_slice(b"\r\n");
                stream.extend_from_slice(body.as_bytes());
            }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(stream.len())).collect();
            cuts.push(stream.len());
            cuts.sort();
            let mut reader = Input::new(&b""[..]);
            let mut got = Vec::new();
            let mut from = 0;
            for cut in cuts {
                reader.buf.extend_from_slice(&stream[from..cut]);
                from = cut;
                while let Some(frame) = reader.frame() {
                    got.push(String::from_utf8(frame.unwrap().to_vec()).unwrap());
                }
            }
            proptest::prop_assert_eq!(got, bodies);
            proptest::prop_assert!(reader.buf.is_empty());
        }
    }

    #[test]
    fn only_integer_and_string_ids_take_the_fast_lane() {
        let id = |s: &str| integer_or_string(&RawValue::from_string(s.into()).unwrap());
        assert_eq!(id("7"), Some(Id::Number(7)));
        assert_eq!(id("-3"), Some(Id::Number(-3)));
        assert_eq!(id(r#""a\"b""#), Some(Id::String("a\"b".into())));
        assert_eq!(id("1.5"), None);
        assert_eq!(id("null"), None);
        assert_eq!(id("{}"), None);
    }
}
