//! The gateway (the agents' face) end to end: an in-process sidecar with a scripted editor, real
//! MCP clients as the agent (the Python SDK's, `fixtures/python/gateway_client.py`) over
//! Streamable HTTP and over `mcp-sidecar gateway` (stdio), and the endpoint's refusals.

use crate::support;

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use support::gateway::{
    BIG_RESULTS, bridge_env, digest_of, gateway_token, hostile_big_text, python_agent, start_with,
};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

/// An in-process sidecar serving `servers` for a workspace folder, once every server runs and
/// the gateway answers `mcp-sidecar.gatewayInfo`.
async fn start(folder: &Path, servers: Value) -> (CheckedEditor, Value) {
    start_with(folder, json!({ "servers": servers })).await
}

fn port(info: &Value) -> u16 {
    url::Url::parse(info["url"].as_str().unwrap())
        .unwrap()
        .port()
        .unwrap()
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
    outcomes(python_agent(transport, &steps).spawn().expect("python")).await
}

fn over_http(info: &Value, mode: &str) -> Vec<String> {
    vec![
        "--url".into(),
        info["url"].as_str().unwrap().into(),
        "--token".into(),
        gateway_token(info),
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
    let secret = gateway_token(&info);
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
    let mut command = python_agent(&over_bridge(None), &steps);
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
    let mut command = python_agent(
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
        let child = python_agent(
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
    let mark = editor.mark();
    let mut child = python_agent(
        &over_http(&info, "legacy"),
        &json!([
            {"op": "call", "name": "crashy__crash", "arguments": {}},
            {"op": "wait_for_tool", "name": "demo__add", "timeout": 60},
        ]),
    )
    .spawn()
    .unwrap();
    // Once the crash is answered and the agent has listed its tools without the new server's
    // (found in CI: a configuration sent right after the crash's answer could be applied before
    // that listing, which then needed no notification), a server is added: the agent is told
    // its tools changed.
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    while let Some(line) = stderr.next_line().await.unwrap() {
        if line.contains("step 1 listed") {
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
    // The editor hears of both too.
    editor.wait_status(mark, "crashy", "failed").await;
    wait_shown(
        &editor,
        mark,
        "MCP server \"crashy\" stopped: the server exited with code 1",
    )
    .await;
    editor.wait_status(mark, "demo", "running").await;
}

/// `args` with `extra` after the transport's own.
fn with(mut args: Vec<String>, extra: &[&str]) -> Vec<String> {
    // `--command` takes the rest of the line: the options go in front of it.
    let at = args
        .iter()
        .position(|a| a == "--command")
        .unwrap_or(args.len());
    for (i, arg) in extra.iter().enumerate() {
        args.insert(at + i, arg.to_string());
    }
    args
}

/// Reads the agent's stderr until a line starts with `prefix`; returns the rest of that line.
/// The remaining lines are drained in the background (the agent keeps writing).
async fn stderr_line(child: &mut tokio::process::Child, prefix: &str) -> String {
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let found = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(rest) = line.strip_prefix(prefix) {
                return rest.to_string();
            }
        }
        panic!("the agent ended without a line starting with {prefix:?}");
    })
    .await
    .unwrap_or_else(|_| panic!("no line starting with {prefix:?} from the agent"));
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    found
}

const AGENT: &str = "test-agent";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn the_prompt_says_which_agent_asks_and_its_call_is_kept_alive_meanwhile() {
    mcp_sidecar::gateway::set_keep_alive_interval(Duration::from_millis(50));
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), both_eras()).await;
    for server in ["legacy", "modern"] {
        // The agent could answer itself, but the default (`gateway.questions: editor`) asks the
        // person. Its name arrives with a newline and a bidi override, which are dropped.
        let mut child = python_agent(
            &with(
                over_http(&info, "legacy"),
                &[
                    "--name",
                    "test-\u{202E}agent\n",
                    "--elicit-answer",
                    r#"{"name": "Agent Smith", "email": "s@example.com"}"#,
                ],
            ),
            &json!([{"op": "call", "name": format!("{server}__book_trip"),
                     "arguments": {"destination": "Oslo"}, "progress": true}]),
        )
        .spawn()
        .unwrap();
        let first = editor.next_prompt().await;
        assert_eq!(
            first["params"]["title"],
            format!("{AGENT} via the gateway → {server} asks: Confirm your trip to Oslo"),
            "{first:#}"
        );
        assert_eq!(first["params"]["server"], server);
        // While the person has not answered, the agent hears that its call is alive.
        let progress: Value =
            serde_json::from_str(&stderr_line(&mut child, "progress ").await).unwrap();
        assert_eq!(
            progress["message"], "waiting for the person to answer in the editor",
            "{server}: {progress}"
        );
        let script = crate::elicitation::booking_script();
        editor.respond(&first, script[0].1.clone()).await;
        let shown = editor.answer_prompts(&script[1..]).await;
        assert!(
            shown
                .iter()
                .all(|p| p["params"]["title"].as_str().is_some_and(
                    |t| t.starts_with(&format!("{AGENT} via the gateway → {server} asks: "))
                )),
            "{shown:#?}"
        );
        let out = outcomes(child).await;
        assert_eq!(
            out[0]["result"]["structuredContent"]["content"]["name"], "Ada Lovelace",
            "{server}: {}",
            out[0]
        );
        let values: Vec<f64> = out[0]["progress"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["progress"].as_f64().unwrap())
            .collect();
        assert!(
            values.windows(2).all(|w| w[0] < w[1]),
            "progress increases: {values:?}"
        );
    }
    // The editor's own call says only the server, as before.
    let call = spawn_call(
        &editor,
        "legacy",
        "book_trip",
        json!({"destination": "Rome"}),
    );
    let first = editor.next_prompt().await;
    assert_eq!(
        first["params"]["title"],
        "legacy: Confirm your trip to Rome"
    );
    let script = crate::elicitation::booking_script();
    editor.respond(&first, script[0].1.clone()).await;
    editor.answer_prompts(&script[1..]).await;
    call.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn questions_go_to_the_agent_when_set_and_it_declared_the_capability() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start_with(
        folder.path(),
        json!({"servers": both_eras(), "gateway": {"questions": "agent"}}),
    )
    .await;
    let answer = r#"{"name": "Agent Smith", "email": "smith@example.com"}"#;
    for server in ["legacy", "modern"] {
        let mut child = python_agent(
            &with(over_http(&info, "legacy"), &["--elicit-answer", answer]),
            &json!([{"op": "call", "name": format!("{server}__book_trip"), "arguments": {"destination": "Oslo"}}]),
        )
        .spawn()
        .unwrap();
        let asked: Value =
            serde_json::from_str(&stderr_line(&mut child, "elicitation ").await).unwrap();
        assert_eq!(asked["message"], "Confirm your trip to Oslo");
        let out = outcomes(child).await;
        assert_eq!(
            out[0]["result"]["structuredContent"]["content"],
            serde_json::from_str::<Value>(answer).unwrap(),
            "{server}: {}",
            out[0]
        );
        assert_eq!(editor.prompts_seen(), 0, "the editor was not asked");
        // A sampling request goes to an agent that declared sampling, and its answer back.
        let mut child = python_agent(
            &with(
                over_http(&info, "legacy"),
                &["--sample-answer", "The agent's answer."],
            ),
            &json!([{"op": "call", "name": format!("{server}__analyze_flights"), "arguments": {}}]),
        )
        .spawn()
        .unwrap();
        let asked: Value =
            serde_json::from_str(&stderr_line(&mut child, "sampling ").await).unwrap();
        assert_eq!(asked["maxTokens"], 400);
        let out = outcomes(child).await;
        assert_eq!(
            out[0]["result"]["structuredContent"],
            json!({"model": "agent-model", "stopReason": "endTurn", "text": "The agent's answer."}),
            "{server}: {}",
            out[0]
        );
        assert_eq!(editor.prompts_seen(), 0, "the editor was not asked");
    }
    // An agent without elicitation: the person answers in the editor after all (stdio bridge).
    let mut command = python_agent(
        &over_bridge(None),
        &json!([{"op": "call", "name": "legacy__book_trip", "arguments": {"destination": "Oslo"}}]),
    );
    bridge_env(&mut command, &info);
    let child = command.spawn().unwrap();
    let shown = editor
        .answer_prompts(&crate::elicitation::booking_script())
        .await;
    assert!(
        shown[0]["params"]["title"]
            .as_str()
            .unwrap()
            .contains(" via the gateway → legacy asks: "),
        "{:#}",
        shown[0]
    );
    let out = outcomes(child).await;
    assert_eq!(
        out[0]["result"]["structuredContent"]["content"]["name"], "Ada Lovelace",
        "{}",
        out[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_cancelled_agent_call_cancels_the_downstream_call() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(
        folder.path(),
        json!({"slow": python_fixture("python/slow_server.py", &[], 30)}),
    )
    .await;
    let steps = json!([{"op": "cancel", "name": "slow__wait", "arguments": {}}]);
    for transport in ["http", "bridge"] {
        let mark = editor.mark();
        let mut command = match transport {
            "http" => python_agent(&over_http(&info, "legacy"), &steps),
            _ => {
                let mut command = python_agent(&over_bridge(None), &steps);
                bridge_env(&mut command, &info);
                command
            }
        };
        let out = outcomes(command.spawn().unwrap()).await;
        assert_eq!(out[0]["cancelled"], true, "{transport}: {out:?}");
        assert_eq!(out[0]["progress"][0]["message"], "started", "{out:?}");
        // The server itself says it was told.
        let logged = wait_log(&editor, mark, "cancelled request").await;
        let text = logged["message"].as_str().unwrap();
        assert!(text.contains("[slow]"), "{logged}");
        // The call went past rmcp's peer (`mcp/direct.rs`): its ids start at 2^32.
        let id: i64 = text
            .split("cancelled request ")
            .nth(1)
            .and_then(|rest| rest.split(':').next())
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("no request id in {text}"));
        assert!(id >= 1 << 32, "{text}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_sampling_request_during_an_agents_call_is_answered_in_the_editor() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), both_eras()).await;
    for server in ["legacy", "modern"] {
        let child = python_agent(
            &with(over_http(&info, "auto"), &["--name", AGENT]),
            &json!([{"op": "call", "name": format!("{server}__analyze_flights"), "arguments": {}}]),
        )
        .spawn()
        .unwrap();
        let request = editor.next_prompt().await;
        assert_eq!(request["params"]["kind"], "samplingRequest");
        assert_eq!(
            request["params"]["title"],
            format!("{AGENT} via the gateway → {server} wants a model answer")
        );
        let text = request["params"]["text"].as_str().unwrap().to_string();
        editor
            .respond(&request, json!({"action": "accept", "text": text}))
            .await;
        let answer = editor.next_prompt().await;
        assert_eq!(
            answer["params"]["title"],
            format!("Answer for {AGENT} via the gateway → {server}")
        );
        let draft = answer["params"]["text"].as_str().unwrap();
        let written = format!("{}\nFlight 7 is the best value.\n", draft.trim_end());
        editor
            .respond(&answer, json!({"action": "accept", "text": written}))
            .await;
        let out = outcomes(child).await;
        assert_eq!(
            out[0]["result"]["structuredContent"]["text"], "Flight 7 is the best value.",
            "{server}: {}",
            out[0]
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn the_servers_roots_are_the_editors_folders_not_the_agents() {
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(folder.path(), both_eras()).await;
    let elsewhere = tempfile::tempdir().unwrap();
    for server in ["legacy", "modern"] {
        let out = run_agent(
            &with(
                over_http(&info, "legacy"),
                &["--roots", &file_uri(elsewhere.path())],
            ),
            json!([{"op": "call", "name": format!("{server}__list_roots"), "arguments": {}}]),
        )
        .await;
        let roots = &out[0]["result"]["structuredContent"]["roots"];
        assert_eq!(
            roots,
            &json!([{"uri": file_uri(folder.path()), "name": "work"}]),
            "{server}: {}",
            out[0]
        );
    }
}

/// server-everything (its resources, templates, prompts, completions and logs) and the demo.
fn everything_and_demo() -> Value {
    json!({
        "everything": {"command": "node", "args": [peer("MCP_EVERYTHING_JS"), "stdio"]},
        "demo": demo_server("legacy", None),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn resources_prompts_completions_and_logs_pass_through() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), everything_and_demo()).await;
    let dynamic = "demo://resource/dynamic/text/3";
    let steps = json!([
        {"op": "resources"},
        {"op": "read", "uri": dynamic},
        {"op": "read", "uri": "nobody://x"},
        {"op": "prompts"},
        {"op": "prompt", "name": "everything__args-prompt", "arguments": {"city": "Paris"}},
        {"op": "complete", "ref": {"type": "ref/prompt", "name": "everything__completable-prompt"},
         "argument": {"name": "department", "value": "Eng"}},
        {"op": "complete", "ref": {"type": "ref/resource", "uri": "demo://resource/dynamic/text/{resourceId}"},
         "argument": {"name": "resourceId", "value": "1"}},
    ]);
    for mode in ["legacy", "auto"] {
        let out = run_agent(&over_http(&info, mode), steps.clone()).await;
        let resources = out[0]["resources"].as_array().unwrap();
        let document = resources
            .iter()
            .find(|r| {
                r["uri"]
                    .as_str()
                    .is_some_and(|u| u.starts_with("demo://resource/static/document/"))
            })
            .unwrap_or_else(|| panic!("{mode}: {}", out[0]));
        assert_eq!(document["_meta"]["mcp-sidecar/server"], "everything");
        assert!(
            out[0]["templates"]
                .as_array()
                .unwrap()
                .contains(&json!("demo://resource/dynamic/text/{resourceId}")),
            "{}",
            out[0]
        );
        // A URI made from a template goes to the server whose template it matches.
        assert_eq!(out[1]["contents"][0]["uri"], dynamic, "{mode}: {}", out[1]);
        // Resource not found: -32002 up to 2025-11-25, -32602 in 2026-07-28.
        let not_found = if mode == "legacy" { -32002 } else { -32602 };
        assert_eq!(out[2]["error"]["code"], not_found, "{mode}: {}", out[2]);
        let prompts = out[3]["prompts"].as_array().unwrap();
        assert!(
            prompts.contains(&json!("everything__args-prompt")),
            "{prompts:?}"
        );
        assert_eq!(
            out[4]["messages"][0]["content"]["text"], "What's weather in Paris?",
            "{mode}: {}",
            out[4]
        );
        assert_eq!(
            out[5]["values"],
            json!(["Engineering"]),
            "{mode}: {}",
            out[5]
        );
        assert!(out[6]["values"].is_array(), "{mode}: {}", out[6]);
    }
    // Logs: a legacy agent that set a level gets the servers' messages, named by server.
    let out = run_agent(
        &over_http(&info, "legacy"),
        json!([{"op": "log", "level": "info",
                "then": {"op": "call", "name": "demo__count_down", "arguments": {"steps": 1, "delayMs": 0}}}]),
    )
    .await;
    let logs = out[0]["logs"].as_array().unwrap();
    assert!(
        logs.iter().any(
            |l| l["logger"].as_str().is_some_and(|l| l.starts_with("demo"))
                && l["data"].as_str().is_some_and(|d| d.contains("count_down"))
        ),
        "{}",
        out[0]
    );
    // Subscriptions: updates of a resource the agent subscribed to reach it. The editor, which
    // subscribed to nothing, is sent them too (docs/lsp-extensions.md: only those it subscribed
    // to): not this test's subject.
    editor.ignore("mcp-sidecar/resourceUpdated");
    let out = run_agent(
        &over_http(&info, "legacy"),
        json!([{"op": "subscribe", "uri": "demo://resource/dynamic/text/1",
                "then": {"op": "call", "name": "everything__toggle-subscriber-updates", "arguments": {}}}]),
    )
    .await;
    assert_eq!(out[0]["updated"], true, "{}", out[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_2026_agent_hears_tools_list_changed_on_its_listen_stream() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(
        folder.path(),
        json!({"legacy": demo_server("legacy", None)}),
    )
    .await;
    let mut child = python_agent(
        &over_http(&info, "2026-07-28"),
        &json!([{"op": "listen_tools", "timeout": 60}]),
    )
    .spawn()
    .unwrap();
    stderr_line(&mut child, "listening").await;
    let mark = editor.mark();
    editor
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"servers": {
                "legacy": demo_server("legacy", None),
                "modern": demo_server("modern", None),
            }}}),
        )
        .await;
    let out = outcomes(child).await;
    assert_eq!(out[0]["event"], true, "{out:?}");
    editor.wait_status(mark, "modern", "running").await;
}

/// The quick round-trip look of docs/gateway.md ("Measured"): 200 calls of the demo's `echo`, one after another,
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
    let mut command = python_agent(&over_bridge(None), &bench("demo__echo"));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn big_results_reach_python_agents_as_sent_both_ways_and_eras() {
    let folder = tempfile::tempdir().unwrap();
    let huge = 300_001;
    let resources = json!({"command": peer("MCP_PYTHON"), "protocolVersion": "2025-11-25",
        "args": [fixture("python/resources_server.py").display().to_string(),
                 "--era", "legacy", "--huge", huge.to_string()]});
    let mut servers = both_eras();
    servers["resources"] = resources;
    let _alone = BIG_RESULTS.lock().await;
    let (_editor, info) = start(folder.path(), servers).await;
    let (repeat, text) = hostile_big_text();
    let want = digest_of(&text);
    let steps = json!([
        {"op": "call", "name": "legacy__echo", "repeat": repeat, "digest": true},
        {"op": "call", "name": "modern__echo", "repeat": repeat, "digest": true},
        {"op": "read", "uri": "fixture://huge", "digest": true},
        {"op": "call", "name": "legacy__echo", "arguments": {"text": "small"}},
        {"op": "prompt", "name": "resources__greet", "digest": true,
         "repeat": {"field": "name", "head": repeat["head"], "unit": repeat["unit"], "count": repeat["count"]}},
    ]);
    let bridge = |mode: &str| {
        let mut args = over_bridge(None);
        args[1] = mode.into();
        args
    };
    for mode in ["legacy", "2026-07-28"] {
        for (way, transport) in [("http", over_http(&info, mode)), ("bridge", bridge(mode))] {
            let passed = mcp_sidecar::gateway::passed_total();
            let mut command = python_agent(&transport, &steps);
            bridge_env(&mut command, &info);
            let out = outcomes(command.spawn().unwrap()).await;
            let passed = mcp_sidecar::gateway::passed_total() - passed;
            for (i, server) in [(0, "legacy"), (1, "modern")] {
                assert_eq!(out[i]["digest"], want, "{mode} {way} {server}: {}", out[i]);
                assert_eq!(out[i]["isError"], false, "{mode} {way} {server}");
            }
            assert_eq!(
                out[2]["digest"],
                digest_of(&"x".repeat(huge)),
                "{mode} {way}: {}",
                out[2]
            );
            assert_eq!(text_of(&out[3]["result"]), "small", "{mode} {way}");
            let greeting = format!("Hello, {text}!");
            assert_eq!(
                out[4]["digest"],
                digest_of(&greeting),
                "{mode} {way}: {}",
                out[4]
            );
            // Every big answer passed through (the 2026-07-28 server's to a legacy agent without
            // its `resultType`, as rmcp's types would have it), none parsed on the way.
            assert_eq!(passed, 4, "{mode} {way}");
        }
    }
}

/// An agent calling, through the gateway, a tool whose result nests past the bound gets an
/// error naming the server, on each path (a million levels relayed big, 200 small, 101 big),
/// and a result at the bound as sent. Before, the big result was written to the agent as it
/// came, and its client could not read it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_nested_too_deep_reaches_an_agent_as_an_error() {
    use rmcp::model::CallToolRequestParams;
    let folder = tempfile::tempdir().unwrap();
    let (_editor, info) = start(
        folder.path(),
        json!({"deep": python_fixture("bad/deep.py", &[], 30)}),
    )
    .await;
    let agent = support::gateway::http_agent(&info).await;
    let nest = |levels: usize, pad: usize| {
        let arguments = json!({"levels": levels, "pad": pad});
        let call = CallToolRequestParams::new("deep__nest")
            .with_arguments(arguments.as_object().unwrap().clone());
        let agent = &agent;
        async move {
            tokio::time::timeout(Duration::from_secs(10), agent.call_tool(call))
                .await
                .unwrap_or_else(|_| panic!("{levels} levels, pad {pad}: no answer"))
        }
    };
    for (levels, pad) in [(1_000_000, 0), (200, 0), (101, 100_000)] {
        let result = nest(levels, pad).await.unwrap();
        assert_eq!(result.is_error, Some(true), "{levels}, {pad}: {result:?}");
        let text = serde_json::to_value(&result.content).unwrap()[0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(
            text.contains("\"deep\"") && text.contains("nests deeper than 100 levels"),
            "{levels}, {pad}: {text}"
        );
    }
    let result = nest(100, 100_000).await.unwrap();
    assert_ne!(result.is_error, Some(true));
    assert_eq!(
        serde_json::to_string(&result.structured_content.unwrap()["deep"])
            .unwrap()
            .matches('[')
            .count(),
        98
    );
    agent.cancel().await.unwrap();
}
