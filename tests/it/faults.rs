//! Bad input from servers and bad definitions: each gets a clear error, and the sidecar keeps
//! serving the editor and the other servers.

use crate::support;

use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

fn python(script: &str, args: &[&str]) -> Value {
    python_fixture(script, args, 3)
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
    let closed = editor.wait_status(mark, "oversize", "failed").await;
    assert!(
        closed["message"]
            .as_str()
            .unwrap()
            .contains("larger than maxMessageBytes"),
        "{closed}"
    );

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
    // The person was told about each bad server once, and once more on giving up (maxRestarts
    // restarts later, if the test's time allowed it for `hangs`).
    let shown = read_shown(&editor, mark);
    let told = [
        "editor settings: server \"badurl\": \"url\" is not a valid URL",
        "editor settings: server \"nocommand\": needs either \"command\"",
        "MCP server \"missing\" failed to start: cannot start",
        "MCP server \"missing\": cannot start",
        "MCP server \"exits\" failed to start: the server exited with code 3",
        "MCP server \"exits\": the server exited with code 3",
        "MCP server \"oversize\" stopped: the server sent a message larger than maxMessageBytes",
        "MCP server \"hangs\" failed to start: did not complete the MCP handshake",
    ];
    for told in told {
        let times = shown.iter().filter(|t| t.starts_with(told)).count();
        assert_eq!(times, 1, "{told}: {shown:#?}");
    }
    let hangs_gave_up = "MCP server \"hangs\": did not complete the MCP handshake";
    for text in &shown {
        assert!(
            told.iter().any(|t| text.starts_with(t)) || text.starts_with(hangs_gave_up),
            "{text}"
        );
    }
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
async fn start_call(editor: &TestEditor, server: &str, tool: &str, arguments: Value) -> Reply {
    editor
        .start_request(
            "workspace/executeCommand",
            json!({"command": "mcp-sidecar.callTool",
                   "arguments": [{"server": server, "tool": tool, "arguments": arguments}]}),
        )
        .await
        .1
}

async fn response_of(rx: Reply) -> Value {
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
    // The person is told once (a second crash within a minute is a crash loop: not told again).
    wait_shown(
        &editor,
        mark,
        "MCP server \"crashy\" stopped: the server exited with code 1",
    )
    .await;
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
    let mark = editor.mark();
    let blocked = start_call(&editor, "crashy", "block", json!({})).await;
    let slow = start_call(&editor, "other", "sleep", json!({"seconds": 1.5})).await;
    // The server says it has the call (a log line), then it is killed.
    editor
        .wait_notification(mark, |n| {
            n["method"] == "window/logMessage"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("[crashy]") && m.contains("blocking forever"))
        })
        .await;
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

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Answers every prompt as a person would (the one field, then Submit), counting the questions
/// shown per server (one `inputBox` each), until `stop` is notified.
fn answer_prompts_until(
    editor: std::sync::Arc<TestEditor>,
    stop: std::sync::Arc<tokio::sync::Notify>,
) -> tokio::task::JoinHandle<std::collections::HashMap<String, usize>> {
    tokio::spawn(async move {
        let mut shown = std::collections::HashMap::new();
        loop {
            let prompt = tokio::select! {
                _ = stop.notified() => return shown,
                prompt = editor.next_prompt() => prompt,
            };
            match prompt["method"].as_str().unwrap() {
                "mcp-sidecar/inputBox" => {
                    let server = prompt["params"]["server"].as_str().unwrap().to_string();
                    *shown.entry(server).or_insert(0) += 1;
                    editor.respond(&prompt, json!({"value": "yes"})).await;
                }
                "mcp-sidecar/quickPick" => {
                    assert_eq!(prompt["params"]["items"][0]["label"], "Submit", "{prompt}");
                    editor.respond(&prompt, json!({"selected": [0]})).await;
                }
                _ => panic!("unexpected prompt {prompt}"),
            }
        }
    })
}

/// A server that floods `elicitation/create` (during a call, then with no call in flight): the
/// person sees at most `rateLimit` questions per server, the rest are cancelled without a prompt,
/// every question gets an answer, and the editor's own requests stay quick throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_flooding_questions_is_rate_limited_and_the_editor_stays_responsive() {
    const LIMIT: u64 = 5;
    const FLOOD: u64 = 2000;
    const UNSOLICITED: u64 = 500;
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({
                "servers": {
                    "flood": python("bad/elicit_flood.py", &[]),
                    "flood2": python("bad/elicit_flood.py", &[]),
                    "demo": demo_server("both", None),
                },
                "elicitation": {"rateLimit": format!("{LIMIT}/min")},
            }),
            full_ui(),
        )
        .await;
    for server in ["flood", "flood2", "demo"] {
        editor.wait_status(mark, server, "running").await;
    }
    let stop = std::sync::Arc::new(tokio::sync::Notify::new());
    let prompter = answer_prompts_until(editor.clone(), stop.clone());

    // During the flood, the editor keeps asking things: listServers and a call to another server.
    let started = Instant::now();
    let flood = start_call(&editor, "flood", "flood", json!({"count": FLOOD})).await;
    tokio::pin!(flood);
    let mut list_latency = Vec::new();
    let mut call_latency = Vec::new();
    let flooded = loop {
        tokio::select! {
            biased;
            response = &mut flood => break response.expect("editor connection closed"),
            // The probe interval: the editor asks something every 10 ms during the flood.
            _ = tokio::time::sleep(Duration::from_millis(10)) => {}
        }
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "the flood call never ended"
        );
        let asked = Instant::now();
        let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
        list_latency.push(asked.elapsed());
        assert_eq!(listed.as_array().unwrap().len(), 3);
        let asked = Instant::now();
        let echo = call(&editor, "demo", "echo", json!({"text": "hi"})).await;
        call_latency.push(asked.elapsed());
        assert_eq!(text_of(&echo), "hi");
    };
    let flood_took = started.elapsed();
    let tally = structured(&flooded["result"]);
    assert_eq!(
        tally,
        json!({"accept": LIMIT, "decline": 0, "cancel": FLOOD - LIMIT, "error": 0, "errors": [],
               "seconds": tally["seconds"]}),
        "{flooded}"
    );

    // With no call in flight: the same server's window is full, so nothing more is shown; another
    // server has its own window.
    for server in ["flood", "flood2"] {
        let sent = call(
            &editor,
            server,
            "flood_unsolicited",
            json!({"count": UNSOLICITED}),
        )
        .await;
        assert_eq!(text_of(&sent), format!("sent {UNSOLICITED}"));
    }
    let deadline = Instant::now() + WAIT;
    let (a, b) = loop {
        let a = structured(&call(&editor, "flood", "tally", json!({})).await);
        let b = structured(&call(&editor, "flood2", "tally", json!({})).await);
        if a["pending"] == 0 && b["pending"] == 0 {
            break (a, b);
        }
        assert!(
            Instant::now() < deadline,
            "questions left unanswered: {a} {b}"
        );
        // A poll interval: the servers' tallies are read by calling their tool again.
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(
        (&a["accept"], &a["cancel"], &a["error"], &a["unknown"]),
        (
            &json!(LIMIT),
            &json!(FLOOD - LIMIT + UNSOLICITED),
            &json!(0),
            &json!(0)
        ),
        "{a}"
    );
    assert_eq!(
        (&b["accept"], &b["cancel"], &b["error"], &b["unknown"]),
        (
            &json!(LIMIT),
            &json!(UNSOLICITED - LIMIT),
            &json!(0),
            &json!(0)
        ),
        "{b}"
    );
    stop.notify_one();
    let shown = prompter.await.unwrap();
    assert_eq!(
        shown,
        std::collections::HashMap::from([
            ("flood".to_string(), LIMIT as usize),
            ("flood2".to_string(), LIMIT as usize)
        ]),
    );

    let probes = list_latency.len();
    let (list_median, list_max) = (
        median(list_latency.clone()),
        *list_latency.iter().max().unwrap(),
    );
    let (call_median, call_max) = (
        median(call_latency.clone()),
        *call_latency.iter().max().unwrap(),
    );
    eprintln!(
        "elicitation flood: {FLOOD} questions during a call answered in {flood_took:.2?} \
         (server-side {} s), {LIMIT} shown; listServers during it: {probes} probes, median {list_median:.2?}, \
         max {list_max:.2?}; demo echo median {call_median:.2?}, max {call_max:.2?}",
        tally["seconds"]
    );
    assert!(probes >= 1);
    assert!(list_max < Duration::from_secs(2), "{list_max:?}");
    assert!(call_max < Duration::from_secs(2), "{call_max:?}");
    for row in editor
        .command("mcp-sidecar.listServers", json!({}))
        .await
        .as_array()
        .unwrap()
    {
        assert_eq!(row["state"], "running", "{row}");
    }
    // No late prompt either: once the sidecar has closed the connection, everything it sent is
    // in, and it sent no question beyond the ones answered above.
    editor.shutdown_and_exit().await;
    editor.wait_closed().await;
    assert_eq!(
        editor.requests_seen("mcp-sidecar/inputBox"),
        2 * LIMIT as usize,
        "a question was shown after the flood was answered"
    );
}

