//! Keeps `docs/lsp-extensions.md` and `src/contract/mod.rs` in step: every method and command has a
//! section, every name the page mentions exists, every field of every params type is documented in
//! its section, and every example parses into the Rust type and serializes back unchanged.

use std::collections::BTreeSet;

use mcp_sidecar::contract::*;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

const DOC: &str = include_str!("../../docs/lsp-extensions.md");

/// The text of the `### \`name\`` section.
fn section(name: &str) -> &'static str {
    let heading = format!("### `{name}`");
    let start = DOC
        .find(&heading)
        .unwrap_or_else(|| panic!("no section for {name}"));
    let rest = &DOC[start + heading.len()..];
    let end = rest
        .find("\n### ")
        .or_else(|| rest.find("\n## "))
        .unwrap_or(rest.len());
    &rest[..end]
}

/// The example tagged ```json <tag>.
fn example(tag: &str) -> Value {
    let fence = format!("```json {tag}\n");
    let start = DOC
        .find(&fence)
        .unwrap_or_else(|| panic!("no example {tag}"))
        + fence.len();
    let end = DOC[start..].find("```").unwrap() + start;
    serde_json::from_str(&DOC[start..end]).unwrap_or_else(|e| panic!("example {tag}: {e}"))
}

/// Drops `false` and `null` members: the code leaves defaults out, the docs may spell them.
fn normalize(v: Value) -> Value {
    match v {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !matches!(v, Value::Bool(false) | Value::Null))
                .map(|(k, v)| (k, normalize(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalize).collect()),
        other => other,
    }
}

fn round_trips<T: Serialize + DeserializeOwned>(tag: &str) {
    let doc = example(tag);
    let parsed: T = serde_json::from_value(doc.clone()).unwrap_or_else(|e| panic!("{tag}: {e}"));
    let back = serde_json::to_value(parsed).unwrap();
    assert_eq!(
        normalize(back),
        normalize(doc),
        "example {tag} does not match the Rust type"
    );
}

/// Every property of `T` is named in backticks in the section of `name`.
fn fields_documented<T: JsonSchema>(name: &str) {
    let schema = serde_json::to_value(schemars::schema_for!(T)).unwrap();
    let text = section(name);
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    assert!(!props.is_empty(), "{name}: no properties found");
    for field in props.keys() {
        assert!(
            text.contains(&format!("`{field}`")) || text.contains(&format!("`{field}?`")),
            "{name}: field `{field}` is not documented"
        );
    }
}

#[test]
fn every_method_and_command_has_exactly_one_section() {
    let headings: BTreeSet<&str> = DOC
        .lines()
        .filter_map(|l| l.strip_prefix("### `").and_then(|l| l.strip_suffix('`')))
        .collect();
    let code: BTreeSet<&str> = METHODS.iter().chain(COMMANDS).copied().collect();
    assert_eq!(headings, code);
}

#[test]
fn every_name_the_page_mentions_exists() {
    let code: BTreeSet<&str> = METHODS.iter().chain(COMMANDS).copied().collect();
    for (i, _) in DOC.match_indices("`mcp-sidecar") {
        let rest = &DOC[i + 1..];
        if !rest["mcp-sidecar".len()..].starts_with(['/', '.']) {
            continue;
        }
        let name = &rest[..rest.find('`').unwrap()];
        assert!(
            code.contains(name),
            "the page mentions {name}, which the code does not have"
        );
    }
}

#[test]
fn params_fields_are_documented() {
    fields_documented::<InputBoxParams>(INPUT_BOX);
    fields_documented::<QuickPickParams>(QUICK_PICK);
    fields_documented::<QuickPickItem>(QUICK_PICK);
    fields_documented::<EditDraftParams>(EDIT_DRAFT);
    fields_documented::<DraftProblem>(EDIT_DRAFT);
    fields_documented::<ServerStatusParams>(SERVER_STATUS);
    fields_documented::<ServerSummary>(CMD_LIST_SERVERS);
    fields_documented::<ToolSummary>(CMD_LIST_TOOLS);
    fields_documented::<CallToolArgs>(CMD_CALL_TOOL);
    fields_documented::<RestartServerArgs>(CMD_RESTART_SERVER);
    fields_documented::<ListToolsArgs>(CMD_LIST_TOOLS);
}

#[test]
fn examples_match_the_rust_types() {
    round_trips::<EditorCapabilities>("capabilities");
    round_trips::<InputBoxParams>("inputBox.params");
    round_trips::<Option<InputBoxResult>>("inputBox.result");
    round_trips::<QuickPickParams>("quickPick.params");
    round_trips::<Option<QuickPickResult>>("quickPick.result");
    round_trips::<EditDraftParams>("editDraft.params");
    round_trips::<Option<EditDraftResult>>("editDraft.result");
    round_trips::<CancelPromptParams>("cancelPrompt.params");
    round_trips::<ClipboardParams>("clipboard.params");
    round_trips::<ServerStatusParams>("serverStatus.params");
    round_trips::<Vec<ServerSummary>>("listServers.result");
    round_trips::<Vec<ToolSummary>>("listTools.result");
    round_trips::<CallToolArgs>("callTool.argument");
    round_trips::<RestartServerArgs>("restartServer.argument");
}
