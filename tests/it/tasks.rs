//! Tasks (SEP-2663) through the editor contract: a call that becomes a task is polled to its
//! end, its question asked in the editor and answered with `tasks/update`, its status shown as
//! progress and in `listTasks`; cancelling the call sends `tasks/cancel`; a sidecar that stops
//! mid-task leaves it to the next one, which delivers its result. Against the demo server
//! (rmcp's task support, both eras), the hostile `fixtures/bad/hostile_tasks.py` (stdlib), and
//! the FastMCP tasks server (`fixtures/python/fastmcp_tasks_server.py`, PyPI `fastmcp` +
//! `fastmcp-tasks`; those tests are ignored by a plain `cargo test`, the interop tier runs them).

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

/// An editor with one server, in a workspace folder of its own (so its task book is its own).
async fn with_server(name: &str, definition: Value) -> CheckedEditor {
    let folder = tempfile::tempdir().unwrap().keep();
    in_folder(&folder, name, definition).await
}

async fn in_folder(folder: &std::path::Path, name: &str, definition: Value) -> CheckedEditor {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(folder, "ws")],
            json!({"servers": {name: definition}}),
            full_ui(),
        )
        .await;
    editor.wait_status(mark, name, "running").await;
    editor
}

/// The hostile tasks server, logging its events to `log`.
fn hostile(log: &std::path::Path) -> Value {
    let mut def = python_fixture("bad/hostile_tasks.py", &[], 10);
    def["env"] = json!({"HOSTILE_TASKS_LOG": log.display().to_string()});
    def
}

fn log_lines(log: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demos_task_asks_once_and_ends_in_both_eras() {
    for era in ["legacy", "modern"] {
        let server = format!("demotask{era}");
        let editor = with_server(&server, demo_server(era, None)).await;
        let mark = editor.mark();
        let call = spawn_call_with_token(
            &editor,
            &server,
            "slow_task",
            json!({"steps": 4, "stepMs": 50}),
            "d1",
        );
        let (response, shown) = answer_until_done(&editor, call, "Yes").await;
        assert_eq!(
            text_of(&response["result"]),
            "Done after 4 steps: you chose to keep the details.",
            "{era}: {response:#}"
        );
        // The question says whose task asks, and which one.
        let title = shown[0]["params"]["title"].as_str().unwrap();
        assert!(
            title.starts_with(&format!("{server}, for the task started "))
                && title.ends_with(" UTC, asks: Keep the details?"),
            "{title}"
        );
        let ended = editor
            .wait_notification(mark, |n| {
                n["method"] == "mcp-sidecar/taskStatus" && n["params"]["status"] == "completed"
            })
            .await;
        assert_eq!(ended["params"]["server"], server.as_str());
        let reports = editor.read_notifications(mark, |n| {
            n["method"] == "$/progress" && n["params"]["value"]["kind"] == "report"
        });
        assert!(
            reports.iter().any(|n| n["params"]["value"]["message"]
                .as_str()
                .unwrap()
                .contains("step ")),
            "{era}: {reports:#?}"
        );
        editor.ignore("mcp-sidecar/taskStatus");
        editor.ignore("$/progress");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_asks_for_a_zero_interval_is_not_polled_faster() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.log");
    let editor = with_server("zerotask", hostile(&log)).await;
    let result = call(&editor, "zerotask", "zero_interval", json!({"polls": 6})).await;
    assert_eq!(text_of(&result), "done after 6 polls", "{result:#}");
    let times: Vec<u64> = log_lines(&log)
        .iter()
        .filter_map(|l| l.strip_prefix("poll "))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(times.len() >= 6, "{times:?}");
    for pair in times.windows(2) {
        // MIN_POLL (100 ms), less the clock's rounding.
        assert!(
            pair[1] - pair[0] >= 98,
            "polled {} ms apart: {times:?}",
            pair[1] - pair[0]
        );
    }
    editor.ignore("mcp-sidecar/taskStatus");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_task_id_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let editor = with_server("hugeid", hostile(&dir.path().join("events.log"))).await;
    let response = editor
        .command_response(
            "mcp-sidecar.callTool",
            json!({"server": "hugeid", "tool": "huge_id", "arguments": {}}),
        )
        .await;
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("task id of 1048576 bytes"), "{response:#}");
    // The server still works.
    let result = call(&editor, "hugeid", "finishes", json!({})).await;
    assert_eq!(text_of(&result), "finished");
    editor.ignore("mcp-sidecar/taskStatus");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_asks_forever_is_asked_each_key_once_then_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.log");
    let editor = with_server("askstask", hostile(&log)).await;
    let call = spawn_call_response(&editor, "askstask", "asks_forever", json!({}));
    for _ in 0..8 {
        // Dismissed: the server gets "cancel" and asks again under a new key.
        let prompt = editor.next_prompt().await;
        editor.respond(&prompt, Value::Null).await;
    }
    let response = call.await.unwrap();
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("more than 8 questions"), "{response:#}");
    let lines = log_lines(&log);
    assert!(lines.iter().any(|l| l.starts_with("cancel ")), "{lines:#?}");
    // No key was answered twice, though the server asked q1 again and again.
    assert!(
        lines
            .iter()
            .filter(|l| l.starts_with("answer "))
            .all(|l| l.ends_with(" 1")),
        "{lines:#?}"
    );
    assert!(editor.requests_seen("mcp-sidecar/") >= 8);
    editor.ignore("mcp-sidecar/taskStatus");
    editor.ignore("mcp-sidecar/cancelPrompt");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_task_sends_tasks_cancel_and_ends_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.log");
    let editor = with_server("nevertask", hostile(&log)).await;
    let mark = editor.mark();
    let call = spawn_call_response(&editor, "nevertask", "never", json!({}));
    let started = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/taskStatus")
        .await;
    let task_id = started["params"]["taskId"].clone();
    let now = editor
        .command(
            "mcp-sidecar.cancelTask",
            json!({"server": "nevertask", "taskId": task_id}),
        )
        .await;
    assert_eq!(now["status"], "working");
    let response = call.await.unwrap();
    assert_eq!(
        response["error"]["data"]["kind"], "cancelled",
        "{response:#}"
    );
    let lines = log_lines(&log);
    assert!(
        lines.contains(&format!("cancel {}", task_id.as_str().unwrap())),
        "{lines:#?}"
    );
    let tasks = editor.command("mcp-sidecar.listTasks", Value::Null).await;
    assert_eq!(tasks[0]["status"], "cancelled", "{tasks:#}");
    // An unknown task is refused.
    let unknown = editor
        .command_response(
            "mcp-sidecar.cancelTask",
            json!({"server": "nevertask", "taskId": "nope"}),
        )
        .await;
    assert!(unknown["error"].is_object(), "{unknown:#}");
    editor.ignore("mcp-sidecar/taskStatus");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_task_outlives_its_killed_sidecar_and_the_next_one_delivers_its_result() {
    use tokio::io::AsyncBufReadExt;
    // FastMCP over HTTP, so the server outlives the sidecar.
    let mut server = tokio::process::Command::new(peer("MCP_PYTHON"))
        .arg(fixture("python/fastmcp_tasks_server.py"))
        .args(["--http", "0"])
        .env("TASKS_POLL_MS", "200")
        .env("TASKS_WORK_MS", "1000")
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let ready = lines.next_line().await.unwrap().unwrap();
    let url = ready.strip_prefix("ready ").unwrap().to_string();
    let folder = tempfile::tempdir().unwrap();
    let def = json!({"url": url});
    // The first sidecar is the built binary, killed (SIGKILL) mid-task.
    let (mut child, first) = spawn_editor(&mut sidecar_command());
    let mark = first.mark();
    first
        .initialize(
            &[(folder.path(), "ws")],
            json!({"servers": {"fmhttp": def.clone()}}),
            full_ui(),
        )
        .await;
    first.wait_status(mark, "fmhttp", "running").await;
    let (_id, _reply) = first
        .start_request(
            "workspace/executeCommand",
            call_with_token("fmhttp", "slow_report", json!({"topic": "restarts"}), "r1"),
        )
        .await;
    let started = first
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/taskStatus")
        .await;
    let task_id = started["params"]["taskId"].clone();
    first.ignore("mcp-sidecar/taskStatus");
    first.ignore("$/progress");
    child.start_kill().unwrap();
    let _ = child.wait().await;

    // The next sidecar of the workspace follows the task: the question (never answered) is
    // asked by it, and the result reaches its editor.
    let second = in_folder(folder.path(), "fmhttp", def).await;
    let mark = second.mark();
    let pick = second.next_prompt().await;
    let long = pick["params"]["items"]
        .as_array()
        .unwrap()
        .iter()
        .position(|i| i["label"] == "long")
        .unwrap_or_else(|| panic!("{pick:#}"));
    second.respond(&pick, json!({"selected": [long]})).await;
    let review = second.next_prompt().await;
    second.respond(&review, json!({"selected": [0]})).await;
    let ended = second
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/taskStatus"
                && n["params"]["taskId"] == task_id
                && n["params"]["status"] == "completed"
        })
        .await;
    assert_eq!(
        text_of(&ended["params"]["result"]),
        "report on restarts: depth long"
    );
    second.ignore("mcp-sidecar/taskStatus");
    let _ = server.kill().await;
}

