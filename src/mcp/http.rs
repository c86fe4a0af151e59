//! Streamable HTTP servers, over rmcp's client transport (`StreamableHttpClientTransport`), in
//! both shapes: legacy sessions (`initialize`, `Mcp-Session-Id`, SSE on POSTs and on a GET
//! stream, replies to server requests POSTed back) and the 2026-07-28 POST-only shape
//! (`server/discover`, `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name` on every POST). rmcp
//! picks the shape from the handshake the shared lifecycle runs; this module adds what the
//! sidecar needs around it:
//!
//! - every incoming message goes through the same raw handling as a stdio line
//!   ([`parse_line`] / [`stash_schemas`]): SSE `data` is rewritten before rmcp parses it (forms'
//!   schemas and sampling params stay raw; a request the sidecar cannot read is refused instead
//!   of being dropped); a plain JSON body arrives typed and is re-serialized, stashed and parsed
//!   again when it holds an `elicitation/create` or `sampling/createMessage`;
//! - failures become sentences for the server's status ("could not connect to URL: connection
//!   refused", "URL answered HTTP 404 Not Found; …"), recorded in [`Diagnostics`] so the shared
//!   start-up and `serverGone` paths show them;
//! - a lost connection (refused, reset, TLS, a stream cut before its answer, a session the server
//!   forgot, a message over `maxMessageBytes`) ends the transport, so the calls in flight fail
//!   at once and the supervisor restarts the server with its backoff, as for a stdio exit; an
//!   HTTP error status on one exchange fails only that request;
//! - the first request of a legacy session waits (up to 2 s) for the session's GET stream, where
//!   servers send requests that are not tied to a call (they drop them while it is not open).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage, ServerRequest, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::common::client_side_sse::{BoxedSseResponse, ExponentialBackoff};
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::process::Diagnostics;
use super::raw::stash_schemas;
use super::transport::{Line, parse_line};

type HttpError = StreamableHttpError<reqwest::Error>;

/// Headers the transport sets itself; a definition's `headers` may not override them.
const OWN_HEADERS: &[&str] = &[
    "accept",
    "content-type",
    "content-length",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
    "last-event-id",
];
/// Room for the SSE framing (`event:`, `id:`, `data:` prefixes) around one message.
const SSE_FRAMING_SLACK: usize = 4096;
/// How long the first request of a legacy session waits for the session's GET stream to open
/// (servers send requests unrelated to a call there, and drop them while it is not open).
const STREAM_SETTLE: Duration = Duration::from_secs(2);
/// How long the "is this an old HTTP+SSE server?" look may take after a failed start.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// The error the sidecar's HTTP transport reports to rmcp: already a sentence for people.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct LinkError(String);

/// A Streamable HTTP connection to one server, ready for the shared handshake.
pub struct HttpTransport {
    inner: StreamableHttpClientTransport<Client>,
    link: Arc<Link>,
    injected: mpsc::UnboundedReceiver<ServerJsonRpcMessage>,
    outbound: mpsc::UnboundedReceiver<ClientJsonRpcMessage>,
}

/// What the transport, its HTTP client and their streams share.
struct Link {
    server: Arc<str>,
    /// The URL as messages show it (no credentials, no query).
    shown: String,
    diag: Arc<Diagnostics>,
    max_bytes: usize,
    /// Cancelled once the connection is gone; the transport then ends.
    gone: CancellationToken,
    /// The latest stream trouble, the reason shown if the connection turns out to be lost.
    trouble: Mutex<Option<String>>,
    /// The session whose GET stream opened, so a later refusal means the session was lost.
    streamed: Mutex<Option<Arc<str>>>,
    /// Set when `initialize` opened a session (rmcp then opens its GET stream).
    expect_stream: std::sync::atomic::AtomicBool,
    /// Set once the first GET stream attempt is over (opened, or refused).
    stream_settled: tokio::sync::watch::Sender<bool>,
    /// Answers made up for requests whose POST failed (they reach rmcp as responses).
    inject: mpsc::UnboundedSender<ServerJsonRpcMessage>,
    /// Replies the sidecar sends on its own (refusals of unreadable server requests).
    reply: mpsc::UnboundedSender<ClientJsonRpcMessage>,
    /// The same client without the MCP layer, for the legacy HTTP+SSE probe.
    http: reqwest::Client,
    url: url::Url,
    headers: HashMap<HeaderName, HeaderValue>,
}

