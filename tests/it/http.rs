//! Servers over Streamable HTTP. The first tests need nothing but this process (a refused port, a
//! small fake HTTP server for error statuses, TLS and non-MCP answers); the ones marked ignored
//! need the peers from `scripts/install-peers.sh` (`. .cache/peers/env.sh`): server-everything
//! in its `streamableHttp` mode (a legacy 2025-11-25 session: SSE, `Mcp-Session-Id`, replies to
//! its requests POSTed back) and the Python SDK fixtures served over HTTP in both eras.

use crate::support;

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

use crate::support::http::{HttpServer, answer, closed_port, read_request};

async fn tool_names(editor: &TestEditor, server: &str) -> Vec<String> {
    editor
        .command("mcp-sidecar.listTools", json!({"server": server}))
        .await
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect()
}

/// Starts `editor` with these servers and returns the first `failed` status of each, in order.
async fn failed_statuses(servers: Value, names: &[&str]) -> Vec<String> {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(&[], json!({"servers": servers}), json!({}))
        .await;
    let mut messages = Vec::new();
    for name in names {
        let status = editor.wait_status(mark, name, "failed").await;
        messages.push(status["message"].as_str().unwrap_or_default().to_owned());
    }
    editor.shutdown_and_exit().await;
    // The person is told once about each (a retry that fails too is not told again).
    let shown = read_shown(&editor, mark);
    for (name, message) in names.iter().zip(&messages) {
        let told = format!("MCP server \"{name}\" failed to start: {message}");
        let times = shown.iter().filter(|t| **t == told).count();
        assert_eq!(times, 1, "{told}: {shown:#?}");
    }
    assert_eq!(shown.len(), names.len(), "{shown:#?}");
    messages
}

/// A `401` from a server without sign-in metadata, in an editor that cannot show the question:
/// the server waits in `needsAuth` (not retried, not failed) with the host to sign in at.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_401_without_a_way_to_ask_waits_for_a_sign_in() {
    let unauthorized = fake_server(Fake::Always(
        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"mcp\"\r\nContent-Length: 0\r\n\r\n",
    ))
    .await;
    let editor = in_process();
    let mark = editor.mark();
    let url = format!("http://127.0.0.1:{unauthorized}/mcp");
    editor
        .initialize(
            &[],
            json!({"servers": {"unauthorized": {"url": url, "headers": {"X-Team": "a"}}}}),
            json!({}),
        )
        .await;
    let status = editor.wait_status(mark, "unauthorized", "needsAuth").await;
    assert_eq!(
        status["message"], "needs you to sign in at 127.0.0.1",
        "{status}"
    );
    let row = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert_eq!(row[0]["auth"]["signedIn"], false, "{row}");
    editor.shutdown_and_exit().await;
}

/// The sign-in's metadata discovery on a kept-alive connection that the server closes as a
/// request goes out on it (an idle timeout at the wrong moment): the discovery runs again, and
/// the server waits in `needsAuth` as above, never `failed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovery_request_its_connection_drops_unanswered_is_sent_again() {
    const UNAUTHORIZED: &str = "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"mcp\"\r\nContent-Length: 0\r\n\r\n";
    // Every request is answered on a connection kept alive, but the first one sent on a
    // connection that already carried one is read and left unanswered: the connection closes.
    let dropped: Arc<AtomicBool> = Arc::default();
    let server = HttpServer::start({
        let dropped = dropped.clone();
        move |_, mut conn| {
            let dropped = dropped.clone();
            async move {
                while conn.write_all(UNAUTHORIZED.as_bytes()).await.is_ok() {
                    if read_request(&mut conn).await.is_none() || !dropped.swap(true, SeqCst) {
                        return;
                    }
                }
            }
        }
    })
    .await;
    let editor = in_process();
    let mark = editor.mark();
    let url = format!("{}/mcp", server.url());
    editor
        .initialize(&[], json!({"servers": {"s": {"url": url}}}), json!({}))
        .await;
    let status = editor.wait_status(mark, "s", "needsAuth").await;
    assert_eq!(
        status["message"], "needs you to sign in at 127.0.0.1",
        "{status}"
    );
    assert!(
        dropped.load(SeqCst),
        "no request went out on a kept connection"
    );
    let failed: Vec<_> = editor
        .notifications()
        .into_iter()
        .filter(|n| n["params"]["state"] == "failed" || n["method"] == "window/showMessage")
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_connection_fails_clearly_and_is_retried() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"h": {"type": "http", "url": url}}}),
            json!({}),
        )
        .await;
    let status = editor.wait_status(mark, "h", "failed").await;
    assert_eq!(
        status["message"],
        format!("could not connect to {url}: connection refused"),
        "{status}"
    );
    wait_shown(
        &editor,
        mark,
        &format!("MCP server \"h\" failed to start: could not connect to {url}"),
    )
    .await;
    // The supervisor's restart and backoff apply as for stdio.
    let again = editor.mark();
    editor.wait_status(again, "h", "starting").await;
    editor.wait_status(again, "h", "failed").await;
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    let h = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "h")
        .unwrap_or_else(|| panic!("{listed}"));
    assert_eq!(h["transport"], "http", "{h}");
    editor.shutdown_and_exit().await;
}

