//! MCP Apps for agents through the gateway, in-process with the scripted editor: a tool for
//! views only is left out of the agents' `tools/list` and its call is refused (by the route of
//! the whole gateway and by the session of a one-server gateway); a tool with a view reaches
//! the agent with its `_meta` as the server listed it, and an agent's call of it is offered to
//! the person as `apps.openForAgents` says (`ask`: a quick pick, "Open the view" opens the
//! loopback page with `window/showDocument`; `always`; `never`). With the demo server's clock
//! and an rmcp agent, and (ignored: needs peers) the Python SDK agent with the real
//! `server-basic-vanillajs` and `server-pdf`.

use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceError};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::gateway::{
    agent_outcomes, bridge_env, gateway_token, http_agent, python_agent, start_with as start,
};
use crate::support::*;

type Agent = RunningService<RoleClient, ClientConfig>;

/// The demo server as `demo`, with `apps.openForAgents` set to `open` (or left out: `None`).
fn demo_with(open: Option<&str>) -> Value {
    let mut settings = json!({"servers": {"demo": demo_server("both", None)}});
    if let Some(open) = open {
        settings["apps"] = json!({ "openForAgents": open });
    }
    settings
}

fn call_params(name: &str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name.to_string())
        .with_arguments(arguments.as_object().unwrap().clone())
}

async fn call(agent: &Agent, name: &str, arguments: Value) -> Result<CallToolResult, ServiceError> {
    agent.call_tool(call_params(name, arguments)).await
}

/// The JSON-RPC error code of a refused request.
fn error_code(outcome: &Result<CallToolResult, ServiceError>) -> (i32, String) {
    match outcome {
        Err(ServiceError::McpError(e)) => (e.code.0, e.message.to_string()),
        other => panic!("expected a JSON-RPC error, got {other:?}"),
    }
}

/// The quick pick that offers the view of an agent's call of `tool` on `server`.
fn assert_offer(offer: &Value, server: &str, tool: &str) {
    assert_eq!(offer["method"], "mcp-sidecar/quickPick", "{offer}");
    let params = &offer["params"];
    assert_eq!(params["server"], server, "{offer}");
    let title = params["title"].as_str().unwrap();
    assert!(
        title.contains(tool) && title.contains("an agent"),
        "{offer}"
    );
    let labels: Vec<&str> = params["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Open the view", "Not now"], "{offer}");
}

/// The loopback page's URL in a `window/showDocument` (answered), which must open it outside
/// the editor: `http://127.0.0.1:<port>/view/<64 hex>`.
async fn opened_view(editor: &TestEditor) -> String {
    let open = editor.next_request("window/showDocument").await;
    editor.respond(&open, json!({"success": true})).await;
    assert_eq!(open["params"]["external"], true, "{open}");
    let url = open["params"]["uri"].as_str().unwrap().to_string();
    let (origin, token) = url.split_once("/view/").expect("a view's URL");
    let port = origin
        .strip_prefix("http://127.0.0.1:")
        .expect("on 127.0.0.1");
    assert!(port.parse::<u16>().is_ok(), "{url}");
    assert!(
        token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "{url}"
    );
    url
}

/// `GET url` on 127.0.0.1: the status and the body.
async fn get(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, body.to_string())
}