/// The HTTP client under rmcp's worker: reqwest's implementation, with the sidecar's raw
/// message handling on every SSE event and JSON body, and an eye on the GET stream.
#[derive(Clone)]
struct Client {
    http: reqwest::Client,
    link: Arc<Link>,
}

/// Builds the transport for `url`; fails (as a sentence) only on a definition it cannot use.
pub fn transport(
    server: &str,
    url: &url::Url,
    headers: &BTreeMap<String, String>,
    timeout: Duration,
    max_message_bytes: usize,
    diag: Arc<Diagnostics>,
) -> Result<HttpTransport, String> {
    let headers = custom_headers(headers)?;
    // reqwest is built without a bundled crypto provider: use ring, once per process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .connect_timeout(timeout)
        .user_agent(concat!("mcp-sidecar/", env!("CARGO_PKG_VERSION")))
        // A response stream that is not read to its end would stall a reused connection.
        .pool_max_idle_per_host(0)
        .redirect(crate::net::same_origin_redirects());
    if crate::net::is_loopback(url) {
        // A server on this machine is never reached through a proxy.
        builder = builder.no_proxy();
    }
    let http = builder
        .build()
        .map_err(|e| format!("could not set up the HTTP client: {}", innermost(&e)))?;
    let (inject, injected) = mpsc::unbounded_channel();
    let (reply, outbound) = mpsc::unbounded_channel();
    let link = Arc::new(Link {
        server: server.into(),
        shown: shown_url(url),
        diag,
        max_bytes: max_message_bytes,
        gone: CancellationToken::new(),
        trouble: Mutex::default(),
        streamed: Mutex::default(),
        expect_stream: Default::default(),
        stream_settled: tokio::sync::watch::Sender::new(false),
        inject,
        reply,
        http: http.clone(),
        url: url.clone(),
        headers: headers.clone(),
    });
    let mut retry = ExponentialBackoff::default();
    retry.max_times = Some(3);
    retry.base_duration = Duration::from_millis(250);
    retry.max_delay = Some(Duration::from_secs(2));
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
        .custom_headers(headers)
        .max_json_response_size(max_message_bytes)
        .max_sse_event_size(max_message_bytes.saturating_add(SSE_FRAMING_SLACK))
        .reinit_on_expired_session(true);
    config.retry_config = Arc::new(retry);
    let client = Client {
        http,
        link: link.clone(),
    };
    Ok(HttpTransport {
        inner: StreamableHttpClientTransport::with_client(client, config),
        link,
        injected,
        outbound,
    })
}

/// The definition's `headers`, checked: valid names and values, none the transport sets.
fn custom_headers(
    headers: &BTreeMap<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, String> {
    let mut out = HashMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.trim().as_bytes())
            .map_err(|_| format!("\"headers\": \"{name}\" is not a valid HTTP header name"))?;
        let lower = header.as_str();
        if OWN_HEADERS.contains(&lower) || lower.starts_with("mcp-param-") {
            return Err(format!(
                "\"headers\": \"{name}\" is set by the sidecar itself and cannot be configured"
            ));
        }
        let mut value = HeaderValue::from_str(value.trim()).map_err(|_| {
            format!("\"headers\": the value of \"{name}\" cannot be sent in an HTTP header")
        })?;
        if matches!(lower, "authorization" | "proxy-authorization" | "cookie")
            || lower.contains("token")
            || lower.contains("key")
        {
            value.set_sensitive(true);
        }
        out.insert(header, value);
    }
    Ok(out)
}

/// The URL for messages: without user name, password or query (they may hold credentials).
fn shown_url(url: &url::Url) -> String {
    let mut shown = url.clone();
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    let had_query = shown.query().is_some();
    shown.set_query(None);
    shown.set_fragment(None);
    let mut text = shown.to_string();
    if had_query {
        text.push_str("?…");
    }
    text
}

/// What rmcp's HTTP failure means for the connection.
enum Failure {
    /// The connection is gone (or unusable): end it, let the supervisor restart the server.
    Lost(String),
    /// This one exchange failed; the connection stays.
    Exchange(String),
}

