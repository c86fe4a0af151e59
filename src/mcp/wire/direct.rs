//! `tools/call`, `resources/read` and `prompts/get` on a stdio session, past rmcp's peer.
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
//! - the id registered before the line is written, so the answer finds its call however soon;
//! - the answer handed over in the transport, before rmcp would see it; progress is routed there
//!   already ([`Diagnostics::deliver_progress`](crate::mcp::wire::process::Diagnostics));
//! - the pending calls failed at once when the transport ends ([`Direct::close`]);
//! - `notifications/cancelled` when the caller gives up ([`Direct::cancel`]).
//!
//! Both eras: a 2026-07-28 server sends no requests of its own (SEP-2322), so nothing needs
//! rmcp to see the call pending; the request carries the `_meta` rmcp would give it.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bytes::Bytes;
use rmcp::model::{ErrorData, RequestId};
use serde::Serialize;
use tokio::sync::oneshot;

use crate::mcp::wire::write::{Writer, finish_line, write_line};

/// The first id of a request made here: past rmcp's `u32` ids, below 2^53.
pub const FIRST_ID: i64 = 1 << 32;

/// What a server answered: the result as sent (one JSON value, its syntax and UTF-8 checked)
/// or its error.
pub type Answer = Result<Bytes, ErrorData>;

/// A call waiting for its answer.
type Waiting = oneshot::Sender<Answer>;

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

    /// Writes request `id` (from [`Direct::next_id`]); the answer to come. `None` when the
    /// transport has ended (nothing is written).
    pub fn send(
        self: &Arc<Self>,
        id: &RequestId,
        method: &str,
        params: &impl Serialize,
    ) -> Option<oneshot::Receiver<Answer>> {
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
        self.pending.lock().as_mut()?.insert(n, tx);
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

    /// Hands `answer` to the call waiting for `id`; false when none is (the answer is rmcp's).
    pub fn deliver(&self, id: &RequestId, answer: Answer) -> bool {
        let Some(tx) = self.take(id) else {
            return false;
        };
        let _ = tx.send(answer);
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
