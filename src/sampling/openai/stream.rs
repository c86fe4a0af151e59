//! Streamed replies: server-sent events, framed by `sse-stream`, whose `data` is a
//! chat-completion chunk, ending with `data: [DONE]`.
//!
//! The byte side ([`framed`]) holds each piece of the body to the line limit, remembers the last
//! piece (to quote a line the framing refuses) and, at the body's end, adds the blank lines that
//! close an event the body left open: an unfinished `data: [DONE]` still ends the reply, any
//! other unfinished event is a reply cut short. The event side ([`read_events`]) adds the chunks
//! up into a [`Completion`].

use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt};
use parking_lot::Mutex;
use serde_json::Value;
use sse_stream::{Error as SseError, Sse};

use super::reply::{Completion, ToolCall, arguments_text, content_text, error_message};
use super::snippet;

/// What closes an event the body left open (given to [`framed`] as a piece of the body).
pub(super) const END_OF_BODY: &[u8] = b"\n\n";

/// Why the body could not be read; carried through `sse-stream` as its body error.
#[derive(Debug, thiserror::Error)]
pub(super) enum ReadError {
    /// Nothing came within the timeout.
    #[error("the endpoint went silent")]
    Silent,
    #[error(transparent)]
    Transport(reqwest::Error),
    /// A line longer than the limit.
    #[error("a line over the limit")]
    LineTooLong,
}

/// Why a streamed reply gave no completion.
#[derive(Debug)]
pub(super) enum StreamError {
    Read(ReadError),
    /// The reply is not a usable event stream (the reason, for "unusable reply").
    Unusable(String),
}

/// What the byte side tells the event side.
pub(super) struct Framing<D> {
    /// Set once the body has ended: an event after that is one the body left open.
    ended: AtomicBool,
    /// The last piece handed to the framing, and whether it started a line.
    last: Mutex<Option<(D, bool)>>,
}

impl<D> Default for Framing<D> {
    fn default() -> Self {
        Framing {
            ended: AtomicBool::new(false),
            last: Mutex::new(None),
        }
    }
}

/// The body for `sse-stream`: each piece checked against `max_line` (bytes since the last line
/// break) and remembered in `framing`; `end` (the bytes of [`END_OF_BODY`]) added after the last.
pub(super) fn framed<'f, S, D>(
    body: S,
    framing: &'f Framing<D>,
    max_line: usize,
    end: D,
) -> impl Stream<Item = Result<D, ReadError>> + 'f
where
    S: Stream<Item = Result<D, ReadError>> + 'f,
    D: AsRef<[u8]> + Clone + 'f,
{
    let is_break = |b: &u8| matches!(b, b'\n' | b'\r');
    let mut line = 0usize;
    let mut starts_line = true;
    body.map(move |piece| {
        let piece = piece?;
        let bytes = piece.as_ref();
        line = match bytes.iter().rposition(is_break) {
            Some(at) => bytes.len() - at - 1,
            None => line + bytes.len(),
        };
        if line > max_line {
            return Err(ReadError::LineTooLong);
        }
        *framing.last.lock() = Some((piece.clone(), starts_line));
        if let Some(last) = bytes.last() {
            starts_line = is_break(last);
        }
        Ok(piece)
    })
    .chain(futures::stream::once(async move {
        framing.ended.store(true, Ordering::SeqCst);
        Ok(end)
    }))
}

/// Reads the events until `data: [DONE]` (anything after it is ignored).
pub(super) async fn read_events<S, D>(
    events: S,
    framing: &Framing<D>,
) -> Result<Completion, StreamError>
where
    S: Stream<Item = Result<Sse, SseError>>,
    D: AsRef<[u8]>,
{
    let mut events = std::pin::pin!(events);
    let mut chunks = Chunks::default();
    while let Some(event) = events.next().await {
        let left_open = framing.ended.load(Ordering::SeqCst);
        match event {
            // The body ended inside this event: it counts only if it is `[DONE]`.
            Ok(event) if left_open => {
                if event.data.as_deref().map(str::trim) == Some("[DONE]") {
                    return Ok(chunks.completion);
                }
            }
            Ok(event) => {
                let done = chunks
                    .data(event.data.as_deref().unwrap_or_default())
                    .map_err(StreamError::Unusable)?;
                if done {
                    return Ok(chunks.completion);
                }
            }
            Err(SseError::Body(e)) => {
                return Err(match e.downcast::<ReadError>() {
                    Ok(e) => StreamError::Read(*e),
                    Err(e) => StreamError::Unusable(e.to_string()),
                });
            }
            // A line the body left unfinished: the reply was cut short.
            Err(_) if left_open => break,
            Err(e) => return Err(StreamError::Unusable(framing.describe(&e))),
        }
    }
    Err(StreamError::Unusable(
        "the event stream ended before `data: [DONE]`".into(),
    ))
}

