//! The client: the endpoint checked and its HTTP client built once (from [`crate::net`]), one
//! POST per request within the timeout, and the wording of errors, which always name the
//! endpoint and never contain the API key.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};

use super::reply::{Completion, completion_from_body, error_message};
use super::request::chat_request;
use super::settings::OpenAiConfig;
use super::snippet;
use super::stream::{self, END_OF_BODY, Framing, ReadError, StreamError};
use crate::sampling::provider::{Provider, ProviderError};
use crate::sampling::types::{CreateMessageParams, CreateMessageResult};

/// The largest reply read; a bigger one is an error rather than an out-of-memory.
const MAX_REPLY_BYTES: usize = 32 * 1024 * 1024;
/// How much of an error body is read.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// An OpenAI-compatible chat-completions endpoint.
pub struct OpenAi {
    name: String,
    /// `{baseUrl}/chat/completions` as shown in errors: no user name, password or query.
    endpoint: String,
    pub(super) url: reqwest::Url,
    model: String,
    /// `Bearer <key>`, marked sensitive so that `Debug` hides it.
    authorization: Option<HeaderValue>,
    stream: bool,
    timeout: Duration,
    client: reqwest::Client,
}

impl OpenAi {
    /// Checks the configuration, reads the API key from its environment variable (when one is
    /// named) and sets up the HTTP client. Nothing is sent yet.
    pub fn new(config: OpenAiConfig) -> Result<OpenAi, ProviderError> {
        let base = config.base_url.trim();
        let url = config.endpoint_url().map_err(ProviderError)?;
        let shown = |url: &reqwest::Url| crate::net::without_credentials(url).to_string();
        let endpoint = shown(&url);
        let mut base_shown =
            reqwest::Url::parse(base).map_or_else(|_| base.to_owned(), |u| shown(&u));
        while base_shown.ends_with('/') {
            base_shown.pop();
        }

        let authorization = match config.api_key_env.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(var) => Some(read_api_key(var)?),
        };

        // Built once per provider; every request reuses it (and its connections).
        let client = crate::net::client_builder(&url, config.timeout)
            .build()
            .map_err(|e| {
                ProviderError(format!(
                    "could not set up the HTTP client for {endpoint}: {}",
                    crate::net::innermost(&e)
                ))
            })?;