/// What the fake server answers.
#[derive(Clone, Copy)]
enum Fake {
    /// Every request gets this raw HTTP response.
    Always(&'static str),
    /// POST gets 405; GET opens an event stream (an old HTTP+SSE endpoint).
    OldSse,
}

/// A fake server on a free port: one fixed response per connection, then close.
async fn fake_server(fake: Fake) -> u16 {
    let server = HttpServer::start(move |request, conn| async move {
        let response = match fake {
            Fake::Always(response) => response,
            Fake::OldSse if request.method() == "GET" => {
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\nevent: endpoint\r\ndata: /messages?sessionId=1\r\n\r\n"
            }
            Fake::OldSse => "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n",
        };
        answer(conn, response).await;
    })
    .await;
    server.port
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_failures_are_person_readable() {
    let not_found = fake_server(Fake::Always(
        "HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 31\r\n\r\n<html>Cannot POST /mcp</html>\r\n",
    ))
    .await;
    let broken = fake_server(Fake::Always(
        "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\nContent-Length: 4\r\n\r\nboom",
    ))
    .await;
    let web_page = fake_server(Fake::Always(
        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 13\r\n\r\n<html></html>",
    ))
    .await;
    let old_sse = fake_server(Fake::OldSse).await;
    let not_json_rpc = fake_server(Fake::Always(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 16\r\n\r\n{\"status\": \"ok\"}",
    ))
    .await;
    let moved = fake_server(Fake::Always(
        "HTTP/1.1 301 Moved Permanently\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n",
    ))
    .await;
    let url = |port: u16| format!("http://127.0.0.1:{port}/mcp");
    let servers = json!({
        "notFound": {"url": url(not_found)},
        "broken": {"url": url(broken)},
        "webPage": {"url": url(web_page)},
        "oldSse": {"type": "sse", "url": url(old_sse)},
        "tls": {"url": format!("https://127.0.0.1:{not_found}/mcp")},
        "notJsonRpc": {"url": url(not_json_rpc)},
        "moved": {"url": url(moved)},
        "reserved": {"url": url(not_found), "headers": {"Mcp-Session-Id": "x"}},
    });
    let names = [
        "notFound",
        "broken",
        "webPage",
        "oldSse",
        "tls",
        "reserved",
        "notJsonRpc",
        "moved",
    ];
    let messages = failed_statuses(servers, &names).await;
    let m = |name: &str| &messages[names.iter().position(|n| *n == name).unwrap()];
    assert_eq!(
        m("notFound"),
        &format!(
            "{} answered HTTP 404 Not Found; is this the server's MCP endpoint?",
            url(not_found)
        )
    );
    assert_eq!(
        m("broken"),
        &format!("{} answered HTTP 500 Internal Server Error", url(broken))
    );
    assert!(
        m("webPage").starts_with(&format!(
            "{} did not answer like an MCP server: it sent \"text/html\"",
            url(web_page)
        )),
        "{}",
        m("webPage")
    );
    assert!(
        m("oldSse").starts_with(&format!(
            "{} looks like an old HTTP+SSE endpoint",
            url(old_sse)
        )) && m("oldSse").contains("Streamable HTTP only"),
        "{}",
        m("oldSse")
    );
    assert!(
        m("tls").starts_with(&format!(
            "could not connect to https://127.0.0.1:{not_found}/mcp: the TLS handshake failed ("
        )),
        "{}",
        m("tls")
    );
    assert_eq!(
        m("notJsonRpc"),
        &format!(
            "{} did not answer like an MCP server: its JSON is not a JSON-RPC message ({{\"status\": \"ok\"}})",
            url(not_json_rpc)
        )
    );
    assert_eq!(
        m("moved"),
        &format!(
            "{} answered HTTP 301 Moved Permanently; the sidecar follows only same-origin 307/308 redirects, so configure the final URL",
            url(moved)
        )
    );
    assert_eq!(
        m("reserved"),
        "\"headers\": \"Mcp-Session-Id\" is set by the sidecar itself and cannot be configured"
    );
}

/// `fixtures/bad/odd_forms.py --http MODE` (stdlib Python): an MCP server over Streamable HTTP
/// with odd habits (see the fixture's doc). Returns the child and the port it listens on.
async fn odd_forms_over_http(mode: &str) -> (Peer, u16) {
    let mut child = tokio::process::Command::new("python3")
        .arg(fixture("bad/odd_forms.py"))
        .args(["--http", mode])
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python3 runs the odd-forms fixture");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("odd_forms.py --http never said where it listens")
        .unwrap()
        .expect("odd_forms.py --http exited before listening");
    let port = line
        .strip_prefix("listening on ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("odd_forms.py --http said {line:?}"));
    (Peer(child), port)
}

/// Against the odd-forms fixture over HTTP in both eras (legacy over SSE; 2026-07-28 with SSE
/// and with plain JSON answers):
/// - an out-of-subset form (a nested object: rmcp's types refuse it, so only the raw handling
///   the sidecar applies to every HTTP message lets it answer properly) is refused as over stdio
///   (`tests/it/elicitation.rs`): the person is
///   told, and the server gets -32602 naming the property (legacy, POSTed back) or a decline
///   (2026-07-28, in the retry). Nothing hangs;
/// - the definition's headers come with every request;
/// - the first call of a legacy session waits until the session's GET stream is open;
/// - an HTTP error status fails one call, and the connection stays;
/// - a result nested past the depth bound fails its call (an SSE event or a JSON body alike);
/// - a server that goes away mid-call fails the call at once as serverGone, and is restarted;
/// - an answer over maxMessageBytes closes the connection with the reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_forms_lost_servers_and_oversized_answers_in_both_eras() {
    let mut servers = serde_json::Map::new();
    let eras = [
        ("legacy", "legacy"),
        ("modernSse", "modern-sse"),
        ("modernJson", "modern-json"),
    ];
    let mut peers = Vec::new();
    for (name, mode) in eras {
        let (peer, port) = odd_forms_over_http(mode).await;
        peers.push(peer);
        servers.insert(
            name.into(),
            json!({"url": format!("http://127.0.0.1:{port}/mcp"), "timeout": 15, "headers": {"X-Team": "odd"}}),
        );
    }
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": servers, "maxMessageBytes": 65536}),
            full_ui(),
        )
        .await;
    for (name, era) in eras {
        let status = editor.wait_status(mark, name, "running").await;
        let expected = if era == "legacy" {
            "2025-11-25"
        } else {
            "2026-07-28"
        };
        assert_eq!(status["protocolVersion"], expected, "{status}");
    }
    // The first call of a legacy session waits for the session's GET stream, where the server
    // sends its roots/list.
    let roots = call(&editor, "legacy", "roots", json!({})).await;
    assert!(
        structured(&roots)["response"]["result"]["roots"].is_array(),
        "{roots}"
    );
    for (name, era) in eras {
        let told = editor.mark();
        let result = call(&editor, name, "nested", json!({})).await;
        let response = structured(&result)["response"].clone();
        if era == "legacy" {
            assert_eq!(response["error"]["code"], -32602, "{name}: {result}");
            assert!(
                response["error"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("property \"address\"")),
                "{name}: {response}"
            );
        } else {
            assert_eq!(response, json!({"action": "decline"}), "{name}: {result}");
        }
        let shown = editor
            .wait_notification(told, |n| n["method"] == "window/showMessage")
            .await;
        assert!(
            shown["params"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("cannot show")),
            "{name}: {shown}"
        );
    }
    // An HTTP error status on one call fails that call; the connection stays.
    for (name, _) in eras {
        let response = editor
            .command_response(
                "mcp-sidecar.callTool",
                json!({"server": name, "tool": "fail", "arguments": {}}),
            )
            .await;
        assert_eq!(
            response["error"]["data"]["kind"], "serverError",
            "{name}: {response}"
        );
        assert!(
            response["error"]["message"]
                .as_str()
                .unwrap()
                .ends_with("/mcp answered HTTP 500 Internal Server Error"),
            "{name}: {response}"
        );
        let told = editor.mark();
        let again = call(&editor, name, "nested", json!({})).await;
        assert!(
            structured(&again)["response"].is_object(),
            "{name}: {again}"
        );
        wait_shown(
            &editor,
            told,
            &format!("{name} asked \"Where do you live?\" with a form this editor cannot show"),
        )
        .await;
    }
    // A result nested past the bound (110 levels, which rmcp's parse takes) is refused as
    // over stdio, as an SSE event and as a JSON body; the connection stays.
    for (name, _) in eras {
        let response = editor
            .command_response(
                "mcp-sidecar.callTool",
                json!({"server": name, "tool": "deep", "arguments": {}}),
            )
            .await;
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("server \"{name}\""))
                && message.contains("its result nests deeper than 100 levels"),
            "{name}: {response}"
        );
        let told = editor.mark();
        let again = call(&editor, name, "nested", json!({})).await;
        assert!(
            structured(&again)["response"].is_object(),
            "{name}: {again}"
        );
        wait_shown(
            &editor,
            told,
            &format!("{name} asked \"Where do you live?\" with a form this editor cannot show"),
        )
        .await;
    }
    // A server that goes away mid-call: the call fails at once as serverGone, naming the URL,
    // and the supervisor restarts the server.
    for (name, _) in eras {
        let gone = editor.mark();
        let response = editor
            .command_response(
                "mcp-sidecar.callTool",
                json!({"server": name, "tool": "vanish", "arguments": {}}),
            )
            .await;
        assert_eq!(
            response["error"]["data"]["kind"], "serverGone",
            "{name}: {response}"
        );
        let message = response["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("stopped during the request: the connection to http://127.0.0.1:"),
            "{name}: {message}"
        );
        let failed = editor.wait_status(gone, name, "failed").await;
        assert!(
            failed["message"].as_str().unwrap().contains("broke"),
            "{name}: {failed}"
        );
        let stopped = format!("MCP server \"{name}\" stopped: the connection to http://127.0.0.1:");
        wait_shown(&editor, gone, &stopped).await;
        editor.wait_status(gone, name, "running").await;
    }
    // An answer over maxMessageBytes closes the connection with the reason, as on stdio.
    for (name, _) in eras {
        let gone = editor.mark();
        let response = editor
            .command_response(
                "mcp-sidecar.callTool",
                json!({"server": name, "tool": "huge", "arguments": {}}),
            )
            .await;
        assert_eq!(
            response["error"]["data"]["kind"], "serverGone",
            "{name}: {response}"
        );
        let failed = editor.wait_status(gone, name, "failed").await;
        assert_eq!(
            failed["message"],
            "the server sent a message larger than maxMessageBytes (65536 bytes); the connection was closed",
            "{name}: {failed}"
        );
    }
    editor.shutdown_and_exit().await;
}

