//! The stdio transport under rmcp: newline-delimited JSON-RPC with a size cap per message.
//! A line that is not JSON-RPC is logged (with the server's name) and skipped; a batch (an array
//! of messages) is read as its messages, in order; a line over `maxMessageBytes` closes the
//! connection with a clear reason, so pending calls fail at once instead of waiting for an answer
//! that was thrown away.

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::Bytes;
use rmcp::RoleClient;
use rmcp::model::JsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Mutex;
use tokio_util::codec::{AnyDelimiterCodecError, Decoder};

use super::direct::Direct;
use super::lines::{Line, answer_of, parse_line, split_batch, too_deep};
use super::process::Diagnostics;
use super::scan::{self, Outline, Scan};
use super::write::{Writer, finish_line, write_line};
use crate::mcp::flood;

/// Lines at least this long are checked as they come in ([`LineCodec`]).
pub const LONG_LINE: usize = 64 * 1024;
/// The read buffer's usual size.
const READ_BUFFER: usize = 64 * 1024;
/// A line longer than this leaves the read buffer big ([`StdioTransport::receive`]).
const BIG_LINE: usize = 1 << 20;
/// Bytes read (and checked, [`LineCodec`]) in one turn of the event loop: after that much of
/// a line still coming, the reader lets the editor's and the other servers' tasks run.
const READ_TURN: usize = 1 << 20;
/// How long a big read buffer is kept while the server sends nothing.
const KEEP_BIG_BUFFER: std::time::Duration = std::time::Duration::from_secs(1);

pub struct StdioTransport {
    server: Arc<str>,
    writer: Writer,
    reader: LineReader,
    max_bytes: usize,
    diag: Arc<Diagnostics>,
    /// The rest of a batch whose first message was already returned.
    queued: VecDeque<RxJsonRpcMessage<RoleClient>>,
    /// Lines that are not JSON-RPC are logged at most [`flood::PER_SECOND`] a second.
    junk: flood::Window,
    /// The calls made past rmcp, answered from here.
    direct: Arc<Direct>,
}

/// The server's stdout split into lines ([`LineCodec`]), in a buffer that is reused for the
/// next big line ([`StdioTransport::shrink_buffer`]).
struct LineReader<R = ChildStdout> {
    io: R,
    buf: bytes::BytesMut,
    codec: LineCodec,
    eof: bool,
    /// After a line over [`BIG_LINE`], its length: the buffer's allocation holds at least that
    /// much, which the buffer takes back whole whenever it is empty and the line was dropped.
    reuse: usize,
    /// When the big allocation goes: [`KEEP_BIG_BUFFER`] after the last big line.
    keep_until: Option<tokio::time::Instant>,
}

/// What [`LineReader::poll_line`] gives: a line (`None` at the end), or a turn for the others.
enum Read {
    Line(Option<Result<bytes::Bytes, AnyDelimiterCodecError>>),
    Turn,
}

impl<R: tokio::io::AsyncRead + Unpin> LineReader<R> {
    fn new(io: R, codec: LineCodec) -> Self {
        LineReader {
            io,
            buf: bytes::BytesMut::with_capacity(READ_BUFFER),
            codec,
            eof: false,
            reuse: 0,
            keep_until: None,
        }
    }

