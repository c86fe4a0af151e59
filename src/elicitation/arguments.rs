//! A tool's missing arguments, asked with the same engine: a flat object of primitives through
//! the step flow, anything else as a `toolArguments` JSON draft validated against the tool's
//! `inputSchema` and re-opened with `problems` until it is valid or rejected.

use serde_json::{Map, Value};

use super::{Form, Outcome, flow, validate};
use crate::contract::{DraftKind, DraftProblem, EditDraftParams, EditDraftResult};
use crate::ui::Prompter;

/// Why no arguments came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoArguments {
    /// The person said no (Decline, Reject).
    Declined,
    /// The person dismissed the prompt.
    Cancelled,
}

pub async fn ask(
    ui: &dyn Prompter,
    server: &str,
    tool: &str,
    schema: &Value,
) -> Result<Map<String, Value>, NoArguments> {
    let has_properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if !has_properties {
        return Ok(Map::new());
    }
    if let Ok(form) = Form::parse(schema) {
        let message = format!("arguments for {tool}");
        let cx = flow::Context {
            server,
            title: crate::ui::title(ui, server, &message),
        };
        return match flow::run(ui, &cx, &form, schema).await {
            Outcome::Accept(content) => Ok(content.unwrap_or_default()),
            Outcome::Decline => Err(NoArguments::Declined),
            Outcome::Cancel => Err(NoArguments::Cancelled),
        };
    }
    draft(ui, server, tool, schema).await
}

/// The JSON draft: a skeleton of every property, edited by the person.
async fn draft(
    ui: &dyn Prompter,
    server: &str,
    tool: &str,
    schema: &Value,
) -> Result<Map<String, Value>, NoArguments> {
    let mut text = skeleton(schema);
    let mut problems = Vec::new();
    loop {
        let answer = ui
            .edit_draft(EditDraftParams {
                id: String::new(),
                server: Some(server.to_string()),
                kind: DraftKind::ToolArguments,
                title: format!("{server}: arguments for {tool}"),
                language: "json".into(),
                text: text.clone(),
                problems: std::mem::take(&mut problems),
            })
            .await;
        match answer {
            Some(EditDraftResult::Accept { text: edited }) => match check(schema, &edited) {
                Ok(arguments) => return Ok(arguments),
                Err(found) => {
                    problems = found;
                    text = edited;
                }
            },
            Some(EditDraftResult::Reject) => return Err(NoArguments::Declined),
            None => return Err(NoArguments::Cancelled),
        }
    }
}

/// Parses and validates an edited draft; problems carry 0-based lines.
pub fn check(schema: &Value, text: &str) -> Result<Map<String, Value>, Vec<DraftProblem>> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        vec![DraftProblem {
            line: e.line().saturating_sub(1) as u32,
            message: format!("not valid JSON: {e}"),
        }]
    })?;
    let Value::Object(arguments) = value else {
        return Err(vec![DraftProblem {
            line: 0,
            message: "the arguments must be a JSON object".into(),
        }]);
    };
    validate(schema, &arguments).map_err(|e| {
        e.split("; ")
            .map(|m| DraftProblem {
                line: line_of(text, m),
                message: m.to_string(),
            })
            .collect::<Vec<_>>()
    })?;
    Ok(arguments)
}

/// The line of the property a validation message names (`/name: ...`), else 0.
fn line_of(text: &str, message: &str) -> u32 {
    let name = message
        .strip_prefix('/')
        .and_then(|m| m.split([':', '/']).next())
        .unwrap_or_default();
    if name.is_empty() {
        return 0;
    }
    let quoted = format!("\"{name}\"");
    text.lines().position(|l| l.contains(&quoted)).unwrap_or(0) as u32
}

/// `{"a": <default or a typed placeholder>, ...}` for every property, pretty-printed.
fn skeleton(schema: &Value) -> String {
    let props = schema.get("properties").and_then(Value::as_object);
    let object: Map<String, Value> = props
        .into_iter()
        .flatten()
        .map(|(name, p)| {
            let value = p.get("default").cloned().unwrap_or_else(|| {
                match p.get("type").and_then(Value::as_str) {
                    Some("string") => Value::String(String::new()),
                    Some("number" | "integer") => Value::from(0),
                    Some("boolean") => Value::Bool(false),
                    Some("array") => Value::Array(Vec::new()),
                    Some("object") => Value::Object(Map::new()),
                    _ => Value::Null,
                }
            });
            (name.clone(), value)
        })
        .collect();
    serde_json::to_string_pretty(&Value::Object(object)).unwrap_or_else(|_| "{}".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drafts_are_checked_with_lines() {
        let schema = json!({"type": "object", "properties": {
            "query": {"type": "string"}, "filter": {"type": "object", "properties": {"n": {"type": "integer"}}}},
            "required": ["query"]});
        let text = skeleton(&schema);
        assert!(
            text.contains("\"query\": \"\"") && text.contains("\"filter\": {}"),
            "{text}"
        );
        assert!(check(&schema, "{\"query\": \"x\", \"filter\": {\"n\": 2}}").is_ok());
        let bad = check(&schema, "{\n  \"query\": 3\n}").unwrap_err();
        assert_eq!(bad[0].line, 1, "{bad:?}");
        let broken = check(&schema, "{\n\n  \"query\": \n}").unwrap_err();
        assert_eq!(broken[0].line, 3);
        assert!(broken[0].message.starts_with("not valid JSON"));
        assert_eq!(
            check(&schema, "[1]").unwrap_err()[0].message,
            "the arguments must be a JSON object"
        );
    }
}
