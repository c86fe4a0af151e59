//! The floor of an LSP relay: the bench binary itself, run with `BENCH_ROLE=lsp-relay`, is the
//! least a process can do to serve `workspace/executeCommand mcp-sidecar.callTool` from an editor
//! by a stdio MCP server: one current-thread tokio task, the editor's frames and the server's
//! lines read with `serde_json` borrowing from the buffers, the tool's arguments copied into the
//! `tools/call` line as they came, the server's result copied into the reply as it came. Nothing
//! else: no gate, panic guard, timeout, cancellation, progress, judging of the result, big results
//! or second server. The event-loop client (`benches/peers/lsp_client.mjs --relay`) measures it
//! beside the sidecar and socat: socat is the floor of a process hop, this the floor of a hop that
//! speaks LSP on one side (docs/performance.md).
//!
//! Its server is `BENCH_RELAY_COMMAND` (a JSON array: the program and its arguments). Its stdin
//! and stdout must be stream sockets, as Node gives a child. Anything unexpected ends it.

use std::os::fd::FromRawFd;

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub const ROLE: &str = "lsp-relay";
pub const COMMAND_VAR: &str = "BENCH_RELAY_COMMAND";

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    method: Option<&'a str>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct Execute<'a> {
    #[serde(borrow)]
    arguments: (Call<'a>,),
}

#[derive(Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    tool: &'a str,
    #[serde(borrow)]
    arguments: &'a RawValue,
}

/// The id of the relay's own `initialize` to the server.
const INIT_ID: &str = "\"relay-init\"";

/// The server's command, from [`COMMAND_VAR`].
pub fn command() -> Vec<String> {
    std::env::var(COMMAND_VAR)
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .filter(|c: &Vec<String>| !c.is_empty())
        .unwrap_or_else(|| panic!("{COMMAND_VAR} must be a JSON array: the server's command"))
}

/// The server, on pipes.
pub fn spawn(command: &[String]) -> tokio::process::Child {
    tokio::process::Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

pub fn serve() {
    let command = command();
    tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
        .unwrap()
        .block_on(relay(command));
}

/// A stream socket the process was given as `fd`, on the event loop.
pub fn socket(fd: i32) -> tokio::net::UnixStream {
    // SAFETY: fd 0 and 1 are open for the life of the process; this process is their only user.
    let socket = unsafe { std::os::unix::net::UnixStream::from_raw_fd(fd) };
    socket.set_nonblocking(true).unwrap();
    tokio::net::UnixStream::from_std(socket).expect("stdin and stdout must be stream sockets")
}

fn frame(out: &mut Vec<u8>, body: &[u8]) {
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
    out.extend_from_slice(b"\r\n\r\n");
    out.extend_from_slice(body);
}

async fn relay(command: Vec<String>) {
    let mut child = spawn(&command);
    let mut to_server = child.stdin.take().unwrap();
    let mut from_server = child.stdout.take().unwrap();
    let mut from_editor = socket(0);
    let mut to_editor = socket(1);
    to_server
        .write_all(
            format!(
                r#"{{"jsonrpc":"2.0","id":{INIT_ID},"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"lsp-relay","version":"0"}}}}}}"#
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    to_server.write_all(b"\n").await.unwrap();
    let (mut editor_in, mut server_in) = (Vec::with_capacity(1 << 16), Vec::with_capacity(1 << 16));
    let (mut out, mut line) = (Vec::with_capacity(1 << 16), Vec::with_capacity(1 << 12));
    let (mut server_ready, mut editor_ready, mut announced) = (false, false, false);
    loop {
        tokio::select! {
            read = from_editor.read_buf(&mut editor_in) => {
                if read.unwrap() == 0 {
                    return;
                }
                let mut used = 0;
                while let Some(end) = memchr::memmem::find(&editor_in[used..], b"\r\n\r\n") {
                    let header = std::str::from_utf8(&editor_in[used..used + end]).unwrap();
                    let length: usize = header
                        .strip_prefix("Content-Length: ")
                        .and_then(|n| n.parse().ok())
                        .expect("a Content-Length header");
                    let start = used + end + 4;
                    if editor_in.len() < start + length {
                        break;
                    }
                    let message: Message = serde_json::from_slice(&editor_in[start..start + length]).unwrap();
                    let id = message.id.map_or("null", RawValue::get);
                    match message.method {
                        Some("workspace/executeCommand") => {
                            let execute: Execute = serde_json::from_str(message.params.unwrap().get()).unwrap();
                            let call = execute.arguments.0;
                            line.clear();
                            line.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
                            line.extend_from_slice(id.as_bytes());
                            line.extend_from_slice(br#","method":"tools/call","params":{"name":"#);
                            serde_json::to_writer(&mut line, call.tool).unwrap();
                            line.extend_from_slice(br#","arguments":"#);
                            line.extend_from_slice(call.arguments.get().as_bytes());
                            line.extend_from_slice(b"}}\n");
                            to_server.write_all(&line).await.unwrap();
                        }
                        Some("initialize") => frame(&mut out, format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"capabilities":{{}}}}}}"#).as_bytes()),
                        Some("initialized") => editor_ready = true,
                        Some("shutdown") => frame(&mut out, format!(r#"{{"jsonrpc":"2.0","id":{id},"result":null}}"#).as_bytes()),
                        Some("exit") => return,
                        _ => {}
                    }
                    used = start + length;
                }
                editor_in.drain(..used);
            }
            read = from_server.read_buf(&mut server_in) => {
                if read.unwrap() == 0 {
                    return;
                }
                let mut used = 0;
                while let Some(end) = memchr::memchr(b'\n', &server_in[used..]) {
                    let message: Message = serde_json::from_slice(&server_in[used..used + end]).unwrap();
                    let id = message.id.map_or("null", RawValue::get);
                    if id == INIT_ID {
                        to_server.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n").await.unwrap();
                        server_ready = true;
                    } else if let Some(result) = message.result {
                        let mut body = Vec::with_capacity(result.get().len() + 64);
                        body.extend_from_slice(br#"{"jsonrpc":"2.0","result":"#);
                        body.extend_from_slice(result.get().as_bytes());
                        body.extend_from_slice(br#","id":"#);
                        body.extend_from_slice(id.as_bytes());
                        body.push(b'}');
                        frame(&mut out, &body);
                    }
                    used += end + 1;
                }
                server_in.drain(..used);
            }
        }
        if server_ready && editor_ready && !announced {
            announced = true;
            frame(
                &mut out,
                br#"{"jsonrpc":"2.0","method":"mcp-sidecar/serverStatus","params":{"name":"demo","state":"running"}}"#,
            );
        }
        if !out.is_empty() {
            to_editor.write_all(&out).await.unwrap();
            out.clear();
        }
    }
}
