//! The HTTP client under rmcp's worker and what it hands over: every SSE event's data and every
//! JSON body handled as a stdio line would be, the session's GET stream watched (its first
//! attempt lets the first call go; a refusal after it was open means the session is lost), and
//! stream failures remembered as the reason shown if the connection turns out to be lost.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RxJsonRpcMessage;
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::failure::{Failure, is_event_too_large};
use super::{Client, HttpError, Link, PROBE_TIMEOUT, SSE_FRAMING_SLACK, STREAM_SETTLE};
use crate::mcp::scan;
use crate::mcp::wire::lines::{Line, parse_line, too_deep};
use crate::mcp::wire::raw;
use crate::net;

impl Link {
    /// The connection is gone: record why (first reason wins) and end the transport.
    pub(super) fn lose(&self, reason: String) {
        if !self.gone.is_cancelled() {
            tracing::warn!(server = %self.server, "{reason}");
        }
        self.diag.set_fatal(reason);
        self.gone.cancel();
    }

    /// Before the first call of a legacy session: wait (briefly) for its GET stream, so what the
    /// server sends there in answer to the call is not lost.
    pub(super) async fn settle(&self) {
        if !self.expect_stream.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let mut settled = self.stream_settled.subscribe();
        let _ = tokio::time::timeout(STREAM_SETTLE, settled.wait_for(|s| *s)).await;
    }

    pub(super) fn note_trouble(&self, reason: String) {
        tracing::debug!(server = %self.server, "{reason}");
        *self.trouble.lock() = Some(reason);
    }

    pub(super) fn trouble(&self) -> Option<String> {
        self.trouble.lock().clone()
    }

    /// After a failed start: does the URL look like an old HTTP+SSE endpoint (GET opens an event
    /// stream)? Those speak the 2024-11-05 transport, which the sidecar does not.
    pub(super) async fn probe_legacy_sse(&self) -> Option<String> {
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

    /// One SSE event's data, handled as a stdio line would be (one nested deeper than
    /// [`scan::LINE_DEPTH`] refused as there, before rmcp reads it).
    pub(super) fn inbound(&self, data: &str) -> Inbound {
        let line = if scan::nests_deeper(data.as_bytes(), scan::LINE_DEPTH) {
            let refused = too_deep(data.as_bytes());
            if let Line::Message(_) = &refused {
                tracing::warn!(server = %self.server, "refused an answer nested deeper than {} levels", scan::MAX_DEPTH);
            }
            refused
        } else if let Some(inbound) = self.as_it_is(data) {
            return inbound;
        } else {
            parse_line(data.as_bytes())
        };
        match line {
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

    /// What needs no rewriting: a progress notification (routed here), or a message rmcp reads
    /// as it is; `None` for the rest.
    fn as_it_is(&self, data: &str) -> Option<Inbound> {
        if memchr::memmem::find(data.as_bytes(), b"notifications/progress").is_some()
            && let Ok(message) = serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(data)
            && self.diag.deliver_progress(&message)
        {
            return Some(Inbound::Drop);
        }
        (!raw::mentions_kept(data.as_bytes())
            && serde_json::from_str::<RxJsonRpcMessage<RoleClient>>(data).is_ok())
        .then_some(Inbound::Keep)
    }

    /// Wraps an SSE stream from the server: each event's data handled by [`Link::inbound`],
    /// stream failures remembered (an oversized event ends the connection).
    pub(super) fn watch(self: &Arc<Self>, stream: BoxedSseResponse) -> BoxedSseResponse {
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
                    if is_event_too_large(&e) {
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
    pub(super) fn get_failed(&self, error: &HttpError, session: Option<&Arc<str>>) {
        let StreamableHttpError::Client(e) = error else {
            return;
        };
        let streamed_before = session.is_some_and(|s| self.streamed.lock().as_ref() == Some(s));
        match self.describe_reqwest(e) {
            Failure::Lost(_) if streamed_before => self.lose(format!(
                "lost the connection to {} (reconnecting its event stream failed: {})",
                self.shown,
                net::reqwest_words(e)
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
    pub(super) fn check(&self, message: &ServerJsonRpcMessage) {
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

pub(super) enum Inbound {
    Keep,
    Replace(String),
    Drop,
}

impl Client {
    pub(super) fn limits(&self) -> StreamableHttpResponseLimits {
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
                StreamableHttpPostResponse::Json(raw::stash_typed(message), session)
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