    /// The next line, or `Read::Turn` after [`READ_TURN`] bytes of one still coming.
    fn poll_line(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Read> {
        use std::task::Poll;
        let mut taken = 0;
        loop {
            if let Some(line) = self.codec.decode(&mut self.buf).transpose() {
                if let Ok(l) = &line
                    && l.len() > BIG_LINE
                {
                    self.reuse = self.reuse.max(l.len() + 1);
                    self.keep_until = Some(tokio::time::Instant::now() + KEEP_BIG_BUFFER);
                }
                return Poll::Ready(Read::Line(Some(line)));
            }
            if self.eof {
                return Poll::Ready(Read::Line(self.codec.decode_eof(&mut self.buf).transpose()));
            }
            // A server writing faster than this reads keeps the pipe full, and every read is
            // ready at once: without a turn, a 10 MiB line held the event loop for all of it.
            if taken >= READ_TURN {
                return Poll::Ready(Read::Turn);
            }
            // Back to the start of the big allocation, when nothing else holds a part of it:
            // the next line then lands on pages already mapped.
            if self.reuse > 0 && self.buf.is_empty() {
                let _ = self.buf.try_reclaim(self.reuse);
            }
            if self.buf.len() == self.buf.capacity() {
                self.buf.reserve(1);
            }
            let n = std::task::ready!(tokio_util::io::poll_read_buf(
                std::pin::Pin::new(&mut self.io),
                cx,
                &mut self.buf
            ))
            .map_err(AnyDelimiterCodecError::Io);
            let n = match n {
                Ok(n) => n,
                Err(e) => return Poll::Ready(Read::Line(Some(Err(e)))),
            };
            taken += n;
            self.eof = n == 0;
        }
    }

    /// The next line. A big allocation is given up once no big line came for
    /// [`KEEP_BIG_BUFFER`] ([`LineReader::shrink`]), while this waits.
    async fn next(&mut self) -> Option<Result<bytes::Bytes, AnyDelimiterCodecError>> {
        loop {
            let read = match self.keep_until {
                None => std::future::poll_fn(|cx| self.poll_line(cx)).await,
                Some(deadline) => {
                    let line = std::future::poll_fn(|cx| self.poll_line(cx));
                    match tokio::time::timeout_at(deadline, line).await {
                        Ok(read) => read,
                        Err(_) => {
                            self.shrink();
                            continue;
                        }
                    }
                }
            };
            match read {
                Read::Line(line) => return line,
                // After the I/O driver's next look, so the editor's messages get their turn.
                Read::Turn => tokio::task::yield_now().await,
            }
        }
    }

    /// After a big line the buffer keeps its grown allocation (the line was split off it, and
    /// the buffer takes the whole allocation back once the line is dropped). That is kept for
    /// the next big line: its pages are already mapped, where fresh ones cost a page fault each
    /// (a third of the sidecar's CPU on a 10 MiB answer) and the unmapping after it. Once no
    /// big line came for [`KEEP_BIG_BUFFER`], a fresh small buffer replaces it, so the memory
    /// goes back to the system (not while a line is half read: then a while later).
    fn shrink(&mut self) {
        if self.buf.len() < READ_BUFFER {
            let mut fresh = bytes::BytesMut::with_capacity(READ_BUFFER);
            fresh.extend_from_slice(&self.buf);
            self.buf = fresh;
            self.reuse = 0;
            self.keep_until = None;
        } else {
            self.keep_until = Some(tokio::time::Instant::now() + KEEP_BIG_BUFFER);
        }
    }
}

impl StdioTransport {
    pub fn new(
        server: &str,
        stdin: ChildStdin,
        stdout: ChildStdout,
        max_bytes: usize,
        diag: Arc<Diagnostics>,
    ) -> Self {
        let codec = LineCodec::new(max_bytes);
        let writer: Writer = Arc::new(Mutex::new(Some(stdin)));
        Self {
            server: server.into(),
            direct: Direct::new(writer.clone()),
            writer,
            reader: LineReader::new(stdout, codec),
            max_bytes,
            diag,
            queued: VecDeque::new(),
            junk: flood::Window::default(),
        }
    }

    /// The requests made past rmcp on this connection ([`Direct`]).
    pub fn direct(&self) -> Arc<Direct> {
        self.direct.clone()
    }

    /// Acts on one parsed line; a message is queued for [`Transport::receive`].
    fn handle(&mut self, line: Line) {
        let line = match line {
            Line::Message(message) => match self.deliver_parsed(*message) {
                Some(message) => Line::Message(Box::new(message)),
                None => return,
            },
            other => other,
        };
        match line {
            Line::Message(message) if self.diag.deliver_progress(&message) => {}
            Line::Message(message) => self.queued.push_back(*message),
            Line::Skip => {}
            Line::Garbage(problem) => {
                let admit = self.junk.admit(std::time::Instant::now());
                if let Some(dropped) = admit.summary {
                    tracing::warn!(server = %self.server, "{dropped} more lines that are not JSON-RPC messages were ignored (more than {} a second)", flood::PER_SECOND);
                }
                if admit.pass {
                    tracing::warn!(
                        server = %self.server,
                        "ignored a line from the server that is not a JSON-RPC message ({problem})"
                    );
                } else if admit.first_drop {
                    tracing::warn!(server = %self.server, "more lines that are not JSON-RPC messages this second: ignored and counted, not logged");
                }
            }
            Line::Refuse(reply) => {
                tracing::warn!(server = %self.server, "refused a request the sidecar cannot read: {reply}");
                let mut bytes = reply.to_string().into_bytes();
                bytes.push(b'\n');
                if let Some(rest) = write_line(&self.writer, bytes) {
                    finish_line(rest, drop);
                }
            }
        }
    }
}

/// Newline-delimited lines of at most `max_bytes`, found with `memchr` (tokio-util's
/// `AnyDelimiterCodec` compares byte by byte: milliseconds on a 10 MiB answer).
///
/// A line of [`LONG_LINE`] or more is also checked as it comes in, a read at a time, while the
/// server is still writing the rest: for UTF-8 and for its JSON syntax, with where an answer's
/// parts lie ([`LineCodec::take_outline`]). Its call then gets the result's bytes with no scan
/// left to do after the whole line is there, and the event loop is held a read's worth at a
/// time instead of the whole line's at the end.
pub struct LineCodec {
    max_bytes: usize,
    /// How much of the buffer is known to hold no newline.
    scanned: usize,
    /// Lines this long are checked for UTF-8 as they come.
    long: usize,
    /// How much of the line at the buffer's start is known to be UTF-8; `None` once it is
    /// known not to be.
    utf8: Option<usize>,
    /// Whether the line last returned is known to be UTF-8.
    checked: bool,
    /// The long line's syntax, checked as it comes ([`Scan`]), and the outline it gave of the
    /// line last returned.
    scan: Scan,
    outline: Option<Outline>,
    /// What that scan found of the line last returned's nesting.
    depth: Depth,
}

/// How deep a line nests, as far as the codec's scan knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Depth {
    /// Not scanned whole (a short line, or one the scan stopped on for another reason).
    Unknown,
    /// Scanned whole: at most [`scan::LINE_DEPTH`].
    Within,
    /// Deeper than [`scan::LINE_DEPTH`].
    Deeper,
}

