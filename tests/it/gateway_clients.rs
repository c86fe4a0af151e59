//! Issue 14's proofs with real clients as the agent: the TypeScript SDK's client
//! (`fixtures/node/gateway_client.mjs`) and the MCP Inspector's CLI
//! (`@modelcontextprotocol/inspector --cli`), both pinned by scripts/install-peers.sh, over both
//! ways in: the Streamable HTTP endpoint with the bearer secret, and `mcp-sidecar gateway` over
//! stdio (found through `MCP_SIDECAR_GATEWAY*` or the workspace's discovery file). The sidecar is
//! in-process, with a scripted editor that answers the questions. The Python SDK agent's tests
//! are in `gateway`.

use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::gateway::*;
use support::*;

/// An in-process sidecar serving `servers` for `folder`, once every server runs and the gateway
/// serves.
async fn start(folder: &Path, servers: Value) -> (CheckedEditor, Value) {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(&[(folder, "work")], json!({"servers": servers}), full_ui())
        .await;
    for name in servers.as_object().unwrap().keys() {
        editor.wait_status(mark, name, "running").await;
    }
    let info = gateway_info(&editor, mark).await;
    (editor, info)
}

fn both_eras() -> Value {
    json!({
        "legacy": demo_server("legacy", None),
        "modern": demo_server("modern", None),
    })
}

const BRIDGE: &[&str] = &["gateway"];

/// The TypeScript agent over `via` (the bridge found through the environment), its outcomes.
async fn ts(via: &Via<'_>, info: &Value, steps: Value) -> Vec<Value> {
    let mut command = ts_agent(via, &steps);
    if matches!(via, Via::Stdio(_)) {
        bridge_env(&mut command, info);
    }
    agent_outcomes(command.spawn().expect("node")).await
}

/// Both ways in, named for the assertion messages.
fn both_ways(info: &Value) -> [(&'static str, Via<'static>); 2] {
    [("http", Via::http(info)), ("bridge", Via::Stdio(BRIDGE))]
}