/// An `envFile` that is not a regular file (a FIFO that nobody writes, a device) or that is huge:
/// the definition fails with the reason, and reading the configuration neither blocks nor holds up
/// the other servers. (A workspace's `mcp.json` is read before the person trusts it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn env_files_that_are_not_small_regular_files_fail_their_server_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("env.fifo");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let big = dir.path().join("big.env");
    std::fs::write(&big, "A=1\n".repeat(1 << 19)).unwrap();
    let with_env_file = |file: &std::path::Path| {
        let mut def = demo_server("both", None);
        def["envFile"] = json!(file);
        def
    };
    let editor = in_process();
    let mark = editor.mark();
    let started = Instant::now();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "fifo": with_env_file(&fifo),
                "device": with_env_file(std::path::Path::new("/dev/null")),
                "big": with_env_file(&big),
                "demo": demo_server("both", None),
            }}),
            json!({}),
        )
        .await;
    let outcome = tokio::time::timeout(Duration::from_secs(10), async {
        let fifo = editor.wait_status(mark, "fifo", "failed").await;
        let device = editor.wait_status(mark, "device", "failed").await;
        let big = editor.wait_status(mark, "big", "failed").await;
        editor.wait_status(mark, "demo", "running").await;
        (fifo, device, big)
    })
    .await;
    // Whatever happened, never leave a reader blocked on the FIFO behind.
    let _ = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo);
    let (fifo, device, big) = outcome.expect("the configuration was never applied");
    let took = started.elapsed();
    for (status, reason) in [
        (&fifo, "not a regular file"),
        (&device, "not a regular file"),
        (&big, "larger than"),
    ] {
        let message = status["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("envFile") && message.contains(reason),
            "{status}"
        );
    }
    eprintln!(
        "bad envFiles reported and the demo server running {took:.2?} after initialize: {}",
        fifo["message"]
    );
    editor.shutdown_and_exit().await;
    // The person is told once about each.
    let mut shown = read_shown(&editor, mark);
    shown.sort();
    assert_eq!(shown.len(), 3, "{shown:#?}");
    for (text, (server, reason)) in shown.iter().zip([
        ("big", "larger than"),
        ("device", "not a regular file"),
        ("fifo", "not a regular file"),
    ]) {
        assert!(
            text.contains(&format!("server \"{server}\": \"envFile\"")) && text.contains(reason),
            "{shown:#?}"
        );
    }
}

