//! Interop with real third-party servers installed by `scripts/install-peers.sh`:
//! `@modelcontextprotocol/server-filesystem`, `@modelcontextprotocol/server-everything` and a
//! Python SDK (`mcp` 2.3.0) server in both eras. Ignored by a plain `cargo test` (they need the
//! peers); `scripts/interop-matrix.py` runs them with `--include-ignored` and records each one in
//! docs/interop-matrix.md. `demo_server_tools_in_both_eras` needs no peers and is not ignored.

use crate::support;

use serde_json::{Value, json};
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_filesystem_allows_exactly_the_workspace_folders() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    for (dir, text) in [(&a, "in a"), (&b, "in b"), (&outside, "secret")] {
        std::fs::write(dir.path().join("note.txt"), text).unwrap();
    }
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(a.path(), "a")],
            json!({"servers": {"fs": {"command": "node", "args": [peer("MCP_FILESYSTEM_JS")]}}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "fs", "running").await;
    let read = |dir: &tempfile::TempDir| json!({"path": dir.path().join("note.txt")});
    eventually("filesystem allowing folder a", || async {
        text_of(&call(&editor, "fs", "list_allowed_directories", json!({})).await)
            .contains(&a.path().display().to_string())
    })
    .await;
    let allowed = text_of(&call(&editor, "fs", "list_allowed_directories", json!({})).await);
    assert!(
        !allowed.contains(&b.path().display().to_string()),
        "{allowed}"
    );
    assert_eq!(
        text_of(&call(&editor, "fs", "read_text_file", read(&a)).await),
        "in a"
    );
    let refused = call(&editor, "fs", "read_text_file", read(&outside)).await;
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(text_of(&refused).contains("Access denied"), "{refused}");

    editor
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {"added": [{"uri": file_uri(b.path()), "name": "b"}], "removed": []}}),
        )
        .await;
    eventually("filesystem allowing an added folder", || async {
        call(&editor, "fs", "read_text_file", read(&b)).await["isError"] != true
    })
    .await;
    assert_eq!(
        text_of(&call(&editor, "fs", "read_text_file", read(&b)).await),
        "in b"
    );
    assert_eq!(
        call(&editor, "fs", "read_text_file", read(&outside)).await["isError"],
        true
    );
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_over_stdio() {
    let a = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(a.path(), "alpha")],
            json!({"servers": {"everything": {"command": "node", "args": [peer("MCP_EVERYTHING_JS"), "stdio"]}}}),
            json!({}),
        )
        .await;
    let status = editor.wait_status(mark, "everything", "running").await;
    assert_eq!(status["protocolVersion"], "2025-11-25");
    // Its roots tool appears only after notifications/tools/list_changed.
    wait_for_tool(&editor, "everything", "get-roots-list").await;
    let tools = editor.command("mcp-sidecar.listTools", json!({})).await;
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "get-sum" && t["server"] == "everything")
    );
    let sum = call(&editor, "everything", "get-sum", json!({"a": 2, "b": 40})).await;
    assert!(text_of(&sum).contains("42"), "{sum}");
    let roots = call(&editor, "everything", "get-roots-list", json!({})).await;
    let text = text_of(&roots);
    assert!(
        text.contains(&file_uri(a.path())) && text.contains("alpha"),
        "{text}"
    );
    editor.shutdown_and_exit().await;
}

