//! `tools/call`, `resources/read` and `prompts/get` on a legacy stdio session, past rmcp's peer.
//!
//! rmcp's request path costs more than the rest of a small call through the sidecar: its peer's
//! channel, a turn of its loop, a task for the write, the typed request serialized through its
//! untagged and flattened types, and the answer read back through its loop and a oneshot. These
//! three requests, the ones an editor or an agent makes over and over, are written to the
//! server's stdin here instead and answered straight from the transport by id
//! ([`Direct::deliver`]); rmcp keeps everything else (the handshake, lists, the server's own
//! requests, notifications) on the same pipe, under the same write lock, so lines never mix.
//!
//! What this keeps of rmcp's request path:
//! - ids (and progress tokens, which are the ids) from [`FIRST_ID`] on, a range rmcp's own `u32`
//!   counters never reach, and below 2^53, so a JavaScript server reads them exactly;
//! - the id registered before the line is written, for the relay of big answers too;
//! - the answer handed over in the transport, before rmcp would see it; progress is routed there
//!   already ([`Diagnostics::deliver_progress`](super::process::Diagnostics));
//! - the pending calls failed at once when the transport ends ([`Direct::close`]);
//! - `notifications/cancelled` when the caller gives up ([`Direct::cancel`]).
//!
//! A face that answers its caller with the server's result as sent may also take that result the
//! moment the transport reads it ([`answering_early`]): the editor's reply is then written from
//! the read itself, and the call's own layers (its timer, guards, judging) finish after it, off
//! the path the editor waits on.
//!
//! Legacy (initialize) sessions only: on 2026-07-28 rmcp accepts a server's request only while
//! one of its own requests is pending (SEP-2260), which a call past it would break.

use std::cell::Cell;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use std::borrow::Cow;

use bytes::Bytes;
use rmcp::model::{ErrorData, RequestId};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::oneshot;

use super::transport::{Writer, finish_line, write_line};

/// The first id of a request made here: past rmcp's `u32` ids, below 2^53.
pub const FIRST_ID: i64 = 1 << 32;

/// What a server answered: the result as sent (one JSON value, its syntax and UTF-8 checked;
/// [`judge`] reads it) or its error.
pub type Answer = Result<Bytes, ErrorData>;

/// Where a call's plain final result (see [`plain`]) goes the moment the transport reads it:
/// true when it took it (the caller is answered; the call's own result is then not needed).
pub type Early = Box<dyn FnOnce(&Bytes) -> bool + Send>;

/// What a waiting call is handed: the answer, and whether its [`Early`] took it already.
pub struct Delivered {
    pub answer: Answer,
    pub early: bool,
}

/// A call waiting for its answer.
struct Waiting {
    tx: oneshot::Sender<Delivered>,
    early: Option<Early>,
}

tokio::task_local! {
    static EARLY: Cell<Option<Early>>;
}

/// Runs `fut` with `early` for the first call made past rmcp inside it (taken by
/// [`take_early`]); a result that is not plain, an error, or a call that is cancelled or fails
/// leaves the caller to its usual answer.
pub fn answering_early<F: Future>(early: Early, fut: F) -> impl Future<Output = F::Output> {
    EARLY.scope(Cell::new(Some(early)), fut)
}

/// The current task's [`Early`], once.
pub fn take_early() -> Option<Early> {
    EARLY.try_with(Cell::take).ok().flatten()
}

/// The requests of one stdio connection made past rmcp.
pub struct Direct {
    writer: Writer,
    /// The waiting calls; `None` once the transport ended.
    pending: parking_lot::Mutex<Option<foldhash::HashMap<i64, Waiting>>>,
    next: AtomicI64,
}

impl Direct {
    pub fn new(writer: Writer) -> Arc<Self> {
        Arc::new(Direct {
            writer,
            pending: parking_lot::Mutex::new(Some(foldhash::HashMap::default())),
            next: AtomicI64::new(FIRST_ID),
        })
    }

