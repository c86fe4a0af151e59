//! The stdio transport under rmcp: newline-delimited JSON-RPC with a size cap per message.
//! A line that is not JSON-RPC is logged (with the server's name) and skipped; a batch (an array
//! of messages) is read as its messages, in order; a line over `maxMessageBytes` closes the
//! connection with a clear reason, so pending calls fail at once instead of waiting for an answer
//! that was thrown away.

use std::collections::VecDeque;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Mutex;
use tokio_util::codec::{AnyDelimiterCodecError, Decoder};

use serde::Deserialize;
use serde_json::{Value, json};

use super::direct::Direct;
use super::flood;
use super::process::Diagnostics;
use super::raw;
use super::relay::{self, Outline};
use super::scan::{self, Scan};

/// The read buffer's usual size.
const READ_BUFFER: usize = 64 * 1024;
/// A line longer than this leaves the read buffer big ([`StdioTransport::receive`]).
const BIG_LINE: usize = 1 << 20;
/// Bytes read (and checked, [`LineCodec`]) in one turn of the event loop: after that much of
/// a line still coming, the reader lets the editor's and the other servers' tasks run.
const READ_TURN: usize = 1 << 20;
/// How long a big read buffer is kept while the server sends nothing.
const KEEP_BIG_BUFFER: std::time::Duration = std::time::Duration::from_secs(1);