        Ok(OpenAi {
            name: format!("openai ({base_shown})"),
            endpoint,
            url,
            model: config.model.trim().to_owned(),
            authorization,
            stream: config.stream,
            timeout: config.timeout,
            client,
        })
    }

    /// `{baseUrl}/chat/completions`, as errors show it.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Set when the API key would cross a network unencrypted: `http://` to a host that is not
    /// this machine.
    pub fn insecure_key_warning(&self) -> Option<String> {
        (self.authorization.is_some() && self.url.scheme() == "http" && !crate::net::is_loopback(&self.url))
            .then(|| {
                format!(
                    "sampling.openai sends its API key to {} over plain http://: anyone on the network path can read it. Use an https:// baseUrl.",
                    self.endpoint
                )
            })
    }

    async fn ask(
        &self,
        request: &CreateMessageParams,
        model: Option<&str>,
    ) -> Result<CreateMessageResult, ProviderError> {
        let model = match model.map(str::trim).filter(|m| !m.is_empty()) {
            Some(m) => m.to_owned(),
            None if !self.model.is_empty() => self.model.clone(),
            None => {
                return Err(ProviderError(format!(
                    "no model chosen for {}: set `model` in the OpenAI-compatible provider's settings",
                    self.endpoint
                )));
            }
        };
        let body = chat_request(request, &model, self.stream).map_err(|e| {
            ProviderError(format!(
                "cannot send this request to {}: {e}",
                self.endpoint
            ))
        })?;
        tracing::debug!(endpoint = %self.endpoint, %model, stream = self.stream, "asking an OpenAI-compatible endpoint");

        let accept = if self.stream {
            "text/event-stream"
        } else {
            "application/json"
        };
        let mut http = self
            .client
            .post(self.url.clone())
            .header(ACCEPT, accept)
            .json(&body);
        if let Some(authorization) = &self.authorization {
            http = http.header(AUTHORIZATION, authorization.clone());
        }
        let mut response = match tokio::time::timeout(self.timeout, http.send()).await {
            Err(_) => return Err(self.silent("did not answer")),
            Ok(Err(e)) => return Err(self.transport_error(&e)),
            Ok(Ok(response)) => response,
        };

        let status = response.status();
        if status.is_redirection() {
            // Not followed (see `net::same_origin_redirects`): the request and the key stay with this origin.
            let to = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|l| self.url.join(l).ok())
                .map_or_else(
                    || "elsewhere".to_owned(),
                    |u| u.origin().ascii_serialization(),
                );
            return Err(ProviderError(format!(
                "{} answered HTTP {status}, a redirect to {to}, which is not followed (only same-origin 307/308 redirects are)",
                self.endpoint
            )));
        }
        if !status.is_success() {
            let detail = match self
                .read_body(&mut response, MAX_ERROR_BODY_BYTES, true)
                .await
            {
                Ok(body) => error_detail(&body),
                Err(e) => format!("(its body could not be read: {e})"),
            };
            return Err(ProviderError(format!(
                "{} answered HTTP {status}: {detail}",
                self.endpoint
            )));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let sse = content_type.starts_with("text/event-stream")
            || (self.stream && !content_type.contains("json"));
        let completion = if sse {
            self.read_stream(&mut response).await?
        } else {
            let body = self
                .read_body(&mut response, MAX_REPLY_BYTES, false)
                .await?;
            completion_from_body(&body).map_err(|e| self.unusable(e))?
        };
        let result = completion
            .into_result(&model)
            .map_err(|e| self.unusable(e))?;
        tracing::debug!(endpoint = %self.endpoint, model = %result.model, stop_reason = ?result.stop_reason, "OpenAI-compatible endpoint answered");
        Ok(result)
    }

    /// Reads a whole body, each piece within the timeout. `truncate`: stop at `limit` instead of
    /// failing (error bodies are only quoted).
    async fn read_body(
        &self,
        response: &mut reqwest::Response,
        limit: usize,
        truncate: bool,
    ) -> Result<Vec<u8>, ProviderError> {
        let mut body = Vec::new();
        while self.read_chunk(response, &mut body).await? {
            if body.len() > limit {
                if truncate {
                    body.truncate(limit);
                    break;
                }
                return Err(ProviderError(format!(
                    "the reply from {} is larger than {} MiB",
                    self.endpoint,
                    limit / (1024 * 1024)
                )));
            }
        }
        Ok(body)
    }

    /// Reads an event stream (framed by `sse-stream`), each piece of it within the timeout.
    async fn read_stream(
        &self,
        response: &mut reqwest::Response,
    ) -> Result<Completion, ProviderError> {
        let timeout = self.timeout;
        let body = futures::stream::unfold(response, move |response| async move {
            let piece = match tokio::time::timeout(timeout, response.chunk()).await {
                Err(_) => Err(ReadError::Silent),
                Ok(Err(e)) => Err(ReadError::Transport(e)),
                Ok(Ok(None)) => return None,
                Ok(Ok(Some(bytes))) => Ok(bytes),
            };
            Some((piece, response))
        });
        let framing = Framing::default();
        let body = stream::framed(body, &framing, MAX_REPLY_BYTES, END_OF_BODY.into());
        let events = sse_stream::SseStream::from_bytes_stream(body);
        stream::read_events(events, &framing)
            .await
            .map_err(|e| match e {
                StreamError::Read(ReadError::Silent) => {
                    self.silent("stopped sending its reply: nothing came")
                }
                StreamError::Read(ReadError::Transport(e)) => self.transport_error(&e),
                StreamError::Read(ReadError::LineTooLong) => ProviderError(format!(
                    "the event stream from {} holds a line longer than {} MiB",
                    self.endpoint,
                    MAX_REPLY_BYTES / (1024 * 1024)
                )),
                StreamError::Unusable(why) => self.unusable(why),
            })
    }

    /// Appends the next piece of the body to `into`; false at its end.
    async fn read_chunk(
        &self,
        response: &mut reqwest::Response,
        into: &mut Vec<u8>,
    ) -> Result<bool, ProviderError> {
        match tokio::time::timeout(self.timeout, response.chunk()).await {
            Err(_) => Err(self.silent("stopped sending its reply: nothing came")),
            Ok(Err(e)) => Err(self.transport_error(&e)),
            Ok(Ok(None)) => Ok(false),
            Ok(Ok(Some(bytes))) => {
                into.extend_from_slice(&bytes);
                Ok(true)
            }
        }
    }

    fn silent(&self, what: &str) -> ProviderError {
        ProviderError(format!(
            "{} {what} within {}",
            self.endpoint,
            human_duration(self.timeout)
        ))
    }

    fn unusable(&self, why: String) -> ProviderError {
        ProviderError(format!("unusable reply from {}: {why}", self.endpoint))
    }

    fn transport_error(&self, e: &reqwest::Error) -> ProviderError {
        if crate::net::is_timeout(e) {
            return self.silent("did not answer");
        }
        let why = crate::net::reqwest_words(e);
        if e.is_connect() {
            ProviderError(format!("could not reach {}: {why}", self.endpoint))
        } else {
            ProviderError(format!("the exchange with {} failed: {why}", self.endpoint))
        }
    }
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.name
    }

    fn warning(&self) -> Option<String> {
        self.insecure_key_warning()
    }

    fn destination(&self) -> crate::sampling::provider::Destination {
        crate::sampling::provider::Destination {
            provider: "openai".into(),
            host: self.url.host_str().map(|host| match self.url.port() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_owned(),
            }),
            default_model: (!self.model.is_empty()).then(|| self.model.clone()),
        }
    }

    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageParams,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ProviderError>> {
        Box::pin(self.ask(request, model))
    }
}

fn read_api_key(var: &str) -> Result<HeaderValue, ProviderError> {
    match std::env::var(var) {
        Ok(key) if !key.trim().is_empty() => {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.trim())).map_err(|_| {
                ProviderError(format!(
                    "the environment variable {var} (apiKeyEnv) holds characters that cannot be sent in an HTTP header"
                ))
            })?;
            value.set_sensitive(true);
            Ok(value)
        }
        Ok(_) | Err(std::env::VarError::NotPresent) => Err(ProviderError(format!(
            "apiKeyEnv names the environment variable {var}, but it is not set or empty"
        ))),
        Err(std::env::VarError::NotUnicode(_)) => Err(ProviderError(format!(
            "the environment variable {var} (apiKeyEnv) is not valid Unicode"
        ))),
    }
}

fn human_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

/// What an error body says: `{"error":{"message":..}}` (OpenAI, Ollama), `{"error":".."}`,
/// `{"message":..}` (vLLM), else the start of the body.
pub(super) fn error_detail(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(body)
        && let Some(message) = error_message(&value)
    {
        return message;
    }
    let text = String::from_utf8_lossy(body);
    if text.trim().is_empty() {
        "(empty body)".into()
    } else {
        snippet(&text)
    }
}

/// Shows neither the key nor credentials written in the base URL.
impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("endpoint", &self.endpoint)
            .field("model", &self.model)
            .field("api_key", &self.authorization.as_ref().map(|_| "(set)"))
            .field("stream", &self.stream)
            .field("timeout", &self.timeout)
            .finish()
    }
}