impl LineCodec {
    pub fn new(max_bytes: usize) -> Self {
        LineCodec {
            max_bytes,
            scanned: 0,
            long: LONG_LINE,
            utf8: Some(0),
            checked: false,
            scan: Scan::default(),
            outline: None,
            depth: Depth::Unknown,
        }
    }

    /// How deep the line last returned nests, as far as its scan knows.
    pub fn depth(&self) -> Depth {
        self.depth
    }

    /// Where the parts of the line last returned lie, when it was checked as it came
    /// ([`LineCodec::checked`]) and is an answer with a result object ([`Scan`]); taken once.
    pub fn take_outline(&mut self) -> Option<Outline> {
        self.outline.take()
    }

    /// Checks `line` (the buffer's first line, or as much of it as came) for UTF-8 from where
    /// the last check ended. A character cut at the end of a partial line is checked with the
    /// next read; `whole` says the line is complete. True when all of it is UTF-8.
    fn check_utf8(&mut self, line: &[u8], whole: bool) -> bool {
        let Some(done) = self.utf8 else {
            return false;
        };
        match std::str::from_utf8(&line[done..]) {
            Ok(_) => {
                self.utf8 = Some(line.len());
                true
            }
            Err(e) if e.error_len().is_none() && !whole => {
                self.utf8 = Some(done + e.valid_up_to());
                false
            }
            Err(_) => {
                self.utf8 = None;
                false
            }
        }
    }
}

impl Decoder for LineCodec {
    type Item = bytes::Bytes;
    type Error = AnyDelimiterCodecError;

    fn decode(&mut self, buf: &mut bytes::BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        let Some(at) = memchr::memchr(b'\n', &buf[self.scanned..]).map(|i| self.scanned + i) else {
            self.scanned = buf.len();
            if buf.len() > self.max_bytes {
                return Err(AnyDelimiterCodecError::MaxChunkLengthExceeded);
            }
            if buf.len() >= self.long {
                self.check_utf8(buf, false);
                self.scan.feed(buf);
            }
            return Ok(None);
        };
        self.scanned = 0;
        if at > self.max_bytes {
            return Err(AnyDelimiterCodecError::MaxChunkLengthExceeded);
        }
        let long = at >= self.long;
        self.checked = long && self.check_utf8(&buf[..at], true);
        self.utf8 = Some(0);
        let mut scan = std::mem::take(&mut self.scan);
        if long {
            scan.feed(&buf[..at]);
        }
        self.depth = match (long, scan.too_deep(), scan.complete()) {
            (true, true, _) => Depth::Deeper,
            (true, _, true) => Depth::Within,
            _ => Depth::Unknown,
        };
        self.outline = self.checked.then(|| scan.finish()).flatten();
        let mut line = buf.split_to(at + 1);
        line.truncate(at);
        Ok(Some(line.freeze()))
    }

    fn decode_eof(&mut self, buf: &mut bytes::BytesMut) -> Result<Option<Self::Item>, Self::Error> {
        match self.decode(buf)? {
            Some(line) => Ok(Some(line)),
            // The last line without its newline.
            None if !buf.is_empty() => {
                self.scanned = 0;
                self.checked = false;
                self.utf8 = Some(0);
                self.scan = Scan::default();
                self.outline = None;
                self.depth = Depth::Unknown;
                Ok(Some(buf.split().freeze()))
            }
            None => Ok(None),
        }
    }
}

