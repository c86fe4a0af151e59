//! Large results relayed as the bytes the server sent, instead of rebuilt.
//!
//! A `tools/call`, `resources/read` or `prompts/get` answer of [`RELAY_MIN_BYTES`] or more is
//! read by the stdio transport in one validating scan that builds no tree ([`stand_in`]): the
//! whole line's syntax, with the result's top-level members kept as raw JSON (UTF-8 checked,
//! as a full parse checks it). The transport does that scan a read at a time while the line
//! comes in ([`super::scan`]), so little is left to check once its last byte is there. Only what the sidecar must look at is read (`resultType`: an `input_required` round
//! goes the usual way; `isError`, `_meta` and the small members are kept as they are). The
//! result's bytes go to a side table keyed by a token, and rmcp gets a small stand-in (the big
//! members emptied, the token in `_meta` under [`token_meta`]), so its types, the response
//! routing, timeouts and cancellation all work as for any answer.
//!
//! [`Connection::exchange`](super::connection) finds the token in the final result. Inside
//! [`relaying`] (the editor's face, which writes the LSP reply itself) the result becomes a
//! [`marker`] string, and the LSP output writer (`lsp::splice`) replaces the quoted marker with
//! the stored bytes ([`take`]) as it writes the frame, so the editor gets the server's result
//! byte for byte. The gateway runs its calls inside [`keeping`], gets the stand-in with its
//! token, and has its own writers put the stored bytes in the agent's response (or parses them
//! with [`resolve`] where only rmcp's types give the agent what it got so far). Elsewhere the
//! bytes are parsed once into a `Value`.
//!
//! The marker carries a per-process random nonce: a server cannot forge one, and a marker quoted
//! inside a JSON string is escaped (`\"`), so the writer, which only splices `"<marker>"` with
//! bare quotes, never touches text from a server. Entries nobody took (a call given up between
//! the answer and the reply) are dropped after [`STALE_AFTER`].

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

pub use super::scan::Outline;
use super::scan::is_space;

/// Answers at least this long (the whole line) are relayed raw.
pub const RELAY_MIN_BYTES: usize = 64 * 1024;
/// Members of a result longer than this are left out of the stand-in (emptied).
const BIG_MEMBER: usize = 1024;
/// The `_meta` key under which a stand-in carries its token: it holds the per-process nonce, so
/// a server's own `_meta` cannot name another call's stored result (with a fixed key, a small
/// answer could have claimed any token, and a result waiting for its reply would have been
/// spliced into the wrong one).
pub fn token_meta() -> &'static str {
    static KEY: OnceLock<String> = OnceLock::new();
    KEY.get_or_init(|| format!("dev.{}token", marker_prefix()))
}
/// A stored result nobody took is dropped after this long.
pub const STALE_AFTER: Duration = Duration::from_secs(120);

struct Entry {
    bytes: Bytes,
    at: Instant,
}

static TABLE: OnceLock<Mutex<HashMap<u64, Entry>>> = OnceLock::new();
/// How many entries are stored: the LSP writer looks inside frames only while this is not 0.
static STORED: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicU64 = AtomicU64::new(1);

/// How many results were stored so far (in this process).
pub fn stored_total() -> u64 {
    NEXT.load(Ordering::Relaxed) - 1
}

fn table() -> &'static Mutex<HashMap<u64, Entry>> {
    TABLE.get_or_init(Default::default)
}

/// Whether any result is waiting to be spliced (cheap; checked per LSP frame).
pub fn any_stored() -> bool {
    STORED.load(Ordering::Acquire) != 0
}

/// The per-process marker prefix, `mcp-sidecar/relayed/<32 random hex digits>/`.
pub fn marker_prefix() -> &'static str {
    static PREFIX: OnceLock<String> = OnceLock::new();
    PREFIX.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // Each RandomState is seeded from the OS's randomness.
        let word = || {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u32(std::process::id());
            h.finish()
        };
        format!("mcp-sidecar/relayed/{:016x}{:016x}/", word(), word())
    })
}

/// A small final result passed through as sent (`transport::pass_through`), wrapped under the
/// per-process marker prefix so that a result rmcp could not read (which it also hands on as
/// JSON) is never mistaken for one.
pub fn wrap_passed(result: Value) -> Value {
    Value::Object(std::iter::once((marker_prefix().to_string(), result)).collect())
}

