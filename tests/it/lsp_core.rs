//! In-process LSP tests over `tokio::io::duplex`: the editor contract, roots in both eras, and
//! the never-wedge regression.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn uris(roots: &Value) -> Vec<String> {
    let mut v: Vec<String> = roots["roots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

async fn roots_of(editor: &TestEditor, server: &str) -> Value {
    let result = editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": server, "tool": "list_roots", "arguments": {}}),
        )
        .await;
    structured(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_declares_the_contract_and_starts_nothing_inside_it() {
    let editor = in_process();
    let response = editor
        .request(
            "initialize",
            json!({"capabilities": {"experimental": full_ui()},
                   "initializationOptions": with_user_scopes(json!({"servers": {"demo": demo_server("both", None)}}))}),
        )
        .await;
    let caps = &response["result"]["capabilities"];
    let commands: Vec<&str> = caps["executeCommandProvider"]["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(commands, mcp_sidecar::contract::COMMANDS);
    assert_eq!(caps["experimental"]["mcpSidecar"]["version"], 1);
    assert_eq!(
        caps["workspace"]["workspaceFolders"]["changeNotifications"],
        true
    );
    // Nothing starts before `initialized`.
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert_eq!(listed, json!([]));
    let mark = editor.mark();
    editor.notify("initialized", json!({})).await;
    let status = editor.wait_status(mark, "demo", "running").await;
    assert!(status["protocolVersion"].is_string());
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn roots_follow_workspace_folders_in_both_eras() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let c = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(a.path(), "a"), (b.path(), "b")],
            json!({"servers": {
                "legacy": demo_server("both", Some("2025-11-25")),
                "modern": demo_server("both", Some("2026-07-28")),
                "fallback": demo_server("legacy", None),
                "discover": demo_server("modern", None),
            }}),
            json!({}),
        )
        .await;
    let expected_versions = [
        ("legacy", "2025-11-25"),
        ("modern", "2026-07-28"),
        ("fallback", "2025-11-25"),
        ("discover", "2026-07-28"),
    ];
    for (server, version) in expected_versions {
        let status = editor.wait_status(mark, server, "running").await;
        assert_eq!(status["protocolVersion"], version, "{server}");
    }
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    for (server, version) in expected_versions {
        let row = listed
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == server)
            .unwrap();
        assert_eq!(row["protocolVersion"], version);
        assert_eq!(row["source"], "editor settings");
        assert_eq!(row["transport"], "stdio");
    }
    let both = {
        let mut v = vec![file_uri(a.path()), file_uri(b.path())];
        v.sort();
        v
    };
    for server in ["legacy", "modern", "fallback", "discover"] {
        let roots = roots_of(&editor, server).await;
        assert_eq!(uris(&roots), both, "{server}");
    }
    let legacy_before = roots_of(&editor, "legacy").await["listChangedCount"]
        .as_u64()
        .unwrap();

    // Replace folder a by c.
    editor
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {
                "added": [{"uri": file_uri(c.path()), "name": "c"}],
                "removed": [{"uri": file_uri(a.path()), "name": "a"}],
            }}),
        )
        .await;
    let after = {
        let mut v = vec![file_uri(b.path()), file_uri(c.path())];
        v.sort();
        v
    };
    // The legacy server is told (roots/list_changed) and then sees the new set.
    let deadline = Instant::now() + WAIT;
    loop {
        let roots = roots_of(&editor, "legacy").await;
        if roots["listChangedCount"].as_u64().unwrap() > legacy_before {
            assert_eq!(uris(&roots), after);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "legacy server never got roots/list_changed"
        );
        // A poll interval: the server's count is read by calling its tool again.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A 2026-07-28 server asking through input_required gets the same set.
    assert_eq!(uris(&roots_of(&editor, "modern").await), after);
    assert_eq!(uris(&roots_of(&editor, "discover").await), after);
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_server_roots_settings_narrow_what_each_server_sees() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    let mut only_b = demo_server("both", Some("2026-07-28"));
    only_b["roots"] = json!([b.path()]);
    let mut none = demo_server("both", Some("2025-11-25"));
    none["roots"] = json!(false);
    editor
        .initialize(
            &[(a.path(), "a"), (b.path(), "b")],
            json!({"servers": {"onlyB": only_b, "none": none}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "onlyB", "running").await;
    editor.wait_status(mark, "none", "running").await;
    assert_eq!(
        uris(&roots_of(&editor, "onlyB").await),
        vec![file_uri(b.path())]
    );
    // With roots turned off, the capability is not declared and the legacy request is refused.
    let response = editor
        .command_response(
            "mcp-sidecar.callTool",
            json!({"server": "none", "tool": "list_roots"}),
        )
        .await;
    let text = response.to_string();
    assert!(
        text.contains("isError") || response.get("error").is_some(),
        "{text}"
    );
    editor.shutdown_and_exit().await;
}

/// Fills the cap of long operations with prompts nobody answers, and shows that a new one is
/// refused at once while `$/cancelRequest`, a short request and `shutdown` are still answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_prompts_never_wedge_the_lsp_loop() {
    use mcp_sidecar::lsp::gate::LONG_OPERATION_CAP;
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"demo": demo_server("both", None)}}),
            json!({"mcpSidecar": {"quickPick": true, "inputBox": true}}),
        )
        .await;
    editor.wait_status(mark, "demo", "running").await;
    let mut waiting = Vec::new();
    for _ in 0..LONG_OPERATION_CAP {
        waiting.push(
            editor
                .start_request(
                    "workspace/executeCommand",
                    json!({"command": "mcp-sidecar.restartServer", "arguments": [{}]}),
                )
                .await,
        );
    }
    let mut prompts = Vec::new();
    for _ in 0..LONG_OPERATION_CAP {
        prompts.push(editor.next_request("mcp-sidecar/quickPick").await);
    }
    assert_eq!(prompts[0]["params"]["items"][0]["label"], "demo");

    let started = Instant::now();
    let busy = editor
        .command_response("mcp-sidecar.restartServer", json!({}))
        .await;
    assert_eq!(busy["error"]["data"]["kind"], "busy", "{busy}");
    // A command that waits on no server and no person takes no permit: answered meanwhile.
    let expanded = editor
        .command(
            "mcp-sidecar.expandUriTemplate",
            json!({"uriTemplate": "x{?q}", "values": {"q": "1"}}),
        )
        .await;
    assert_eq!(expanded["uri"], "x?q=1", "{expanded}");

    let (cancel_id, cancel_rx) = waiting.remove(0);
    let mark = editor.mark();
    editor
        .notify("$/cancelRequest", json!({"id": cancel_id}))
        .await;
    let cancelled = tokio::time::timeout(WAIT, cancel_rx)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(cancelled["error"]["code"], -32800, "{cancelled}");
    let closed = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/cancelPrompt")
        .await;
    assert_eq!(closed["params"]["id"], prompts[0]["params"]["id"]);

    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert_eq!(listed[0]["name"], "demo");
    let short_requests = started.elapsed();

    // Answering a prompt frees its operation: the server is restarted.
    let mark = editor.mark();
    editor.respond(&prompts[1], json!({"selected": [0]})).await;
    let (_, answered) = waiting.remove(0);
    let answered = tokio::time::timeout(WAIT, answered).await.unwrap().unwrap();
    assert_eq!(answered["result"], json!({"server": "demo"}));
    editor.wait_status(mark, "demo", "stopped").await;
    editor.wait_status(mark, "demo", "starting").await;

    let started = Instant::now();
    let response = editor.request("shutdown", Value::Null).await;
    assert!(response.get("error").is_none());
    let shutdown = started.elapsed();
    assert!(
        short_requests < Duration::from_secs(2),
        "{short_requests:?}"
    );
    assert!(shutdown < Duration::from_secs(6), "{shutdown:?}");
    editor.notify("exit", Value::Null).await;
    editor.wait_closed().await;
    // The operations still waiting for a quick pick were cancelled by the shutdown.
    for (_, reply) in waiting {
        let reply = reply.await.expect("a reply before the connection closed");
        assert_eq!(reply["error"]["code"], -32800, "{reply}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_without_a_quick_pick_is_dismissed_not_hung() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"demo": demo_server("both", None)}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "demo", "running").await;
    let result = editor.command("mcp-sidecar.restartServer", json!({})).await;
    assert_eq!(result, Value::Null);
    let mark = editor.mark();
    let result = editor
        .command("mcp-sidecar.restartServer", json!({"server": "demo"}))
        .await;
    assert_eq!(result["server"], "demo");
    editor.wait_status(mark, "demo", "stopped").await;
    editor.wait_status(mark, "demo", "running").await;
    let unknown = editor
        .command_response("mcp-sidecar.restartServer", json!({"server": "nope"}))
        .await;
    assert!(
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no server named \"nope\"")
    );
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_changes_restart_only_changed_servers() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"a": demo_server("both", None), "b": demo_server("both", None)}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "a", "running").await;
    editor.wait_status(mark, "b", "running").await;
    let mark = editor.mark();
    editor
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"mcpSidecar": {"servers": {
                "a": demo_server("both", None),
                "b": demo_server("legacy", None),
                "c": {"url": "::not a url"},
            }}}}),
        )
        .await;
    editor.wait_status(mark, "b", "running").await;
    let failed = editor.wait_status(mark, "c", "failed").await;
    assert!(
        failed["message"]
            .as_str()
            .unwrap()
            .contains("not a valid URL"),
        "{failed}"
    );
    let shown = editor
        .wait_notification(mark, |n| n["method"] == "window/showMessage")
        .await;
    assert!(
        shown["params"]["message"]
            .as_str()
            .unwrap()
            .contains("server \"c\"")
    );
    editor.settled().await;
    // The same error again for each of settled()'s passes: the manager re-creates a definition
    // that failed at each pass, unchanged or not.
    let again = read_shown(&editor, mark);
    assert!(
        again.iter().all(|t| *t == shown["params"]["message"]),
        "{again:#?}"
    );
    let about_a: Vec<_> = editor
        .notifications()
        .into_iter()
        .skip(mark)
        .filter(|n| n["params"]["name"] == "a")
        .collect();
    assert!(about_a.is_empty(), "a was restarted: {about_a:?}");
    // Removing a server stops it.
    editor
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"servers": {"a": demo_server("both", None)}}}),
        )
        .await;
    editor.settled().await;
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    let names: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].clone())
        .collect();
    assert_eq!(names, [json!("a")], "{listed}");
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editors_without_workspace_folders_fall_back_to_root_uri() {
    let a = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    let response = editor
        .request(
            "initialize",
            json!({"capabilities": {"experimental": full_ui()}, "rootUri": file_uri(a.path()),
                   "initializationOptions": with_user_scopes(json!({"servers": {"demo": demo_server("both", None)}}))}),
        )
        .await;
    assert!(response.get("result").is_some());
    editor.notify("initialized", json!({})).await;
    editor.wait_status(mark, "demo", "running").await;
    let roots = roots_of(&editor, "demo").await;
    let name = a.path().file_name().unwrap().to_string_lossy().to_string();
    assert_eq!(
        roots["roots"],
        json!([{"uri": file_uri(a.path()), "name": name}])
    );
    editor.shutdown_and_exit().await;
}

