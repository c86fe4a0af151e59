//! Resources, prompts and completions through the editor contract, against real servers:
//! server-everything over stdio (its static documents, templates, prompts with arguments,
//! completions and subscriptions) and the demo server (no resources capability). Ignored by a
//! plain `cargo test` where they need peers; the interop tier runs them.

use crate::support;

use serde_json::{Value, json};
use support::*;

async fn everything() -> std::sync::Arc<TestEditor> {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"everything": {"command": "node", "args": [peer("MCP_EVERYTHING_JS"), "stdio"]}}}),
            full_ui(),
        )
        .await;
    editor.wait_status(mark, "everything", "running").await;
    editor
}

fn rows(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not rows: {value}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_resources_templates_and_reads() {
    let editor = everything().await;
    let listed = editor.command("mcp-sidecar.listResources", json!({})).await;
    let documents: Vec<&Value> = rows(&listed)
        .iter()
        .filter(|r| r["server"] == "everything")
        .collect();
    assert!(!documents.is_empty(), "{listed}");
    let doc = documents
        .iter()
        .find(|r| r["mimeType"] == "text/markdown")
        .unwrap_or_else(|| panic!("a markdown document: {listed}"));
    let uri = doc["uri"].as_str().unwrap();
    assert!(uri.starts_with("demo://resource/static/document/"), "{uri}");
    let read = editor
        .command(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    let content = &read["contents"][0];
    assert_eq!(content["uri"], uri, "{read}");
    assert!(
        !content["text"].as_str().unwrap_or_default().is_empty(),
        "{read}"
    );

    let templates = editor
        .command(
            "mcp-sidecar.listResourceTemplates",
            json!({"server": "everything"}),
        )
        .await;
    let text = rows(&templates)
        .iter()
        .find(|t| t["name"] == "Dynamic Text Resource")
        .unwrap_or_else(|| panic!("{templates}"));
    let template = text["uriTemplate"].as_str().unwrap();
    assert!(template.ends_with("/{resourceId}"), "{template}");
    let dynamic = template.replace("{resourceId}", "3");
    let read = editor
        .command(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": dynamic}),
        )
        .await;
    assert_eq!(read["contents"][0]["uri"], dynamic.as_str(), "{read}");

    // A blob comes as base64, as the server sent it.
    let blob_template = rows(&templates)
        .iter()
        .find(|t| t["name"] == "Dynamic Blob Resource")
        .unwrap_or_else(|| panic!("{templates}"))["uriTemplate"]
        .as_str()
        .unwrap()
        .replace("{resourceId}", "1");
    let read = editor
        .command(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": blob_template}),
        )
        .await;
    assert!(read["contents"][0]["blob"].is_string(), "{read}");

    // An unknown URI is the server's error, named.
    let unknown = editor
        .command_response(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": "demo://no/such/thing"}),
        )
        .await;
    assert_eq!(unknown["error"]["data"]["kind"], "serverError", "{unknown}");
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_prompts_and_completions() {
    let editor = everything().await;
    let prompts = editor
        .command("mcp-sidecar.listPrompts", json!({"server": "everything"}))
        .await;
    let args = rows(&prompts)
        .iter()
        .find(|p| p["name"] == "args-prompt")
        .unwrap_or_else(|| panic!("{prompts}"));
    let arguments = args["arguments"].as_array().unwrap();
    assert!(
        arguments
            .iter()
            .any(|a| a["name"] == "city" && a["required"] == true),
        "{args}"
    );
    let got = editor
        .command(
            "mcp-sidecar.getPrompt",
            json!({"server": "everything", "name": "args-prompt", "arguments": {"city": "Paris"}}),
        )
        .await;
    assert_eq!(
        got["messages"][0]["content"]["text"], "What's weather in Paris?",
        "{got}"
    );
    let completed = editor
        .command(
            "mcp-sidecar.complete",
            json!({"server": "everything", "ref": {"type": "ref/prompt", "name": "completable-prompt"}, "argument": {"name": "department", "value": "Eng"}}),
        )
        .await;
    assert_eq!(
        completed["completion"]["values"],
        json!(["Engineering"]),
        "{completed}"
    );
    // The context carries earlier arguments.
    let completed = editor
        .command(
            "mcp-sidecar.complete",
            json!({"server": "everything", "ref": {"type": "ref/prompt", "name": "completable-prompt"}, "argument": {"name": "name", "value": ""}, "context": {"arguments": {"department": "Sales"}}}),
        )
        .await;
    let values = completed["completion"]["values"].as_array().unwrap();
    assert!(!values.is_empty(), "{completed}");
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_subscription_updates_reach_the_editor() {
    let editor = everything().await;
    let uri = "demo://resource/dynamic/text/1";
    let mark = editor.mark();
    let subscribed = editor
        .command(
            "mcp-sidecar.subscribeResource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    assert_eq!(subscribed["subscribed"], true, "{subscribed}");
    call(
        &editor,
        "everything",
        "toggle-subscriber-updates",
        json!({}),
    )
    .await;
    let update = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/resourceUpdated")
        .await;
    assert_eq!(
        update["params"],
        json!({"server": "everything", "uri": uri}),
        "{update}"
    );
    let unsubscribed = editor
        .command(
            "mcp-sidecar.unsubscribeResource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    assert_eq!(unsubscribed["subscribed"], false);
    editor.shutdown_and_exit().await;
}

/// The demo server offers tools only: its lists are empty, and a read is refused with a reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_resources_has_none_and_says_so() {
    for era in ["legacy", "modern"] {
        let editor = in_process();
        let mark = editor.mark();
        editor
            .initialize(
                &[],
                json!({"servers": {"demo": demo_server(era, None)}}),
                json!({}),
            )
            .await;
        editor.wait_status(mark, "demo", "running").await;
        for command in [
            "mcp-sidecar.listResources",
            "mcp-sidecar.listResourceTemplates",
            "mcp-sidecar.listPrompts",
        ] {
            let listed = editor.command(command, json!({"server": "demo"})).await;
            assert_eq!(listed, json!([]), "{era} {command}");
        }
        let read = editor
            .command_response(
                "mcp-sidecar.readResource",
                json!({"server": "demo", "uri": "file:///etc/passwd"}),
            )
            .await;
        assert!(read["error"]["data"]["kind"].is_string(), "{era}: {read}");
        let complete = editor
            .command_response(
                "mcp-sidecar.complete",
                json!({"server": "demo", "ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
            )
            .await;
        assert_eq!(
            complete["error"]["data"]["kind"], "refused",
            "{era}: {complete}"
        );
        editor.shutdown_and_exit().await;
    }
}
