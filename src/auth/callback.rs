//! The loopback listener that receives the authorization server's redirect: `127.0.0.1`, a
//! random port (or the one an earlier registration used), one redirect taken, a small "you can
//! close this tab" page answered, a deadline. It hands over the redirect URL as it came; the
//! flow checks its `state` and `iss` (rmcp) before it trusts a `code`.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// The path of the redirect URI.
pub const CALLBACK_PATH: &str = "/callback";
/// The most of a request line and headers the listener reads.
const MAX_REQUEST: usize = 16 * 1024;

const DONE_PAGE: &str = "<!doctype html><meta charset=utf-8><title>Signed in</title>\
<p>mcp-sidecar received the sign-in. You can close this tab.</p>";
const NOT_FOUND_PAGE: &str = "<!doctype html><meta charset=utf-8><title>Not found</title>\
<p>This address only receives mcp-sidecar's sign-in redirect.</p>";

/// A bound listener waiting for one redirect.
pub struct Listener {
    listener: TcpListener,
    port: u16,
}

impl Listener {
    /// Binds `127.0.0.1` on `port` (`0`: a random one).
    pub async fn bind(port: u16) -> Result<Listener, String> {
        let listener = TcpListener::bind(("127.0.0.1", port))
            .await
            .map_err(|e| format!("could not listen on 127.0.0.1 for the sign-in redirect: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("could not listen for the sign-in redirect: {e}"))?
            .port();
        Ok(Listener { listener, port })
    }

    /// Binds the port of an earlier `redirect_uri` (a registered client's redirect URI must
    /// stay the same), or a random one.
    pub async fn bind_for(redirect_uri: Option<&str>) -> Result<Listener, String> {
        let port = redirect_uri
            .and_then(|u| url::Url::parse(u).ok())
            .filter(|u| u.host_str() == Some("127.0.0.1"))
            .and_then(|u| u.port())
            .unwrap_or(0);
        Listener::bind(port).await
    }

    /// `http://127.0.0.1:PORT/callback`.
    pub fn redirect_uri(&self) -> String {
        format!("http://127.0.0.1:{}{CALLBACK_PATH}", self.port)
    }

    /// Waits (up to `timeout`) for a request to the callback path and returns its full URL.
    /// Requests to other paths are answered `404` and do not count.
    pub async fn wait(self, timeout: Duration) -> Result<String, String> {
        tokio::time::timeout(timeout, self.accept_redirect())
            .await
            .map_err(|_| {
                format!(
                    "the sign-in did not come back within {} s",
                    timeout.as_secs()
                )
            })?
    }

    async fn accept_redirect(&self) -> Result<String, String> {
        loop {
            let (mut stream, _) = self
                .listener
                .accept()
                .await
                .map_err(|e| format!("the sign-in listener failed: {e}"))?;
            let Some(target) = read_target(&mut stream).await else {
                continue;
            };
            let is_callback = target.split('?').next() == Some(CALLBACK_PATH);
            let (status, page) = if is_callback {
                ("200 OK", DONE_PAGE)
            } else {
                ("404 Not Found", NOT_FOUND_PAGE)
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\ncache-control: no-store\r\nconnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
            if is_callback {
                return Ok(format!("http://127.0.0.1:{}{target}", self.port));
            }
        }
    }
}

/// The request target of a `GET` (`/callback?code=…`), read from the request head.
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST {
            return None;
        }
        head.extend_from_slice(&buf[..n]);
    }
    request_target(&head)
}

/// The target of a request head's first line, when it is a `GET` of an origin-form path.
fn request_target(head: &[u8]) -> Option<String> {
    let line = head.split(|b| *b == b'\r').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut parts = line.split(' ');
    let (method, target) = (parts.next()?, parts.next()?);
    (method == "GET" && target.starts_with('/')).then(|| target.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_target_is_read_from_a_get_line_only() {
        assert_eq!(
            request_target(b"GET /callback?code=a&state=b HTTP/1.1\r\nHost: x\r\n\r\n").as_deref(),
            Some("/callback?code=a&state=b")
        );
        assert_eq!(request_target(b"POST /callback HTTP/1.1\r\n\r\n"), None);
        assert_eq!(request_target(b"GET http://evil/ HTTP/1.1\r\n\r\n"), None);
    }

    #[tokio::test]
    async fn the_listener_hands_over_the_callback_and_ignores_other_paths() {
        let listener = Listener::bind(0).await.unwrap();
        let uri = listener.redirect_uri();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with(CALLBACK_PATH));
        let base = uri.trim_end_matches(CALLBACK_PATH).to_owned();
        let waiting = tokio::spawn(listener.wait(Duration::from_secs(30)));
        let client =
            crate::net::client_builder(&url::Url::parse(&uri).unwrap(), Duration::from_secs(5))
                .build()
                .unwrap();
        let other = client
            .get(format!("{base}/favicon.ico"))
            .send()
            .await
            .unwrap();
        assert_eq!(other.status(), 404);
        let page = client
            .get(format!("{uri}?code=c&state=s&iss=https%3A%2F%2Fa"))
            .send()
            .await
            .unwrap();
        assert_eq!(page.status(), 200);
        assert!(page.text().await.unwrap().contains("close this tab"));
        assert_eq!(
            waiting.await.unwrap().unwrap(),
            format!("{uri}?code=c&state=s&iss=https%3A%2F%2Fa")
        );
    }

    #[tokio::test]
    async fn the_listener_gives_up_at_its_deadline() {
        let listener = Listener::bind(0).await.unwrap();
        let err = listener.wait(Duration::from_millis(50)).await.unwrap_err();
        assert!(err.contains("did not come back"), "{err}");
    }

    #[tokio::test]
    async fn an_earlier_redirect_uri_keeps_its_port() {
        let first = Listener::bind(0).await.unwrap();
        let uri = first.redirect_uri();
        drop(first);
        let again = Listener::bind_for(Some(&uri)).await.unwrap();
        assert_eq!(again.redirect_uri(), uri);
    }
}
