//! No crash, ever, from input: text that once panicked the sidecar is re-asked over the real
//! paths, and a panic injected into a handler costs that one request, never the sidecar, the
//! editor's other requests or the other servers.

use crate::support;

use serde_json::{Value, json};
use support::*;

const INPUT: &str = "mcp-sidecar/inputBox";
const PICK: &str = "mcp-sidecar/quickPick";
/// A multibyte character where the seconds' last digit goes: `&s[6..8]` cut through it.
const HOSTILE: &str = "2024-01-01T00:00:0é";
const GOOD: &str = "2024-01-01T00:00:00Z";

fn python(script: &str, args: &[&str]) -> Value {
    python_fixture(script, args, 10)
}

/// The servers' names and states, from `listServers` (which must answer).
async fn states(editor: &TestEditor) -> Vec<(String, String)> {
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["state"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The date-time step: the hostile default is not prefilled, the hostile typed value is re-asked
/// with a validation message (the typed text kept), then a good value and Submit.
async fn answer_the_date_steps(editor: &TestEditor) {
    let first = editor.next_prompt().await;
    assert_eq!(first["method"], INPUT, "{first:#}");
    assert!(
        first["params"].get("value").is_none_or(Value::is_null),
        "a default that is not a date-time is not prefilled: {first:#}"
    );
    editor.respond(&first, json!({"value": HOSTILE})).await;
    let again = editor.next_prompt().await;
    assert_eq!(again["method"], INPUT, "{again:#}");
    let why = again["params"]["validationMessage"].as_str().unwrap_or("");
    assert!(why.contains("YYYY-MM-DDTHH:MM:SSZ"), "{again:#}");
    assert_eq!(again["params"]["value"], HOSTILE, "{again:#}");
    editor.respond(&again, json!({"value": GOOD})).await;
    editor
        .answer_prompts(&[(PICK, json!({"selected": [0]}))])
        .await;
}

/// (a) a tool's `inputSchema` asked by `callTool` without arguments, and (b) a form asked by the
/// server (2026-07-28 `input_required` and legacy `elicitation/create`), each with a date-time
/// default and a typed value whose multibyte character once panicked the format check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multibyte_date_times_are_asked_again_not_a_crash() {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "legacy": python("bad/hostile_dates.py", &["--era", "legacy"]),
                "modern": python("bad/hostile_dates.py", &["--era", "modern"]),
            }}),
            full_ui(),
        )
        .await;
    for server in ["legacy", "modern"] {
        editor.wait_status(mark, server, "running").await;
    }
    for server in ["legacy", "modern"] {
        // (a) The tool's own arguments.
        let call = spawn_call(&editor, server, "when", Value::Null);
        answer_the_date_steps(&editor).await;
        let result = call.await.unwrap();
        assert_eq!(
            structured(&result),
            json!({"arguments": {"at": GOOD}}),
            "{server}"
        );
        // (b) The server's question.
        let call = spawn_call(&editor, server, "ask_when", json!({}));
        answer_the_date_steps(&editor).await;
        let result = call.await.unwrap();
        let response = &structured(&result)["response"];
        let answer = if server == "legacy" {
            &response["result"]
        } else {
            response
        };
        assert_eq!(
            *answer,
            json!({"action": "accept", "content": {"at": GOOD}}),
            "{server}: {result}"
        );
        assert_eq!(
            states(&editor).await,
            [
                ("legacy".to_string(), "running".to_string()),
                ("modern".to_string(), "running".to_string())
            ]
        );
    }
    editor.shutdown_and_exit().await;
}

/// The built binary with panics injected (`MCP_SIDECAR_TEST_PANIC`, test-only) into an LSP
/// command handler, two servers' elicitation answers (one per era) and one server's supervisor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_injected_panic_costs_one_request_not_the_sidecar() {
    let config_home = tempfile::tempdir().unwrap();
    let (mut child, editor) = spawn_editor(
        sidecar_command()
            .env("XDG_CONFIG_HOME", config_home.path())
            .env(
                "MCP_SIDECAR_TEST_PANIC",
                "command:mcp-sidecar.listTools,elicitation:legacy,elicitation:modern,supervisor:doomed",
            ),
    );
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "legacy": demo_server("legacy", None),
                "modern": demo_server("modern", None),
                "ok": demo_server("both", None),
                "doomed": demo_server("both", None),
            }}),
            full_ui(),
        )
        .await;
    for server in ["legacy", "modern", "ok"] {
        editor.wait_status(mark, server, "running").await;
    }

    // A server's supervisor: that server fails with a message, the others run on.
    let doomed = editor.wait_status(mark, "doomed", "failed").await;
    let message = doomed["message"].as_str().unwrap();
    assert!(
        message.contains("internal error in mcp-sidecar")
            && message.contains("src/mcp/servers/supervisor.rs"),
        "{doomed}"
    );
    let doomed_told = "MCP server \"doomed\" stopped: an internal error in mcp-sidecar";
    wait_shown(&editor, mark, doomed_told).await;

    // An LSP command handler: that request gets -32603 naming the command and the place.
    let response = editor
        .command_response("mcp-sidecar.listTools", json!({"server": "ok"}))
        .await;
    assert_eq!(response["error"]["code"], -32603, "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("mcp-sidecar.listTools failed")
            && message.contains("panicked at src/lsp/backend.rs"),
        "{response}"
    );
    assert!(
        !message.contains("injected"),
        "the panic's own message stays out: {response}"
    );
    let listed = states(&editor).await;
    assert_eq!(listed.len(), 4, "{listed:?}");

    // A legacy server's elicitation: the server is answered with an error (it does not wait
    // forever), so its tool ends and says so; the log names the server.
    let logs = editor.mark();
    let result = call(&editor, "legacy", "book_trip", json!({})).await;
    assert_eq!(result["isError"], true, "{result}");
    let text = text_of(&result);
    assert!(
        text.contains("internal error in mcp-sidecar") && text.contains("-32603"),
        "{text}"
    );
    wait_log(
        &editor,
        logs,
        "answering elicitation/create from \"legacy\" failed",
    )
    .await;

    // A 2026-07-28 server's question: the call ends with an error naming the server.
    let response = editor
        .command_response(
            "mcp-sidecar.callTool",
            json!({"server": "modern", "tool": "book_trip", "arguments": {}}),
        )
        .await;
    assert_eq!(response["error"]["data"]["kind"], "refused", "{response}");
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("from \"modern\" failed") && message.contains("internal error"),
        "{response}"
    );

    // Everything else still works: the other servers' calls, listServers, a restart of the
    // panicked slot (it panics again: it still answers), and a clean shutdown.
    for server in ["ok", "legacy", "modern"] {
        let sum = call(&editor, server, "add", json!({"a": 40, "b": 2})).await;
        assert_eq!(structured(&sum), json!({"sum": 42}), "{server}");
    }
    let listed = states(&editor).await;
    for (name, state) in &listed {
        let expected = if name == "doomed" {
            "failed"
        } else {
            "running"
        };
        assert_eq!(state, expected, "{listed:?}");
    }
    let again = editor.mark();
    editor
        .command("mcp-sidecar.restartServer", json!({"server": "doomed"}))
        .await;
    editor.wait_status(again, "doomed", "running").await;
    editor.wait_status(again, "doomed", "failed").await;
    wait_shown(&editor, again, doomed_told).await;
    editor.shutdown_and_exit().await;
    let status = tokio::time::timeout(WAIT, child.wait())
        .await
        .expect("the sidecar exits after exit")
        .unwrap();
    assert!(status.success(), "{status}");
}
