//! Bad input from servers and bad definitions: each gets a clear error, and the sidecar keeps
//! serving the editor and the other servers.

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn python(script: &str, args: &[&str]) -> Value {
    let mut all = vec![fixture(script).display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    json!({"command": "python3", "args": all, "timeout": 3})
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_servers_get_clear_errors_and_the_rest_keeps_working() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({
                "maxRestarts": 1,
                "servers": {
                    "demo": demo_server("both", None),
                    "garbage": python("bad/garbage.py", &["--interleave"]),
                    "exits": python("bad/exits.py", &[]),
                    "hangs": python("bad/hangs.py", &[]),
                    "oversize": python("bad/oversize.py", &["2000000"]),
                    "nocommand": {"args": ["x"]},
                    "badurl": {"type": "http", "url": "http//missing-colon"},
                    "missing": {"command": "definitely-not-a-real-command-xyz"},
                },
                "maxMessageBytes": 1000000,
            }),
            json!({}),
        )
        .await;
    // Definitions with errors fail at once with a message naming the problem.
    let nocommand = editor.wait_status(mark, "nocommand", "failed").await;
    assert!(
        nocommand["message"]
            .as_str()
            .unwrap()
            .contains("needs either \"command\""),
        "{nocommand}"
    );
    let badurl = editor.wait_status(mark, "badurl", "failed").await;
    assert!(
        badurl["message"]
            .as_str()
            .unwrap()
            .contains("not a valid URL"),
        "{badurl}"
    );
    let missing = editor.wait_status(mark, "missing", "failed").await;
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("command not found"),
        "{missing}"
    );

    // A server that exits at once: its exit code and last stderr line.
    let exits = editor.wait_status(mark, "exits", "failed").await;
    let message = exits["message"].as_str().unwrap();
    assert!(
        message.contains("code 3") && message.contains("missing API key"),
        "{message}"
    );

    // A server that prints garbage on stdout still works.
    editor.wait_status(mark, "garbage", "running").await;
    let pong = editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": "garbage", "tool": "ping_tool"}),
        )
        .await;
    assert_eq!(text_of(&pong), "pong");

    // A line over maxMessageBytes: the call fails promptly with the reason.
    editor.wait_status(mark, "oversize", "running").await;
    let started = Instant::now();
    let big = editor
        .command_response(
            "mcp-sidecar.callTool",
            json!({"server": "oversize", "tool": "big"}),
        )
        .await;
    let error = big["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(error.contains("maxMessageBytes"), "{big}");
    assert!(started.elapsed() < Duration::from_secs(3));

    // A server that never answers the handshake fails after its timeout, with that said.
    let hangs = editor.wait_status(mark, "hangs", "failed").await;
    assert!(
        hangs["message"].as_str().unwrap().contains("within 3 s"),
        "{hangs}"
    );

    // Through all of it the demo server and the editor requests work.
    editor.wait_status(mark, "demo", "running").await;
    let echo = editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": "demo", "tool": "echo", "arguments": {"text": "still here"}}),
        )
        .await;
    assert_eq!(text_of(&echo), "still here");
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert_eq!(listed.as_array().unwrap().len(), 8);

    // Giving up after maxRestarts is said, and restartServer revives a server.
    let gave_up = editor
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/serverStatus"
                && n["params"]["name"] == "exits"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("gave up after 1 restarts"))
        })
        .await;
    assert_eq!(gave_up["params"]["state"], "failed");
    let refused = editor
        .command_response("mcp-sidecar.restartServer", json!({"server": "nocommand"}))
        .await;
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot be started")
    );
    editor.shutdown_and_exit().await;
}

/// The row of `listServers` for `server`.
async fn server_row(editor: &TestEditor, server: &str) -> Value {
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == server)
        .cloned()
        .unwrap_or_else(|| panic!("no {server} in {listed}"))
}

/// A call started now, answered later.
async fn start_call(
    editor: &TestEditor,
    server: &str,
    tool: &str,
    arguments: Value,
) -> tokio::sync::oneshot::Receiver<Value> {
    editor
        .start_request(
            "workspace/executeCommand",
            json!({"command": "mcp-sidecar.callTool",
                   "arguments": [{"server": server, "tool": tool, "arguments": arguments}]}),
        )
        .await
        .1
}

async fn response_of(rx: tokio::sync::oneshot::Receiver<Value>) -> Value {
    tokio::time::timeout(WAIT, rx)
        .await
        .expect("no response")
        .expect("editor connection closed")
}

