//! Tasks (SEP-2663) and Skills (SEP-2640) through the gateway: an agent that declares the Tasks
//! extension gets a handle for the demo's `slow_task` and polls the gateway to its result (the
//! task's question answered in the editor), cancels a task, and cannot reach another session's
//! task or a made-up one; an agent that does not declare it gets the result, with progress;
//! `skills/list`, `skills/get` and the skills' files reach the server that listed each skill.
//!
//! The agents: raw JSON-RPC over the gateway's Streamable HTTP endpoint (a legacy session that
//! declares the extension in `initialize`, and 2026-07-28 requests that declare it in `_meta`),
//! and the Python SDK's client (`fixtures/python/gateway_client.py`, with its Tasks extension
//! for 2026-07-28; those tests need scripts/install-peers.sh).

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use support::gateway::{gateway_token, python_agent, start_with};
use support::*;

const TASKS: &str = "io.modelcontextprotocol/tasks";
const SKILLS: &str = "io.modelcontextprotocol/skills";
const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const PICK: &str = "mcp-sidecar/quickPick";
const DONE: &str = "Done after 4 steps: you chose to keep the details.";

/// An agent speaking JSON-RPC over the gateway's Streamable HTTP endpoint, by hand: a legacy
/// session (`initialize`, `Mcp-Session-Id`), or 2026-07-28 requests that stand alone (their
/// `_meta` says the version and the capabilities).
struct RawAgent {
    http: reqwest::Client,
    url: String,
    token: String,
    /// The legacy session's id; `None`: 2026-07-28.
    session: Option<String>,
    capabilities: Value,
    next: u64,
}

impl RawAgent {
    /// A legacy session declaring `capabilities` in `initialize`; the `initialize` result too.
    async fn legacy(info: &Value, capabilities: Value) -> (RawAgent, Value) {
        let mut agent = RawAgent::modern(info, capabilities.clone());
        let (response, session) = agent
            .post(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": LEGACY, "capabilities": capabilities,
                    "clientInfo": {"name": "raw-agent", "version": "1"}}}),
                Some("initialize"),
                None,
            )
            .await;
        agent.session = Some(session.expect("a session id"));
        agent
            .post(
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
                None,
                None,
            )
            .await;
        (agent, response)
    }

    fn modern(info: &Value, capabilities: Value) -> RawAgent {
        let _ = rustls::crypto::ring::default_provider().install_default();
        RawAgent {
            http: reqwest::Client::new(),
            url: info["url"].as_str().unwrap().to_string(),
            token: gateway_token(info),
            session: None,
            capabilities,
            next: 1,
        }
    }

    /// One message; the response to a request (by its id, from a JSON body or an SSE stream)
    /// and the session id the gateway gave.
    async fn post(
        &mut self,
        message: Value,
        method: Option<&str>,
        name: Option<&str>,
    ) -> (Value, Option<String>) {
        let mut request = self
            .http
            .post(&self.url)
            .bearer_auth(&self.token)
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json");
        match &self.session {
            Some(session) => {
                request = request
                    .header("Mcp-Session-Id", session)
                    .header("MCP-Protocol-Version", LEGACY);
            }
            None if method != Some("initialize") => {
                request = request.header("MCP-Protocol-Version", MODERN);
                if let Some(method) = method {
                    request = request.header("Mcp-Method", method);
                }
                if let Some(name) = name {
                    request = request.header("Mcp-Name", name);
                }
            }
            None => {}
        }
        let response = request.body(message.to_string()).send().await.unwrap();
        let session = response
            .headers()
            .get("mcp-session-id")
            .map(|v| v.to_str().unwrap().to_string());
        let status = response.status();
        let body = response.text().await.unwrap();
        if message.get("id").is_none() {
            assert!(status.is_success(), "{status}: {body}");
            return (Value::Null, session);
        }
        let answer = body
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .chain(std::iter::once(body.as_str()))
            .filter_map(|text| serde_json::from_str::<Value>(text.trim()).ok())
            .find(|m| m.get("id") == message.get("id"))
            .unwrap_or_else(|| panic!("no response to {message} in ({status}) {body}"));
        (answer, session)
    }

    /// A request: its whole response (`result` or `error`).
    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next += 1;
        if self.session.is_none() {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": self.capabilities,
                "io.modelcontextprotocol/clientInfo": {"name": "raw-agent", "version": "1"},
            });
        }
        let key = match method {
            "tools/call" => "name",
            "resources/read" => "uri",
            m if m.starts_with("tasks/") => "taskId",
            _ => "",
        };
        let name = params.get(key).and_then(Value::as_str).map(str::to_string);
        let message =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        self.post(message, Some(method), name.as_deref()).await.0
    }

    /// `tasks/get` until the task ends, waiting its `pollIntervalMs` between two (the
    /// protocol's own pacing); every answer.
    async fn poll(&mut self, task_id: &str) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let got = self.request("tasks/get", json!({"taskId": task_id})).await;
            let result = got["result"].clone();
            assert!(result.is_object(), "{got}");
            let status = result["status"].as_str().unwrap().to_string();
            let wait = result["pollIntervalMs"].as_u64().unwrap();
            seen.push(result);
            if status != "working" {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(wait)).await;
        }
    }
}

