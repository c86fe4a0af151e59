//! rmcp's HTTP errors put into words for the server's status, each with what it means for the
//! connection ([`Failure`]).
//!
//! Most of rmcp's errors are structured variants and are matched as such. Two are only text:
//! an error status or a body that is not JSON-RPC (`UnexpectedServerResponse`, a string), and
//! an SSE event over the size limit (a private error type inside `SseError::Body`). Their text
//! is read in one place, [`read_unexpected`] and [`is_event_too_large`]; the upstream request
//! for structured variants is docs/upstream/rmcp-structured-errors.md.

use rmcp::transport::auth::AuthError;
use rmcp::transport::streamable_http_client::{SseError, StreamableHttpError};
use serde_json::Value;

use super::{HttpError, Link};
use crate::net;

/// What rmcp's HTTP failure means for the connection.
pub(super) enum Failure {
    /// The connection is gone (or unusable): end it, let the supervisor restart the server.
    Lost(String),
    /// This one exchange failed; the connection stays.
    Exchange(String),
}

impl Failure {
    pub(super) fn text(&self) -> &str {
        match self {
            Failure::Lost(s) | Failure::Exchange(s) => s,
        }
    }
}

impl Link {
    pub(super) fn too_large(&self) -> String {
        format!(
            "the server sent a message larger than maxMessageBytes ({} bytes); the connection was closed",
            self.max_bytes
        )
    }

    /// Puts one of rmcp's HTTP errors into words, and says whether the connection survives it.
    pub(super) fn describe(&self, error: &HttpError) -> Failure {
        let url = &self.shown;
        match error {
            StreamableHttpError::Client(e) => self.describe_reqwest(e),
            StreamableHttpError::HttpStatus(status) => {
                let retry = status
                    .retry_after
                    .as_deref()
                    .map(|r| format!(" (Retry-After: {r})"))
                    .unwrap_or_default();
                Failure::Exchange(format!(
                    "{url} answered HTTP {}{retry}",
                    net::status_text(status.status)
                ))
            }
            StreamableHttpError::AuthRequired(auth) => Failure::Exchange(format!(
                "{url} still requires authorization after signing in (HTTP 401 Unauthorized; it asks for {})",
                auth.www_authenticate_header
            )),
            // The sign-in's own failure, already a sentence.
            StreamableHttpError::Auth(AuthError::AuthorizationFailed(reason)) => {
                Failure::Exchange(reason.clone())
            }
            StreamableHttpError::Auth(e) => {
                Failure::Exchange(format!("signing in to {url} failed: {e}"))
            }
            StreamableHttpError::InsufficientScope(scope) => Failure::Exchange(format!(
                "{url} refused the credentials (HTTP 403 Forbidden, insufficient scope; it asks for {})",
                scope.www_authenticate_header
            )),
            StreamableHttpError::UnexpectedServerResponse(text) => {
                Failure::Exchange(self.describe_response(text))
            }
            StreamableHttpError::UnexpectedContentType(content_type) => Failure::Exchange(format!(
                "{url} did not answer like an MCP server: it sent {} instead of JSON or an event stream (is this the server's MCP endpoint?)",
                content_type
                    .as_deref()
                    .map_or("a body without a content type".to_owned(), |ct| format!(
                        "\"{ct}\""
                    ))
            )),
            StreamableHttpError::ResponseBodyTooLarge { .. } => Failure::Lost(self.too_large()),
            StreamableHttpError::SessionExpired => Failure::Lost(format!(
                "{url} ended the session (HTTP 404) and a new one could not be opened"
            )),
            StreamableHttpError::SessionRecoveryTimeout => Failure::Lost(format!(
                "{url} ended the session and opening a new one timed out"
            )),
            StreamableHttpError::ReinitializationFailed(e) => Failure::Lost(format!(
                "{url} ended the session and refused a new one: {}",
                e.message
            )),
            StreamableHttpError::MissingSessionIdInResponse => Failure::Lost(format!(
                "{url} opened no session (its initialize answer has no Mcp-Session-Id)"
            )),
            StreamableHttpError::ReservedHeaderConflict(name) => Failure::Lost(format!(
                "\"headers\": \"{name}\" is set by the sidecar itself and cannot be configured"
            )),
            StreamableHttpError::TransportChannelClosed => {
                Failure::Lost(format!("the connection to {url} is closed"))
            }
            StreamableHttpError::Sse(e) => Failure::Lost(self.describe_sse(e)),
            StreamableHttpError::Io(e) => Failure::Lost(format!(
                "the connection to {url} broke: {}",
                net::io_words(e)
            )),
            StreamableHttpError::Deserialize(e) => Failure::Exchange(format!(
                "{url} sent an answer that is not MCP (JSON-RPC): {e}"
            )),
            StreamableHttpError::ControlRequestTimeout => Failure::Exchange(format!(
                "{url} did not take a reply or cancellation in time"
            )),
            other => Failure::Exchange(format!("the exchange with {url} failed: {other}")),
        }
    }

