//! Interop with real third-party servers installed by `scripts/install-peers.sh`:
//! `@modelcontextprotocol/server-filesystem`, `@modelcontextprotocol/server-everything` and a
//! Python SDK (`mcp` 2.3.0) server in both eras. Ignored by a plain `cargo test` (they need the
//! peers); `scripts/test-all.sh` runs them with `--include-ignored`.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn peer(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run scripts/install-peers.sh and source .cache/peers/env.sh")
    })
}

fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

async fn call(editor: &TestEditor, server: &str, tool: &str, arguments: Value) -> Value {
    editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": server, "tool": tool, "arguments": arguments}),
        )
        .await
}

/// Polls `check` until it holds (servers apply roots changes asynchronously).
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + WAIT;
    while !check().await {
        assert!(Instant::now() < deadline, "{what} never happened");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

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
    eventually("get-roots-list in the tool list", || async {
        let tools = editor
            .command("mcp-sidecar.listTools", json!({"server": "everything"}))
            .await;
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "get-roots-list")
    })
    .await;
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