/// What the view's page reads (`/data`): the server, the tool, the call's arguments and result.
async fn view_data(url: &str) -> Value {
    let (status, body) = get(&format!("{url}/data")).await;
    assert_eq!(status, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

/// `mcp-sidecar.listApps` has this one view, of `tool` on `server`, at `url`.
async fn listed_alone(editor: &TestEditor, server: &str, tool: &str, url: &str) -> Value {
    let listed = editor.command("mcp-sidecar.listApps", json!({})).await;
    let rows = listed.as_array().unwrap();
    assert_eq!(rows.len(), 1, "{listed}");
    assert_eq!(
        (&rows[0]["server"], &rows[0]["tool"], &rows[0]["url"]),
        (&json!(server), &json!(tool), &json!(url)),
        "{listed}"
    );
    rows[0].clone()
}

/// Closes the view through the editor's command and reads the editor's `closeApp`.
async fn close_view(editor: &TestEditor, row: &Value) {
    let mark = editor.mark();
    editor
        .command("mcp-sidecar.closeApp", json!({"view": row["view"]}))
        .await;
    let closed = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/closeApp")
        .await;
    assert_eq!(closed["params"]["view"], row["view"], "{closed}");
    assert_eq!(
        editor.command("mcp-sidecar.listApps", json!({})).await,
        json!([])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_get_the_clock_not_its_view_only_tool_and_the_person_chooses_to_open_its_view() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), demo_with(None)).await;
    let agent = http_agent(&info).await;

    // The tool for the clock's view only is not the agent's; the clock is, with its `_meta`.
    let tools = agent.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(
        names.contains(&"demo__clock") && names.contains(&"demo__add"),
        "{names:?}"
    );
    assert!(!names.contains(&"demo__clock_tick"), "{names:?}");
    let clock = tools.iter().find(|t| t.name == "demo__clock").unwrap();
    assert_eq!(
        serde_json::to_value(&clock.meta).unwrap(),
        json!({"ui": {"resourceUri": "ui://demo/clock.html"}})
    );
    let (code, message) = error_code(&call(&agent, "demo__clock_tick", json!({})).await);
    assert_eq!(code, -32602, "{message}");
    assert!(message.contains("demo__clock_tick"), "{message}");

    // "Not now": no view.
    let first = call(&agent, "demo__clock", json!({"call": 1}))
        .await
        .unwrap();
    assert_ne!(first.is_error, Some(true), "{first:?}");
    let offer = editor.next_prompt().await;
    assert_offer(&offer, "demo", "clock");
    editor.respond(&offer, json!({"selected": [1]})).await;
    assert_eq!(
        editor.command("mcp-sidecar.listApps", json!({})).await,
        json!([])
    );

    // "Open the view": the browser opens the loopback page of this call (not of the first).
    let second = call(&agent, "demo__clock", json!({"call": 2}))
        .await
        .unwrap();
    let offer = editor.next_prompt().await;
    assert_offer(&offer, "demo", "clock");
    editor.respond(&offer, json!({"selected": [0]})).await;
    let url = opened_view(&editor).await;
    let data = view_data(&url).await;
    assert_eq!(data["server"], "demo", "{data}");
    assert_eq!(data["tool"]["name"], "clock", "{data}");
    assert_eq!(data["arguments"], json!({"call": 2}), "{data}");
    assert_eq!(
        data["result"]["structuredContent"],
        second.structured_content.clone().unwrap(),
        "{data}"
    );
    let row = listed_alone(&editor, "demo", "clock", &url).await;
    assert_eq!(row["initialized"], false, "{row}");
    close_view(&editor, &row).await;
    assert_eq!(editor.requests_seen("window/showDocument"), 1);
    agent.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn never_offers_the_view_and_always_opens_it_without_asking() {
    let folder = tempfile::tempdir().unwrap();

    // "never": the call is answered and nothing is asked. The next thing the editor is asked
    // is the form of a later call (a quick pick before it would be the view's offer).
    let (editor, info) = start(folder.path(), demo_with(Some("never"))).await;
    let agent = http_agent(&info).await;
    let result = call(&agent, "demo__clock", json!({})).await.unwrap();
    assert!(
        result.structured_content.as_ref().unwrap()["time"].is_string(),
        "{result:?}"
    );
    let booking = call(&agent, "demo__book_trip", json!({"destination": "Oslo"}));
    let script = crate::elicitation::booking_script();
    let answering = editor.answer_prompts(&script);
    let (booked, shown) = tokio::join!(booking, answering);
    assert_eq!(
        booked.unwrap().structured_content.unwrap()["action"],
        "accept"
    );
    assert_eq!(shown.len(), script.len());
    assert_eq!(editor.requests_seen("window/showDocument"), 0);
    assert_eq!(
        editor.command("mcp-sidecar.listApps", json!({})).await,
        json!([])
    );
    agent.cancel().await.unwrap();
    drop(editor);

    // "always": the view opens and the person is not asked.
    let (editor, info) = start(folder.path(), demo_with(Some("always"))).await;
    let agent = http_agent(&info).await;
    call(&agent, "demo__clock", json!({"call": "always"}))
        .await
        .unwrap();
    let url = opened_view(&editor).await;
    assert_eq!(
        editor.prompts_seen(),
        0,
        "nothing asked before the view opened"
    );
    assert_eq!(
        view_data(&url).await["arguments"],
        json!({"call": "always"})
    );
    let row = listed_alone(&editor, "demo", "clock", &url).await;
    close_view(&editor, &row).await;
    agent.cancel().await.unwrap();
}

/// A one-server gateway (`mcp-sidecar gateway --server demo`, as agents launch it) names the
/// tools as the server does; its view-only tool is not listed, and a call of it by its own
/// name is refused by the session (no route to miss it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_server_gateway_refuses_the_view_only_tool_by_its_own_name() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), demo_with(Some("never"))).await;
    let mut bridge = tokio::process::Command::new(sidecar_bin());
    bridge.args(["gateway", "--server", "demo"]);
    bridge_env(&mut bridge, &info);
    let (transport, _) = TokioChildProcess::builder(bridge)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let agent = ClientConfig::default()
        .serve_with_lifecycle(transport, ClientLifecycleMode::Initialize)
        .await
        .unwrap();
    let tools = agent.list_all_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert!(names.contains(&"clock"), "{names:?}");
    assert!(!names.contains(&"clock_tick"), "{names:?}");
    let refused = call(&agent, "clock_tick", json!({})).await.unwrap();
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    let text = serde_json::to_value(&refused.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        text.contains("\"clock_tick\"") && text.contains("views only"),
        "{text}"
    );
    assert!(refused.structured_content.is_none(), "{refused:?}");
    agent.cancel().await.unwrap();
    assert_eq!(editor.prompts_seen(), 0);
}

/// A real app server (`node <js> --stdio`, from scripts/install-peers.sh).
fn app_server(js_var: &str) -> Value {
    json!({"command": peer("MCP_APP_NODE"), "args": [peer(js_var), "--stdio"]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_agent_calls_the_basic_apps_get_time_and_the_person_opens_its_view() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(
        folder.path(),
        json!({"servers": {
            "basic": app_server("MCP_APP_BASIC_JS"),
            "pdf": app_server("MCP_APP_PDF_JS"),
        }}),
    )
    .await;
    let over_http = [
        "--url".to_string(),
        info["url"].as_str().unwrap().to_string(),
        "--token".to_string(),
        gateway_token(&info),
    ];
    let steps = json!([
        {"op": "list", "meta": true},
        {"op": "call", "name": "basic__get-time", "arguments": {}},
        {"op": "call", "name": "pdf__read_pdf_bytes", "arguments": {"url": "https://arxiv.org/pdf/1706.03762"}},
    ]);
    let child = python_agent(&over_http, &steps).spawn().unwrap();
    // The person is asked (the agent has its answer meanwhile) and opens the view.
    let offer = editor.next_prompt().await;
    assert_offer(&offer, "basic", "get-time");
    editor.respond(&offer, json!({"selected": [0]})).await;
    let url = opened_view(&editor).await;
    let out = agent_outcomes(child).await;

    // The agent's list: get-time with its `_meta` as the server listed it (both spellings of
    // the view's URI); none of the pdf server's tools for its views only.
    let tools: Vec<&str> = out[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for name in ["basic__get-time", "pdf__display_pdf", "pdf__list_pdfs"] {
        assert!(tools.contains(&name), "{name}: {tools:?}");
    }
    for name in [
        "pdf__read_pdf_bytes",
        "pdf__submit_page_data",
        "pdf__save_pdf",
        "pdf__poll_pdf_commands",
    ] {
        assert!(!tools.contains(&name), "{name}: {tools:?}");
    }
    let meta = &out[0]["meta"];
    assert_eq!(
        meta["basic__get-time"],
        json!({"ui": {"resourceUri": "ui://get-time/mcp-app.html"},
               "ui/resourceUri": "ui://get-time/mcp-app.html"}),
        "{meta}"
    );
    for (name, tool_meta) in meta.as_object().unwrap() {
        if let Some(visibility) = tool_meta["ui"]["visibility"].as_array() {
            assert!(visibility.contains(&json!("model")), "{name}: {tool_meta}");
        }
    }
    let result = &out[1]["result"];
    assert_ne!(result["isError"], true, "{result}");
    assert!(!text_of(result).is_empty(), "{result}");
    assert_eq!(out[2]["error"]["code"], -32602, "{}", out[2]);

    // The page shows this call, and the editor's list has the view.
    let data = view_data(&url).await;
    assert_eq!(data["server"], "basic", "{data}");
    assert_eq!(data["tool"]["name"], "get-time", "{data}");
    assert_eq!(data["result"]["content"], result["content"], "{data}");
    let (status, html) = get(data["appUrl"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert!(
        html.contains("<html") || html.contains("<!DOCTYPE"),
        "{html}"
    );
    let row = listed_alone(&editor, "basic", "get-time", &url).await;

    // The pdf server's own gateway (`--server pdf`): not listed, and refused by its own name.
    let mut bridge = python_agent(
        &[
            "--command".into(),
            sidecar_bin().display().to_string(),
            "gateway".into(),
            "--server".into(),
            "pdf".into(),
        ],
        &json!([
            {"op": "list"},
            {"op": "call", "name": "read_pdf_bytes", "arguments": {"url": "https://arxiv.org/pdf/1706.03762"}},
        ]),
    );
    bridge_env(&mut bridge, &info);
    let out = agent_outcomes(bridge.spawn().unwrap()).await;
    let tools = out[0]["tools"].as_array().unwrap();
    assert!(tools.contains(&json!("display_pdf")), "{tools:?}");
    assert!(!tools.contains(&json!("read_pdf_bytes")), "{tools:?}");
    let refused = &out[1]["result"];
    assert_eq!(refused["isError"], true, "{refused}");
    assert!(
        text_of(refused).contains("\"read_pdf_bytes\" is for its server's views only"),
        "{refused}"
    );

    close_view(&editor, &row).await;
    assert_eq!(editor.requests_seen("window/showDocument"), 1);
}

/// An agent's burst of calls of one tool with a view is one question and one view (with the
/// latest call's), not a question and a browser tab per call; a failed call is not offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_an_agents_calls_is_one_offer_and_one_view() {
    let folder = tempfile::tempdir().unwrap();
    let (editor, info) = start(folder.path(), demo_with(None)).await;
    let agent = http_agent(&info).await;
    let calls = (0..12).map(|n| call(&agent, "demo__clock", json!({"n": n})));
    for outcome in futures::future::join_all(calls).await {
        outcome.unwrap();
    }
    let offer = editor.next_prompt().await;
    assert_offer(&offer, "demo", "clock");
    editor.respond(&offer, json!({"selected": [0]})).await;
    let url = opened_view(&editor).await;
    assert_eq!(editor.prompts_seen(), 1, "one question for the burst");
    assert!(view_data(&url).await["arguments"]["n"].is_number());
    let row = listed_alone(&editor, "demo", "clock", &url).await;
    close_view(&editor, &row).await;
    agent.cancel().await.unwrap();
}
