//! Sampling end to end in-process: the scripted editor edits both drafts; the server receives
//! exactly the person's answer; Reject and close end the call promptly.

mod support;

use serde_json::{Value, json};
use support::*;

const DRAFT: &str = "mcp-sidecar/editDraft";

async fn start(servers: Value) -> std::sync::Arc<TestEditor> {
    // The audit log goes to a private state folder.
    static STATE: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    let state = STATE.get_or_init(|| tempfile::tempdir().unwrap());
    // SAFETY: the same value in every test of this binary, set before servers start.
    unsafe { std::env::set_var("XDG_STATE_HOME", state.path()) };
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(&[], json!({"servers": servers}), full_ui())
        .await;
    for name in servers.as_object().unwrap().keys() {
        editor.wait_status(mark, name, "running").await;
    }
    editor
}

fn call(
    editor: &std::sync::Arc<TestEditor>,
    server: &str,
    tool: &str,
) -> tokio::task::JoinHandle<Value> {
    let editor = editor.clone();
    let arg = json!({"server": server, "tool": tool, "arguments": {}});
    tokio::spawn(async move { editor.command_response("mcp-sidecar.callTool", arg).await })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_drafts_are_edited_and_the_server_gets_the_persons_answer() {
    let editor = start(json!({
        "legacy": demo_server("both", Some("2025-11-25")),
        "modern": demo_server("both", Some("2026-07-28")),
    }))
    .await;
    for server in ["legacy", "modern"] {
        let pending = call(&editor, server, "analyze_flights");
        let request = editor.next_prompt().await;
        assert_eq!(request["method"], DRAFT);
        assert_eq!(request["params"]["kind"], "samplingRequest");
        let text = request["params"]["text"].as_str().unwrap();
        assert!(
            text.contains("maxTokens: 400") && text.contains("temperature: 0.2"),
            "{text}"
        );
        assert!(
            text.contains("### system") && text.contains("### user"),
            "{text}"
        );
        let edited = text.replace("maxTokens: 400", "maxTokens: 64");
        editor
            .respond(&request, json!({"action": "accept", "text": edited}))
            .await;
        let answer = editor.next_prompt().await;
        assert_eq!(answer["params"]["kind"], "samplingResponse");
        let draft = answer["params"]["text"].as_str().unwrap();
        assert!(draft.contains("model: manual"), "{draft}");
        let written = format!(
            "{}Flight 7 (LIS→OSL, 89 EUR) is the best value.\n",
            draft.trim_end_matches('\n').to_string() + "\n"
        );
        editor
            .respond(&answer, json!({"action": "accept", "text": written}))
            .await;
        let response = pending.await.unwrap();
        let result = &response["result"];
        assert_eq!(result["isError"], false, "{response}");
        assert_eq!(
            structured(result),
            json!({"model": "manual", "stopReason": "endTurn", "text": "Flight 7 (LIS→OSL, 89 EUR) is the best value."}),
            "{server}"
        );
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reject_and_close_end_the_call_promptly() {
    let editor = start(json!({
        "legacy": demo_server("both", Some("2025-11-25")),
        "modern": demo_server("both", Some("2026-07-28")),
    }))
    .await;
    for (server, answer) in [
        ("legacy", json!({"action": "reject"})),
        ("modern", json!({"action": "reject"})),
        ("legacy", Value::Null),
        ("modern", Value::Null),
    ] {
        let pending = call(&editor, server, "analyze_flights");
        let request = editor.next_prompt().await;
        editor.respond(&request, answer.clone()).await;
        let started = std::time::Instant::now();
        let response = tokio::time::timeout(std::time::Duration::from_secs(5), pending)
            .await
            .unwrap()
            .unwrap();
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        if server == "legacy" {
            // The server got JSON-RPC error -1 and turned it into a tool error.
            assert_eq!(response["result"]["isError"], true, "{response}");
            assert!(
                response["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap()
                    .contains("User rejected sampling request"),
                "{response}"
            );
        } else {
            // 2026-07-28: no retry; the command fails saying the person refused.
            assert_eq!(response["error"]["data"]["kind"], "refused", "{response}");
            assert!(
                response["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("refused"),
                "{response}"
            );
        }
    }
    // Every exchange was audited.
    let opening = {
        let editor = editor.clone();
        tokio::spawn(async move {
            editor
                .command("mcp-sidecar.openSamplingLog", json!({}))
                .await
        })
    };
    let show = editor.next_request("window/showDocument").await;
    assert_eq!(show["params"]["external"], false);
    editor.respond(&show, json!({"success": true})).await;
    let opened = opening.await.unwrap();
    assert_eq!(opened["opened"], true);
    let path = opened["path"].as_str().unwrap().to_string();
    assert!(
        show["params"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("sampling.jsonl")
    );
    let log = std::fs::read_to_string(path).unwrap();
    assert!(
        log.lines()
            .filter(|l| l.contains("\"outcome\":\"refused\""))
            .count()
            >= 4,
        "{log}"
    );
    editor.shutdown_and_exit().await;
}
