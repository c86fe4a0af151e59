//! The LSP face's serve loop, in place of tower-lsp-server's `Server`.
//!
//! tower-lsp-server's `Server` decodes each message through an untagged enum (a buffered copy of
//! the message tried against each variant), routes it through its layers and its router (the
//! params decoded a second time, the handler's future boxed and moved), and sends each reply
//! through two channels and a framed writer. For `workspace/executeCommand`, which an editor sends
//! for every tool call, that was more of the sidecar's own work per call than the relay to the
//! server (docs/benchmarks.md, "Issue 18, fifth round").
//!
//! This loop frames and reads the messages itself and takes every `workspace/executeCommand`:
//! the usual one read in one pass ([`lane::LaneMessage`]), any other read as tower-lsp-server
//! reads a request, and answered as it answers one ([`Lifecycle`]: "not initialized" before
//! `initialize` has succeeded, an invalid request after `shutdown` or for an id in use, its
//! reading of the params). Each runs through [`Backend::command`] under the panic guard, and
//! `$/cancelRequest` for one is answered here with -32800, as tower-lsp-server answers it. Every
//! other message goes to tower-lsp-server's service, which keeps the lifecycle (`initialize`,
//! `shutdown`, `exit`), the other methods and the sidecar's own requests to the editor.
//!
//! A result that came as the server sent it ([`Reply::Raw`]) is written into its reply as
//! those bytes: a big one is queued as it is, not copied ([`Output`]).
//!
//! Everything runs in one task, as in tower-lsp-server: the handlers' futures are polled here.
//! When the editor's input ends (or after `exit`), the commands still running are cancelled (one
//! may be waiting on a person who can no longer answer); the loop returns once the service's
//! handlers have finished and what is queued is written.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::{AbortHandle, Abortable, BoxFuture};
use futures::stream::FuturesUnordered;
use futures::{Sink, Stream};
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::gen_lsp_types::ExecuteCommandParams;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Request, Response};
use tower_lsp_server::{ClientSocket, ExitedError, LspService};
use tower_service::Service;

use super::backend::Backend;
use super::commands::Command;
use super::gate::CONCURRENCY_LEVEL;
use crate::mcp::Reply;

/// Messages read from the input per turn before the loop lets other tasks run.
const MESSAGES_PER_TURN: usize = 32;

const CANCEL_REQUEST: &str = "$/cancelRequest";

pub(super) type Handled = Result<Reply, Error>;

mod frames;
mod lane;

use frames::{Input, Output};
use lane::{Cancel, EXECUTE_COMMAND, Head, LaneMessage, execute_command_named, integer_or_string};

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
        output: Output::new(output),
        service,
        backend,
        held: None,
        jobs: FuturesUnordered::new(),
        running: foldhash::HashMap::default(),
        lifecycle: Lifecycle::Uninitialized,
        requests: Some(requests),
        responses,
        answers: VecDeque::new(),
    };
    std::future::poll_fn(|cx| serve.poll(cx)).await;
}

/// Where the session is, as tower-lsp-server's lifecycle layers track it (`service/layers.rs`),
/// which decide how it answers a request: the loop follows the same steps at the same moments.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lifecycle {
    /// Before an `initialize` has succeeded (also while one runs, and after one failed):
    /// requests are answered "not initialized".
    Uninitialized,
    /// Serving; a second `initialize` is refused and changes nothing.
    Initialized,
    /// After `shutdown` was handed on: requests are invalid.
    ShutDown,
}

/// tower-lsp-server's answer to a request before `initialize` has succeeded.
fn not_initialized() -> Error {
    Error {
        code: ErrorCode::ServerError(-32002),
        message: "Server not initialized".into(),
        data: None,
    }
}

