//! mcp-sidecar: an LSP server that an editor starts, and an MCP client/host toward MCP servers,
//! making roots, elicitation and sampling native in the editor.

pub mod apps;
pub mod auth;
pub mod cli;
pub mod config;
pub mod conformance;
pub mod contract;
pub mod demo;
pub mod doctor;
pub mod elicitation;
pub mod gateway;
pub mod guard;
pub mod logging;
pub mod lsp;
pub mod mcp;
pub mod net;
pub mod paths;
pub mod roots;
pub mod sampling;
pub mod skills;
pub mod store;
#[cfg(test)]
pub mod testing;
pub mod ui;
pub mod uri_template;
pub mod views;