/// Ids of the pending requests whose answers may be relayed raw ([`relay`]).
type Relayed = Arc<parking_lot::Mutex<std::collections::HashSet<RequestId>>>;

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
    /// Pending `tools/call`, `resources/read` and `prompts/get` requests.
    relayed: Relayed,
    /// The same requests made past rmcp, answered from here.
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
            relayed: Relayed::default(),
        }
    }

    /// The requests made past rmcp on this connection ([`Direct`]).
    pub fn direct(&self) -> Arc<Direct> {
        self.direct.clone()
    }

    /// Acts on one parsed line; a message is queued for [`Transport::receive`].
    fn handle(&mut self, line: Line) {
        if let Line::Message(message) = &line {
            self.settled(message);
        }
        let line = match line {
            Line::Message(message) => match self.direct_answer(*message) {
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
/// A line of [`relay::RELAY_MIN_BYTES`] or more is also checked as it comes in, a read at a
/// time, while the server is still writing the rest: for UTF-8 ([`LineCodec::checked`]) and
/// for its JSON syntax, with where an answer's parts lie ([`LineCodec::take_outline`]). The
/// relay then needs no scan of its own after the whole line is there, and the event loop is
/// held a read's worth at a time instead of the whole line's at the end.
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
            long: relay::RELAY_MIN_BYTES,
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

    /// Whether the line last returned was checked whole and is UTF-8 (only long lines are).
    pub fn checked(&self) -> bool {
        self.checked
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
    /// A pending relayed request is answered: forget its id.
    fn settled(&self, message: &RxJsonRpcMessage<RoleClient>) {
        let id = match message {
            JsonRpcMessage::Response(r) => Some(&r.id),
            JsonRpcMessage::Error(e) => e.id.as_ref(),
            _ => None,
        };
        if let Some(id) = id {
            let mut relayed = self.relayed.lock();
            if !relayed.is_empty() {
                relayed.remove(id);
            }
        }
    }

    /// A big answer to a pending relayed request (rmcp's or one made past it), as the small
    /// stand-in line its caller gets instead ([`relay`]).
    fn relay(&mut self, line: &bytes::Bytes) -> Option<Vec<u8>> {
        if line.len() < relay::RELAY_MIN_BYTES
            || (self.relayed.lock().is_empty() && !self.direct.waiting())
        {
            return None;
        }
        let text = self.reader.codec.checked().then(|| {
            // SAFETY: the codec checked these very bytes with `str::from_utf8` as they came
            // (`LineCodec::check_utf8`), and `checked` is about the line it returned last.
            unsafe { std::str::from_utf8_unchecked(line) }
        });
        // Outlined as it came; else (a line too unusual for that scan) read again here, unless
        // it nests too deep (then it is refused, [`StdioTransport::take_line`]): `serde_json`'s
        // reading of raw members has no depth limit.
        let outline = match self.reader.codec.take_outline() {
            Some(outline) => outline,
            None if self.reader.codec.depth() == Depth::Within => relay::outline(line, text)?,
            None => {
                if self.reader.codec.depth() == Depth::Deeper
                    || scan::nests_deeper(line, scan::LINE_DEPTH)
                {
                    return None;
                }
                relay::outline(line, text)?
            }
        };
        let small = relay::stand_in_from(line, &outline, |id| {
            serde_json::from_str::<RequestId>(id)
                .is_ok_and(|id| self.direct.is_pending(&id) || self.relayed.lock().contains(&id))
        })?;
        tracing::debug!(server = %self.server, "relaying a {} byte answer as sent", line.len());
        Some(small)
    }

    /// One line (or a batch's member): an answer to a call made past rmcp goes to that call,
    /// anything else to rmcp. A line nested deeper than [`scan::LINE_DEPTH`] is refused
    /// ([`too_deep`]); `depth` is what the codec's scan found of it already.
    fn take_line(&mut self, line: &[u8], depth: Depth) {
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
        if self.direct.waiting() && self.answer_direct(line) {
            return;
        }
        let parsed = if self.relayed.lock().is_empty() {
            parse_line(line)
        } else {
            pass_through(line, &self.relayed).unwrap_or_else(|| parse_line(line))
        };
        self.handle(parsed);
    }

    /// A line in the usual shape of an answer (`jsonrpc`, `id`, and a `result` object or an
    /// `error`) to a call made past rmcp, handed to that call: true when it was. The result is
    /// handed over as sent (one scan checks the line's syntax and the result's UTF-8; no tree
    /// is built). Anything else, including an answer to such a call that is not in that shape
    /// or has a lone surrogate escape (which a full parse refuses), is left for rmcp's parse,
    /// whose answer [`StdioTransport::direct_answer`] hands over the same way.
    fn answer_direct(&self, line: &[u8]) -> bool {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Reply<'a> {
            #[allow(dead_code)]
            jsonrpc: rmcp::model::JsonRpcVersion2_0,
            id: RequestId,
            #[serde(default, borrow)]
            result: Option<&'a serde_json::value::RawValue>,
            #[serde(default)]
            error: Option<rmcp::model::ErrorData>,
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(reply) = serde_json::from_slice::<Reply>(line) else {
            return false;
        };
        let answer = match (reply.result, reply.error) {
            (Some(result), None)
                if result.get().starts_with('{')
                    && !relay::has_surrogate_escape(result.get().as_bytes()) =>
            {
                Ok(bytes::Bytes::copy_from_slice(result.get().as_bytes()))
            }
            (None, Some(error)) => Err(error),
            _ => return false,
        };
        self.direct.deliver(&reply.id, answer)
    }

    /// A message rmcp's parse made of a line that answers a call made past rmcp: handed to
    /// that call (`None`). Any other message is given back.
    fn direct_answer(
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

/// A small answer to a pending `tools/call`, `resources/read` or `prompts/get`, given to rmcp
/// as the JSON it is. rmcp reads a result by trying its result types one after another on a
/// buffered copy (its `ServerResult` is untagged), and the sidecar turned the typed result back
/// into JSON for the editor: about a tenth of the sidecar's CPU per small call. The result is
/// parsed once instead, and handed on as sent when it looks as its kind must look (see
/// [`plain_result`]); anything else (an `input_required` round, an error, an unusual shape) goes
/// the usual way, with the same errors as before.
fn pass_through(
    line: &[u8],
    pending: &parking_lot::Mutex<std::collections::HashSet<RequestId>>,
) -> Option<Line> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Answer {
        jsonrpc: rmcp::model::JsonRpcVersion2_0,
        id: RequestId,
        result: serde_json::Map<String, Value>,
    }
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let answer: Answer = serde_json::from_slice(line).ok()?;
    if !pending.lock().contains(&answer.id) || !plain_result(&answer.result) {
        return None;
    }
    let result = rmcp::model::CustomResult::new(relay::wrap_passed(Value::Object(answer.result)));
    Some(Line::Message(Box::new(JsonRpcMessage::Response(
        rmcp::model::JsonRpcResponse {
            jsonrpc: answer.jsonrpc,
            id: answer.id,
            result: rmcp::model::ServerResult::CustomResult(result),
        },
    ))))
}

/// A final result whose members are as a tool result, a resource read or a prompt must have
/// them: `content` a list of blocks with a `type`, `contents` a list with a `uri` each,
/// `messages` a list of objects; no `resultType` other than `complete`.
pub(super) fn plain_result(result: &serde_json::Map<String, Value>) -> bool {
    let list_of = |key: &str, has: &dyn Fn(&serde_json::Map<String, Value>) -> bool| {
        result.get(key).is_none_or(|v| {
            v.as_array()
                .is_some_and(|items| items.iter().all(|i| i.as_object().is_some_and(has)))
        })
    };
    result
        .get("resultType")
        .is_none_or(|t| t.as_str() == Some("complete"))
        && list_of("content", &|b| b.get("type").is_some_and(Value::is_string))
        && list_of("contents", &|c| c.get("uri").is_some_and(Value::is_string))
        && list_of("messages", &|_| true)
        && result.get("_meta").is_none_or(Value::is_object)
}

/// Whether a request's answer may be relayed raw.
fn relays(message: &TxJsonRpcMessage<RoleClient>) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Request(r) => matches!(
            r.request,
            ClientRequest::CallToolRequest(_)
                | ClientRequest::ReadResourceRequest(_)
                | ClientRequest::GetPromptRequest(_)
        )
        .then_some(&r.id),
        _ => None,
    }
}

/// The members of a JSON-RPC batch (an array of message objects, which MCP 2025-03-26 allowed
/// servers to send), each as its own line; `None` when `line` is not a batch.
pub fn split_batch(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.trim_ascii_start().first() != Some(&b'[') {
        return None;
    }
    let members: Vec<Value> = serde_json::from_slice(line).ok()?;
    if members.is_empty() || !members.iter().all(Value::is_object) {
        return None;
    }
    members.iter().map(|m| serde_json::to_vec(m).ok()).collect()
}

/// What one line from a server becomes.
#[derive(Debug)]
pub enum Line {
    Message(Box<RxJsonRpcMessage<RoleClient>>),
    /// Nothing to do (blank line).
    Skip,
    /// Not JSON-RPC at all; logged and skipped.
    Garbage(String),
    /// A request the sidecar cannot read: answered at once with this error, so the server is
    /// never left waiting.
    Refuse(serde_json::Value),
}

/// Parses one line. Forms' schemas and sampling params are kept raw (see [`raw`]); a request that
/// cannot be read is refused; a response that cannot be read becomes an error response for
/// its id, so the call waiting on it fails with the reason instead of hanging.
pub fn parse_line(line: &[u8]) -> Line {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Skip;
    }
    match raw::parse(line) {
        Ok(message) => Line::Message(Box::new(message)),
        Err(error) => unreadable(line, &error, false),
    }
}

/// What the sidecar says of an answer it refuses to pass on; [`refused`] finds it in the error.
pub const REFUSED: &str = "dev.mcp-sidecar/refused";

/// Whether a server's error is one the sidecar made up for an answer it refused (a server's
/// own error with this member is no different: its message is still shown as it is).
pub fn refused(error: &rmcp::model::ErrorData) -> bool {
    error.data.as_ref().and_then(|d| d.get(REFUSED)).is_some()
}

/// A line nested deeper than [`scan::LINE_DEPTH`] (a caller checked), refused as [`parse_line`]
/// refuses one it cannot read: an answer becomes an error for its id (so its call ends at once
/// with the reason), a request is refused, anything else is junk. Its members are skipped
/// unread (`IgnoredAny` takes any depth without recursion).
pub fn too_deep(line: &[u8]) -> Line {
    let reason = format!("it nests deeper than {} levels", scan::MAX_DEPTH);
    unreadable(line, &reason, true)
}

/// A line whose full parse failed with `error` (or one nested too deep, `deep`).
fn unreadable(line: &[u8], error: &dyn std::fmt::Display, deep: bool) -> Line {
    let shown = String::from_utf8_lossy(&line[..line.len().min(160)]).into_owned();
    // Raw control characters (invalid inside JSON strings) would stop the envelope too; as
    // spaces they are harmless, and the envelope reads nothing but the id.
    let probe: std::borrow::Cow<[u8]> = if line.iter().any(|b| *b < b' ') {
        line.iter()
            .map(|&b| if b < b' ' { b' ' } else { b })
            .collect::<Vec<u8>>()
            .into()
    } else {
        line.into()
    };
    let Ok(envelope) = serde_json::from_slice::<Envelope>(&probe) else {
        return Line::Garbage(format!("{error}: {shown}"));
    };
    let id = envelope.id.unwrap_or(Value::Null);
    if envelope.method && !id.is_null() {
        return Line::Refuse(json!({"jsonrpc": "2.0", "id": id, "error": {
            "code": -32602, "message": format!("the client could not read this request: {error}")}}));
    }
    if !id.is_null() && (envelope.result || envelope.error) {
        let replacement = if deep {
            let what = if envelope.result { "result" } else { "error" };
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603, "message": scan::refusal(what), "data": {REFUSED: "tooDeep"}}})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32603, "message": format!("the server's answer could not be read: {error}")}})
        };
        if let Ok(message) = serde_json::from_value(replacement) {
            return Line::Message(Box::new(message));
        }
    }
    Line::Garbage(format!("{error}: {shown}"))
}