fn with_tasks() -> Value {
    json!({"extensions": {TASKS: {}}})
}

/// An in-process sidecar with the demo server as `demo` (and `servers` besides), once the
/// gateway serves.
async fn start(servers: Value) -> (CheckedEditor, Value) {
    let folder = tempfile::tempdir().unwrap().keep();
    let mut all = json!({"demo": demo_server("both", None)});
    all.as_object_mut()
        .unwrap()
        .extend(servers.as_object().unwrap().clone());
    let (editor, info) = start_with(&folder, json!({ "servers": all })).await;
    editor.ignore("mcp-sidecar/taskStatus");
    (editor, info)
}

/// Answers the demo task's question (`keep`: "Yes") in the editor until `agent` is done; its
/// outcome and the prompts shown.
async fn answer_until<T>(
    editor: &Arc<TestEditor>,
    mut agent: tokio::task::JoinHandle<T>,
) -> (T, Vec<Value>) {
    let mut shown = Vec::new();
    loop {
        tokio::select! {
            done = &mut agent => return (done.unwrap(), shown),
            prompt = editor.next_prompt() => {
                assert_eq!(prompt["method"], PICK, "unexpected prompt {prompt:#}");
                let items = prompt["params"]["items"].as_array().unwrap();
                // "Yes" is the form's default: the review's Submit sends it.
                let yes = items
                    .iter()
                    .position(|i| i["label"].as_str().is_some_and(|l| l.contains("Yes")))
                    .or_else(|| items.iter().position(|i| i["label"] == "Submit"))
                    .unwrap_or_else(|| panic!("nothing to pick in {prompt:#}"));
                editor.respond(&prompt, json!({"selected": [yes]})).await;
                shown.push(prompt);
            }
        }
    }
}

/// The demo's one question was asked in the editor, for the agent (the question, then the
/// review of the answers).
fn asked_once(shown: &[Value], agent: &str, era: &str) {
    let titles: Vec<&str> = shown
        .iter()
        .map(|p| p["params"]["title"].as_str().unwrap())
        .collect();
    // "<agent> via the gateway → demo, for the task started 10:30 UTC, asks: …"
    let task = format!("{agent} via the gateway → demo, for the task started ");
    assert!(
        titles.len() == 2
            && titles
                .iter()
                .all(|t| t.starts_with(&task) && t.ends_with(" UTC, asks: Keep the details?")),
        "{era}: {titles:#?}"
    );
}

/// Checks a task handle's members; its id.
fn handle_id(created: &Value) -> String {
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working", "{created}");
    for key in ["createdAt", "lastUpdatedAt"] {
        let at = result[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key}: {created}"));
        assert!(at.ends_with('Z') && at.len() == 20, "{key}: {at}");
    }
    assert!(
        result.get("ttlMs").is_some(),
        "ttlMs (a number or null): {created}"
    );
    // The demo's 250 ms, as the server asked.
    assert_eq!(result["pollIntervalMs"], 250, "{created}");
    let id = result["taskId"].as_str().unwrap().to_string();
    assert!(
        id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "the gateway's own id: {id}"
    );
    id
}

