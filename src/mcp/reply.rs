//! What a call to a server comes back as: the one type every layer hands on.
//!
//! `tools/call`, `resources/read` and `prompts/get` answer with a [`Reply`]. A result the server
//! sent in its usual shape ([`plain`]) stays the bytes it sent ([`Reply::Raw`]): the faces write
//! them into their own message unread (the editor's reply, an agent's response). Anything else is
//! JSON ([`Reply::Json`]): read through rmcp's result type, as rmcp's own client reads it.

use std::borrow::Cow;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::mcp::requester::Agent;

/// A call's result.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The result as the server sent it: one JSON object, its syntax and UTF-8 checked, of the
    /// shape [`plain`] accepts.
    Raw(Bytes),
    /// The result as JSON.
    Json(Value),
    /// A task handle (Tasks extension): the call goes on as a task the sidecar polls. Only a
    /// caller that asked for handles ([`Tasks::Handle`]) gets one; the others get the task's
    /// result when it ends.
    Task(TaskHandle),
}

/// A task the sidecar follows, as a caller that takes handles sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskHandle {
    pub server: String,
    /// The server's task id.
    pub task_id: String,
    /// The `CreateTaskResult` the server sent, as JSON (in the 2026-07-28 spelling).
    pub created: Value,
    /// Whether the task takes the 2025-11-25 form (`tasks/result` for its end and questions).
    pub legacy: bool,
}

/// What a caller wants when the server answers a `tools/call` with a task handle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tasks {
    /// The task's result, when it ends (the sidecar polls meanwhile).
    #[default]
    Await,
    /// The handle ([`Reply::Task`]): the caller polls the sidecar's own state.
    Handle,
}

impl Reply {
    /// The result as JSON, for a caller that needs the tree itself.
    pub fn into_value(self) -> Option<Value> {
        match self {
            Reply::Raw(bytes) => serde_json::from_slice(&bytes).ok(),
            Reply::Json(value) => Some(value),
            Reply::Task(handle) => Some(handle.created),
        }
    }
}

/// Who makes a call, and what it wants on the way.
#[derive(Default)]
pub struct Caller {
    /// The agent whose call it is (through the gateway); `None`: the editor.
    pub agent: Option<Agent>,
    /// Where the server's progress goes.
    pub progress: Option<super::ProgressFn>,
    /// Whether a person or agent calls, or a server's view: a tool is called only where its
    /// visibility (MCP Apps) allows.
    pub surface: crate::apps::Surface,
    /// What a task handle becomes.
    pub tasks: Tasks,
}

/// A result the sidecar hands on as the server sent it: an object whose members are as a tool
/// result, a resource read or a prompt must have them (`content` a list of blocks with a string
/// `type`, `contents` a list with a string `uri` each, `messages` a list of objects, `_meta` an
/// object, no `resultType` but `complete`), with no lone surrogate escape (which a full parse
/// refuses). Read from the bytes in one pass, building no tree.
///
/// `result` is one JSON value whose syntax was checked already (by the transport's reading of
/// the line): the members are found by a walk that skips strings with `memchr` and builds
/// nothing (on a 10 MiB result, a fifth of what `serde_json` takes to skip its text). A key or a
/// `resultType` with an escape, or any doubt, is read by `serde_json` instead ([`shape`]).
pub fn plain(result: &[u8]) -> bool {
    let shape = Walk(result).shape().unwrap_or_else(|| shape(result));
    shape && !has_surrogate_escape(result)
}

/// A walk over one JSON value whose syntax is known to be right. Each step returns the position
/// after what it read; `None` means "not sure" (the caller asks `serde_json`), never a verdict.
struct Walk<'a>(&'a [u8]);