impl StdioTransport {
    /// One line (or a batch's member): an answer to a call made past rmcp goes to that call,
    /// anything else to rmcp. A line nested deeper than [`scan::LINE_DEPTH`] is refused
    /// ([`too_deep`]); `depth` and `outline` are what the codec's scan found of it already.
    fn take_line(&mut self, line: &Bytes, depth: Depth, outline: Option<Outline>) {
        let deeper = match depth {
            Depth::Within => false,
            Depth::Deeper => true,
            Depth::Unknown => scan::nests_deeper(line, scan::LINE_DEPTH),
        };
        if deeper {
            let refused = too_deep(line);
            if let Line::Message(_) = &refused {
                tracing::warn!(server = %self.server, "refused an answer nested deeper than {} levels", scan::MAX_DEPTH);
            }
            return self.handle(refused);
        }
        if self.direct.waiting() && self.deliver_raw(line, outline) {
            return;
        }
        self.handle(parse_line(line));
    }

    /// A line that answers a call made past rmcp ([`answer_of`]), handed to that call: true when
    /// it was. Anything else is left for rmcp's parse, whose answer
    /// [`StdioTransport::deliver_parsed`] hands over the same way.
    fn deliver_raw(&self, line: &Bytes, outline: Option<Outline>) -> bool {
        match answer_of(line, outline) {
            Some((id, answer)) => self.direct.is_pending(&id) && self.direct.deliver(&id, answer),
            None => false,
        }
    }

    /// A message rmcp's parse made of a line that answers a call made past rmcp: handed to
    /// that call (`None`). Any other message is given back.
    fn deliver_parsed(
        &self,
        message: RxJsonRpcMessage<RoleClient>,
    ) -> Option<RxJsonRpcMessage<RoleClient>> {
        match message {
            JsonRpcMessage::Response(r) if self.direct.is_pending(&r.id) => {
                let answer = serde_json::to_vec(&r.result).map(Into::into).map_err(|e| {
                    rmcp::model::ErrorData::internal_error(
                        format!("the server's answer could not be read: {e}"),
                        None,
                    )
                });
                self.direct.deliver(&r.id, answer);
                None
            }
            JsonRpcMessage::Error(e) => match e.id.clone() {
                Some(id) if self.direct.is_pending(&id) => {
                    self.direct.deliver(&id, Err(e.error));
                    None
                }
                _ => Some(JsonRpcMessage::Error(e)),
            },
            other => Some(other),
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.direct.close();
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        // rmcp runs the returned future as a task of its own, after its loop's turn: the line is
        // written now instead when it can be ([`write_line`]), a task hop sooner on every request.
        let write = serde_json::to_vec(&item).map(|mut bytes| {
            bytes.push(b'\n');
            write_line(&self.writer, bytes)
        });
        async move {
            match write? {
                Some(rest) => rest.await,
                None => Ok(()),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        // A server writing back to back fills the read buffer with thousands of messages, each
        // decoded without touching the event loop, and rmcp spawns a task for each notification:
        // without a share of tokio's cooperative budget per message, one flooding server held
        // the sidecar's one thread (and the editor's requests) for over a second.
        tokio::task::consume_budget().await;
        loop {
            if let Some(message) = self.queued.pop_front() {
                return Some(message);
            }
            let Some(next) = self.reader.next().await else {
                self.direct.close();
                return None;
            };
            match next {
                Ok(line) => {
                    let depth = self.reader.codec.depth();
                    let outline = self.reader.codec.take_outline();
                    // A deep line is no batch: serde_json's depth limit refuses it there.
                    match split_batch(&line) {
                        Some(members) => {
                            tracing::debug!(server = %self.server, "a batch of {} messages", members.len());
                            for member in members {
                                self.take_line(&Bytes::from(member), Depth::Unknown, None);
                            }
                        }
                        None => self.take_line(&line, depth, outline),
                    }
                }
                Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                    let reason = format!(
                        "the server sent a message larger than maxMessageBytes ({} bytes); the connection was closed",
                        self.max_bytes
                    );
                    tracing::error!(server = %self.server, "{reason}");
                    self.diag.set_fatal(reason);
                    self.direct.close();
                    return None;
                }
                Err(AnyDelimiterCodecError::Io(e)) => {
                    tracing::warn!(server = %self.server, "reading from the server failed: {e}");
                    self.direct.close();
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.direct.close();
        if let Some(mut stdin) = self.writer.lock().await.take() {
            let _ = stdin.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

/// A transport over a child's stdin and stdout (the transport's tests).
#[cfg(test)]
fn over(command: &mut tokio::process::Command) -> (tokio::process::Child, StdioTransport) {
    let mut child = command
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let transport = StdioTransport::new("t", stdin, stdout, 8 << 20, Default::default());
    (child, transport)
}

#[cfg(test)]
mod send_tests;

#[cfg(test)]
mod direct_tests;
