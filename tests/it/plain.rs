//! Plain LSP in-process: an editor without the sidecar's plugin (no `experimental.mcpSidecar`)
//! answers servers' questions through `window/showMessageRequest` and form documents it opens
//! (`window/showDocument`), edits (`didOpen`, `didChange`), saves (`didSave`) and acts on with
//! code actions; what is wrong comes back as diagnostics on its lines.

use crate::support;

use std::path::PathBuf;

use serde_json::{Value, json};
use support::*;

const SHOW: &str = "window/showDocument";
const CHOICE: &str = "window/showMessageRequest";

/// What a plain editor such as Helix or eglot declares of what the sidecar uses.
fn plain_capabilities() -> Value {
    json!({"window": {"showDocument": {"support": true}, "workDoneProgress": true},
        "textDocument": {"codeAction": {}, "codeLens": {}}})
}

/// A plain editor with `servers` from its settings, each trusted through the choice it is asked
/// (each test names its servers its own way: trust decisions are kept in the state folder the
/// tests share).
async fn start(servers: Value, more: Value) -> CheckedEditor {
    let editor = in_process();
    let mut settings = json!({"servers": servers});
    if let (Some(s), Some(more)) = (settings.as_object_mut(), more.as_object()) {
        s.extend(more.clone());
    }
    let result = editor
        .initialize_plain(&[], settings, plain_capabilities())
        .await;
    assert_eq!(
        result["capabilities"]["textDocumentSync"]["change"], 2,
        "{result}"
    );
    assert_eq!(result["capabilities"]["codeActionProvider"], true);
    let commands = result["capabilities"]["executeCommandProvider"]["commands"].to_string();
    assert!(
        commands.contains("mcp-sidecar.answerDocument"),
        "{commands}"
    );
    for name in servers.as_object().unwrap().keys() {
        let ask = editor.next_request(CHOICE).await;
        let message = ask["params"]["message"].as_str().unwrap();
        assert!(message.contains("Trust the MCP server"), "{message}");
        let titles: Vec<&str> = ask["params"]["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["title"].as_str().unwrap())
            .collect();
        assert_eq!(titles[..2], ["Trust", "Don't trust"]);
        editor.respond(&ask, json!({"title": "Trust"})).await;
        // No `serverStatus` for an editor without the plugin: it would not know the method.
        eventually(&format!("{name} running"), || async {
            let servers = editor.command("mcp-sidecar.listServers", json!({})).await;
            servers
                .as_array()
                .unwrap()
                .iter()
                .any(|s| s["name"] == *name && s["state"] == "running")
        })
        .await;
    }
    assert!(
        editor
            .notifications()
            .iter()
            .all(|n| !n["method"].as_str().unwrap().starts_with("mcp-sidecar/")),
        "a plain editor gets none of the contract's notifications"
    );
    editor
}

/// Takes the sidecar's own progress for a long command: created, then begun cancellable.
async fn take_progress(editor: &TestEditor, mark: usize) -> Value {
    let create = editor.next_request("window/workDoneProgress/create").await;
    editor.respond(&create, Value::Null).await;
    let token = create["params"]["token"].clone();
    let begin = editor
        .wait_notification(mark, |n| {
            n["method"] == "$/progress" && n["params"]["token"] == token
        })
        .await;
    assert_eq!(begin["params"]["value"]["kind"], "begin");
    assert_eq!(begin["params"]["value"]["cancellable"], true);
    token
}

/// The next question document the sidecar opens: its path and text (as on disk).
async fn next_document(editor: &TestEditor) -> (String, PathBuf, String) {
    let show = editor.next_request(SHOW).await;
    assert_eq!(show["params"]["takeFocus"], true);
    editor.respond(&show, json!({"success": true})).await;
    let uri = show["params"]["uri"].as_str().unwrap().to_string();
    let path = url::Url::parse(&uri).unwrap().to_file_path().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    (uri, path, text)
}

async fn open(editor: &TestEditor, uri: &str, text: &str) {
    editor
        .notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "mcpform", "version": 1, "text": text}}),
        )
        .await;
}

