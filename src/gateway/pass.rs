//! Results passed through to agents as the bytes the server sent.
//!
//! The one place where rmcp's typed handler forces a placeholder. rmcp's server side (the
//! tunnel's and the Streamable HTTP service's) takes a `ServerHandler`, whose results are typed:
//! a [`Reply::Raw`] cannot be handed to it as bytes. So [`through`] stores the bytes in the
//! gateway's [`Passing`] and gives rmcp a placeholder result of the request's kind whose `_meta`
//! names them ([`PASS_META`]: the token, and the members to add). rmcp answers with it as with
//! any result (version checks, routing, cancellation, the SSE stream), and the gateway's two
//! writers put the stored bytes in place of the placeholder's whole `result` ([`splice`]): the
//! tunnel's byte stream ([`Tunnel`], newline-delimited JSON-RPC) and the HTTP response body
//! ([`body`]: SSE events, and JSON bodies). Nothing parses or rebuilds the result.
//!
//! Only the handler writes [`PASS_META`] into a result's `_meta`: [`clean`] takes it out of every
//! result a server's JSON becomes, so no server can name another call's stored bytes.
//!
//! What the typed round trip did to such a result is done here, or the result takes that way:
//! a 2026-07-28 agent gets the members rmcp adds (`resultType: "complete"` when the server is
//! legacy; for `resources/read` the cache hints `ttlMs: 0`, `cacheScope: "private"` when
//! missing), written before the server's members; for a legacy agent, the server's
//! `resultType: "complete"` is left out where it is the first or the last member, and a result
//! with one elsewhere (rmcp strips it) or a tool result whose `structuredContent` is not an
//! object (rmcp moves it into the content) is parsed and goes through rmcp's types. Stored bytes
//! that are gone when the writer wants them make the response a JSON-RPC error.

use std::convert::Infallible;
use std::io;
use std::ops::Range;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use http_body_util::{BodyExt, BodyStream, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use rmcp::model::{ErrorData, ProtocolVersion};
use rmcp::service::{RequestContext, RoleServer};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::io::AsyncWrite;

use crate::mcp::{Pieces, Reply};

/// A line longer than this is never held by the tunnel's writer (a reply carrying a marker is
/// small).
const HOLD_MAX: usize = 64 * 1024;

/// What the writers put instead of a response whose stored bytes are gone.
const GONE: &[u8] = br#""error":{"code":-32603,"message":"mcp-sidecar gateway: the server's result was no longer available to relay (a result waits at most two minutes for its response)"}"#;

/// Results at least this long go to agents as sent; a smaller one is read through rmcp's types,
/// where the placeholder's round trip would cost about what it saves.
const PASS_MIN: usize = 64 * 1024;

/// A stored result nobody took is dropped after this long.
const STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(120);

/// The gateway's results waiting for their response: stored by [`through`], taken by the
/// writers. One per gateway, shared by its handlers and writers.
#[derive(Default)]
pub struct Passing {
    table: parking_lot::Mutex<std::collections::HashMap<u64, (Bytes, std::time::Instant)>>,
    /// How many are stored: the writers look inside messages only while this is not 0.
    stored: std::sync::atomic::AtomicUsize,
    next: AtomicU64,
}

impl Passing {
    fn store(&self, bytes: Bytes) -> u64 {
        let token = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let now = std::time::Instant::now();
        let mut table = self.table.lock();
        table.retain(|_, (_, at)| now.duration_since(*at) < STALE_AFTER);
        table.insert(token, (bytes, now));
        self.stored.store(table.len(), Ordering::Release);
        token
    }

    fn take(&self, token: u64) -> Option<Bytes> {
        let mut table = self.table.lock();
        let entry = table.remove(&token);
        self.stored.store(table.len(), Ordering::Release);
        entry.map(|(bytes, _)| bytes)
    }

    fn any(&self) -> bool {
        self.stored.load(Ordering::Acquire) != 0
    }
}

/// How many results the writers passed through so far (in this process).
static PASSED: AtomicU64 = AtomicU64::new(0);

/// How many relayed results reached agents as the bytes the server sent, in this process.
pub fn passed_total() -> u64 {
    PASSED.load(Ordering::Relaxed)
}

/// The `_meta` key of a placeholder result: the marker the writers replace it by the stored
/// bytes for.
pub const PASS_META: &str = "dev.mcp-sidecar/passed";

/// Which request a result answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Tool,
    Prompt,
    Resource,
}

