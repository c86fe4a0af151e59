//! One line from a server, read: a message for rmcp, junk, a refusal, or the answer to a call
//! made past rmcp ([`answer_of`]).

use bytes::Bytes;
use rmcp::RoleClient;
use rmcp::model::{ErrorData, RequestId};
use rmcp::service::RxJsonRpcMessage;
use serde::Deserialize;
use serde_json::{Value, json};

use super::raw;
use super::scan::{self, Outline};

/// A line in the usual shape of an answer (`jsonrpc`, `id`, and a `result` object or an
/// `error`), read without building a tree: its id, and the result as the slice of the line the
/// server sent (its syntax and UTF-8 checked by one scan) or its error. For a long line, where
/// the codec's scan found the parts as the line came in (`outline`). `None` for anything else,
/// including an answer in another shape or with a lone surrogate escape (which a full parse
/// refuses): rmcp's parse reads those.
pub fn answer_of(
    line: &Bytes,
    outline: Option<Outline>,
) -> Option<(RequestId, Result<Bytes, ErrorData>)> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Answer<'a> {
        #[allow(dead_code)]
        jsonrpc: rmcp::model::JsonRpcVersion2_0,
        id: RequestId,
        #[serde(default, borrow)]
        result: Option<&'a serde_json::value::RawValue>,
        #[serde(default)]
        error: Option<ErrorData>,
    }
    if let Some(outline) = outline {
        let id = serde_json::from_slice::<RequestId>(&line[outline.id.clone()]).ok()?;
        return Some((id, Ok(line.slice(outline.result))));
    }
    let text = line.strip_suffix(b"\r").unwrap_or(line);
    let answer = serde_json::from_slice::<Answer>(text).ok()?;
    let result = match (answer.result, answer.error) {
        (Some(result), None)
            if result.get().starts_with('{')
                && !crate::mcp::reply::has_surrogate_escape(result.get().as_bytes()) =>
        {
            Ok(line.slice_ref(result.get().as_bytes()))
        }
        (None, Some(error)) => Err(error),
        _ => return None,
    };
    Some((answer.id, result))
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