/// The serve loop answers every `workspace/executeCommand` itself and hands the lifecycle to
/// tower-lsp-server: around it commands are answered as tower-lsp-server answered them (see
/// `execute_command.rs` for each unusual case). A message that
/// cannot be read is one error with a null id, and the stream goes on (tower-lsp-server's reader
/// ended the session at the first one: the editor's next write found a closed pipe).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_serve_loop_keeps_serving_after_broken_frames_and_answers_the_lifecycle_as_before() {
    let (mut editor, served) = RawEditor::serve();
    let list = |id: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
               "params": {"command": "mcp-sidecar.listServers"}})
    };

    // Before `initialize`: tower-lsp-server's "not initialized".
    editor.send(list(json!(1))).await;
    let early = editor.reply().await;
    assert_error(&early, json!(1), -32002);

    // A header that is not a length, a body that is not JSON, JSON that is not a message: each is
    // one error with a null id, and the stream goes on.
    editor.send_bytes(b"Content-Length: many\r\n\r\n{}").await;
    let bad_header = editor.reply().await;
    assert_eq!(bad_header["error"]["code"], -32700, "{bad_header}");
    assert_eq!(bad_header["id"], Value::Null);
    editor.send_bytes(b"Content-Length: 5\r\n\r\n{nope").await;
    assert_eq!(editor.reply().await["error"]["code"], -32700);
    editor.send(json!([1, 2])).await;
    let not_a_message = editor.reply().await;
    assert_eq!(not_a_message["error"]["code"], -32600, "{not_a_message}");
    assert_eq!(not_a_message["id"], Value::Null);

    editor
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {"capabilities": {}}}))
        .await;
    let init = editor.reply().await;
    assert!(init["result"]["capabilities"].is_object(), "{init}");
    editor
        .send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        .await;

    // Integer and string ids; a fractional id is not one tower-lsp-server reads either: an
    // invalid request with a null id, as before.
    for id in [json!(3), json!("four"), json!(-5)] {
        editor.send(list(id.clone())).await;
        let listed = editor.reply().await;
        assert_eq!(listed["id"], id);
        assert!(listed["result"].is_array(), "{listed}");
    }
    editor.send(list(json!(6.5))).await;
    let fractional = editor.reply().await;
    assert_eq!(fractional["error"]["code"], -32600, "{fractional}");
    assert_eq!(fractional["id"], Value::Null);
    // An unknown command is the handler's own error, with the request's id.
    editor
        .send(
            json!({"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand",
                     "params": {"command": "mcp-sidecar.nope"}}),
        )
        .await;
    let unknown = editor.reply().await;
    assert_error(&unknown, json!(7), -32602);

    // After `shutdown`: tower-lsp-server's "invalid request"; `exit` ends the loop.
    editor
        .send(json!({"jsonrpc": "2.0", "id": 8, "method": "shutdown"}))
        .await;
    let shutdown = editor.reply().await;
    assert_eq!(shutdown["id"], 8);
    assert!(shutdown.get("error").is_none(), "{shutdown}");
    editor.send(list(json!(9))).await;
    let late = editor.reply().await;
    assert_error(&late, json!(9), -32600);
    editor
        .send(json!({"jsonrpc": "2.0", "method": "exit"}))
        .await;
    tokio::time::timeout(Duration::from_secs(20), served)
        .await
        .expect("serve returns after exit")
        .unwrap();
}

