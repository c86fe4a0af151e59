//! MCP Apps through the loopback page, in-process, with the demo server's clock view in both
//! eras: the tool is marked, its view-only tool hidden and refused, the call opens the page, the
//! page's paths need the view's token, its own host and origin, the app runs under its CSP, its
//! messages reach its server, and a closed view is gone.

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{demo_server, in_process};

/// One HTTP/1.1 request to 127.0.0.1: the status, the headers (lower-cased) and the body.
async fn http(
    method: &str,
    url: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = tokio::net::TcpStream::connect(authority).await.unwrap();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !extra.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {authority}\r\n"));
    }
    for (k, v) in extra {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, head.to_ascii_lowercase(), body.to_string())
}

fn header<'a>(head: &'a str, name: &str) -> &'a str {
    head.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_view_opens_in_the_browser_through_the_loopback_page() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "legacy": demo_server("both", Some("2025-11-25")),
                "modern": demo_server("both", Some("2026-07-28")),
            }}),
            json!({}),
        )
        .await;
    for server in ["legacy", "modern"] {
        editor.wait_status(mark, server, "running").await;
        let tools = editor
            .command("mcp-sidecar.listTools", json!({"server": server}))
            .await;
        let row = |name: &str| {
            tools
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .cloned()
        };
        assert_eq!(
            row("clock").unwrap()["ui"],
            json!({"resourceUri": "ui://demo/clock.html"})
        );
        assert!(row("add").unwrap().get("ui").is_none());
        assert!(
            row("clock_tick").is_none(),
            "a tool for views only is not listed"
        );
        let refused = editor
            .command_response(
                "mcp-sidecar.callTool",
                json!({"server": server, "tool": "clock_tick", "arguments": {}}),
            )
            .await;
        assert_eq!(
            refused["error"]["data"]["kind"], "refused",
            "{server}: {refused}"
        );

        let result = editor
            .command(
                "mcp-sidecar.callTool",
                json!({"server": server, "tool": "clock", "arguments": {}}),
            )
            .await;
        assert!(result["structuredContent"]["time"].is_string(), "{result}");
        let open = editor.next_request("window/showDocument").await;
        assert_eq!(open["params"]["external"], true);
        let url = open["params"]["uri"].as_str().unwrap().to_string();
        editor.respond(&open, json!({"success": true})).await;
        let token = url.rsplit('/').next().unwrap();
        assert!(
            url.starts_with("http://127.0.0.1:") && token.len() == 64,
            "{url}"
        );
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        let origin = url[..url.find("/view/").unwrap()].to_string();

        // The page, under its own policy; nothing without the token, its host or its origin.
        let (status, head, page) = http("GET", &url, &[], "").await;
        assert_eq!(status, 200);
        assert!(page.contains(&format!("/view/{token}/host.js")));
        let csp = header(&head, "content-security-policy");
        assert!(
            csp.contains("script-src 'self'") && csp.contains("frame-src http://127.0.0.1:"),
            "{csp}"
        );
        assert_eq!(header(&head, "referrer-policy"), "no-referrer");
        let wrong = format!("{origin}/view/{}", "0".repeat(64));
        assert_eq!(http("GET", &wrong, &[], "").await.0, 404);
        assert_eq!(http("GET", &format!("{wrong}/data"), &[], "").await.0, 404);
        assert_eq!(
            http("GET", &url, &[("Origin", "http://evil.example")], "")
                .await
                .0,
            403
        );
        assert_eq!(
            http("GET", &url, &[("Host", "evil.example")], "").await.0,
            403
        );
        let (status, _, js) = http("GET", &format!("{url}/host.js"), &[], "").await;
        assert!(status == 200 && js.contains("McpSidecarHost"));

        // What the page reads, and the app on its own origin, under the view's policy.
        let (status, _, data) = http("GET", &format!("{url}/data"), &[], "").await;
        assert_eq!(status, 200);
        let data: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(data["server"], server);
        assert_eq!(data["tool"]["name"], "clock");
        assert_eq!(data["result"], result);
        let app_url = data["appUrl"].as_str().unwrap();
        assert!(
            !app_url.starts_with(&origin),
            "the app has an origin of its own: {app_url}"
        );
        let (status, head, html) = http("GET", app_url, &[], "").await;
        assert_eq!(status, 200);
        assert!(html.contains("clock_tick"));
        let csp = header(&head, "content-security-policy");
        assert!(
            csp.contains("connect-src 'none'") && csp.contains("object-src 'none'"),
            "{csp}"
        );
        assert!(!csp.contains("unsafe-eval"));
        // The app of one server is not served by another's listener, nor the page's.
        assert_eq!(
            http("GET", &format!("{origin}/app/{token}"), &[], "")
                .await
                .0,
            404
        );

        // The app's messages: its view-only tool works, the person's side is told nothing.
        let rpc = format!("{url}/rpc");
        let own = [("Origin", origin.as_str())];
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "clock_tick"}});
        let (status, _, answer) = http("POST", &rpc, &own, &call.to_string()).await;
        assert_eq!(status, 200);
        let answer: Value = serde_json::from_str(&answer).unwrap();
        assert!(
            answer["result"]["structuredContent"]["time"].is_string(),
            "{answer}"
        );
        assert_eq!(
            http(
                "POST",
                &rpc,
                &[("Origin", "http://127.0.0.1:1")],
                &call.to_string()
            )
            .await
            .0,
            403
        );
        let listed = editor.command("mcp-sidecar.listApps", json!({})).await;
        let view = listed.as_array().unwrap().last().unwrap().clone();
        assert_eq!(view["initialized"], false);
        assert_eq!(view["url"], url.as_str());
        let initialized = json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"});
        assert_eq!(
            http("POST", &rpc, &own, &initialized.to_string()).await.0,
            204
        );
        let listed = editor.command("mcp-sidecar.listApps", json!({})).await;
        assert_eq!(
            listed.as_array().unwrap().last().unwrap()["initialized"],
            true
        );

        // Closed: the editor is told, and the token opens nothing any more.
        let mark = editor.mark();
        editor
            .command("mcp-sidecar.closeApp", json!({"view": view["view"]}))
            .await;
        let closed = editor
            .wait_notification(mark, |n| n["method"] == "mcp-sidecar/closeApp")
            .await;
        assert_eq!(closed["params"]["view"], view["view"]);
        assert_eq!(http("GET", &url, &[], "").await.0, 404);
        assert_eq!(http("GET", app_url, &[], "").await.0, 404);
    }
    let listed = editor.command("mcp-sidecar.listApps", json!({})).await;
    assert_eq!(listed, json!([]));
    editor.shutdown_and_exit().await;
}
