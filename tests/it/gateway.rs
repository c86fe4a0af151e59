//! The gateway (the agents' face) end to end: an in-process sidecar with a scripted editor, real
//! MCP clients as the agent (the Python SDK's, `fixtures/python/gateway_client.py`) over
//! Streamable HTTP and over `mcp-sidecar gateway` (stdio), and the endpoint's refusals.

use crate::support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// An in-process sidecar serving `servers` for a workspace folder, once every server runs and
/// the gateway answers `mcp-sidecar.gatewayInfo`.
async fn start(folder: &Path, servers: Value) -> (std::sync::Arc<TestEditor>, Value) {
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

/// `mcp-sidecar.gatewayInfo`, once the sidecar said (after `mark`) that the gateway serves.
async fn gateway_info(editor: &TestEditor, mark: usize) -> Value {
    editor
        .wait_notification(mark, |n| {
            n["method"] == "window/logMessage"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("gateway: serving agents at "))
        })
        .await;
    let response = editor
        .command_response("mcp-sidecar.gatewayInfo", json!({}))
        .await;
    assert!(response.get("error").is_none(), "{response}");
    response["result"].clone()
}

fn token(info: &Value) -> String {
    info["env"]["MCP_SIDECAR_GATEWAY_TOKEN"]
        .as_str()
        .unwrap()
        .to_string()
}

fn port(info: &Value) -> u16 {
    url::Url::parse(info["url"].as_str().unwrap())
        .unwrap()
        .port()
        .unwrap()
}

