//! Sampling end to end in-process: the scripted editor edits both drafts; the server receives
//! exactly the person's answer; Reject and close end the call promptly.

use crate::support;

use serde_json::{Value, json};
use support::http::{HttpServer, kept_response};
use support::*;

const DRAFT: &str = "mcp-sidecar/editDraft";

async fn start(servers: Value) -> CheckedEditor {
    // The audit log goes to the private state folder `in_process` sets up.
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

/// An editor whose settings name `servers` and the sidecar-wide `sampling`, and the mark before
/// it started.
async fn start_with_sampling(servers: Value, sampling: Value) -> (CheckedEditor, usize) {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": servers, "sampling": sampling}),
            full_ui(),
        )
        .await;
    (editor, mark)
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
/// with HTTP 500 when `fail` is set; records the requests. It keeps each connection open for
/// more requests, as HTTP/1.1 does, so a test can count how many the provider opened.
async fn fake_openai(fail: bool) -> (String, HttpServer) {
    let server = HttpServer::keep_alive(move |_| {
        if fail {
            kept_response(500, &json!({"error": {"message": "the GPU caught fire"}}))
        } else {
            kept_response(
                200,
                &json!({"model": "test-model", "choices": [{"index": 0, "finish_reason": "stop",
                "message": {"role": "assistant", "content": "Flight 7 is the best value."}}]}),
            )
        }
    })
    .await;
    (format!("{}/v1", server.url()), server)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_openai_provider_drafts_the_answer_and_its_failures_show_in_the_draft() {
    for fail in [false, true] {
        let (url, seen) = fake_openai(fail).await;
        let (editor, mark) = start_with_sampling(
            json!({"demo": demo_server("both", None)}),
            json!({"provider": "openai", "openai": {"baseUrl": url, "model": "test-model", "stream": false},
                   "models": [{"name": "test-model"}]}),
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
        let sent = seen.requests()[0].body.clone();
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_openai_provider_is_reported_when_the_settings_are_applied_and_a_person_answers() {
    for (openai, expected) in [
        // Checked when the configuration is read: the message names the key.
        (
            json!({"baseUrl": "127.0.0.1:11434/v1", "model": "m"}),
            "sampling.openai: the OpenAI-compatible provider's baseUrl `127.0.0.1:11434/v1`",
        ),
        (
            json!({"baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKey": "sk-1"}),
            "sampling.openai: unknown key `apiKey`",
        ),
        // Built when the configuration is applied: the API key is read then.
        (
            json!({"baseUrl": "http://127.0.0.1:1/v1", "model": "m", "apiKeyEnv": "MCP_SIDECAR_TEST_UNSET_KEY", "stream": false}),
            "sampling.provider \"openai\" cannot be used (apiKeyEnv names the environment variable MCP_SIDECAR_TEST_UNSET_KEY",
        ),
    ] {
        let (editor, mark) = start_with_sampling(
            json!({"demo": demo_server("both", None)}),
            json!({"provider": "openai", "openai": openai}),
        )
        .await;
        // Told before any request, as an error.
        let told = editor
            .wait_notification(mark, |n| {
                n["method"] == "window/showMessage"
                    && n["params"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains(expected))
            })
            .await;
        assert_eq!(told["params"]["type"], 1, "{told}");
        editor.wait_status(mark, "demo", "running").await;
        let pending = call(&editor, "demo", "analyze_flights");
        let request = editor.next_prompt().await;
        let text = request["params"]["text"].as_str().unwrap();
        assert!(
            text.contains("\nGoes to: no model (provider manual)"),
            "{text}"
        );
        editor.respond(&request, json!({"action": "reject"})).await;
        pending.await.unwrap();
        // Once: the same sampling settings applied again are not reported again (the new,
        // disabled server marks the end of that pass: its status follows any message).
        let later = editor.mark();
        editor
            .notify(
                "workspace/didChangeConfiguration",
                json!({"settings": {
                    "servers": {"demo": demo_server("both", None), "marker": {"command": "unused", "disabled": true}},
                    "sampling": {"provider": "openai", "openai": openai}}}),
            )
            .await;
        editor.wait_status(later, "marker", "stopped").await;
        let again = editor
            .notifications()
            .into_iter()
            .skip(later)
            .filter(|n| n["method"] == "window/showMessage")
            .collect::<Vec<_>>();
        assert!(again.is_empty(), "{again:#?}");
        editor.shutdown_and_exit().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sampling_requests_share_the_provider_built_when_the_settings_were_applied() {
    let (url, fake) = fake_openai(false).await;
    let mut demo = demo_server("both", None);
    demo["sampling"] = json!({"policy": "auto"});
    let (editor, mark) = start_with_sampling(
        json!({"demo": demo}),
        json!({"provider": "openai", "openai": {"baseUrl": url, "model": "test-model", "stream": false}}),
    )
    .await;
    editor.wait_status(mark, "demo", "running").await;
    for _ in 0..2 {
        let response = call(&editor, "demo", "analyze_flights").await.unwrap();
        assert_eq!(
            structured(&response["result"])["text"],
            "Flight 7 is the best value.",
            "{response}"
        );
    }
    assert_eq!(fake.requests().len(), 2);
    // One HTTP client for both: the second request went over the first one's connection.
    assert_eq!(fake.connections(), 1);
    editor.shutdown_and_exit().await;
}
