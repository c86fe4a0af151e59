//! Elicitation end to end in-process: a scripted editor answers the sidecar's prompts for real
//! servers' questions, and the tests assert what the server received.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::*;

const INPUT: &str = "mcp-sidecar/inputBox";
const PICK: &str = "mcp-sidecar/quickPick";

async fn start(servers: Value) -> CheckedEditor {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(&[], json!({"servers": servers}), full_ui())
        .await;
    for name in servers.as_object().unwrap().keys() {
        editor.wait_status(mark, name, "running").await;
    }
    editor
}

/// The answers to the demo's `book_trip` form (also used by the gateway's tests).
pub(crate) fn booking_script() -> Vec<(&'static str, Value)> {
    vec![
        (INPUT, json!({"value": "Ada Lovelace"})),
        (INPUT, json!({"value": "ada@example.com"})),
        (INPUT, json!({"value": "2"})),
        (INPUT, json!({"value": "1200.75"})),
        (PICK, json!({"selected": [1]})),
        (PICK, json!({"selected": [2]})),
        (PICK, json!({"selected": [1]})),
        (PICK, json!({"selected": [2]})),
        (PICK, json!({"selected": [0, 1]})),
        (INPUT, json!({"value": "2026-12-24"})),
        (PICK, json!({"selected": [0]})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_booking_form_in_both_eras() {
    let editor = start(json!({
        "legacy": demo_server("both", Some("2025-11-25")),
        "modern": demo_server("both", Some("2026-07-28")),
    }))
    .await;
    for server in ["legacy", "modern"] {
        let call = spawn_call(&editor, server, "book_trip", json!({"destination": "Oslo"}));
        let shown = editor.answer_prompts(&booking_script()).await;
        let result = call.await.unwrap();
        assert_eq!(
            structured(&result),
            json!({"action": "accept", "content": {
                "name": "Ada Lovelace", "email": "ada@example.com", "travelers": 2, "budget": 1200.75,
                "window_seat": false, "cabin": "business", "meal": "vegetarian", "insurance": "full",
                "extras": ["lounge", "wifi"], "departure": "2026-12-24"}}),
            "{server}"
        );
        let first = &shown[0]["params"];
        assert_eq!(first["server"], server);
        assert!(
            first["title"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{server}: Confirm your trip to Oslo")),
            "{first}"
        );
        assert_eq!(first["totalSteps"], 10);
        assert_eq!(
            shown[5]["params"]["items"][2]["label"], "Business",
            "titles shown, consts sent"
        );
        assert_eq!(
            shown[7]["params"]["items"][2]["label"], "Full cover",
            "legacy enumNames shown"
        );
        assert_eq!(
            shown[2]["params"]["value"], "1",
            "integer default prefilled"
        );
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_and_cancel_reach_the_server_as_such() {
    let editor = start(
        json!({"modern": demo_server("modern", None), "legacy": demo_server("legacy", None)}),
    )
    .await;
    for server in ["legacy", "modern"] {
        let call = |editor: std::sync::Arc<TestEditor>| {
            spawn_call(&editor, server, "book_trip", json!({}))
        };
        // Escape on the first prompt: cancel.
        let pending = call(editor.clone());
        editor.answer_prompts(&[(INPUT, Value::Null)]).await;
        assert_eq!(
            structured(&pending.await.unwrap()),
            json!({"action": "cancel"}),
            "{server}"
        );
        // Fill in, then Decline on the review.
        let pending = call(editor.clone());
        let mut script = booking_script();
        script.pop();
        script.push((PICK, json!({"selected": [11]})));
        let shown = editor.answer_prompts(&script).await;
        assert_eq!(
            shown.last().unwrap()["params"]["items"][11]["label"],
            "Decline"
        );
        assert_eq!(
            structured(&pending.await.unwrap()),
            json!({"action": "decline"}),
            "{server}"
        );
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn url_mode_asks_consent_then_opens_externally() {
    let editor = start(
        json!({"legacy": demo_server("legacy", None), "modern": demo_server("modern", None)}),
    )
    .await;
    for server in ["legacy", "modern"] {
        let call = spawn_call(&editor, server, "login", json!({}));
        let mark = editor.mark();
        let consent = editor.next_prompt().await;
        assert_eq!(consent["method"], PICK);
        let url = consent["params"]["items"][0]["description"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            url.starts_with("https://example.com/login?session="),
            "{consent}"
        );
        assert!(
            consent["params"]["items"][0]["label"]
                .as_str()
                .unwrap()
                .contains("example.com")
        );
        // Copy first: the clipboard notification, and the consent prompt again.
        editor.respond(&consent, json!({"selected": [1]})).await;
        let copied = editor
            .wait_notification(mark, |n| n["method"] == "mcp-sidecar/clipboard")
            .await;
        assert_eq!(copied["params"]["text"], url.as_str());
        let again = editor.next_prompt().await;
        editor.respond(&again, json!({"selected": [0]})).await;
        let open = editor.next_request("window/showDocument").await;
        assert_eq!(open["params"]["uri"], url.as_str());
        assert_eq!(open["params"]["external"], true);
        editor.respond(&open, json!({"success": true})).await;
        let result = call.await.unwrap();
        assert_eq!(
            structured(&result)["action"],
            "accept",
            "{server}: {result}"
        );
    }
    editor.shutdown_and_exit().await;
}

/// Five questions pending at once (real elicitations): the editor keeps being served, a cancelled
/// call closes its prompt, and the others still end properly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pending_elicitations_never_wedge_the_editor() {
    let editor = start(json!({"demo": demo_server("legacy", None)})).await;
    let mut calls = Vec::new();
    for _ in 0..5 {
        calls.push(
            editor
                .start_request(
                    "workspace/executeCommand",
                    json!({"command": "mcp-sidecar.callTool",
                    "arguments": [{"server": "demo", "tool": "book_trip", "arguments": {}}]}),
                )
                .await,
        );
    }
    let mut prompts = Vec::new();
    for _ in 0..5 {
        prompts.push(editor.next_prompt().await);
    }
    let started = std::time::Instant::now();
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert_eq!(listed[0]["state"], "running");
    assert!(started.elapsed() < Duration::from_secs(1));
    // Cancel one call: the server is told, cancels its question, and the prompt closes.
    let (id, rx) = calls.remove(0);
    let mark = editor.mark();
    editor.notify("$/cancelRequest", json!({"id": id})).await;
    let cancelled = tokio::time::timeout(WAIT, rx).await.unwrap().unwrap();
    assert_eq!(cancelled["error"]["code"], -32800);
    let closed = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/cancelPrompt")
        .await;
    let closed_id = closed["params"]["id"].clone();
    assert!(prompts.iter().any(|p| p["params"]["id"] == closed_id));
    // Escape on the others: each call ends with "cancel".
    for prompt in prompts.iter().filter(|p| p["params"]["id"] != closed_id) {
        editor.respond(prompt, Value::Null).await;
    }
    for (_, rx) in calls {
        let response = tokio::time::timeout(WAIT, rx).await.unwrap().unwrap();
        assert_eq!(structured(&response["result"]), json!({"action": "cancel"}));
    }
    editor.shutdown_and_exit().await;
}

fn python(script: &str, args: &[&str]) -> Value {
    python_fixture(script, args, 10)
}

/// A form outside the spec's subset: the person is told, and the server gets -32602 naming the
/// property (legacy) or a decline (2026-07-28). Nothing hangs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_forms_are_refused_clearly_in_both_eras() {
    let editor = start(json!({
        "legacy": python("bad/odd_forms.py", &["--era", "legacy"]),
        "modern": python("bad/odd_forms.py", &["--era", "modern"]),
    }))
    .await;
    for server in ["legacy", "modern"] {
        let mark = editor.mark();
        let result = editor
            .command(
                "mcp-sidecar.callTool",
                json!({"server": server, "tool": "nested", "arguments": {}}),
            )
            .await;
        let response = structured(&result)["response"].clone();
        if server == "legacy" {
            assert_eq!(response["error"]["code"], -32602, "{response}");
            assert!(
                response["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("property \"address\""),
                "{response}"
            );
        } else {
            assert_eq!(response, json!({"action": "decline"}));
        }
        let told = editor
            .wait_notification(mark, |n| n["method"] == "window/showMessage")
            .await;
        assert!(
            told["params"]["message"]
                .as_str()
                .unwrap()
                .contains("cannot show"),
            "{told}"
        );
    }
    editor.shutdown_and_exit().await;
}

/// `callTool` without arguments asks for them with the tool's own schema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_tool_arguments_are_asked_with_the_same_flow() {
    let editor = start(json!({"demo": demo_server("both", None)})).await;
    let call = spawn_call(&editor, "demo", "add", Value::Null);
    let shown = editor
        .answer_prompts(&[
            (INPUT, json!({"value": "x"})),
            (INPUT, json!({"value": "40"})),
            (INPUT, json!({"value": "2.5"})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    assert!(
        shown[1]["params"]["validationMessage"]
            .as_str()
            .unwrap()
            .contains("not a number")
    );
    let result = call.await.unwrap();
    assert_eq!(structured(&result), json!({"sum": 42.5}));
    // The review's choices are the person's (no Decline telling demo no); Cancel there does
    // not call the tool.
    let review = &shown[3]["params"]["items"];
    let labels: Vec<&str> = review
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        ["Call add", "Change a", "Change b", "Cancel"],
        "{review}"
    );
    let call = spawn_call_response(&editor, "demo", "echo", Value::Null);
    editor
        .answer_prompts(&[
            (INPUT, json!({"value": "hi"})),
            (PICK, json!({"selected": [2]})),
        ])
        .await;
    let cancelled = call.await.unwrap();
    assert_eq!(
        cancelled["error"]["data"]["kind"], "cancelled",
        "{cancelled}"
    );
    editor.shutdown_and_exit().await;
}

/// -32042, then `notifications/elicitation/complete` from the server: the call is retried without
/// waiting for "Retry now", whose prompt is closed; an unknown completion id is ignored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completion_notification_retries_the_blocked_call() {
    let editor = start(json!({"legacy": python("bad/odd_forms.py", &["--era", "legacy"])})).await;
    let call = spawn_call(&editor, "legacy", "needs_browser", json!({}));
    editor
        .answer_prompts(&[(PICK, json!({"selected": [0]}))])
        .await;
    let open = editor.next_request("window/showDocument").await;
    assert_eq!(open["params"]["uri"], "https://example.com/consent");
    let mark = editor.mark();
    editor.respond(&open, json!({"success": true})).await;
    let retry = editor.next_prompt().await;
    assert_eq!(retry["params"]["items"][0]["label"], "Retry now");
    // Nobody answers: the server's completion notification retries the call.
    let result = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
    assert_eq!(result["content"][0]["text"], "done after the browser step");
    let closed = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/cancelPrompt")
        .await;
    assert_eq!(closed["params"]["id"], retry["params"]["id"]);
    let told = wait_shown(&editor, mark, "the step in the browser is done; retrying").await;
    assert!(
        told["message"].as_str().unwrap().starts_with("legacy: "),
        "{told}"
    );
    editor.shutdown_and_exit().await;
}

/// A listing's timeout counts only the server's own time too: the server asks a question inside
/// the `tools/list` the sidecar sends once it is running (the tool count's prefetch), the answer
/// comes later than the server's timeout, and the listing still fills the cache.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_inside_a_listing_does_not_time_it_out() {
    let mut server = python("bad/asks_while_listing.py", &[]);
    server["timeout"] = json!(0.5);
    let editor = start(json!({"asker": server})).await;
    let question = editor.next_prompt().await;
    // The behaviour under test: the answer comes later than the server's timeout.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    editor.respond(&question, Value::Null).await;
    eventually("the listing answered after the question", || async {
        let servers = editor.command("mcp-sidecar.listServers", json!({})).await;
        servers[0]["toolCount"] == 1
    })
    .await;
    // From the cache: the server is not asked again.
    let tools = editor
        .command("mcp-sidecar.listTools", json!({"server": "asker"}))
        .await;
    assert_eq!(tools[0]["name"], "ping_tool", "{tools}");
    assert_eq!(editor.prompts_seen(), 1);
    editor.shutdown_and_exit().await;
    // A start slower than the 0.5 s timeout (a loaded machine) fails and is retried: not what
    // this test is about.
    let slow_start = "did not complete the MCP handshake (server/discover or initialize) within";
    editor.read_notifications(0, |n| {
        n["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains(slow_start))
    });
}

/// The server's timeout counts only its own time: a slow person does not time the call out; a
/// prompt abandoned past the idle limit is closed and answered "cancel".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn human_time_does_not_count_but_abandoned_prompts_end() {
    let mut demo = demo_server("legacy", None);
    demo["timeout"] = json!(0.5);
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {"demo": demo}, "elicitation": {"idleLimit": "2s"}}),
            full_ui(),
        )
        .await;
    editor.wait_status(mark, "demo", "running").await;
    let call =
        |editor: std::sync::Arc<TestEditor>| spawn_call(&editor, "demo", "book_trip", json!({}));
    let pending = call(editor.clone());
    let first = editor.next_prompt().await;
    // The behaviour under test: the answer comes later than the server's timeout.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    editor.respond(&first, Value::Null).await;
    assert_eq!(
        structured(&pending.await.unwrap()),
        json!({"action": "cancel"})
    );
    // Now nobody answers at all: the idle limit closes the prompt.
    let pending = call(editor.clone());
    let mark = editor.mark();
    let first = editor.next_prompt().await;
    let closed = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/cancelPrompt")
        .await;
    assert_eq!(closed["params"]["id"], first["params"]["id"]);
    wait_shown(&editor, mark, "left unanswered for too long and was closed").await;
    assert_eq!(
        structured(&pending.await.unwrap()),
        json!({"action": "cancel"})
    );
    editor.shutdown_and_exit().await;
}

/// Whether `text` holds anything that could change what the rest of its line appears to say.
fn deceives(text: &str) -> bool {
    text.chars().any(|c| {
        c.is_control() && c != '\n'
            || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
    })
}

/// Every string in `value`, with where it is.
fn strings(value: &Value, at: String, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.push((at, s.clone())),
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                strings(v, format!("{at}[{i}]"), out);
            }
        }
        Value::Object(members) => {
            for (k, v) in members {
                strings(v, format!("{at}.{k}"), out);
            }
        }
        _ => {}
    }
}