/// The Python client with these transport arguments runs `steps`; its outcomes.
fn agent(transport: &[String], steps: &Value) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(peer("MCP_PYTHON"));
    command
        .arg(fixture("python/gateway_client.py"))
        .args(transport)
        .arg(steps.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

async fn outcomes(child: tokio::process::Child) -> Vec<Value> {
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the Python agent finished in time")
        .unwrap();
    assert!(
        output.status.success(),
        "the Python agent failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

async fn run_agent(transport: &[String], steps: Value) -> Vec<Value> {
    outcomes(agent(transport, &steps).spawn().expect("python")).await
}

fn over_http(info: &Value, mode: &str) -> Vec<String> {
    vec![
        "--url".into(),
        info["url"].as_str().unwrap().into(),
        "--token".into(),
        token(info),
        "--mode".into(),
        mode.into(),
    ]
}

/// `mcp-sidecar gateway [--server NAME]` as the agent's stdio server (found through the
/// environment the Python agent passes on).
fn over_bridge(server: Option<&str>) -> Vec<String> {
    let mut args = vec![
        "--mode".into(),
        "legacy".into(),
        "--command".into(),
        sidecar_bin().display().to_string(),
        "gateway".into(),
    ];
    if let Some(name) = server {
        args.extend(["--server".into(), name.into()]);
    }
    args
}

fn bridge_env(command: &mut tokio::process::Command, info: &Value) {
    command
        .env("MCP_SIDECAR_GATEWAY", info["url"].as_str().unwrap())
        .env("MCP_SIDECAR_GATEWAY_TOKEN", token(info));
}

/// The status of a raw `POST /mcp` (an `initialize`) with these extra header lines.
async fn status_of(port: u16, host: &str, extra: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra}Content-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.unwrap();
    String::from_utf8_lossy(&head[9..12]).parse().unwrap()
}

fn tools_of(outcome: &Value) -> Vec<String> {
    outcome["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpoint_refuses_without_the_secret_and_from_other_origins() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), json!({})).await;
    let url = info["url"].as_str().unwrap();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{info}"
    );
    let secret = token(&info);
    assert_eq!(secret.len(), 64, "{info}");
    assert_eq!(
        info["headers"]["Authorization"],
        format!("Bearer {secret}"),
        "{info}"
    );
    assert_eq!(info["env"]["MCP_SIDECAR_GATEWAY"], url);
    let port = port(&info);
    let host = format!("127.0.0.1:{port}");
    let good = format!("Authorization: Bearer {secret}\r\n");
    assert_eq!(status_of(port, &host, "").await, 401, "no secret");
    assert_eq!(
        status_of(port, &host, "Authorization: Bearer nope\r\n").await,
        403,
        "wrong secret"
    );
    let wrong_same_length = format!("Authorization: Bearer {}\r\n", "0".repeat(64));
    assert_eq!(status_of(port, &host, &wrong_same_length).await, 403);
    assert_eq!(
        status_of(
            port,
            &host,
            &format!("{good}Origin: https://evil.example\r\n")
        )
        .await,
        403,
        "foreign Origin"
    );
    assert_eq!(
        status_of(port, &format!("evil.example:{port}"), &good).await,
        403,
        "DNS rebinding: a foreign Host"
    );
    assert_eq!(status_of(port, &host, &good).await, 200, "the secret");
    assert_eq!(
        status_of(
            port,
            &format!("localhost:{port}"),
            &format!("{good}Origin: http://localhost:{port}\r\n")
        )
        .await,
        200,
        "a loopback Origin"
    );
    // The discovery file of the workspace folder: 0600, naming this process.
    let dir = Path::new(&std::env::var("XDG_RUNTIME_DIR").unwrap()).join("mcp-sidecar/gateway");
    let ours = || -> Vec<Value> {
        std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.unwrap().path()).ok())
            .filter_map(|t| serde_json::from_str::<Value>(&t).ok())
            .filter(|v| v["url"] == url)
            .collect()
    };
    let found = ours();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["pid"], std::process::id());
    assert_eq!(found[0]["token"], secret.as_str());
    // A folder added in the editor gets its file too.
    let other = tempfile::tempdir().unwrap();
    editor
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {"added": [{"uri": file_uri(other.path()), "name": "other"}], "removed": []}}),
        )
        .await;
    eventually("the added folder's discovery file", || async {
        ours().len() == 2
    })
    .await;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let mode = entry.unwrap().metadata().unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_info_is_refused_when_the_gateway_is_off() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {}, "gateway": {"enabled": false}}),
            full_ui(),
        )
        .await;
    editor
        .wait_notification(mark, |n| {
            n["params"]["message"] == "gateway: off (gateway.enabled is false)"
        })
        .await;
    let response = editor
        .command_response("mcp-sidecar.gatewayInfo", json!({}))
        .await;
    assert_eq!(response["error"]["data"]["kind"], "refused", "{response}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_says_when_no_sidecar_serves_the_folder() {
    let folder = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new(sidecar_bin())
        .arg("gateway")
        .current_dir(folder.path())
        .env_remove("MCP_SIDECAR_GATEWAY")
        .env("XDG_RUNTIME_DIR", folder.path().join("run"))
        .stdin(Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(output.stdout.is_empty(), "nothing but MCP on stdout");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no mcp-sidecar is serving"), "{stderr}");
}

fn both_eras() -> Value {
    json!({
        "legacy": demo_server("legacy", None),
        "modern": demo_server("modern", None),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_agent_over_http_lists_and_calls_servers_of_both_eras() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    // The agent in both of its eras: the `initialize` handshake, and `server/discover` first.
    for mode in ["legacy", "auto"] {
        let out = run_agent(
            &over_http(&info, mode),
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
            assert!(tools.contains(&name.to_string()), "{mode}: {tools:?}");
        }
        assert!(
            text_of(&out[1]["result"]).contains("42"),
            "{mode}: {}",
            out[1]
        );
        assert!(
            text_of(&out[2]["result"]).contains('3'),
            "{mode}: {}",
            out[2]
        );
        assert_eq!(text_of(&out[3]["result"]), "hi", "{mode}: {}", out[3]);
        assert_eq!(out[4]["error"]["code"], -32602, "{mode}: {}", out[4]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_agent_over_the_stdio_bridge_all_servers_and_one() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    let steps = json!([
        {"op": "list"},
        {"op": "call", "name": "modern__add", "arguments": {"a": 20, "b": 22}},
    ]);
    // Found through the environment.
    let mut command = agent(&over_bridge(None), &steps);
    bridge_env(&mut command, &info);
    let out = outcomes(command.spawn().unwrap()).await;
    assert!(
        tools_of(&out[0]).contains(&"legacy__echo".to_string()),
        "{out:?}"
    );
    assert!(text_of(&out[1]["result"]).contains("42"), "{out:?}");
    // Found through the discovery file of the folder (the agent runs in a folder below it).
    let below = folder.path().join("src");
    std::fs::create_dir_all(&below).unwrap();
    let mut command = agent(
        &over_bridge(Some("legacy")),
        &json!([{"op": "list"}, {"op": "call", "name": "add", "arguments": {"a": 1, "b": 1}}]),
    );
    command
        .current_dir(&below)
        .env_remove("MCP_SIDECAR_GATEWAY")
        .env_remove("MCP_SIDECAR_GATEWAY_TOKEN");
    let out = outcomes(command.spawn().unwrap()).await;
    let tools = tools_of(&out[0]);
    assert!(
        tools.contains(&"add".to_string()) && !tools.iter().any(|t| t.contains("__")),
        "{tools:?}"
    );
    assert!(text_of(&out[1]["result"]).contains('2'), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_form_answered_in_the_editor_reaches_the_agent() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), both_eras()).await;
    for server in ["legacy", "modern"] {
        let child = agent(
            &over_http(&info, "legacy"),
            &json!([{"op": "call", "name": format!("{server}__book_trip"), "arguments": {"destination": "Oslo"}}]),
        )
        .spawn()
        .unwrap();
        let shown = editor
            .answer_prompts(&crate::elicitation::booking_script())
            .await;
        assert_eq!(shown[0]["params"]["server"], server);
        let out = outcomes(child).await;
        assert_eq!(
            out[0]["result"]["structuredContent"]["content"]["name"], "Ada Lovelace",
            "{server}: {}",
            out[0]
        );
        assert_eq!(out[0]["result"]["structuredContent"]["action"], "accept");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_hundred_concurrent_agent_calls_none_lost_or_crossed() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    for server in ["legacy", "modern"] {
        let out = run_agent(
            &over_http(&info, "legacy"),
            json!([{"op": "concurrent", "name": format!("{server}__echo"), "count": 100, "field": "text"}]),
        )
        .await;
        let texts = out[0]["texts"].as_array().unwrap();
        assert_eq!(texts.len(), 100);
        for (i, text) in texts.iter().enumerate() {
            assert_eq!(text, &json!(format!("call-{i}")), "{server}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_crash_mid_call_is_a_clear_error_and_new_servers_are_announced() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(
        folder.path(),
        json!({"crashy": python_fixture("bad/crash_on_call.py", &[], 30)}),
    )
    .await;
    let mut child = agent(
        &over_http(&info, "legacy"),
        &json!([
            {"op": "call", "name": "crashy__crash", "arguments": {}},
            {"op": "wait_for_tool", "name": "demo__add", "timeout": 60},
        ]),
    )
    .spawn()
    .unwrap();
    // Once the crash is answered, a server is added: the agent is told its tools changed.
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    while let Some(line) = stderr.next_line().await.unwrap() {
        if line.contains("step 0 done") {
            break;
        }
    }
    editor
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"servers": {
                "crashy": python_fixture("bad/crash_on_call.py", &[], 30),
                "demo": demo_server("legacy", None),
            }}}),
        )
        .await;
    let out = outcomes(child).await;
    assert_eq!(out[0]["result"]["isError"], true, "{}", out[0]);
    let text = text_of(&out[0]["result"]);
    assert!(
        text.contains("crashy") && text.contains("stopped during the request"),
        "{text}"
    );
    assert_eq!(out[1]["found"], true, "{out:?}");
    assert!(out[1]["notified"].as_u64().unwrap() >= 1, "{out:?}");
}

/// The benchmark figure of docs/gateway.md: 200 calls of the demo's `echo`, one after another,
/// by the same Python agent, directly (the demo server on stdio) and through the gateway (HTTP,
/// and the stdio bridge). Prints the figures; run with `--nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers; a benchmark: run it on its own with --nocapture"]
async fn benchmark_the_gateway_round_trip() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), json!({"demo": demo_server("legacy", None)})).await;
    let bench = |name: &str| json!([{"op": "bench", "name": name, "arguments": {"text": "x"}, "count": 200}]);
    let direct = run_agent(
        &[
            "--command".into(),
            sidecar_bin().display().to_string(),
            "demo-server".into(),
            "--era".into(),
            "legacy".into(),
        ],
        bench("echo"),
    )
    .await;
    let http = run_agent(&over_http(&info, "legacy"), bench("demo__echo")).await;
    let mut command = agent(&over_bridge(None), &bench("demo__echo"));
    bridge_env(&mut command, &info);
    let bridge = outcomes(command.spawn().unwrap()).await;
    let figure = |name: &str, out: &[Value]| {
        let (median, p99) = (
            out[0]["median_ms"].as_f64().unwrap(),
            out[0]["p99_ms"].as_f64().unwrap(),
        );
        let base = direct[0]["median_ms"].as_f64().unwrap();
        let base99 = direct[0]["p99_ms"].as_f64().unwrap();
        eprintln!(
            "{name:>28}: median {median:.2} ms, p99 {p99:.2} ms (x{:.2} / x{:.2} of direct)",
            median / base,
            p99 / base99
        );
    };
    figure("direct (stdio)", &direct);
    figure("gateway (Streamable HTTP)", &http);
    figure("gateway (mcp-sidecar gateway)", &bridge);
}
