//! Raw LSP over a duplex, for what [`super::TestEditor`] never sends: broken frames, ids of every
//! kind, messages as exact text.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};

use super::isolate_user_config;

/// The editor's side of a sidecar served in-process. Each reply is read as it comes (the next
/// frame on the stream).
pub struct RawEditor {
    write: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    read: tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
}

impl RawEditor {
    /// The sidecar served in-process, and the editor's side of it.
    pub fn serve() -> (RawEditor, tokio::task::JoinHandle<()>) {
        isolate_user_config();
        let (editor_side, sidecar_side) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(sidecar_side);
        let served = tokio::spawn(mcp_sidecar::lsp::serve(sr, sw));
        let (er, ew) = tokio::io::split(editor_side);
        let editor = RawEditor {
            write: ew,
            read: tokio::io::BufReader::new(er),
        };
        (editor, served)
    }

    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.write.write_all(bytes).await.unwrap();
    }

    /// One message whose body is `text` exactly (for what `serde_json` would not write: a
    /// member named twice, an escaped slash).
    pub async fn send_text(&mut self, text: &str) {
        let frame = format!("Content-Length: {}\r\n\r\n{text}", text.len());
        self.send_bytes(frame.as_bytes()).await;
    }

    pub async fn send(&mut self, message: Value) {
        self.send_text(&message.to_string()).await;
    }

    /// The next message that is not a notification or a request to the editor.
    pub async fn reply(&mut self) -> Value {
        self.until(|m| m.get("method").is_none()).await
    }

    /// The next message `pick` takes, replies and notifications alike.
    pub async fn until(&mut self, pick: impl Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.next().await.expect("the sidecar closed its output");
            if pick(&message) {
                return message;
            }
        }
    }

    /// The next message, or `None` when the sidecar's output ended.
    async fn next(&mut self) -> Option<Value> {
        let mut length = None;
        loop {
            let mut line = String::new();
            if self.read.read_line(&mut line).await.unwrap() == 0 {
                return None;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(value) = line.strip_prefix("Content-Length: ") {
                length = Some(value.parse::<usize>().unwrap());
            }
        }
        let mut body = vec![0; length.expect("a Content-Length")];
        self.read.read_exact(&mut body).await.unwrap();
        Some(serde_json::from_slice(&body).unwrap())
    }

    /// Sends `exit` and returns every message the sidecar wrote after those read so far, once
    /// its serve loop has returned and its output ended.
    pub async fn exit(mut self, served: tokio::task::JoinHandle<()>) -> Vec<Value> {
        self.send(serde_json::json!({"jsonrpc": "2.0", "method": "exit"}))
            .await;
        tokio::time::timeout(Duration::from_secs(20), served)
            .await
            .expect("serve returns after exit")
            .unwrap();
        let mut rest = Vec::new();
        while let Some(message) = self.next().await {
            rest.push(message);
        }
        rest
    }
}

/// `reply` is the error `code` to request `id`.
pub fn assert_error(reply: &Value, id: Value, code: i64) {
    assert_eq!(
        (&reply["id"], &reply["error"]["code"]),
        (&id, &serde_json::json!(code)),
        "{reply}"
    );
}