struct Serve<I, O, Q, A> {
    input: Input<I>,
    /// False once the input ended, failed, or `exit` was handed on.
    reading: bool,
    output: Output<O>,
    service: LspService<Backend>,
    backend: Backend,
    /// A request for the service, waiting for it to be ready.
    held: Option<Request>,
    jobs: FuturesUnordered<Job>,
    /// The commands still running, by id: to cancel them, and to refuse an id in use.
    running: foldhash::HashMap<Id, AbortHandle>,
    lifecycle: Lifecycle,
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
        self.poll_turn(cx)
    }

    fn output(&mut self) -> &mut Output<O> {
        &mut self.output
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
                while self.output.room() {
                    match Pin::new(&mut *requests).poll_next(cx) {
                        Poll::Ready(Some(request)) => {
                            self.output.message(&request);
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
                for (_, handle) in self.running.drain() {
                    handle.abort();
                    progress = true;
                }
                if self.jobs.is_empty() {
                    let output = self.output();
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
        // does not read that way (or any other message) goes the general way below.
        if self.lifecycle == Lifecycle::Initialized
            && execute_command_named(body)
            && let Ok(message) = serde_json::from_str::<LaneMessage>(text)
            && message.method == EXECUTE_COMMAND
            && message.jsonrpc == "2.0"
            && let Some(id) = integer_or_string(message.id)
            && !self.running.contains_key(&id)
        {
            return self.command(id, message.params.command());
        }
        let head: Head = match serde_json::from_str(text) {
            Ok(head) => head,
            Err(e) => return self.undecodable(&e),
        };
        match head.method.as_deref() {
            Some(EXECUTE_COMMAND) => return self.execute_command(text),
            Some(CANCEL_REQUEST) => {
                let id = head.params.and_then(|p| {
                    let cancel: Cancel = serde_json::from_str(p.get()).ok()?;
                    integer_or_string(cancel.id)
                });
                if let Some(handle) = id.and_then(|id| self.running.remove(&id)) {
                    handle.abort();
                    return;
                }
            }
            _ => {}
        }
        if head.method.is_some() {
            match serde_json::from_str::<Request>(text) {
                Ok(request) => self.held = Some(request),
                Err(e) => self.undecodable(&e),
            }
        } else {
            match serde_json::from_str::<Response>(text) {
                Ok(answer) => self.answers.push_back(answer),
                Err(e) => self.undecodable(&e),
            }
        }
    }

    /// A `workspace/executeCommand` the one-pass reading did not take: read as tower-lsp-server
    /// reads a request (`jsonrpc::Request`), and answered as it answers one: nothing to a
    /// notification; its lifecycle layers' error before `initialize` has succeeded and after
    /// `shutdown`; its request table's for an id in use; its router's for params that do not
    /// read as `ExecuteCommandParams` (`jsonrpc/router.rs`, `FromParams`). What remains runs.
    fn execute_command(&mut self, text: &str) {
        let request: Request = match serde_json::from_str(text) {
            Ok(request) => request,
            Err(e) => return self.undecodable(&e),
        };
        let (_, id, params) = request.into_parts();
        let Some(id) = id else { return };
        let refused = match self.lifecycle {
            Lifecycle::Uninitialized => Some(not_initialized()),
            Lifecycle::ShutDown => Some(Error::invalid_request()),
            Lifecycle::Initialized if self.running.contains_key(&id) => {
                Some(Error::invalid_request())
            }
            Lifecycle::Initialized => None,
        };
        if let Some(error) = refused {
            return self.output().reply(&id, &Err(error));
        }
        let params = match params {
            None => Err(Error::invalid_params("Missing params field")),
            Some(params) => serde_json::from_value::<ExecuteCommandParams>(params)
                .map_err(|e| Error::invalid_params(e.to_string())),
        };
        match params {
            Ok(params) => self.command(id, params.into()),
            Err(error) => self.output().reply(&id, &Err(error)),
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

    /// Runs a command: request `id` is answered with its reply.
    fn command(&mut self, id: Id, command: Command) {
        let backend = self.backend.clone();
        let handler: BoxFuture<'static, Handled> =
            Box::pin(async move { backend.command(command).await });
        let (handle, registration) = AbortHandle::new_pair();
        self.running.insert(id.clone(), handle);
        self.jobs.push(Job::Command {
            id: Some(id),
            handler: Abortable::new(handler, registration),
        });
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
                // The lifecycle steps as tower-lsp-server's layers take them, when it is called.
                let method = request.method();
                let exit = method == "exit";
                let initialize =
                    method == "initialize" && self.lifecycle == Lifecycle::Uninitialized;
                if method == "shutdown" && self.lifecycle == Lifecycle::Initialized {
                    self.lifecycle = Lifecycle::ShutDown;
                }
                self.jobs.push(Job::Service {
                    initialize,
                    future: self.service.call(request),
                });
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

    fn finished(&mut self, reply: Finished) {
        match reply {
            Finished::Service(response, initialize) => {
                if initialize {
                    // An `initialize` that succeeded initializes; any other end leaves the
                    // session uninitialized.
                    self.lifecycle = match &response {
                        Some(response) if response.is_ok() => Lifecycle::Initialized,
                        _ => Lifecycle::Uninitialized,
                    };
                }
                if let Some(response) = response {
                    self.output().message(&response);
                }
            }
            Finished::Command(id, handled) => {
                self.running.remove(&id);
                self.output().reply(&id, &handled);
            }
        }
    }
}

enum Job {
    Service {
        /// An `initialize` that decides where the session goes.
        initialize: bool,
        future: BoxFuture<'static, Result<Option<Response>, ExitedError>>,
    },
    Command {
        id: Option<Id>,
        handler: Abortable<BoxFuture<'static, Handled>>,
    },
}

enum Finished {
    Service(Option<Response>, bool),
    Command(Id, Handled),
}

impl Future for Job {
    type Output = Finished;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Finished> {
        match self.get_mut() {
            Job::Service { initialize, future } => future
                .as_mut()
                .poll(cx)
                .map(|done| Finished::Service(done.ok().flatten(), *initialize)),
            Job::Command { id, handler } => {
                let handled = std::task::ready!(Pin::new(handler).poll(cx))
                    .unwrap_or_else(|_aborted| Err(Error::request_cancelled()));
                Poll::Ready(Finished::Command(id.take().unwrap_or_default(), handled))
            }
        }
    }
}
