//! A command's result as a Markdown document, for editors with no plugin to show it: a tool's
//! result, a resource's contents, a prompt's messages. Server text goes in as text (fenced when
//! it is JSON); binary content is named with its type and size, not written out.

use serde_json::Value;

use crate::contract::{self, shown};

/// The document's text for `command`'s result, or `None` when the command's result is not one
/// a person reads (a listing, a decision).
pub fn render(command: &str, heading: &str, result: &Value) -> Option<String> {
    let mut out = format!("# {}\n\n", shown::line(heading, shown::MAX_MESSAGE));
    match command {
        contract::CMD_CALL_TOOL => {
            if result.get("isError") == Some(&Value::Bool(true)) {
                out.push_str("**The tool reported an error.**\n\n");
            }
            contents(&mut out, result.get("content"));
            if let Some(structured) = result.get("structuredContent") {
                out.push_str("## Structured content\n\n");
                fenced(&mut out, "json", &pretty(structured));
            }
        }
        contract::CMD_READ_RESOURCE => {
            for item in array(result.get("contents")) {
                if let Some(uri) = item.get("uri").and_then(Value::as_str) {
                    out.push_str(&format!("## {}\n\n", shown::line(uri, shown::MAX_TEXT)));
                }
                resource(&mut out, item);
            }
        }
        contract::CMD_GET_PROMPT => {
            if let Some(d) = result.get("description").and_then(Value::as_str) {
                out.push_str(&format!("{}\n\n", shown::line(d, shown::MAX_MESSAGE)));
            }
            for message in array(result.get("messages")) {
                let role = message.get("role").and_then(Value::as_str).unwrap_or("?");
                out.push_str(&format!("## {}\n\n", shown::line(role, shown::MAX_NAME)));
                let content = message.get("content");
                match content {
                    Some(Value::Array(_)) => contents(&mut out, content),
                    Some(one) => contents(&mut out, Some(&Value::Array(vec![one.clone()]))),
                    None => {}
                }
            }
        }
        _ => return None,
    }
    Some(out)
}

fn array(value: Option<&Value>) -> &[Value] {
    value.and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// MCP content blocks.
fn contents(out: &mut String, content: Option<&Value>) {
    for block in array(content) {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block.get("text").and_then(Value::as_str).unwrap_or("");
                text_block(out, text);
            }
            Some("resource") => {
                if let Some(r) = block.get("resource") {
                    resource(out, r);
                }
            }
            Some("resource_link") => {
                let uri = block.get("uri").and_then(Value::as_str).unwrap_or("");
                out.push_str(&format!(
                    "Resource: {}\n\n",
                    shown::line(uri, shown::MAX_TEXT)
                ));
            }
            Some(kind @ ("image" | "audio")) => binary(out, kind, block, "data"),
            _ => fenced(out, "json", &pretty(block)),
        }
    }
}

/// One resource's contents: its text, or its blob named.
fn resource(out: &mut String, item: &Value) {
    match item.get("text").and_then(Value::as_str) {
        Some(text) => text_block(out, text),
        None => binary(out, "blob", item, "blob"),
    }
}

fn binary(out: &mut String, kind: &str, item: &Value, field: &str) {
    let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("?");
    let size = item
        .get(field)
        .and_then(Value::as_str)
        .map_or(0, |b| b.len() / 4 * 3);
    out.push_str(&format!(
        "({kind}, {}, about {size} bytes)\n\n",
        shown::line(mime, shown::MAX_NAME)
    ));
}

/// Text as it came, fenced when it is JSON (so it cannot start headings of its own).
fn text_block(out: &mut String, text: &str) {
    match serde_json::from_str::<Value>(text) {
        Ok(value) if value.is_object() || value.is_array() => fenced(out, "json", &pretty(&value)),
        _ => {
            out.push_str(text);
            out.push_str("\n\n");
        }
    }
}

fn fenced(out: &mut String, language: &str, text: &str) {
    let fence = "`".repeat(3.max(longest_run(text, '`') + 1));
    out.push_str(&format!("{fence}{language}\n{text}\n{fence}\n\n"));
}

fn longest_run(text: &str, c: char) -> usize {
    let (mut best, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        best = best.max(run);
    }
    best
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_result_reads_as_markdown_with_its_error_and_structured_content() {
        let result = json!({"isError": true, "content": [
            {"type": "text", "text": "failed: ```"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "text", "text": "{\"a\": 1}"}],
            "structuredContent": {"b": "```"}});
        let text = render(contract::CMD_CALL_TOOL, "demo: add", &result).unwrap();
        assert!(
            text.starts_with("# demo: add\n\n**The tool reported an error.**"),
            "{text}"
        );
        assert!(text.contains("(image, image/png, about 3 bytes)"), "{text}");
        assert!(text.contains("```json\n{\n  \"a\": 1\n}\n```"), "{text}");
        // A fence in the content cannot close the block it is in.
        assert!(
            text.contains("````json\n{\n  \"b\": \"```\"\n}\n````"),
            "{text}"
        );
        assert_eq!(render(contract::CMD_LIST_TOOLS, "x", &result), None);
    }
}