/// Absurdly long durations (a server `timeout` of 1e300 s, an `idleLimit` of 10^20 hours) mean
/// "never" in practice: they are capped, not a panic in the configuration or in a call's
/// deadline arithmetic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurdly_long_durations_are_capped_not_fatal() {
    let editor = in_process();
    let mark = editor.mark();
    let with_timeout = |seconds: f64| {
        let mut def = demo_server("both", None);
        def["timeout"] = json!(seconds);
        def
    };
    editor
        .initialize(
            &[],
            json!({
                "servers": {"huge": with_timeout(1e300), "u64": with_timeout(1.8e19)},
                "elicitation": {"idleLimit": "99999999999999999999h"},
            }),
            full_ui(),
        )
        .await;
    for server in ["huge", "u64"] {
        editor.wait_status(mark, server, "running").await;
        let echo = call(&editor, server, "echo", json!({"text": server})).await;
        assert_eq!(text_of(&echo), server);
    }
    // A question waits on the person under the (capped) idle limit; Escape still ends it.
    let booking = start_call(&editor, "huge", "book_trip", json!({})).await;
    let prompt = editor.next_prompt().await;
    editor.respond(&prompt, Value::Null).await;
    let booked = response_of(booking).await;
    assert_eq!(structured(&booked["result"]), json!({"action": "cancel"}));
    editor.shutdown_and_exit().await;
}

