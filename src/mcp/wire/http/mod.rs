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
//!
//! The parts: this file builds the transport and runs it (what a failed send means for the
//! connection); `session` is the HTTP client under rmcp's worker (the SSE streams and JSON bodies
//! it hands over, the GET stream, the lost session); `failure` puts rmcp's errors into words.

mod auth;
mod failure;
mod session;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage, RequestId,
    ServerJsonRpcMessage,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::common::client_side_sse::ExponentialBackoff;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClientTransport, StreamableHttpClientTransportConfig, StreamableHttpError,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::mcp::wire::process::Diagnostics;
use failure::Failure;

#[cfg(doc)]
use crate::mcp::wire::raw::stash_schemas;
#[cfg(doc)]
use crate::mcp::wire::transport::parse_line;

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
    inner: StreamableHttpClientTransport<auth::Signed>,
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

pub use auth::{SignInSource, sign_out};

/// What the transport needs besides the URL and headers.
pub struct Options {
    pub timeout: Duration,
    pub max_message_bytes: usize,
    pub oauth: crate::config::OAuthSpec,
    /// The browser step of a sign-in, looked up when a server asks for one.
    pub sign_in: SignInSource,
    /// The server's sign-in state, shared with its slot.
    pub status: Arc<crate::auth::status::Status>,
    /// The server's human time: a person signing in stops its deadlines.
    pub clock: Arc<crate::mcp::host::HumanClock>,
}

/// Builds the transport for `url`; fails (as a sentence) only on a definition it cannot use.
pub fn transport(
    server: &str,
    url: &url::Url,
    headers: &BTreeMap<String, String>,
    options: Options,
    diag: Arc<Diagnostics>,
) -> Result<HttpTransport, String> {
    let Options {
        timeout,
        max_message_bytes,
        oauth,
        sign_in,
        status,
        clock,
    } = options;
    let headers = custom_headers(headers)?;
    let http = crate::net::client_builder(url, timeout)
        // A response stream that is not read to its end would stall a reused connection.
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|e| {
            format!(
                "could not set up the HTTP client: {}",
                crate::net::innermost(&e)
            )
        })?;
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
    let keep_grants = sign_in().is_none_or(|s| s.keeps_grants());
    let client = auth::Signed::new(client, oauth, sign_in, keep_grants, status, clock);
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
    let mut text = crate::net::without_credentials(url).to_string();
    if url.query().is_some() {
        text.push_str("?…");
    }
    text
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
                if failure::is_client_error_status(&error)
                    && let Some(hint) = link.probe_legacy_sse().await
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