impl<D: AsRef<[u8]>> Framing<D> {
    /// A framing error in words, quoting the line it is about.
    fn describe(&self, e: &SseError) -> String {
        let quote = |bad: &dyn Fn(&[u8]) -> bool| {
            let last = self.last.lock();
            last.as_ref()
                .and_then(|(piece, starts_line)| culprit(piece.as_ref(), *starts_line, bad))
                .map(|line| format!(": `{}`", snippet(&String::from_utf8_lossy(line))))
                .unwrap_or_default()
        };
        match e {
            SseError::InvalidLine => format!(
                "the event stream holds an unexpected line{}",
                quote(&unexpected_line)
            ),
            SseError::Utf8Parse(_) => format!(
                "the event stream holds a line that is not UTF-8{}",
                quote(&|line| std::str::from_utf8(line).is_err())
            ),
            other => format!("the event stream is malformed ({other})"),
        }
    }
}

/// The line of `piece` the framing refused: the first finished line `bad` picks, else the line
/// the piece began inside (its start came in an earlier piece).
fn culprit<'p>(
    piece: &'p [u8],
    starts_line: bool,
    bad: &dyn Fn(&[u8]) -> bool,
) -> Option<&'p [u8]> {
    let mut lines: Vec<&[u8]> = piece.split(|b| matches!(b, b'\n' | b'\r')).collect();
    lines.pop(); // not finished yet, so not read yet
    let begun_before = if starts_line {
        None
    } else {
        lines.first().copied()
    };
    let finished = lines.iter().skip(usize::from(!starts_line));
    finished.copied().find(|line| bad(line)).or(begun_before)
}

/// A line `sse-stream` refuses as invalid: no `:`, or a field other than `data`, `event`, `id`,
/// `retry` (or a comment). Only used to quote the line.
fn unexpected_line(line: &[u8]) -> bool {
    !line.is_empty()
        && match line.iter().position(|&b| b == b':') {
            None => true,
            Some(colon) => !matches!(&line[..colon], b"data" | b"event" | b"id" | b"retry" | b""),
        }
}

/// The chunks added up.
#[derive(Debug, Default)]
struct Chunks {
    completion: Completion,
    /// The stream's `index` of each entry of `completion.tool_calls`.
    call_indices: Vec<Option<u64>>,
}

impl Chunks {
    /// One event's data; true at `[DONE]`.
    fn data(&mut self, data: &str) -> Result<bool, String> {
        let data = data.trim();
        if data == "[DONE]" {
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "an event in the stream is not valid JSON ({e}): `{}`",
                snippet(data)
            )
        })?;
        self.apply(&chunk)?;
        Ok(false)
    }

    fn apply(&mut self, chunk: &Value) -> Result<(), String> {
        if chunk.get("error").is_some()
            && let Some(message) = error_message(chunk)
        {
            return Err(format!(
                "the endpoint reported an error in the stream: {message}"
            ));
        }
        if let Some(model) = chunk
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            self.completion.model = Some(model.to_owned());
        }
        let choices = match chunk.get("choices") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(choices)) => choices,
            Some(_) => {
                return Err(format!(
                    "a chunk's `choices` is not a list: `{}`",
                    snippet(&chunk.to_string())
                ));
            }
        };
        // Only the first choice is asked for (no `n`).
        for choice in choices
            .iter()
            .filter(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            self.completion
                .text
                .push_str(&content_text(delta.get("content")));
            if let Some(refusal) = delta.get("refusal").and_then(Value::as_str) {
                self.completion.refusal.push_str(refusal);
            }
            let calls = delta.get("tool_calls").and_then(Value::as_array);
            for call in calls.into_iter().flatten() {
                self.tool_call_delta(call);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.completion.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(())
    }

    /// Tool calls come in pieces keyed by `index`: the first has the id and name, the rest add
    /// to the arguments string.
    fn tool_call_delta(&mut self, call: &Value) {
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let index = call.get("index").and_then(Value::as_u64);
        let calls = &mut self.completion.tool_calls;
        let existing = match index {
            Some(index) => self.call_indices.iter().position(|&i| i == Some(index)),
            // No index (some servers): a known id, or a piece of the last call unless it has a
            // new id.
            None => id
                .and_then(|id| calls.iter().position(|c| c.id.as_deref() == Some(id)))
                .or_else(|| {
                    if id.is_none() {
                        calls.len().checked_sub(1)
                    } else {
                        None
                    }
                }),
        };
        let slot = match existing {
            Some(slot) => slot,
            None => {
                calls.push(ToolCall::default());
                self.call_indices.push(index);
                calls.len() - 1
            }
        };
        let entry = &mut calls[slot];
        if let Some(id) = id
            && entry.id.is_none()
        {
            entry.id = Some(id.to_owned());
        }
        let function = call.get("function").unwrap_or(&Value::Null);
        if let Some(name) = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            && entry.name.is_empty()
        {
            entry.name = name.to_owned();
        }
        entry
            .arguments
            .push_str(&arguments_text(function.get("arguments")));
    }
}
