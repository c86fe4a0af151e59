//! A [`Provider`] for any OpenAI-compatible chat-completions endpoint: OpenAI, Ollama, llama.cpp's
//! server, vLLM, LM Studio, anything that answers `POST {baseUrl}/chat/completions`.
//!
//! The translation is kept in pure functions so it is tested without a network:
//! [`build_request`] turns a `sampling/createMessage` request into a chat-completions body,
//! [`parse_completion`] reads a whole (non-streamed) reply, and a private `StreamDecoder` reads a
//! server-sent-event stream. [`OpenAi`] adds HTTP, timeouts and the wording of errors, which always
//! name the endpoint and never contain the API key.

use std::fmt;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderValue};
use serde_json::{Map, Value, json};

use super::provider::{Provider, ProviderError};
use super::types::{Block, CreateMessageParams, CreateMessageResult, Role, SamplingMessage};

pub use crate::config::sampling::{DEFAULT_OPENAI_TIMEOUT as DEFAULT_TIMEOUT, OpenAiConfig};

/// How much of an unexpected body is quoted in an error.
const SNIPPET_CHARS: usize = 200;
/// The largest reply read; a bigger one is an error rather than an out-of-memory.
const MAX_REPLY_BYTES: usize = 32 * 1024 * 1024;
/// How much of an error body is read.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// An OpenAI-compatible chat-completions endpoint.
pub struct OpenAi {
    name: String,
    /// `{baseUrl}/chat/completions` as shown in errors: no user name, password or query.
    endpoint: String,
    url: reqwest::Url,
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
        let shown = |url: &reqwest::Url| {
            let mut url = url.clone();
            let _ = url.set_username("");
            let _ = url.set_password(None);
            url.set_query(None);
            url.to_string()
        };
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