impl Walk<'_> {
    fn at(&self, i: usize) -> Option<u8> {
        self.0.get(i).copied()
    }

    fn space(&self, mut i: usize) -> usize {
        while matches!(self.at(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            i += 1;
        }
        i
    }

    /// A string starting at `i` (its quote): the position after it, and whether it has an escape.
    /// Its end is the first quote after an even run of backslashes: one `memchr` per quote, not
    /// per escape (a server's text escapes every few bytes).
    fn string(&self, i: usize) -> Option<(usize, bool)> {
        let end = self.end_of_string(i)?;
        Some((
            end,
            memchr::memchr(b'\\', &self.0[i + 1..end - 1]).is_some(),
        ))
    }

    /// Where the string starting at `i` ends (the position after its quote).
    fn end_of_string(&self, i: usize) -> Option<usize> {
        let mut j = i + 1;
        loop {
            j += memchr::memchr(b'"', self.0.get(j..)?)?;
            let run = self.0[i + 1..j]
                .iter()
                .rev()
                .take_while(|&&b| b == b'\\')
                .count();
            if run % 2 == 0 {
                return Some(j + 1);
            }
            j += 1;
        }
    }

    /// Any value starting at `i`: the position after it.
    fn skip(&self, i: usize) -> Option<usize> {
        match self.at(i)? {
            b'"' => self.end_of_string(i),
            b'{' | b'[' => {
                let mut depth = 0usize;
                let mut j = i;
                loop {
                    match self.at(j)? {
                        b'"' => {
                            j = self.end_of_string(j)?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 0 {
                                return Some(j + 1);
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            _ => {
                let rest = self.0.get(i..)?;
                let end = rest
                    .iter()
                    .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                    .unwrap_or(rest.len());
                Some(i + end)
            }
        }
    }

    /// The members of the object at `i`, each as (key, where its value starts); the position
    /// after the object. `None` for a key with an escape.
    fn members(
        &self,
        i: usize,
        mut each: impl FnMut(&[u8], usize) -> Option<usize>,
    ) -> Option<usize> {
        if self.at(i)? != b'{' {
            return None;
        }
        let mut j = self.space(i + 1);
        if self.at(j)? == b'}' {
            return Some(j + 1);
        }
        loop {
            let (end, escaped) = self.string(j)?;
            if escaped {
                return None;
            }
            let key = &self.0[j + 1..end - 1];
            let value = self.space(self.space(end) + 1);
            j = self.space(each(key, value)?);
            match self.at(j)? {
                b',' => j = self.space(j + 1),
                b'}' => return Some(j + 1),
                _ => return None,
            }
        }
    }

    /// The items of the array at `i`, each by where it starts; the position after the array.
    fn items(&self, i: usize, mut each: impl FnMut(usize) -> Option<usize>) -> Option<usize> {
        let mut j = self.space(i + 1);
        if self.at(j)? == b']' {
            return Some(j + 1);
        }
        loop {
            j = self.space(each(j)?);
            match self.at(j)? {
                b',' => j = self.space(j + 1),
                b']' => return Some(j + 1),
                _ => return None,
            }
        }
    }

    /// What [`shape`] says, from the walk: `None` when the walk is not sure.
    fn shape(&self) -> Option<bool> {
        // An object, from the first byte (as the derived reading is asked for it).
        let start = 0;
        if self.at(start)? != b'{' {
            return Some(false);
        }
        let mut plain = true;
        let mut seen = [false; 5];
        let end = self.members(start, |key, value| {
            let known = ["resultType", "content", "contents", "messages", "_meta"]
                .iter()
                .position(|k| k.as_bytes() == key);
            if let Some(k) = known {
                // A known member named twice is refused by the derived reading.
                if std::mem::replace(&mut seen[k], true) {
                    plain = false;
                }
            }
            let first = self.at(value)?;
            match known {
                Some(0) => {
                    let (end, escaped) = (first == b'"').then(|| self.string(value)).flatten()?;
                    if escaped {
                        return None;
                    }
                    plain &= &self.0[value..end] == b"\"complete\"";
                    Some(end)
                }
                Some(k @ (1 | 2)) => {
                    if first != b'[' {
                        plain = false;
                        return self.skip(value);
                    }
                    let wanted: &[u8] = if k == 1 { b"type" } else { b"uri" };
                    self.items(value, |item| {
                        if self.at(item)? != b'{' {
                            plain = false;
                            return self.skip(item);
                        }
                        let mut has = false;
                        let end = self.members(item, |key, value| {
                            if key == wanted {
                                has = self.at(value)? == b'"';
                            }
                            self.skip(value)
                        })?;
                        plain &= has;
                        Some(end)
                    })
                }
                Some(3) => {
                    if first != b'[' {
                        plain = false;
                        return self.skip(value);
                    }
                    self.items(value, |item| {
                        plain &= self.at(item)? == b'{';
                        self.skip(item)
                    })
                }
                Some(_) => {
                    plain &= first == b'{';
                    self.skip(value)
                }
                None => self.skip(value),
            }
        })?;
        // Only whitespace after the object.
        (self.space(end) == self.0.len()).then_some(plain)
    }
}

/// Whether `json` has a `\uD800`–`\uDFFF` escape (or what might be one): serde_json's scan
/// accepts them unpaired, where a full parse refuses a lone one; such lines go the usual way.
pub fn has_surrogate_escape(json: &[u8]) -> bool {
    let surrogate = |i: usize| {
        matches!(json.get(i + 2), Some(b'd' | b'D'))
            && matches!(
                json.get(i + 3),
                Some(b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
            )
    };
    // Each `\u`: in a small result, each backslash found with `memchr` (a `memmem` searcher
    // costs more to build than the result costs to scan); in a big one (whose text may escape
    // a quote every few bytes), with `memmem`.
    if json.len() < 4096 {
        memchr::memchr_iter(b'\\', json).any(|i| json.get(i + 1) == Some(&b'u') && surrogate(i))
    } else {
        memchr::memmem::find_iter(json, b"\\u").any(surrogate)
    }
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

/// The members [`plain`] looks at.
fn shape(result: &[u8]) -> bool {
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
    let Ok(shape) = serde_json::from_slice::<Shape>(result) else {
        return false;
    };
    result.first() == Some(&b'{')
        && shape.result_type.as_deref().is_none_or(|t| t == "complete")
        && shape.content.iter().flatten().all(|item| item.kind)
        && shape.contents.iter().flatten().all(|item| item.uri)
        && shape.messages.iter().flatten().all(|raw| object(raw))
        && shape.meta.is_none_or(object)
}

/// Bytes a face's writer accepted but did not write yet, in order: a [`Reply::Raw`] goes out as
/// it is, without a copy.
#[derive(Default)]
pub struct Pieces(std::collections::VecDeque<Bytes>);

impl Pieces {
    pub fn push_back(&mut self, piece: Bytes) {
        if !piece.is_empty() {
            self.0.push_back(piece);
        }
    }

    /// Writes what is queued to `inner`; `Pending` until all of it is written.
    pub fn poll_drain<W: tokio::io::AsyncWrite + Unpin>(
        &mut self,
        inner: &mut W,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        use bytes::Buf;
        while let Some(front) = self.0.front_mut() {
            let n = std::task::ready!(std::pin::Pin::new(&mut *inner).poll_write(cx, front))?;
            if n == 0 {
                return std::task::Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            front.advance(n);
            if front.is_empty() {
                self.0.pop_front();
            }
        }
        std::task::Poll::Ready(Ok(()))
    }
}

impl Extend<Bytes> for Pieces {
    fn extend<I: IntoIterator<Item = Bytes>>(&mut self, pieces: I) {
        for piece in pieces {
            self.push_back(piece);
        }
    }
}

/// Writes `input` through `writer` in chunks of `chunk` bytes, then flushes: the splicing
/// writers' tests.
#[cfg(test)]
pub fn write_in_chunks<W: tokio::io::AsyncWrite + Unpin>(
    mut writer: W,
    input: &[u8],
    chunk: usize,
) -> W {
    use tokio::io::AsyncWriteExt;
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        for part in input.chunks(chunk.max(1)) {
            writer.write_all(part).await.unwrap();
        }
        writer.flush().await.unwrap();
    });
    writer
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// What [`plain`] says, judged on the parsed tree.
    fn plain_tree(result: &serde_json::Map<String, Value>) -> bool {
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
        /// Bytes a server could send, JSON or not: the walk never panics, and where it is sure it
        /// says what the derived reading says.
        #[test]
        fn any_bytes_are_judged_without_a_panic(
            text in "[{}\\[\\],:\" \\\\a-z0-9_]{0,64}",
            bytes in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            for input in [text.as_bytes(), &bytes[..]] {
                let walked = Walk(input).shape();
                let _ = plain(input);
                if serde_json::from_slice::<serde::de::IgnoredAny>(input).is_ok()
                    && let Some(walked) = walked
                {
                    prop_assert_eq!(walked, shape(input), "{}", String::from_utf8_lossy(input));
                }
            }
        }

        /// The one-pass reading says "plain" exactly when the members, parsed, are as they must be.
        #[test]
        fn the_shape_read_from_the_bytes_agrees_with_the_tree(
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
            prop_assert_eq!(plain(text.as_bytes()), plain_tree(&object), "{}", text);
            if let Some(walked) = Walk(text.as_bytes()).shape() {
                prop_assert_eq!(walked, shape(text.as_bytes()), "{}", text);
            }
        }
    }

    /// The walk agrees with `serde_json`'s reading where it is sure, and says when it is not:
    /// keys and a `resultType` with escapes, members named twice, whitespace everywhere.
    #[test]
    fn the_walk_agrees_with_the_derived_reading() {
        for text in [
            r#"{"cont\u0065nt":[{"type":"t"}]}"#,
            r#"{"content":[{"ty\u0070e":"t"}]}"#,
            r#"{"resultType":"compl\u0065te","content":[]}"#,
            r#"{"content":[],"content":[]}"#,
            r#"{"content":[{"type":1,"type":"t"}],"x":{"content":7}}"#,
            r#"{"content":[{"type":"t","type":1}]}"#,
            " {\"content\" : [ { \"text\" : \"a\\\"b]}\" , \"type\" : \"t\" } ] } ",
            r#"{"content":[{"type":"t"}]} "#,
            r#"{"messages":[{},[]]}"#,
            r#"{"messages":null}"#,
            r#"{"_meta":null}"#,
            r#"{"x":[1,{"a":"]"},-2.5e3,true,null]}"#,
            r#"{}"#,
        ] {
            assert_eq!(
                Walk(text.as_bytes())
                    .shape()
                    .unwrap_or_else(|| shape(text.as_bytes())),
                shape(text.as_bytes()),
                "{text}"
            );
        }
        assert_eq!(
            Walk(br#"{"cont\u0065nt":[]}"#).shape(),
            None,
            "not sure: serde reads it"
        );
    }

    #[test]
    fn odd_results_are_not_plain() {
        for odd in [
            &br#"{"content":"text"}"#[..],
            br#"{"content":[{"type":"text","text":"\ud800"}]}"#,
            br#"[{"content":[]}]"#,
            br#"{"resultType":"input_required","inputRequests":{}}"#,
            br#"{"content":[],"_meta":3}"#,
        ] {
            assert!(!plain(odd), "{}", String::from_utf8_lossy(odd));
        }
        assert!(plain(
            br#"{"content":[{"type":"text","text":"a\u00e9"}],"isError":false}"#
        ));
        assert!(plain(
            br#"{"resultType":"complete","contents":[{"uri":"a:b"}]}"#
        ));
    }

    #[test]
    fn a_raw_reply_reads_as_its_json() {
        let raw = Reply::Raw(Bytes::from_static(br#"{"content":[]}"#));
        assert_eq!(raw.into_value(), Some(json!({"content": []})));
    }
}
