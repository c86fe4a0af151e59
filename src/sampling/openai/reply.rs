//! Reply parsing: a chat-completions reply (whole, or added up from a stream by `stream`)
//! becomes a `CreateMessageResult`.

use serde_json::{Value, json};

use super::snippet;
use crate::sampling::provider::ProviderError;
use crate::sampling::types::{Block, CreateMessageResult, Role};

/// A reply, whole or accumulated from a stream.
#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct Completion {
    pub(super) text: String,
    pub(super) refusal: String,
    pub(super) tool_calls: Vec<ToolCall>,
    pub(super) model: Option<String>,
    pub(super) finish_reason: Option<String>,
}

#[derive(Debug, Default, Clone, PartialEq)]
pub(super) struct ToolCall {
    pub(super) id: Option<String>,
    pub(super) name: String,
    pub(super) arguments: String,
}

impl ToolCall {
    /// A whole call: its `function`'s `name` and `arguments`.
    fn of(id: Option<String>, function: &Value) -> ToolCall {
        ToolCall {
            id,
            name: function
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: arguments_text(function.get("arguments")),
        }
    }
}

impl Completion {
    pub(super) fn into_result(self, requested_model: &str) -> Result<CreateMessageResult, String> {
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

pub(super) fn read_completion(
    body: &[u8],
    requested_model: &str,
) -> Result<CreateMessageResult, String> {
    completion_from_body(body)?.into_result(requested_model)
}

pub(super) fn completion_from_body(body: &[u8]) -> Result<Completion, String> {
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
        let id = call.get("id").and_then(Value::as_str).map(str::to_owned);
        let function = call.get("function").unwrap_or(&Value::Null);
        completion.tool_calls.push(ToolCall::of(id, function));
    }
    // The legacy single `function_call`.
    if completion.tool_calls.is_empty()
        && let Some(function) = message.get("function_call").filter(|f| f.is_object())
    {
        completion.tool_calls.push(ToolCall::of(None, function));
    }
    Ok(completion)
}

/// `content` as a string, or the text of a list of parts.
pub(super) fn content_text(content: Option<&Value>) -> String {
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
pub(super) fn arguments_text(arguments: Option<&Value>) -> String {
    match arguments {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// What an error reply says (see [`crate::net::json_error_message`]), cut short.
pub(super) fn error_message(value: &Value) -> Option<String> {
    crate::net::json_error_message(value).map(snippet)
}
