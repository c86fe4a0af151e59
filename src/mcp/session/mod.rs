//! One server's MCP session: the handshake in either era, the lists (paged within bounds), a
//! 2026-07-28 server's `subscriptions/listen` stream, the handler that answers the server's
//! questions, and the exchange that drives a call to its [`Reply`](crate::mcp::Reply).

pub mod connection;
pub mod exchange;
pub mod handler;
pub mod listen;
pub mod listing;
pub mod skills;
pub mod tasks;
