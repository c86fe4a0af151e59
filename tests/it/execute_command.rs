//! `workspace/executeCommand` as the editor's face takes it: every such request, usual or not,
//! is answered by the serve loop, the unusual ones exactly as tower-lsp-server answers them
//! (its lifecycle layers, its request-id table and its params reading).

use crate::support;

use serde_json::{Value, json};
use support::*;

const METHOD: &str = "workspace/executeCommand";

fn list(id: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": METHOD,
           "params": {"command": "mcp-sidecar.listServers"}})
}

/// The whole error reply tower-lsp-server writes: no `data`, the request's id.
fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

async fn initialize(editor: &mut RawEditor, id: i64) {
    editor
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
                     "params": {"capabilities": {}}}))
        .await;
    let init = editor.reply().await;
    assert!(init["result"]["capabilities"].is_object(), "{init}");
    editor
        .send(json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        .await;
}

/// Before `initialize` has succeeded: -32002 "Server not initialized"; a second `initialize`
/// (refused) leaves the commands served; after `shutdown`: -32600 "Invalid request". A command
/// sent as a notification is never answered, in any state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn around_the_lifecycle_a_command_is_answered_as_tower_lsp_server_answers_it() {
    let (mut editor, served) = RawEditor::serve();
    let notification = json!({"jsonrpc": "2.0", "method": METHOD, "params": {"command": "mcp-sidecar.listServers"}});

    editor.send(notification.clone()).await;
    editor.send(list(json!(1))).await;
    assert_eq!(
        editor.reply().await,
        error(json!(1), -32002, "Server not initialized")
    );
    // An `initialize` that fails leaves the server uninitialized.
    editor
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": {}}))
        .await;
    let failed = editor.reply().await;
    assert_eq!(failed["id"], 2);
    assert_eq!(failed["error"]["code"], -32602, "{failed}");
    editor.send(list(json!(3))).await;
    assert_eq!(
        editor.reply().await,
        error(json!(3), -32002, "Server not initialized")
    );

    initialize(&mut editor, 4).await;
    editor.send(notification.clone()).await;
    editor.send(list(json!(5))).await;
    assert_eq!(
        editor.reply().await,
        json!({"jsonrpc": "2.0", "id": 5, "result": []})
    );
    // A second `initialize` is refused and changes nothing.
    editor
        .send(json!({"jsonrpc": "2.0", "id": 6, "method": "initialize",
                     "params": {"capabilities": {}}}))
        .await;
    assert_eq!(
        editor.reply().await,
        error(json!(6), -32600, "Invalid request")
    );
    editor.send(list(json!(7))).await;
    assert_eq!(
        editor.reply().await,
        json!({"jsonrpc": "2.0", "id": 7, "result": []})
    );

    editor
        .send(json!({"jsonrpc": "2.0", "id": 8, "method": "shutdown"}))
        .await;
    assert_eq!(
        editor.reply().await,
        json!({"jsonrpc": "2.0", "id": 8, "result": null})
    );
    editor.send(notification).await;
    editor.send(list(json!(9))).await;
    assert_eq!(
        editor.reply().await,
        error(json!(9), -32600, "Invalid request")
    );
    // Nothing else came: no answer to the notifications.
    assert_eq!(editor.exit(served).await, Vec::<Value>::new());
}

/// Ids: an integer, a string and `null` are served (`null` answered with a `null` id); a
/// fractional or structured id, or a `jsonrpc` other than "2.0", is not a request
/// tower-lsp-server reads: -32600 with a `null` id; an id already in use by a command in flight
/// is -32600 to the second request, and the first is still answered, once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_id_is_answered_as_tower_lsp_server_answers_it() {
    let (mut editor, served) = RawEditor::serve();
    initialize(&mut editor, 1).await;
    for id in [json!(2), json!("three"), json!(-4), Value::Null] {
        editor.send(list(id.clone())).await;
        assert_eq!(
            editor.reply().await,
            json!({"jsonrpc": "2.0", "id": id, "result": []})
        );
    }
    for id in [json!(5.5), json!({"n": 5}), json!([5]), json!(true)] {
        editor.send(list(id)).await;
        assert_eq!(
            editor.reply().await,
            error(Value::Null, -32600, "Invalid request")
        );
    }
    let mut old = list(json!(6));
    old["jsonrpc"] = json!("1.0");
    editor.send(old).await;
    assert_eq!(
        editor.reply().await,
        error(Value::Null, -32600, "Invalid request")
    );

    // A command in flight: it waits for the editor to show the sampling log.
    for (id, again) in [
        (json!(7), list(json!(7))),
        (json!("eight"), list(json!("eight"))),
    ] {
        editor
            .send(json!({"jsonrpc": "2.0", "id": id, "method": METHOD,
                         "params": {"command": "mcp-sidecar.openSamplingLog"}}))
            .await;
        let show = editor.until(|m| m["method"] == "window/showDocument").await;
        editor.send(again).await;
        assert_eq!(
            editor.reply().await,
            error(id.clone(), -32600, "Invalid request")
        );
        editor
            .send(json!({"jsonrpc": "2.0", "id": show["id"], "result": {"success": true}}))
            .await;
        let opened = editor.reply().await;
        assert_eq!(opened["id"], id, "{opened}");
        assert_eq!(opened["result"]["opened"], true, "{opened}");
        // The id is free again.
        editor.send(list(id.clone())).await;
        assert_eq!(
            editor.reply().await,
            json!({"jsonrpc": "2.0", "id": id, "result": []})
        );
    }
    editor
        .send(json!({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}))
        .await;
    assert_eq!(editor.reply().await["id"], 9);
    assert_eq!(editor.exit(served).await, Vec::<Value>::new());
}