/// The agent's whole task: the call, then `tasks/get` until the end.
async fn call_and_poll(mut agent: RawAgent) -> (RawAgent, String, Vec<Value>) {
    let created = agent
        .request(
            "tools/call",
            json!({"name": "demo__slow_task", "arguments": {"steps": 4, "stepMs": 50}}),
        )
        .await;
    let id = handle_id(&created);
    let polls = agent.poll(&id).await;
    (agent, id, polls)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_declares_tasks_polls_the_gateway_to_the_tasks_result_in_both_eras() {
    let (editor, info) = start(json!({})).await;
    for era in ["legacy", "modern"] {
        let agent = match era {
            "legacy" => {
                let (agent, initialized) = RawAgent::legacy(&info, with_tasks()).await;
                let extensions = &initialized["result"]["capabilities"]["extensions"];
                assert!(
                    extensions.get(TASKS).is_some() && extensions.get(SKILLS).is_some(),
                    "{initialized}"
                );
                agent
            }
            _ => RawAgent::modern(&info, with_tasks()),
        };
        let running = tokio::spawn(call_and_poll(agent));
        let ((mut agent, id, polls), shown) = answer_until(&editor, running).await;
        // The question was the editor's, for the agent's call.
        asked_once(&shown, "raw-agent", era);
        let (last, before) = polls.split_last().unwrap();
        assert!(
            before.iter().all(|p| p["status"] == "working"),
            "{era}: the agent never sees input_required: {polls:#?}"
        );
        assert_eq!(last["status"], "completed", "{era}: {last:#}");
        assert_eq!(last["taskId"], id.as_str());
        assert_eq!(last["resultType"], "complete", "{era}: {last:#}");
        assert_eq!(text_of(&last["result"]), DONE, "{era}: {last:#}");
        // Nothing to answer: tasks/update is acknowledged.
        let updated = agent
            .request(
                "tasks/update",
                json!({"taskId": id, "inputResponses": {"keep": {"action": "accept", "content": {"keep": false}}}}),
            )
            .await;
        assert_eq!(
            updated["result"]["resultType"], "complete",
            "{era}: {updated}"
        );
        // An ended task cannot be cancelled.
        let cancelled = agent.request("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(cancelled["error"]["code"], -32602, "{era}: {cancelled}");
        // SEP-2663 removed these.
        for method in ["tasks/result", "tasks/list"] {
            let got = agent.request(method, json!({"taskId": id})).await;
            assert_eq!(got["error"]["code"], -32601, "{era} {method}: {got}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_cancels_its_task_and_the_server_hears_it() {
    let (editor, info) = start(json!({})).await;
    for era in ["legacy", "modern"] {
        let mark = editor.mark();
        let mut agent = match era {
            "legacy" => RawAgent::legacy(&info, with_tasks()).await.0,
            _ => RawAgent::modern(&info, with_tasks()),
        };
        let created = agent
            .request(
                "tools/call",
                json!({"name": "demo__slow_task", "arguments": {"forever": true, "stepMs": 50}}),
            )
            .await;
        let id = handle_id(&created);
        let cancelled = agent.request("tasks/cancel", json!({"taskId": id})).await;
        assert_eq!(
            cancelled["result"]["resultType"], "complete",
            "{era}: {cancelled}"
        );
        let polls = agent.poll(&id).await;
        assert_eq!(
            polls.last().unwrap()["status"],
            "cancelled",
            "{era}: {polls:#?}"
        );
        // The server itself said `cancelled` (a task that goes on after tasks/cancel is given
        // up with a reason).
        let ended = editor
            .wait_notification(mark, |n| {
                n["method"] == "mcp-sidecar/taskStatus" && n["params"]["status"] == "cancelled"
            })
            .await;
        assert!(ended["params"].get("error").is_none(), "{era}: {ended:#}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_is_reached_only_by_the_session_that_started_it() {
    let (editor, info) = start(json!({})).await;
    let (mut owner, _) = RawAgent::legacy(&info, with_tasks()).await;
    let created = owner
        .request(
            "tools/call",
            json!({"name": "demo__slow_task", "arguments": {"forever": true, "stepMs": 50}}),
        )
        .await;
    let id = handle_id(&created);
    let (mut other, _) = RawAgent::legacy(&info, with_tasks()).await;
    let mut sessionless = RawAgent::modern(&info, with_tasks());
    let made_up = "0123456789abcdef0123456789abcdef";
    for (who, agent, task) in [
        ("another session", &mut other, id.as_str()),
        ("a 2026-07-28 request", &mut sessionless, id.as_str()),
        ("a made-up id", &mut owner, made_up),
    ] {
        for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
            let mut params = json!({"taskId": task});
            if method == "tasks/update" {
                params["inputResponses"] = json!({});
            }
            let got = agent.request(method, params).await;
            assert_eq!(got["error"]["code"], -32602, "{who}, {method}: {got}");
        }
    }
    // The owner still reaches it, and ends it.
    let got = owner.request("tasks/get", json!({"taskId": id})).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let cancelled = owner.request("tasks/cancel", json!({"taskId": id})).await;
    assert!(cancelled.get("result").is_some(), "{cancelled}");
    let polls = owner.poll(&id).await;
    assert_eq!(polls.last().unwrap()["status"], "cancelled");
    drop(editor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_does_not_declare_tasks_gets_the_result() {
    let (editor, info) = start(json!({})).await;
    for era in ["legacy", "modern"] {
        let agent = match era {
            "legacy" => RawAgent::legacy(&info, json!({})).await.0,
            _ => RawAgent::modern(&info, json!({})),
        };
        let running = tokio::spawn(async move {
            let mut agent = agent;
            agent
                .request(
                    "tools/call",
                    json!({"name": "demo__slow_task", "arguments": {"steps": 4, "stepMs": 50}}),
                )
                .await
        });
        let (called, shown) = answer_until(&editor, running).await;
        asked_once(&shown, "raw-agent", era);
        assert!(called["result"].get("taskId").is_none(), "{era}: {called}");
        assert_eq!(text_of(&called["result"]), DONE, "{era}: {called}");
        // tasks/* is refused to an agent that did not declare the extension.
        let mut agent = RawAgent::modern(&info, json!({}));
        let got = agent
            .request(
                "tasks/get",
                json!({"taskId": "0123456789abcdef0123456789abcdef"}),
            )
            .await;
        assert!(got.get("error").is_some(), "{era}: {got}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_python_agent_that_does_not_declare_tasks_hears_the_tasks_progress() {
    mcp_sidecar::gateway::set_keep_alive_interval(Duration::from_millis(50));
    let (editor, info) = start(json!({})).await;
    let transport = [
        "--url".to_string(),
        info["url"].as_str().unwrap().into(),
        "--token".into(),
        gateway_token(&info),
        "--name".into(),
        "python-agent".into(),
    ];
    let steps = json!([{"op": "call", "name": "demo__slow_task",
                        "arguments": {"steps": 4, "stepMs": 100}, "progress": true}]);
    let child = python_agent(&transport, &steps).spawn().unwrap();
    let running = tokio::spawn(support::gateway::agent_outcomes(child));
    let (out, shown) = answer_until(&editor, running).await;
    asked_once(&shown, "python-agent", "python");
    assert_eq!(text_of(&out[0]["result"]), DONE, "{:#}", out[0]);
    let progress = out[0]["progress"].as_array().unwrap();
    let values: Vec<f64> = progress
        .iter()
        .map(|p| {
            p["progress"]
                .as_f64()
                .unwrap_or_else(|| panic!("a number: {p}"))
        })
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "{values:?}");
    let messages: Vec<&str> = progress
        .iter()
        .filter_map(|p| p["message"].as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.starts_with("task working: step")),
        "{messages:?}"
    );
}

/// The hostile tasks and skills server, logging its events (`read <uri>`, ...) to `log`.
fn hostile(log: &std::path::Path) -> Value {
    let mut def = python_fixture("bad/hostile_tasks.py", &[], 30);
    def["env"] = json!({"HOSTILE_TASKS_LOG": log.display().to_string()});
    def
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    let hash = sha2::Sha256::digest(bytes);
    let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn skills_and_their_files_reach_the_server_that_listed_each() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.log");
    let (_editor, info) = start(json!({
        "demo2": demo_server("both", None),
        "hostile": hostile(&log),
    }))
    .await;
    for era in ["legacy", "modern"] {
        let mut agent = match era {
            "legacy" => RawAgent::legacy(&info, json!({})).await.0,
            _ => RawAgent::modern(&info, json!({})),
        };
        let listed = agent.request("skills/list", json!({})).await;
        let skills = listed["result"]["skills"]
            .as_array()
            .unwrap_or_else(|| panic!("{era}: {listed}"));
        let server_of = |uri: &str| {
            let rows: Vec<&Value> = skills.iter().filter(|s| s["uri"] == uri).collect();
            assert!(rows.len() <= 1, "{era}: {uri} listed twice");
            rows.first()
                .map(|s| s["_meta"]["mcp-sidecar/server"].clone())
        };
        // The first server by name keeps the URIs demo2 lists too.
        assert_eq!(
            server_of("skill://flight-report/SKILL.md"),
            Some(json!("demo"))
        );
        assert_eq!(
            server_of("skill://trip-checklist/SKILL.md"),
            Some(json!("demo"))
        );
        assert_eq!(server_of("skill://good/SKILL.md"), Some(json!("hostile")));
        assert_eq!(server_of("skill://a/dup/SKILL.md"), Some(json!("hostile")));
        // A manifest that reaches outside its folder breaks the extension's rules: left out.
        assert_eq!(server_of("skill://dotdot/SKILL.md"), None, "{era}");

        // The demo's entry as the demo sent it: its files' digests are those of the fixtures,
        // and the bytes read through the gateway match them.
        let report = skills
            .iter()
            .find(|s| s["uri"] == "skill://flight-report/SKILL.md")
            .unwrap();
        assert_eq!(report["frontmatter"]["name"], "flight-report");
        let files = report["resources"].as_array().unwrap();
        assert_eq!(files.len(), 2, "{report}");
        for file in files {
            let uri = file["uri"].as_str().unwrap();
            let path = uri.strip_prefix("skill://").unwrap();
            let on_disk = std::fs::read(fixture("skills-demo").join(path)).unwrap();
            assert_eq!(file["digest"], sha256(&on_disk), "{uri}");
            assert_eq!(file["size"], on_disk.len(), "{uri}");
            let read = agent.request("resources/read", json!({"uri": uri})).await;
            let text = read["result"]["contents"][0]["text"].as_str();
            assert_eq!(
                text.map(str::as_bytes),
                Some(&on_disk[..]),
                "{era} {uri}: {read}"
            );
        }

        // skills/get and a file of the hostile server's skill go to it.
        let got = agent
            .request("skills/get", json!({"uri": "skill://good/SKILL.md"}))
            .await;
        assert_eq!(
            got["result"]["skill"]["uri"], "skill://good/SKILL.md",
            "{got}"
        );
        assert_eq!(
            got["result"]["skill"]["_meta"]["mcp-sidecar/server"],
            "hostile"
        );
        let got = agent
            .request(
                "skills/get",
                json!({"uri": "skill://flight-report/SKILL.md"}),
            )
            .await;
        assert_eq!(
            got["result"]["skill"]["_meta"]["mcp-sidecar/server"], "demo",
            "{got}"
        );
        let guide = "skill://good/references/guide.md";
        let read = agent.request("resources/read", json!({"uri": guide})).await;
        assert_eq!(
            read["result"]["contents"][0]["text"], "# Guide\n\nBe kind.\n",
            "{era}: {read}"
        );
        let reads = std::fs::read_to_string(&log).unwrap();
        assert!(
            reads.lines().any(|l| l == format!("read {guide}")),
            "{reads}"
        );

        // No server lists it, and three offer skills: invalid params. A file of the skill the
        // gateway left out is no listed skill's: not found.
        let got = agent
            .request("skills/get", json!({"uri": "skill://nobody/SKILL.md"}))
            .await;
        assert_eq!(got["error"]["code"], -32602, "{era}: {got}");
        let read = agent
            .request(
                "resources/read",
                json!({"uri": "skill://dotdot/scripts/x.py"}),
            )
            .await;
        let code = if era == "legacy" { -32002 } else { -32602 };
        assert_eq!(read["error"]["code"], code, "{era}: {read}");
    }
}

/// The Python agent with the SDK's Tasks extension (2026-07-28), over HTTP or through
/// `mcp-sidecar gateway`, running `steps`.
fn python_with_tasks(info: &Value, way: &str, steps: &Value) -> tokio::process::Command {
    let mut args: Vec<String> = ["--mode", MODERN, "--name", "python-agent", "--tasks"]
        .map(String::from)
        .to_vec();
    match way {
        "http" => args.extend([
            "--url".into(),
            info["url"].as_str().unwrap().into(),
            "--token".into(),
            gateway_token(info),
        ]),
        _ => args.extend([
            "--command".into(),
            sidecar_bin().display().to_string(),
            "gateway".into(),
        ]),
    }
    let mut command = python_agent(&args, steps);
    support::gateway::bridge_env(&mut command, info);
    command
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_python_agent_with_the_tasks_extension_polls_cancels_and_keeps_its_tasks_to_itself() {
    let (editor, info) = start(json!({})).await;
    for way in ["http", "bridge"] {
        let steps = json!([
            {"op": "call", "name": "demo__slow_task", "arguments": {"steps": 4, "stepMs": 50}},
            {"op": "request", "method": "tasks/get", "params": {"taskId": "$last"}},
            {"op": "call", "name": "demo__slow_task", "arguments": {"forever": true, "stepMs": 50},
             "cancel_task": true},
        ]);
        let child = python_with_tasks(&info, way, &steps).spawn().unwrap();
        let running = tokio::spawn(support::gateway::agent_outcomes(child));
        let (out, shown) = answer_until(&editor, running).await;
        asked_once(&shown, "python-agent", way);
        // The SDK resolved the handle by polling the gateway.
        let done = &out[0];
        assert_eq!(text_of(&done["result"]), DONE, "{way}: {done:#}");
        let handle = &done["task"]["handle"];
        assert_eq!(handle["resultType"], "task", "{way}: {handle}");
        let id = handle["taskId"].as_str().unwrap().to_string();
        assert_eq!(id.len(), 32, "{way}: {handle}");
        let polls = done["task"]["polls"].as_array().unwrap();
        let (last, before) = polls.split_last().unwrap();
        assert!(
            before.iter().all(|p| p["status"] == "working"),
            "{way}: {polls:#?}"
        );
        assert_eq!(last["status"], "completed", "{way}: {last:#}");
        // The same session asks again: the task is still there, ended.
        assert_eq!(
            out[1]["result"]["status"], "completed",
            "{way}: {:#}",
            out[1]
        );
        assert_eq!(out[1]["result"]["taskId"], id.as_str());
        // Cancelled after its first poll.
        let cancelled = &out[2];
        assert_eq!(cancelled["result"]["isError"], true, "{way}: {cancelled:#}");
        let polls = cancelled["task"]["polls"].as_array().unwrap();
        assert_eq!(
            polls.last().unwrap()["status"],
            "cancelled",
            "{way}: {polls:#?}"
        );

        // Another agent cannot reach the task, whichever way it comes.
        for other in ["http", "bridge"] {
            if other == "http" && way == "http" {
                // Both without a session: the id is all it takes (and it cannot be guessed).
                continue;
            }
            let steps = json!([{"op": "request", "method": "tasks/get", "params": {"taskId": id}}]);
            let child = python_with_tasks(&info, other, &steps).spawn().unwrap();
            let out = support::gateway::agent_outcomes(child).await;
            assert_eq!(
                out[0]["error"]["code"], -32602,
                "{way} → {other}: {:#}",
                out[0]
            );
        }
    }
}