/// A server that dies in the middle of a call (first on its own, then SIGKILLed from outside):
/// the editor's call fails promptly with `serverGone`, the server is restarted, and the other
/// servers, including a call in flight on one of them, never notice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_call_fails_the_call_promptly_and_restarts() {
    const PROMPT: Duration = Duration::from_secs(2);
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "crashy": python("bad/crash_on_call.py", &[]),
                "other": python("bad/crash_on_call.py", &[]),
                "demo": demo_server("both", None),
            }}),
            json!({}),
        )
        .await;
    for server in ["crashy", "other", "demo"] {
        editor.wait_status(mark, server, "running").await;
    }

    // 1. The server exits on its own while handling the call; a slow call to another server is
    // in flight meanwhile.
    let other_pid = text_of(&call(&editor, "other", "pid", json!({})).await);
    let slow = start_call(&editor, "other", "sleep", json!({"seconds": 1.0})).await;
    let mark = editor.mark();
    let started = Instant::now();
    let crashed = editor
        .command_response(
            "mcp-sidecar.callTool",
            json!({"server": "crashy", "tool": "crash"}),
        )
        .await;
    let crash_error = started.elapsed();
    assert_eq!(crashed["error"]["data"]["kind"], "serverGone", "{crashed}");
    let failed = editor.wait_status(mark, "crashy", "failed").await;
    assert!(
        failed["message"].as_str().unwrap().contains("code 1"),
        "{failed}"
    );
    // While it is down, the other servers answer.
    let during = Instant::now();
    let echo = call(&editor, "demo", "echo", json!({"text": "unaffected"})).await;
    assert_eq!(text_of(&echo), "unaffected");
    let demo_during = during.elapsed();
    editor.wait_status(mark, "crashy", "running").await;
    let restart_1 = started.elapsed();
    let slow = response_of(slow).await;
    assert_eq!(text_of(&slow["result"]), "slept 1.0", "{slow}");
    // The restarted server works; the tool call was not re-sent on its own.
    let echo = call(&editor, "crashy", "echo", json!({"text": "again"})).await;
    assert_eq!(text_of(&echo), "again");
    assert_eq!(server_row(&editor, "crashy").await["restarts"], 1);
    eprintln!(
        "crash (exit 1) mid-call: error after {crash_error:.2?}, running again after {restart_1:.2?}; \
         demo answered in {demo_during:.2?} meanwhile"
    );
    assert!(crash_error < PROMPT, "{crash_error:?}");

    // 2. SIGKILL from outside while a call waits on a server that never answers it; a slow call
    // to the other server and calls to the demo server go on meanwhile.
    let pid: i32 = text_of(&call(&editor, "crashy", "pid", json!({})).await)
        .parse()
        .unwrap();
    let blocked = start_call(&editor, "crashy", "block", json!({})).await;
    let slow = start_call(&editor, "other", "sleep", json!({"seconds": 1.5})).await;
    // Let the call reach the server.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mark = editor.mark();
    let killed = Instant::now();
    // SAFETY: kill(2) on a process this test started (through the sidecar) and still owns.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
    let blocked = response_of(blocked).await;
    let kill_error = killed.elapsed();
    assert_eq!(blocked["error"]["data"]["kind"], "serverGone", "{blocked}");
    let during = Instant::now();
    let echo = call(&editor, "demo", "echo", json!({"text": "still unaffected"})).await;
    assert_eq!(text_of(&echo), "still unaffected");
    let demo_during = during.elapsed();
    let failed = editor.wait_status(mark, "crashy", "failed").await;
    assert!(
        failed["message"].as_str().unwrap().contains("signal 9"),
        "{failed}"
    );
    editor.wait_status(mark, "crashy", "running").await;
    let restart_2 = killed.elapsed();
    let slow = response_of(slow).await;
    assert_eq!(text_of(&slow["result"]), "slept 1.5", "{slow}");
    let slow_done = killed.elapsed();
    let new_pid = text_of(&call(&editor, "crashy", "pid", json!({})).await);
    assert_ne!(new_pid, pid.to_string(), "a new process");
    assert_eq!(server_row(&editor, "crashy").await["restarts"], 2);
    // The other servers never restarted (same process, no restarts).
    assert_eq!(
        text_of(&call(&editor, "other", "pid", json!({})).await),
        other_pid
    );
    for server in ["other", "demo"] {
        let row = server_row(&editor, server).await;
        assert_eq!(row["state"], "running", "{row}");
        assert_eq!(row["restarts"], 0, "{row}");
    }
    eprintln!(
        "SIGKILL mid-call: error after {kill_error:.2?}, running again after {restart_2:.2?}; \
         demo answered in {demo_during:.2?}, the other server's 1.5 s call finished at {slow_done:.2?}"
    );
    assert!(kill_error < PROMPT, "{kill_error:?}");
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_input_required_rounds_are_capped_with_state_echoed_exactly() {
    let a = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(a.path(), "a")],
            json!({"servers": {"endless": python("bad/endless_mrtr.py", &[])}}),
            json!({}),
        )
        .await;
    let status = editor.wait_status(mark, "endless", "running").await;
    assert_eq!(status["protocolVersion"], "2026-07-28");
    let response = editor
        .command_response(
            "mcp-sidecar.callTool",
            json!({"server": "endless", "tool": "endless"}),
        )
        .await;
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("after 16 rounds"), "{response}");
    let stats = editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": "endless", "tool": "stats"}),
        )
        .await;
    assert_eq!(
        stats["structuredContent"],
        json!({"calls": 16, "mismatches": 0, "duplicateIds": 0, "rootsAnswers": 15})
    );
    editor.shutdown_and_exit().await;
}
