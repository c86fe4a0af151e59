//! The MCP side: one supervised connection per configured server, over rmcp. rmcp types stay
//! inside this module; the rest of the sidecar sees [`Manager`], [`Event`] and JSON values.
//! Roots, sampling and logging are deprecated by SEP-2577 but still part of the protocol until
//! at least 2027-07-28, so their rmcp types are used on purpose.
#![allow(deprecated)]

mod connection;
mod flood;
mod handler;
mod host;
mod http;
mod manager;
mod process;
mod raw;
pub mod relay;
mod supervisor;
mod transport;

pub use host::{Event, EventReceiver, LogLevel, ProgressFn, ProgressUpdate};
pub use manager::{Manager, TrustRequest};
pub use transport::{Line, parse_line, split_batch};

/// Client name announced to servers.
pub const CLIENT_NAME: &str = "mcp-sidecar";

/// This process's stdin/stdout as non-blocking pipes when they are pipes (as when an editor starts
/// the sidecar), else tokio's blocking-thread stdio. rmcp already implements this for MCP stdio
/// servers; the LSP side uses it too, which saves a thread hand-off on every message.
pub fn process_stdio() -> (
    impl tokio::io::AsyncRead + Unpin + Send,
    impl tokio::io::AsyncWrite + Unpin + Send,
) {
    rmcp::transport::stdio_pipes()
}