        // reqwest is built without a bundled crypto provider: use ring, once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut builder = reqwest::Client::builder()
            .connect_timeout(config.timeout)
            .user_agent(concat!("mcp-sidecar/", env!("CARGO_PKG_VERSION")))
            .redirect(crate::net::same_origin_redirects());
        if crate::net::is_loopback(&url) {
            // A model on this machine is never reached through a proxy.
            builder = builder.no_proxy();
        }
        let client = builder.build().map_err(|e| {
            ProviderError(format!(
                "could not set up the HTTP client for {endpoint}: {}",
                innermost(&e)
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

    async fn read_stream(
        &self,
        response: &mut reqwest::Response,
    ) -> Result<Completion, ProviderError> {
        let mut decoder = StreamDecoder::default();
        let mut piece = Vec::new();
        loop {
            piece.clear();
            if !self.read_chunk(response, &mut piece).await? {
                break;
            }
            if decoder.push(&piece).map_err(|e| self.unusable(e))? {
                break;
            }
            if decoder.pending() > MAX_REPLY_BYTES {
                return Err(ProviderError(format!(
                    "the event stream from {} holds a line longer than {} MiB",
                    self.endpoint,
                    MAX_REPLY_BYTES / (1024 * 1024)
                )));
            }
        }
        decoder.finish().map_err(|e| self.unusable(e))
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
        if e.is_timeout() {
            return self.silent("did not answer");
        }
        let why = match io_error_kind(e) {
            Some(std::io::ErrorKind::ConnectionRefused) => "connection refused".to_owned(),
            Some(std::io::ErrorKind::ConnectionReset) => "the connection was reset".to_owned(),
            Some(std::io::ErrorKind::ConnectionAborted) => "the connection was aborted".to_owned(),
            Some(std::io::ErrorKind::TimedOut) => return self.silent("did not answer"),
            _ => innermost(e),
        };
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

    fn destination(&self) -> super::provider::Destination {
        super::provider::Destination {
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

fn io_error_kind(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    let mut next = Some(e);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            return Some(io.kind());
        }
        next = err.source();
    }
    None
}

/// The deepest cause's message, which is the one that says what happened.
fn innermost(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e;
    while let Some(source) = last.source() {
        last = source;
    }
    last.to_string()
}

fn human_duration(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

fn snippet(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(SNIPPET_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

/// What an error body says: `{"error":{"message":..}}` (OpenAI, Ollama), `{"error":".."}`,
/// `{"message":..}` (vLLM), else the start of the body.
fn error_detail(body: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(body)
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

fn error_message(value: &Value) -> Option<String> {
    let message = match value.get("error") {
        Some(Value::String(s)) => Some(s.as_str()),
        Some(error) => error.get("message").and_then(Value::as_str),
        None => value.get("message").and_then(Value::as_str),
    }?;
    Some(snippet(message))
}

// ---------------------------------------------------------------------------------------------
// createMessage -> chat completions

/// The chat-completions body for `params`, asking `model`. The error says which message or
/// block cannot be sent.
pub fn build_request(
    params: &CreateMessageParams,
    model: &str,
    stream: bool,
) -> Result<Value, ProviderError> {
    chat_request(params, model, stream).map_err(ProviderError)
}

fn chat_request(params: &CreateMessageParams, model: &str, stream: bool) -> Result<Value, String> {
    let mut messages = Vec::new();
    if let Some(system) = params.system_prompt.as_deref().filter(|s| !s.is_empty()) {
        messages.push(json!({"role": "system", "content": system}));
    }
    for (n, message) in params.messages.iter().enumerate() {
        let added = match message.role {
            Role::User => user_messages(message, &mut messages),
            Role::Assistant => assistant_message(message).map(|m| messages.push(m)),
        };
        added.map_err(|e| format!("message {} ({}): {e}", n + 1, message.role.as_str()))?;
    }

    let mut body = Map::new();
    body.insert("model".into(), Value::String(model.to_owned()));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("max_tokens".into(), Value::from(params.max_tokens));
    if let Some(temperature) = params.temperature {
        body.insert("temperature".into(), json!(temperature));
    }
    if let Some(stop) = params.stop_sequences.as_ref().filter(|s| !s.is_empty()) {
        body.insert("stop".into(), json!(stop));
    }
    if let Some(tools) = params.tools.as_ref().filter(|t| !t.is_empty()) {
        let tools = tools
            .iter()
            .enumerate()
            .map(|(n, tool)| function_tool(tool).map_err(|e| format!("tool {}: {e}", n + 1)))
            .collect::<Result<Vec<_>, _>>()?;
        body.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = &params.tool_choice {
            body.insert("tool_choice".into(), tool_choice(choice)?);
        }
    }
    body.insert("stream".into(), Value::Bool(stream));
    Ok(Value::Object(body))
}

/// One user message; its `tool_result` blocks become `role:"tool"` messages, which come first
/// (they must follow the assistant's `tool_calls` directly).
fn user_messages(message: &SamplingMessage, out: &mut Vec<Value>) -> Result<(), String> {
    let mut parts = Vec::new();
    let mut tool_results = 0;
    for block in &message.content {
        match block {
            Block::Text { text, .. } => parts.push(json!({"type": "text", "text": text})),
            Block::Other(value) => match block.kind() {
                "image" => parts.push(image_part(value)?),
                "audio" => parts.push(audio_part(value)?),
                "tool_result" => {
                    out.push(tool_message(value)?);
                    tool_results += 1;
                }
                "tool_use" => return Err("a user message cannot hold a `tool_use` block".into()),
                kind => return Err(unsupported(kind)),
            },
        }
    }
    if parts.is_empty() && tool_results > 0 {
        return Ok(());
    }
    out.push(json!({"role": "user", "content": user_content(parts)}));
    Ok(())
}

/// A lone text is sent as a plain string, which every server understands; anything else as parts.
fn user_content(mut parts: Vec<Value>) -> Value {
    match parts.as_mut_slice() {
        [] => Value::String(String::new()),
        [only] if only["type"] == "text" => only["text"].take(),
        _ => Value::Array(parts),
    }
}

fn assistant_message(message: &SamplingMessage) -> Result<Value, String> {
    let mut texts = Vec::new();
    let mut calls = Vec::new();
    for block in &message.content {
        match block {
            Block::Text { text, .. } => texts.push(text.as_str()),
            Block::Other(value) => match block.kind() {
                "tool_use" => calls.push(tool_call(value)?),
                "tool_result" => {
                    return Err("an assistant message cannot hold a `tool_result` block".into());
                }
                kind @ ("image" | "audio") => {
                    return Err(format!(
                        "an assistant message with an `{kind}` block cannot be sent to an OpenAI-compatible endpoint (only text and tool calls)"
                    ));
                }
                kind => return Err(unsupported(kind)),
            },
        }
    }
    let content = match texts.as_slice() {
        [] if !calls.is_empty() => Value::Null,
        [] => Value::String(String::new()),
        [only] => Value::String((*only).to_owned()),
        many => Value::Array(
            many.iter()
                .map(|t| json!({"type": "text", "text": t}))
                .collect(),
        ),
    };
    let mut out = json!({"role": "assistant", "content": content});
    if !calls.is_empty() {
        out["tool_calls"] = Value::Array(calls);
    }
    Ok(out)
}

fn unsupported(kind: &str) -> String {
    format!("a `{kind}` block cannot be sent to an OpenAI-compatible endpoint")
}

fn str_field<'v>(value: &'v Value, field: &str, what: &str) -> Result<&'v str, String> {
    value
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("{what} has no `{field}`"))
}

fn image_part(block: &Value) -> Result<Value, String> {
    let data = str_field(block, "data", "an image block")?;
    let mime = str_field(block, "mimeType", "an image block")?;
    Ok(json!({
        "type": "image_url",
        "image_url": {"url": format!("data:{mime};base64,{data}")},
    }))
}

fn audio_part(block: &Value) -> Result<Value, String> {
    let data = str_field(block, "data", "an audio block")?;
    let mime = str_field(block, "mimeType", "an audio block")?;
    let format = audio_format(mime)
        .ok_or_else(|| format!("audio of type `{mime}` cannot be sent (expected audio/…)"))?;
    Ok(json!({
        "type": "input_audio",
        "input_audio": {"data": data, "format": format},
    }))
}

/// `input_audio.format` from a MIME type: `wav`, `mp3`, else the subtype as it is (`ogg`, `flac`…).
fn audio_format(mime: &str) -> Option<String> {
    let subtype = mime
        .split(';')
        .next()?
        .trim()
        .to_ascii_lowercase()
        .strip_prefix("audio/")?
        .to_owned();
    let subtype = subtype.strip_prefix("x-").unwrap_or(&subtype);
    Some(
        match subtype {
            "wav" | "wave" | "vnd.wave" => "wav",
            "mpeg" | "mp3" | "mpeg3" => "mp3",
            "" => return None,
            other => other,
        }
        .to_owned(),
    )
}

fn tool_call(block: &Value) -> Result<Value, String> {
    let id = str_field(block, "id", "a `tool_use` block")?;
    let name = str_field(block, "name", "a `tool_use` block")?;
    let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
    let arguments = serde_json::to_string(&input).map_err(|e| e.to_string())?;
    Ok(json!({
        "id": id,
        "type": "function",
        "function": {"name": name, "arguments": arguments},
    }))
}

fn tool_message(block: &Value) -> Result<Value, String> {
    let id = str_field(block, "toolUseId", "a `tool_result` block")?;
    let mut content = tool_result_text(block.get("content"));
    if content.is_empty()
        && let Some(structured) = block.get("structuredContent").filter(|v| !v.is_null())
    {
        content = structured.to_string();
    }
    if block.get("isError").and_then(Value::as_bool) == Some(true) {
        content = format!("Error: {content}");
    }
    Ok(json!({"role": "tool", "tool_call_id": id, "content": content}))
}

/// The text of a tool result's content; what a tool message cannot carry is named in brackets.
fn tool_result_text(content: Option<&Value>) -> String {
    let items: &[Value] = match content {
        Some(Value::Array(items)) => items,
        Some(one @ Value::Object(_)) => std::slice::from_ref(one),
        Some(Value::String(text)) => return text.clone(),
        _ => &[],
    };
    let mut pieces = Vec::new();
    for item in items {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("unknown");
        let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("?");
        let piece = match kind {
            "text" => item
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            "resource" => {
                let resource = item.get("resource").unwrap_or(&Value::Null);
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => text.to_owned(),
                    None => format!(
                        "[resource {} omitted]",
                        resource.get("uri").and_then(Value::as_str).unwrap_or("?")
                    ),
                }
            }
            "resource_link" => format!(
                "[resource link: {}]",
                item.get("uri").and_then(Value::as_str).unwrap_or("?")
            ),
            "image" | "audio" => format!("[{kind} ({mime}) omitted]"),
            other => format!("[{other} content omitted]"),
        };
        pieces.push(piece);
    }
    pieces.join("\n")
}

fn function_tool(tool: &Value) -> Result<Value, String> {
    let name = str_field(tool, "name", "the tool")?;
    let mut function = Map::new();
    function.insert("name".into(), Value::String(name.to_owned()));
    if let Some(description) = tool.get("description").and_then(Value::as_str) {
        function.insert("description".into(), Value::String(description.to_owned()));
    }
    let parameters = tool
        .get("inputSchema")
        .filter(|s| s.is_object())
        .cloned()
        .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
    function.insert("parameters".into(), parameters);
    Ok(json!({"type": "function", "function": function}))
}

fn tool_choice(choice: &Value) -> Result<Value, String> {
    let mode = match choice {
        Value::String(mode) => Some(mode.as_str()),
        other => other.get("mode").and_then(Value::as_str),
    };
    match mode.unwrap_or("auto") {
        mode @ ("auto" | "required" | "none") => Ok(Value::String(mode.to_owned())),
        other => Err(format!(
            "toolChoice mode `{other}` is not one of auto, required, none"
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// chat completions -> CreateMessageResult

/// A reply, whole or accumulated from a stream.
#[derive(Debug, Default, Clone, PartialEq)]
struct Completion {
    text: String,
    refusal: String,
    tool_calls: Vec<ToolCall>,
    model: Option<String>,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Clone, PartialEq)]
struct ToolCall {
    id: Option<String>,
    name: String,
    arguments: String,
}

impl Completion {
    fn into_result(self, requested_model: &str) -> Result<CreateMessageResult, String> {
        let text = if self.text.is_empty() {
            self.refusal
        } else {
            self.text
        };
        let mut content = Vec::new();
        if !text.is_empty() || self.tool_calls.is_empty() {
            content.push(Block::text(text));
        }
        let has_calls = !self.tool_calls.is_empty();
        for (n, call) in self.tool_calls.into_iter().enumerate() {
            if call.name.is_empty() {
                return Err(format!("tool call {} has no function name", n + 1));
            }
            let input = parse_arguments(&call.name, &call.arguments)?;
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(|| format!("call_{n}"));
            content.push(Block::Other(json!({
                "type": "tool_use",
                "id": id,
                "name": call.name,
                "input": input,
            })));
        }
        let stop_reason = match self.finish_reason.as_deref() {
            // Some servers say `stop` even when the model called tools.
            None | Some("stop") if has_calls => Some("toolUse".to_owned()),
            None => None,
            Some(reason) => Some(stop_reason(reason)),
        };
        Ok(CreateMessageResult {
            role: Role::Assistant,
            content,
            model: self
                .model
                .filter(|m| !m.is_empty())
                .unwrap_or_else(|| requested_model.to_owned()),
            stop_reason,
        })
    }
}

/// `finish_reason` → MCP `stopReason`; other reasons are kept as they are.
fn stop_reason(finish_reason: &str) -> String {
    match finish_reason {
        "stop" => "endTurn",
        "length" => "maxTokens",
        "tool_calls" | "function_call" => "toolUse",
        "content_filter" => "contentFilter",
        other => other,
    }
    .to_owned()
}

fn parse_arguments(name: &str, arguments: &str) -> Result<Value, String> {
    if arguments.trim().is_empty() {
        return Ok(json!({}));
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(Value::Null) => Ok(json!({})),
        Ok(input @ Value::Object(_)) => Ok(input),
        Ok(_) => Err(format!(
            "the model called tool `{name}` with arguments that are not a JSON object: `{}`",
            snippet(arguments)
        )),
        Err(e) => Err(format!(
            "the model called tool `{name}` with arguments that are not valid JSON ({e}): `{}`",
            snippet(arguments)
        )),
    }
}

/// Reads a non-streamed chat-completions reply into a `CreateMessageResult`; `requested_model`
/// is reported when the reply names none.
pub fn parse_completion(
    body: &[u8],
    requested_model: &str,
) -> Result<CreateMessageResult, ProviderError> {
    read_completion(body, requested_model).map_err(ProviderError)
}

fn read_completion(body: &[u8], requested_model: &str) -> Result<CreateMessageResult, String> {
    completion_from_body(body)?.into_result(requested_model)
}

fn completion_from_body(body: &[u8]) -> Result<Completion, String> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        format!(
            "not valid JSON ({e}): `{}`",
            snippet(&String::from_utf8_lossy(body))
        )
    })?;
    if let Some(message) = value.get("error").and_then(|_| error_message(&value)) {
        return Err(format!("the endpoint reported an error: {message}"));
    }
    let choice = value
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|choices| choices.first())
        .ok_or_else(|| format!("no `choices` in `{}`", snippet(&value.to_string())))?;
    let message = choice
        .get("message")
        .filter(|m| m.is_object())
        .ok_or_else(|| "the first choice has no `message`".to_owned())?;
    let mut completion = Completion {
        text: content_text(message.get("content")),
        refusal: message
            .get("refusal")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        model: value
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_owned),
        finish_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        ..Completion::default()
    };
    let calls = message.get("tool_calls").and_then(Value::as_array);
    for call in calls.into_iter().flatten() {
        let function = call.get("function").unwrap_or(&Value::Null);
        completion.tool_calls.push(ToolCall {
            id: call.get("id").and_then(Value::as_str).map(str::to_owned),
            name: function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: arguments_text(function.get("arguments")),
        });
    }
    // The legacy single `function_call`.
    if completion.tool_calls.is_empty()
        && let Some(function) = message.get("function_call").filter(|f| f.is_object())
    {
        completion.tool_calls.push(ToolCall {
            id: None,
            name: function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: arguments_text(function.get("arguments")),
        });
    }
    Ok(completion)
}

/// `content` as a string, or the text of a list of parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

/// `arguments` is a JSON string by the spec; a few servers send the object itself.
fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// Reads a streamed reply: server-sent events whose `data:` is a chat-completion chunk, ending
/// with `data: [DONE]`.
#[derive(Debug, Default)]
struct StreamDecoder {
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// The data lines of the event being read.
    data: Option<String>,
    done: bool,
    completion: Completion,
    /// The stream's `index` of each entry of `completion.tool_calls`.
    call_indices: Vec<Option<u64>>,
}

impl StreamDecoder {
    /// Feeds the next bytes; true once `[DONE]` has come (anything after it is ignored).
    fn push(&mut self, bytes: &[u8]) -> Result<bool, String> {
        if self.done {
            return Ok(true);
        }
        self.partial.extend_from_slice(bytes);
        let buffer = std::mem::take(&mut self.partial);
        let mut start = 0;
        while let Some(end) = buffer[start..].iter().position(|&b| b == b'\n') {
            let line = &buffer[start..start + end];
            start += end + 1;
            self.line(line)?;
            if self.done {
                return Ok(true);
            }
        }
        self.partial = buffer[start..].to_vec();
        Ok(false)
    }

    /// Bytes waiting for the end of their line.
    fn pending(&self) -> usize {
        self.partial.len()
    }

    /// The stream has ended: the completion, or why the stream was cut short. An event left
    /// unfinished counts only if it is `[DONE]`.
    fn finish(mut self) -> Result<Completion, String> {
        if !self.done {
            let rest = std::mem::take(&mut self.partial);
            let rest =
                String::from_utf8_lossy(rest.strip_suffix(b"\r").unwrap_or(&rest)).into_owned();
            let mut data = self.data.take();
            if let Some(value) = rest.strip_prefix("data:") {
                let value = value.strip_prefix(' ').unwrap_or(value);
                data = Some(match data {
                    Some(before) => format!("{before}\n{value}"),
                    None => value.to_owned(),
                });
            }
            self.done = data.as_deref().map(str::trim) == Some("[DONE]");
        }
        if !self.done {
            return Err("the event stream ended before `data: [DONE]`".into());
        }
        Ok(self.completion)
    }

    fn line(&mut self, line: &[u8]) -> Result<(), String> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = std::str::from_utf8(line).map_err(|_| {
            format!(
                "the event stream holds a line that is not UTF-8: `{}`",
                snippet(&String::from_utf8_lossy(line))
            )
        })?;
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_owned()),
            },
            "event" | "id" | "retry" => {}
            _ => {
                return Err(format!(
                    "the event stream holds an unexpected line: `{}`",
                    snippet(line)
                ));
            }
        }
        Ok(())
    }