async fn python_roots(era: &str, pin: Option<&str>) {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    let mut def = json!({
        "command": peer("MCP_PYTHON"),
        "args": [fixture("python/roots_server.py"), "--era", era],
    });
    if let Some(pin) = pin {
        def["protocolVersion"] = json!(pin);
    }
    editor
        .initialize(
            &[(a.path(), "a")],
            json!({"servers": {"py": def}}),
            json!({}),
        )
        .await;
    let status = editor.wait_status(mark, "py", "running").await;
    let modern = status["protocolVersion"] == "2026-07-28";
    assert_eq!(
        modern,
        era == "modern" || (era == "auto" && pin != Some("2025-11-25")),
        "{status}"
    );
    let shown = structured(&call(&editor, "py", "show_roots", json!({})).await);
    assert_eq!(
        shown["roots"],
        json!([{"uri": file_uri(a.path()), "name": "a"}]),
        "{shown}"
    );
    let sum = call(&editor, "py", "add", json!({"a": 1.5, "b": 2})).await;
    assert!(text_of(&sum).contains("3.5"), "{sum}");
    editor
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {"added": [{"uri": file_uri(b.path()), "name": "b"}], "removed": [{"uri": file_uri(a.path()), "name": "a"}]}}),
        )
        .await;
    // A legacy server is also told (roots/list_changed, debounced); a modern one just asks.
    eventually("the Python server seeing the new roots", || async {
        let shown = structured(&call(&editor, "py", "show_roots", json!({})).await);
        shown["roots"] == json!([{"uri": file_uri(b.path()), "name": "b"}])
            && (modern || shown["listChangedCount"].as_u64() >= Some(1))
    })
    .await;
    let shown = structured(&call(&editor, "py", "show_roots", json!({})).await);
    if modern {
        assert_eq!(
            shown["listChangedCount"], 0,
            "no list_changed on 2026-07-28: {shown}"
        );
    } else {
        assert!(shown["listChangedCount"].as_u64().unwrap() >= 1, "{shown}");
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_server_legacy_era() {
    python_roots("legacy", None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_server_modern_era() {
    python_roots("modern", None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_dual_era_server_pinned_to_legacy() {
    python_roots("auto", Some("2025-11-25")).await;
}

const INPUT: &str = "mcp-sidecar/inputBox";
const PICK: &str = "mcp-sidecar/quickPick";

/// The JSON after "Raw result:" in server-everything's answer.
fn raw_result(result: &Value) -> Value {
    let text = text_of(result);
    let raw = text
        .split("Raw result:")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    serde_json::from_str(raw.trim()).unwrap()
}

async fn everything_with_ui() -> CheckedEditor {
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
    eventually("the elicitation tools to be listed", || async {
        let tools = editor
            .command("mcp-sidecar.listTools", json!({"server": "everything"}))
            .await;
        let names: Vec<&str> = tools
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        names.contains(&"trigger-elicitation-request") && names.contains(&"trigger-url-elicitation")
    })
    .await;
    editor
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_big_mixed_form() {
    let editor = everything_with_ui().await;
    let call = spawn_call(
        &editor,
        "everything",
        "trigger-elicitation-request",
        json!({}),
    );
    let shown = editor
        .answer_prompts(&[
            (INPUT, json!({"value": "Grace Hopper"})),
            (PICK, json!({"selected": [0]})),
            (INPUT, json!({"skip": true})),
            (INPUT, json!({"value": "grace@example"})),
            (INPUT, json!({"value": "grace@example.com"})),
            (INPUT, json!({"value": "https://example.com/grace"})),
            (INPUT, json!({"value": "1906-12-09"})),
            (INPUT, json!({"value": "7"})),
            (INPUT, json!({"value": "2.5"})),
            (PICK, json!({"selected": [2]})),
            (PICK, json!({"selected": [0, 1]})),
            (PICK, json!({"selected": [1]})),
            (PICK, json!({"selected": [2]})),
            (PICK, json!({"selected": [1]})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    assert_eq!(shown[0]["params"]["totalSteps"], 13);
    assert!(
        shown[4]["params"]["validationMessage"].is_string(),
        "bad email re-asked"
    );
    assert_eq!(shown[7]["params"]["value"], "42");
    assert_eq!(shown[11]["params"]["items"][1]["label"], "Green Lantern");
    assert_eq!(shown[13]["params"]["items"][1]["label"], "Dogs");
    let result = call.await.unwrap();
    assert_eq!(
        raw_result(&result),
        json!({"action": "accept", "content": {
            "name": "Grace Hopper", "check": true, "email": "grace@example.com",
            "homepage": "https://example.com/grace", "birthdate": "1906-12-09", "integer": 7,
            "number": 2.5, "untitledSingleSelectEnum": "Joey",
            "untitledMultipleSelectEnum": ["Guitar", "Piano"], "titledSingleSelectEnum": "hero-2",
            "titledMultipleSelectEnum": ["fish-3"], "legacyTitledEnum": "pet-2"}})
    );
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_url_elicitation_request_and_error_paths() {
    let editor = everything_with_ui().await;
    let url = "https://example.com/verify?x=1";
    // Request path: consent, open, accept.
    let call = spawn_call(
        &editor,
        "everything",
        "trigger-url-elicitation",
        json!({"url": url}),
    );
    editor
        .answer_prompts(&[(PICK, json!({"selected": [0]}))])
        .await;
    let open = editor.next_request("window/showDocument").await;
    assert_eq!(open["params"]["uri"], url);
    editor.respond(&open, json!({"success": true})).await;
    let result = call.await.unwrap();
    assert_eq!(raw_result(&result)["action"], "accept");
    // Error path: -32042 → consent for the prerequisite URL → "Retry now" → the retried call
    // takes the request path.
    let call = spawn_call(
        &editor,
        "everything",
        "trigger-url-elicitation",
        json!({"url": url, "errorPath": true}),
    );
    consent_to_url_and_retry_now(&editor).await;
    editor
        .answer_prompts(&[(PICK, json!({"selected": [2]}))])
        .await;
    let result = call.await.unwrap();
    assert_eq!(raw_result(&result)["action"], "decline");
    editor.shutdown_and_exit().await;
}

async fn python_client_features(era: &str) {
    let editor = in_process();
    let mark = editor.mark();
    let def = json!({"command": peer("MCP_PYTHON"), "args": [fixture("python/client_features_server.py"), "--era", era]});
    editor
        .initialize(&[], json!({"servers": {"py": def}}), full_ui())
        .await;
    editor.wait_status(mark, "py", "running").await;
    let call = spawn_call(&editor, "py", "elicit_form", json!({}));
    let shown = editor
        .answer_prompts(&[
            (INPUT, json!({"value": "Ann"})),
            (INPUT, json!({"value": "42"})),
            (INPUT, json!({"value": "7"})),
            (PICK, json!({"selected": [0]})),
            (PICK, json!({"selected": [2]})),
            (PICK, json!({"selected": [0, 2]})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    assert_eq!(
        shown[4]["params"]["items"][1]["picked"], true,
        "default green preselected"
    );
    let result = call.await.unwrap();
    assert_eq!(
        structured(&result),
        json!({"action": "accept", "content": {"name": "Ann", "age": 42, "score": 7, "subscribe": true, "color": "blue", "tags": ["a", "c"]}}),
        "{era}"
    );
    // Decline vs cancel.
    let call = spawn_call(&editor, "py", "elicit_form", json!({}));
    editor.answer_prompts(&[(INPUT, Value::Null)]).await;
    assert_eq!(structured(&call.await.unwrap())["action"], "cancel");
    // URL mode.
    let call = spawn_call(&editor, "py", "elicit_url", json!({}));
    let consent = editor.next_prompt().await;
    assert_eq!(
        consent["params"]["items"][0]["description"],
        "https://example.com/auth?state=abc123"
    );
    editor.respond(&consent, json!({"selected": [2]})).await;
    assert_eq!(
        structured(&call.await.unwrap())["action"],
        "decline",
        "{era}"
    );
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_elicitation_legacy_era() {
    python_client_features("legacy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_elicitation_modern_era() {
    python_client_features("modern").await;
}

const DRAFT: &str = "mcp-sidecar/editDraft";

/// Accepts the request draft with `edit` applied, then writes `answer` into the answer draft.
async fn answer_sampling(editor: &TestEditor, edit: (&str, &str), answer: &str) -> (Value, Value) {
    let request = editor.next_prompt().await;
    assert_eq!(request["method"], DRAFT);
    assert_eq!(request["params"]["kind"], "samplingRequest");
    let text = request["params"]["text"].as_str().unwrap();
    assert!(text.contains(edit.0), "{text}");
    editor
        .respond(
            &request,
            json!({"action": "accept", "text": text.replace(edit.0, edit.1)}),
        )
        .await;
    let draft = editor.next_prompt().await;
    assert_eq!(draft["params"]["kind"], "samplingResponse");
    let written = draft["params"]["text"]
        .as_str()
        .unwrap()
        .trim_end()
        .to_string()
        + "\n"
        + answer
        + "\n";
    editor
        .respond(&draft, json!({"action": "accept", "text": written}))
        .await;
    (request, draft)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_sampling_with_both_drafts_edited() {
    let editor = everything_with_ui().await;
    eventually("trigger-sampling-request to be listed", || async {
        let tools = editor
            .command("mcp-sidecar.listTools", json!({"server": "everything"}))
            .await;
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "trigger-sampling-request")
    })
    .await;
    let call = spawn_call(
        &editor,
        "everything",
        "trigger-sampling-request",
        json!({"prompt": "a haiku about pipes", "maxTokens": 50}),
    );
    answer_sampling(
        &editor,
        ("a haiku about pipes", "a haiku about sockets"),
        "Bytes flow through the pipe",
    )
    .await;
    let result = call.await.unwrap();
    let text = text_of(&result);
    let json_part = text.split_once('\n').unwrap().1;
    let sampled: Value = serde_json::from_str(json_part).unwrap();
    assert_eq!(
        sampled["content"],
        json!({"type": "text", "text": "Bytes flow through the pipe"}),
        "{text}"
    );
    assert_eq!(sampled["model"], "manual");
    editor.shutdown_and_exit().await;
}

async fn python_sampling(era: &str) {
    let editor = in_process();
    let mark = editor.mark();
    let def = json!({"command": peer("MCP_PYTHON"), "args": [fixture("python/client_features_server.py"), "--era", era]});
    editor
        .initialize(&[], json!({"servers": {"py": def}}), full_ui())
        .await;
    editor.wait_status(mark, "py", "running").await;
    let call = spawn_call(&editor, "py", "sample", json!({}));
    answer_sampling(
        &editor,
        (
            "Write a haiku about Rust",
            "Write a haiku about ferrous oxide",
        ),
        "Red crab, safe and fast",
    )
    .await;
    assert_eq!(
        structured(&call.await.unwrap()),
        json!({"text": "Red crab, safe and fast", "model": "manual", "stopReason": "endTurn"}),
        "{era}"
    );
    // Reject: legacy servers see error -1; 2026-07-28 calls end without a retry.
    let call = {
        let editor = editor.clone();
        tokio::spawn(async move {
            editor
                .command_response(
                    "mcp-sidecar.callTool",
                    json!({"server": "py", "tool": "sample", "arguments": {}}),
                )
                .await
        })
    };
    let request = editor.next_prompt().await;
    editor.respond(&request, json!({"action": "reject"})).await;
    let response = call.await.unwrap();
    if era == "legacy" {
        assert_eq!(response["result"]["isError"], true, "{response}");
        assert!(
            text_of(&response["result"]).contains("User rejected sampling request"),
            "{response}"
        );
    } else {
        assert_eq!(response["error"]["data"]["kind"], "refused", "{response}");
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_sampling_legacy_era() {
    python_sampling("legacy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_sampling_modern_era() {
    python_sampling("modern").await;
}

async fn python_progress(era: &str) -> CheckedEditor {
    let editor = in_process();
    let mark = editor.mark();
    let def = json!({"command": peer("MCP_PYTHON"), "args": [fixture("python/client_features_server.py"), "--era", era]});
    editor
        .initialize(&[], json!({"servers": {"py": def}}), json!({}))
        .await;
    let status = editor.wait_status(mark, "py", "running").await;
    let version = if era == "legacy" {
        "2025-11-25"
    } else {
        "2026-07-28"
    };
    assert_eq!(status["protocolVersion"], version, "{status}");
    expect_fixture_progress(&editor, "py", &format!("py-{era}")).await;
    editor
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_progress_and_logging_legacy_era() {
    let editor = python_progress("legacy").await;
    // Legacy servers log at every level unless told otherwise (the sidecar sends no
    // logging/setLevel).
    expect_log_levels(&editor, "py").await;
    editor.shutdown_and_exit().await;
}

/// A 2026-07-28 server sends `notifications/message` only for requests that opt in with
/// `_meta["io.modelcontextprotocol/logLevel"]`; the sidecar asks for every level.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_progress_and_logging_modern_era() {
    let editor = python_progress("modern").await;
    expect_log_levels(&editor, "py").await;
    editor.shutdown_and_exit().await;
}

/// server-everything over stdio: a folder change reaches it (roots/list_changed, then its own
/// roots/list), its log messages (it logs every roots update) reach the editor, and its
/// long-running tool's progress becomes work-done progress.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_roots_update_progress_and_logging() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(a.path(), "alpha")],
            json!({"servers": {"everything": {"command": "node", "args": [peer("MCP_EVERYTHING_JS"), "stdio"]}}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "everything", "running").await;
    everything_roots_update_progress_and_logging(&editor, mark, (a.path(), b.path())).await;
    editor.shutdown_and_exit().await;
}

/// An editor with two demo servers, "legacy" pinned to 2025-11-25 and "modern" to 2026-07-28.
async fn demo_pair() -> (CheckedEditor, usize) {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "legacy": demo_server("both", Some("2025-11-25")),
                "modern": demo_server("both", Some("2026-07-28")),
            }}),
            json!({}),
        )
        .await;
    (editor, mark)
}

/// The built-in demo server's plain tools in both eras: listed, called, a tool error kept as an
/// `isError` result. Needs no peers (it backs the demo rows of docs/interop-matrix.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_server_tools_in_both_eras() {
    let (editor, mark) = demo_pair().await;
    for (server, version) in [("legacy", "2025-11-25"), ("modern", "2026-07-28")] {
        let status = editor.wait_status(mark, server, "running").await;
        assert_eq!(status["protocolVersion"], version, "{status}");
        let tools = editor
            .command("mcp-sidecar.listTools", json!({"server": server}))
            .await;
        let mut names: Vec<&str> = tools
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        names.sort();
        assert_eq!(
            names,
            [
                "add",
                "analyze_flights",
                "book_trip",
                "clock",
                "count_down",
                "echo",
                "list_roots",
                "login",
                "slow_task"
            ],
            "{server}"
        );
        let sum = call(&editor, server, "add", json!({"a": 40, "b": 2})).await;
        assert_eq!(structured(&sum), json!({"sum": 42}), "{server}: {sum}");
        assert_eq!(text_of(&sum), "40 + 2 = 42", "{server}");
        let echo = call(&editor, server, "echo", json!({"text": "héllo\nwörld"})).await;
        assert_eq!(text_of(&echo), "héllo\nwörld", "{server}");
        let overflow = call(&editor, server, "add", json!({"a": 1e308, "b": 1e308})).await;
        assert_eq!(overflow["isError"], true, "{server}: {overflow}");
        assert!(
            text_of(&overflow).contains("not finite"),
            "{server}: {overflow}"
        );
    }
    editor.shutdown_and_exit().await;
}

/// The demo server's `count_down` in both eras: a `$/progress` report per step with its
/// percentage, and a log line per step (a 2026-07-28 server logs because the sidecar's request
/// asks for it). Needs no peers (it backs the demo rows of docs/interop-matrix.md).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_server_progress_and_logging_in_both_eras() {
    let (editor, mark) = demo_pair().await;
    for server in ["legacy", "modern"] {
        editor.wait_status(mark, server, "running").await;
        let logs = editor.mark();
        let (response, progress) = call_with_progress(
            &editor,
            server,
            "count_down",
            json!({"steps": 2, "delayMs": 20}),
            &format!("demo-{server}"),
        )
        .await;
        assert_eq!(
            structured(&response["result"]),
            json!({"steps": 2}),
            "{response}"
        );
        let reports: Vec<_> = progress
            .iter()
            .filter(|p| p["kind"] == "report")
            .map(|p| (p["message"].clone(), p["percentage"].clone()))
            .collect();
        // Reports are coalesced to the latest value (docs/configuration.md): on a loaded
        // machine the first step's may be overtaken by the second before it is sent, but the
        // final one always comes, and none out of order.
        let steps = [
            (json!("1 left (50%)"), json!(50)),
            (json!("0 left (100%)"), json!(100)),
        ];
        assert_eq!(reports.last(), steps.last(), "{server}: {progress:?}");
        assert!(
            reports.len() == 1 || reports == steps,
            "{server}: {progress:?}"
        );
        for left in [1, 0] {
            let text = format!("[{server}] demo: count_down: {left} left");
            let shown = wait_log(&editor, logs, &text).await;
            assert_eq!(shown["message"], text, "{shown}");
            assert_eq!(shown["type"], 3, "{shown}");
        }
    }
    editor.shutdown_and_exit().await;
}
