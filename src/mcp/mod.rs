//! The MCP side: one supervised connection per configured server, over rmcp. rmcp types stay
//! inside this module; the rest of the sidecar sees [`Manager`], [`Event`] and JSON values.
//! Roots, sampling and logging are deprecated by SEP-2577 but still part of the protocol until
//! at least 2027-07-28, so their rmcp types are used on purpose.
#![allow(deprecated)]

mod connection;
mod direct;
mod flood;
mod handler;
mod host;
mod http;
mod listen;
mod listing;
mod manager;
mod process;
mod raw;
mod reply;
pub mod requester;
pub mod scan;
mod stdio;
mod supervisor;
mod transport;
mod write;

pub use connection::ToolArguments;
pub use host::{Event, EventReceiver, LogLevel, Observed, ProgressFn, ProgressUpdate};
pub use manager::{Manager, TrustRequest};
#[cfg(test)]
pub use reply::write_in_chunks;
pub use reply::{Caller, Pieces, Reply, ReplySink, SINK_MAX};
pub use transport::{Line, parse_line, split_batch};

/// Client name announced to servers.
pub const CLIENT_NAME: &str = "mcp-sidecar";

/// This process's stdin/stdout on the event loop: as non-blocking pipes when they are pipes (as
/// when a shell or a Rust editor starts the sidecar; rmcp implements this for MCP stdio servers),
/// polled directly when they are stream sockets (as Node, i.e. VS Code, and libuv, i.e. Neovim,
/// start a child: see `stdio.rs`), else tokio's blocking-thread stdio.
pub fn process_stdio() -> (
    Box<dyn tokio::io::AsyncRead + Unpin + Send>,
    Box<dyn tokio::io::AsyncWrite + Unpin + Send>,
) {
    if let Some((read, write)) = stdio::socket_stdio() {
        tracing::debug!("stdin/stdout are sockets: polled on the event loop");
        return (Box::new(read), Box::new(write));
    }
    // An editor that gives the sidecar pipes reads its replies through 64 KiB turns otherwise.
    process::widen_pipe(1);
    let (read, write) = rmcp::transport::stdio_pipes();
    (Box::new(read), Box::new(write))
}