/// How many containers `value` nests, itself counted.
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A result nested deeper than the sidecar's bound (100 levels, the result itself counted) is
/// refused on every path its bytes take from a stdio server, and the call gets an error naming
/// the server at once: a million levels and 200 levels, each small (read past rmcp, in both
/// eras) and big (the codec's scan), and 101 levels, which serde_json alone would pass. 100
/// levels still reach the editor as sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_nested_too_deep_is_refused_on_every_path_naming_the_server() {
    const PROMPT: Duration = Duration::from_secs(5);
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "deep": python("bad/deep.py", &[]),
                "deep-modern": python("bad/deep.py", &["--era", "modern"]),
                "demo": demo_server("both", None),
            }}),
            json!({}),
        )
        .await;
    for server in ["deep", "deep-modern", "demo"] {
        editor.wait_status(mark, server, "running").await;
    }
    for server in ["deep", "deep-modern"] {
        for (levels, pad) in [
            (1_000_000, 0),
            (200, 0),
            (200, 100_000),
            (101, 0),
            (101, 100_000),
        ] {
            let started = Instant::now();
            let rx = start_call(
                &editor,
                server,
                "nest",
                json!({"levels": levels, "pad": pad}),
            )
            .await;
            let response = tokio::time::timeout(PROMPT, rx)
                .await
                .unwrap_or_else(|_| panic!("{server}, {levels} levels, pad {pad}: no answer"))
                .unwrap();
            let message = response["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&format!("server \"{server}\""))
                    && message.contains("its result nests deeper than 100 levels"),
                "{server}, {levels} levels, pad {pad}: {response}"
            );
            assert!(started.elapsed() < PROMPT);
        }
        // An honest result at the bound, small and big, reaches the editor whole.
        for pad in [0, 100_000] {
            let result = call(&editor, server, "nest", json!({"levels": 100, "pad": pad})).await;
            assert_eq!(depth(&result), 100, "{server}, pad {pad}");
            assert_eq!(text_of(&result).len(), pad);
        }
    }
    // The sidecar and the other servers keep serving.
    let echo = call(&editor, "demo", "echo", json!({"text": "still here"})).await;
    assert_eq!(text_of(&echo), "still here");
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    let rows = listed.as_array().unwrap();
    assert!(rows.iter().all(|r| r["state"] == "running"), "{listed}");
    let pong = call(&editor, "deep", "ping_tool", json!({})).await;
    assert_eq!(text_of(&pong), "pong");
    editor.shutdown_and_exit().await;
}

/// A `tools/list` that pages for ever, pages past the item cap, or gives the same cursor again:
/// the listing ends after at most 100 pages (10 000 items) with one error naming the server and
/// the bound, and the sidecar keeps serving. (Before, rmcp's paging followed the cursors for
/// ever, the sidecar growing until the call's timeout, and a refresh in the background never
/// ended.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_that_never_ends_is_cut_off_naming_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let count = |name: &str| dir.path().join(name).display().to_string();
    let (endless, many, again) = (count("endless"), count("many"), count("again"));
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "endless": python_fixture("bad/deep.py", &["--pages", "endless", "--count", &endless], 30),
                "many": python_fixture("bad/deep.py", &["--pages", "endless", "--page-size", "500", "--count", &many], 30),
                "again": python_fixture("bad/deep.py", &["--pages", "repeat", "--count", &again], 30),
                "demo": demo_server("both", None),
            }}),
            json!({}),
        )
        .await;
    for server in ["endless", "many", "again", "demo"] {
        editor.wait_status(mark, server, "running").await;
    }
    for (server, bound) in [
        ("endless", "tools/list had more than 100 pages"),
        ("many", "tools/list listed more than 10000 items"),
        ("again", "tools/list sent a cursor it had sent before"),
    ] {
        let started = Instant::now();
        let response = editor
            .command_response("mcp-sidecar.listTools", json!({"server": server}))
            .await;
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("server \"{server}\"")) && message.contains(bound),
            "{server}: {response}"
        );
        assert!(started.elapsed() < Duration::from_secs(20), "{server}");
    }
    // Listing every server leaves the bad ones out and lists the rest.
    let all = editor.command("mcp-sidecar.listTools", json!({})).await;
    let servers: std::collections::BTreeSet<&str> = all
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["server"].as_str())
        .collect();
    assert_eq!(servers, ["demo"].into(), "{all}");
    let echo = call(&editor, "demo", "echo", json!({"text": "still here"})).await;
    assert_eq!(text_of(&echo), "still here");
    let pong = call(&editor, "endless", "ping_tool", json!({})).await;
    assert_eq!(text_of(&pong), "pong");
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert_eq!(listed.as_array().unwrap().len(), 4);
    // Each listing (the one at start-up, the editor's, any other) stops at its bound: 100
    // pages, 21 of 500 items, the first cursor again (one may still be under way at first).
    for (path, pages) in [(&endless, 100), (&many, 21), (&again, 2)] {
        let counts = || {
            let text = std::fs::read_to_string(path).unwrap();
            let (served, listings) = text.trim().split_once(' ').unwrap();
            (
                served.parse::<usize>().unwrap(),
                listings.parse::<usize>().unwrap(),
            )
        };
        eventually(&format!("{path}: {pages} pages a listing"), || {
            let (served, listings) = counts();
            std::future::ready(served == listings * pages)
        })
        .await;
        assert!(counts().1 >= 2, "{path}: {:?}", counts());
    }
    editor.shutdown_and_exit().await;
}