/// Params that do not read as `ExecuteCommandParams`: -32602 with serde's reason, as
/// tower-lsp-server words it; params it reads in its own way (a member named twice: the last
/// one) run as it runs them; an escaped method name is the same method.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn params_are_read_as_tower_lsp_server_reads_them() {
    let (mut editor, served) = RawEditor::serve();
    initialize(&mut editor, 1).await;
    let cases = [
        (None, "Missing params field"),
        (
            Some(Value::Null),
            "invalid type: null, expected struct ExecuteCommandParams",
        ),
        (
            Some(json!(["mcp-sidecar.listServers"])),
            "invalid type: sequence, expected struct ExecuteCommandParams",
        ),
        (Some(json!({"arguments": []})), "missing field `command`"),
        (
            Some(json!({"command": 3})),
            "invalid type: integer `3`, expected a string",
        ),
        (
            Some(json!({"command": "mcp-sidecar.listServers", "arguments": {"a": 1}})),
            "invalid type: map, expected a sequence",
        ),
    ];
    for (i, (params, reason)) in cases.into_iter().enumerate() {
        let id = json!(10 + i);
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": METHOD});
        if let Some(params) = params {
            request["params"] = params;
        }
        editor.send(request).await;
        assert_eq!(editor.reply().await, error(id, -32602, reason));
    }

    editor
        .send_text(
            r#"{"jsonrpc":"2.0","id":20,"method":"workspace/executeCommand","params":{"command":"mcp-sidecar.nope","command":"mcp-sidecar.listServers"}}"#,
        )
        .await;
    assert_eq!(
        editor.reply().await,
        json!({"jsonrpc": "2.0", "id": 20, "result": []})
    );
    editor
        .send_text(
            r#"{"jsonrpc":"2.0","id":21,"method":"workspace\/executeCommand","params":{"command":"mcp-sidecar.listServers"}}"#,
        )
        .await;
    assert_eq!(
        editor.reply().await,
        json!({"jsonrpc": "2.0", "id": 21, "result": []})
    );
    // The command's own errors keep their words: an unknown command, a bad argument.
    editor
        .send(json!({"jsonrpc": "2.0", "id": 22, "method": METHOD,
                     "params": {"command": "mcp-sidecar.nope"}}))
        .await;
    assert_eq!(
        editor.reply().await,
        error(json!(22), -32602, "unknown command \"mcp-sidecar.nope\"")
    );
    editor
        .send(json!({"jsonrpc": "2.0", "id": 23, "method": METHOD,
                     "params": {"command": "mcp-sidecar.listTools", "arguments": [{"server": 1}]}}))
        .await;
    assert_eq!(
        editor.reply().await,
        error(
            json!(23),
            -32602,
            "bad command argument: invalid type: integer `1`, expected a string at line 1 column 11"
        )
    );
    editor
        .send(json!({"jsonrpc": "2.0", "id": 24, "method": "shutdown"}))
        .await;
    assert_eq!(editor.reply().await["id"], 24);
    assert_eq!(editor.exit(served).await, Vec::<Value>::new());
}

/// A command in flight is answered -32800 when `$/cancelRequest` names it, and when `exit`
/// comes while it runs (before the output ends).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_in_flight_is_cancelled_once() {
    let (mut editor, served) = RawEditor::serve();
    initialize(&mut editor, 1).await;
    let open = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": METHOD,
               "params": {"command": "mcp-sidecar.openSamplingLog"}})
    };
    editor.send(open(2)).await;
    editor.until(|m| m["method"] == "window/showDocument").await;
    editor
        .send(json!({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}}))
        .await;
    assert_eq!(editor.reply().await, error(json!(2), -32800, "Canceled"));
    editor.send(open(3)).await;
    editor.until(|m| m["method"] == "window/showDocument").await;
    // `exit` without `shutdown`: the command waiting on the editor is cancelled.
    assert_eq!(
        editor.exit(served).await,
        vec![error(json!(3), -32800, "Canceled")]
    );
}