/// The top level of a message that failed to parse: its id and which members it has. The other
/// members are skipped unread, so what broke the full parse (bytes that are not UTF-8, a lone
/// surrogate escape, nesting past serde_json's depth limit, a raw control character) does not
/// hide the id of an answer that a call is waiting for.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    method: bool,
    #[serde(default, deserialize_with = "present")]
    result: bool,
    #[serde(default, deserialize_with = "present")]
    error: bool,
}

/// True for a member that is there at all (even `null`), without reading its value.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(d).map(|_| true)
}

/// The server's stdin, shared by rmcp's writes, [`Direct`](super::direct)'s and the refusals.
pub type Writer = Arc<Mutex<Option<ChildStdin>>>;

/// Writes `line` to the server's stdin in order with every other line. It is written at once
/// when no earlier line holds or waits for the lock and the pipe takes it whole: then there is
/// nothing more to do (`None`, and no task to spawn: most small lines). Else the rest is written
/// by the returned future, which holds the lock until the line is written whole (so it must run
/// to its end: a caller spawns it, as rmcp does).
pub fn write_line(
    writer: &Writer,
    line: Vec<u8>,
) -> Option<impl Future<Output = std::io::Result<()>> + Send + 'static> {
    let written = match writer.clone().try_lock_owned() {
        Ok(mut guard) => match guard.as_mut() {
            Some(stdin) => match write_now(stdin, &line) {
                Some(n) if n == line.len() => return None,
                Some(n) => Some((n, guard)),
                None => None,
            },
            None => None,
        },
        Err(_) => None,
    };
    let writer = writer.clone();
    Some(async move {
        let (done, mut guard) = match written {
            Some((done, guard)) => (done, guard),
            None => (0, writer.lock_owned().await),
        };
        let stdin = guard.as_mut().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotConnected, "server stdin is closed")
        })?;
        if done < line.len() {
            stdin.write_all(&line[done..]).await?;
        }
        stdin.flush().await
    })
}

/// Runs what is left of a [`write_line`] as a task of its own (a caller that does not wait for
/// it); `then` gets its error.
pub fn finish_line(
    rest: impl Future<Output = std::io::Result<()>> + Send + 'static,
    then: impl FnOnce(std::io::Error) + Send + 'static,
) {
    tokio::spawn(async move {
        if let Err(e) = rest.await {
            then(e);
        }
    });
}