impl Failure {
    fn text(&self) -> &str {
        match self {
            Failure::Lost(s) | Failure::Exchange(s) => s,
        }
    }
}

impl Link {
    /// The connection is gone: record why (first reason wins) and end the transport.
    fn lose(&self, reason: String) {
        if !self.gone.is_cancelled() {
            tracing::warn!(server = %self.server, "{reason}");
        }
        self.diag.set_fatal(reason);
        self.gone.cancel();
    }

    /// Before the first call of a legacy session: wait (briefly) for its GET stream, so what the
    /// server sends there in answer to the call is not lost.
    async fn settle(&self) {
        if !self.expect_stream.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let mut settled = self.stream_settled.subscribe();
        let _ = tokio::time::timeout(STREAM_SETTLE, settled.wait_for(|s| *s)).await;
    }

    fn note_trouble(&self, reason: String) {
        tracing::debug!(server = %self.server, "{reason}");
        *self.trouble.lock() = Some(reason);
    }

    fn trouble(&self) -> Option<String> {
        self.trouble.lock().clone()
    }

    fn too_large(&self) -> String {
        format!(
            "the server sent a message larger than maxMessageBytes ({} bytes); the connection was closed",
            self.max_bytes
        )
    }

    /// Puts one of rmcp's HTTP errors into words, and says whether the connection survives it.
    fn describe(&self, error: &HttpError) -> Failure {
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
                    status_text(status.status)
                ))
            }
            StreamableHttpError::AuthRequired(auth) => Failure::Exchange(format!(
                "{url} requires authorization (HTTP 401 Unauthorized; it asks for {}); put the credentials in the server's \"headers\" (OAuth sign-in is not supported)",
                auth.www_authenticate_header
            )),
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
            StreamableHttpError::Io(e) => {
                Failure::Lost(format!("the connection to {url} broke: {}", io_words(e)))
            }
            StreamableHttpError::Deserialize(e) => Failure::Exchange(format!(
                "{url} sent an answer that is not MCP (JSON-RPC): {e}"
            )),
            StreamableHttpError::ControlRequestTimeout => Failure::Exchange(format!(
                "{url} did not take a reply or cancellation in time"
            )),
            other => Failure::Exchange(format!("the exchange with {url} failed: {other}")),
        }
    }

    fn describe_reqwest(&self, e: &reqwest::Error) -> Failure {
        let url = &self.shown;
        let why = reqwest_words(e);
        if e.is_connect() || tls_error(e).is_some() {
            Failure::Lost(format!("could not connect to {url}: {why}"))
        } else if let Some(status) = e.status() {
            Failure::Exchange(format!(
                "{url} answered HTTP {}",
                status_text(status.as_u16())
            ))
        } else if e.is_redirect() {
            Failure::Exchange(format!("{url} redirected too many times: {why}"))
        } else if e.is_builder() {
            Failure::Lost(format!("cannot send a request to {url}: {why}"))
        } else {
            Failure::Lost(format!("the connection to {url} broke: {why}"))
        }
    }

    /// rmcp's "unexpected server response": `HTTP <status>: <body>` for an error status, or a
    /// body that is not JSON-RPC.
    fn describe_response(&self, text: &str) -> String {
        let url = &self.shown;
        if let Some(rest) = text.strip_prefix("HTTP ") {
            let (status, body) = rest.split_once(": ").unwrap_or((rest, ""));
            let code = status
                .split_whitespace()
                .next()
                .and_then(|c| c.parse::<u16>().ok());
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
            return format!("{url} answered HTTP {status}{detail}{hint}");
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
            return format!(
                "{url} did not answer like an MCP server: its JSON is not a JSON-RPC message ({})",
                snippet(detail)
            );
        }
        format!("{url} answered unexpectedly: {text}")
    }

    fn describe_sse(&self, e: &rmcp::transport::streamable_http_client::SseError) -> String {
        let text = e.to_string();
        if text.contains("exceeded the maximum size") {
            return self.too_large();
        }
        format!(
            "the event stream from {} broke: {}",
            self.shown,
            text.strip_prefix("body error: ").unwrap_or(&text)
        )
    }

    /// After a failed start: does the URL look like an old HTTP+SSE endpoint (GET opens an event
    /// stream)? Those speak the 2024-11-05 transport, which the sidecar does not.
    async fn probe_legacy_sse(&self) -> Option<String> {
        let mut request = self
            .http
            .get(self.url.clone())
            .header(reqwest::header::ACCEPT, "text/event-stream");
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        let response = tokio::time::timeout(PROBE_TIMEOUT, request.send())
            .await
            .ok()?
            .ok()?;
        let is_sse = response.status().is_success()
            && response
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|ct| ct.trim_start().starts_with("text/event-stream"));
        drop(response);
        is_sse.then(|| {
            format!(
                "{} looks like an old HTTP+SSE endpoint (the deprecated 2024-11-05 transport: GET opens an event stream, POST is refused); the sidecar supports Streamable HTTP only, so configure the server's Streamable HTTP endpoint (often …/mcp) if it has one",
                self.shown
            )
        })
    }

    /// One SSE event's data, handled as a stdio line would be.
    fn inbound(&self, data: &str) -> Inbound {
        if memchr::memmem::find(data.as_bytes(), b"notifications/progress").is_some()
            && let Ok(message) = serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(data)
            && self.diag.deliver_progress(&message)
        {
            return Inbound::Drop;
        }
        let mentions = memchr::memmem::find(data.as_bytes(), b"elicitation/create").is_some()
            || memchr::memmem::find(data.as_bytes(), b"sampling/createMessage").is_some();
        if !mentions && serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(data).is_ok() {
            return Inbound::Keep;
        }
        match parse_line(data.as_bytes()) {
            Line::Message(message) => match serde_json::to_string(&message) {
                Ok(text) => Inbound::Replace(text),
                Err(_) => Inbound::Keep,
            },
            Line::Skip => Inbound::Drop,
            Line::Garbage(problem) => {
                tracing::warn!(
                    server = %self.server,
                    "ignored an event from the server that is not a JSON-RPC message ({problem})"
                );
                Inbound::Drop
            }
            Line::Refuse(reply) => {
                tracing::warn!(server = %self.server, "refused a request the sidecar cannot read: {reply}");
                match serde_json::from_value::<ClientJsonRpcMessage>(reply) {
                    Ok(reply) => {
                        let _ = self.reply.send(reply);
                    }
                    Err(e) => {
                        tracing::warn!(server = %self.server, "could not even refuse it: {e}");
                    }
                }
                Inbound::Drop
            }
        }
    }

    /// Wraps an SSE stream from the server: each event's data handled by [`Link::inbound`],
    /// stream failures remembered (an oversized event ends the connection).
    fn watch(self: &Arc<Self>, stream: BoxedSseResponse) -> BoxedSseResponse {
        let link = self.clone();
        stream
            .map(move |item| match item {
                Ok(mut event) => {
                    if let Some(data) = event.data.take() {
                        event.data = match link.inbound(&data) {
                            Inbound::Keep => Some(data),
                            Inbound::Replace(text) => Some(text),
                            // Keep the event (its id and retry still count), without a message.
                            Inbound::Drop => None,
                        };
                    }
                    Ok(event)
                }
                Err(e) => {
                    let reason = link.describe_sse(&e);
                    if reason == link.too_large() {
                        link.lose(reason);
                    } else {
                        link.note_trouble(reason);
                    }
                    Err(e)
                }
            })
            .boxed()
    }

    /// A GET stream could not be opened: a connection failure, or a refusal of a session whose
    /// stream was open before, means the server is gone (or restarted and forgot the session).
    fn get_failed(&self, error: &HttpError, session: Option<&Arc<str>>) {
        let StreamableHttpError::Client(e) = error else {
            return;
        };
        let streamed_before = session.is_some_and(|s| self.streamed.lock().as_ref() == Some(s));
        match self.describe_reqwest(e) {
            Failure::Lost(_) if streamed_before => self.lose(format!(
                "lost the connection to {} (reconnecting its event stream failed: {})",
                self.shown,
                reqwest_words(e)
            )),
            Failure::Lost(reason) => self.lose(reason),
            Failure::Exchange(reason) if streamed_before => self.lose(format!(
                "{reason} when reopening the session's event stream: the server no longer knows the session (did it restart?)"
            )),
            Failure::Exchange(reason) => self.note_trouble(reason),
        }
    }

    /// Messages rmcp's worker makes up itself: a response stream cut before its answer means
    /// the connection is lost.
    fn check(&self, message: &ServerJsonRpcMessage) {
        if let JsonRpcMessage::Error(e) = message
            && e.error
                .data
                .as_ref()
                .and_then(|d| d.get("io.modelcontextprotocol/transportClosed"))
                .is_some()
        {
            let reason = self.trouble().unwrap_or_else(|| {
                format!(
                    "the connection to {} broke before the server answered",
                    self.shown
                )
            });
            self.lose(reason);
        }
    }
}