async fn save(editor: &TestEditor, uri: &str, text: Option<&str>) {
    let mut params = json!({"textDocument": {"uri": uri}});
    if let Some(text) = text {
        params["text"] = json!(text);
    }
    editor.notify("textDocument/didSave", params).await;
}

/// `text` with each `key:` line's value set.
fn fill(text: &str, values: &[(&str, &str)]) -> String {
    text.lines()
        .map(|line| {
            match values
                .iter()
                .find(|(k, _)| line.starts_with(&format!("{k}:")))
            {
                Some((k, v)) => format!("{k}: {v}\n"),
                None => format!("{line}\n"),
            }
        })
        .collect()
}

fn line_of(text: &str, key: &str) -> u64 {
    text.lines()
        .position(|l| l.starts_with(&format!("{key}:")))
        .unwrap() as u64
}

/// The code actions at the top of the document `uri` (`textDocument/codeAction`).
async fn code_actions(editor: &TestEditor, uri: &str) -> Value {
    editor
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0},
                "end": {"line": 0, "character": 0}}, "context": {"diagnostics": []}}),
        )
        .await
}

/// Reads the result document the sidecar opens after a command a person reads.
async fn result_document(editor: &TestEditor) -> String {
    let show = editor.next_request(SHOW).await;
    editor.respond(&show, json!({"success": true})).await;
    let uri = show["params"]["uri"].as_str().unwrap();
    assert!(uri.ends_with("-result.md"), "{uri}");
    let path = url::Url::parse(uri).unwrap().to_file_path().unwrap();
    std::fs::read_to_string(path).unwrap()
}

