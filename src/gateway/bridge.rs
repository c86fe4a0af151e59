//! `mcp-sidecar gateway`: the stdio MCP server agents launch from their own configuration. It
//! finds the gateway of the sidecar serving this workspace ([`super::discovery`]), opens the
//! `/stdio` tunnel with the secret, and from then on copies bytes both ways: every MCP message
//! is the gateway's own (both protocol eras, cancellation, notifications), and nothing but those
//! reaches stdout. Problems go to stderr, and the exit status is 1.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::discovery::{self, Target};
use super::http::TUNNEL_PROTOCOL;

/// Longest response head accepted before the tunnel opens.
const MAX_HEAD: usize = 16 * 1024;

/// The tunnel's path for `server` (all servers when `None`), from the endpoint's URL.
fn tunnel_path(url: &url::Url, server: Option<&str>) -> String {
    let base = url.path().trim_end_matches('/');
    let base = base.strip_suffix("/mcp").unwrap_or(base);
    match server {
        None => format!("{base}/stdio"),
        Some(name) => {
            let encoded: String = name
                .bytes()
                .map(|b| {
                    if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                        (b as char).to_string()
                    } else {
                        format!("%{b:02X}")
                    }
                })
                .collect();
            format!("{base}/stdio/{encoded}")
        }
    }
}

/// Connects to the gateway and opens the tunnel; the stream then carries MCP.
pub async fn open(target: &Target, server: Option<&str>) -> Result<TcpStream, String> {
    // Only this machine's loopback interface: a name or address elsewhere is refused.
    let (url, address) = discovery::endpoint(&target.url)?;
    let host = url.host_str().unwrap_or_default().to_string();
    let mut stream = TcpStream::connect(address).await.map_err(|e| {
        format!(
            "no mcp-sidecar gateway answers at {} ({e}): the editor (or its sidecar) that \
             served it has exited; restart it, or open a new terminal from the editor",
            target.url
        )
    })?;
    let authority = match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.clone(),
    };
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {authority}\r\nAuthorization: Bearer {}\r\n\
         Connection: Upgrade\r\nUpgrade: {TUNNEL_PROTOCOL}\r\n\r\n",
        tunnel_path(&url, server),
        target.token
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| format!("the gateway at {} closed the connection: {e}", target.url))?;
    // Byte by byte up to the blank line, so nothing of the tunnel is read here.
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > MAX_HEAD {
            return Err(format!("the gateway at {} sent no HTTP answer", target.url));
        }
        let byte = stream.read_u8().await.map_err(|e| {
            format!(
                "the gateway at {} closed the connection before answering: {e}",
                target.url
            )
        })?;
        head.push(byte);
    }
    let head = String::from_utf8_lossy(&head);
    let status = head.split_whitespace().nth(1).unwrap_or_default();
    match status {
        "101" => Ok(stream),
        "401" | "403" => Err(format!(
            "the gateway at {} refused the secret (HTTP {status}): {ENV_TOKEN} or the discovery \
             file is from an earlier session of the sidecar; open a new terminal from the editor",
            target.url,
            ENV_TOKEN = discovery::ENV_TOKEN
        )),
        other => Err(format!(
            "the gateway at {} answered HTTP {other} to the tunnel request",
            target.url
        )),
    }
}

/// Runs the bridge on this process's stdin/stdout until either side ends.
pub async fn run(server: Option<String>) -> Result<(), String> {
    let cwd = std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?;
    let target = discovery::find(|name| std::env::var(name).ok(), &cwd)?;
    let stream = open(&target, server.as_deref()).await?;
    tracing::info!(url = %target.url, "gateway bridge: connected");
    let (mut from_gateway, mut to_gateway) = stream.into_split();
    let mut stdin = tokio::io::stdin();
    let mut stdout = tokio::io::stdout();
    let upstream = async {
        let copied = tokio::io::copy(&mut stdin, &mut to_gateway).await;
        // The agent closed stdin: the gateway ends the session and closes its side.
        let _ = to_gateway.shutdown().await;
        copied
    };
    let downstream = async {
        let copied = tokio::io::copy(&mut from_gateway, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    tokio::pin!(upstream, downstream);
    tokio::select! {
        _ = &mut upstream => {
            // Let the answers still on their way out reach the agent.
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), downstream).await;
            Ok(())
        }
        copied = &mut downstream => match copied {
            Ok(_) => Err(format!("the gateway at {} closed the session (the sidecar stopped)", target.url)),
            Err(e) => Err(format!("the connection to the gateway at {} broke: {e}", target.url)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tunnel_paths() {
        let url = url::Url::parse("http://127.0.0.1:5/mcp").unwrap();
        assert_eq!(tunnel_path(&url, None), "/stdio");
        assert_eq!(tunnel_path(&url, Some("my db")), "/stdio/my%20db");
    }
}
