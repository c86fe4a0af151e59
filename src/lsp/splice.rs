//! The LSP output writer that splices relayed results in (see [`crate::mcp::relay`]).
//!
//! The serve loop (`serve.rs`) serializes every reply from a `Value`; a big result relayed as sent
//! reaches it as a marker string instead. This writer sits under it, follows the
//! `Content-Length` framing, and passes what it is given through untouched (in one write),
//! unless a relayed result is stored: then it holds each (small) frame whole, and where the reply's `result` is exactly a
//! quoted marker of this process with a stored token, writes the stored bytes in its place and a
//! new `Content-Length`. The stored bytes are written as they are (no copy).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use tokio::io::AsyncWrite;

use crate::mcp::relay;

/// Frames longer than this are never held (a reply carrying a marker is small).
const HOLD_MAX: usize = 64 * 1024;
/// A header longer than this is not LSP framing: everything after it passes through as it is.
const HEADER_MAX: usize = 1024;

enum State {
    /// Reading a frame's header; `forwarded` when its bytes went out as they came.
    Header { bytes: Vec<u8>, forwarded: bool },
    /// Passing this many body bytes through.
    Pass(usize),
    /// Holding a frame's body until it is whole.
    Hold { body: Vec<u8>, left: usize },
    /// Not LSP framing: pass everything.
    Raw,
}

impl State {
    fn start() -> Self {
        State::Header {
            bytes: Vec::new(),
            forwarded: false,
        }
    }
}

pub struct SpliceWriter<W> {
    inner: W,
    /// Bytes accepted but not written yet, in order.
    out: relay::Pieces,
    state: State,
}

impl<W> SpliceWriter<W> {
    pub fn new(inner: W) -> Self {
        Self {
            inner,
            out: relay::Pieces::default(),
            state: State::start(),
        }
    }

    /// Follows the framing over bytes that were written as they came.
    fn track(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match &mut self.state {
                State::Raw | State::Hold { .. } => return,
                State::Pass(0) => self.state = State::start(),
                State::Pass(left) => {
                    let n = (*left).min(bytes.len());
                    *left -= n;
                    bytes = &bytes[n..];
                }
                State::Header {
                    bytes: header,
                    forwarded,
                } => {
                    *forwarded = true;
                    let used = take_header(header, bytes);
                    bytes = &bytes[used..];
                    if let Some(next) = header_done(header) {
                        self.state = next;
                    }
                }
            }
        }
    }
}

/// Appends `buf`'s bytes to `header` up to its blank line (or past [`HEADER_MAX`]): how many.
fn take_header(header: &mut Vec<u8>, buf: &[u8]) -> usize {
    let before = header.len();
    let limit = (HEADER_MAX + 1).saturating_sub(before).min(buf.len());
    header.extend_from_slice(&buf[..limit]);
    // The blank line may begin in what was taken before (`header` holds none yet): each line
    // feed taken now is looked at with the three bytes before it.
    let end = memchr::memchr_iter(b'\n', &header[before..])
        .map(|at| before + at + 1)
        .find(|&end| end >= 4 && &header[end - 4..end] == b"\r\n\r\n");
    if let Some(end) = end {
        header.truncate(end);
    }
    header.len() - before
}

/// The length a header of the usual form gives (`Content-Length: N`, as the serve loop writes
/// every header and editors write theirs; `lines` without the blank line), read without
/// splitting it into lines; `None` for any other.
pub(super) fn plain_content_length(lines: &[u8]) -> Option<usize> {
    let digits = lines.strip_prefix(b"Content-Length: ")?;
    if digits.is_empty() || digits.len() > 12 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(digits.iter().fold(0, |n, d| n * 10 + usize::from(d - b'0')))
}

/// The state after a header that went out as it came: `None` while it is not complete.
fn header_done(header: &[u8]) -> Option<State> {
    if header.ends_with(b"\r\n\r\n") {
        Some(content_length(header).map_or(State::Raw, State::Pass))
    } else if header.len() > HEADER_MAX {
        Some(State::Raw)
    } else {
        None
    }
}