const BOOKING: &[(&str, &str)] = &[
    ("name", "Ada Lovelace"),
    ("email", "ada@example.com"),
    ("travelers", "2"),
    ("budget", "1200.75"),
    ("window_seat", "no"),
    ("cabin", "Business"),
    ("meal", "vegetarian"),
    ("insurance", "full"),
    ("extras", "lounge, wifi"),
    ("departure", "2026-12-24"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_booking_form_as_a_document_with_diagnostics_until_it_is_valid() {
    let editor = start(
        json!({"booking": demo_server("both", Some("2025-11-25"))}),
        json!({}),
    )
    .await;
    editor.ignore("window/showMessage");
    let mark = editor.mark();
    let call = spawn_call(
        &editor,
        "booking",
        "book_trip",
        json!({"destination": "Oslo"}),
    );
    let token = take_progress(&editor, mark).await;
    let (uri, path, text) = next_document(&editor).await;
    assert!(path.to_string_lossy().ends_with(".mcpform"), "{path:?}");
    assert!(
        text.starts_with("# booking: Confirm your trip to Oslo"),
        "{text}"
    );
    assert!(
        text.contains("Code actions: Submit, Decline (tell booking no), Cancel."),
        "{text}"
    );
    let keys: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    let expected: Vec<&str> = BOOKING.iter().map(|(k, _)| *k).collect();
    assert_eq!(keys, expected, "{text}");

    // Edited in the editor (not saved yet): an incremental change, then saved with problems.
    open(&editor, &uri, &text).await;
    let wrong = fill(
        &text,
        &[
            ("email", "not-an-email"),
            ("travelers", "two"),
            ("cabin", "steerage"),
        ],
    );
    editor
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": &uri, "version": 2},
                "contentChanges": [{"text": &wrong}]}),
        )
        .await;
    let diagnostics_mark = editor.mark();
    save(&editor, &uri, None).await;
    let published = editor
        .wait_notification(diagnostics_mark, |n| {
            n["method"] == "textDocument/publishDiagnostics"
                && n["params"]["uri"] == uri
                && !n["params"]["diagnostics"].as_array().unwrap().is_empty()
        })
        .await;
    let lines: Vec<u64> = published["params"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["range"]["start"]["line"].as_u64().unwrap())
        .collect();
    for key in ["email", "travelers", "cabin"] {
        assert!(lines.contains(&line_of(&wrong, key)), "{key}: {published}");
    }
    // Every problem is on a field's own line, in line order.
    let field_lines: Vec<u64> = BOOKING.iter().map(|(k, _)| line_of(&wrong, k)).collect();
    assert!(lines.iter().all(|l| field_lines.contains(l)), "{published}");
    assert!(lines.windows(2).all(|w| w[0] < w[1]), "{published}");
    assert!(!call.is_finished(), "an invalid form is not sent");

    // Saved valid (the text in the notification), it is sent.
    let valid = fill(&text, BOOKING);
    save(&editor, &uri, Some(&valid)).await;
    let result = call.await.unwrap();
    assert_eq!(
        structured(&result),
        json!({"action": "accept", "content": {
            "name": "Ada Lovelace", "email": "ada@example.com", "travelers": 2, "budget": 1200.75,
            "window_seat": false, "cabin": "business", "meal": "vegetarian", "insurance": "full",
            "extras": ["lounge", "wifi"], "departure": "2026-12-24"}})
    );
    assert!(!path.exists(), "the answered form's file is gone");
    let end = editor
        .wait_notification(mark, |n| {
            n["method"] == "$/progress"
                && n["params"]["token"] == token
                && n["params"]["value"]["kind"] == "end"
        })
        .await;
    assert_eq!(end["params"]["value"]["kind"], "end");
    let shown = result_document(&editor).await;
    assert!(shown.starts_with("# booking: book_trip\n"), "{shown}");
    assert!(shown.contains("\"departure\": \"2026-12-24\""), "{shown}");
    editor.read_notifications(mark, |n| {
        n["method"] == "$/progress" || n["method"] == "textDocument/publishDiagnostics"
    });
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn decline_and_cancel_stay_apart_and_a_closed_form_is_cancelled() {
    let editor = start(
        json!({"apart": demo_server("both", Some("2026-07-28"))}),
        json!({}),
    )
    .await;
    editor.ignore("$/progress");
    editor.ignore("textDocument/publishDiagnostics");
    editor.ignore("window/showMessage");
    for (how, action) in [
        ("decline", "decline"),
        ("cancel", "cancel"),
        ("close", "cancel"),
    ] {
        let mark = editor.mark();
        let call = spawn_call(&editor, "apart", "book_trip", json!({}));
        take_progress(&editor, mark).await;
        let (uri, path, text) = next_document(&editor).await;
        open(&editor, &uri, &text).await;
        let actions = code_actions(&editor, &uri).await;
        let titles: Vec<&str> = actions["result"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["title"].as_str().unwrap())
            .collect();
        assert_eq!(titles, ["Submit", "Decline", "Cancel"]);
        let lenses = editor
            .request(
                "textDocument/codeLens",
                json!({"textDocument": {"uri": &uri}}),
            )
            .await;
        assert_eq!(lenses["result"].as_array().unwrap().len(), 3, "{lenses}");
        if how == "close" {
            editor
                .notify(
                    "textDocument/didClose",
                    json!({"textDocument": {"uri": &uri}}),
                )
                .await;
        } else {
            let index = titles
                .iter()
                .position(|t| t.eq_ignore_ascii_case(how))
                .unwrap();
            let command = &actions["result"][index]["command"];
            editor
                .command(
                    command["command"].as_str().unwrap(),
                    command["arguments"][0].clone(),
                )
                .await;
        }
        let result = call.await.unwrap();
        assert_eq!(structured(&result)["action"], action, "{how}: {result}");
        assert!(!path.exists(), "{how}: the file is gone");
        result_document(&editor).await;
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_form_never_saved_or_deleted_is_cancelled_after_the_idle_limit() {
    let editor = start(
        json!({"idle": demo_server("both", Some("2025-11-25"))}),
        json!({"elicitation": {"idleLimit": "1s"}}),
    )
    .await;
    editor.ignore("$/progress");
    editor.ignore("textDocument/publishDiagnostics");
    for delete in [false, true] {
        let mark = editor.mark();
        let call = spawn_call(&editor, "idle", "book_trip", json!({}));
        take_progress(&editor, mark).await;
        let (_, path, _) = next_document(&editor).await;
        if delete {
            std::fs::remove_file(&path).unwrap();
        }
        let result = call.await.unwrap();
        assert_eq!(structured(&result)["action"], "cancel", "{result}");
        wait_shown(&editor, mark, "left unanswered for too long").await;
        assert!(!path.exists());
        result_document(&editor).await;
    }
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_forms_at_once_are_answered_each_with_its_own() {
    let editor = start(
        json!({"twice": demo_server("both", Some("2025-11-25"))}),
        json!({}),
    )
    .await;
    editor.ignore("$/progress");
    editor.ignore("textDocument/publishDiagnostics");
    editor.ignore("window/showMessage");
    let mark = editor.mark();
    let first = spawn_call(
        &editor,
        "twice",
        "book_trip",
        json!({"destination": "Oslo"}),
    );
    take_progress(&editor, mark).await;
    let (uri_1, _, text_1) = next_document(&editor).await;
    let second = spawn_call(
        &editor,
        "twice",
        "book_trip",
        json!({"destination": "Rome"}),
    );
    take_progress(&editor, mark).await;
    let (uri_2, _, text_2) = next_document(&editor).await;
    assert_ne!(uri_1, uri_2);
    assert!(text_1.contains("Oslo") && text_2.contains("Rome"));
    let mut for_rome = BOOKING.to_vec();
    for_rome[0] = ("name", "Grace Hopper");
    save(&editor, &uri_2, Some(&fill(&text_2, &for_rome))).await;
    let rome = second.await.unwrap();
    assert_eq!(structured(&rome)["content"]["name"], "Grace Hopper");
    assert!(!first.is_finished());
    save(&editor, &uri_1, Some(&fill(&text_1, BOOKING))).await;
    let oslo = first.await.unwrap();
    assert_eq!(structured(&oslo)["content"]["name"], "Ada Lovelace");
    result_document(&editor).await;
    result_document(&editor).await;
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_description_that_looks_like_another_field_stays_a_note() {
    let server = json!({"command": "python3", "args": [fixture("python/hostile_form_server.py")]});
    let editor = start(json!({"hostile": server}), json!({})).await;
    editor.ignore("$/progress");
    editor.ignore("window/showMessage");
    let mark = editor.mark();
    let call = spawn_call(&editor, "hostile", "ask", json!({}));
    take_progress(&editor, mark).await;
    let (uri, _, text) = next_document(&editor).await;
    let fields: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(fields, ["city:", "email:"], "{text}");
    // Filled as the note suggests, the fake line is a problem, not a second email.
    let tricked = text.replace("city:", "city: Oslo\nemail: evil@example.com");
    save(&editor, &uri, Some(&tricked)).await;
    let diagnostics = editor
        .wait_notification(mark, |n| {
            n["method"] == "textDocument/publishDiagnostics" && n["params"]["uri"] == uri
        })
        .await;
    assert!(
        diagnostics.to_string().contains("given twice"),
        "{diagnostics}"
    );
    save(&editor, &uri, Some(&text.replace("city:", "city: Oslo"))).await;
    let result = call.await.unwrap();
    assert_eq!(
        structured(&result),
        json!({"action": "accept", "content": {"city": "Oslo"}})
    );
    editor.read_notifications(mark, |n| n["method"] == "textDocument/publishDiagnostics");
    result_document(&editor).await;
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_is_called_from_a_code_action_or_chosen_by_name_and_its_result_opens() {
    let editor = start(
        json!({"tools": demo_server("both", Some("2025-11-25"))}),
        json!({}),
    )
    .await;
    editor.ignore("$/progress");
    editor.ignore("textDocument/publishDiagnostics");
    // Any document of the workspace offers the running tools.
    let source = json!({"textDocument": {"uri": "file:///tmp/x.rs", "languageId": "rust",
        "version": 1, "text": "fn main() {}"}});
    editor.notify("textDocument/didOpen", source).await;
    let actions = code_actions(&editor, "file:///tmp/x.rs").await;
    let echo = actions["result"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["title"] == "MCP: call tools/echo…")
        .unwrap_or_else(|| panic!("{actions}"))
        .clone();
    let mark = editor.mark();
    let command = echo["command"].clone();
    let run = tokio::spawn({
        let editor = editor.clone();
        async move {
            editor
                .command(
                    command["command"].as_str().unwrap(),
                    command["arguments"][0].clone(),
                )
                .await
        }
    });
    // Answered at once (editors such as eglot wait for a code action's command), the call goes
    // on: its form, then its result as a document.
    assert_eq!(run.await.unwrap(), json!({"detached": true}));
    take_progress(&editor, mark).await;
    let (uri, _, text) = next_document(&editor).await;
    assert!(text.contains("Code actions: Call echo, Cancel."), "{text}");
    save(
        &editor,
        &uri,
        Some(&fill(&text, &[("text", "hello, plain")])),
    )
    .await;
    assert!(result_document(&editor).await.contains("hello, plain"));

    // By name, with nothing given: the tool is a choice, its arguments a form.
    let detached = editor.command("mcp-sidecar.chooseTool", json!({})).await;
    assert_eq!(detached, json!({"detached": true}));
    take_progress(&editor, mark).await;
    let ask = editor.next_request(CHOICE).await;
    let message = ask["params"]["message"].as_str().unwrap();
    assert!(message.starts_with("Which tool of tools?"), "{message}");
    editor.respond(&ask, json!({"title": "add"})).await;
    let (uri, _, text) = next_document(&editor).await;
    save(
        &editor,
        &uri,
        Some(&fill(&text, &[("a", "2"), ("b", "40")])),
    )
    .await;
    let shown = result_document(&editor).await;
    assert!(shown.starts_with("# MCP: a tool\n"), "{shown}");
    assert!(shown.contains("2 + 40 = 42"), "{shown}");

    // A detached call's failure is told.
    let message_mark = editor.mark();
    editor
        .command(
            "mcp-sidecar.callTool",
            json!({"server": "tools", "tool": "nope", "arguments": {}, "detach": true}),
        )
        .await;
    take_progress(&editor, message_mark).await;
    let told = wait_shown(&editor, message_mark, "callTool: ").await;
    assert!(told.to_string().contains("nope"), "{told}");

    // The setting limits where tools are offered.
    editor
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"servers": {"tools": demo_server("both", Some("2025-11-25"))},
                "plainLsp": {"toolActions": ["python"]}}}),
        )
        .await;
    let offered = || async {
        let actions = code_actions(&editor, "file:///tmp/x.rs").await;
        actions["result"].as_array().map_or(0, Vec::len)
    };
    eventually("no tool actions in a Rust file", || async {
        offered().await == 0
    })
    .await;
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_drafts_are_documents_saved_to_send_or_rejected() {
    let editor = start(
        json!({"drafts": demo_server("both", Some("2025-11-25"))}),
        json!({}),
    )
    .await;
    editor.ignore("$/progress");
    editor.ignore("window/showMessage");
    editor.ignore("textDocument/publishDiagnostics");
    let mark = editor.mark();
    let call = spawn_call(&editor, "drafts", "analyze_flights", json!({}));
    take_progress(&editor, mark).await;
    let (uri, path, request) = next_document(&editor).await;
    assert!(
        path.to_string_lossy().ends_with("-drafts-request.md"),
        "{path:?}"
    );
    assert!(request.contains("maxTokens: 400"), "{request}");
    open(&editor, &uri, &request).await;
    // Saved as edited: the request goes on; the answer is the next document.
    save(
        &editor,
        &uri,
        Some(&request.replace("maxTokens: 400", "maxTokens: 64")),
    )
    .await;
    let (uri, path, answer) = next_document(&editor).await;
    assert!(
        path.to_string_lossy().ends_with("-drafts-answer.md"),
        "{path:?}"
    );
    assert!(answer.contains("model: manual"), "{answer}");
    let written = format!("{}\nFlight 7 is the best value.\n", answer.trim_end());
    open(&editor, &uri, &answer).await;
    // Typed, not saved: the Send code action sends what the editor has.
    editor
        .notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": &uri, "version": 2}, "contentChanges": [{"text": &written}]}),
        )
        .await;
    let actions = code_actions(&editor, &uri).await;
    let send = actions["result"][0]["command"].clone();
    assert_eq!(actions["result"][0]["title"], "Send", "{actions}");
    assert_eq!(actions["result"][1]["title"], "Reject", "{actions}");
    editor
        .command(
            send["command"].as_str().unwrap(),
            send["arguments"][0].clone(),
        )
        .await;
    let result = call.await.unwrap();
    assert_eq!(
        structured(&result),
        json!({"model": "manual", "stopReason": "endTurn", "text": "Flight 7 is the best value."})
    );
    assert!(!path.exists());
    result_document(&editor).await;

    // Reject: the server hears no.
    let call = spawn_call_response(&editor, "drafts", "analyze_flights", json!({}));
    take_progress(&editor, mark).await;
    let (uri, _, _) = next_document(&editor).await;
    editor
        .command(
            "mcp-sidecar.answerDocument",
            json!({"uri": &uri, "action": "reject"}),
        )
        .await;
    let response = call.await.unwrap();
    assert!(
        response.to_string().contains("declined") || response.to_string().contains("rejected"),
        "{response}"
    );
    result_document(&editor).await;
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_persons_own_arguments_form_ends_the_call_and_its_progress() {
    let editor = start(
        json!({"own": demo_server("both", Some("2025-11-25"))}),
        json!({}),
    )
    .await;
    editor.ignore("window/showMessage");
    editor.ignore("textDocument/publishDiagnostics");
    let mark = editor.mark();
    let call = spawn_call_response(&editor, "own", "echo", Value::Null);
    let token = take_progress(&editor, mark).await;
    let (uri, path, text) = next_document(&editor).await;
    assert!(text.contains("Code actions: Call echo, Cancel."), "{text}");
    let answered = editor
        .command(
            "mcp-sidecar.answerDocument",
            json!({"uri": &uri, "action": "cancel"}),
        )
        .await;
    assert_eq!(answered, json!({"answered": true}));
    let response = call.await.unwrap();
    assert_eq!(response["error"]["data"]["kind"], "cancelled", "{response}");
    assert!(!path.exists());
    let end = |n: &Value| {
        n["method"] == "$/progress"
            && n["params"]["token"] == token
            && n["params"]["value"]["kind"] == "end"
    };
    editor.wait_notification(mark, end).await;

    // Cancelled by the editor (`$/cancelRequest`) while the form is open: its progress ends too.
    let mark = editor.mark();
    let (id, reply) = editor
        .start_request(
            "workspace/executeCommand",
            json!({"command": "mcp-sidecar.callTool", "arguments": [{"server": "own", "tool": "echo"}]}),
        )
        .await;
    let token = take_progress(&editor, mark).await;
    let (_, path, _) = next_document(&editor).await;
    editor.notify("$/cancelRequest", json!({"id": id})).await;
    let response = reply.await.unwrap();
    assert_eq!(response["error"]["code"], -32800, "{response}");
    let end = |n: &Value| {
        n["method"] == "$/progress"
            && n["params"]["token"] == token
            && n["params"]["value"]["kind"] == "end"
    };
    editor.wait_notification(mark, end).await;
    eventually("the cancelled call's form is gone", || async {
        !path.exists()
    })
    .await;
    editor.read_notifications(0, |n| n["method"] == "$/progress");
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_the_sidecar_never_offered_change_nothing() {
    let editor = in_process();
    let settings = json!({"servers": {"offered": demo_server("both", Some("2025-11-25"))}});
    editor
        .initialize_plain(&[], settings, plain_capabilities())
        .await;
    // A choice answered with a title it did not offer is no choice: the server stays untrusted.
    let ask = editor.next_request(CHOICE).await;
    editor
        .respond(&ask, json!({"title": "Trust\u{202e}", "extra": {"x": 1}}))
        .await;
    eventually("the untrusted server listed as needing trust", || async {
        let servers = editor.command("mcp-sidecar.listServers", json!({})).await;
        servers[0]["state"] == "needsTrust"
    })
    .await;
    // No document of a question, or no such action: refused, and the sidecar goes on.
    for (uri, action) in [
        ("file:///etc/passwd", "send"),
        ("not a uri", "cancel"),
        ("file:///tmp/x.mcpform", "rm -rf"),
    ] {
        let response = editor
            .command_response(
                "mcp-sidecar.answerDocument",
                json!({"uri": uri, "action": action}),
            )
            .await;
        assert_eq!(response["error"]["code"], -32602, "{uri}: {response}");
    }
    assert!(std::path::Path::new("/etc/passwd").exists());
    editor.shutdown_and_exit().await;
}
