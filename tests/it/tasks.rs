//! Tasks (SEP-2663) through the editor contract, against the FastMCP tasks server
//! (`fixtures/python/fastmcp_tasks_server.py`, PyPI `fastmcp` + `fastmcp-tasks`): a call that
//! becomes a task is polled to its end, its question asked in the editor and answered with
//! `tasks/update`, its status shown as progress and in `listTasks`; cancelling the call sends
//! `tasks/cancel`. Ignored by a plain `cargo test` (they need peers); the interop tier runs them.

use crate::support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::*;

const PICK: &str = "mcp-sidecar/quickPick";

/// The FastMCP tasks server over stdio, polled every `poll_ms`.
fn fastmcp(poll_ms: u32, cancel_log: Option<&std::path::Path>) -> Value {
    let mut env = json!({"TASKS_POLL_MS": poll_ms.to_string(), "TASKS_WORK_MS": "1000"});
    if let Some(log) = cancel_log {
        env["TASKS_CANCEL_LOG"] = json!(log.display().to_string());
    }
    json!({
        "command": peer("MCP_PYTHON"),
        "args": [fixture("python/fastmcp_tasks_server.py").display().to_string()],
        "env": env,
    })
}

async fn with_server(name: &str, definition: Value) -> CheckedEditor {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(&[], json!({"servers": {name: definition}}), full_ui())
        .await;
    editor.wait_status(mark, name, "running").await;
    editor
}

/// Answers the sidecar's prompts until `call` ends: in a pick, the item labelled `choice` (or
/// the first that accepts); returns the call's response and the prompts shown.
async fn answer_until_done(
    editor: &Arc<TestEditor>,
    mut call: tokio::task::JoinHandle<Value>,
    choice: &str,
) -> (Value, Vec<Value>) {
    let mut shown = Vec::new();
    loop {
        tokio::select! {
            done = &mut call => return (done.unwrap(), shown),
            prompt = editor.next_prompt() => {
                assert_eq!(prompt["method"], PICK, "unexpected prompt {prompt:#}");
                let items = prompt["params"]["items"].as_array().unwrap();
                let index = items
                    .iter()
                    .position(|i| i["label"].as_str().is_some_and(|l| l.contains(choice)))
                    .or_else(|| items.iter().position(|i| {
                        i["label"].as_str().is_some_and(|l| l.starts_with("Submit") || l.starts_with("Accept"))
                    }))
                    .unwrap_or_else(|| panic!("nothing to pick in {prompt:#}"));
                editor.respond(&prompt, json!({"selected": [index]})).await;
                shown.push(prompt);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_task_is_polled_asks_once_and_delivers_its_result() {
    let editor = with_server("fmtasks", fastmcp(200, None)).await;
    let mark = editor.mark();
    let call = spawn_call_with_token(
        &editor,
        "fmtasks",
        "slow_report",
        json!({"topic": "rust"}),
        "t1",
    );
    let (response, shown) = answer_until_done(&editor, call, "long").await;
    let result = &response["result"];
    assert_eq!(
        text_of(result),
        "report on rust: depth long",
        "{response:#}"
    );
    // The question was asked once, saying which server asks.
    let asked: Vec<_> = shown
        .iter()
        .filter(|p| {
            p["params"]["items"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["label"] == "long")
        })
        .collect();
    assert_eq!(asked.len(), 1, "{shown:#?}");
    assert!(
        asked[0]["params"]["title"]
            .as_str()
            .unwrap()
            .contains("fmtasks")
    );
    // The task's status reached the editor as progress, and its end as taskStatus.
    let reports = editor.read_notifications(mark, |n| {
        n["method"] == "$/progress"
            && n["params"]["token"] == "t1"
            && n["params"]["value"]["kind"] == "report"
    });
    assert!(
        reports.iter().any(|n| n["params"]["value"]["message"]
            .as_str()
            .unwrap()
            .starts_with("task ")),
        "{reports:#?}"
    );
    let ended = editor
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/taskStatus" && n["params"]["status"] == "completed"
        })
        .await;
    assert_eq!(ended["params"]["tool"], "slow_report");
    // listTasks has it, finished, with its result.
    let tasks = editor.command("mcp-sidecar.listTasks", Value::Null).await;
    let row = tasks
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["taskId"] == ended["params"]["taskId"])
        .unwrap_or_else(|| panic!("{tasks:#}"));
    assert_eq!(row["status"], "completed");
    assert_eq!(text_of(&row["result"]), "report on rust: depth long");
    editor.ignore("mcp-sidecar/taskStatus");
    editor.ignore("$/progress");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn cancelling_the_call_sends_tasks_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cancel.log");
    let editor = with_server("fmcancel", fastmcp(200, Some(&log))).await;
    let mark = editor.mark();
    let (id, reply) = editor
        .start_request(
            "workspace/executeCommand",
            call_with_token("fmcancel", "never_finishes", json!({}), "t2"),
        )
        .await;
    let started = editor
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/taskStatus" && n["params"]["tool"] == "never_finishes"
        })
        .await;
    let task_id = started["params"]["taskId"].as_str().unwrap().to_string();
    editor.notify("$/cancelRequest", json!({"id": id})).await;
    let _ = reply.await;
    let ended = editor
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/taskStatus"
                && n["params"]["taskId"] == task_id.as_str()
                && n["params"]["status"] == "cancelled"
        })
        .await;
    assert_eq!(ended["params"]["server"], "fmcancel");
    eventually("the server logs the cancel", || {
        let log = log.clone();
        let task_id = task_id.clone();
        async move {
            std::fs::read_to_string(&log)
                .is_ok_and(|text| text.contains(&format!("cancelled never_finishes {task_id}")))
        }
    })
    .await;
    editor.ignore("mcp-sidecar/taskStatus");
    editor.ignore("$/progress");
}
