//! MCP Apps (`io.modelcontextprotocol/ui`): a server's interactive view, as the host sees it
//! without rmcp or LSP: what a tool's `_meta` says ([`meta`]), the CSP a view runs under
//! ([`csp`]), the open views ([`views`]) and what a view may ask ([`request`]). The faces open
//! views and carry their messages (`crate::views`, the editor's webview); every rule is here.
//! See `docs/apps.md`.

pub mod csp;
pub mod meta;
pub mod request;
pub mod views;

pub use meta::{EXTENSION, MIME_TYPE, Surface, Visibility};
pub use request::{AppHost, HostError};
pub use views::{View, Views};
