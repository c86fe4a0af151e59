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
    spawn_call_response(editor, server, tool, json!({}))
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
        // Exactly 0.2, not the f32 widening 0.20000000298023224.
        assert!(
            text.contains("\nmaxTokens: 400\ntemperature: 0.2\n"),
            "{text}"
        );
        assert!(
            text.contains("### system") && text.contains("### user"),
            "{text}"
        );
        assert!(
            text.contains("\nGoes to: no model (provider manual): you write the answer next.\n"),
            "the draft names where it goes: {text}"
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
    let log = std::fs::read_to_string(&path).unwrap();
    let refused: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("\"outcome\":\"refused\""))
        .collect();
    assert!(refused.len() >= 4, "{log}");
    // Refusals are summaries: who and why, with sizes, not what the server asked.
    for line in refused {
        assert!(
            !line.contains("concise travel assistant") && line.contains("\"summary\":true"),
            "{line}"
        );
    }
    // Private: 0600 in a 0700 directory.
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let path = std::path::Path::new(&path);
    assert_eq!(mode(path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    editor.shutdown_and_exit().await;
}

/// A local OpenAI-compatible endpoint: answers `/v1/chat/completions` with a fixed reply, or
/// with HTTP 500 when `fail` is set; records the request bodies.
async fn fake_openai(fail: bool) -> (String, std::sync::Arc<std::sync::Mutex<Vec<Value>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let body = loop {
                    let n = socket.read(&mut chunk).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length: usize = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + length {
                            break buf[end + 4..end + 4 + length].to_vec();
                        }
                    }
                };
                log.lock()
                    .unwrap()
                    .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
                let (status, reply) = if fail {
                    (
                        "500 Internal Server Error",
                        json!({"error": {"message": "the GPU caught fire"}}),
                    )
                } else {
                    (
                        "200 OK",
                        json!({"model": "test-model", "choices": [{"index": 0, "finish_reason": "stop",
                        "message": {"role": "assistant", "content": "Flight 7 is the best value."}}]}),
                    )
                };
                let body = reply.to_string();
                let response = format!(
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (url, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_provider_drafts_the_answer_and_its_failures_show_in_the_draft() {
    for fail in [false, true] {
        let (url, seen) = fake_openai(fail).await;
        let editor = in_process();
        let mark = editor.mark();
        editor
            .initialize(
                &[],
                json!({"servers": {"demo": demo_server("both", None)},
                       "sampling": {"provider": "openai", "openai": {"baseUrl": url, "model": "test-model", "stream": false},
                                    "models": [{"name": "test-model"}]}}),
                full_ui(),
            )
            .await;
        editor.wait_status(mark, "demo", "running").await;
        let pending = call(&editor, "demo", "analyze_flights");
        let request = editor.next_prompt().await;
        let text = request["params"]["text"]
            .as_str()
            .unwrap()
            .replace("maxTokens: 400", "maxTokens: 32");
        editor
            .respond(&request, json!({"action": "accept", "text": text}))
            .await;
        let answer = editor.next_prompt().await;
        let draft = answer["params"]["text"].as_str().unwrap().to_string();
        let sent = seen.lock().unwrap()[0].clone();
        assert_eq!(
            sent["max_tokens"], 32,
            "the edited request reached the model: {sent}"
        );
        assert_eq!(sent["model"], "test-model");
        let expected = if fail {
            assert!(
                draft.contains("HTTP 500") && draft.contains("the GPU caught fire"),
                "{draft}"
            );
            let written = draft.trim_end().to_string() + "\nI pick flight 3.\n";
            editor
                .respond(&answer, json!({"action": "accept", "text": written}))
                .await;
            "I pick flight 3."
        } else {
            assert!(
                draft.contains("model: test-model")
                    && draft.contains("Flight 7 is the best value."),
                "{draft}"
            );
            editor
                .respond(&answer, json!({"action": "accept", "text": draft}))
                .await;
            "Flight 7 is the best value."
        };
        let response = pending.await.unwrap();
        assert_eq!(
            structured(&response["result"])["text"],
            expected,
            "{response}"
        );
        editor.shutdown_and_exit().await;
    }
}
