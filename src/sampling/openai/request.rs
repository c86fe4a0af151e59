//! Request mapping: a `sampling/createMessage` request becomes a chat-completions body.

use serde_json::{Map, Value, json};

use crate::sampling::provider::ProviderError;
use crate::sampling::types::{Block, CreateMessageParams, Role, SamplingMessage};

/// The chat-completions body for `params`, asking `model`. The error says which message or
/// block cannot be sent.
pub fn build_request(
    params: &CreateMessageParams,
    model: &str,
    stream: bool,
) -> Result<Value, ProviderError> {
    chat_request(params, model, stream).map_err(ProviderError)
}

pub(super) fn chat_request(
    params: &CreateMessageParams,
    model: &str,
    stream: bool,
) -> Result<Value, String> {
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
pub(super) fn audio_format(mime: &str) -> Option<String> {
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
