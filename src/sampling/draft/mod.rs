//! The editable Markdown drafts of a sampling request and of the model's answer.
//!
//! A draft is a title, a short help paragraph, `key: value` settings, then one `### role` section
//! per message (and `### system` for the system prompt). Text is written as it is; every other
//! block (image, audio, `tool_use`, `tool_result`, anything newer) is a one-line JSON reference in a
//! ```` ```mcp ```` fence, kept unchanged unless the person edits it. Text lines that look like the
//! draft's own markers are escaped with a backslash, so render → parse is lossless.

use serde_json::{Map, Value};

use super::provider::Destination;
use super::types::{
    Block, CreateMessageParams, CreateMessageResult, ModelPreferences, Role, SamplingMessage,
};
use crate::contract::DraftProblem;

const FENCE: &str = "```mcp";
const FENCE_END: &str = "```";
const NEXT: &str = "<!-- next block -->";
const META: &str = "<!-- mcp:text-meta ";
const META_END: &str = " -->";
/// The request draft's read-only line naming where the request goes. Never parsed back.
const GOES_TO: &str = "Goes to: ";

/// What the person may change about the request besides its content.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RequestChoices {
    /// The model to ask (empty: the provider's default).
    pub model: Option<String>,
    /// `remember: session` skips this request draft for this server until the editor restarts.
    pub remember_session: bool,
}

fn is_marker(line: &str) -> bool {
    matches!(
        line,
        "### system" | "### user" | "### assistant" | FENCE | NEXT
    ) || (line.starts_with(META) && line.ends_with(META_END))
}

fn escape(line: &str) -> String {
    if is_marker(line.trim_start_matches('\\')) {
        format!("\\{line}")
    } else {
        line.to_string()
    }
}

fn unescape(line: &str) -> &str {
    match line.strip_prefix('\\') {
        Some(rest) if is_marker(rest.trim_start_matches('\\')) => rest,
        _ => line,
    }
}

/// One-line JSON. serde_json already escapes `\n`, `\r` and the other C0 controls; the
/// characters some editors also break lines at (NEL, LS, PS) and the other controls are escaped
/// too, so a value can never spill onto a line of its own.
fn json(v: &impl serde::Serialize) -> String {
    escape_breaks(&serde_json::to_string(v).unwrap_or_default())
}

/// Could start a new line, or hide, in an editor.
fn is_break(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')
}

