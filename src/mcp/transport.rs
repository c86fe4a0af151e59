//! The stdio transport under rmcp: newline-delimited JSON-RPC with a size cap per message.
//! A line that is not JSON-RPC is logged (with the server's name) and skipped; a line over
//! `maxMessageBytes` closes the connection with a clear reason, so pending calls fail at once
//! instead of waiting for an answer that was thrown away.

use std::sync::Arc;

use futures::StreamExt;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::Mutex;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, FramedRead};

use super::process::Diagnostics;

pub struct StdioTransport {
    server: Arc<str>,
    writer: Arc<Mutex<Option<ChildStdin>>>,
    reader: FramedRead<ChildStdout, AnyDelimiterCodec>,
    max_bytes: usize,
    diag: Arc<Diagnostics>,
}

impl StdioTransport {
    pub fn new(
        server: &str,
        stdin: ChildStdin,
        stdout: ChildStdout,
        max_bytes: usize,
        diag: Arc<Diagnostics>,
    ) -> Self {
        let codec = AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), Vec::new(), max_bytes);
        Self {
            server: server.into(),
            writer: Arc::new(Mutex::new(Some(stdin))),
            reader: FramedRead::with_capacity(stdout, codec, 64 * 1024),
            max_bytes,
            diag,
        }
    }
}

/// Parses one line; `Err` carries a short description for the log.
pub fn parse_line(line: &[u8]) -> Result<Option<RxJsonRpcMessage<RoleClient>>, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    serde_json::from_slice(line).map(Some).map_err(|e| {
        let shown = String::from_utf8_lossy(&line[..line.len().min(160)]).into_owned();
        format!("{e}: {shown}")
    })
}

impl Transport<RoleClient> for StdioTransport {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let mut bytes = serde_json::to_vec(&item)?;
            bytes.push(b'\n');
            let mut guard = writer.lock().await;
            let stdin = guard.as_mut().ok_or_else(|| {
                std::io::Error::new(std::io::ErrorKind::NotConnected, "server stdin is closed")
            })?;
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.reader.next().await? {
                Ok(line) => match parse_line(&line) {
                    Ok(Some(message)) => return Some(message),
                    Ok(None) => {}
                    Err(problem) => tracing::warn!(
                        server = %self.server,
                        "ignored a line from the server that is not a JSON-RPC message ({problem})"
                    ),
                },
                Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                    let reason = format!(
                        "the server sent a message larger than maxMessageBytes ({} bytes); the connection was closed",
                        self.max_bytes
                    );
                    tracing::error!(server = %self.server, "{reason}");
                    self.diag.set_fatal(reason);
                    return None;
                }
                Err(AnyDelimiterCodecError::Io(e)) => {
                    tracing::warn!(server = %self.server, "reading from the server failed: {e}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        if let Some(mut stdin) = self.writer.lock().await.take() {
            let _ = stdin.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_line_skips_blank_and_reports_garbage() {
        assert!(parse_line(b"   \r").unwrap().is_none());
        let err = parse_line(b"Hello from stdout").unwrap_err();
        assert!(err.contains("Hello from stdout"));
        assert!(parse_line(b"\xff\xfe\x00").is_err());
        let ok = parse_line(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#).unwrap();
        assert!(ok.is_some());
        let bom = parse_line(
            b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r",
        );
        assert!(bom.unwrap().is_some());
    }

    proptest::proptest! {
        /// Whatever a server prints, one line never panics the parser.
        #[test]
        fn arbitrary_lines_never_panic(line in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = parse_line(&line);
        }

        /// Valid JSON-RPC responses are recognised whatever their id and result.
        #[test]
        fn responses_parse(id in 0i64..1_000_000, text in "[ -~]{0,40}") {
            let line = serde_json::to_vec(&serde_json::json!({
                "jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}
            })).unwrap();
            proptest::prop_assert!(parse_line(&line).unwrap().is_some());
        }
    }
}