/// The 2025-11-25 form: server-everything's `simulate-research-query` requires a task-augmented
/// call; its question comes while `tasks/result` is open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everythings_task_of_the_2025_11_25_form() {
    let def = json!({"command": "node", "args": [peer("MCP_EVERYTHING_JS"), "stdio"]});
    let editor = with_server("evtasks", def).await;
    let mark = editor.mark();
    let mut call = spawn_call_with_token(
        &editor,
        "evtasks",
        "simulate-research-query",
        json!({"topic": "rust", "ambiguous": true}),
        "e1",
    );
    let mut asked = 0;
    let response = loop {
        tokio::select! {
            done = &mut call => break done.unwrap(),
            prompt = editor.next_prompt() => {
                // The clarification is a choice: its first item, then Submit on the review.
                asked += 1;
                editor.respond(&prompt, json!({"selected": [0]})).await;
            }
        }
    };
    let text = text_of(&response["result"]);
    assert!(
        text.starts_with("# Research Report: rust (") && asked > 0,
        "{response:#}"
    );
    // The task's end is told as it is delivered (the notification may follow the response).
    editor
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/taskStatus" && n["params"]["status"] == "completed"
        })
        .await;
    let statuses: Vec<String> = editor
        .read_notifications(mark, |n| n["method"] == "mcp-sidecar/taskStatus")
        .iter()
        .map(|n| n["params"]["status"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        statuses.first().map(String::as_str),
        Some("working"),
        "{statuses:?}"
    );
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{statuses:?}"
    );
    // Its other tools are called as before (no task augmentation).
    let echo = call_tool_text(&editor, "evtasks", "echo", json!({"message": "hi"})).await;
    assert!(echo.contains("hi"), "{echo}");
    editor.ignore("mcp-sidecar/taskStatus");
    editor.ignore("$/progress");
}

async fn call_tool_text(editor: &TestEditor, server: &str, tool: &str, arguments: Value) -> String {
    text_of(&call(editor, server, tool, arguments).await)
}
