//! A tool's missing arguments, asked with the same engine: a flat object of primitives through
//! the step flow, anything else as a `toolArguments` JSON draft validated against the tool's
//! `inputSchema` and re-opened with `problems` until it is valid or rejected.

use serde_json::{Map, Value};

use super::{Form, Outcome, flow, validate};
use crate::contract::{DraftKind, DraftProblem, EditDraftParams, EditDraftResult};
use crate::ui::Prompter;
pub use flow::{Suggest, TYPE_LABEL};

/// Why no arguments came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoArguments {
    /// The person said no (a draft's Reject).
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
            suggest: None,
            review: flow::Review::OwnCall(format!("Call {tool}")),
        };
        return match flow::run(ui, &cx, &form, schema).await {
            Outcome::Accept(content) => Ok(content.unwrap_or_default()),
            Outcome::Decline => Err(NoArguments::Declined),
            Outcome::Cancel => Err(NoArguments::Cancelled),
        };
    }
    draft(ui, server, tool, schema).await
}

/// One argument a prompt declares (`prompts/list`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PromptArgument {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// A prompt's arguments that `given` lacks, asked through the step flow as text fields (every
/// declared argument when `given` is `None`, else the required ones it lacks), with `suggest`'s
/// values offered as choices (free text still allowed). Returns `given` with the answers.
pub async fn ask_prompt(
    ui: &dyn Prompter,
    server: &str,
    prompt: &str,
    declared: &[PromptArgument],
    given: Option<Map<String, Value>>,
    suggest: Option<&dyn Suggest>,
) -> Result<Map<String, Value>, NoArguments> {
    let ask_all = given.is_none();
    let mut arguments = given.unwrap_or_default();
    let missing: Vec<&PromptArgument> = declared
        .iter()
        .filter(|a| !a.name.is_empty())
        .filter(|a| (ask_all || a.required) && !arguments.contains_key(&a.name))
        .collect();
    if missing.is_empty() {
        return Ok(arguments);
    }
    let mut properties = Map::new();
    for a in &missing {
        let mut property = serde_json::json!({"type": "string"});
        if let Some(title) = &a.title {
            property["title"] = title.clone().into();
        }
        if let Some(description) = &a.description {
            property["description"] = description.clone().into();
        }
        properties.insert(a.name.clone(), property);
    }
    let required: Vec<&str> = missing
        .iter()
        .filter(|a| a.required)
        .map(|a| a.name.as_str())
        .collect();
    let schema =
        serde_json::json!({"type": "object", "properties": properties, "required": required});
    // Over the form's caps (too many arguments, names too long): the person cannot be asked.
    let form = Form::parse(&schema).map_err(|_| NoArguments::Cancelled)?;
    let message = format!("arguments for prompt {prompt}");
    let cx = flow::Context {
        server,
        title: crate::ui::title(ui, server, &message),
        suggest,
        review: flow::Review::OwnCall(format!("Get prompt {prompt}")),
    };
    match flow::run(ui, &cx, &form, &schema).await {
        Outcome::Accept(content) => {
            arguments.extend(content.unwrap_or_default());
            Ok(arguments)
        }
        Outcome::Decline => Err(NoArguments::Declined),
        Outcome::Cancel => Err(NoArguments::Cancelled),
    }
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
    use crate::testing::Script;
    use serde_json::json;

    /// Names that start with the typed... nothing typed yet: every name, "Dr." when formal.
    struct Names;
    impl Suggest for Names {
        fn suggest<'a>(
            &'a self,
            field: &'a str,
            earlier: Map<String, Value>,
        ) -> futures::future::BoxFuture<'a, Vec<String>> {
            Box::pin(async move {
                match field {
                    "name" if earlier.get("style") == Some(&json!("formal")) => {
                        vec!["Dr. Alice".into()]
                    }
                    "name" => vec!["Alice".into(), "Bob".into()],
                    _ => vec![],
                }
            })
        }
    }

    fn greet() -> Vec<PromptArgument> {
        vec![
            PromptArgument {
                name: "style".into(),
                ..Default::default()
            },
            PromptArgument {
                name: "name".into(),
                description: Some("who".into()),
                required: true,
                ..Default::default()
            },
        ]
    }

    #[tokio::test]
    async fn prompt_arguments_offer_suggestions_and_free_text() {
        // Every argument when none are given: style typed, name picked from the suggestions
        // (which saw style), then Submit.
        let ui = Script::new(vec![
            json!({"value": "formal"}),
            json!({"selected": [0]}),
            json!({"selected": [0]}),
        ]);
        let got = ask_prompt(&ui, "srv", "greet", &greet(), None, Some(&Names)).await;
        assert_eq!(
            got,
            Ok(json!({"style": "formal", "name": "Dr. Alice"})
                .as_object()
                .cloned()
                .unwrap())
        );
        let shown = ui.shown();
        assert_eq!(shown[0]["kind"], "input", "{shown:#?}");
        assert_eq!(
            shown[0]["params"]["title"],
            "srv: arguments for prompt greet"
        );
        assert_eq!(shown[1]["kind"], "pick");
        let labels: Vec<&str> = shown[1]["params"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["Dr. Alice", TYPE_LABEL]);
        // Only the missing required one when some are given; "type a value" opens the box.
        let ui = Script::new(vec![
            json!({"selected": [2]}),
            json!({"value": "Zed"}),
            json!({"selected": [0]}),
        ]);
        let given = json!({"style": "casual"}).as_object().cloned();
        let got = ask_prompt(&ui, "srv", "greet", &greet(), given, Some(&Names)).await;
        assert_eq!(got.unwrap()["name"], "Zed");
        assert_eq!(ui.shown().len(), 3);
        // Nothing missing: nothing asked.
        let ui = Script::new(vec![]);
        let given = json!({"name": "Ann"}).as_object().cloned();
        assert!(
            ask_prompt(&ui, "srv", "greet", &greet(), given, None)
                .await
                .is_ok()
        );
        // Escape is cancel, and so is the review's Cancel: the person's own request has nobody
        // to decline.
        let ui = Script::new(vec![Value::Null]);
        let given = Some(Map::new());
        let got = ask_prompt(&ui, "srv", "greet", &greet(), given.clone(), None).await;
        assert_eq!(got, Err(NoArguments::Cancelled));
        let ui = Script::new(vec![json!({"value": "Ann"}), json!({"selected": [2]})]);
        let got = ask_prompt(&ui, "srv", "greet", &greet(), given, None).await;
        assert_eq!(got, Err(NoArguments::Cancelled));
        assert_eq!(
            labels_of(&ui.shown()[1]),
            ["Get prompt greet", "Change name", "Cancel"]
        );
    }

    fn labels_of(shown: &Value) -> Vec<String> {
        shown["params"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    }

    #[tokio::test]
    async fn the_persons_own_call_is_reviewed_with_the_persons_choices() {
        let schema = json!({"type": "object", "properties": {
            "cabin": {"type": "string", "oneOf": [
                {"const": "premium", "title": "Premium economy"},
                {"const": "first", "title": "First"}]}},
            "required": ["cabin"]});
        let ui = Script::new(vec![json!({"selected": [0]}), json!({"selected": [0]})]);
        let got = ask(&ui, "demo", "book", &schema).await.unwrap();
        assert_eq!(got["cabin"], "premium");
        let review = &ui.shown()[1];
        assert_eq!(
            labels_of(review),
            ["Call book", "Change cabin", "Cancel"],
            "no Decline telling demo no: {review}"
        );
        assert_eq!(
            review["params"]["items"][1]["description"],
            "Premium economy"
        );
        // Cancel on the review: no call, nothing declined.
        let ui = Script::new(vec![json!({"selected": [1]}), json!({"selected": [2]})]);
        assert_eq!(
            ask(&ui, "demo", "book", &schema).await,
            Err(NoArguments::Cancelled)
        );
    }

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
