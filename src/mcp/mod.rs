//! The MCP side: one supervised connection per configured server, over rmcp. rmcp types stay
//! inside this module; the rest of the sidecar sees [`Manager`], [`Event`] and JSON values.
//! Roots, sampling and logging are deprecated by SEP-2577 but still part of the protocol until
//! at least 2027-07-28, so their rmcp types are used on purpose.
#![allow(deprecated)]

mod flood;
mod host;
mod reply;
pub mod requester;
mod servers;
mod session;
pub mod tasks;
mod wire;

pub use host::{CLIENT_NAME, Event, EventReceiver, LogLevel, Observed, ProgressFn, ProgressUpdate};
#[cfg(test)]
pub use reply::write_in_chunks;
pub use reply::{Caller, Pieces, Reply, Tasks, has_surrogate_escape, plain};
pub use servers::follow::interval as task_poll_interval;
pub use servers::manager::{Manager, TrustRequest};
pub use session::exchange::ToolArguments;
pub use wire::lines::{Line, answer_of, parse_line, split_batch};
pub use wire::process::widen_pipe;
pub use wire::scan;