/// The result inside [`wrap_passed`]; `None` for any other JSON.
pub fn unwrap_passed(wrapped: Value) -> Option<Value> {
    match wrapped {
        Value::Object(mut members) if members.len() == 1 => members.remove(marker_prefix()),
        _ => None,
    }
}

/// The string that stands for stored result `token` in an LSP reply.
pub fn marker(token: u64) -> String {
    // Not `format!`: its machinery cost more than the rest of storing a small result.
    let prefix = marker_prefix();
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(token);
    let mut marker = String::with_capacity(prefix.len() + digits.len());
    marker.push_str(prefix);
    marker.push_str(digits);
    marker
}

/// A quoted marker of this process found in a serialized message.
#[derive(Debug, PartialEq, Eq)]
pub struct Marked<'a> {
    /// Where the marker stands, its quotes included.
    pub quoted: std::ops::Range<usize>,
    pub token: u64,
    /// What follows the token inside the quotes: nothing in the editor's markers; ASCII letters
    /// a writer gives its own meaning (the gateway's: members to add).
    pub tail: &'a str,
}

/// The first quoted marker of this process in a serialized message. Text from a server cannot
/// hold one: it cannot know the nonce (and a quote inside a string is escaped, which the
/// writers check where the marker must stand).
pub fn marked(message: &[u8]) -> Option<Marked<'_>> {
    let needle = format!("\"{}", marker_prefix());
    let at = memchr::memmem::find(message, needle.as_bytes())?;
    let rest = &message[at + needle.len()..];
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let close = digits + rest[digits..].iter().position(|&b| b == b'"')?;
    let tail = std::str::from_utf8(&rest[digits..close]).ok()?;
    if digits == 0 || !tail.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    let token = std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()?;
    Some(Marked {
        quoted: at..at + needle.len() + close + 1,
        token,
        tail,
    })
}

/// The pieces a splicing writer (the LSP writer, the gateway's tunnel) accepted but did not
/// write yet, in order: the stored bytes go out as they are, without a copy.
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

/// Stores `bytes` (one JSON value, already validated) and returns its token.
pub fn store(bytes: Bytes) -> u64 {
    let token = NEXT.fetch_add(1, Ordering::Relaxed);
    let now = Instant::now();
    let mut table = table().lock();
    table.retain(|_, e| now.duration_since(e.at) < STALE_AFTER);
    table.insert(token, Entry { bytes, at: now });
    STORED.store(table.len(), Ordering::Release);
    token
}

/// Takes the stored result `token` (once).
pub fn take(token: u64) -> Option<Bytes> {
    let mut table = table().lock();
    let entry = table.remove(&token);
    STORED.store(table.len(), Ordering::Release);
    entry.map(|e| e.bytes)
}

/// Results at most this long are taken out by the writer of a reply whose `result` is their
/// marker ([`take_small`]) and written in one piece with it; longer ones are spliced by the
/// output writer without a copy.
pub const SMALL: usize = 64 * 1024;

/// The stored result a `result` that is exactly a marker of this process stands for, taken
/// (once) when it is at most [`SMALL`] bytes; `None` for any other string, or a longer result.
pub fn take_small(result: &str) -> Option<Bytes> {
    let digits = result.strip_prefix(marker_prefix())?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let token: u64 = digits.parse().ok()?;
    let mut table = table().lock();
    if table.get(&token)?.bytes.len() > SMALL {
        return None;
    }
    let entry = table.remove(&token);
    STORED.store(table.len(), Ordering::Release);
    entry.map(|e| e.bytes)
}

/// Whether the current task runs inside [`relaying`].
pub fn relaying_now() -> bool {
    RELAYING.try_with(|_| ()).is_ok()
}

/// The stored result `token`, left stored (for a caller that decides how to pass it on).
pub fn peek(token: u64) -> Option<Bytes> {
    table().lock().get(&token).map(|e| e.bytes.clone())
}

/// The stored result `token` parsed into a `Value` (for callers that need the JSON itself).
pub fn resolve(token: u64) -> Option<Value> {
    take(token).and_then(|bytes| serde_json::from_slice(&bytes).ok())
}

tokio::task_local! {
    static RELAYING: ();
    static KEEPING: ();
}

/// Runs `fut` with big results handed back as [`marker`]s, for a caller that writes them out
/// with the LSP writer's splice. (Not an `async fn`: that would hold `fut` twice over, once as
/// its argument and once inside the scope, and the call's future is some KiB.)
pub fn relaying<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    RELAYING.scope((), fut)
}

