//! The editable Markdown drafts of a sampling request and of the model's answer.
//!
//! A draft is a title, a short help paragraph, `key: value` settings, then one `### role` section
//! per message (and `### system` for the system prompt). Text is written as it is; every other
//! block (image, audio, `tool_use`, `tool_result`, anything newer) is a one-line JSON reference in a
//! ```` ```mcp ```` fence, kept unchanged unless the person edits it. Text lines that look like the
//! draft's own markers are escaped with a backslash, so render → parse is lossless.

use serde_json::{Map, Value};

use super::types::{
    Block, CreateMessageParams, CreateMessageResult, ModelPreferences, Role, SamplingMessage,
};
use crate::lsp::ext::DraftProblem;

const FENCE: &str = "```mcp";
const FENCE_END: &str = "```";
const NEXT: &str = "<!-- next block -->";
const META: &str = "<!-- mcp:text-meta ";
const META_END: &str = " -->";

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

fn json(v: &impl serde::Serialize) -> String {
    serde_json::to_string(v).unwrap_or_default()
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
                out.push(String::new());
                out.extend(text.split('\n').map(escape));
                out.push(String::new());
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

/// The request draft.
pub fn render_request(
    server: &str,
    request: &CreateMessageParams,
    choices: &RequestChoices,
) -> String {
    let mut out = vec![
        format!("# Sampling request from `{server}`"),
        String::new(),
        format!(
            "{server} asks for a model answer. Edit the messages, the system prompt and the settings below, then Accept to send them to the model, or Reject to refuse. Blocks in mcp fences (images, tool calls) are sent as they are unless you change them. Set remember to session to skip this step for {server} until the editor restarts."
        ),
        String::new(),
        format!("model: {}", choices.model.as_deref().unwrap_or("")),
        format!(
            "remember: {}",
            if choices.remember_session {
                "session"
            } else {
                "no"
            }
        ),
        format!("maxTokens: {}", request.max_tokens),
    ];
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
        out.push(format!("includeContext: {c}"));
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
        out.push(format!("Note: {}", note.replace('\n', " ")));
        out.push(String::new());
    }
    out.push(format!("model: {}", result.model));
    out.push(format!(
        "stopReason: {}",
        result.stop_reason.as_deref().unwrap_or("")
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

/// The renderers' own lines above the settings: the title, the help paragraph, a note.
fn is_preamble(line: &str) -> bool {
    line.starts_with("# ") || line.starts_with("Note: ") || line.contains("then Accept to send")
}

/// Splits a draft into settings and sections of blocks.
fn parse(text: &str) -> (Parsed, Vec<DraftProblem>) {
    let text = text.strip_suffix('\n').unwrap_or(text);
    let lines: Vec<&str> = text.split('\n').collect();
    let mut settings = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    let mut problems = Vec::new();
    let mut i = 0;
    // Settings: `key: value` lines before the first section.
    while i < lines.len() && !lines[i].starts_with("### ") {
        if let Some((key, value)) = lines[i]
            .split_once(": ")
            .or_else(|| lines[i].strip_suffix(':').map(|k| (k, "")))
            && !key.is_empty()
            && key.chars().all(|c| c.is_ascii_alphabetic())
        {
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
            "model" => choices.model = (!value.is_empty()).then(|| value.clone()),
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
            "includeContext" => {
                request.include_context = (!value.is_empty()).then(|| value.clone())
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
            "model" => model = value.clone(),
            "stopReason" => stop_reason = (!value.is_empty()).then(|| value.clone()),
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