/// Asserts no text in `value` can deceive, except at the paths `exact` names (values sent back).
fn assert_clean(value: &Value, exact: &[&str]) {
    let mut all = Vec::new();
    strings(value, String::new(), &mut all);
    for (at, text) in all {
        if exact.iter().any(|e| at.ends_with(e)) {
            continue;
        }
        assert!(!deceives(&text), "{at}: {text:?} in {value}");
    }
}

/// A server's names, titles, messages and URLs made to deceive (ANSI escapes, U+202E, NUL, line
/// breaks, a 5 000-character URL): what the editor shows is cleaned, what it sends back is exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deceptive_text_reaches_the_editor_cleaned_and_names_go_back_exact() {
    let bidi = "pay\u{202E}fdp.exe";
    let odd = "evil\u{202E}\u{1B}[2J\nname";
    let mark = 0;
    let editor = start(json!({
        "deceptive": python("bad/deceptive.py", &[]),
        odd: python("bad/deceptive.py", &[]),
    }))
    .await;
    // A server's name from the settings: exact as the key, cleaned as its label.
    let status = editor
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/serverStatus" && n["params"]["name"] == odd
        })
        .await;
    assert_clean(&status, &[".name"]);
    assert_eq!(status["params"]["label"], "evil⟨U+202E⟩ name", "{status}");

    // The rows: names kept exact with a cleaned label beside them; the rest cleaned.
    let tools = editor
        .command("mcp-sidecar.listTools", json!({"server": "deceptive"}))
        .await;
    assert_clean(&tools, &[".name", ".inputSchema"]);
    let row = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == bidi)
        .unwrap_or_else(|| panic!("{tools}"));
    assert_eq!(row["label"], "pay⟨U+202E⟩fdp.exe", "{row}");
    assert_eq!(row["title"], "Safe hidden title", "{row}");
    let servers = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert_clean(&servers, &[".name"]);
    let row = servers
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "deceptive")
        .unwrap();
    assert_eq!(row["serverInfo"]["name"], "deceptive⟨U+202E⟩", "{servers}");
    let call = spawn_call(&editor, odd, "ask", json!({}));
    let asked = editor.next_prompt().await;
    assert_clean(&asked["params"], &[".value"]);
    assert_eq!(asked["params"]["server"], "evil⟨U+202E⟩ name", "{asked}");
    editor.respond(&asked, Value::Null).await;
    call.await.unwrap();
    // The exact name goes back and calls the tool.
    let mark = editor.mark();
    let called = editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": "deceptive", "tool": bidi, "arguments": {}}),
        )
        .await;
    assert_eq!(called["content"][0]["text"], "called", "{called}");
    let log = editor
        .wait_notification(mark, |n| {
            n["method"] == "window/logMessage"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("verified"))
        })
        .await;
    assert_clean(&log, &[]);

    // An error quoting the server: its message is cleaned, its data kept.
    let failed = editor
        .command_response(
            "mcp-sidecar.callTool",
            json!({"server": "deceptive", "tool": "nope\u{202E}\u{1B}[2J", "arguments": {}}),
        )
        .await;
    let message = failed["error"]["message"].as_str().unwrap();
    assert!(message.contains("nope⟨U+202E⟩"), "{failed}");
    assert!(!deceives(message), "{failed}");

    // A form: its prompts are cleaned; the default the person accepts goes back as sent.
    let call = spawn_call(&editor, "deceptive", "ask", json!({}));
    let first = editor.next_prompt().await;
    assert_clean(&first["params"], &[".value"]);
    let title = first["params"]["title"].as_str().unwrap();
    assert!(
        title.contains("mcp-sidecar: verified line two⟨U+202E⟩⟨U+0000⟩"),
        "{title}"
    );
    assert_eq!(first["params"]["value"], "x\u{202E}y", "{first}");
    editor.respond(&first, json!({"value": "x\u{202E}y"})).await;
    let review = editor.next_prompt().await;
    assert_clean(&review["params"], &[]);
    editor.respond(&review, json!({"selected": [0]})).await;
    let answer = structured(&call.await.unwrap());
    assert_eq!(
        answer["response"]["result"]["content"]["code"], "x\u{202E}y",
        "{answer}"
    );

    // A URL that is not a web address: declined, nothing asked or opened, the message cleaned.
    let mark = editor.mark();
    let answer = structured(
        &editor
            .command(
                "mcp-sidecar.callTool",
                json!({"server": "deceptive", "tool": "open_bad", "arguments": {}}),
            )
            .await,
    );
    assert_eq!(
        answer["response"]["result"]["action"], "decline",
        "{answer}"
    );
    let told = editor
        .wait_notification(mark, |n| n["method"] == "window/showMessage")
        .await;
    assert_clean(&told, &[]);
    assert!(
        told["params"]["message"]
            .as_str()
            .unwrap()
            .contains("not a web address"),
        "{told}"
    );

    // A long URL: shown once, cut; copied and opened whole.
    let call = spawn_call(&editor, "deceptive", "open_long", json!({}));
    let consent = editor.next_prompt().await;
    let text = consent["params"].to_string();
    assert_eq!(
        text.matches("https://example.com/consent").count(),
        1,
        "{text}"
    );
    assert!(text.len() < 1500, "{}", text.len());
    editor.respond(&consent, json!({"selected": [0]})).await;
    let open = editor.next_request("window/showDocument").await;
    assert_eq!(
        open["params"]["uri"].as_str().unwrap().len(),
        "https://example.com/consent?".len() + 5000
    );
    editor.respond(&open, json!({"success": true})).await;
    let answer = structured(&call.await.unwrap());
    assert_eq!(answer["response"]["result"]["action"], "accept", "{answer}");
    editor.shutdown_and_exit().await;
}
