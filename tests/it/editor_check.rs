//! The scripted editor's own check ([`support::CheckedEditor`]): a test that leaves something
//! the sidecar sent unread fails when it drops its editor, naming what was left.

use crate::support;

use std::panic::{AssertUnwindSafe, catch_unwind};

use serde_json::json;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_a_request_and_a_reply_left_unread_fail_the_test() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"demo": demo_server("both", None), "nocommand": {"args": ["x"]}}}),
            json!({"mcpSidecar": {"quickPick": true}}),
        )
        .await;
    editor.wait_status(mark, "demo", "running").await;
    // Read: the status. Left unread: the message shown about the same definition.
    editor.wait_status(mark, "nocommand", "failed").await;
    // Left unread: the question which server to restart (the command waits for it).
    let (_, _restart) = editor
        .start_request(
            "workspace/executeCommand",
            json!({"command": "mcp-sidecar.restartServer", "arguments": [{}]}),
        )
        .await;
    eventually("the quick pick to come", || async {
        editor.requests_seen("mcp-sidecar/quickPick") == 1
    })
    .await;
    // Left unread: a reply whose request the test dropped.
    let (_, dropped) = editor
        .start_request(
            "workspace/executeCommand",
            json!({"command": "mcp-sidecar.listServers", "arguments": [{}]}),
        )
        .await;
    drop(dropped);
    eventually("the dropped request's reply to come", || async {
        editor.unread().iter().any(|u| u.starts_with("  reply "))
    })
    .await;

    let unread = editor.unread();
    assert_eq!(unread.len(), 3, "{unread:#?}");
    assert!(
        unread[0].starts_with("  notification ") && unread[0].contains("window/showMessage"),
        "{unread:#?}"
    );
    assert!(
        unread[1].starts_with("  request ") && unread[1].contains("mcp-sidecar/quickPick"),
        "{unread:#?}"
    );
    assert!(unread[2].contains("\"name\":\"demo\""), "{unread:#?}");

    // Dropping the test's editor fails the test, naming them.
    let shared = std::sync::Arc::clone(&editor);
    let failed = catch_unwind(AssertUnwindSafe(|| drop(editor))).expect_err("the drop fails");
    let said = failed
        .downcast_ref::<String>()
        .expect("a formatted message");
    assert!(
        said.contains("3 message(s) the test did not read") && said.contains("quickPick"),
        "{said}"
    );

    // Saying what the test does not care about clears the notification and the request; a
    // stray reply stays unexpected.
    shared.ignore("window/showMessage");
    shared.ignore("mcp-sidecar/quickPick");
    let unread = shared.unread();
    assert_eq!(unread.len(), 1, "{unread:#?}");
    assert!(unread[0].starts_with("  reply "), "{unread:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_that_reads_what_came_passes() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"nocommand": {"args": ["x"]}}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "nocommand", "failed").await;
    assert_eq!(editor.unread().len(), 1, "{:#?}", editor.unread());
    wait_shown(
        &editor,
        mark,
        "server \"nocommand\": needs either \"command\"",
    )
    .await;
    assert!(editor.unread().is_empty(), "{:#?}", editor.unread());
    editor.shutdown_and_exit().await;
}