/// A `callTool` gets one reply: alone, with a cancel right after its answer, and several at
/// once add none. (On two worker threads, so the server's read and the loop run at the same
/// time.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_is_answered_once() {
    let (mut editor, served) = RawEditor::serve();
    let options = with_user_scopes(json!({"servers": {"demo": demo_server("legacy", None)}}));
    editor
        .send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                     "params": {"capabilities": {"experimental": {"mcpSidecar": {"serverScopes": true}}},
                                "initializationOptions": options}}))
        .await;
    editor.reply().await;
    editor
        .send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        .await;
    editor
        .until(|m| {
            m["method"] == "mcp-sidecar/serverStatus"
                && m["params"]["name"] == "demo"
                && m["params"]["state"] == "running"
        })
        .await;
    let add = |id: i64, a: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "workspace/executeCommand",
               "params": {"command": "mcp-sidecar.callTool",
                          "arguments": [{"server": "demo", "tool": "add", "arguments": {"a": a, "b": 2}}]}})
    };
    let sum = |reply: &Value| structured(&reply["result"])["sum"].as_i64();

    for id in 10..40 {
        editor.send(add(id, id)).await;
        let reply = editor.reply().await;
        assert_eq!(
            (&reply["id"], sum(&reply)),
            (&json!(id), Some(id + 2)),
            "{reply}"
        );
        editor
            .send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": id}}))
            .await;
    }
    let mut frames = Vec::new();
    for id in 100..120 {
        let body = add(id, id).to_string();
        frames
            .extend_from_slice(format!("Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes());
    }
    editor.send_bytes(&frames).await;
    let mut answered = Vec::new();
    for _ in 100..120 {
        let reply = editor.reply().await;
        let id = reply["id"].as_i64().unwrap();
        assert_eq!(sum(&reply), Some(id + 2), "{reply}");
        answered.push(id);
    }
    answered.sort();
    assert_eq!(answered, (100..120).collect::<Vec<_>>());
    // The next reply is the next request's: no second answer to any call came before it.
    editor
        .send(
            json!({"jsonrpc": "2.0", "id": 200, "method": "workspace/executeCommand",
                     "params": {"command": "mcp-sidecar.listServers"}}),
        )
        .await;
    let listed = editor.reply().await;
    assert_eq!(listed["id"], 200, "{listed}");

    editor
        .send(json!({"jsonrpc": "2.0", "id": 201, "method": "shutdown"}))
        .await;
    assert_eq!(editor.reply().await["id"], 201);
    editor
        .send(json!({"jsonrpc": "2.0", "method": "exit"}))
        .await;
    tokio::time::timeout(Duration::from_secs(20), served)
        .await
        .expect("serve returns after exit")
        .unwrap();
}
