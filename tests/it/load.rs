//! Load: a thousand tool calls in flight at once, each with its own arguments, spread over several
//! demo servers in both eras. Every call must get exactly its own answer: nothing lost, nothing
//! crossed between calls or servers. Bounds are loose (two noisy cores); the figures are printed.

use crate::support;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;

const CALLS: usize = 1000;
/// The servers the calls are spread over: both eras, and the automatic choice.
const SERVERS: [(&str, &str); 4] = [
    ("legacy1", "legacy"),
    ("legacy2", "legacy"),
    ("modern1", "modern"),
    ("both1", "both"),
];
/// Generous on purpose: on an idle laptop the whole run takes well under two seconds.
const BOUND: Duration = Duration::from_secs(40);

/// Call `i`: which server, which tool, its arguments and the answer only it can get.
fn plan(i: usize) -> (&'static str, &'static str, Value, Value) {
    let server = SERVERS[i % SERVERS.len()].0;
    if i.is_multiple_of(2) {
        // A distinct sum for every call: a = i, b = a per-server offset.
        let offset = 1_000_000 * (1 + (i % SERVERS.len()) as i64);
        let a = i as i64;
        (
            server,
            "add",
            json!({"a": a, "b": offset}),
            json!({"sum": a + offset}),
        )
    } else {
        let text = format!("call {i} to {server} ✓");
        (server, "echo", json!({"text": text}), json!(text))
    }
}

/// What a call's result says, comparable with the last element of [`plan`].
fn answer_of(tool: &str, result: &Value) -> Value {
    match tool {
        "add" => structured(result),
        _ => json!(text_of(result)),
    }
}

fn servers_config() -> Value {
    let servers: serde_json::Map<String, Value> = SERVERS
        .iter()
        .map(|(name, era)| (name.to_string(), demo_server(era, None)))
        .collect();
    json!({"servers": servers})
}