/// Writes what the pipe takes of `bytes` without waiting: how much (`None` on an error, left
/// for the awaited write to report).
fn write_now(stdin: &mut ChildStdin, bytes: &[u8]) -> Option<usize> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match tokio::io::AsyncWrite::poll_write(std::pin::Pin::new(stdin), &mut cx, bytes) {
        std::task::Poll::Ready(Ok(n)) => Some(n),
        std::task::Poll::Ready(Err(_)) => None,
        std::task::Poll::Pending => Some(0),
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let Some(id) = relays(&item) {
            let mut relayed = self.relayed.lock();
            // Ids of requests the server never answered are forgotten in bulk, now and then.
            if relayed.len() > 4096 {
                relayed.clear();
            }
            relayed.insert(id.clone());
        }
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
                    if let Some(stand_in) = self.relay(&line) {
                        self.take_line(&stand_in, Depth::Within);
                        continue;
                    }
                    // A deep line is no batch: serde_json's depth limit refuses it there.
                    match split_batch(&line) {
                        Some(members) => {
                            tracing::debug!(server = %self.server, "a batch of {} messages", members.len());
                            for member in members {
                                self.take_line(&member, Depth::Unknown);
                            }
                        }
                        None => self.take_line(&line, depth),
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
mod tests {
    use super::*;
    use crate::mcp::raw::RAW_SCHEMA_META;

    #[test]
    fn a_small_final_answer_to_a_pending_call_passes_through_as_sent() {
        let pending =
            parking_lot::Mutex::new(std::collections::HashSet::from([RequestId::Number(3)]));
        let result = r#"{"content":[{"type":"text","text":"hi","x-extra":1}],"isError":false,"unknown":[2]}"#;
        let line = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#);
        let Some(Line::Message(message)) = pass_through(line.as_bytes(), &pending) else {
            panic!("not passed through")
        };
        let JsonRpcMessage::Response(response) = *message else {
            panic!()
        };
        let rmcp::model::ServerResult::CustomResult(custom) = response.result else {
            panic!("typed")
        };
        let passed = relay::unwrap_passed(custom.0).unwrap();
        assert_eq!(
            passed,
            serde_json::from_str::<Value>(result).unwrap(),
            "as sent"
        );
        // Not pending, another kind of message, or a shape rmcp must judge: the usual way.
        let other = line.replace(r#""id":3"#, r#""id":4"#);
        assert!(pass_through(other.as_bytes(), &pending).is_none());
        for odd in [
            r#"{"jsonrpc":"2.0","id":3,"result":{"resultType":"input_required"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":"text"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"no type"}]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"contents":[{"text":"no uri"}]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"messages":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"_meta":7}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"x","result":{}}"#,
            r#"{"jsonrpc":"1.0","id":3,"result":{}}"#,
        ] {
            assert!(pass_through(odd.as_bytes(), &pending).is_none(), "{odd}");
        }
        // What rmcp itself hands on as JSON (a result it could not read) is never taken for one
        // passed through.
        assert!(relay::unwrap_passed(serde_json::json!({"content": "text"})).is_none());
    }

    /// The allocation a big line was read into takes the next big line (its pages are mapped
    /// already) and is given back once no big line came for a while.
    #[tokio::test(flavor = "current_thread")]
    async fn a_big_read_buffer_is_reused_then_given_back() {
        const BIG: usize = 3_000_000;
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "for i in 1 2; do head -c {BIG} /dev/zero | tr '\\0' a; echo; read go; done; echo small"
            ))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let codec = LineCodec::new(8 << 20);
        let mut reader = LineReader::new(child.stdout.take().unwrap(), codec);
        let first = reader.next().await.unwrap().unwrap();
        assert_eq!(first.len(), BIG);
        let at = first.as_ptr();
        drop(first);
        stdin.write_all(b"go\n").await.unwrap();
        // Where the first bytes of the next line land: the start of the kept allocation (not
        // its free end, then copied back to the start once that is full).
        let start = std::future::poll_fn(|cx| match reader.poll_line(cx) {
            std::task::Poll::Ready(Read::Line(line)) => {
                std::task::Poll::Ready(line.map(|l| l.unwrap().as_ptr()))
            }
            std::task::Poll::Pending if reader.buf.is_empty() => std::task::Poll::Pending,
            std::task::Poll::Pending | std::task::Poll::Ready(Read::Turn) => {
                std::task::Poll::Ready(Some(reader.buf.as_ptr()))
            }
        })
        .await;
        assert_eq!(start, Some(at), "read into the first line's pages");
        let second = reader.next().await.unwrap().unwrap();
        assert_eq!(second.len(), BIG);
        assert_eq!(second.as_ptr(), at);
        drop(second);
        assert!(reader.keep_until.is_some() && reader.reuse > BIG, "kept");
        // The server now sends nothing until told: with the clock paused, the wait runs up to
        // the keep deadline, the buffer is replaced, and the outer deadline ends the wait.
        tokio::time::pause();
        let waited = tokio::time::timeout(KEEP_BIG_BUFFER * 5, reader.next()).await;
        assert!(waited.is_err(), "nothing was sent");
        assert!(
            reader.buf.capacity() <= READ_BUFFER && reader.keep_until.is_none(),
            "given back: capacity {}",
            reader.buf.capacity()
        );
        tokio::time::resume();
        stdin.write_all(b"go\n").await.unwrap();
        let small = reader.next().await.unwrap().unwrap();
        assert_eq!(&small[..], b"small");
    }

    /// A server that writes a long line faster than it is read keeps the pipe full, so every
    /// read is ready at once (here: a reader that always is): the reader still gives the event
    /// loop back every [`READ_TURN`] bytes, and another task on the same thread runs between.
    #[tokio::test(flavor = "current_thread")]
    async fn a_long_line_comes_a_turn_at_a_time() {
        const BIG: usize = 8 * READ_TURN;
        let mut line = br#"{"jsonrpc":"2.0","id":1,"result":{"text":""#.to_vec();
        line.resize(BIG - 3, b'a');
        line.extend_from_slice(b"\"}}\n");
        let mut reader = LineReader::new(&line[..], LineCodec::new(16 << 20));
        let turns = std::cell::Cell::new(0);
        let other = async {
            loop {
                turns.set(turns.get() + 1);
                tokio::task::yield_now().await;
            }
        };
        let got = tokio::select! {
            biased;
            got = reader.next() => got.unwrap().unwrap(),
            () = other => unreachable!(),
        };
        assert_eq!(got.len(), BIG);
        assert!(reader.codec.take_outline().is_some(), "checked as it came");
        // A read takes what the buffer has room for (a pipe gives 1 MiB at most); here the
        // buffer doubles from 64 KiB and the last reads take 2 and 4 MiB at once, so there
        // are fewer turns than MiB: four. Without turns, none.
        assert!(
            turns.get() >= 4,
            "the other task ran {} times while {BIG} bytes came",
            turns.get()
        );
    }

    /// Found in CI: a flood of log notifications held the sidecar's one thread for over a second
    /// (the editor's requests waited behind it). Lines already in the read buffer are decoded
    /// without touching the event loop, so `receive` takes a share of tokio's budget per message
    /// and a reader of a full buffer lets other tasks run long before it is through.
    #[test]
    fn a_full_read_buffer_does_not_hold_the_thread() {
        const LINES: usize = 600; // about 52 KB: all of it fits in the pipe before the reader starts
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let line = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
            let mut child = tokio::process::Command::new("sh")
                .arg("-c")
                .arg(format!("yes '{line}' | head -n {LINES}"))
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
            assert!(child.wait().await.unwrap().success());
            let mut transport =
                StdioTransport::new("flood", stdin, stdout, 1 << 20, Default::default());
            let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let count = received.clone();
            let reader = tokio::spawn(async move {
                while transport.receive().await.is_some() {
                    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                }
            });
            // Spawned after the reader, so it runs when the reader first gives the thread back.
            let seen = received.clone();
            let other = tokio::spawn(async move { seen.load(std::sync::atomic::Ordering::Relaxed) });
            let when_other_ran = other.await.unwrap();
            reader.await.unwrap();
            assert_eq!(received.load(std::sync::atomic::Ordering::Relaxed), LINES);
            assert!(
                when_other_ran < LINES / 2,
                "another task ran only after {when_other_ran} of {LINES} messages"
            );
        });
    }

    #[test]
    fn lines_are_split_at_newlines_up_to_the_limit() {
        let mut codec = LineCodec::new(8);
        let mut buf = bytes::BytesMut::from(&b"ab\ncd"[..]);
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"ab");
        assert!(codec.decode(&mut buf).unwrap().is_none(), "no newline yet");
        buf.extend_from_slice(b"e\n\nxyz");
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"cde");
        assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"");
        assert_eq!(&codec.decode_eof(&mut buf).unwrap().unwrap()[..], b"xyz");
        assert!(codec.decode_eof(&mut buf).unwrap().is_none());
        buf.extend_from_slice(b"123456789");
        assert!(
            codec.decode(&mut buf).is_err(),
            "over the limit without a newline"
        );
        let mut codec = LineCodec::new(8);
        let mut buf = bytes::BytesMut::from(&b"123456789\n"[..]);
        assert!(codec.decode(&mut buf).is_err(), "over the limit");
    }

    /// What the codec said of one line it returned.
    struct Decoded {
        line: bytes::Bytes,
        checked: bool,
        depth: Depth,
        outline: Option<Outline>,
        /// The outline taken a second time.
        again: Option<Outline>,
    }

    /// `lines`, each with its newline, fed to a codec (long lines from 16 bytes) in reads as
    /// long as `cuts` says, in turn.
    fn decode_in_reads(lines: &[Vec<u8>], cuts: &[usize]) -> Vec<Decoded> {
        let stream: Vec<u8> = lines
            .iter()
            .flat_map(|l| l.iter().copied().chain([b'\n']))
            .collect();
        let mut codec = LineCodec::new(1 << 20);
        codec.long = 16;
        let mut buf = bytes::BytesMut::new();
        let mut got = Vec::new();
        let (mut at, mut cut) = (0, cuts.iter().cycle());
        while at < stream.len() {
            let end = (at + cut.next().unwrap()).min(stream.len());
            buf.extend_from_slice(&stream[at..end]);
            at = end;
            while let Some(line) = codec.decode(&mut buf).unwrap() {
                got.push(Decoded {
                    line,
                    checked: codec.checked(),
                    depth: codec.depth(),
                    outline: codec.take_outline(),
                    again: codec.take_outline(),
                });
            }
        }
        got
    }

    proptest::proptest! {
        /// Long lines are checked for UTF-8 a read at a time, wherever the reads cut them (a
        /// character cut in two included): `checked` says exactly whether the whole line is.
        #[test]
        fn long_lines_are_checked_for_utf8_as_they_come(
            lines in proptest::collection::vec(
                ("[^\n]{0,40}", proptest::option::of((0usize..200, 0x80u8..=0xff))),
                1..6,
            ),
            cuts in proptest::collection::vec(1usize..30, 1..60),
        ) {
            let lines: Vec<Vec<u8>> = lines
                .into_iter()
                .map(|(text, flip)| {
                    let mut bytes = text.into_bytes();
                    if let Some((at, byte)) = flip.filter(|_| !bytes.is_empty()) {
                        let at = at % bytes.len();
                        bytes[at] = byte;
                    }
                    bytes
                })
                .collect();
            let got = decode_in_reads(&lines, &cuts);
            proptest::prop_assert_eq!(got.len(), lines.len());
            for (Decoded { line, checked, .. }, sent) in got.iter().zip(&lines) {
                proptest::prop_assert_eq!(&line[..], &sent[..]);
                let text = line.len() >= 16 && std::str::from_utf8(line).is_ok();
                proptest::prop_assert_eq!(*checked, text, "line {:?}", String::from_utf8_lossy(line));
            }
        }

        /// Long answers are outlined as they come, a read at a time: for each line the codec
        /// returns, the same outline the relay's one `serde_json` scan finds after the fact.
        #[test]
        fn long_answers_are_outlined_as_they_come(
            lines in proptest::collection::vec(
                (0u32..3, "[^\n\"\\\\]{0,60}", proptest::option::of((0usize..200, 0u8..0x80))),
                1..6,
            ),
            cuts in proptest::collection::vec(1usize..40, 1..60),
        ) {
            let lines: Vec<Vec<u8>> = lines
                .into_iter()
                .map(|(id, text, flip)| {
                    let mut bytes = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}}}"#
                    )
                    .into_bytes();
                    if let Some((at, byte)) = flip.filter(|&(_, b)| b != b'\n') {
                        let at = at % bytes.len();
                        bytes[at] = byte;
                    }
                    bytes
                })
                .collect();
            let got = decode_in_reads(&lines, &cuts);
            proptest::prop_assert_eq!(got.len(), lines.len());
            for Decoded { line, outline, again, .. } in got {
                let text = std::str::from_utf8(&line).ok();
                let expected = relay::outline(&line, text);
                proptest::prop_assert_eq!(outline, expected, "{:?}", text);
                proptest::prop_assert_eq!(again, None, "taken once");
            }
        }
    }

    /// The codec's scan says how deep a long line nests, wherever the reads cut it: within the
    /// bound when it read the line whole, deeper past it (the scan stopped there), unknown for
    /// a short line or one it stopped on for another reason.
    #[test]
    fn long_lines_say_how_deep_they_nest() {
        let answer = |levels: usize| {
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":{}1{}}}}}"#,
                "[".repeat(levels - 1),
                "]".repeat(levels - 1)
            )
            .into_bytes()
        };
        let lines = [
            answer(scan::MAX_DEPTH),
            answer(scan::MAX_DEPTH + 1),
            answer(300_000),
            b"{}".to_vec(),
            br#"{"jsonrpc":"2.0","i\u0064":1,"result":{"a":[[[1]]]}}"#.to_vec(),
        ];
        for cuts in [&[1usize][..], &[7, 300, 4096], &[1 << 20]] {
            let got: Vec<Depth> = decode_in_reads(&lines, cuts)
                .iter()
                .map(|d| d.depth)
                .collect();
            assert_eq!(
                got,
                [
                    Depth::Within,
                    Depth::Deeper,
                    Depth::Deeper,
                    Depth::Unknown,
                    Depth::Unknown
                ],
                "{cuts:?}"
            );
        }
    }

    /// A line nested too deep: an answer becomes an error for its id that says so (and that
    /// the sidecar made it), a request is refused, anything else is junk; no stack overflow.
    #[test]
    fn lines_nested_too_deep_are_refused_with_their_id() {
        let deep = |head: &str| {
            format!(
                r#"{{"jsonrpc":"2.0",{head}{}{}}}"#,
                "[".repeat(1_000_000),
                "]".repeat(1_000_000)
            )
        };
        for (head, what) in [
            (r#""id":7,"result":"#, "result"),
            (r#""id":7,"error":"#, "error"),
        ] {
            let Line::Message(m) = too_deep(deep(head).as_bytes()) else {
                panic!("{head}")
            };
            let JsonRpcMessage::Error(e) = *m else {
                panic!("{head}")
            };
            assert_eq!(e.id, Some(RequestId::Number(7)));
            assert!(refused(&e.error), "{e:?}");
            assert_eq!(e.error.message, scan::refusal(what));
            assert!(e.error.message.contains("nests deeper than 100 levels"));
        }
        let Line::Refuse(reply) = too_deep(deep(r#""id":"r","method":"x","params":"#).as_bytes())
        else {
            panic!()
        };
        assert_eq!(reply["id"], "r");
        assert!(
            reply["error"]["message"]
                .as_str()
                .unwrap()
                .contains("nests deeper than 100 levels")
        );
        assert!(matches!(
            too_deep(deep(r#""method":"x","params":"#).as_bytes()),
            Line::Garbage(_)
        ));
        // A server's own error is not the sidecar's refusal.
        let Line::Message(m) =
            parse_line(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#)
        else {
            panic!()
        };
        let JsonRpcMessage::Error(e) = *m else {
            panic!()
        };
        assert!(!refused(&e.error));
    }

    #[test]
    fn parse_line_skips_blank_and_reports_garbage() {
        assert!(matches!(parse_line(b"   \r"), Line::Skip));
        let Line::Garbage(err) = parse_line(b"Hello from stdout") else {
            panic!()
        };
        assert!(err.contains("Hello from stdout"));
        assert!(matches!(parse_line(b"\xff\xfe\x00"), Line::Garbage(_)));
        let ok = parse_line(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(matches!(ok, Line::Message(_)));
        let bom = parse_line(
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r",
        );
        assert!(matches!(bom, Line::Message(_)));
    }

    #[test]
    fn unreadable_requests_are_refused_and_unreadable_responses_become_errors() {
        // A known method with broken params reaches rmcp as a custom request (answered with an
        // error there); a request that is not JSON-RPC-shaped is refused here.
        let broken = br#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":3}}"#;
        assert!(matches!(parse_line(broken), Line::Message(_)));
        let Line::Refuse(reply) = parse_line(br#"{"jsonrpc":"2.0","id":[7],"method":"ping"}"#)
        else {
            panic!()
        };
        assert_eq!(reply["id"], serde_json::json!([7]));
        assert_eq!(reply["error"]["code"], -32602);
        let Line::Message(m) =
            parse_line(br#"{"jsonrpc":"2.0","id":8,"error":{"code":"bad","message":3}}"#)
        else {
            panic!()
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["id"], 8);
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("could not be read")),
            "{v}"
        );
    }

    /// Found by the fault tests: an answer that fails to parse for a reason other than its
    /// shape (bytes that are not UTF-8, a lone surrogate, nesting past the depth limit) used to
    /// be skipped as junk, so its call waited for the whole timeout and lost the reason.
    #[test]
    fn unreadable_answers_still_fail_their_call_with_the_reason() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"result":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        let cases: [(&[u8], &str); 4] = [
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}",
                "invalid unicode",
            ),
            (
                br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a\ud800b"}]}}"#,
                "hex escape",
            ),
            (deep.as_bytes(), "recursion limit"),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\tb\x01\"}]}}",
                "control character",
            ),
        ];
        for (n, (line, reason)) in cases.into_iter().enumerate() {
            let Line::Message(m) = parse_line(line) else {
                panic!("case {n}: {:?}", parse_line(line))
            };
            let v = serde_json::to_value(&m).unwrap();
            assert_eq!(v["id"], n + 2, "{v}");
            let message = v["error"]["message"].as_str().unwrap();
            assert!(message.contains("could not be read"), "{message}");
            assert!(message.contains(reason), "case {n}: {message}");
        }
        // The same breakage in a request: refused with its id.
        let Line::Refuse(reply) = parse_line(
            br#"{"jsonrpc":"2.0","id":"r","method":"elicitation/create","params":{"message":"\ud800"}}"#,
        ) else {
            panic!()
        };
        assert_eq!(reply["id"], "r");
        // Depth alone, with no id to answer: junk, and no stack overflow.
        assert!(matches!(parse_line(&[b'['; 100_000]), Line::Garbage(_)));
        let deep_notification = format!(
            r#"{{"jsonrpc":"2.0","method":"x","params":{}}}"#,
            "[".repeat(100_000)
        );
        assert!(matches!(
            parse_line(deep_notification.as_bytes()),
            Line::Garbage(_)
        ));
    }

    #[test]
    fn batches_split_into_their_messages() {
        let batch = br#" [{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]"#;
        let members = split_batch(batch).unwrap();
        assert_eq!(members.len(), 2);
        assert!(
            members
                .iter()
                .all(|m| matches!(parse_line(m), Line::Message(_)))
        );
        for not_a_batch in [
            &b"[]"[..],
            b"[1, 2]",
            b"[{\"a\": 1}, 3]",
            b"{\"jsonrpc\":\"2.0\"}",
            b"[[[[",
            b"",
        ] {
            assert!(
                split_batch(not_a_batch).is_none(),
                "{}",
                String::from_utf8_lossy(not_a_batch)
            );
        }
        assert!(split_batch(&[b'['; 100_000]).is_none());
    }

    #[test]
    fn form_schemas_are_stashed_raw_in_both_eras() {
        let legacy = br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"object"}}}}}"#;
        let Line::Message(m) = parse_line(legacy) else {
            panic!("{:?}", parse_line(legacy))
        };
        let v = serde_json::to_value(&m).unwrap();
        let raw = &v["params"]["_meta"][RAW_SCHEMA_META];
        let keys: Vec<_> = raw["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(
            keys,
            ["z", "a"],
            "order kept, nested object kept for the sidecar to refuse"
        );
        let modern = br#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"b":{"type":"boolean"}}}}},"u":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://e.com"}}}}}"#;
        let Line::Message(m) = parse_line(modern) else {
            panic!()
        };
        let v = serde_json::to_value(&m).unwrap();
        let k = &v["result"]["inputRequests"]["k"]["params"];
        assert_eq!(
            k["_meta"][RAW_SCHEMA_META]["properties"]["b"]["type"],
            "boolean"
        );
        assert!(
            v["result"]["inputRequests"]["u"]["params"]
                .get("_meta")
                .is_none()
        );
    }

    proptest::proptest! {
        /// Whatever a server prints, one line never panics the parser.
        #[test]
        fn arbitrary_lines_never_panic(line in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse_line(&line);
        }

        /// Arbitrary JSON objects never panic either, including ones that look like requests.
        #[test]
        fn arbitrary_json_never_panics(method in "[a-z/]{0,20}", id in proptest::option::of(0i64..10), params in "[ -~]{0,40}") {
            let mut v = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": {"x": params}});
            if let Some(id) = id { v["id"] = serde_json::json!(id); }
            let _ = parse_line(v.to_string().as_bytes());
        }

        /// Valid JSON-RPC responses are recognised whatever their id and result.
        #[test]
        fn responses_parse(id in 0i64..1_000_000, text in "[ -~]{0,40}") {
            let line = serde_json::to_vec(&serde_json::json!({
                "jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}
            })).unwrap();
            proptest::prop_assert!(matches!(parse_line(&line), Line::Message(_)));
        }
    }
}

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
mod send_tests {
    use super::*;
    use rmcp::model::{CallToolRequestParams, ClientRequest};

