//! The LSP side (the editor's face): the server the editor starts, the contract's methods as LSP
//! types, and the commands.

mod backend;
mod commands;
pub mod editor;
pub mod gate;
mod methods;
mod notify;
pub mod plain;
mod plain_face;
mod reconfigure;
mod serve;
mod stdio;

pub use backend::Backend;
pub use stdio::process_stdio;

/// The commands the editor's face answers: the names of its handler table, in its order.
pub fn command_names() -> impl Iterator<Item = &'static str> {
    commands::HANDLERS.iter().map(|handler| handler.name)
}

/// Plain LSP's own commands (for an editor without the plugin), in the order of their table.
pub fn plain_command_names() -> impl Iterator<Item = &'static str> {
    commands::PLAIN_HANDLERS.iter().map(|handler| handler.name)
}

use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::LspService;

/// Serves LSP on the given streams until the editor exits or the stream ends, then stops every
/// MCP server.
pub async fn serve<I, O>(input: I, output: O)
where
    I: AsyncRead + Unpin,
    O: AsyncWrite + Send + 'static,
{
    crate::guard::init_test_panics();
    let (service, socket) = LspService::build(Backend::new)
        .custom_method("window/workDoneProgress/cancel", Backend::progress_cancel)
        .finish();
    let backend = service.inner();
    let manager = backend.manager();
    let stop_gateway = backend.gateway_stopper();
    serve::run(input, Box::pin(output), service, socket).await;
    stop_gateway();
    manager.shutdown().await;
}

/// Serves LSP on this process's stdin/stdout (the binary: a panic is one log line, without its
/// message; see [`crate::guard`]).
pub async fn serve_stdio() {
    crate::guard::install_hook();
    let (input, output) = stdio::process_stdio();
    serve(input, output).await;
}