impl<W: AsyncWrite + Unpin> SpliceWriter<W> {
    /// Writes what is queued; `Pending` until all of it is written.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.out.poll_drain(&mut self.inner, cx)
    }

    /// Writes `buf` as it is, following the framing over what was written.
    fn forward(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let n = ready!(Pin::new(&mut self.inner).poll_write(cx, buf))?;
        self.track(&buf[..n]);
        Poll::Ready(Ok(n))
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for SpliceWriter<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        ready!(this.drain(cx))?;
        // Nothing stored: no frame written so far can carry a marker (a reply is serialized
        // after its result was stored), so everything goes out as it came, in one write.
        // A header partly held back (written carefully) is finished carefully.
        let held =
            matches!(&this.state, State::Header { bytes, forwarded: false } if !bytes.is_empty());
        let careful = held || relay::any_stored();
        match &mut this.state {
            State::Raw => Pin::new(&mut this.inner).poll_write(cx, buf),
            State::Hold { body, left } => {
                let n = (*left).min(buf.len());
                body.extend_from_slice(&buf[..n]);
                *left -= n;
                if *left == 0 {
                    let body = std::mem::take(body);
                    this.out.extend(splice(body));
                    this.state = State::start();
                }
                Poll::Ready(Ok(n))
            }
            _ if !careful => this.forward(cx, buf),
            State::Header {
                forwarded: true, ..
            } => this.forward(cx, buf),
            State::Pass(0) => {
                this.state = State::start();
                Pin::new(this).poll_write(cx, buf)
            }
            State::Pass(left) => {
                let n = (*left).min(buf.len());
                this.forward(cx, &buf[..n])
            }
            State::Header { bytes, .. } => {
                let used = take_header(bytes, buf);
                if !bytes.ends_with(b"\r\n\r\n") {
                    if bytes.len() > HEADER_MAX {
                        this.out.push_back(std::mem::take(bytes).into());
                        this.state = State::Raw;
                    }
                    return Poll::Ready(Ok(used));
                }
                let header = std::mem::take(bytes);
                this.state = match content_length(&header) {
                    // (An empty body has nothing to wait for: held, it never came out.)
                    Some(len) if len > 0 && len <= HOLD_MAX => State::Hold {
                        body: Vec::with_capacity(len),
                        left: len,
                    },
                    Some(len) => {
                        this.out.push_back(header.into());
                        State::Pass(len)
                    }
                    None => {
                        this.out.push_back(header.into());
                        State::Raw
                    }
                };
                Poll::Ready(Ok(used))
            }
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The `Content-Length` of a header block (ending in the blank line).
fn content_length(header: &[u8]) -> Option<usize> {
    if let Some(length) = header
        .strip_suffix(b"\r\n\r\n")
        .and_then(plain_content_length)
    {
        return Some(length);
    }
    let text = std::str::from_utf8(header).ok()?;
    text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())?
    })
}