fn tools_of(outcome: &Value) -> Vec<String> {
    outcome["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {outcome}"))
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn ts_agent_lists_and_calls_servers_of_both_eras_both_ways() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    for (way, via) in both_ways(&info) {
        let out = ts(
            &via,
            &info,
            json!([
                {"op": "list"},
                {"op": "call", "name": "legacy__add", "arguments": {"a": 2, "b": 40}},
                {"op": "call", "name": "modern__add", "arguments": {"a": 1, "b": 2}},
                {"op": "call", "name": "modern__echo", "arguments": {"text": "hi"}},
                {"op": "call", "name": "nobody__add", "arguments": {}},
            ]),
        )
        .await;
        let tools = tools_of(&out[0]);
        for name in [
            "legacy__add",
            "legacy__book_trip",
            "modern__add",
            "modern__echo",
        ] {
            assert!(tools.contains(&name.to_string()), "{way}: {tools:?}");
        }
        assert_eq!(
            out[1]["result"]["structuredContent"]["sum"], 42,
            "{way}: {}",
            out[1]
        );
        assert_eq!(
            out[2]["result"]["structuredContent"]["sum"], 3,
            "{way}: {}",
            out[2]
        );
        assert_eq!(text_of(&out[3]["result"]), "hi", "{way}: {}", out[3]);
        assert_eq!(out[4]["error"]["code"], -32602, "{way}: {}", out[4]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn ts_agent_gets_the_form_the_editor_answered() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), both_eras()).await;
    for (way, via) in both_ways(&info) {
        for server in ["legacy", "modern"] {
            let steps = json!([{"op": "call", "name": format!("{server}__book_trip"),
                                "arguments": {"destination": "Oslo"}}]);
            let mut command = ts_agent(&via, &steps);
            bridge_env(&mut command, &info);
            let child = command.spawn().unwrap();
            let shown = editor
                .answer_prompts(&crate::elicitation::booking_script())
                .await;
            assert_eq!(shown[0]["params"]["server"], server, "{way}");
            let out = agent_outcomes(child).await;
            let result = &out[0]["result"]["structuredContent"];
            assert_eq!(result["action"], "accept", "{way} {server}: {}", out[0]);
            assert_eq!(result["content"]["name"], "Ada Lovelace", "{way} {server}");
            assert_eq!(
                result["content"]["email"], "ada@example.com",
                "{way} {server}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn ts_agent_gets_a_clear_error_when_the_server_crashes_mid_call() {
    let folder = tempfile::tempdir().unwrap();
    let crashy = python_fixture("bad/crash_on_call.py", &[], 30);
    let (editor, info) = start(folder.path(), json!({"crashy": crashy})).await;
    let start = editor.mark();
    for (way, via) in both_ways(&info) {
        let mark = editor.mark();
        let out = ts(
            &via,
            &info,
            json!([{"op": "call", "name": "crashy__crash", "arguments": {}}]),
        )
        .await;
        let result = &out[0]["result"];
        assert_eq!(result["isError"], true, "{way}: {}", out[0]);
        let text = text_of(result);
        assert!(
            text.contains("crashy") && text.contains("stopped during the request"),
            "{way}: {text}"
        );
        // The sidecar restarts it; the next way in gets a running server again.
        editor.wait_status(mark, "crashy", "failed").await;
        editor.wait_status(mark, "crashy", "running").await;
    }
    // The person is told of the first crash (the second, within a minute, is a crash loop).
    let shown = read_shown(&editor, start);
    assert!(
        shown.len() == 1
            && shown[0].starts_with("MCP server \"crashy\" stopped: the server exited with code 1"),
        "{shown:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn an_aborted_ts_call_is_cancelled_downstream() {
    let folder = tempfile::tempdir().unwrap();
    let probe = python_fixture("bad/cancel_probe.py", &[], 60);
    let (editor, info) = start(folder.path(), json!({"probe": probe})).await;
    for (way, via) in both_ways(&info) {
        let mark = editor.mark();
        // The agent aborts (AbortSignal) on the server's first progress: the call has arrived.
        let out = ts(
            &via,
            &info,
            json!([
                {"op": "cancel", "name": "probe__wait", "arguments": {}},
                {"op": "call", "name": "probe__ping_tool", "arguments": {}},
            ]),
        )
        .await;
        assert_eq!(out[0]["aborted"], true, "{way}: {}", out[0]);
        assert_eq!(out[0]["progress"], 1, "{way}: {}", out[0]);
        let error = out[0]["error"]["message"].as_str().unwrap();
        assert!(error.contains("AbortError"), "{way}: {}", out[0]);
        // The server itself was told (its log line reaches the editor).
        let logged = wait_log(&editor, mark, "cancel_probe: cancelled request").await;
        assert!(
            logged["message"].as_str().unwrap().starts_with("[probe]"),
            "{way}: {logged}"
        );
        // The session goes on.
        assert_eq!(text_of(&out[1]["result"]), "pong", "{way}: {}", out[1]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn agents_without_the_secret_are_refused() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    let list = json!([{"op": "list"}]);
    let url = gateway_url(&info);
    // The SDK's error carries the gateway's refusal: 401 "Unauthorized: ...", 403 "Forbidden: ...".
    for (token, status) in [(None, "Unauthorized"), (Some("0".repeat(64)), "Forbidden")] {
        let via = Via::Http {
            url: url.clone(),
            token: token.clone(),
        };
        let (out, code) = agent_output(ts_agent(&via, &list).spawn().unwrap()).await;
        assert_eq!(code, Some(3), "{token:?}: {out:?}");
        let error = out[0]["connect_error"].as_str().unwrap();
        assert!(error.contains(status), "{token:?}: {error}");
    }
    // The bridge with a stale secret: the agent's connection ends, nothing is listed.
    let mut command = ts_agent(&Via::Stdio(BRIDGE), &list);
    command
        .env("MCP_SIDECAR_GATEWAY", &url)
        .env("MCP_SIDECAR_GATEWAY_TOKEN", "0".repeat(64));
    let (out, code) = agent_output(command.spawn().unwrap()).await;
    assert_eq!(code, Some(3), "{out:?}");
    assert!(out[0].get("connect_error").is_some(), "{out:?}");
    // The Inspector without the header (a 401: it would start an OAuth sign-in, which needs a
    // terminal it does not have), and with a wrong one (the 403's text).
    let home = tempfile::tempdir().unwrap();
    for (header, refusal) in [
        (None, "OAuth"),
        (Some("Authorization: Bearer nope"), "Forbidden"),
    ] {
        let mut args = strings(&[&url, "--transport", "http"]);
        if let Some(header) = header {
            args.extend(strings(&["--header", header]));
        }
        args.extend(strings(&["--method", "tools/list"]));
        let output = inspector(home.path(), &args).output().await.unwrap();
        assert!(!output.status.success(), "{header:?}");
        // Its error is one JSON line on stderr; stdout stays empty.
        assert!(output.stdout.is_empty(), "{header:?}: {output:?}");
        let said: Value = serde_json::from_slice(&output.stderr)
            .unwrap_or_else(|e| panic!("{header:?}: not JSON ({e}): {output:?}"));
        assert_eq!(said["error"]["code"], "auth_required", "{said}");
        let message = said["error"]["message"].as_str().unwrap();
        assert!(message.contains(refusal), "{header:?}: {said}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_hundred_concurrent_ts_calls_none_lost_or_crossed() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    for (way, via) in both_ways(&info) {
        for server in ["legacy", "modern"] {
            let out = ts(
                &via,
                &info,
                json!([{"op": "concurrent", "name": format!("{server}__echo"), "count": 100, "field": "text"}]),
            )
            .await;
            let texts = out[0]["texts"].as_array().unwrap();
            assert_eq!(texts.len(), 100, "{way} {server}");
            for (i, text) in texts.iter().enumerate() {
                assert_eq!(text, &json!(format!("call-{i}")), "{way} {server}");
            }
        }
    }
}

/// The Inspector's CLI: what it printed on stdout as JSON (it must have succeeded).
async fn inspect(
    home: &Path,
    args: &[String],
    env: &[(&str, String)],
    cwd: Option<&Path>,
) -> Value {
    let mut command = inspector(home, args);
    command.envs(env.iter().map(|(k, v)| (*k, v)));
    if let Some(cwd) = cwd {
        command.current_dir(cwd);
    }
    let output = command.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "the Inspector failed ({args:?}): {stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

fn listed_names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn the_inspector_cli_lists_and_calls_over_http_and_stdio() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    let home = tempfile::tempdir().unwrap();
    let header = format!("Authorization: Bearer {}", gateway_token(&info));
    let http = |rest: &[&str]| {
        let mut args = strings(&[
            &gateway_url(&info),
            "--transport",
            "http",
            "--header",
            &header,
        ]);
        args.extend(strings(rest));
        args
    };
    let listed = inspect(home.path(), &http(&["--method", "tools/list"]), &[], None).await;
    let names = listed_names(&listed);
    assert!(
        names.contains(&"legacy__add".into()) && names.contains(&"modern__echo".into()),
        "{names:?}"
    );
    let legacy = inspect(
        home.path(),
        &http(&[
            "--method",
            "tools/call",
            "--tool-name",
            "legacy__add",
            "--tool-arg",
            "a=2",
            "b=40",
        ]),
        &[],
        None,
    )
    .await;
    assert_eq!(legacy["structuredContent"]["sum"], 42, "{legacy}");
    let modern = inspect(
        home.path(),
        &http(&[
            "--method",
            "tools/call",
            "--tool-name",
            "modern__echo",
            "--tool-arg",
            "text=hi",
        ]),
        &[],
        None,
    )
    .await;
    assert_eq!(text_of(&modern), "hi", "{modern}");
    // `--cli mcp-sidecar gateway`: found through the environment (passed with -e) ...
    let bin = sidecar_bin().display().to_string();
    let env_args = [
        format!("MCP_SIDECAR_GATEWAY={}", gateway_url(&info)),
        format!("MCP_SIDECAR_GATEWAY_TOKEN={}", gateway_token(&info)),
    ];
    let mut args = strings(&["-e", &env_args[0], "-e", &env_args[1], &bin, "gateway"]);
    args.extend(strings(&["--method", "tools/list"]));
    let listed = inspect(home.path(), &args, &[], None).await;
    assert!(
        listed_names(&listed).contains(&"modern__add".into()),
        "{listed}"
    );
    // ... and through the workspace's discovery file, one server unprefixed. The Inspector (the
    // TypeScript SDK's stdio client) passes its server only PATH, HOME and a few more, so the
    // runtime directory the sidecar wrote the file under is passed on with -e.
    let runtime = format!(
        "XDG_RUNTIME_DIR={}",
        std::env::var("XDG_RUNTIME_DIR").unwrap()
    );
    // (`--server` is an Inspector option too: the command line comes after `--`.)
    let args = strings(&[
        "-e",
        &runtime,
        "--method",
        "tools/call",
        "--tool-name",
        "add",
        "--tool-arg",
        "a=20",
        "b=22",
        "--",
        &bin,
        "gateway",
        "--server",
        "modern",
    ]);
    let called = inspect(home.path(), &args, &[], Some(folder.path())).await;
    assert_eq!(called["structuredContent"]["sum"], 42, "{called}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn big_results_reach_the_ts_agent_as_sent_both_ways() {
    let folder = tempfile::tempdir().unwrap();
    let _alone = BIG_RESULTS.lock().await;
    let (_editor, info) = start(folder.path(), both_eras()).await;
    let (repeat, text) = hostile_big_text();
    let want = digest_of(&text);
    for (way, via) in both_ways(&info) {
        let passed = mcp_sidecar::gateway::passed_total();
        let out = ts(
            &via,
            &info,
            json!([
                {"op": "call", "name": "legacy__echo", "repeat": repeat, "digest": true},
                {"op": "call", "name": "modern__echo", "repeat": repeat, "digest": true},
                {"op": "call", "name": "legacy__echo", "arguments": {"text": "small"}},
            ]),
        )
        .await;
        let passed = mcp_sidecar::gateway::passed_total() - passed;
        for (i, server) in [(0, "legacy"), (1, "modern")] {
            assert_eq!(out[i]["digest"], want, "{way} {server}: {}", out[i]);
            assert_eq!(out[i]["isError"], false, "{way} {server}");
        }
        assert_eq!(text_of(&out[2]["result"]), "small", "{way}: {}", out[2]);
        // Both big answers passed through (the SDK speaks 2025-11-25: the 2026-07-28 server's
        // without its `resultType`, as rmcp's types would send it).
        assert_eq!(passed, 2, "{way}");
    }
}