    /// Lines written at once (when the pipe takes them) and lines left to their task (the
    /// pipe full, or an earlier line still being written) reach the server whole and in order.
    #[tokio::test(flavor = "current_thread")]
    async fn lines_written_at_once_or_later_arrive_whole_and_in_order() {
        let (_child, mut transport) = over(&mut tokio::process::Command::new("cat"));
        // Over a pipe's 64 KiB for some, so the first write is cut short.
        let sizes = [10, 200_000, 10, 10, 150_000, 10];
        let mut sends = Vec::new();
        for (i, size) in sizes.iter().enumerate() {
            let mut params = CallToolRequestParams::new("x".repeat(*size));
            params.arguments = None;
            let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(params));
            let id = RequestId::Number(i as i64);
            sends.push(transport.send(JsonRpcMessage::request(request, id)));
        }
        // rmcp spawns each send as a task of its own, in order.
        let tasks: Vec<_> = sends.into_iter().map(tokio::spawn).collect();
        let mut seen = Vec::new();
        while seen.len() < sizes.len() {
            let line = transport.reader.next().await.unwrap().unwrap();
            let message: Value = serde_json::from_slice(&line).unwrap();
            let name = message["params"]["name"].as_str().unwrap().len();
            seen.push((message["id"].clone(), name));
        }
        for task in tasks {
            task.await.unwrap().unwrap();
        }
        let expected: Vec<_> = sizes
            .iter()
            .enumerate()
            .map(|(i, size)| (json!(i), *size))
            .collect();
        assert_eq!(seen, expected);
    }
}