enum Inbound {
    Keep,
    Replace(String),
    Drop,
}

/// A JSON body arrives typed: forms and sampling requests are re-serialized, stashed raw and
/// parsed again so the sidecar sees them as it does on stdio.
fn stash_typed(message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
    let relevant = match &message {
        JsonRpcMessage::Request(r) => match &r.request {
            ServerRequest::ElicitRequest(_) | ServerRequest::CreateMessageRequest(_) => true,
            ServerRequest::CustomRequest(c) => {
                matches!(
                    c.method.as_str(),
                    "elicitation/create" | "sampling/createMessage"
                )
            }
            _ => false,
        },
        JsonRpcMessage::Response(r) => match &r.result {
            ServerResult::InputRequiredResult(_) => true,
            // A form rmcp's types refuse makes the whole result a custom one: stashing the raw
            // schema lets it parse as what it is.
            ServerResult::CustomResult(c) => {
                c.0.get("resultType").and_then(Value::as_str) == Some("input_required")
            }
            _ => false,
        },
        _ => false,
    };
    if !relevant {
        return message;
    }
    let Ok(mut value) = serde_json::to_value(&message) else {
        return message;
    };
    stash_schemas(&mut value);
    serde_json::from_value(value).unwrap_or(message)
}

/// `404 Not Found` for 404.
fn status_text(code: u16) -> String {
    reqwest::StatusCode::from_u16(code).map_or_else(|_| code.to_string(), |s| s.to_string())
}