/// A call's result as the handler hands it to rmcp: JSON as it is ([`clean`]); big bytes as
/// sent become a placeholder of the kind that names them (the writers put them in its place);
/// small ones, and those only rmcp's types make what the agent expects, are parsed.
pub fn through(
    reply: Reply,
    kind: Kind,
    context: &RequestContext<RoleServer>,
    passing: &Passing,
) -> Result<Value, ErrorData> {
    let unreadable = || {
        ErrorData::internal_error(
            "mcp-sidecar gateway: the server's result could not be read",
            None,
        )
    };
    let stored = match reply {
        Reply::Json(mut value) => {
            clean(&mut value);
            return Ok(value);
        }
        Reply::Raw(stored) => stored,
        Reply::Task(handle) => return Ok(handle.created),
    };
    let modern = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    if stored.len() >= PASS_MIN
        && let Some(tail) = tail(kind, modern, &stored)
    {
        return Ok(placeholder_of(kind, passing.store(stored), &tail));
    }
    let mut value = serde_json::from_slice(&stored).map_err(|_| unreadable())?;
    clean(&mut value);
    Ok(value)
}

/// Takes [`PASS_META`] out of a result's `_meta`: only [`through`] may write it.
pub fn clean(result: &mut Value) {
    if let Some(meta) = result.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.remove(PASS_META);
    }
}

/// The placeholder result of `kind` for stored result `token`, the members of `tail` to add.
fn placeholder_of(kind: Kind, token: u64, tail: &str) -> Value {
    let meta = json!({ PASS_META: format!("{token}{tail}") });
    match kind {
        // What the agent would see if a writer ever missed it: a clear error.
        Kind::Tool => json!({"content": [{"type": "text",
            "text": "mcp-sidecar gateway: the server's result was not relayed"}],
            "isError": true, "_meta": meta}),
        Kind::Prompt => json!({"messages": [], "_meta": meta}),
        Kind::Resource => json!({"contents": [], "_meta": meta}),
    }
}

/// The placeholder's tail for stored bytes `stored`: a letter for each member the writers add
/// before the server's members, `r` to leave the server's `resultType` out (see [`Edit`]);
/// `None` when the result must go through rmcp's types.
fn tail(kind: Kind, modern: bool, stored: &[u8]) -> Option<String> {
    /// The members the tail depends on, the values unread but one.
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Members<'a> {
        #[serde(rename = "resultType")]
        result_type: Option<serde::de::IgnoredAny>,
        #[serde(rename = "ttlMs")]
        ttl_ms: Option<serde::de::IgnoredAny>,
        #[serde(rename = "cacheScope")]
        cache_scope: Option<serde::de::IgnoredAny>,
        #[serde(rename = "structuredContent", borrow)]
        structured: Option<&'a RawValue>,
    }
    let members: Members = serde_json::from_slice(stored).ok()?;
    if !modern {
        // rmcp strips `resultType` for a legacy agent (here: when it is the first or the last
        // member, as servers write it), and moves a tool's structured content that is not an
        // object into its content.
        let moved = kind == Kind::Tool
            && members
                .structured
                .is_some_and(|v| !v.get().starts_with('{'));
        return match members.result_type.is_some() {
            _ if moved => None,
            true => result_type_member(stored).map(|_| "r".to_string()),
            false => Some(String::new()),
        };
    }
    let mut tail = String::new();
    for (letter, has, wanted) in [
        ('c', members.result_type.is_some(), true),
        ('t', members.ttl_ms.is_some(), kind == Kind::Resource),
        ('s', members.cache_scope.is_some(), kind == Kind::Resource),
    ] {
        if wanted && !has {
            tail.push(letter);
        }
    }
    Some(tail)
}