#[cfg(test)]
mod direct_tests {
    use super::*;
    use crate::mcp::direct;
    use rmcp::model::CallToolRequestParams;

    /// A server that answers four calls made past rmcp in every shape (the usual one, one
    /// only rmcp's parse reads, one that cannot be read), with a notification and an answer
    /// to one of rmcp's requests between them; then takes a cancellation and exits.
    const SERVER: &str = r#"
IFS= read -r a; printf '%s\n' "$a" > "$0/a"
echo '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
echo '{"jsonrpc":"2.0","id":4294967296,"result":{"content":[{"type":"text","text":"ok"}]}}'
echo '{"jsonrpc":"2.0","id":3,"result":{}}'
IFS= read -r b
echo '{"jsonrpc":"2.0","id":4294967297,"result":{"content":[]},"x-extra":1}'
IFS= read -r c
printf '{"jsonrpc":"2.0","id":4294967298,"result":{"a":"\377"}}\n'
IFS= read -r d
IFS= read -r cancel; printf '%s\n' "$cancel" > "$0/cancel"
IFS= read -r e
"#;

    /// A guard against a hang (an answer that never comes fails the test instead).
    trait Within: Future + Sized {
        async fn within(self) -> Self::Output {
            tokio::time::timeout(std::time::Duration::from_secs(20), self)
                .await
                .expect("no answer within 20 s")
        }
    }
    impl<F: Future> Within for F {}