    pub(super) fn describe_reqwest(&self, e: &reqwest::Error) -> Failure {
        let url = &self.shown;
        let why = net::reqwest_words(e);
        if e.is_connect() || net::is_tls(e) {
            Failure::Lost(format!("could not connect to {url}: {why}"))
        } else if let Some(status) = e.status() {
            Failure::Exchange(format!(
                "{url} answered HTTP {}",
                net::status_text(status.as_u16())
            ))
        } else if e.is_redirect() {
            Failure::Exchange(format!("{url} redirected too many times: {why}"))
        } else if e.is_builder() {
            Failure::Lost(format!("cannot send a request to {url}: {why}"))
        } else {
            Failure::Lost(format!("the connection to {url} broke: {why}"))
        }
    }

    /// rmcp's "unexpected server response": an error status with its body, or a body that is
    /// not JSON-RPC.
    pub(super) fn describe_response(&self, text: &str) -> String {
        let url = &self.shown;
        match read_unexpected(text) {
            Unexpected::Status { status, code, body } => {
                let detail = body_detail(body)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                let hint = match code {
                    Some(300..=399) => {
                        "; the sidecar follows only same-origin 307/308 redirects, so configure the final URL"
                    }
                    Some(400 | 404 | 405) => "; is this the server's MCP endpoint?",
                    _ => "",
                };
                format!("{url} answered HTTP {status}{detail}{hint}")
            }
            Unexpected::NotJsonRpc { detail } => format!(
                "{url} did not answer like an MCP server: its JSON is not a JSON-RPC message ({})",
                snippet(detail)
            ),
            Unexpected::Other(text) => format!("{url} answered unexpectedly: {text}"),
        }
    }

    pub(super) fn describe_sse(&self, e: &SseError) -> String {
        if is_event_too_large(e) {
            return self.too_large();
        }
        let why = match e {
            SseError::Body(inner) => inner.to_string(),
            other => other.to_string(),
        };
        format!("the event stream from {} broke: {why}", self.shown)
    }
}

/// Whether a start-up failed on an HTTP 4xx status (then the URL may be an old HTTP+SSE
/// endpoint, which refuses POST).
pub(super) fn is_client_error_status(error: &HttpError) -> bool {
    matches!(
        error,
        StreamableHttpError::UnexpectedServerResponse(text)
            if matches!(read_unexpected(text), Unexpected::Status { code: Some(400..=499), .. })
    )
}

// ---------------------------------------------------------------------------------------------
// The only places that read rmcp's error *text*: rmcp 3.11 has no structured variant for these
// (docs/upstream/rmcp-structured-errors.md). Each match is anchored on the exact wording rmcp's
// reqwest client writes; anything else falls through to `Other` / false, never to a wrong kind.

/// rmcp's `UnexpectedServerResponse` text, read back.
#[derive(Debug, PartialEq)]
pub(super) enum Unexpected<'a> {
    /// `HTTP <status>: <body>`: an error status (3xx, 4xx) with the start of its body.
    Status {
        status: &'a str,
        code: Option<u16>,
        body: &'a str,
    },
    /// `could not parse JSON response as <type>: <serde error>: <body preview>`: the serde
    /// error's tail and the body.
    NotJsonRpc {
        detail: &'a str,
    },
    Other(&'a str),
}

pub(super) fn read_unexpected(text: &str) -> Unexpected<'_> {
    if let Some(rest) = text.strip_prefix("HTTP ") {
        let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
        let code = status
            .split_whitespace()
            .next()
            .and_then(|c| c.parse::<u16>().ok());
        return Unexpected::Status { status, code, body };
    }
    if let Some(rest) = text.strip_prefix("could not parse JSON response as ") {
        // "<type>: <serde error>[ at line L column C]: <body preview>"
        let rest = rest.split_once(": ").map_or(rest, |(_, r)| r);
        let detail = rest
            .find(" column ")
            .map(|i| &rest[i + " column ".len()..])
            .map(|r| r.trim_start_matches(|c: char| c.is_ascii_digit()))
            .and_then(|r| r.strip_prefix(": "))
            .or_else(|| rest.split_once(": ").map(|(_, body)| body))
            .unwrap_or(rest);
        return Unexpected::NotJsonRpc { detail };
    }
    Unexpected::Other(text)
}

/// rmcp's SSE size limit: its error type is private, so it is known by its message
/// ("SSE event exceeded the maximum size of N bytes") inside `SseError::Body`.
pub(super) fn is_event_too_large(e: &SseError) -> bool {
    matches!(e, SseError::Body(inner)
        if inner.to_string().starts_with("SSE event exceeded the maximum size"))
}

// ---------------------------------------------------------------------------------------------

/// A short, readable part of an error body: a JSON error's message, or plain text (not HTML).
fn body_detail(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() || body.starts_with('<') {
        return None;
    }
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        return net::json_error_message(&value).map(snippet);
    }
    Some(snippet(body))
}

/// At most 160 characters, whitespace runs made one space.
fn snippet(text: &str) -> String {
    net::snippet(&text.split_whitespace().collect::<Vec<_>>().join(" "), 160)
}