/// Only called on JSON text, where such characters can only be inside strings.
fn escape_breaks(json: &str) -> String {
    if !json.contains(is_break) {
        return json.to_string();
    }
    json.chars()
        .map(|c| {
            if is_break(c) {
                format!("\\u{:04x}", c as u32)
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A plain-text setting value (`model`, `includeContext`, `stopReason`): written as it is when
/// that reads back exactly, otherwise as a JSON string (a value from a server holding a newline
/// cannot add a setting line).
fn header_value(value: &str) -> String {
    if value.contains(is_break) || value.starts_with('"') || value.trim() != value {
        json(&value)
    } else {
        value.to_string()
    }
}

/// Reads back what [`header_value`] wrote (or what the person typed).
fn header_text(
    key: &str,
    value: &str,
    line: u32,
    problems: &mut Vec<DraftProblem>,
) -> Option<String> {
    if value.starts_with('"') {
        match serde_json::from_str::<String>(value) {
            Ok(v) => Some(v),
            Err(e) => {
                problems.push(problem(
                    line,
                    format!("{key}: not a valid quoted string: {e}"),
                ));
                None
            }
        }
    } else {
        Some(value.to_string())
    }
}

fn push_blocks(out: &mut Vec<String>, blocks: &[Block]) {
    let mut previous_text = false;
    for block in blocks {
        match block {
            Block::Text { text, extra } => {
                if previous_text {
                    out.push(NEXT.into());
                }
                if !extra.is_empty() {
                    out.push(format!("{META}{}{META_END}", json(extra)));
                }
                // A blank line, the text, a blank line; an empty text is the one blank line, so
                // an answer typed on the draft's last line is the answer, not a newline and it.
                out.push(String::new());
                if !text.is_empty() {
                    out.extend(text.split('\n').map(escape));
                    out.push(String::new());
                }
                previous_text = true;
            }
            Block::Other(v) => {
                out.push(FENCE.into());
                out.push(json(v));
                out.push(FENCE_END.into());
                previous_text = false;
            }
        }
    }
}

/// The request draft, without naming where it goes.
pub fn render_request(
    server: &str,
    request: &CreateMessageParams,
    choices: &RequestChoices,
) -> String {
    render(server, request, choices, None)
}

/// The request draft with a read-only line naming where Accept sends it: the provider, the
/// endpoint's host, and the model that will be asked. Editing that line changes nothing.
pub fn render_request_to(
    server: &str,
    request: &CreateMessageParams,
    choices: &RequestChoices,
    destination: &Destination,
) -> String {
    render(server, request, choices, Some(destination))
}

/// The words of the read-only destination line.
fn goes_to(destination: &Destination, choices: &RequestChoices) -> String {
    let model = match (&choices.model, &destination.default_model) {
        (Some(m), _) => format!("model {} (the model line below)", header_value(m)),
        (None, Some(m)) => format!("model {} (the provider's default)", header_value(m)),
        (None, None) => "the provider's default model".to_string(),
    };
    let provider = header_value(&destination.provider);
    match (destination.provider.as_str(), &destination.host) {
        ("manual", _) => "no model (provider manual): you write the answer next".to_string(),
        ("editor", _) => format!("the editor's own model (provider editor), {model}"),
        (_, Some(host)) => format!("provider {provider} at {}, {model}", header_value(host)),
        (_, None) => format!("provider {provider}, {model}"),
    }
}

fn render(
    server: &str,
    request: &CreateMessageParams,
    choices: &RequestChoices,
    destination: Option<&Destination>,
) -> String {
    let mut out = vec![
        format!("# Sampling request from `{server}`"),
        String::new(),
        format!(
            "{server} asks for a model answer. Edit the messages, the system prompt and the settings below, then Accept to send them to the model, or Reject to refuse. Blocks in mcp fences (images, tool calls) are sent as they are unless you change them. Set remember to session to skip this step for {server} until the editor restarts."
        ),
        String::new(),
    ];
    if let Some(destination) = destination {
        out.push(format!("{GOES_TO}{}.", goes_to(destination, choices)));
        out.push(String::new());
    }
    out.extend([
        format!(
            "model: {}",
            header_value(choices.model.as_deref().unwrap_or(""))
        ),
        format!(
            "remember: {}",
            if choices.remember_session {
                "session"
            } else {
                "no"
            }
        ),
        format!("maxTokens: {}", request.max_tokens),
    ]);
    if let Some(t) = request.temperature {
        out.push(format!("temperature: {}", json(&t)));
    }
    if let Some(s) = &request.stop_sequences {
        out.push(format!("stopSequences: {}", json(s)));
    }
    if let Some(p) = &request.model_preferences {
        out.push(format!("modelPreferences: {}", json(p)));
    }
    if let Some(c) = &request.include_context {
        out.push(format!("includeContext: {}", header_value(c)));
    }
    if let Some(m) = &request.metadata {
        out.push(format!("metadata: {}", json(m)));
    }
    if let Some(t) = &request.tools {
        out.push(format!("tools: {}", json(t)));
    }
    if let Some(t) = &request.tool_choice {
        out.push(format!("toolChoice: {}", json(t)));
    }
    out.push(String::new());
    if let Some(system) = &request.system_prompt {
        out.push("### system".into());
        push_blocks(&mut out, &[Block::text(system.clone())]);
    }
    for message in &request.messages {
        out.push(format!("### {}", message.role.as_str()));
        if let Some(meta) = &message.meta {
            out.push(format!(
                "{META}{}{META_END}",
                json(&serde_json::json!({"message": meta}))
            ));
        }
        push_blocks(&mut out, &message.content);
    }
    out.join("\n") + "\n"
}

/// The answer draft.
pub fn render_response(server: &str, result: &CreateMessageResult, note: Option<&str>) -> String {
    let mut out = vec![
        format!("# Model answer for `{server}`"),
        String::new(),
        format!(
            "Edit the answer below, then Accept to send it back to {server}, or Reject to refuse."
        ),
        String::new(),
    ];
    if let Some(note) = note {
        let note: String = note
            .chars()
            .map(|c| if is_break(c) { ' ' } else { c })
            .collect();
        out.push(format!("Note: {note}"));
        out.push(String::new());
    }
    out.push(format!("model: {}", header_value(&result.model)));
    out.push(format!(
        "stopReason: {}",
        header_value(result.stop_reason.as_deref().unwrap_or(""))
    ));
    out.push(String::new());
    out.push(format!("### {}", result.role.as_str()));
    push_blocks(&mut out, &result.content);
    out.join("\n") + "\n"
}

struct Section {
    heading: String,
    line: u32,
    meta: Option<Value>,
    blocks: Vec<Block>,
}

struct Parsed {
    settings: Vec<(String, String, u32)>,
    sections: Vec<Section>,
}

fn problem(line: u32, message: impl Into<String>) -> DraftProblem {
    DraftProblem {
        line,
        message: message.into(),
    }
}

/// The renderers' own lines above the settings: the title, the help paragraph, a note, where
/// the request goes (read-only: never parsed).
fn is_preamble(line: &str) -> bool {
    line.starts_with("# ")
        || line.starts_with("Note: ")
        || line.starts_with(GOES_TO)
        || line.contains("then Accept to send")
}

/// Splits a draft into settings and sections of blocks.
fn parse(text: &str) -> (Parsed, Vec<DraftProblem>) {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let mut settings = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut problems = Vec::new();
    let mut i = 0;
    let mut seen: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    // Settings: `key: value` lines before the first section.
    while i < lines.len() && !lines[i].starts_with("### ") {
        if let Some((key, value)) = lines[i]
            .split_once(": ")
            .or_else(|| lines[i].strip_suffix(':').map(|k| (k, "")))
            && !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphabetic())
        {
            if let Some(first) = seen.insert(key, i) {
                // Not last-wins: which one was meant is the person's call.
                problems.push(problem(
                    i as u32,
                    format!("{key} is set twice (also on line {}); keep one", first + 1),
                ));
                seen.insert(key, first);
            }
            settings.push((key.to_string(), value.trim().to_string(), i as u32));
        } else if !lines[i].trim().is_empty() && !is_preamble(lines[i]) {
            // Typed above the first heading: it would not be sent, so say so instead of
            // dropping it.
            problems.push(problem(
                i as u32,
                "text above the first ### heading is not sent; move it under a ### heading",
            ));
        }
        i += 1;
    }
    let mut run: Option<Vec<&str>> = None;
    let mut extra: Option<Map<String, Value>> = None;
    let flush = |run: &mut Option<Vec<&str>>,
                 extra: &mut Option<Map<String, Value>>,
                 blocks: &mut Vec<Block>| {
        if let Some(mut lines) = run.take() {
            if lines.first() == Some(&"") {
                lines.remove(0);
            }
            if lines.last() == Some(&"") {
                lines.pop();
            }
            blocks.push(Block::Text {
                text: lines
                    .iter()
                    .map(|l| unescape(l))
                    .collect::<Vec<_>>()
                    .join("\n"),
                extra: extra.take().unwrap_or_default(),
            });
        }
    };
    while i < lines.len() {
        let line = lines[i];
        if let Some(heading) = line.strip_prefix("### ")
            && matches!(heading, "system" | "user" | "assistant")
        {
            if let Some(section) = sections.last_mut() {
                flush(&mut run, &mut extra, &mut section.blocks);
            }
            sections.push(Section {
                heading: heading.into(),
                line: i as u32,
                meta: None,
                blocks: Vec::new(),
            });
        } else if sections.is_empty() {
            // Nothing outside sections after the settings but blank lines.
            if !line.trim().is_empty() {
                problems.push(problem(i as u32, "text outside a ### section"));
            }
        } else if line == FENCE {
            let section = sections.last_mut().expect("checked above");
            flush(&mut run, &mut extra, &mut section.blocks);
            match (lines.get(i + 1), lines.get(i + 2)) {
                (Some(body), Some(&FENCE_END)) => match serde_json::from_str::<Value>(body) {
                    Ok(v) if v.is_object() => {
                        let block: Block =
                            serde_json::from_value(v).unwrap_or_else(|_| Block::Other(Value::Null));
                        section.blocks.push(block);
                    }
                    Ok(_) => {
                        problems.push(problem(i as u32 + 1, "an mcp block must be a JSON object"))
                    }
                    Err(e) => problems.push(problem(
                        i as u32 + 1,
                        format!("this mcp block is not valid JSON: {e}"),
                    )),
                },
                _ => problems.push(problem(
                    i as u32,
                    "an mcp block is one line of JSON between ```mcp and ```",
                )),
            }
            i += 3;
            continue;
        } else if line == NEXT {
            let section = sections.last_mut().expect("checked above");
            flush(&mut run, &mut extra, &mut section.blocks);
        } else if let Some(meta) = line
            .strip_prefix(META)
            .and_then(|l| l.strip_suffix(META_END))
        {
            let section = sections.last_mut().expect("checked above");
            flush(&mut run, &mut extra, &mut section.blocks);
            match serde_json::from_str::<Map<String, Value>>(meta) {
                Ok(mut m) => match m.remove("message") {
                    Some(message_meta) if m.is_empty() => section.meta = Some(message_meta),
                    Some(_) => {
                        problems.push(problem(i as u32, "unexpected keys in a message marker"))
                    }
                    None => extra = Some(m),
                },
                Err(e) => problems.push(problem(
                    i as u32,
                    format!("this marker is not valid JSON: {e}"),
                )),
            }
        } else {
            run.get_or_insert_with(Vec::new).push(line);
        }
        i += 1;
    }
    if let Some(section) = sections.last_mut() {
        flush(&mut run, &mut extra, &mut section.blocks);
    }
    (Parsed { settings, sections }, problems)
}

fn setting_json<T: serde::de::DeserializeOwned>(
    key: &str,
    value: &str,
    line: u32,
    problems: &mut Vec<DraftProblem>,
) -> Option<T> {
    if value.is_empty() {
        return None;
    }
    match serde_json::from_str(value) {
        Ok(v) => Some(v),
        Err(e) => {
            problems.push(problem(line, format!("{key}: {e}")));
            None
        }
    }
}

/// Parses an edited request draft.
pub fn parse_request(
    text: &str,
) -> Result<(CreateMessageParams, RequestChoices), Vec<DraftProblem>> {
    let (parsed, mut problems) = parse(text);
    let mut choices = RequestChoices::default();
    let mut request = CreateMessageParams {
        messages: Vec::new(),
        model_preferences: None,
        system_prompt: None,
        include_context: None,
        temperature: None,
        max_tokens: 0,
        stop_sequences: None,
        metadata: None,
        tools: None,
        tool_choice: None,
    };
    let mut max_tokens = None;
    for (key, value, line) in &parsed.settings {
        let line = *line;
        match key.as_str() {
            "model" => {
                choices.model =
                    header_text(key, value, line, &mut problems).filter(|m| !m.is_empty())
            }
            "remember" => match value.as_str() {
                "session" => choices.remember_session = true,
                "no" | "" => {}
                other => problems.push(problem(
                    line,
                    format!("remember is \"no\" or \"session\", not \"{other}\""),
                )),
            },
            "maxTokens" => match value.parse::<u64>() {
                Ok(n) if n > 0 => max_tokens = Some(n),
                _ => problems.push(problem(line, "maxTokens must be a positive whole number")),
            },
            "temperature" => request.temperature = setting_json(key, value, line, &mut problems),
            "stopSequences" => {
                request.stop_sequences = setting_json(key, value, line, &mut problems)
            }
            "modelPreferences" => {
                request.model_preferences =
                    setting_json::<ModelPreferences>(key, value, line, &mut problems)
            }
            "includeContext" if value.is_empty() => request.include_context = None,
            "includeContext" => {
                request.include_context = header_text(key, value, line, &mut problems)
            }
            "metadata" => request.metadata = setting_json(key, value, line, &mut problems),
            "tools" => request.tools = setting_json(key, value, line, &mut problems),
            "toolChoice" => request.tool_choice = setting_json(key, value, line, &mut problems),
            other => problems.push(problem(line, format!("unknown setting \"{other}\""))),
        }
    }
    match max_tokens {
        Some(n) => request.max_tokens = n,
        None if problems.is_empty() => problems.push(problem(0, "maxTokens is missing")),
        None => {}
    }
    for (n, section) in parsed.sections.into_iter().enumerate() {
        match section.heading.as_str() {
            "system" if n == 0 => match section.blocks.as_slice() {
                [Block::Text { text, extra }] if extra.is_empty() => {
                    request.system_prompt = Some(text.clone())
                }
                [] => request.system_prompt = Some(String::new()),
                _ => problems.push(problem(
                    section.line,
                    "the system prompt is plain text only",
                )),
            },
            "system" => problems.push(problem(
                section.line,
                "### system must come before the messages",
            )),
            role => request.messages.push(SamplingMessage {
                role: if role == "user" {
                    Role::User
                } else {
                    Role::Assistant
                },
                content: section.blocks,
                meta: section.meta,
            }),
        }
    }
    if request.messages.is_empty() {
        problems.push(problem(
            0,
            "the request needs at least one ### user message",
        ));
    }
    if problems.is_empty() {
        Ok((request, choices))
    } else {
        Err(problems)
    }
}

/// Parses an edited answer draft.
pub fn parse_response(text: &str) -> Result<CreateMessageResult, Vec<DraftProblem>> {
    let (parsed, mut problems) = parse(text);
    let mut model = String::new();
    let mut stop_reason = None;
    for (key, value, line) in &parsed.settings {
        match key.as_str() {
            "model" => model = header_text(key, value, *line, &mut problems).unwrap_or_default(),
            "stopReason" if value.is_empty() => stop_reason = None,
            "stopReason" => stop_reason = header_text(key, value, *line, &mut problems),
            "Note" => {}
            other => problems.push(problem(*line, format!("unknown setting \"{other}\""))),
        }
    }
    if model.is_empty() {
        problems.push(problem(
            0,
            "model is missing (name the model, or \"manual\")",
        ));
    }
    let mut sections = parsed.sections.into_iter();
    let result = match (sections.next(), sections.next()) {
        (Some(section), None) if section.heading != "system" => Some(CreateMessageResult {
            role: if section.heading == "user" {
                Role::User
            } else {
                Role::Assistant
            },
            content: section.blocks,
            model,
            stop_reason,
        }),
        _ => {
            problems.push(problem(
                0,
                "the answer is exactly one ### assistant section",
            ));
            None
        }
    };
    match result {
        Some(r) if problems.is_empty() => Ok(r),
        _ => Err(problems),
    }
}

#[cfg(test)]
mod tests;
