//! The floor of a relay on the sidecar's runtime: the bench binary, run with
//! `BENCH_ROLE=byte-relay`, copies bytes between its stdin/stdout and a stdio MCP server
//! (`BENCH_RELAY_COMMAND`, as for [`super::lsp_relay`]) on one current-thread tokio task, as
//! `socat` does with its poll loop: no framing, no parsing, nothing looked at. The event-loop
//! client (`benches/peers/lsp_client.mjs --relay`) speaks MCP through it beside socat, so the two
//! differ only in the event loop and the language: what any tokio process pays for a hop before
//! it does any work (docs/performance.md).

use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const ROLE: &str = "byte-relay";

pub fn serve() {
    let command = super::lsp_relay::command();
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap()
        .block_on(relay(command));
}

async fn relay(command: Vec<String>) {
    let mut child = super::lsp_relay::spawn(&command);
    let mut to_server = child.stdin.take().unwrap();
    let mut from_server = child.stdout.take().unwrap();
    let mut from_editor = super::lsp_relay::socket(0);
    let mut to_editor = super::lsp_relay::socket(1);
    // socat's `-b 1048576`, as the client gives it.
    let (mut up, mut down) = (vec![0; 1 << 20], vec![0; 1 << 20]);
    loop {
        tokio::select! {
            read = from_editor.read(&mut up) => match read.unwrap() {
                0 => return,
                n => to_server.write_all(&up[..n]).await.unwrap(),
            },
            read = from_server.read(&mut down) => match read.unwrap() {
                0 => return,
                n => to_editor.write_all(&down[..n]).await.unwrap(),
            },
        }
    }
}