/// One frame (its body whole), with a relayed result spliced in where its `result` is a marker
/// of this process whose token is stored: the pieces to write, header first.
fn splice(body: Vec<u8>) -> Vec<Bytes> {
    let whole = |body: Vec<u8>| {
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        vec![Bytes::from(header), Bytes::from(body)]
    };
    let Some((value, raw)) = relay::marked(&body)
        .filter(|m| m.tail.is_empty() && body[..m.quoted.start].ends_with(b"\"result\":"))
        .and_then(|m| Some((m.quoted, relay::take(m.token)?)))
    else {
        return whole(body);
    };
    let body = Bytes::from(body);
    let length = value.start + raw.len() + (body.len() - value.end);
    vec![
        Bytes::from(format!("Content-Length: {length}\r\n\r\n")),
        body.slice(..value.start),
        raw,
        body.slice(value.end..),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    /// Writes `input` through the splice in chunks of `chunk` bytes; returns what came out.
    fn through(input: &[u8], chunk: usize) -> Vec<u8> {
        relay::write_in_chunks(SpliceWriter::new(Vec::new()), input, chunk).inner
    }

    /// Reads LSP frames back, checking every `Content-Length`.
    fn frames(mut out: &[u8]) -> Vec<Value> {
        let mut all = Vec::new();
        while !out.is_empty() {
            let end = memchr::memmem::find(out, b"\r\n\r\n").unwrap() + 4;
            let len = content_length(&out[..end]).unwrap();
            all.push(serde_json::from_slice(&out[end..end + len]).unwrap());
            out = &out[end + len..];
        }
        all
    }

    /// A stored result (through the transport's scan) and the reply tower-lsp-server writes.
    fn stored(result: &str) -> (u64, String) {
        let line = Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#));
        let small = relay::stand_in(&line, None, |_| true).unwrap();
        let v: Value = serde_json::from_slice(&small).unwrap();
        let token = v["result"]["_meta"][relay::token_meta()].as_u64().unwrap();
        let reply = json!({"jsonrpc": "2.0", "result": relay::marker(token), "id": 5});
        (token, reply.to_string())
    }

    #[test]
    fn a_marker_reply_becomes_the_stored_bytes_with_a_new_length() {
        let text = "é\\\"\\t".repeat(relay::RELAY_MIN_BYTES);
        let result =
            format!(r#"{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}"#);
        for chunk in [1, 7, 4096, usize::MAX] {
            let (_, reply) = stored(&result);
            let mut input = frame(r#"{"jsonrpc":"2.0","method":"x"}"#);
            input.extend(frame(&reply));
            input.extend(frame(r#"{"jsonrpc":"2.0","id":6,"result":null}"#));
            let out = through(&input, chunk);
            let got = frames(&out);
            assert_eq!(got.len(), 3);
            assert_eq!(got[1]["id"], 5);
            assert_eq!(
                got[1]["result"],
                serde_json::from_str::<Value>(&result).unwrap()
            );
            assert!(
                memchr::memmem::find(&out, result.as_bytes()).is_some(),
                "byte for byte"
            );
            assert_eq!(got[2]["id"], 6);
        }
    }

    #[test]
    fn markers_in_strings_and_foreign_or_used_markers_are_left_alone() {
        let result = format!(r#"{{"content":"{}"}}"#, "y".repeat(relay::RELAY_MIN_BYTES));
        let (token, reply) = stored(&result);
        let marker = relay::marker(token);
        // The same marker as text inside a string (escaped quotes), another process's nonce,
        // a token that was never stored, and a marker that is not the reply's result.
        let cases = [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"text": format!("\"{marker}\"")}}).to_string(),
            json!({"jsonrpc": "2.0", "id": 2, "result": format!("\"result\":\"{marker}")}).to_string(),
            json!({"jsonrpc": "2.0", "id": 3, "result": format!("mcp-sidecar/relayed/{}/{token}", "0".repeat(32))}).to_string(),
            json!({"jsonrpc": "2.0", "id": 4, "result": relay::marker(u64::MAX)}).to_string(),
            json!({"jsonrpc": "2.0", "id": 5, "result": {"x": marker}}).to_string(),
        ];
        let mut input = Vec::new();
        for case in &cases {
            input.extend(frame(case));
        }
        let out = through(&input, 3);
        let got = frames(&out);
        for (case, got) in cases.iter().zip(&got) {
            assert_eq!(&serde_json::from_str::<Value>(case).unwrap(), got);
        }
        // Still stored: the real reply splices it, once; the second time it is a plain string.
        let out = through(&[frame(&reply), frame(&reply)].concat(), 64);
        let got = frames(&out);
        assert_eq!(
            got[0]["result"]["content"].as_str().unwrap().len(),
            relay::RELAY_MIN_BYTES
        );
        assert_eq!(got[1]["result"], marker);
    }

    #[test]
    fn what_is_not_lsp_framing_passes_through() {
        let junk = vec![b'x'; 5000];
        assert_eq!(through(&junk, 100), junk);
        let odd = b"Content-Type: x\r\n\r\nabc".to_vec();
        assert_eq!(through(&odd, 2), odd);
    }

    proptest::proptest! {
        /// Whatever frames go in, in whatever pieces, the same frames come out.
        #[test]
        fn arbitrary_frames_pass_through(a in proptest::collection::vec(proptest::num::u8::ANY, 0..300), b in "\\PC{0,100}", chunk in 1usize..50) {
            let mut input = frame(&String::from_utf8_lossy(&a));
            input.extend(frame(&b));
            proptest::prop_assert_eq!(through(&input, chunk), input.clone());
            // The same while a result is stored, when the writer holds each small frame.
            let token = relay::store(Bytes::from_static(b"{}"));
            let careful = through(&input, chunk);
            relay::take(token);
            proptest::prop_assert_eq!(careful, input);
        }

        /// The header is taken up to its blank line exactly as a byte-at-a-time reading takes it,
        /// however the bytes come (the blank line cut between writes included).
        #[test]
        fn headers_are_taken_as_byte_by_byte(
            pieces in proptest::collection::vec(proptest::collection::vec(proptest::sample::select(b"\r\nab:1 ".to_vec()), 0..12), 1..8),
            long in proptest::bool::ANY,
        ) {
            let mut fast = Vec::new();
            let mut slow = Vec::new();
            let mut pieces = pieces;
            if long {
                pieces.insert(0, vec![b'x'; HEADER_MAX - 3]);
            }
            for piece in &pieces {
                let done = |h: &Vec<u8>| h.ends_with(b"\r\n\r\n") || h.len() > HEADER_MAX;
                if done(&slow) {
                    break;
                }
                let mut used = 0;
                for &b in piece {
                    slow.push(b);
                    used += 1;
                    if done(&slow) {
                        break;
                    }
                }
                proptest::prop_assert_eq!(take_header(&mut fast, piece), used);
                proptest::prop_assert_eq!(&fast, &slow);
            }
        }

        /// The usual header's length is read as the general parse reads it.
        #[test]
        fn the_plain_length_agrees_with_the_parse(lines in "(Content-Length|content-length): ?[0-9 ]{0,6}(\r\nX: 1)?") {
            let whole = format!("{lines}\r\n\r\n");
            if let Some(length) = plain_content_length(lines.as_bytes()) {
                let parsed = whole[..whole.len() - 4]
                    .split("\r\n")
                    .find_map(|l| {
                        let (n, v) = l.split_once(':')?;
                        n.trim().eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok())?
                    });
                proptest::prop_assert_eq!(Some(length), parsed);
            }
            proptest::prop_assert_eq!(
                content_length(whole.as_bytes()),
                whole[..whole.len() - 4].split("\r\n").find_map(|l| {
                    let (n, v) = l.split_once(':')?;
                    n.trim().eq_ignore_ascii_case("content-length").then(|| v.trim().parse::<usize>().ok())?
                })
            );
        }

        /// Bytes that are not LSP framing never panic the writer.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..2000), chunk in 1usize..50) {
            let _ = through(&bytes, chunk);
        }
    }
}
