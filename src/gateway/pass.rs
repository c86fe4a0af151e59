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
mod tests {
    use super::*;
    use rmcp::model::{
        CallToolResult, NumberOrString, ReadResourceResult, ServerJsonRpcMessage, ServerResult,
    };

    /// A result as the server sent it, stored for its response.
    fn stored(passing: &Passing, result: &str) -> (u64, ()) {
        (passing.store(Bytes::from(result.to_string())), ())
    }

    fn big_result(text: &str) -> String {
        format!(r#"{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}"#)
    }

    fn big_text() -> String {
        "é \\\" tab\\t ✓ ".repeat(64 * 1024 / 8)
    }

    /// The response rmcp writes for a placeholder: its own types and serialization.
    fn response(kind: Kind, token: u64, tail: &str, id: i64) -> Vec<u8> {
        let placeholder = placeholder_of(kind, token, tail);
        let result = match kind {
            Kind::Resource => ServerResult::ReadResourceResult(
                serde_json::from_value::<ReadResourceResult>(placeholder).unwrap(),
            ),
            _ => ServerResult::CallToolResult(
                serde_json::from_value::<CallToolResult>(placeholder).unwrap(),
            ),
        };
        let message = ServerJsonRpcMessage::response(result, NumberOrString::Number(id));
        serde_json::to_vec(&message).unwrap()
    }

    fn joined(pieces: Vec<Bytes>) -> Vec<u8> {
        pieces.concat()
    }

    #[test]
    fn a_placeholder_becomes_the_stored_bytes_with_the_members_to_add() {
        let passing = std::sync::Arc::new(Passing::default());
        let result = big_result(&big_text());
        let (token, _) = stored(&passing, &result);
        let out = joined(splice(
            response(Kind::Tool, token, "", 5).into(),
            false,
            &passing,
        ));
        let want = format!(r#"{{"jsonrpc":"2.0","id":5,"result":{result}}}"#);
        assert_eq!(String::from_utf8(out).unwrap(), want, "byte for byte");
        assert!(passing.take(token).is_none(), "taken once");

        let resource = format!(
            r#"{{"contents":[{{"uri":"x:/a","text":"{}"}}]}}"#,
            big_text()
        );
        let (token, _) = stored(&passing, &resource);
        let out = joined(splice(
            response(Kind::Resource, token, "cts", 6).into(),
            false,
            &passing,
        ));
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 6);
        assert_eq!(v["result"]["resultType"], "complete");
        assert_eq!(v["result"]["ttlMs"], 0);
        assert_eq!(v["result"]["cacheScope"], "private");
        let mut expected: Value = serde_json::from_str(&resource).unwrap();
        expected["resultType"] = "complete".into();
        expected["ttlMs"] = 0.into();
        expected["cacheScope"] = "private".into();
        assert_eq!(v["result"], expected);
    }

    #[test]
    fn gone_bytes_are_a_json_rpc_error_and_unknown_tails_are_left_alone() {
        let passing = std::sync::Arc::new(Passing::default());
        let (token, _) = stored(&passing, &big_result(&big_text()));
        passing.take(token).unwrap();
        // Keep something stored, so that the splice looks at all.
        let (other, _) = stored(&passing, &big_result("y"));
        let out = joined(splice(
            response(Kind::Tool, token, "c", 9).into(),
            false,
            &passing,
        ));
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(v["id"], 9);
        assert_eq!(v["error"]["code"], -32603, "{v}");
        assert!(v.get("result").is_none());
        let odd = response(Kind::Tool, other, "x", 3);
        assert_eq!(joined(splice(odd.clone().into(), false, &passing)), odd);
        assert!(
            passing.take(other).is_some(),
            "not taken by a tail it does not know"
        );
    }

    #[test]
    fn text_that_looks_like_a_placeholder_is_left_alone() {
        let passing = std::sync::Arc::new(Passing::default());
        let (token, _) = stored(&passing, &big_result(&big_text()));
        let marker = format!("{token}");
        let real = String::from_utf8(response(Kind::Tool, token, "", 1)).unwrap();
        // A server's result quoting a placeholder (escaped), a token that is not the whole
        // value, and a placeholder member that is not in the result's `_meta`.
        let cases = [
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": real}]}})).unwrap(),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 2, "result": {"_meta": {PASS_META: format!("x{token}")}}})).unwrap(),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3, "result": {"_meta": {"other": marker}}})).unwrap(),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 4, "result": {PASS_META: marker}})).unwrap(),
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 5, "result": {"content": [], "x": {"_meta": {PASS_META: marker}}}})).unwrap(),
        ];
        for case in cases {
            assert_eq!(joined(splice(case.clone().into(), false, &passing)), case);
        }
        assert!(passing.take(token).is_some(), "still stored");
    }

    #[test]
    fn an_sse_event_gets_the_bytes_on_its_one_data_line() {
        let passing = std::sync::Arc::new(Passing::default());
        let text = big_text();
        let result = format!("{{\"content\":[{{\"type\":\"text\",\r\"text\":\"{text}\"}}]}}");
        let (token, _) = stored(&passing, &result);
        let data = String::from_utf8(response(Kind::Tool, token, "c", 2)).unwrap();
        let event = format!("data: {data}\nid: 0/7\n\n");
        let out = String::from_utf8(joined(splice(event.into(), true, &passing))).unwrap();
        let (data, rest) = out
            .strip_prefix("data: ")
            .unwrap()
            .split_once('\n')
            .unwrap();
        assert_eq!(rest, "id: 0/7\n\n");
        let v: Value = serde_json::from_str(data).unwrap();
        assert_eq!(
            v["result"]["content"][0]["text"],
            text.replace("\\\"", "\"").replace("\\t", "\t")
        );
        assert_eq!(v["result"]["resultType"], "complete");
    }

    /// A server's result that names a stored result under the placeholder's key, as JSON that
    /// goes through rmcp's types, has the key taken out: it cannot claim another call's bytes.
    #[test]
    fn a_servers_own_meta_cannot_claim_a_stored_result() {
        let passing = std::sync::Arc::new(Passing::default());
        let (token, _) = stored(&passing, &big_result(&big_text()));
        let mut forged = json!({"content": [], "_meta": {PASS_META: format!("{token}"), "k": 1}});
        let as_sent =
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 2, "result": forged.clone()}))
                .unwrap();
        assert_ne!(
            joined(splice(as_sent.clone().into(), false, &passing)),
            as_sent,
            "the writer alone would splice it"
        );
        let (token, _) = stored(&passing, &big_result(&big_text()));
        forged["_meta"][PASS_META] = format!("{token}").into();
        clean(&mut forged);
        assert_eq!(forged["_meta"], json!({"k": 1}));
        let cleaned =
            serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3, "result": forged})).unwrap();
        assert_eq!(
            joined(splice(cleaned.clone().into(), false, &passing)),
            cleaned
        );
        assert!(passing.take(token).is_some(), "still stored");
    }

    #[test]
    fn tails_follow_what_rmcp_does_for_each_agent() {
        let plain = br#"{"content":[]}"#;
        assert_eq!(tail(Kind::Tool, false, plain).as_deref(), Some(""));
        assert_eq!(tail(Kind::Tool, true, plain).as_deref(), Some("c"));
        let first = br#"{"resultType":"complete","ttlMs":5,"contents":[]}"#;
        assert_eq!(tail(Kind::Resource, true, first).as_deref(), Some("s"));
        assert_eq!(tail(Kind::Resource, false, first).as_deref(), Some("r"));
        let inside = br#"{"contents":[],"resultType":"complete","ttlMs":5}"#;
        assert_eq!(tail(Kind::Resource, false, inside), None, "rmcp strips it");
        let listed = br#"{"content":[],"structuredContent":[]}"#;
        assert_eq!(
            tail(Kind::Tool, false, listed),
            None,
            "rmcp moves it into content"
        );
        assert_eq!(tail(Kind::Tool, true, listed).as_deref(), Some("c"));
        let prompt = br#"{"messages":[]}"#;
        assert_eq!(tail(Kind::Prompt, true, prompt).as_deref(), Some("c"));
        assert_eq!(edit_of("q"), None);
    }

    #[test]
    fn the_servers_result_type_is_found_first_or_last_only() {
        let passing = std::sync::Arc::new(Passing::default());
        let cut = |s: &str| {
            result_type_member(s.as_bytes()).map(|r| format!("{}{}", &s[..r.start], &s[r.end..]))
        };
        let found = [
            (
                r#"{"resultType":"complete","content":[]}"#,
                r#"{"content":[]}"#,
            ),
            (
                "{ \"resultType\" :\t\"complete\"\r\n, \"a\":1}",
                r#"{  "a":1}"#,
            ),
            (
                r#"{"content":[],"resultType":"complete"}"#,
                r#"{"content":[]}"#,
            ),
            ("{\"a\":1 ,\n\"resultType\": \"complete\" }", "{\"a\":1  }"),
        ];
        for (stored, left) in found {
            assert_eq!(cut(stored).as_deref(), Some(left), "{stored}");
        }
        for stored in [
            "",
            "{",
            r#"{"content":[],"resultType":"complete","isError":false}"#,
            r#"{"resultType":1,"a":2}"#,
            r#"{"resultType":"complete"}"#,
            r#"{"a":""resultType":"complete"}"#,
            r#"{"a":["x","resultType"],"b":"complete"}"#,
            r#"{"resultTypes":"complete","a":1}"#,
        ] {
            assert_eq!(cut(stored), None, "{stored}");
        }
        // Through the writer: a legacy agent's answer without it, byte for byte otherwise.
        let result = format!(
            r#"{{"resultType":"complete","content":[{{"type":"text","text":"{}"}}]}}"#,
            big_text()
        );
        let (token, _) = stored(&passing, &result);
        let pieces = splice(response(Kind::Tool, token, "r", 8).into(), false, &passing);
        assert!(pieces.iter().all(|p| !p.is_empty()), "no empty piece");
        let out = joined(pieces);
        let without = result.replacen(r#""resultType":"complete","#, "", 1);
        let want = format!(r#"{{"jsonrpc":"2.0","id":8,"result":{without}}}"#);
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn http_bodies_get_the_bytes_in_sse_events_and_json_other_responses_stay() {
        let passing = std::sync::Arc::new(Passing::default());
        let result = big_result(&big_text());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let through = |kind: &'static str, frames: Vec<Bytes>| {
            let stream = futures::stream::iter(frames.into_iter().map(|f| Ok(Frame::data(f))));
            let response = http::Response::builder()
                .header(http::header::CONTENT_TYPE, kind)
                .body(StreamBody::new(stream).boxed())
                .unwrap();
            let body = body(response, passing.clone()).into_body();
            rt.block_on(body.collect()).unwrap().to_bytes()
        };
        let (token, _) = stored(&passing, &result);
        let data = String::from_utf8(response(Kind::Tool, token, "", 3)).unwrap();
        let events = vec![
            Bytes::from_static(b"data: \nid: 0\nretry: 3000\n\n"),
            Bytes::from(format!("data: {data}\nid: 1\n\n")),
            Bytes::from_static(b":\n\n"),
        ];
        let out = through("text/event-stream", events);
        let want = format!(
            "data: \nid: 0\nretry: 3000\n\ndata: {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{result}}}\nid: 1\n\n:\n\n"
        );
        assert_eq!(String::from_utf8(out.to_vec()).unwrap(), want);
        let (token, _) = stored(&passing, &result);
        let out = through(
            "application/json",
            vec![response(Kind::Tool, token, "c", 4).into()],
        );
        let v: Value = serde_json::from_slice(&out).unwrap();
        let sent: Value = serde_json::from_str(&result).unwrap();
        assert_eq!(v["result"]["resultType"], "complete");
        assert_eq!(v["result"]["content"], sent["content"]);
        // Another content type is not looked into: the placeholder stays.
        let (token, _) = stored(&passing, &result);
        let plain = Bytes::from(response(Kind::Tool, token, "", 5));
        assert_eq!(through("text/plain", vec![plain.clone()]), plain);
        assert!(passing.take(token).is_some());
        // A JSON error keeps its length (it is not looked into).
        let refused = http::Response::builder()
            .status(http::StatusCode::BAD_REQUEST)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(http_body_util::Full::new(Bytes::from_static(b"{}")).boxed())
            .unwrap();
        let hint = hyper::body::Body::size_hint(body(refused, passing.clone()).body());
        assert_eq!(hint.exact(), Some(2));
    }

    /// Writes `lines` through the tunnel's writer in chunks of `chunk` bytes.
    fn through_tunnel(passing: &std::sync::Arc<Passing>, lines: &[u8], chunk: usize) -> Vec<u8> {
        crate::mcp::write_in_chunks(Tunnel::new(Vec::new(), passing.clone()), lines, chunk).inner
    }

    #[test]
    fn the_tunnel_splices_whole_lines_in_any_chunks() {
        let passing = std::sync::Arc::new(Passing::default());
        for chunk in [1, 7, 100, usize::MAX] {
            let result = big_result(&big_text());
            let (token, _) = stored(&passing, &result);
            let long = format!(
                "{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"{}\"}}\n",
                "z".repeat(HOLD_MAX)
            );
            let mut input = b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n".to_vec();
            input.extend_from_slice(long.as_bytes());
            input.extend(response(Kind::Tool, token, "", 4));
            input.push(b'\n');
            input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n");
            let out = String::from_utf8(through_tunnel(&passing, &input, chunk)).unwrap();
            let lines: Vec<&str> = out.split_terminator('\n').collect();
            assert_eq!(lines.len(), 4, "chunk {chunk}");
            assert_eq!(lines[1], long.trim_end());
            assert_eq!(
                lines[2],
                format!(r#"{{"jsonrpc":"2.0","id":4,"result":{result}}}"#),
                "chunk {chunk}"
            );
            assert_eq!(lines[3], r#"{"jsonrpc":"2.0","id":6,"result":{}}"#);
        }
    }
}