/// What a marker's tail asks of the writer.
#[derive(Debug, Default, PartialEq, Eq)]
struct Edit {
    /// Members to add after the result's `{`, each with a comma after it.
    add: String,
    /// Leave out the server's `"resultType":"complete"` ([`result_type_member`]).
    drop_result_type: bool,
}

/// The [`Edit`] a marker's tail stands for; `None` for a tail the gateway did not write.
fn edit_of(tail: &str) -> Option<Edit> {
    let mut edit = Edit::default();
    for letter in tail.chars() {
        match letter {
            'c' => edit.add.push_str(r#""resultType":"complete","#),
            't' => edit.add.push_str(r#""ttlMs":0,"#),
            's' => edit.add.push_str(r#""cacheScope":"private","#),
            'r' => edit.drop_result_type = true,
            _ => return None,
        }
    }
    Some(edit)
}

/// Where a stored result's `"resultType":"complete"` member stands, with the comma that joins
/// it to the others, when it is the first member or the last (it is not looked for elsewhere:
/// that would take a scan of the whole result). Bytes of a string cannot match: the quotes and
/// the colon around the member are checked to stand where only JSON's own can.
fn result_type_member(stored: &[u8]) -> Option<Range<usize>> {
    const KEY: &[u8] = b"\"resultType\"";
    const VALUE: &[u8] = b"\"complete\"";
    if stored.len() < 2 {
        return None;
    }
    let space = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r');
    let skip = |at: usize| at + stored[at..].iter().take_while(|b| space(b)).count();
    let back = |at: usize| at - stored[..at].iter().rev().take_while(|b| space(b)).count();
    // `{` `"resultType"` `:` `"complete"` `,`
    let key = skip(1);
    let colon = stored[key..]
        .starts_with(KEY)
        .then(|| skip(key + KEY.len()));
    let value = colon
        .filter(|&c| stored.get(c) == Some(&b':'))
        .map(|c| skip(c + 1));
    let comma = value
        .filter(|&v| stored[v..].starts_with(VALUE))
        .map(|v| skip(v + VALUE.len()));
    if let Some(comma) = comma.filter(|&c| stored.get(c) == Some(&b',')) {
        return Some(key..comma + 1);
    }
    // `,` `"resultType"` `:` `"complete"` `}`
    let end = back(stored.len() - 1);
    let value = end.checked_sub(VALUE.len())?;
    let colon = back(value).checked_sub(1)?;
    let key = back(colon).checked_sub(KEY.len())?;
    let comma = back(key).checked_sub(1)?;
    (stored[value..end] == *VALUE
        && stored[colon] == b':'
        && stored[key..key + KEY.len()] == *KEY
        && stored[comma] == b',')
        .then_some(comma..end)
}

/// One serialized message (a tunnel line, an SSE event, a JSON body), with the stored bytes
/// in place of its `result` where that is a placeholder of [`through`]: the pieces to write,
/// in order. `one_line`: raw carriage returns in the stored bytes (JSON whitespace, which an
/// SSE reader would take for a line's end) become spaces.
pub fn splice(message: Bytes, one_line: bool, passing: &Passing) -> Vec<Bytes> {
    if !passing.any() || message.len() > HOLD_MAX {
        return vec![message];
    }
    let Some((result, token, edit)) = placeholder(&message) else {
        return vec![message];
    };
    let mut pieces = vec![message.slice(..result.start)];
    match passing.take(token) {
        Some(stored) => {
            let stored = match memchr::memchr2(b'\r', b'\n', &stored) {
                Some(_) if one_line => Bytes::from(
                    stored
                        .iter()
                        .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b })
                        .collect::<Vec<u8>>(),
                ),
                _ => stored,
            };
            PASSED.fetch_add(1, Ordering::Relaxed);
            // The stored result is an object: the members to add go after its brace.
            pieces.push(Bytes::from(format!("{{{}", edit.add)));
            match result_type_member(&stored).filter(|_| edit.drop_result_type) {
                Some(member) => {
                    pieces.push(stored.slice(1..member.start));
                    pieces.push(stored.slice(member.end..));
                }
                None => pieces.push(stored.slice(1..)),
            }
        }
        None => {
            // `"result":` becomes `"error":` with what happened.
            let key = result.start - RESULT_KEY.len();
            pieces[0] = message.slice(..key);
            pieces.push(Bytes::from_static(GONE));
        }
    }
    pieces.push(message.slice(result.end..));
    // An empty piece would read as the end: a write of nothing, an HTTP chunk of length 0.
    pieces.retain(|piece| !piece.is_empty());
    pieces
}

const RESULT_KEY: &[u8] = b"\"result\":";

/// Where a placeholder stands in `message` (the `result` value whose `_meta` holds the marker
/// under [`PASS_META`], written right after `"result":`), its token and what to do.
fn placeholder(message: &[u8]) -> Option<(Range<usize>, u64, Edit)> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow)]
        result: &'a RawValue,
    }
    #[derive(Deserialize)]
    struct Placeholder<'a> {
        #[serde(rename = "_meta", borrow)]
        meta: std::collections::HashMap<&'a str, &'a RawValue>,
    }
    let marked = marked(message)?;
    // The JSON text the marker is in: an SSE event's `data:` line, or the whole message.
    let line_at = memchr::memrchr(b'\n', &message[..marked.quoted.start]).map_or(0, |i| i + 1);
    let line_end = memchr::memchr(b'\n', &message[marked.quoted.end..])
        .map_or(message.len(), |i| marked.quoted.end + i);
    let line = &message[line_at..line_end];
    let json = line
        .strip_prefix(b"data:")
        .map_or(line, |d| d.strip_prefix(b" ").unwrap_or(d));
    let envelope: Envelope = serde_json::from_slice(json).ok()?;
    let raw = envelope.result.get();
    let start = raw.as_ptr() as usize - message.as_ptr() as usize;
    let quoted = &message[marked.quoted.clone()];
    let placeholder: Placeholder = serde_json::from_str(raw).ok()?;
    let ours = placeholder
        .meta
        .get(PASS_META)
        .is_some_and(|m| m.get().as_bytes() == quoted);
    if !ours || !message[..start].ends_with(RESULT_KEY) {
        return None;
    }
    Some((
        start..start + raw.len(),
        marked.token,
        edit_of(marked.tail)?,
    ))
}