    fn dispatch(&mut self) -> Result<(), String> {
        let Some(data) = self.data.take() else {
            return Ok(());
        };
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "an event in the stream is not valid JSON ({e}): `{}`",
                snippet(data)
            )
        })?;
        self.apply(&chunk)
    }

    fn apply(&mut self, chunk: &Value) -> Result<(), String> {
        if chunk.get("error").is_some()
            && let Some(message) = error_message(chunk)
        {
            return Err(format!(
                "the endpoint reported an error in the stream: {message}"
            ));
        }
        if let Some(model) = chunk
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            self.completion.model = Some(model.to_owned());
        }
        let choices = match chunk.get("choices") {
            None | Some(Value::Null) => return Ok(()),
            Some(Value::Array(choices)) => choices,
            Some(_) => {
                return Err(format!(
                    "a chunk's `choices` is not a list: `{}`",
                    snippet(&chunk.to_string())
                ));
            }
        };
        // Only the first choice is asked for (no `n`).
        for choice in choices
            .iter()
            .filter(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        {
            let delta = choice.get("delta").unwrap_or(&Value::Null);
            self.completion
                .text
                .push_str(&content_text(delta.get("content")));
            if let Some(refusal) = delta.get("refusal").and_then(Value::as_str) {
                self.completion.refusal.push_str(refusal);
            }
            let calls = delta.get("tool_calls").and_then(Value::as_array);
            for call in calls.into_iter().flatten() {
                self.tool_call_delta(call);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.completion.finish_reason = Some(reason.to_owned());
            }
        }
        Ok(())
    }

    /// Tool calls come in pieces keyed by `index`: the first has the id and name, the rest add
    /// to the arguments string.
    fn tool_call_delta(&mut self, call: &Value) {
        let id = call
            .get("id")
            .and_then(Value::as_str)
            .filter(|id| !id.is_empty());
        let index = call.get("index").and_then(Value::as_u64);
        let calls = &mut self.completion.tool_calls;
        let existing = match index {
            Some(index) => self.call_indices.iter().position(|&i| i == Some(index)),
            // No index (some servers): a known id, or a piece of the last call unless it has a
            // new id.
            None => id
                .and_then(|id| calls.iter().position(|c| c.id.as_deref() == Some(id)))
                .or_else(|| {
                    if id.is_none() {
                        calls.len().checked_sub(1)
                    } else {
                        None
                    }
                }),
        };
        let slot = match existing {
            Some(slot) => slot,
            None => {
                calls.push(ToolCall::default());
                self.call_indices.push(index);
                calls.len() - 1
            }
        };
        let entry = &mut calls[slot];
        if let Some(id) = id
            && entry.id.is_none()
        {
            entry.id = Some(id.to_owned());
        }
        let function = call.get("function").unwrap_or(&Value::Null);
        if let Some(name) = function
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            && entry.name.is_empty()
        {
            entry.name = name.to_owned();
        }
        entry
            .arguments
            .push_str(&arguments_text(function.get("arguments")));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn params(value: Value) -> CreateMessageParams {
        serde_json::from_value(value).expect("valid CreateMessageParams")
    }

    #[test]
    fn config_reads_camel_case_with_defaults() {
        let config: OpenAiConfig = serde_json::from_value(json!({
            "baseUrl": "http://127.0.0.1:11434/v1",
            "model": "llama3.2",
        }))
        .unwrap();
        assert_eq!(
            config,
            OpenAiConfig::new("http://127.0.0.1:11434/v1", "llama3.2")
        );
        assert!(config.stream);
        assert_eq!(config.timeout, Duration::from_secs(120));

        let config: OpenAiConfig = serde_json::from_value(json!({
            "baseUrl": "https://api.openai.com/v1",
            "model": "gpt-4o-mini",
            "apiKeyEnv": "OPENAI_API_KEY",
            "stream": false,
            "timeout": 2.5,
        }))
        .unwrap();
        assert_eq!(config.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
        assert!(!config.stream);
        assert_eq!(config.timeout, Duration::from_millis(2500));

        for bad in [json!(0), json!(-1), json!("10")] {
            let err = serde_json::from_value::<OpenAiConfig>(
                json!({"baseUrl": "http://x/v1", "model": "m", "timeout": bad}),
            )
            .unwrap_err();
            assert!(
                err.to_string().contains("timeout") || err.to_string().contains("invalid type"),
                "{err}"
            );
        }
    }

    #[test]
    fn new_checks_the_config_and_builds_the_endpoint() {
        let ai = OpenAi::new(OpenAiConfig::new("http://127.0.0.1:11434/v1/", "m")).unwrap();
        assert_eq!(ai.endpoint(), "http://127.0.0.1:11434/v1/chat/completions");
        assert_eq!(ai.name(), "openai (http://127.0.0.1:11434/v1)");

        // https needs the ring provider: building the client must not panic.
        let ai = OpenAi::new(OpenAiConfig::new(
            "https://user:secret@example.com/openai/v1?api-version=1",
            "m",
        ))
        .unwrap();
        assert_eq!(
            ai.endpoint(),
            "https://example.com/openai/v1/chat/completions"
        );
        assert_eq!(
            ai.url.as_str(),
            "https://user:secret@example.com/openai/v1/chat/completions?api-version=1"
        );
        assert!(!format!("{ai:?}").contains("secret") && !ai.name().contains("secret"));

        let err = OpenAi::new(OpenAiConfig::new("localhost:11434", "m")).unwrap_err();
        assert!(err.0.contains("http://"), "{err}");
        let err = OpenAi::new(OpenAiConfig::new("not a url", "m")).unwrap_err();
        assert!(err.0.contains("not a URL"), "{err}");
        let mut config = OpenAiConfig::new("http://127.0.0.1:1/v1", "m");
        config.api_key_env = Some("MCP_SIDECAR_OPENAI_UNIT_TEST_UNSET_VAR".into());
        let err = OpenAi::new(config).unwrap_err();
        assert!(
            err.0.contains("MCP_SIDECAR_OPENAI_UNIT_TEST_UNSET_VAR"),
            "{err}"
        );
    }

    #[test]
    fn request_maps_every_field() {
        let request = params(json!({
            "systemPrompt": "Be brief.",
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Hi"}},
                {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
                {"role": "user", "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
                    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                ]},
            ],
            "maxTokens": 256,
            "temperature": 0.25,
            "stopSequences": ["\n\nUser:"],
            "metadata": {"x": 1},
            "modelPreferences": {"hints": [{"name": "claude"}]},
        }));
        let body = chat_request(&request, "llama3.2", true).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "llama3.2",
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello."},
                    {"role": "user", "content": [
                        {"type": "text", "text": "What is this?"},
                        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                        {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                    ]},
                ],
                "max_tokens": 256,
                "temperature": 0.25,
                "stop": ["\n\nUser:"],
                "stream": true,
            })
        );
        let minimal = params(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
            "maxTokens": 5,
        }));
        assert_eq!(
            chat_request(&minimal, "m", false).unwrap(),
            json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5, "stream": false})
        );
    }

    #[test]
    fn request_maps_a_tool_round() {
        let request = params(json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "Let me look."},
                    {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
                    {"type": "tool_use", "id": "call_2", "name": "get_time", "input": {}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "toolUseId": "call_1", "content": [
                        {"type": "text", "text": "18°C"}, {"type": "text", "text": "sunny"},
                        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                    ]},
                    {"type": "tool_result", "toolUseId": "call_2", "content": [], "isError": true,
                     "structuredContent": {"code": 7}},
                ]},
                {"role": "assistant", "content": {"type": "tool_use", "id": "c3", "name": "noop", "input": {}}},
                {"role": "user", "content": {"type": "tool_result", "toolUseId": "c3", "content": [
                    {"type": "resource", "resource": {"uri": "file:///a", "text": "A"}},
                    {"type": "resource_link", "uri": "file:///b", "name": "b"},
                ]}},
            ],
            "maxTokens": 100,
            "tools": [
                {"name": "get_weather", "description": "Weather by city",
                 "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
                {"name": "get_time", "inputSchema": {"type": "object"}},
            ],
            "toolChoice": {"mode": "required"},
        }));
        let body = chat_request(&request, "m", false).unwrap();
        assert_eq!(
            body["messages"],
            json!([
                {"role": "user", "content": "Weather in Paris?"},
                {"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "18°C\nsunny\n[image (image/png) omitted]"},
                {"role": "tool", "tool_call_id": "call_2", "content": "Error: {\"code\":7}"},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "c3", "type": "function", "function": {"name": "noop", "arguments": "{}"}},
                ]},
                {"role": "tool", "tool_call_id": "c3", "content": "A\n[resource link: file:///b]"},
            ])
        );
        assert_eq!(
            body["tools"],
            json!([
                {"type": "function", "function": {"name": "get_weather", "description": "Weather by city",
                 "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
                {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
            ])
        );
        assert_eq!(body["tool_choice"], "required");

        for (choice, expected) in [
            (json!({"mode": "auto"}), "auto"),
            (json!({"mode": "none"}), "none"),
            (json!({}), "auto"),
        ] {
            let mut r = request.clone();
            r.tool_choice = Some(choice);
            assert_eq!(
                chat_request(&r, "m", false).unwrap()["tool_choice"],
                expected
            );
        }
        let mut r = request.clone();
        r.tool_choice = Some(json!({"mode": "any"}));
        assert!(chat_request(&r, "m", false).unwrap_err().contains("`any`"));
        // No tools: neither `tools` nor `tool_choice` is sent.
        let mut r = request;
        r.tools = Some(vec![]);
        let body = chat_request(&r, "m", false).unwrap();
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
    }

    #[test]
    fn request_rejects_what_cannot_be_sent() {
        let cases = [
            (
                json!({"role": "user", "content": {"type": "tool_use", "id": "a", "name": "n", "input": {}}}),
                "message 1 (user): a user message cannot hold a `tool_use` block",
            ),
            (
                json!({"role": "assistant", "content": {"type": "image", "data": "AA", "mimeType": "image/png"}}),
                "`image` block",
            ),
            (
                json!({"role": "user", "content": {"type": "image", "mimeType": "image/png"}}),
                "an image block has no `data`",
            ),
            (
                json!({"role": "user", "content": {"type": "audio", "data": "AA", "mimeType": "video/mp4"}}),
                "`video/mp4`",
            ),
            (
                json!({"role": "user", "content": {"type": "hologram"}}),
                "a `hologram` block cannot be sent",
            ),
            (
                json!({"role": "user", "content": {"type": "tool_result", "content": []}}),
                "has no `toolUseId`",
            ),
        ];
        for (message, expected) in cases {
            let request = params(json!({"messages": [message], "maxTokens": 1}));
            let err = chat_request(&request, "m", false).unwrap_err();
            assert!(
                err.contains(expected),
                "{err:?} should contain {expected:?}"
            );
        }
        let request = params(
            json!({"messages": [{"role": "user", "content": {"type": "x"}}], "maxTokens": 1}),
        );
        assert!(
            build_request(&request, "m", false)
                .unwrap_err()
                .0
                .contains("`x` block")
        );
        assert!(
            parse_completion(b"{}", "m")
                .unwrap_err()
                .0
                .contains("no `choices`")
        );
        assert_eq!(audio_format("audio/mpeg").as_deref(), Some("mp3"));
        assert_eq!(audio_format("audio/x-wav").as_deref(), Some("wav"));
        assert_eq!(audio_format("audio/flac").as_deref(), Some("flac"));
    }

    const PLAIN: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"llama3.2:latest",
        "choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],
        "usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}"#;

    const TOOL: &str = r#"{"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Checking.",
        "tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"days\":2}"}},
                      {"id":"call_def","type":"function","function":{"name":"get_time","arguments":""}}]},
        "finish_reason":"tool_calls"}]}"#;

    fn tool_result_expected() -> CreateMessageResult {
        CreateMessageResult {
            role: Role::Assistant,
            content: vec![
                Block::text("Checking."),
                Block::Other(
                    json!({"type": "tool_use", "id": "call_abc", "name": "get_weather", "input": {"city": "Paris", "days": 2}}),
                ),
                Block::Other(
                    json!({"type": "tool_use", "id": "call_def", "name": "get_time", "input": {}}),
                ),
            ],
            model: "gpt-x".into(),
            stop_reason: Some("toolUse".into()),
        }
    }

    #[test]
    fn parses_a_plain_reply() {
        let result = read_completion(PLAIN.as_bytes(), "asked").unwrap();
        assert_eq!(
            result,
            CreateMessageResult {
                role: Role::Assistant,
                content: vec![Block::text("Hello there.")],
                model: "llama3.2:latest".into(),
                stop_reason: Some("endTurn".into()),
            }
        );
        // No model in the reply: the requested one; finish reasons mapped or kept.
        for (reason, expected) in [
            ("length", "maxTokens"),
            ("content_filter", "contentFilter"),
            ("eos", "eos"),
        ] {
            let body =
                json!({"choices": [{"message": {"content": null}, "finish_reason": reason}]});
            let result = read_completion(body.to_string().as_bytes(), "asked").unwrap();
            assert_eq!(result.model, "asked");
            assert_eq!(result.content, vec![Block::text("")]);
            assert_eq!(result.stop_reason.as_deref(), Some(expected));
        }
        let refusal = json!({"choices": [{"message": {"content": null, "refusal": "I can't."}, "finish_reason": "stop"}]});
        let result = read_completion(refusal.to_string().as_bytes(), "m").unwrap();
        assert_eq!(result.content, vec![Block::text("I can't.")]);
    }

    #[test]
    fn parses_tool_calls() {
        assert_eq!(
            read_completion(TOOL.as_bytes(), "asked").unwrap(),
            tool_result_expected()
        );
        // `stop` with tool calls (some servers) still means toolUse; object arguments accepted.
        let body = json!({"choices": [{"message": {"content": "", "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}, "finish_reason": "stop"}]});
        let result = read_completion(body.to_string().as_bytes(), "m").unwrap();
        assert_eq!(
            result.content,
            vec![Block::Other(
                json!({"type": "tool_use", "id": "call_0", "name": "f", "input": {"a": 1}})
            )]
        );
        assert_eq!(result.stop_reason.as_deref(), Some("toolUse"));
    }

    #[test]
    fn rejects_bad_replies() {
        let bad_args = json!({"choices": [{"message": {"tool_calls": [
            {"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}}]},
            "finish_reason": "tool_calls"}]});
        let err = read_completion(bad_args.to_string().as_bytes(), "m").unwrap_err();
        assert!(
            err.contains("get_weather") && err.contains("not valid JSON"),
            "{err}"
        );
        let array_args = json!({"choices": [{"message": {"tool_calls": [
            {"id": "x", "function": {"name": "f", "arguments": "[1]"}}]}}]});
        let err = read_completion(array_args.to_string().as_bytes(), "m").unwrap_err();
        assert!(err.contains("not a JSON object"), "{err}");

        let err = read_completion(b"<html>Bad Gateway</html>", "m").unwrap_err();
        assert!(
            err.contains("not valid JSON") && err.contains("<html>Bad Gateway</html>"),
            "{err}"
        );
        let err = read_completion(br#"{"object":"list","data":[]}"#, "m").unwrap_err();
        assert!(err.contains("no `choices`"), "{err}");
        let err = read_completion(br#"{"error":{"message":"model not loaded"}}"#, "m").unwrap_err();
        assert!(err.contains("model not loaded"), "{err}");
        let long = "x".repeat(1000);
        let err = read_completion(long.as_bytes(), "m").unwrap_err();
        assert!(err.len() < 400, "{err}");
    }

    #[test]
    fn error_bodies_are_quoted() {
        assert_eq!(
            error_detail(br#"{"error":{"message":"bad key","type":"auth"}}"#),
            "bad key"
        );
        assert_eq!(
            error_detail(br#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(
            error_detail(br#"{"object":"error","message":"too long"}"#),
            "too long"
        );
        assert_eq!(error_detail(b""), "(empty body)");
        let long = "é".repeat(300);
        assert_eq!(error_detail(long.as_bytes()).chars().count(), 201);
    }

    /// The stream of [`TOOL`]: content deltas, then two tool calls whose pieces interleave,
    /// with the name and arguments of the first split over chunks.
    fn tool_stream() -> String {
        let chunks = [
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"content": "Check"}, "finish_reason": null}]}),
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"content": "ing."}, "finish_reason": null}]}),
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}}]}),
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}}]}),
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_def", "type": "function", "function": {"name": "get_time", "arguments": ""}}]}}]}),
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\",\"days\":2}"}}]}}]}),
            json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"model": "gpt-x", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}}),
        ];
        let mut out = String::from(": keep-alive\n\n");
        for chunk in chunks {
            out.push_str(&format!("data: {chunk}\n\n"));
        }
        out.push_str("data: [DONE]\n\n");
        out
    }

    fn decode(pieces: &[&[u8]]) -> Result<CreateMessageResult, String> {
        let mut decoder = StreamDecoder::default();
        for piece in pieces {
            if decoder.push(piece)? {
                break;
            }
        }
        decoder.finish()?.into_result("asked")
    }

    #[test]
    fn a_stream_gives_what_the_whole_reply_gives_however_it_is_cut() {
        let stream = tool_stream();
        let bytes = stream.as_bytes();
        let whole = decode(&[bytes]).unwrap();
        assert_eq!(whole, tool_result_expected());
        assert_eq!(whole, read_completion(TOOL.as_bytes(), "asked").unwrap());
        for cut in 1..bytes.len() {
            let (a, b) = bytes.split_at(cut);
            assert_eq!(decode(&[a, b]).unwrap(), whole, "cut at {cut}");
        }
        let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
        assert_eq!(decode(&bytewise).unwrap(), whole);
        let crlf = stream.replace('\n', "\r\n");
        assert_eq!(decode(&[crlf.as_bytes()]).unwrap(), whole);
    }

    #[test]
    fn a_plain_stream_and_its_edges() {
        let stream = "data: {\"model\":\"m1\",\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n\
                      event: message\nid: 2\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"length\"}]}\n\n\
                      data: [DONE]\n\ndata: garbage after done is ignored\n\n";
        let result = decode(&[stream.as_bytes()]).unwrap();
        assert_eq!(result.content, vec![Block::text("Hello")]);
        assert_eq!(result.model, "m1");
        assert_eq!(result.stop_reason.as_deref(), Some("maxTokens"));
        // `[DONE]` without its blank line at the very end is still the end.
        let result =
            decode(&[b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]"])
                .unwrap();
        assert_eq!(result.content, vec![Block::text("x")]);
        assert_eq!(result.model, "asked");
        assert_eq!(result.stop_reason, None);
        // Tool-call pieces without `index` (some servers) still add up.
        let stream = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n\
                      data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n\
                      data: [DONE]\n\n";
        let result = decode(&[stream.as_bytes()]).unwrap();
        assert_eq!(
            result.content,
            vec![Block::Other(
                json!({"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}})
            )]
        );
    }

    #[test]
    fn a_broken_stream_is_an_error() {
        let cut = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n";
        assert!(
            decode(&[cut.as_bytes()])
                .unwrap_err()
                .contains("ended before `data: [DONE]`")
        );
        let cut_mid_event = &cut[..20];
        assert!(
            decode(&[cut_mid_event.as_bytes()])
                .unwrap_err()
                .contains("ended before")
        );
        let no_blank_line = "data: {\"choices\":[]}\n";
        assert!(
            decode(&[no_blank_line.as_bytes()])
                .unwrap_err()
                .contains("ended before")
        );
        assert!(decode(&[b""]).unwrap_err().contains("ended before"));
        let err = decode(&[b"data: {\"choices\": [oops\n\n"]).unwrap_err();
        assert!(
            err.contains("not valid JSON") && err.contains("oops"),
            "{err}"
        );
        let err = decode(&[b"<html>\n<body>502</body>\n"]).unwrap_err();
        assert!(
            err.contains("unexpected line") && err.contains("<html>"),
            "{err}"
        );
        let err = decode(&[b"data: {\"error\":{\"message\":\"out of memory\"}}\n\n"]).unwrap_err();
        assert!(err.contains("out of memory"), "{err}");
        let err = decode(&[b"data: \xff\xfe\n\n"]).unwrap_err();
        assert!(err.contains("not UTF-8"), "{err}");
        let bad_args = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{nope\"}}]}}]}\n\ndata: [DONE]\n\n";
        let err = decode(&[bad_args.as_bytes()]).unwrap_err();
        assert!(
            err.contains("`f`") && err.contains("not valid JSON"),
            "{err}"
        );
    }
}
