//! The MRTR `requestState` this server hands out: a small JSON record naming the call, sealed with a
//! per-process keyed hash so a client cannot forge or move it to another call.
//!
//! Wire form: `hex(json) "." hex(tag)`, where `tag` is SipHash (std's `RandomState`, random keys per
//! process) over the hex body. The client must echo it byte for byte; it never needs to read it.

use std::{
    hash::{BuildHasher, RandomState},
    sync::atomic::{AtomicU64, Ordering},
    time::SystemTime,
};

use rmcp::{ErrorData, model::JsonObject};
use serde::{Deserialize, Serialize};

/// What one tool call carries from round to round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct CallState {
    /// The tool the state was issued for.
    tool: String,
    /// Keyed digest of the call's arguments, so a retry cannot change them.
    args: u64,
    /// Fresh per call; tools derive per-call values (e.g. a login session) from it.
    pub(super) nonce: String,
    /// How many `input_required` results this call has produced so far.
    pub(super) round: u32,
}

impl CallState {
    /// The state to send with the next `input_required` result.
    pub(super) fn next_round(&self) -> Self {
        Self {
            round: self.round + 1,
            ..self.clone()
        }
    }
}

/// Issues and verifies [`CallState`]s. One per server process.
pub(super) struct StateCodec {
    key: RandomState,
}

impl StateCodec {
    pub(super) fn new() -> Self {
        Self {
            key: RandomState::new(),
        }
    }

    /// A new state (round 0, fresh nonce) for a call of `tool` with `arguments`.
    pub(super) fn fresh(&self, tool: &str, arguments: Option<&JsonObject>) -> CallState {
        CallState {
            tool: tool.to_owned(),
            args: self.digest(arguments),
            nonce: random_hex(),
            round: 0,
        }
    }

    pub(super) fn seal(&self, state: &CallState) -> String {
        let json = serde_json::to_vec(state).expect("CallState always serializes");
        let body = hex_encode(&json);
        let tag = self.key.hash_one(&body);
        format!("{body}.{tag:016x}")
    }

    /// Opens an echoed `requestState` and checks it was issued for the same tool and arguments
    /// as `expected` (a fresh state for the current request).
    pub(super) fn open(&self, sealed: &str, expected: &CallState) -> Result<CallState, ErrorData> {
        let invalid =
            || ErrorData::invalid_params("requestState was not issued for this tool call", None);
        let (body, tag) = sealed.rsplit_once('.').ok_or_else(invalid)?;
        if format!("{:016x}", self.key.hash_one(body)) != tag {
            return Err(invalid());
        }
        let json = hex_decode(body).ok_or_else(invalid)?;
        let state: CallState = serde_json::from_slice(&json).map_err(|_| invalid())?;
        if state.tool != expected.tool || state.args != expected.args {
            return Err(invalid());
        }
        Ok(state)
    }

    fn digest(&self, arguments: Option<&JsonObject>) -> u64 {
        let mut arguments = serde_json::Value::Object(arguments.cloned().unwrap_or_default());
        // Key order must not matter (it is kept when serde_json has `preserve_order`).
        arguments.sort_all_objects();
        self.key.hash_one(arguments.to_string())
    }
}

/// 64 random bits as 16 hex digits (std only: a freshly keyed SipHash over a counter and the time).
pub(super) fn random_hex() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let count = COUNTER.fetch_add(1, Ordering::Relaxed);
    let bits = RandomState::new().hash_one((count, SystemTime::now()));
    format!("{bits:016x}")
}

fn hex_encode(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn hex_decode(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|at| u8::from_str_radix(text.get(at..at + 2)?, 16).ok())
        .collect()
}