    #[tokio::test(flavor = "current_thread")]
    async fn calls_past_rmcp_are_answered_from_the_transport_and_fail_when_it_ends() {
        let dir = tempfile::tempdir().unwrap();
        let mut sh = tokio::process::Command::new("sh");
        let (_child, mut transport) = over(sh.arg("-c").arg(SERVER).arg(dir.path()));
        let direct = transport.direct();
        let (to_rmcp, mut rmcp) = tokio::sync::mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            while let Some(message) = transport.receive().await {
                to_rmcp.send(message).unwrap();
            }
        });
        // Each call with an early taker (`direct::answering_early`) that keeps what it is given.
        let taken = Arc::new(parking_lot::Mutex::new(Vec::<bytes::Bytes>::new()));
        let call = |name: &str| {
            let id = direct.next_id();
            let params = CallToolRequestParams::new(name.to_string());
            let taker = taken.clone();
            let early: direct::Early = Box::new(move |result| {
                taker.lock().push(result.clone());
                true
            });
            let answer = direct
                .send(&id, "tools/call", &params, Some(early))
                .unwrap();
            (id, answer)
        };

        let (id, answer) = call("first");
        assert_eq!(id, RequestId::Number(direct::FIRST_ID));
        let delivered = answer.within().await.unwrap();
        let answer = delivered.answer.unwrap();
        assert_eq!(
            &answer[..],
            br#"{"content":[{"type":"text","text":"ok"}]}"#,
            "the result as sent"
        );
        assert!(delivered.early, "a plain result is taken early");
        assert_eq!(taken.lock().drain(..).collect::<Vec<_>>(), [answer]);
        let written = std::fs::read_to_string(dir.path().join("a")).unwrap();
        assert_eq!(
            written.trim_end(),
            r#"{"jsonrpc":"2.0","id":4294967296,"method":"tools/call","params":{"name":"first"}}"#
        );
        // What was not an answer to a call made here went to rmcp, in order.
        let first = rmcp.recv().within().await.unwrap();
        assert!(
            matches!(first, JsonRpcMessage::Notification(_)),
            "{first:?}"
        );
        let second = rmcp.recv().within().await.unwrap();
        assert!(
            matches!(&second, JsonRpcMessage::Response(r) if r.id == RequestId::Number(3)),
            "{second:?}"
        );
        assert!(!direct.is_pending(&id) && !direct.waiting());

        // An answer in a shape only rmcp's parse reads still reaches its call.
        let delivered = call("second").1.within().await.unwrap();
        let answer: Value = serde_json::from_slice(&delivered.answer.unwrap()).unwrap();
        assert_eq!(answer, serde_json::json!({"content": []}));
        assert!(delivered.early && taken.lock().drain(..).count() == 1);
        // One that cannot be read becomes an error for its call, not a lost answer, and is
        // nobody's early.
        let delivered = call("third").1.within().await.unwrap();
        let error = delivered.answer.unwrap_err();
        assert_eq!(error.code.0, -32603, "{error:?}");
        assert!(!delivered.early && taken.lock().is_empty());

        // A call given up is forgotten and the server told.
        let (id, answer) = call("fourth");
        direct.cancel(&id, "cancelled by the editor");
        assert!(!direct.is_pending(&id));
        assert!(
            answer.within().await.is_err(),
            "nobody answers a cancelled call"
        );
        // The last call waits until the server exits, and then fails at once.
        let (_, last) = call("fifth");
        assert!(last.within().await.is_err());
        assert!(taken.lock().is_empty(), "no early for calls never answered");
        let cancelled = std::fs::read_to_string(dir.path().join("cancel")).unwrap();
        let cancelled: Value = serde_json::from_str(&cancelled).unwrap();
        assert_eq!(cancelled["method"], "notifications/cancelled");
        assert_eq!(cancelled["params"]["requestId"], 4294967299_i64);
        reader.await.unwrap();
        assert!(rmcp.recv().await.is_none(), "nothing more went to rmcp");
        let id = direct.next_id();
        let params = CallToolRequestParams::new("late".to_string());
        assert!(
            direct.send(&id, "tools/call", &params, None).is_none(),
            "refused once closed"
        );
    }
}