/// A placeholder's `_meta` member found in a serialized message.
struct Marked<'a> {
    /// Where its value stands, its quotes included.
    quoted: Range<usize>,
    token: u64,
    /// What follows the token inside the quotes: the members to add ([`edit_of`]).
    tail: &'a str,
}

/// The first `"dev.mcp-sidecar/passed":"<token><tail>"` in a serialized message (whether it is
/// the `_meta` of the message's `result`, [`placeholder`] checks).
fn marked(message: &[u8]) -> Option<Marked<'_>> {
    const KEY: &[u8] = b"\"dev.mcp-sidecar/passed\":\"";
    let at = memchr::memmem::find(message, KEY)? + KEY.len() - 1;
    let rest = &message[at + 1..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let close = digits + rest[digits..].iter().position(|&b| b == b'"')?;
    let tail = std::str::from_utf8(&rest[digits..close]).ok()?;
    if digits == 0 || !tail.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let token = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    Some(Marked {
        quoted: at..at + 1 + close + 1,
        token,
        tail,
    })
}

/// The HTTP response of rmcp's Streamable HTTP service with [`splice`] over its SSE events
/// (one per body frame) and its JSON bodies of status 200; other responses as they are (a
/// refusal or an error keeps its `Content-Length`; a spliced body goes out chunked).
pub fn body(
    response: http::Response<BoxBody<Bytes, Infallible>>,
    passing: std::sync::Arc<Passing>,
) -> http::Response<BoxBody<Bytes, Infallible>> {
    let spliced = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|t| t.to_str().ok())
        .is_some_and(|t| {
            t.starts_with("text/event-stream")
                || (t.starts_with("application/json") && response.status() == http::StatusCode::OK)
        });
    if !spliced {
        return response;
    }
    response.map(|body| {
        let frames = futures::StreamExt::flat_map(BodyStream::new(body), move |frame| {
            let Ok(frame) = frame;
            let frames = match frame.into_data() {
                Ok(data) => splice(data, true, &passing)
                    .into_iter()
                    .map(Frame::data)
                    .collect(),
                Err(frame) => vec![frame],
            };
            futures::stream::iter(frames.into_iter().map(Ok::<_, Infallible>))
        });
        StreamBody::new(frames).boxed()
    })
}

