//! What both HTTP clients (the Streamable HTTP transport and the OpenAI-compatible sampling
//! provider) share: how their client is built (TLS provider, timeouts, same-origin redirects,
//! user agent, no proxy to this machine), how URLs are shown, and how network failures are put
//! into words. A bottom-layer module: it knows reqwest, hyper and rustls, nothing of the sidecar.

use std::time::Duration;

/// The client builder both HTTP clients start from (each adds what only it needs, then builds
/// once per transport or provider): the ring TLS provider installed, `connect_timeout`, the
/// sidecar's user agent, [`same_origin_redirects`], and no proxy when `url` names this machine.
pub fn client_builder(url: &url::Url, connect_timeout: Duration) -> reqwest::ClientBuilder {
    // reqwest is built without a bundled crypto provider: use ring, once per process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let builder = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .user_agent(concat!("mcp-sidecar/", env!("CARGO_PKG_VERSION")))
        .redirect(same_origin_redirects());
    if is_loopback(url) {
        // A server (or model) on this machine is never reached through a proxy.
        builder.no_proxy()
    } else {
        builder
    }
}

/// Follows only same-origin 307/308 redirects (they keep the method and the body), at most 5;
/// anything else comes back as the redirect response, for the caller to report with its status.
/// So a request, and the credentials it carries, never go to a host the settings do not name.
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if keeps_body && same_origin && attempt.previous().len() <= 5 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Whether the URL names this machine: `localhost`, `127.0.0.0/8` or `::1` (from its spelling;
/// nothing is resolved).
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The URL as messages may show it: without user name, password, query or fragment (they may
/// hold credentials).
pub fn without_credentials(url: &url::Url) -> url::Url {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_query(None);
    shown.set_fragment(None);
    shown
}

/// What went wrong with a request, in a few words: "connection refused", "the connection was
/// reset", "the TLS handshake failed (…)", "timed out", else the deepest cause's message.
pub fn reqwest_words(e: &reqwest::Error) -> String {
    if let Some(tls) = tls_error(e) {
        return format!("the TLS handshake failed ({tls})");
    }
    match io_kind(e) {
        Some(std::io::ErrorKind::ConnectionRefused) => "connection refused".to_owned(),
        Some(std::io::ErrorKind::ConnectionReset) => "the connection was reset".to_owned(),
        Some(std::io::ErrorKind::ConnectionAborted) => "the connection was aborted".to_owned(),
        Some(std::io::ErrorKind::TimedOut) => "timed out".to_owned(),
        _ if e.is_timeout() => "timed out".to_owned(),
        _ => innermost(e),
    }
}

/// Whether the request failed because something took too long (reqwest's own timeout, or the
/// operating system's).
pub fn is_timeout(e: &reqwest::Error) -> bool {
    e.is_timeout() || io_kind(e) == Some(std::io::ErrorKind::TimedOut)
}

/// Whether the connection closed before any answer came: a kept-alive connection the server
/// closed as the request went out on it (it ended early, or was reset). An idempotent request may
/// be sent again on a new connection (RFC 9112 §9.3.1).
pub fn closed_unanswered(e: &(dyn std::error::Error + 'static)) -> bool {
    causes(e).any(|err| {
        err.downcast_ref::<hyper::Error>()
            .is_some_and(hyper::Error::is_incomplete_message)
    }) || io_kind(e) == Some(std::io::ErrorKind::ConnectionReset)
}

/// Whether the failure happened in the TLS handshake.
pub fn is_tls(e: &reqwest::Error) -> bool {
    tls_error(e).is_some()
}

/// An I/O failure of an open connection, in a few words.
pub fn io_words(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionReset => "the connection was reset".into(),
        std::io::ErrorKind::ConnectionAborted => "the connection was aborted".into(),
        std::io::ErrorKind::UnexpectedEof => "it ended early".into(),
        _ => e.to_string(),
    }
}

/// `404 Not Found` for 404.
pub fn status_text(code: u16) -> String {
    reqwest::StatusCode::from_u16(code).map_or_else(|_| code.to_string(), |s| s.to_string())
}

/// What a JSON error body says: `{"error":{"message":..}}` (OpenAI, Ollama, JSON-RPC),
/// `{"error":".."}`, or `{"message":..}` (vLLM).
pub fn json_error_message(value: &serde_json::Value) -> Option<&str> {
    match value.get("error") {
        Some(serde_json::Value::String(s)) => Some(s.as_str()),
        Some(error) => error.get("message").and_then(serde_json::Value::as_str),
        None => value.get("message").and_then(serde_json::Value::as_str),
    }
}

/// The start of `text` (trimmed), at most `max_chars` characters, `…` where it was cut.
pub fn snippet(text: &str, max_chars: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// The deepest cause's message, which is the one that says what happened.
pub fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    causes(e).last().unwrap_or(e).to_string()
}

fn io_kind(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    causes(e).find_map(|err| {
        err.downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
    })
}

fn tls_error(e: &(dyn std::error::Error + 'static)) -> Option<String> {
    causes(e)
        .find_map(|err| err.downcast_ref::<rustls::Error>())
        .map(ToString::to_string)
}

/// An error and its causes, looking inside io::Errors too (their `source` skips the error they
/// wrap, which is where a TLS failure sits).
fn causes<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(e), |err| match err.downcast_ref::<std::io::Error>() {
        Some(io) => io
            .get_ref()
            .map(|inner| inner as &(dyn std::error::Error + 'static)),
        None => err.source(),
    })
}

/// A fresh secret: 32 random bytes from the system, as 64 hex digits.
pub fn secret() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `host` (without a port) names this machine's loopback interface.
pub fn loopback_name(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "localhost" | "[::1]" | "::1")
}

/// The host of a `Host` header value (`name`, `name:port`, `[v6]`, `[v6]:port`).
pub fn host_of(authority: &str) -> &str {
    if authority.starts_with('[') {
        return authority
            .find(']')
            .map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or(authority)
}

/// Equal in constant time for equal lengths (a secret's length is not secret).
pub fn same_secret(given: &[u8], secret: &[u8]) -> bool {
    given.len() == secret.len()
        && given
            .iter()
            .zip(secret)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_credentials_and_loopback_is_spelled() {
        let url = url::Url::parse("https://u:p@example.com:8443/v1?key=x#f").unwrap();
        assert_eq!(
            without_credentials(&url).as_str(),
            "https://example.com:8443/v1"
        );
        for (url, expected) in [
            ("http://localhost:1/", true),
            ("http://127.0.0.2/", true),
            ("http://[::1]/", true),
            ("http://example.com/", false),
            ("http://10.0.0.1/", false),
        ] {
            assert_eq!(
                is_loopback(&url::Url::parse(url).unwrap()),
                expected,
                "{url}"
            );
        }
    }

    #[test]
    fn error_bodies_and_snippets() {
        let v = serde_json::json!({"error": {"message": "bad key"}});
        assert_eq!(json_error_message(&v), Some("bad key"));
        let v = serde_json::json!({"error": "gone"});
        assert_eq!(json_error_message(&v), Some("gone"));
        let v = serde_json::json!({"message": "too long"});
        assert_eq!(json_error_message(&v), Some("too long"));
        let v = serde_json::json!({"error": {"code": 1}, "message": "not this"});
        assert_eq!(json_error_message(&v), None);
        assert_eq!(snippet("  abc  ", 2), "ab…");
        assert_eq!(snippet("abc", 3), "abc");
        assert_eq!(status_text(404), "404 Not Found");
        assert_eq!(status_text(599), "599 <unknown status code>");
    }
}