/// A short, readable part of an error body: a JSON error's message, or plain text (not HTML).
fn body_detail(body: &str) -> Option<String> {
    let body = body.trim();
    if body.is_empty() || body.starts_with('<') {
        return None;
    }
    if let Ok(value) = serde_json::from_str::<Value>(body) {
        let message = value
            .pointer("/error/message")
            .or_else(|| value.get("error"))
            .or_else(|| value.get("message"))
            .and_then(Value::as_str)?;
        return Some(snippet(message));
    }
    Some(snippet(body))
}

fn snippet(text: &str) -> String {
    let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(160) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

fn io_kind(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    causes(e).find_map(|err| {
        err.downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
    })
}

/// What went wrong with a request, in a few words.
fn reqwest_words(e: &reqwest::Error) -> String {
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

fn io_words(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionReset => "the connection was reset".into(),
        std::io::ErrorKind::ConnectionAborted => "the connection was aborted".into(),
        std::io::ErrorKind::UnexpectedEof => "it ended early".into(),
        _ => e.to_string(),
    }
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

/// The deepest cause's message, which is the one that says what happened.
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    causes(e).last().unwrap_or(e).to_string()
}

/// `initialize`, `server/discover` and `notifications/initialized`: their failure is the
/// start-up's failure.
fn is_handshake(message: &ClientJsonRpcMessage) -> bool {
    match message {
        JsonRpcMessage::Request(r) => matches!(
            r.request,
            ClientRequest::InitializeRequest(_) | ClientRequest::DiscoverRequest(_)
        ),
        JsonRpcMessage::Notification(n) => matches!(
            n.notification,
            ClientNotification::InitializedNotification(_)
        ),
        _ => false,
    }
}

impl Transport<RoleClient> for HttpTransport {
    type Error = LinkError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let handshake = is_handshake(&item);
        let id: Option<RequestId> = match &item {
            JsonRpcMessage::Request(r) => Some(r.id.clone()),
            _ => None,
        };
        let sending = self.inner.send(item);
        let link = self.link.clone();
        async move {
            if id.is_some() && !handshake {
                link.settle().await;
            }
            let Err(error) = sending.await else {
                return Ok(());
            };
            let failure = link.describe(&error);
            if handshake {
                let mut reason = failure.text().to_owned();
                if matches!(
                    &error,
                    StreamableHttpError::UnexpectedServerResponse(t)
                        if t.starts_with("HTTP 4")
                ) && let Some(hint) = link.probe_legacy_sse().await
                {
                    reason = hint;
                }
                link.lose(reason.clone());
                return Err(LinkError(reason));
            }
            match (failure, id) {
                (Failure::Lost(reason), _) => {
                    link.lose(reason.clone());
                    Err(LinkError(reason))
                }
                // The request fails with the reason; the connection stays.
                (Failure::Exchange(reason), Some(id)) => {
                    tracing::warn!(server = %link.server, "{reason}");
                    let answer = ServerJsonRpcMessage::error(
                        ErrorData::internal_error(reason, None),
                        Some(id),
                    );
                    let _ = link.inject.send(answer);
                    Ok(())
                }
                (Failure::Exchange(reason), None) => {
                    tracing::warn!(server = %link.server, "{reason}");
                    Err(LinkError(reason))
                }
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            tokio::select! {
                biased;
                Some(message) = self.injected.recv() => return Some(message),
                Some(reply) = self.outbound.recv() => {
                    let sending = self.inner.send(reply);
                    let server = self.link.server.clone();
                    tokio::spawn(async move {
                        if let Err(e) = sending.await {
                            tracing::warn!(%server, "could not send a refusal: {e}");
                        }
                    });
                }
                _ = self.link.gone.cancelled() => return None,
                message = self.inner.receive() => {
                    let Some(message) = message else {
                        self.link.lose(format!("the connection to {} closed", self.link.shown));
                        return None;
                    };
                    self.link.check(&message);
                    return Some(message);
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner
            .close()
            .await
            .map_err(|e| LinkError(e.to_string()))
    }
}

impl Client {
    fn limits(&self) -> StreamableHttpResponseLimits {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_json_response_size = self.link.max_bytes;
        limits.max_sse_event_size = self.link.max_bytes.saturating_add(SSE_FRAMING_SLACK);
        limits
    }
}

impl StreamableHttpClient for Client {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            self.limits(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut limits = self.limits();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let initialize = matches!(
            &message,
            JsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::InitializeRequest(_))
        );
        let response = self
            .http
            .post_message_with_response_limits(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await?;
        if initialize
            && let StreamableHttpPostResponse::Sse(_, Some(_))
            | StreamableHttpPostResponse::Json(_, Some(_)) = &response
        {
            self.link
                .expect_stream
                .store(true, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(match response {
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(self.link.watch(stream), session)
            }
            StreamableHttpPostResponse::Json(message, session) => {
                StreamableHttpPostResponse::Json(stash_typed(message), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.get_stream_with_max_sse_event_size(
            uri,
            session_id,
            last_event_id,
            auth_header,
            custom_headers,
            self.limits().max_sse_event_size,
        )
        .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, HttpError> {
        let session = session_id.clone();
        let result = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        self.link.stream_settled.send_replace(true);
        match result {
            Ok(stream) => {
                if session.is_some() {
                    *self.link.streamed.lock() = session;
                }
                Ok(self.link.watch(stream))
            }
            Err(e) => {
                self.link.get_failed(&e, session.as_ref());
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::raw::{RAW_PARAMS_META, RAW_SCHEMA_META};

    fn link() -> Arc<Link> {
        let url = url::Url::parse("http://user:secret@127.0.0.1:1/mcp?token=x").unwrap();
        let t = transport(
            "t",
            &url,
            &BTreeMap::new(),
            Duration::from_secs(5),
            1 << 20,
            Arc::default(),
        )
        .unwrap();
        t.link.clone()
    }

    #[tokio::test]
    async fn urls_are_shown_without_credentials() {
        assert_eq!(link().shown, "http://127.0.0.1:1/mcp?…");
    }

    #[test]
    fn headers_are_checked() {
        let ok = BTreeMap::from([("Authorization".to_owned(), "Bearer x".to_owned())]);
        let map = custom_headers(&ok).unwrap();
        assert!(map[&HeaderName::from_static("authorization")].is_sensitive());
        for name in [
            "Accept",
            "Mcp-Session-Id",
            "mcp-param-x",
            "MCP-Protocol-Version",
        ] {
            let bad = BTreeMap::from([(name.to_owned(), "v".to_owned())]);
            let err = custom_headers(&bad).unwrap_err();
            assert!(err.contains("set by the sidecar"), "{name}: {err}");
        }
        let bad = BTreeMap::from([("bad name".to_owned(), "v".to_owned())]);
        assert!(custom_headers(&bad).unwrap_err().contains("not a valid"));
        let bad = BTreeMap::from([("X-A".to_owned(), "line\nbreak".to_owned())]);
        assert!(custom_headers(&bad).unwrap_err().contains("cannot be sent"));
    }

    #[tokio::test]
    async fn error_statuses_and_non_mcp_answers_are_sentences() {
        let link = link();
        let text = link.describe_response("HTTP 404 Not Found: <html>Cannot POST /</html>");
        assert_eq!(
            text,
            "http://127.0.0.1:1/mcp?… answered HTTP 404 Not Found; is this the server's MCP endpoint?"
        );
        let text = link.describe_response(
            r#"HTTP 500 Internal Server Error: {"error":{"code":1,"message":"boom"}}"#,
        );
        assert!(
            text.ends_with("answered HTTP 500 Internal Server Error (boom)"),
            "{text}"
        );
        let text = link.describe_response(
            "could not parse JSON response as ServerJsonRpcMessage: data did not match any variant at line 1 column 16: {\"status\": \"ok\"}",
        );
        assert!(
            text.ends_with("its JSON is not a JSON-RPC message ({\"status\": \"ok\"})"),
            "{text}"
        );
        let status = rmcp::transport::streamable_http_client::HttpStatusError::new(503, None);
        let Failure::Exchange(text) = link.describe(&StreamableHttpError::HttpStatus(status))
        else {
            panic!()
        };
        assert!(
            text.ends_with("answered HTTP 503 Service Unavailable"),
            "{text}"
        );
        assert!(matches!(
            link.describe(&StreamableHttpError::ResponseBodyTooLarge { max_size: 1 }),
            Failure::Lost(t) if t.contains("maxMessageBytes (1048576 bytes)")
        ));
    }

    #[tokio::test]
    async fn refused_connections_are_lost_connections() {
        let link = link(); // installs the crypto provider reqwest needs
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let error = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/mcp"))
            .send()
            .await
            .unwrap_err();
        let Failure::Lost(text) = link.describe(&StreamableHttpError::Client(error)) else {
            panic!()
        };
        assert_eq!(
            text,
            "could not connect to http://127.0.0.1:1/mcp?…: connection refused"
        );
    }

    #[tokio::test]
    async fn sse_data_is_handled_like_a_stdio_line() {
        let link = link();
        let plain = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert!(matches!(link.inbound(plain), Inbound::Keep));
        let form = r#"{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"object"}}}}}"#;
        let Inbound::Replace(text) = link.inbound(form) else {
            panic!()
        };
        let v: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<_> = v["params"]["_meta"][RAW_SCHEMA_META]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, ["z", "a"], "raw schema kept, in order: {v}");
        let sampling = r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"temperature":0.7}}"#;
        let Inbound::Replace(text) = link.inbound(sampling) else {
            panic!()
        };
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["params"]["_meta"][RAW_PARAMS_META]["temperature"], 0.7);
        assert!(matches!(link.inbound("not json"), Inbound::Drop));
        // A request the sidecar cannot read is refused (the refusal is queued), not dropped.
        let mut t = transport(
            "t",
            &url::Url::parse("http://127.0.0.1:1/mcp").unwrap(),
            &BTreeMap::new(),
            Duration::from_secs(5),
            1 << 20,
            Arc::default(),
        )
        .unwrap();
        assert!(matches!(
            t.link
                .inbound(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#),
            Inbound::Drop
        ));
        let refusal = serde_json::to_value(t.outbound.try_recv().unwrap()).unwrap();
        assert_eq!(refusal["id"], 5);
        assert_eq!(refusal["error"]["code"], -32602);
    }
}
