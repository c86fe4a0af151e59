//! The gateway as agents reach it, shared by `gateway_clients` and `benches/gateway.rs`: the
//! address a scripted editor gets from `mcp-sidecar.gatewayInfo`, and real MCP clients (the
//! TypeScript SDK's, the MCP Inspector's CLI) started as agents.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use super::{TestEditor, fixture, peer, sidecar_bin};

/// `mcp-sidecar.gatewayInfo`, once the sidecar said (after `mark`) that the gateway serves.
pub async fn gateway_info(editor: &TestEditor, mark: usize) -> Value {
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

/// An in-process sidecar with these settings (`servers` and others) for a workspace folder, once
/// every server runs and the gateway answers `mcp-sidecar.gatewayInfo`; that answer.
pub async fn start_with(
    folder: &std::path::Path,
    settings: Value,
) -> (super::CheckedEditor, Value) {
    let editor = super::in_process();
    let mark = editor.mark();
    let servers = settings["servers"].clone();
    editor
        .initialize(&[(folder, "work")], settings, super::full_ui())
        .await;
    for name in servers.as_object().unwrap().keys() {
        editor.wait_status(mark, name, "running").await;
    }
    let info = gateway_info(&editor, mark).await;
    (editor, info)
}

/// The Python SDK's client (`fixtures/python/gateway_client.py`) with these transport
/// arguments, to run `steps`.
pub fn python_agent(transport: &[String], steps: &Value) -> tokio::process::Command {
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

/// An rmcp agent on the gateway's Streamable HTTP endpoint, with the secret.
pub async fn http_agent(
    info: &Value,
) -> rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig> {
    use rmcp::service::ClientServiceExt;
    use rmcp::transport::streamable_http_client::{
        StreamableHttpClientTransport, StreamableHttpClientTransportConfig,
    };
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = StreamableHttpClientTransportConfig::with_uri(gateway_url(info))
        .auth_header(gateway_token(info));
    rmcp::model::ClientConfig::default()
        .serve_with_lifecycle(
            StreamableHttpClientTransport::from_config(config),
            rmcp::service::ClientLifecycleMode::Initialize,
        )
        .await
        .unwrap()
}

pub fn gateway_url(info: &Value) -> String {
    info["url"].as_str().unwrap().to_string()
}

pub fn gateway_token(info: &Value) -> String {
    info["env"]["MCP_SIDECAR_GATEWAY_TOKEN"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Sets the environment under which `mcp-sidecar gateway` finds this gateway.
pub fn bridge_env(command: &mut tokio::process::Command, info: &Value) {
    command
        .env("MCP_SIDECAR_GATEWAY", gateway_url(info))
        .env("MCP_SIDECAR_GATEWAY_TOKEN", gateway_token(info));
}

/// How an agent reaches the server: over HTTP (with the secret, or `None`: without it), or by
/// launching a stdio server (`mcp-sidecar gateway ...`, or a server itself; `Program`: another
/// executable, such as the bench binary as its own server, with these arguments).
pub enum Via<'a> {
    Http { url: String, token: Option<String> },
    Stdio(&'a [&'a str]),
    Program(&'a std::path::Path, &'a [&'a str]),
}

impl Via<'_> {
    /// The gateway's endpoint with its secret.
    pub fn http(info: &Value) -> Via<'static> {
        Via::Http {
            url: gateway_url(info),
            token: Some(gateway_token(info)),
        }
    }
}

/// The TypeScript SDK agent (`fixtures/node/gateway_client.mjs`) running `steps` over `via`; a
/// `mcp-sidecar ...` command line is run with the built binary.
pub fn ts_agent(via: &Via, steps: &Value) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("node");
    command.arg(fixture("node/gateway_client.mjs"));
    match via {
        Via::Http { url, token } => {
            command.args(["--url", url]);
            if let Some(token) = token {
                command.args(["--token", token]);
            }
        }
        Via::Stdio(argv) => {
            command.arg("--command").arg(sidecar_bin()).args(*argv);
        }
        Via::Program(program, argv) => {
            command.arg("--command").arg(program).args(*argv);
        }
    }
    command
        .arg(steps.to_string())
        .env("MCP_PEERS_NODE_MODULES", peer("MCP_PEERS_NODE_MODULES"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// What a fixture agent printed: its JSON outcomes (a list, one per step, or
/// `[{"connect_error": ...}]`), and its exit status.
pub async fn agent_output(child: tokio::process::Child) -> (Vec<Value>, Option<i32>) {
    let output = tokio::time::timeout(Duration::from_secs(120), child.wait_with_output())
        .await
        .expect("the agent finished in time")
        .unwrap();
    let parsed = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (parsed, output.status.code())
}

/// The outcomes of an agent that must succeed.
pub async fn agent_outcomes(child: tokio::process::Child) -> Vec<Value> {
    let (outcomes, status) = agent_output(child).await;
    assert_eq!(status, Some(0), "the agent failed: {outcomes:?}");
    outcomes
}

/// The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, on the Node 24 of
/// scripts/install-node.sh) with these arguments, its home in `home` (it keeps a catalog and
/// secrets there when asked to).
pub fn inspector(home: &std::path::Path, args: &[String]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(peer("MCP_NODE24"));
    command
        .arg(peer("MCP_INSPECTOR_JS"))
        .arg("--cli")
        .args(args)
        .env("HOME", home)
        .env("MCP_CATALOG_PATH", home.join("mcp.json"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command
}

/// Held by the tests that count the results the gateway passed through
/// (`mcp_sidecar::gateway::passed_total`, one count for the process), so that they do not
/// count each other's.
pub static BIG_RESULTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A big text (issue 18: a result of 64 KiB or more is relayed as the bytes the server sent)
/// with what a splice could trip on: non-ASCII, escapes, line ends, and text that looks like
/// the relay's markers and the gateway's placeholder (a server cannot know the nonce, and its
/// quotes are escaped). As the agents' `repeat` (`head`, then `unit` `count` times: an argument
/// list cannot carry it), and the whole text.
pub fn hostile_big_text() -> (Value, String) {
    let fake = format!("mcp-sidecar/relayed/{}/1", "0".repeat(32));
    let head = format!(
        "\"result\":\"{fake}\" {{\"_meta\":{{\"dev.mcp-sidecar/passed\":\"{fake}c\"}}}} \r\n data: x\n\n"
    );
    let unit = "é \"quoted\" \\ tab\t ✓ \u{1F600} ";
    let count = 300_000 / unit.len();
    let repeat = json!({"field": "text", "head": head, "unit": unit, "count": count});
    (repeat, format!("{head}{}", unit.repeat(count)))
}

/// `(bytes, sha256)` of a text, as the agents report them.
pub fn digest_of(text: &str) -> Value {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    json!({"bytes": text.len(), "sha256": hex})
}
