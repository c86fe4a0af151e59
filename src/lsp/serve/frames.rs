//! The loop's framing: the editor's input split into message bodies, and its output queued as
//! whole frames.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use serde::Serialize;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::jsonrpc::{Error, Id};

use super::Handled;
use crate::mcp::Reply;

/// A header longer than this without its blank line is not LSP framing.
const HEADER_MAX: usize = 8 * 1024;
/// Queued output past which the loop stops taking work until the editor reads.
const OUTPUT_HIGH: usize = 8 << 20;
/// The input buffer is read into in pieces of at least this much.
const READ_CHUNK: usize = 16 * 1024;
/// A raw result up to this long is copied into the output buffer with its frame; a longer one
/// is queued as it is.
const COPY_MAX: usize = 64 * 1024;

/// The reply to a fast-lane request, as tower-lsp-server writes one.
#[derive(Serialize)]
pub(super) struct LaneReply<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a Error>,
    id: &'a Id,
}

/// The editor's input, split into message bodies by their `Content-Length` headers.
pub(super) struct Input<I> {
    io: I,
    buf: BytesMut,
    /// The body length of the message whose header was read.
    body: Option<usize>,
}

impl<I: AsyncRead + Unpin> Input<I> {
    pub(super) fn new(io: I) -> Self {
        Self {
            io,
            buf: BytesMut::new(),
            body: None,
        }
    }

    /// The next body; an error for a header that is not LSP framing (what follows it is
    /// skipped up to the next `Content-Length`); `None` at the end of the input.
    pub(super) fn poll_frame(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Bytes, String>>> {
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
    pub(super) fn frame(&mut self) -> Option<Result<Bytes, String>> {
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
    pub(super) fn skip_garbage(&mut self, from: usize) {
        let from = from.min(self.buf.len());
        let next = memchr::memmem::find(&self.buf[from..], b"Content-Length")
            .map_or(self.buf.len(), |at| from + at);
        self.buf.advance(next);
    }
}

/// The `Content-Length` of a header block (without its blank line). The reason never quotes
/// the header: when the framing is lost, what looks like one may be part of a body (an answer the
/// person typed, say), and the reason is logged.
pub(super) fn content_length(header: &[u8]) -> Result<usize, &'static str> {
    if let Some(length) = plain_content_length(header) {
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

/// The length in a header that is exactly `Content-Length: <digits>` (what editors send), read
/// without the general parse.
pub(super) fn plain_content_length(header: &[u8]) -> Option<usize> {
    let digits = header.strip_prefix(b"Content-Length: ")?;
    if digits.is_empty() || digits.len() > 12 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0, |n, d| n * 10 + usize::from(d - b'0')))
}

/// The editor's output: whole frames queued, written as the editor reads. Small frames are
/// copied into one buffer (`tail`); a big [`Reply::Raw`] goes into the queue as it is, with what
/// came before it (`pieces`), so its bytes are never copied.
pub(super) struct Output<O> {
    io: O,
    /// What is queued before `tail`, in order.
    pieces: VecDeque<Bytes>,
    /// How many bytes `pieces` hold.
    piece_bytes: usize,
    tail: Vec<u8>,
    /// How much of `tail` is written.
    written: usize,
    /// The writer has taken bytes since it was last flushed.
    unflushed: bool,
    /// Writing failed: what would be written is dropped.
    gone: bool,
    body: Vec<u8>,
}

impl<O: AsyncWrite + Unpin> Output<O> {
    pub(super) fn new(io: O) -> Self {
        Self {
            io,
            pieces: VecDeque::new(),
            piece_bytes: 0,
            tail: Vec::new(),
            written: 0,
            unflushed: false,
            gone: false,
            body: Vec::new(),
        }
    }

    pub(super) fn room(&self) -> bool {
        self.piece_bytes + self.tail.len() - self.written < OUTPUT_HIGH
    }

    pub(super) fn is_empty(&self) -> bool {
        self.gone || (self.pieces.is_empty() && self.written == self.tail.len() && !self.unflushed)
    }

    pub(super) fn reply(&mut self, id: &Id, handled: &Handled) {
        let (result, error) = match handled {
            Ok(Reply::Raw(raw)) => return self.reply_raw(id, raw),
            Ok(Reply::Json(value)) => (Some(value), None),
            Ok(Reply::Task(handle)) => (Some(&handle.created), None),
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
    pub(super) fn reply_raw(&mut self, id: &Id, raw: &Bytes) {
        const HEAD: &[u8] = br#"{"jsonrpc":"2.0","result":"#;
        if self.gone {
            return;
        }
        self.body.clear();
        self.body.extend_from_slice(br#","id":"#);
        if serde_json::to_writer(&mut self.body, id).is_err() {
            return;
        }
        self.body.push(b'}');
        self.header(HEAD.len() + raw.len() + self.body.len());
        self.tail.extend_from_slice(HEAD);
        if raw.len() <= COPY_MAX {
            self.tail.extend_from_slice(raw);
        } else {
            let before = std::mem::take(&mut self.tail);
            self.push_piece(Bytes::from(before).slice(self.written..));
            self.written = 0;
            self.push_piece(raw.clone());
        }
        self.tail.extend_from_slice(&self.body);
    }

    pub(super) fn push_piece(&mut self, piece: Bytes) {
        if !piece.is_empty() {
            self.piece_bytes += piece.len();
            self.pieces.push_back(piece);
        }
    }

    /// Queues one message as a frame.
    pub(super) fn message<T: Serialize>(&mut self, message: &T) {
        if self.gone {
            return;
        }
        self.body.clear();
        if let Err(e) = serde_json::to_writer(&mut self.body, message) {
            tracing::error!("failed to encode a message to the editor: {e}");
            return;
        }
        self.header(self.body.len());
        self.tail.extend_from_slice(&self.body);
        if self.body.capacity() > 1 << 20 {
            self.body = Vec::new();
        }
    }

    /// Queues a frame's header, for a body of `len` bytes.
    pub(super) fn header(&mut self, len: usize) {
        self.tail.extend_from_slice(b"Content-Length: ");
        let mut digits = itoa::Buffer::new();
        self.tail.extend_from_slice(digits.format(len).as_bytes());
        self.tail.extend_from_slice(b"\r\n\r\n");
    }

    /// Writes what is queued, as far as the editor takes it: whether anything was written.
    pub(super) fn poll_drain(&mut self, cx: &mut Context<'_>) -> bool {
        let mut progress = false;
        loop {
            let next = match self.pieces.front() {
                Some(piece) => &piece[..],
                None => &self.tail[self.written..],
            };
            if self.gone || next.is_empty() {
                break;
            }
            match Pin::new(&mut self.io).poll_write(cx, next) {
                Poll::Ready(Ok(n)) if n > 0 => {
                    match self.pieces.front_mut() {
                        Some(piece) => {
                            piece.advance(n);
                            self.piece_bytes -= n;
                            if piece.is_empty() {
                                self.pieces.pop_front();
                            }
                        }
                        None => self.written += n,
                    }
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
        if self.pieces.is_empty() && self.written == self.tail.len() {
            self.written = 0;
            self.tail.clear();
            if self.tail.capacity() > 1 << 20 {
                self.tail = Vec::new();
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
}