/// Runs `fut` with big results handed back as their stand-ins, the token still in `_meta`
/// ([`token_of`]), for a caller that decides for each what it becomes (the gateway, which
/// passes most through as a [`marker`] and parses the others with [`resolve`]).
pub fn keeping<F: Future>(fut: F) -> impl Future<Output = F::Output> {
    KEEPING.scope((), fut)
}

/// The token of a stand-in, taken out of its `_meta`; `None` for any other result.
pub fn token_of(result: &mut Value) -> Option<u64> {
    result
        .get_mut("_meta")
        .and_then(Value::as_object_mut)
        .and_then(|meta| meta.remove(token_meta()))
        .and_then(|t| t.as_u64())
}

/// What a final result becomes: unchanged when it is not a stand-in (or inside [`keeping`]);
/// else the marker (inside [`relaying`]) or the stored result parsed. `Err` when the stored
/// bytes are gone.
pub fn finish(mut result: Value) -> Result<Value, String> {
    if KEEPING.try_with(|_| ()).is_ok() {
        return Ok(result);
    }
    let Some(token) = token_of(&mut result) else {
        return Ok(result);
    };
    if relaying_now() {
        return Ok(Value::String(marker(token)));
    }
    resolve(token).ok_or_else(|| "the relayed result was no longer available".to_string())
}

#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    result: Members<'a>,
}

/// For one line that answers a relayed request: the stand-in line for rmcp, with the result's
/// bytes stored. `None` when the line is not such an answer or anything looks unusual (a lone
/// surrogate escape, a `_meta` that is not an object, keys with escapes, an `input_required`
/// round): the caller then parses it as any line, with the same errors as before.
///
/// `text` is the same line as text when the caller already knows it is UTF-8 (the transport
/// checks long lines as they come in); else the scan checks it. `is_relayed` says whether an id
/// (as its raw JSON) belongs to a pending relayed request.
pub fn stand_in(
    line: &Bytes,
    text: Option<&str>,
    is_relayed: impl FnOnce(&str) -> bool,
) -> Option<Vec<u8>> {
    stand_in_from(line, &outline(line, text)?, is_relayed)
}