    /// The id the next request is to have (it is also its progress token, if it asks for
    /// progress).
    pub fn next_id(&self) -> RequestId {
        RequestId::Number(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Writes request `id` (from [`Direct::next_id`]); the answer to come (a plain result
    /// first to `early`, if given). `None` when the transport has ended (nothing is written).
    pub fn send(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        params: &impl Serialize,
        early: Option<Early>,
    ) -> Option<oneshot::Receiver<Delivered>> {
        let RequestId::Number(n) = *id else {
            return None;
        };
        let mut line = Vec::with_capacity(256);
        line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        line.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        line.extend_from_slice(br#","method":"#);
        serde_json::to_writer(&mut line, method).ok()?;
        line.extend_from_slice(br#","params":"#);
        serde_json::to_writer(&mut line, params).ok()?;
        line.extend_from_slice(b"}\n");
        let (tx, rx) = oneshot::channel();
        // Registered before the line is written: the answer finds its caller however soon.
        self.pending
            .lock()
            .as_mut()?
            .insert(n, Waiting { tx, early });
        if let Some(rest) = write_line(&self.writer, line) {
            let this = self.clone();
            finish_line(rest, move |e| {
                tracing::debug!("writing request {n} failed: {e}");
                // The caller learns it from the dropped sender, as when the transport ends.
                if let Some(pending) = this.pending.lock().as_mut() {
                    pending.remove(&n);
                }
            });
        }
        Some(rx)
    }

    /// Whether any call waits for an answer (checked per line the server sends).
    pub fn waiting(&self) -> bool {
        self.pending.lock().as_ref().is_some_and(|p| !p.is_empty())
    }

    /// Whether `id` is a call waiting here.
    pub fn is_pending(&self, id: &RequestId) -> bool {
        match id {
            RequestId::Number(n) if *n >= FIRST_ID => self
                .pending
                .lock()
                .as_ref()
                .is_some_and(|p| p.contains_key(n)),
            _ => false,
        }
    }

    /// Hands `answer` to the call waiting for `id` (a plain result to its [`Early`] first); false
    /// when none is (the answer is rmcp's).
    pub fn deliver(&self, id: &RequestId, answer: Answer) -> bool {
        let Some(Waiting { tx, early }) = self.take(id) else {
            return false;
        };
        let early = match (&answer, early) {
            // A bigger one is spliced into its reply by the editor's writer, uncopied.
            (Ok(result), Some(early)) if result.len() <= super::relay::SMALL && plain(result) => {
                early(result)
            }
            _ => false,
        };
        let _ = tx.send(Delivered { answer, early });
        true
    }

    fn take(&self, id: &RequestId) -> Option<Waiting> {
        match id {
            RequestId::Number(n) if *n >= FIRST_ID => self.pending.lock().as_mut()?.remove(n),
            _ => None,
        }
    }

    /// The caller of `id` gave up: it is forgotten, and if the server was still working on it,
    /// told with `notifications/cancelled`.
    pub fn cancel(&self, id: &RequestId, reason: &str) {
        if self.take(id).is_none() {
            return;
        }
        let notification = serde_json::json!({
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": reason},
        });
        let mut line = notification.to_string().into_bytes();
        line.push(b'\n');
        if let Some(rest) = write_line(&self.writer, line) {
            finish_line(rest, drop);
        }
    }

    /// The transport ended: every waiting call fails at once, and later ones are refused.
    pub fn close(&self) {
        self.pending.lock().take();
    }
}

/// What a final answer becomes.
pub enum Judged {
    /// The result as the caller hands it on.
    Final(Value),
    /// `resultType: "input_required"`, which a legacy session must not send.
    InputRequired,
    /// Not a result of the request's kind.
    Unexpected,
}

/// Judges a call's result as rmcp's types would, building as little as it can: inside
/// [`relay::relaying`](super::relay::relaying) (the editor's face, whose writer puts a stored
/// result in its reply as sent), a plain result ([`plain_shape`]) is stored as it came and its
/// marker handed on, with no tree built at all; anything else is parsed once and judged as
/// [`final_result`] judges it.
pub fn judge<R: DeserializeOwned + Serialize>(result: &Bytes) -> Judged {
    use super::relay;
    if relay::relaying_now() && plain(result) {
        return Judged::Final(Value::String(relay::marker(relay::store(result.clone()))));
    }
    let Ok(value) = serde_json::from_slice::<Value>(result) else {
        return Judged::Unexpected;
    };
    if value.get("resultType").and_then(Value::as_str) == Some("input_required") {
        return Judged::InputRequired;
    }
    final_result::<R>(value).map_or(Judged::Unexpected, Judged::Final)
}

/// A result to hand on as it came: of a plain shape ([`plain_shape`]), not a stand-in for a big
/// result (its token in `_meta`: those go the parsed way, to `relay::finish`), without a lone
/// surrogate escape (which a full parse refuses).
pub fn plain(result: &Bytes) -> bool {
    use super::relay;
    let stand_in = |meta: &str| meta.contains(relay::token_meta());
    shape(result).is_some_and(|meta| !meta.is_some_and(stand_in))
        && !relay::has_surrogate_escape(result)
}

/// A content block or a resource's contents as [`shape`] reads them in the same pass: an object
/// (never an array, which a derived struct would also take), whether it has a `type` and a
/// `uri`, each a string (as a `Map` keeps the last of a member named twice).
#[derive(Default)]
struct Item {
    kind: bool,
    uri: bool,
}

/// Whether a value read as it is (read from borrowed bytes) is a string.
fn is_str(value: &RawValue) -> bool {
    value.get().starts_with('"')
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> serde::de::Visitor<'de> for Members {
            type Value = Item;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Item, A::Error> {
                let mut item = Item::default();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match &*key {
                        "type" => item.kind = is_str(map.next_value()?),
                        "uri" => item.uri = is_str(map.next_value()?),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(item)
            }
        }
        d.deserialize_map(Members)
    }
}

/// [`plain_result`](super::transport::plain_result) read from the bytes, without a tree: the
/// members a tool result, a resource read or a prompt must have, as they must look.
#[cfg(test)]
fn plain_shape(result: &[u8]) -> bool {
    shape(result).is_some()
}

/// For a result that is plain (see [`plain_shape`]), its `_meta` as sent, if it has one; `None`
/// for any other.
fn shape(result: &[u8]) -> Option<Option<&str>> {
    /// A member that is there, whatever its value (even `null`, which `Option` would hide).
    fn some<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<T>, D::Error> {
        T::deserialize(d).map(Some)
    }
    #[derive(Deserialize)]
    struct Shape<'a> {
        #[serde(rename = "resultType", borrow, default, deserialize_with = "some")]
        result_type: Option<Cow<'a, str>>,
        #[serde(default, deserialize_with = "some")]
        content: Option<Vec<Item>>,
        #[serde(default, deserialize_with = "some")]
        contents: Option<Vec<Item>>,
        #[serde(borrow, default, deserialize_with = "some")]
        messages: Option<Vec<&'a RawValue>>,
        #[serde(rename = "_meta", borrow, default, deserialize_with = "some")]
        meta: Option<&'a RawValue>,
    }
    let object = |raw: &RawValue| raw.get().starts_with('{');
    let shape = serde_json::from_slice::<Shape>(result).ok()?;
    let plain = result.first() == Some(&b'{')
        && shape.result_type.as_deref().is_none_or(|t| t == "complete")
        && shape.content.iter().flatten().all(|item| item.kind)
        && shape.contents.iter().flatten().all(|item| item.uri)
        && shape.messages.iter().flatten().all(|raw| object(raw))
        && shape.meta.is_none_or(object);
    plain.then(|| shape.meta.map(RawValue::get))
}

/// A final result as the sidecar hands it on: as sent when it looks as its kind must look
/// ([`plain_result`](super::transport::plain_result), as for rmcp's own calls), else as rmcp's
/// type `R` reads it and writes it back. `None` when it is no such result.
pub fn final_result<R: DeserializeOwned + Serialize>(result: Value) -> Option<Value> {
    match &result {
        Value::Object(members) if super::transport::plain_result(members) => Some(result),
        _ => serde_json::from_value::<R>(result)
            .ok()
            .and_then(|typed| serde_json::to_value(typed).ok()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Values of the kinds a result's members take, and the odd ones.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            Just(json!(3)),
            Just(json!("complete")),
            Just(json!("input_required")),
            Just(json!({"type": "text", "text": "hi"})),
            Just(json!({"type": 7})),
            Just(json!({"type": null})),
            Just(json!({"uri": "file:///a", "text": "x"})),
            Just(json!({"uri": ["no"]})),
            Just(json!({"type": "text", "uri": 7})),
            Just(json!({"uri": "file:///a", "type": [1]})),
            Just(json!({"type": "t", "x": {"y": [1, {"z": null}]}, "uri": "u"})),
            Just(json!({})),
            Just(json!(["type", "text"])),
            "\\PC{0,8}".prop_map(Value::String),
        ];
        leaf.prop_recursive(2, 8, 4, |inner| {
            prop::collection::vec(inner, 0..4).prop_map(Value::Array)
        })
    }

    proptest! {
        /// The scan without a tree says "plain" exactly when the parsed result is plain.
        #[test]
        fn the_shape_scan_agrees_with_the_parsed_judgement(
            members in prop::collection::vec(
                (prop::sample::select(vec!["content", "contents", "messages", "_meta", "resultType", "isError", "x"]), value()),
                0..5,
            ),
            spaced in any::<bool>(),
        ) {
            let mut object = serde_json::Map::new();
            for (key, value) in members {
                object.insert(key.to_string(), value);
            }
            let text = if spaced {
                serde_json::to_string_pretty(&object).unwrap()
            } else {
                serde_json::to_string(&object).unwrap()
            };
            prop_assert_eq!(
                plain_shape(text.as_bytes()),
                super::super::transport::plain_result(&object),
                "{}", text
            );
        }
    }

    #[test]
    fn inside_the_editors_face_a_plain_result_is_stored_as_sent() {
        use super::super::relay;
        type R = rmcp::model::CallToolResult;
        let sent = Bytes::from_static(
            br#"{"content":[{"type":"text","text":"a\u00e9"}],"isError":false}"#,
        );
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let Judged::Final(Value::String(marker)) =
            rt.block_on(relay::relaying(async { judge::<R>(&sent) }))
        else {
            panic!("not stored")
        };
        assert_eq!(relay::take_small(&marker).unwrap(), sent, "byte for byte");
        // Elsewhere, and for what is not plain, the result parsed.
        let Judged::Final(parsed) = judge::<R>(&sent) else {
            panic!()
        };
        assert_eq!(parsed["content"][0]["text"], "aé");
        for odd in [
            &br#"{"content":"text"}"#[..],
            br#"{"content":[{"type":"text","text":"\ud800"}]}"#,
        ] {
            let judged = rt.block_on(relay::relaying(async { judge::<R>(&Bytes::from(odd)) }));
            assert!(
                !matches!(judged, Judged::Final(Value::String(_))),
                "{}",
                String::from_utf8_lossy(odd)
            );
        }
        let required = Bytes::from_static(br#"{"resultType":"input_required","inputRequests":{}}"#);
        assert!(matches!(judge::<R>(&required), Judged::InputRequired));
        // A stand-in for a big result keeps its token for `relay::finish`.
        let key = relay::token_meta();
        let stand_in = Bytes::from(format!(r#"{{"content":[],"_meta":{{"{key}":9}}}}"#));
        let judged = rt.block_on(relay::relaying(async { judge::<R>(&stand_in) }));
        let Judged::Final(value) = judged else {
            panic!()
        };
        assert_eq!(value["_meta"][key], 9);
    }
}