/// A child process killed when dropped.
pub(crate) struct Peer(tokio::process::Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

/// Waits until something accepts connections on `port`.
async fn wait_listening(port: u16, child: &mut tokio::process::Child) {
    let deadline = Instant::now() + WAIT;
    loop {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("the peer server exited before listening on {port}: {status}");
        }
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        // A poll interval: the peer says nothing when it starts listening.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// server-everything in its Streamable HTTP mode (it reads the port from `PORT`; the endpoint
/// is `/mcp`).
pub(crate) async fn everything_over_http(port: u16) -> Peer {
    let mut child = tokio::process::Command::new("node")
        .arg(peer("MCP_EVERYTHING_JS"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node");
    wait_listening(port, &mut child).await;
    Peer(child)
}

/// One of the Python SDK fixtures served over Streamable HTTP on `port` (`/mcp`): the same
/// server code as over stdio, run with `MCPServer.run("streamable-http")`, which serves both
/// eras.
async fn python_over_http(fixture_file: &str, port: u16) -> (Peer, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let launcher = dir.path().join("serve_http.py");
    std::fs::write(
        &launcher,
        "import importlib.util, sys\n\
         spec = importlib.util.spec_from_file_location('fixture_server', sys.argv[1])\n\
         module = importlib.util.module_from_spec(spec)\n\
         sys.modules['fixture_server'] = module\n\
         spec.loader.exec_module(module)\n\
         module.server.run('streamable-http', host='127.0.0.1', port=int(sys.argv[2]))\n",
    )
    .unwrap();
    let mut child = tokio::process::Command::new(peer("MCP_PYTHON"))
        .arg(&launcher)
        .arg(fixture(&format!("python/{fixture_file}")))
        .arg(port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("python");
    wait_listening(port, &mut child).await;
    (Peer(child), dir)
}

const INPUT: &str = "mcp-sidecar/inputBox";
const PICK: &str = "mcp-sidecar/quickPick";

/// The JSON after "Raw result:" in server-everything's answer.
fn raw_result(result: &Value) -> Value {
    let text = text_of(result);
    let raw = text
        .split("Raw result:")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    serde_json::from_str(raw.trim()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_over_streamable_http() {
    let port = closed_port();
    let mut server = everything_over_http(port).await;
    let folder = tempfile::tempdir().unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(folder.path(), "alpha")],
            json!({"servers": {"everything": {"url": url}}}),
            full_ui(),
        )
        .await;
    let status = editor.wait_status(mark, "everything", "running").await;
    assert_eq!(status["protocolVersion"], "2025-11-25", "{status}");

    // Tools, and a plain call.
    assert!(
        tool_names(&editor, "everything")
            .await
            .contains(&"get-sum".to_owned())
    );
    let sum = call(&editor, "everything", "get-sum", json!({"a": 2, "b": 40})).await;
    assert!(text_of(&sum).contains("42"), "{sum}");

    // Roots: the server asks with roots/list on the call's SSE stream; the answer is POSTed.
    wait_for_tool(&editor, "everything", "get-roots-list").await;
    let roots = call(&editor, "everything", "get-roots-list", json!({})).await;
    let text = text_of(&roots);
    assert!(
        text.contains(&file_uri(folder.path())) && text.contains("alpha"),
        "{text}"
    );

    // Elicitation over HTTP: the form arrives on the call's SSE stream (its schema kept raw),
    // the person answers, the result is POSTed back.
    eventually("trigger-elicitation-request in the tool list", || async {
        tool_names(&editor, "everything")
            .await
            .contains(&"trigger-elicitation-request".to_owned())
    })
    .await;
    let pending = spawn_call_response(
        &editor,
        "everything",
        "trigger-elicitation-request",
        json!({}),
    );
    let shown = editor
        .answer_prompts(&[
            (INPUT, json!({"value": "Grace Hopper"})),
            (PICK, json!({"selected": [0]})),
            (INPUT, json!({"skip": true})),
            (INPUT, json!({"value": "grace@example.com"})),
            (INPUT, json!({"value": "https://example.com/grace"})),
            (INPUT, json!({"value": "1906-12-09"})),
            (INPUT, json!({"value": "7"})),
            (INPUT, json!({"value": "2.5"})),
            (PICK, json!({"selected": [2]})),
            (PICK, json!({"selected": [0, 1]})),
            (PICK, json!({"selected": [1]})),
            (PICK, json!({"selected": [2]})),
            (PICK, json!({"selected": [1]})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    assert_eq!(shown[0]["params"]["totalSteps"], 13, "form order kept");
    let response = pending.await.unwrap();
    assert_eq!(
        raw_result(&response["result"]),
        json!({"action": "accept", "content": {
            "name": "Grace Hopper", "check": true, "email": "grace@example.com",
            "homepage": "https://example.com/grace", "birthdate": "1906-12-09", "integer": 7,
            "number": 2.5, "untitledSingleSelectEnum": "Joey",
            "untitledMultipleSelectEnum": ["Guitar", "Piano"], "titledSingleSelectEnum": "hero-2",
            "titledMultipleSelectEnum": ["fish-3"], "legacyTitledEnum": "pet-2"}}),
        "{response}"
    );

    // Sampling over HTTP: the request arrives on the call's SSE stream (params kept raw), both
    // drafts are shown, the answer is POSTed back.
    eventually("trigger-sampling-request in the tool list", || async {
        tool_names(&editor, "everything")
            .await
            .contains(&"trigger-sampling-request".to_owned())
    })
    .await;
    let pending = spawn_call_response(
        &editor,
        "everything",
        "trigger-sampling-request",
        json!({"prompt": "a haiku about pipes", "maxTokens": 50}),
    );
    let request = editor.next_prompt().await;
    assert_eq!(request["params"]["kind"], "samplingRequest", "{request}");
    let text = request["params"]["text"].as_str().unwrap();
    assert!(text.contains("a haiku about pipes"), "{text}");
    editor
        .respond(&request, json!({"action": "accept", "text": text}))
        .await;
    let draft = editor.next_prompt().await;
    assert_eq!(draft["params"]["kind"], "samplingResponse", "{draft}");
    let written = format!(
        "{}\nBytes flow through the socket\n",
        draft["params"]["text"].as_str().unwrap().trim_end()
    );
    editor
        .respond(&draft, json!({"action": "accept", "text": written}))
        .await;
    let response = pending.await.unwrap();
    let text = text_of(&response["result"]);
    let sampled: Value = serde_json::from_str(text.split_once('\n').unwrap().1).unwrap();
    assert_eq!(
        sampled["content"],
        json!({"type": "text", "text": "Bytes flow through the socket"}),
        "{text}"
    );

    // The server goes away mid-call: the call fails at once as serverGone, the status says why,
    // and the supervisor tries again. The call is under way once the server reports progress.
    let mark = editor.mark();
    let pending = spawn_call_with_token(
        &editor,
        "everything",
        "trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
        "mid-call",
    );
    editor
        .wait_notification(mark, |n| {
            n["method"] == "$/progress"
                && n["params"]["token"] == "mid-call"
                && n["params"]["value"]["kind"] == "report"
        })
        .await;
    let gone = editor.mark();
    server.0.start_kill().unwrap();
    let _ = server.0.wait().await;
    let started = Instant::now();
    let response = pending.await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the call hung for {:?}",
        started.elapsed()
    );
    assert_eq!(
        response["error"]["data"]["kind"], "serverGone",
        "{response}"
    );
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("stopped during the request") && message.contains(&url),
        "{message}"
    );
    // Its progress began and ended.
    let mine = |n: &Value| n["method"] == "$/progress" && n["params"]["token"] == "mid-call";
    editor
        .wait_notification(mark, |n| mine(n) && n["params"]["value"]["kind"] == "end")
        .await;
    let progress = editor.read_notifications(mark, mine);
    let kinds: Vec<&Value> = progress
        .iter()
        .map(|n| &n["params"]["value"]["kind"])
        .collect();
    assert!(
        kinds.first() == Some(&&json!("begin")) && kinds.last() == Some(&&json!("end")),
        "{progress:#?}"
    );
    let failed = editor.wait_status(gone, "everything", "failed").await;
    assert!(
        failed["message"].as_str().unwrap().contains(&url),
        "{failed}"
    );
    let lost = format!("MCP server \"everything\" stopped: lost the connection to {url}");
    wait_shown(&editor, gone, &lost).await;
    editor.wait_status(gone, "everything", "starting").await;
    editor.shutdown_and_exit().await;
}

/// A Python fixture served over Streamable HTTP and a fresh editor connected to it as "py"
/// (pinned to `pin`, else negotiated, which is 2026-07-28), running with that revision.
async fn python_session_over_http(
    fixture_file: &str,
    pin: Option<&str>,
    folders: &[(&std::path::Path, &str)],
    editor_caps: Value,
) -> (Peer, tempfile::TempDir, CheckedEditor) {
    let port = closed_port();
    let (server, dir) = python_over_http(fixture_file, port).await;
    let editor = in_process();
    let mark = editor.mark();
    let mut def = json!({"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")});
    if let Some(pin) = pin {
        def["protocolVersion"] = json!(pin);
    }
    editor
        .initialize(folders, json!({"servers": {"py": def}}), editor_caps)
        .await;
    let status = editor.wait_status(mark, "py", "running").await;
    assert_eq!(
        status["protocolVersion"],
        pin.unwrap_or("2026-07-28"),
        "{status}"
    );
    (server, dir, editor)
}

async fn python_roots_over_http(pin: Option<&str>) {
    let folder = tempfile::tempdir().unwrap();
    let (_server, _dir, editor) =
        python_session_over_http("roots_server.py", pin, &[(folder.path(), "a")], json!({})).await;
    // Modern: roots through an MRTR round (input_required in the POST's answer, then a retry);
    // legacy: a roots/list request on the call's SSE stream, answered by POST.
    let shown = structured(&call(&editor, "py", "show_roots", json!({})).await);
    assert_eq!(
        shown["roots"],
        json!([{"uri": file_uri(folder.path()), "name": "a"}]),
        "{shown}"
    );
    assert_eq!(
        shown["era"],
        if pin.is_some() { "legacy" } else { "modern" },
        "{shown}"
    );
    let sum = call(&editor, "py", "add", json!({"a": 1.5, "b": 2})).await;
    assert!(text_of(&sum).contains("3.5"), "{sum}");
    // A folder change: legacy servers are told (roots/list_changed, POSTed), a 2026-07-28 one
    // sees the new set on its next ask and is sent no notification.
    let other = tempfile::tempdir().unwrap();
    editor
        .notify(
            "workspace/didChangeWorkspaceFolders",
            json!({"event": {"added": [{"uri": file_uri(other.path()), "name": "b"}], "removed": [{"uri": file_uri(folder.path()), "name": "a"}]}}),
        )
        .await;
    let legacy = pin.is_some();
    eventually("the Python server seeing the new roots", || async {
        let shown = structured(&call(&editor, "py", "show_roots", json!({})).await);
        shown["roots"] == json!([{"uri": file_uri(other.path()), "name": "b"}])
            && (!legacy || shown["listChangedCount"].as_u64() >= Some(1))
    })
    .await;
    let shown = structured(&call(&editor, "py", "show_roots", json!({})).await);
    if legacy {
        assert!(shown["listChangedCount"].as_u64().unwrap() >= 1, "{shown}");
    } else {
        assert_eq!(
            shown["listChangedCount"], 0,
            "no list_changed on 2026-07-28: {shown}"
        );
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_over_http_modern_era() {
    python_roots_over_http(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_over_http_pinned_to_legacy() {
    python_roots_over_http(Some("2025-11-25")).await;
}

async fn python_elicitation_over_http(pin: Option<&str>) {
    let (_server, _dir, editor) =
        python_session_over_http("client_features_server.py", pin, &[], full_ui()).await;
    let pending = spawn_call_response(&editor, "py", "elicit_form", json!({}));
    let shown = editor
        .answer_prompts(&[
            (INPUT, json!({"value": "Ann"})),
            (INPUT, json!({"value": "42"})),
            (INPUT, json!({"value": "7"})),
            (PICK, json!({"selected": [0]})),
            (PICK, json!({"selected": [2]})),
            (PICK, json!({"selected": [0, 2]})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    assert_eq!(
        shown[4]["params"]["items"][1]["picked"], true,
        "default green preselected"
    );
    let response = pending.await.unwrap();
    assert_eq!(
        structured(&response["result"]),
        json!({"action": "accept", "content": {"name": "Ann", "age": 42, "score": 7, "subscribe": true, "color": "blue", "tags": ["a", "c"]}}),
        "{pin:?}: {response}"
    );
    // URL mode: consent, open, accept.
    let pending = spawn_call_response(&editor, "py", "elicit_url", json!({}));
    let consent = editor.next_prompt().await;
    assert_eq!(consent["method"], PICK, "{consent}");
    assert_eq!(
        consent["params"]["items"][0]["description"],
        "https://example.com/auth?state=abc123"
    );
    editor.respond(&consent, json!({"selected": [0]})).await;
    let open = editor.next_request("window/showDocument").await;
    assert_eq!(
        open["params"]["uri"],
        "https://example.com/auth?state=abc123"
    );
    editor.respond(&open, json!({"success": true})).await;
    let response = pending.await.unwrap();
    assert_eq!(
        structured(&response["result"]),
        json!({"action": "accept"}),
        "{pin:?}: {response}"
    );
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_elicitation_over_http_modern_era() {
    python_elicitation_over_http(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_elicitation_over_http_legacy_era() {
    python_elicitation_over_http(Some("2025-11-25")).await;
}

async fn python_sampling_over_http(pin: Option<&str>) {
    let (_server, _dir, editor) =
        python_session_over_http("client_features_server.py", pin, &[], full_ui()).await;
    // Both drafts: the request (edited), then the person's answer.
    let pending = spawn_call_response(&editor, "py", "sample", json!({}));
    let request = editor.next_prompt().await;
    assert_eq!(request["params"]["kind"], "samplingRequest", "{request}");
    let text = request["params"]["text"].as_str().unwrap();
    assert!(
        text.contains("Write a haiku about Rust") && text.contains("You are a poet."),
        "{text}"
    );
    let edited = text.replace("Write a haiku about Rust", "Write a haiku about HTTP");
    editor
        .respond(&request, json!({"action": "accept", "text": edited}))
        .await;
    let draft = editor.next_prompt().await;
    assert_eq!(draft["params"]["kind"], "samplingResponse", "{draft}");
    let written = format!(
        "{}\nRequests fly, answers stream\n",
        draft["params"]["text"].as_str().unwrap().trim_end()
    );
    editor
        .respond(&draft, json!({"action": "accept", "text": written}))
        .await;
    let response = pending.await.unwrap();
    assert_eq!(
        structured(&response["result"]),
        json!({"text": "Requests fly, answers stream", "model": "manual", "stopReason": "endTurn"}),
        "{pin:?}: {response}"
    );
    // Reject: a legacy server gets error -1 (and says so); a 2026-07-28 call ends without a retry.
    let pending = spawn_call_response(&editor, "py", "sample", json!({}));
    let request = editor.next_prompt().await;
    editor.respond(&request, json!({"action": "reject"})).await;
    let response = pending.await.unwrap();
    if pin.is_some() {
        assert_eq!(response["result"]["isError"], true, "{response}");
        assert!(
            text_of(&response["result"]).contains("User rejected sampling request"),
            "{response}"
        );
    } else {
        assert_eq!(response["error"]["data"]["kind"], "refused", "{response}");
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_sampling_over_http_modern_era() {
    python_sampling_over_http(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_sampling_over_http_legacy_era() {
    python_sampling_over_http(Some("2025-11-25")).await;
}

/// `progress_steps` of the client-features fixture over HTTP: progress rides the call's SSE
/// stream in both eras.
async fn python_progress_over_http(pin: Option<&str>) -> (Peer, tempfile::TempDir, CheckedEditor) {
    let session = python_session_over_http("client_features_server.py", pin, &[], json!({})).await;
    expect_fixture_progress(&session.2, "py", "py-http").await;
    session
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_progress_and_logging_over_http_modern_era() {
    python_progress_and_logging_over_http(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_progress_and_logging_over_http_legacy_era() {
    python_progress_and_logging_over_http(Some("2025-11-25")).await;
}

/// Progress, then every log level (legacy servers log unasked; 2026-07-28 ones because the
/// sidecar's requests carry `_meta["io.modelcontextprotocol/logLevel"]`).
async fn python_progress_and_logging_over_http(pin: Option<&str>) {
    let (_server, _dir, editor) = python_progress_over_http(pin).await;
    expect_log_levels(&editor, "py").await;
    editor.shutdown_and_exit().await;
}

/// server-everything over Streamable HTTP: URL elicitation, both paths (the request, and the
/// -32042 error that the sidecar turns into consent and a retry).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_url_elicitation_over_http() {
    let port = closed_port();
    let _server = everything_over_http(port).await;
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"everything": {"url": format!("http://127.0.0.1:{port}/mcp")}}}),
            full_ui(),
        )
        .await;
    editor.wait_status(mark, "everything", "running").await;
    eventually("trigger-url-elicitation in the tool list", || async {
        tool_names(&editor, "everything")
            .await
            .contains(&"trigger-url-elicitation".to_owned())
    })
    .await;
    let url = "https://example.com/verify?x=1";
    let pending = spawn_call_response(
        &editor,
        "everything",
        "trigger-url-elicitation",
        json!({"url": url}),
    );
    let consent = editor.next_prompt().await;
    assert_eq!(consent["params"]["items"][0]["description"], url);
    editor.respond(&consent, json!({"selected": [0]})).await;
    let open = editor.next_request("window/showDocument").await;
    assert_eq!(open["params"]["uri"], url);
    editor.respond(&open, json!({"success": true})).await;
    let response = pending.await.unwrap();
    assert_eq!(
        raw_result(&response["result"])["action"],
        "accept",
        "{response}"
    );
    // Error path: -32042 → consent for the server's URL → "Retry now" → the retried call asks
    // by request; declined this time.
    let pending = spawn_call_response(
        &editor,
        "everything",
        "trigger-url-elicitation",
        json!({"url": url, "errorPath": true}),
    );
    consent_to_url_and_retry_now(&editor).await;
    editor
        .answer_prompts(&[(PICK, json!({"selected": [2]}))])
        .await;
    let response = pending.await.unwrap();
    assert_eq!(
        raw_result(&response["result"])["action"],
        "decline",
        "{response}"
    );
    editor.shutdown_and_exit().await;
}

/// server-everything over Streamable HTTP: roots follow an added folder (roots/list_changed
/// POSTed; the server's roots/list on the session's GET stream), its logs arrive, and progress
/// rides the call's SSE stream.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_roots_update_progress_and_logging_over_http() {
    let port = closed_port();
    let _server = everything_over_http(port).await;
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[(a.path(), "alpha")],
            json!({"servers": {"everything": {"url": format!("http://127.0.0.1:{port}/mcp")}}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "everything", "running").await;
    everything_roots_update_progress_and_logging(&editor, mark, (a.path(), b.path())).await;
    editor.shutdown_and_exit().await;
}