/// Where the parts of an answer lie in `line`, read in one `serde_json` scan of the whole line:
/// its syntax, and the result's members each as raw JSON (UTF-8 checked, as a full parse does,
/// unless `text` says it is known already), building no tree. The transport has the same
/// outline from [`super::scan::Scan`] as the line came in, with no scan left to do.
pub fn outline(line: &Bytes, text: Option<&str>) -> Option<Outline> {
    // Only an object is a message: serde reads a struct from an array too, which took a batch
    // `[7, {...}]` for an answer to request 7 with the second member as its result.
    if line.iter().find(|&&b| !is_space(b)) != Some(&b'{') {
        return None;
    }
    // Where the result lies is found from pointers into `line`: a `text` that is not that line
    // finds no result there and the line goes the usual way.
    let head: Head = match text {
        Some(text) => serde_json::from_str(text).ok()?,
        None => serde_json::from_slice(line).ok()?,
    };
    let offset = |s: &str| {
        let at = (s.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
        (at + s.len() <= line.len()).then_some(at..at + s.len())
    };
    let members = head.result.0;
    let result = object_span(line, &members)?;
    if has_surrogate_escape(&line[result.clone()]) {
        return None;
    }
    Some(Outline {
        id: offset(head.id.get())?,
        members: members
            .iter()
            .map(|(key, value)| Some((offset(key)?, offset(value.get())?)))
            .collect::<Option<_>>()?,
        result,
    })
}

/// [`stand_in`] for a line whose parts were found already: `outline` must be of this very line
/// and say it is JSON whose strings are UTF-8 ([`outline`], or the transport's
/// [`super::scan::Scan`] over a line the codec checked).
pub(super) fn stand_in_from(
    line: &Bytes,
    outline: &Outline,
    is_relayed: impl FnOnce(&str) -> bool,
) -> Option<Vec<u8>> {
    // The outline's ranges lie on character boundaries of UTF-8 text (JSON's own punctuation).
    let part = |r: &std::ops::Range<usize>| std::str::from_utf8(line.get(r.clone())?).ok();
    let id = part(&outline.id)?;
    if !is_relayed(id) {
        return None;
    }
    let mut small = String::with_capacity(256);
    small.push('{');
    let mut meta = None;
    for (key, value) in &outline.members {
        let key = part(key)?;
        match key {
            "resultType" if part(value)? != r#""complete""# => return None,
            "_meta" => {
                meta = Some(
                    serde_json::from_str::<serde_json::Map<String, Value>>(part(value)?).ok()?,
                );
                continue;
            }
            _ => {}
        }
        small.push_str(&serde_json::to_string(key).ok()?);
        small.push(':');
        let raw = line.get(value.clone())?;
        // A big member is emptied, not looked at past its first byte (nor checked again).
        small.push_str(match raw.first() {
            Some(b'[') if raw.len() > BIG_MEMBER => "[]",
            Some(b'{') if raw.len() > BIG_MEMBER => "{}",
            Some(b'"') if raw.len() > BIG_MEMBER => "\"\"",
            _ => part(value)?,
        });
        small.push(',');
    }
    // The result's bytes are a slice of the line: stored without a copy.
    let token = store(line.slice(outline.result.clone()));
    let mut meta = meta.unwrap_or_default();
    meta.insert(token_meta().into(), token.into());
    small.push_str("\"_meta\":");
    small.push_str(&Value::Object(meta).to_string());
    small.push('}');
    let mut out = Vec::with_capacity(small.len() + 64);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(small.as_bytes());
    out.push(b'}');
    Some(out)
}

/// Where the object whose `members` were read from `line` lies in it: from the `{` before the
/// first key to the `}` after the last value. Keys and values borrow from the line (a key with
/// an escape cannot, and fails the scan), and only JSON whitespace may stand between them and
/// the braces; `None` for an object without members, which is no big result.
fn object_span(line: &[u8], members: &[(&str, &RawValue)]) -> Option<std::ops::Range<usize>> {
    let offset = |s: &str| {
        let at = (s.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
        (at + s.len() <= line.len()).then_some(at)
    };
    let (first, _) = members.first()?;
    let (_, last) = members.last()?;
    // The first key's opening quote, then back over whitespace to the brace.
    let quote = offset(first)?.checked_sub(1)?;
    let open = line[..quote].iter().rposition(|&b| !is_space(b))?;
    let end = offset(last.get())? + last.get().len();
    let close = end + line[end..].iter().position(|&b| !is_space(b))?;
    (line[quote] == b'"' && line[open] == b'{' && line[close] == b'}').then_some(open..close + 1)
}

/// A result's top-level members in order, values unread.
struct Members<'a>(Vec<(&'a str, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Members<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> serde::de::Visitor<'de> for Visit<'a> {
            type Value = Members<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<Members<'a>, M::Error> {
                let mut members = Vec::new();
                while let Some(entry) = map.next_entry::<&'de str, &'de RawValue>()? {
                    members.push(entry);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(Visit(std::marker::PhantomData))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(result: &str) -> Bytes {
        Bytes::from(format!(r#"{{"jsonrpc":"2.0","id":7,"result":{result}}}"#))
    }

    fn big_text() -> String {
        "x\\\"y ".repeat(RELAY_MIN_BYTES / 4)
    }

    #[test]
    fn a_batch_is_no_answer() {
        let result = format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
            big_text()
        );
        for batch in [format!("[7,{result}]"), format!(" [7, {result}]")] {
            assert_eq!(outline(&Bytes::from(batch.clone()), None), None);
            assert!(stand_in(&Bytes::from(batch), None, |_| true).is_none());
        }
        assert!(stand_in(&line(&result), None, |id| id == "7").is_some());
    }

    #[test]
    fn a_big_result_is_stored_as_sent_and_rmcp_gets_a_small_stand_in() {
        let result = format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}],"isError":true,"_meta":{{"k":1}}}}"#,
            big_text()
        );
        let l = line(&result);
        let small = stand_in(&l, None, |id| id == "7").unwrap();
        assert!(small.len() < 200, "{}", String::from_utf8_lossy(&small));
        let v: Value = serde_json::from_slice(&small).unwrap();
        assert_eq!(v["result"]["content"], serde_json::json!([]));
        assert_eq!(v["result"]["isError"], true);
        assert_eq!(v["result"]["_meta"]["k"], 1);
        let token = v["result"]["_meta"][token_meta()].as_u64().unwrap();
        assert_eq!(
            &take(token).unwrap()[..],
            result.as_bytes(),
            "byte for byte"
        );
        assert!(take(token).is_none(), "taken once");
    }

    #[test]
    fn unusual_lines_go_the_usual_way() {
        let text = big_text();
        let ok = format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#);
        assert!(
            stand_in(&line(&ok), None, |id| id == "8").is_none(),
            "not pending"
        );
        for result in [
            format!(r#"{{"resultType":"input_required","content":"{text}"}}"#),
            format!(r#"{{"content":"{text}\ud800"}}"#),
            format!(r#"{{"content":"{text}","_meta":3}}"#),
            format!(r#"{{"cont\u0065nt":"{text}"}}"#),
            format!(r#"{{"content":"{text}\x01"}}"#),
            format!(r#"["{text}"]"#),
        ] {
            assert!(
                stand_in(&line(&result), None, |_| true).is_none(),
                "{}",
                &result[..40]
            );
        }
        // Invalid JSON and invalid UTF-8 are refused by the scan.
        let mut bad = line(&ok).to_vec();
        bad.insert(40, 0xff);
        assert!(stand_in(&Bytes::from(bad), None, |_| true).is_none());
        let cut = line(&ok).slice(..1000);
        assert!(stand_in(&cut, None, |_| true).is_none());
    }

    #[test]
    fn the_result_is_found_in_the_line_with_its_whitespace() {
        let text = big_text();
        let result = format!(
            "{{ \"content\" :\n[{{\"type\":\"text\",\"text\":\"{text}\"}}] ,\t\"isError\": false\r\n}}"
        );
        let l = Bytes::from(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\": \n{result}  }}"
        ));
        let small = stand_in(&l, None, |_| true).unwrap();
        let v: Value = serde_json::from_slice(&small).unwrap();
        let token = v["result"]["_meta"][token_meta()].as_u64().unwrap();
        assert_eq!(&take(token).unwrap()[..], result.as_bytes());
        // Bytes that are not UTF-8 deep inside a member's value are found by the one scan.
        let mut bad = l.to_vec();
        let at = bad.len() / 2;
        bad[at] = 0xff;
        assert!(stand_in(&Bytes::from(bad), None, |_| true).is_none());
    }

    proptest::proptest! {
        /// Whatever the members and the whitespace between them, a line taken is one a full
        /// parse accepts, and what is stored is exactly the result as it stood in the line.
        #[test]
        fn what_is_stored_is_the_result_as_sent(
            members in proptest::collection::vec(("[a-z_]{1,8}", "\\PC{0,40}"), 1..5),
            spaces in proptest::collection::vec(proptest::sample::select(vec!["", " ", "\n", "\t ", "\r\n"]), 16),
            flip in proptest::option::of((0usize..10_000, proptest::num::u8::ANY)),
        ) {
            let ws = |i: usize| spaces[i % spaces.len()];
            let mut result = format!("{{{}", ws(0));
            for (i, (key, value)) in members.iter().enumerate() {
                if i > 0 {
                    result.push_str(&format!("{},{}", ws(i + 1), ws(i + 2)));
                }
                let value = serde_json::to_string(value).unwrap();
                result.push_str(&format!("\"{key}\"{}:{}{value}", ws(i + 3), ws(i + 4)));
            }
            result.push_str(&format!("{}}}", ws(15)));
            let prefix = format!("{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{}", ws(5));
            let mut line = format!("{prefix}{result}{}}}", ws(6)).into_bytes();
            let mut stored = result.clone().into_bytes();
            if let Some((at, byte)) = flip {
                let at = at % result.len();
                line[prefix.len() + at] = byte;
                stored[at] = byte;
            }
            let line = Bytes::from(line);
            let taken = stand_in(&line, None, |_| true);
            // The same when the caller knows the line is text (the transport checks long lines
            // as they come): taken or not alike, and the same bytes stored.
            let text = std::str::from_utf8(&line).ok();
            let taken_as_text = text.map(|t| stand_in(&line, Some(t), |_| true));
            if let Some(again) = &taken_as_text {
                proptest::prop_assert_eq!(again.is_some(), taken.is_some(), "the same with the text known");
            }
            for small in taken.iter().chain(taken_as_text.iter().flatten()) {
                proptest::prop_assert!(serde_json::from_slice::<Value>(&line).is_ok(), "taken, but a full parse refuses it");
                let v: Value = serde_json::from_slice(small).unwrap();
                let token = v["result"]["_meta"][token_meta()].as_u64().unwrap();
                proptest::prop_assert_eq!(&take(token).unwrap()[..], &stored[..]);
            }
            if taken.is_none() {
                proptest::prop_assert!(flip.is_some() || members.iter().any(|(k, _)| k == "_meta" || k == "resultType"), "refused a plain result");
            }
        }
    }

    #[test]
    fn a_text_that_is_not_the_line_finds_no_result_in_it() {
        let result = format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
            big_text()
        );
        let l = line(&result);
        let elsewhere = String::from_utf8(l.to_vec()).unwrap();
        assert!(stand_in(&l, Some(&elsewhere), |_| true).is_none());
        assert!(stand_in(&l, Some(std::str::from_utf8(&l).unwrap()), |_| true).is_some());
    }

    #[test]
    fn finish_hands_back_markers_only_while_relaying() {
        let result = format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
            big_text()
        );
        let small = stand_in(&line(&result), None, |_| true).unwrap();
        let v: Value = serde_json::from_slice(&small).unwrap();
        let resolved = finish(v["result"].clone()).unwrap();
        assert_eq!(resolved, serde_json::from_str::<Value>(&result).unwrap());
        let small = stand_in(&line(&result), None, |_| true).unwrap();
        let v: Value = serde_json::from_slice(&small).unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let marked = rt.block_on(relaying(async { finish(v["result"].clone()) }));
        let marked = marked.unwrap();
        let token: u64 = marked
            .as_str()
            .unwrap()
            .strip_prefix(marker_prefix())
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(&take(token).unwrap()[..], result.as_bytes());
        assert_eq!(
            finish(serde_json::json!({"a": 1})).unwrap(),
            serde_json::json!({"a": 1})
        );
        // Inside `keeping`, the stand-in itself, its token for the caller to take.
        let small = stand_in(&line(&result), None, |_| true).unwrap();
        let v: Value = serde_json::from_slice(&small).unwrap();
        let mut kept = rt
            .block_on(keeping(async { finish(v["result"].clone()) }))
            .unwrap();
        let token = token_of(&mut kept).unwrap();
        assert_eq!(kept["content"], serde_json::json!([]));
        assert!(token_of(&mut kept).is_none(), "taken out of _meta");
        assert_eq!(&take(token).unwrap()[..], result.as_bytes());
    }

    #[test]
    fn a_servers_own_meta_cannot_claim_a_stored_result() {
        let result = format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}]}}"#,
            big_text()
        );
        let small = stand_in(&line(&result), None, |_| true).unwrap();
        let v: Value = serde_json::from_slice(&small).unwrap();
        let token = v["result"]["_meta"][token_meta()].as_u64().unwrap();
        // Another server's small answer naming that token, under the key as it once was and
        // under a guess at the nonce's place.
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for key in [
            "dev.mcp-sidecar/relayed".to_string(),
            format!("dev.mcp-sidecar/relayed/{}/token", "0".repeat(32)),
        ] {
            let forged = serde_json::json!({"content": [], "_meta": {key.clone(): token}});
            let mut kept = forged.clone();
            assert!(token_of(&mut kept).is_none(), "{key}");
            let out = rt.block_on(relaying(async { finish(forged.clone()) }));
            assert_eq!(out.unwrap(), forged, "passed on as it is: {key}");
        }
        assert_eq!(&take(token).unwrap()[..], result.as_bytes(), "still stored");
    }

    #[test]
    fn markers_are_found_with_their_tail_and_only_as_written() {
        let marker = marker(42);
        let message = format!(r#"{{"id":1,"result":"{marker}cts"}}"#);
        let found = marked(message.as_bytes()).unwrap();
        assert_eq!((found.token, found.tail), (42, "cts"));
        assert_eq!(&message[found.quoted], format!("\"{marker}cts\""));
        for odd in [
            format!(r#"{{"result":"{marker}c1"}}"#),
            format!(r#"{{"result":"{marker}\"x"}}"#),
            format!(r#"{{"result":"{}"}}"#, marker_prefix()),
            format!(r#"{{"result":"{marker}"#),
            format!(
                r#"{{"result":"mcp-sidecar/relayed/{}/42"}}"#,
                "0".repeat(32)
            ),
        ] {
            assert!(marked(odd.as_bytes()).is_none(), "{odd}");
        }
    }

    #[test]
    fn the_marker_is_random_per_process_and_plain_ascii() {
        let p = marker_prefix();
        assert!(
            p.starts_with("mcp-sidecar/relayed/") && p.len() == 20 + 32 + 1,
            "{p}"
        );
        assert!(
            p.bytes()
                .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        );
    }
}