/// An in-process sidecar with every server of [`SERVERS`] running.
async fn editor_with_servers() -> CheckedEditor {
    let editor = in_process();
    let mark = editor.mark();
    editor.initialize(&[], servers_config(), json!({})).await;
    for (name, _) in SERVERS {
        editor.wait_status(mark, name, "running").await;
    }
    editor
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Through the LSP: 1000 `workspace/executeCommand mcp-sidecar.callTool` requests sent without
/// waiting. That is within `LONG_OPERATION_CAP`, so none may be refused as busy (the loop below
/// would re-send a refused one, and the count is asserted to be zero). Every request must get a
/// response, and every response must be its own call's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_lsp_calls_each_get_their_own_answer() {
    let editor = editor_with_servers().await;

    let started = Instant::now();
    let mut outstanding: Vec<usize> = (0..CALLS).collect();
    let mut latencies = Vec::with_capacity(CALLS);
    let mut busy = 0usize;
    let mut rounds = 0;
    while !outstanding.is_empty() {
        rounds += 1;
        assert!(
            started.elapsed() < BOUND,
            "{} calls still outstanding after {rounds} rounds",
            outstanding.len()
        );
        let mut waiting = Vec::with_capacity(outstanding.len());
        for &i in &outstanding {
            let (server, tool, arguments, _) = plan(i);
            let sent = Instant::now();
            let (_, rx) = editor
                .start_request(
                    "workspace/executeCommand",
                    json!({"command": "mcp-sidecar.callTool",
                           "arguments": [{"server": server, "tool": tool, "arguments": arguments}]}),
                )
                .await;
            waiting.push((i, sent, rx));
        }
        let mut again = Vec::new();
        for (i, sent, rx) in waiting {
            let response = tokio::time::timeout(BOUND, rx)
                .await
                .unwrap_or_else(|_| panic!("call {i} got no response (lost)"))
                .expect("editor connection closed");
            let (_, tool, _, want) = plan(i);
            if let Some(error) = response.get("error") {
                assert_eq!(error["data"]["kind"], "busy", "call {i}: {response}");
                busy += 1;
                again.push(i);
                continue;
            }
            latencies.push(sent.elapsed());
            assert_eq!(
                answer_of(tool, &response["result"]),
                want,
                "call {i} got someone else's answer: {response}"
            );
        }
        outstanding = again;
        if !outstanding.is_empty() {
            // A client's back-off before retrying the calls answered `busy` (part of the load).
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let elapsed = started.elapsed();
    let rate = CALLS as f64 / elapsed.as_secs_f64();
    let max = *latencies.iter().max().unwrap();
    let median = median(latencies);
    eprintln!(
        "LSP load: {CALLS} calls over {} servers in {elapsed:.2?} ({rate:.0} calls/s); \
         {busy} refused as busy and re-sent over {rounds} rounds; latency median {median:.2?}, max {max:.2?}",
        SERVERS.len()
    );
    assert!(elapsed < BOUND, "{elapsed:?}");
    const { assert!(CALLS <= mcp_sidecar::lsp::gate::LONG_OPERATION_CAP) };
    assert_eq!(busy, 0, "a burst within the cap was refused as busy");

    // Nothing was left behind: every server still answers, and the gate is free again.
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    for row in listed.as_array().unwrap() {
        assert_eq!(row["state"], "running", "{row}");
        assert_eq!(row["restarts"], 0, "{row}");
    }
    let echo = call(&editor, "legacy1", "echo", json!({"text": "after"})).await;
    assert_eq!(text_of(&echo), "after");
    editor.shutdown_and_exit().await;
}

/// Below the LSP gate: 1000 calls in flight at once on the MCP connections themselves (no cap),
/// so hundreds of requests share each server's stdio pipe and their responses come back
/// interleaved. Each must reach its own caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_mcp_requests_are_routed_by_id() {
    use mcp_sidecar::config::{self, Context, Layer, Source};
    use mcp_sidecar::contract::ServerState;

    isolate_user_config();
    let (manager, _events) = mcp_sidecar::mcp::Manager::new();
    let layers = [Layer::new(Source::EditorSettings, servers_config())];
    let cx = Context {
        editor_scopes: config::EditorScopes::Own,
        ..Context::default()
    };
    let (resolved, errors) = config::resolve(&layers, &cx);
    assert!(errors.is_empty(), "{errors:?}");
    manager.apply(resolved).await;
    eventually("every demo server running", || {
        let all = manager
            .list_servers()
            .iter()
            .all(|s| s.status.state == ServerState::Running);
        async move { all }
    })
    .await;

    let started = Instant::now();
    let calls = (0..CALLS).map(|i| {
        let manager = manager.clone();
        tokio::spawn(async move {
            let (server, tool, arguments, _) = plan(i);
            let sent = Instant::now();
            let Value::Object(arguments) = arguments else {
                unreachable!()
            };
            let arguments = mcp_sidecar::mcp::ToolArguments::Object(arguments);
            let result = manager
                .call_tool(
                    server,
                    tool,
                    Some(arguments),
                    mcp_sidecar::mcp::Caller::default(),
                )
                .await
                .map(|reply| reply.into_value().unwrap_or_default());
            (i, sent.elapsed(), result)
        })
    });
    let results = tokio::time::timeout(BOUND, futures::future::join_all(calls))
        .await
        .expect("the calls did not all finish in time");
    let elapsed = started.elapsed();
    let mut answered: HashMap<usize, Duration> = HashMap::new();
    for joined in results {
        let (i, took, result) = joined.expect("a call task panicked");
        let (_, tool, _, want) = plan(i);
        let result = result.unwrap_or_else(|e| panic!("call {i} failed: {e}"));
        assert_eq!(
            answer_of(tool, &result),
            want,
            "call {i} got someone else's answer: {result}"
        );
        assert!(
            answered.insert(i, took).is_none(),
            "call {i} answered twice"
        );
    }
    assert_eq!(answered.len(), CALLS);
    let rate = CALLS as f64 / elapsed.as_secs_f64();
    let max = *answered.values().max().unwrap();
    let median = median(answered.into_values().collect());
    eprintln!(
        "MCP load: {CALLS} concurrent calls over {} servers in {elapsed:.2?} ({rate:.0} calls/s); \
         latency median {median:.2?}, max {max:.2?}",
        SERVERS.len()
    );
    assert!(elapsed < BOUND, "{elapsed:?}");
    for s in manager.list_servers() {
        assert_eq!(s.status.state, ServerState::Running, "{}", s.status.name);
        assert_eq!(s.restarts, 0, "{}", s.status.name);
    }
    manager.shutdown().await;
}

/// Big answers (issue 18) are relayed as the bytes the server sent (the transport stores them,
/// the LSP writer splices them into the reply): in both eras, mixed with small calls in flight
/// at the same time, each reaches its own caller intact, including text that looks like the
/// relay's marker or the LSP framing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_answers_are_relayed_intact_among_small_ones() {
    let editor = editor_with_servers().await;
    let big = |i: usize| {
        let mut text = format!(
            "{i}: \"result\":\"mcp-sidecar/relayed/{}/1\" Content-Length: 3\r\n\r\n{{}} ",
            "0".repeat(32)
        );
        while text.len() < 200_000 + i * 1000 {
            text.push_str("é \"quoted\" \\ tab\t ✓ ");
        }
        text
    };
    let mut waiting = Vec::new();
    for i in 0..24 {
        let server = SERVERS[i % SERVERS.len()].0;
        let (tool, arguments, want) = if i % 3 == 0 {
            ("add", json!({"a": i, "b": 1}), json!({"sum": i + 1}))
        } else {
            let text = big(i);
            ("echo", json!({"text": text}), json!(text))
        };
        let (_, rx) = editor
            .start_request(
                "workspace/executeCommand",
                json!({"command": "mcp-sidecar.callTool",
                       "arguments": [{"server": server, "tool": tool, "arguments": arguments}]}),
            )
            .await;
        waiting.push((i, tool, want, rx));
    }
    for (i, tool, want, rx) in waiting {
        let response = tokio::time::timeout(BOUND, rx)
            .await
            .unwrap_or_else(|_| panic!("call {i} got no response (lost)"))
            .expect("editor connection closed");
        let got = answer_of(tool, &response["result"]);
        assert!(
            got == want,
            "call {i} ({tool}) was not relayed intact: {}",
            response.to_string().chars().take(300).collect::<String>()
        );
    }
}