/// The tunnel's writer: newline-delimited JSON-RPC from rmcp, with [`splice`] over each line
/// while a result is stored (such lines are held whole, up to [`HOLD_MAX`]); everything else
/// goes out as it came, in one write.
pub struct Tunnel<W> {
    inner: W,
    passing: std::sync::Arc<Passing>,
    out: Pieces,
    /// The start of a line held until it is whole.
    line: Vec<u8>,
    /// Whether the next byte starts a line.
    at_start: bool,
}

impl<W> Tunnel<W> {
    pub fn new(inner: W, passing: std::sync::Arc<Passing>) -> Self {
        Self {
            inner,
            passing,
            out: Pieces::default(),
            line: Vec::new(),
            at_start: true,
        }
    }

    /// A held line goes out as it is (before a flush, or when it is too long to hold).
    fn let_go(&mut self) {
        if !self.line.is_empty() {
            self.out.push_back(std::mem::take(&mut self.line).into());
            self.at_start = false;
        }
    }
}

impl<W: AsyncWrite + Unpin> Tunnel<W> {
    /// [`AsyncWrite::poll_write`]: as much of `buf` as goes out or is held now.
    fn write_some(&mut self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        ready!(self.out.poll_drain(&mut self.inner, cx))?;
        if self.line.is_empty() && (!self.at_start || !self.passing.any()) {
            // Nothing stored: no line written so far can carry a placeholder (a response is
            // serialized after its result was stored). Mid-line: up to the line's end.
            let end = if self.at_start {
                buf.len()
            } else {
                memchr::memchr(b'\n', buf).map_or(buf.len(), |i| i + 1)
            };
            let n = ready!(Pin::new(&mut self.inner).poll_write(cx, &buf[..end]))?;
            if n > 0 {
                self.at_start = buf[n - 1] == b'\n';
            }
            return Poll::Ready(Ok(n));
        }
        let (take, whole) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        if self.line.len() + take > HOLD_MAX {
            // Too long to be a placeholder's response: the rest of the line as it comes.
            self.let_go();
            self.at_start = false;
            return self.write_some(cx, buf);
        }
        self.line.extend_from_slice(&buf[..take]);
        if whole {
            let line = std::mem::take(&mut self.line);
            self.out.extend(splice(line.into(), false, &self.passing));
            self.at_start = true;
        }
        Poll::Ready(Ok(take))
    }

    /// What is held and queued written out, before a flush or a shutdown.
    fn poll_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.let_go();
        self.out.poll_drain(&mut self.inner, cx)
    }
}

impl<W> AsyncWrite for Tunnel<W>
where
    W: AsyncWrite + Unpin,
{
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().write_some(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_out(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_out(cx))?;
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests;
