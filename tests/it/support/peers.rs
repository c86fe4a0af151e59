//! What the interop and HTTP suites expect of the third-party peers and the Python fixtures
//! (server-everything's roots, progress and logging; the fixtures' log levels and progress; the
//! URL-elicitation consent path), written once for stdio and Streamable HTTP.

use serde_json::json;

use super::*;

/// server-everything (started with folder `a`, running since `mark`): the roots it logs and lists
/// follow an added folder `b`, its log messages arrive as `window/logMessage`, and its
/// long-running tool's progress becomes work-done progress. Used over stdio (tests/it/interop.rs)
/// and Streamable HTTP (tests/it/http.rs).
pub async fn everything_roots_update_progress_and_logging(
    editor: &TestEditor,
    mark: usize,
    (a, b): (&std::path::Path, &std::path::Path),
) {
    // It asks for the roots once it is initialized, and logs what it got.
    let shown = wait_log(
        editor,
        mark,
        "[everything] everything-server: Roots updated: 1 root(s) received from client",
    )
    .await;
    assert_eq!(shown["type"], 3, "info → Info: {shown}");
    wait_for_tool(editor, "everything", "get-roots-list").await;
    let roots = text_of(&call(editor, "everything", "get-roots-list", json!({})).await);
    assert!(roots.contains(&file_uri(a)), "{roots}");
    // Adding a folder: roots/list_changed, the server asks again and logs the new count.
    let changed = editor.mark();
    editor
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {"added": [{"uri": file_uri(b), "name": "beta"}], "removed": []}}),
        )
        .await;
    wait_log(
        editor,
        changed,
        "[everything] everything-server: Roots updated: 2 root(s) received from client",
    )
    .await;
    let roots = text_of(&call(editor, "everything", "get-roots-list", json!({})).await);
    assert!(
        roots.contains(&file_uri(a)) && roots.contains(&file_uri(b)) && roots.contains("beta"),
        "{roots}"
    );
    // Progress: one notification per step (no message from this server; the percentage is the
    // report's text).
    let (response, progress) = call_with_progress(
        editor,
        "everything",
        "trigger-long-running-operation",
        json!({"duration": 1.2, "steps": 3}),
        "everything-progress",
    )
    .await;
    assert!(
        text_of(&response["result"]).contains("Long running operation completed"),
        "{response}"
    );
    let reports: Vec<&str> = progress
        .iter()
        .filter(|p| p["kind"] == "report")
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert_eq!(progress[0]["kind"], "begin", "{progress:?}");
    assert_eq!(progress.last().unwrap()["kind"], "end", "{progress:?}");
    // The last step's notification comes right before the result: it must not be lost.
    assert_eq!(reports, ["33%", "67%", "100%"], "{progress:?}");
}

/// `log_levels`'s messages as the sidecar forwards them: `window/logMessage` with the MCP level
/// mapped to the LSP type (debug → Log 4, info → Info 3, warning → Warning 2, error → Error 1).
/// Waits until `server` lists the tool `name` (server-everything adds its roots tool only after
/// `notifications/tools/list_changed`).
pub async fn wait_for_tool(editor: &TestEditor, server: &str, name: &str) {
    eventually(&format!("{name} in {server}'s tool list"), || async {
        let tools = editor
            .command("mcp-sidecar.listTools", json!({"server": server}))
            .await;
        tools.as_array().unwrap().iter().any(|t| t["name"] == name)
    })
    .await;
}

pub async fn expect_fixture_logs(editor: &TestEditor, mark: usize, server: &str) {
    for (level, lsp_type) in [("debug", 4), ("info", 3), ("warning", 2), ("error", 1)] {
        let text = format!("[{server}] fixture: {level} message from log_levels");
        let shown = wait_log(editor, mark, &text).await;
        assert_eq!(shown["message"], text, "{shown}");
        assert_eq!(shown["type"], lsp_type, "{shown}");
    }
}

/// Calls the Python fixture's `log_levels` on `server` and expects each of its messages in the
/// editor's log.
pub async fn expect_log_levels(editor: &TestEditor, server: &str) {
    let logs = editor.mark();
    let result = call(editor, server, "log_levels", json!({})).await;
    assert_eq!(
        structured(&result)["logged"],
        json!(["debug", "info", "warning", "error"])
    );
    expect_fixture_logs(editor, logs, server).await;
}

/// server-everything's URL elicitation error path (-32042) as the editor sees it: consent for
/// the prerequisite URL (accepted), the browser opened, then "Retry now" (chosen).
pub async fn consent_to_url_and_retry_now(editor: &TestEditor) {
    let consent = editor.next_prompt().await;
    assert!(
        consent["params"]["items"][0]["description"]
            .as_str()
            .unwrap()
            .starts_with("https://modelcontextprotocol.io"),
        "{consent}"
    );
    editor.respond(&consent, json!({"selected": [0]})).await;
    let open = editor.next_request("window/showDocument").await;
    editor.respond(&open, json!({"success": true})).await;
    let retry = editor.next_prompt().await;
    assert_eq!(retry["params"]["items"][0]["label"], "Retry now", "{retry}");
    editor.respond(&retry, json!({"selected": [0]})).await;
}

/// `progress_steps {steps: 3}` with a work-done token: begin, one report per MCP progress
/// notification (the message and the percentage in its text), end.
pub async fn expect_fixture_progress(editor: &TestEditor, server: &str, token: &str) {
    let (response, progress) = call_with_progress(
        editor,
        server,
        "progress_steps",
        json!({"steps": 3, "pause": 0.1}),
        token,
    )
    .await;
    assert_eq!(
        structured(&response["result"]),
        json!({"steps": 3}),
        "{response}"
    );
    assert_eq!(progress.first().unwrap()["kind"], "begin", "{progress:?}");
    assert_eq!(
        progress[0]["title"],
        format!("{server}: progress_steps"),
        "{progress:?}"
    );
    let reports: Vec<&str> = progress
        .iter()
        .filter(|p| p["kind"] == "report")
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert_eq!(
        reports,
        [
            "step 1 of 3 (33%)",
            "step 2 of 3 (67%)",
            "step 3 of 3 (100%)"
        ],
        "{progress:?}"
    );
    let percentages: Vec<_> = progress
        .iter()
        .filter(|p| p["kind"] == "report")
        .map(|p| p["percentage"].clone())
        .collect();
    assert_eq!(
        percentages,
        [json!(33), json!(67), json!(100)],
        "{progress:?}"
    );
    assert_eq!(progress.last().unwrap()["kind"], "end", "{progress:?}");
}
