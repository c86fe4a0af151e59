//! Resources, prompts and completions through the editor contract, against real servers:
//! server-everything over stdio and Streamable HTTP (its static documents, templates, prompts
//! with arguments, completions and subscriptions), the Python SDK fixture
//! `fixtures/python/resources_server.py` in both eras (lists longer than one page, a read and a
//! prompt that ask the person first, subscriptions and list changes, bad input) and the demo
//! server (no resources capability). Ignored by a plain `cargo test` where they need peers; the
//! interop tier runs them.

use crate::support;

use std::sync::Arc;

use serde_json::{Value, json};
use support::*;

const INPUT: &str = "mcp-sidecar/inputBox";
const PICK: &str = "mcp-sidecar/quickPick";

async fn with_server(name: &str, definition: Value, settings: Value) -> CheckedEditor {
    let editor = in_process();
    let mark = editor.mark();
    let mut all = settings;
    all["servers"] = json!({ name: definition });
    editor.initialize(&[], all, full_ui()).await;
    editor.wait_status(mark, name, "running").await;
    editor
}

async fn everything() -> CheckedEditor {
    let def = json!({"command": "node", "args": [peer("MCP_EVERYTHING_JS"), "stdio"]});
    with_server("everything", def, json!({})).await
}

/// server-everything over Streamable HTTP; the peer lives as long as the returned guard.
async fn everything_http() -> (CheckedEditor, crate::http::Peer) {
    let port = crate::support::http::closed_port();
    let peer = crate::http::everything_over_http(port).await;
    let def = json!({"url": format!("http://127.0.0.1:{port}/mcp")});
    (with_server("everything", def, json!({})).await, peer)
}

fn rows(value: &Value) -> &Vec<Value> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not rows: {value}"))
}

/// Every row of a listing, checked to be unique by `key`.
fn unique<'a>(listed: &'a Value, key: &str) -> Vec<&'a str> {
    let keys: Vec<&str> = rows(listed)
        .iter()
        .map(|r| r[key].as_str().unwrap())
        .collect();
    let set: std::collections::BTreeSet<&str> = keys.iter().copied().collect();
    assert_eq!(set.len(), keys.len(), "a row came twice: {keys:?}");
    keys
}

async fn everything_resources_templates_and_reads(editor: &Arc<TestEditor>) {
    let listed = editor.command("mcp-sidecar.listResources", json!({})).await;
    // Its resources come in one page; every one of them, once.
    assert!(unique(&listed, "uri").len() > 2, "{listed}");
    let documents: Vec<&Value> = rows(&listed)
        .iter()
        .filter(|r| r["server"] == "everything")
        .collect();
    assert!(!documents.is_empty(), "{listed}");
    let doc = documents
        .iter()
        .find(|r| r["mimeType"] == "text/markdown")
        .unwrap_or_else(|| panic!("a markdown document: {listed}"));
    let uri = doc["uri"].as_str().unwrap();
    assert!(uri.starts_with("demo://resource/static/document/"), "{uri}");
    let read = editor
        .command(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    let content = &read["contents"][0];
    assert_eq!(content["uri"], uri, "{read}");
    assert!(
        !content["text"].as_str().unwrap_or_default().is_empty(),
        "{read}"
    );

    let templates = editor
        .command(
            "mcp-sidecar.listResourceTemplates",
            json!({"server": "everything"}),
        )
        .await;
    let text = rows(&templates)
        .iter()
        .find(|t| t["name"] == "Dynamic Text Resource")
        .unwrap_or_else(|| panic!("{templates}"));
    let template = text["uriTemplate"].as_str().unwrap();
    assert!(template.ends_with("/{resourceId}"), "{template}");
    let dynamic = template.replace("{resourceId}", "3");
    let read = editor
        .command(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": dynamic}),
        )
        .await;
    assert_eq!(read["contents"][0]["uri"], dynamic.as_str(), "{read}");

    // A blob comes as base64, as the server sent it.
    let blob_template = rows(&templates)
        .iter()
        .find(|t| t["name"] == "Dynamic Blob Resource")
        .unwrap_or_else(|| panic!("{templates}"))["uriTemplate"]
        .as_str()
        .unwrap()
        .replace("{resourceId}", "1");
    let read = editor
        .command(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": blob_template}),
        )
        .await;
    assert!(read["contents"][0]["blob"].is_string(), "{read}");

    // An unknown URI is the server's error, named.
    let unknown = editor
        .command_response(
            "mcp-sidecar.readResource",
            json!({"server": "everything", "uri": "demo://no/such/thing"}),
        )
        .await;
    assert_eq!(unknown["error"]["data"]["kind"], "serverError", "{unknown}");
}

async fn everything_prompts_and_completions(editor: &Arc<TestEditor>) {
    let prompts = editor
        .command("mcp-sidecar.listPrompts", json!({"server": "everything"}))
        .await;
    let args = rows(&prompts)
        .iter()
        .find(|p| p["name"] == "args-prompt")
        .unwrap_or_else(|| panic!("{prompts}"));
    let arguments = args["arguments"].as_array().unwrap();
    assert!(
        arguments
            .iter()
            .any(|a| a["name"] == "city" && a["required"] == true),
        "{args}"
    );
    let got = editor
        .command(
            "mcp-sidecar.getPrompt",
            json!({"server": "everything", "name": "args-prompt", "arguments": {"city": "Paris"}}),
        )
        .await;
    assert_eq!(
        got["messages"][0]["content"]["text"], "What's weather in Paris?",
        "{got}"
    );
    let completed = editor
        .command(
            "mcp-sidecar.complete",
            json!({"server": "everything", "ref": {"type": "ref/prompt", "name": "completable-prompt"}, "argument": {"name": "department", "value": "Eng"}}),
        )
        .await;
    assert_eq!(
        completed["completion"]["values"],
        json!(["Engineering"]),
        "{completed}"
    );
    // The context carries earlier arguments.
    let completed = editor
        .command(
            "mcp-sidecar.complete",
            json!({"server": "everything", "ref": {"type": "ref/prompt", "name": "completable-prompt"}, "argument": {"name": "name", "value": ""}, "context": {"arguments": {"department": "Sales"}}}),
        )
        .await;
    let values = completed["completion"]["values"].as_array().unwrap();
    assert!(!values.is_empty(), "{completed}");
    // getPrompt without the required argument asks it, completions offered as choices.
    let asked = spawn_command(
        editor,
        "mcp-sidecar.getPrompt",
        json!({"server": "everything", "name": "completable-prompt", "arguments": {"department": "Marketing"}}),
    );
    let shown = editor
        .answer_prompts(&[
            (PICK, json!({"selected": [0]})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    // The department given is the completion's context: its team members, and a way to type.
    let choices = labels(&shown[0]);
    assert_eq!(
        choices,
        ["Grace", "Henry", "Iris", "Type a value…"],
        "{shown:#?}"
    );
    assert_eq!(
        shown[0]["params"]["title"],
        "everything: arguments for prompt completable-prompt"
    );
    let got = response(asked).await;
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{got}"));
    assert_eq!(
        text, "Please promote Grace to the head of the Marketing team.",
        "{got}"
    );
}

async fn everything_subscription_updates_reach_the_editor(editor: &Arc<TestEditor>) {
    let uri = "demo://resource/dynamic/text/1";
    let mark = editor.mark();
    let subscribed = editor
        .command(
            "mcp-sidecar.subscribeResource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    assert_eq!(subscribed["subscribed"], true, "{subscribed}");
    call(editor, "everything", "toggle-subscriber-updates", json!({})).await;
    let update = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/resourceUpdated")
        .await;
    assert_eq!(
        update["params"],
        json!({"server": "everything", "uri": uri}),
        "{update}"
    );
    let unsubscribed = editor
        .command(
            "mcp-sidecar.unsubscribeResource",
            json!({"server": "everything", "uri": uri}),
        )
        .await;
    assert_eq!(unsubscribed["subscribed"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_over_stdio() {
    let editor = everything().await;
    everything_resources_templates_and_reads(&editor).await;
    everything_prompts_and_completions(&editor).await;
    everything_subscription_updates_reach_the_editor(&editor).await;
    editor.shutdown_and_exit().await;
}

/// The same three over Streamable HTTP (a legacy session: SSE, `Mcp-Session-Id`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn server_everything_over_streamable_http() {
    let (editor, _peer) = everything_http().await;
    everything_resources_templates_and_reads(&editor).await;
    everything_prompts_and_completions(&editor).await;
    everything_subscription_updates_reach_the_editor(&editor).await;
    editor.shutdown_and_exit().await;
}

/// Runs a command in its own task (it waits on prompts the test answers meanwhile).
fn spawn_command(
    editor: &Arc<TestEditor>,
    command: &str,
    argument: Value,
) -> tokio::task::JoinHandle<Value> {
    let (editor, command) = (editor.clone(), command.to_owned());
    tokio::spawn(async move { editor.command_response(&command, argument).await })
}

async fn response(task: tokio::task::JoinHandle<Value>) -> Value {
    tokio::time::timeout(WAIT, task)
        .await
        .expect("the command finished")
        .expect("the command task")
}

fn labels(prompt: &Value) -> Vec<String> {
    prompt["params"]["items"]
        .as_array()
        .unwrap_or_else(|| panic!("{prompt}"))
        .iter()
        .map(|i| i["label"].as_str().unwrap().to_owned())
        .collect()
}

/// The demo server offers tools only: its lists are empty, and a read is refused with a reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_resources_has_none_and_says_so() {
    for era in ["legacy", "modern"] {
        let editor = in_process();
        let mark = editor.mark();
        editor
            .initialize(
                &[],
                json!({"servers": {"demo": demo_server(era, None)}}),
                json!({}),
            )
            .await;
        editor.wait_status(mark, "demo", "running").await;
        for command in [
            "mcp-sidecar.listResources",
            "mcp-sidecar.listResourceTemplates",
            "mcp-sidecar.listPrompts",
        ] {
            let listed = editor.command(command, json!({"server": "demo"})).await;
            assert_eq!(listed, json!([]), "{era} {command}");
        }
        let read = editor
            .command_response(
                "mcp-sidecar.readResource",
                json!({"server": "demo", "uri": "file:///etc/passwd"}),
            )
            .await;
        assert!(read["error"]["data"]["kind"].is_string(), "{era}: {read}");
        let subscribe = editor
            .command_response(
                "mcp-sidecar.subscribeResource",
                json!({"server": "demo", "uri": "file:///etc/passwd"}),
            )
            .await;
        assert_eq!(
            subscribe["error"]["data"]["kind"], "refused",
            "{era}: {subscribe}"
        );
        let complete = editor
            .command_response(
                "mcp-sidecar.complete",
                json!({"server": "demo", "ref": {"type": "ref/prompt", "name": "x"}, "argument": {"name": "a", "value": ""}}),
            )
            .await;
        assert_eq!(
            complete["error"]["data"]["kind"], "refused",
            "{era}: {complete}"
        );
        editor.shutdown_and_exit().await;
    }
}

/// `expandUriTemplate` owns RFC 6570 for both editors: the variables first, then the URI; a
/// malformed template, a prefix of a list, a template or URI past the bounds are refused with
/// what is wrong (its message cleaned, as it quotes a server's template); a value of another
/// shape is a bad argument. No server is needed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn uri_templates_are_expanded_by_the_sidecar_and_bad_ones_refused() {
    let editor = in_process();
    editor.initialize(&[], json!({}), full_ui()).await;
    let expand = |argument: Value| {
        let editor = editor.clone();
        async move {
            editor
                .command_response("mcp-sidecar.expandUriTemplate", argument)
                .await
        }
    };
    let template = "search://{host}/items{/path*}{?q,lang}{&keys*}{#frag:3}";
    let asked = expand(json!({"uriTemplate": template})).await;
    assert_eq!(
        asked["result"],
        json!({"variables": ["host", "path", "q", "lang", "keys", "frag"], "uri": "search:///items"}),
        "{asked}"
    );
    let values = json!({
        "host": "ex ample", "path": ["a b", "c/d"], "q": "x&y", "lang": "",
        "keys": {"z": "1", "a": "é"}, "frag": "abcdef", "unused": "u",
    });
    let expanded = expand(json!({"uriTemplate": template, "values": values})).await;
    assert_eq!(
        expanded["result"]["uri"],
        "search://ex%20ample/items/a%20b/c%2Fd?q=x%26y&lang=&z=1&a=%C3%A9#abc",
        "{expanded}"
    );

    let refused = |response: &Value, needle: &str| {
        assert_eq!(response["error"]["code"], -32000, "{response}");
        assert_eq!(response["error"]["data"]["kind"], "refused", "{response}");
        let message = response["error"]["message"].as_str().unwrap();
        assert!(message.contains(needle), "{needle:?} not in {message:?}");
    };
    for (template, needle) in [
        (
            "x://{id",
            "the \"{\" at character 5 of the URI template is not closed",
        ),
        ("x://id}", "has no \"{\" before it"),
        ("x://{=id}", "reserves for future extensions"),
        (
            "x://{a b}",
            "\"a b\" in the expression \"{a b}\" at character 5",
        ),
        (
            "x://{a:0}",
            "a prefix length is a whole number from 1 to 9999",
        ),
        ("x://{a:2*}", "not both"),
    ] {
        refused(&expand(json!({"uriTemplate": template})).await, needle);
    }
    let prefix = expand(json!({"uriTemplate": "{l:2}", "values": {"l": ["a"]}})).await;
    refused(&prefix, "cannot shorten");
    let long = expand(json!({"uriTemplate": "a".repeat(8 * 1024 + 1)})).await;
    refused(&long, "at most 8192");
    let big = expand(json!({"uriTemplate": "{v}{v}{v}", "values": {"v": "é".repeat(4000)}})).await;
    refused(&big, "longer than 65536 bytes");
    // A server's template quoted in the message is shown cleaned: no bidirectional override.
    let sneaky = expand(json!({"uriTemplate": "x://{a\u{202e}b}"})).await;
    refused(&sneaky, "is not a variable name");
    assert!(
        !sneaky["error"]["message"]
            .as_str()
            .unwrap()
            .contains('\u{202e}'),
        "{sneaky}"
    );

    for bad in [
        json!({"uriTemplate": "x{?q}", "values": {"q": 1}}),
        json!({"uriTemplate": "x{?q}", "values": {"q": {"k": ["v"]}}}),
        json!({"uriTemplate": "x{?q}", "values": ["q"]}),
        json!({"values": {}}),
    ] {
        let response = expand(bad.clone()).await;
        assert_eq!(response["error"]["code"], -32602, "{bad}: {response}");
    }
    let shape = expand(json!({"uriTemplate": "x", "values": {"q": true}})).await;
    let message = shape["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("a string, a list of strings or an object whose values are strings"),
        "{message}"
    );
    editor.shutdown_and_exit().await;
}

/// `fixtures/python/resources_server.py` in one era, as the server "resources".
async fn python_resources(era: &str, extra_args: &[&str], settings: Value) -> CheckedEditor {
    let mut args = vec![
        fixture("python/resources_server.py").display().to_string(),
        "--era".into(),
        era.into(),
    ];
    args.extend(extra_args.iter().map(|a| a.to_string()));
    // Pinned: the fixture serves one era, and under `auto` rmcp gives up on `server/discover`
    // after 10 s, which a loaded machine's Python start-up can take.
    let pin = if era == "legacy" {
        "2025-11-25"
    } else {
        "2026-07-28"
    };
    let def = json!({"command": peer("MCP_PYTHON"), "args": args, "protocolVersion": pin});
    with_server("resources", def, settings).await
}

/// The `key` of every row, in order.
fn column(listed: &Value, key: &str) -> Vec<String> {
    unique(listed, key).into_iter().map(str::to_owned).collect()
}

/// Every page, in order, none twice: 29 resources, 25 prompts, 27 tools over pages of 10.
async fn every_page_arrives(editor: &TestEditor) {
    let on = json!({"server": "resources"});
    let listed = editor
        .command("mcp-sidecar.listResources", on.clone())
        .await;
    let mut want: Vec<String> = (0..25).map(|i| format!("fixture://doc/{i:02}")).collect();
    want.extend(["secret", "huge", "blob", "counter"].map(|n| format!("fixture://{n}")));
    assert_eq!(column(&listed, "uri"), want);
    let listed = editor.command("mcp-sidecar.listPrompts", on.clone()).await;
    let mut want: Vec<String> = (0..23).map(|i| format!("p{i:02}")).collect();
    want.extend(["greet".into(), "confidential".into()]);
    assert_eq!(column(&listed, "name"), want);
    let listed = editor.command("mcp-sidecar.listTools", on.clone()).await;
    let mut want: Vec<String> = (0..25).map(|i| format!("t{i:02}")).collect();
    want.extend(["bump".into(), "change_lists".into()]);
    assert_eq!(column(&listed, "name"), want);
    let listed = editor
        .command("mcp-sidecar.listResourceTemplates", on)
        .await;
    assert_eq!(
        column(&listed, "uriTemplate"),
        [
            "fixture://doc/{id}",
            "fixture://bad/{unclosed",
            "fixture://empty/{}"
        ]
    );
}

/// The fixture's code question (legacy `elicitation/create`, 2026-07-28 `input_required`) as
/// the editor sees it: the code typed, then the review's Submit (or Decline).
async fn answer_code(editor: &TestEditor, message: &str, code: &str, submit: bool) {
    let shown = editor
        .answer_prompts(&[
            (INPUT, json!({"value": code})),
            (PICK, json!({"selected": [if submit { 0 } else { 2 }]})),
        ])
        .await;
    assert_eq!(
        shown[0]["params"]["title"],
        format!("resources: {message}"),
        "{shown:#?}"
    );
}

fn first_text(response: &Value, at: &str) -> String {
    response["result"]
        .pointer(at)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no text at {at}: {response}"))
        .to_owned()
}

async fn reads_and_prompts_that_ask(editor: &Arc<TestEditor>) {
    let on = |more: Value| {
        let mut argument = json!({"server": "resources"});
        argument
            .as_object_mut()
            .unwrap()
            .extend(more.as_object().unwrap().clone());
        argument
    };
    // A read that asks first.
    let read = spawn_command(
        editor,
        "mcp-sidecar.readResource",
        on(json!({"uri": "fixture://secret"})),
    );
    answer_code(editor, "Unlock the secret", "42", true).await;
    let read = response(read).await;
    assert_eq!(first_text(&read, "/contents/0/text"), "the secret for 42");
    // Declined: the server's own error.
    let read = spawn_command(
        editor,
        "mcp-sidecar.readResource",
        on(json!({"uri": "fixture://secret"})),
    );
    answer_code(editor, "Unlock the secret", "7", false).await;
    let read = response(read).await;
    assert_eq!(read["error"]["data"]["kind"], "serverError", "{read}");
    assert!(
        read["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not unlocked: decline"),
        "{read}"
    );
    // A prompt that asks first.
    let got = spawn_command(
        editor,
        "mcp-sidecar.getPrompt",
        on(json!({"name": "confidential"})),
    );
    answer_code(editor, "Unlock the prompt", "9", true).await;
    let got = response(got).await;
    assert_eq!(
        first_text(&got, "/messages/0/content/text"),
        "the prompt for 9"
    );
    // Without arguments every declared one is asked, suggestions first (name, then the
    // optional style, which is offered with Skip).
    let got = spawn_command(
        editor,
        "mcp-sidecar.getPrompt",
        on(json!({"name": "greet"})),
    );
    let shown = editor
        .answer_prompts(&[
            (PICK, json!({"selected": [1]})),
            (PICK, json!({"selected": [1]})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    assert_eq!(
        labels(&shown[0]),
        ["Alice", "Bob", "Carol", "Dave", "Type a value…"]
    );
    assert_eq!(
        labels(&shown[1]),
        ["casual", "formal", "Type a value…", "Skip (leave empty)"]
    );
    assert_eq!(
        shown[0]["params"]["title"],
        "resources: arguments for prompt greet"
    );
    let got = response(got).await;
    assert_eq!(
        first_text(&got, "/messages/0/content/text"),
        "formal: Hello, Bob!"
    );
    // Given arguments are the completion's context; only the missing required one is asked,
    // and a value of one's own can be typed.
    let got = spawn_command(
        editor,
        "mcp-sidecar.getPrompt",
        on(json!({"name": "greet", "arguments": {"style": "formal"}})),
    );
    let shown = editor
        .answer_prompts(&[
            (PICK, json!({"selected": [4]})),
            (INPUT, json!({"value": "Zed"})),
            (PICK, json!({"selected": [0]})),
        ])
        .await;
    assert_eq!(labels(&shown[0])[0], "Dr. Alice", "{shown:#?}");
    let got = response(got).await;
    assert_eq!(
        first_text(&got, "/messages/0/content/text"),
        "formal: Hello, Zed!"
    );
    // The person's own request has no Decline: the review's Cancel (its third choice, after
    // "Get prompt greet" and "Change name") and dismissing it are both `cancelled`; the server
    // is not asked.
    let got = spawn_command(
        editor,
        "mcp-sidecar.getPrompt",
        on(json!({"name": "greet", "arguments": {}})),
    );
    editor
        .answer_prompts(&[
            (PICK, json!({"selected": [0]})),
            (PICK, json!({"selected": [2]})),
        ])
        .await;
    let got = response(got).await;
    assert_eq!(got["error"]["data"]["kind"], "cancelled", "{got}");
    let got = spawn_command(
        editor,
        "mcp-sidecar.getPrompt",
        on(json!({"name": "greet", "arguments": {}})),
    );
    editor.answer_prompts(&[(PICK, Value::Null)]).await;
    let got = response(got).await;
    assert_eq!(got["error"]["data"]["kind"], "cancelled", "{got}");
}

/// Subscriptions and list changes: legacy `resources/subscribe` and notifications, 2026-07-28
/// the `subscriptions/listen` stream; either way the update reaches the editor and the lists
/// are fetched afresh.
async fn updates_and_list_changes(editor: &TestEditor) {
    let counter = json!({"server": "resources", "uri": "fixture://counter"});
    let subscribed = editor
        .command("mcp-sidecar.subscribeResource", counter.clone())
        .await;
    assert_eq!(subscribed["subscribed"], true, "{subscribed}");
    let mark = editor.mark();
    let bumped = call(editor, "resources", "bump", json!({})).await;
    assert_eq!(text_of(&bumped), "count 1");
    let update = editor
        .wait_notification(mark, |n| n["method"] == "mcp-sidecar/resourceUpdated")
        .await;
    assert_eq!(update["params"], counter, "{update}");
    let read = editor
        .command("mcp-sidecar.readResource", counter.clone())
        .await;
    assert_eq!(read["contents"][0]["text"], "count 1");
    let unsubscribed = editor
        .command("mcp-sidecar.unsubscribeResource", counter.clone())
        .await;
    assert_eq!(unsubscribed["subscribed"], false);

    // The caches are full; the server adds one of each and says so.
    let on = json!({"server": "resources"});
    for command in ["mcp-sidecar.listPrompts", "mcp-sidecar.listResources"] {
        editor.command(command, on.clone()).await;
    }
    let mark = editor.mark();
    let changed = call(editor, "resources", "change_lists", json!({})).await;
    assert_eq!(text_of(&changed), "extra 1");
    wait_log(editor, mark, "[resources] tool list changed").await;
    let tools = editor.command("mcp-sidecar.listTools", on.clone()).await;
    assert!(
        column(&tools, "name").contains(&"extra_1".to_owned()),
        "{tools}"
    );
    eventually("the prompt list to be fetched afresh", || async {
        let listed = editor.command("mcp-sidecar.listPrompts", on.clone()).await;
        column(&listed, "name").contains(&"extra_1".to_owned())
    })
    .await;
    eventually("the resource list to be fetched afresh", || async {
        let listed = editor
            .command("mcp-sidecar.listResources", on.clone())
            .await;
        column(&listed, "uri").contains(&"fixture://extra/1".to_owned())
    })
    .await;
}

/// Bad input: a resource over `maxMessageBytes` (a clear error; the server is restarted and
/// serves again), a binary blob, URIs from malformed templates and an unknown URI (the server's
/// errors, named).
async fn bad_input(editor: &TestEditor) {
    let read = |uri: &str| {
        editor.command_response(
            "mcp-sidecar.readResource",
            json!({"server": "resources", "uri": uri}),
        )
    };
    let mark = editor.mark();
    let huge = read("fixture://huge").await;
    let message = huge["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("maxMessageBytes"), "{huge}");
    assert_eq!(huge["error"]["data"]["kind"], "serverGone", "{huge}");
    let closed = editor.wait_status(mark, "resources", "failed").await;
    let says = "the server sent a message larger than maxMessageBytes (1000000 bytes)";
    assert!(
        closed["message"].as_str().unwrap().starts_with(says),
        "{closed}"
    );
    wait_shown(
        editor,
        mark,
        &format!("MCP server \"resources\" stopped: {says}"),
    )
    .await;
    editor.wait_status(mark, "resources", "running").await;
    let doc = read("fixture://doc/03").await;
    assert_eq!(doc["result"]["contents"][0]["text"], "document 03", "{doc}");

    let blob = read("fixture://blob").await;
    let content = &blob["result"]["contents"][0];
    assert_eq!(content["mimeType"], "application/octet-stream", "{blob}");
    let bytes: Vec<u8> = (0..=255).collect();
    assert_eq!(content["blob"], base64(&bytes), "{blob}");
    assert!(content.get("text").is_none(), "{blob}");

    for uri in [
        "fixture://bad/{unclosed",
        "fixture://empty/{}",
        "fixture://nowhere",
    ] {
        let failed = read(uri).await;
        assert_eq!(
            failed["error"]["data"]["kind"], "serverError",
            "{uri}: {failed}"
        );
        assert_eq!(
            failed["error"]["data"]["mcpCode"], -32002,
            "{uri}: {failed}"
        );
        let message = failed["error"]["message"].as_str().unwrap();
        assert!(message.contains(uri), "{message}");
    }
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk.iter().fold(0u32, |n, b| n << 8 | u32::from(*b)) << (8 * (3 - chunk.len()));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

async fn python_sdk_resources(era: &str) {
    let settings = json!({"maxMessageBytes": 1_000_000});
    let editor = python_resources(era, &["--huge", "1500000"], settings).await;
    every_page_arrives(&editor).await;
    reads_and_prompts_that_ask(&editor).await;
    updates_and_list_changes(&editor).await;
    bad_input(&editor).await;
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_resources_and_prompts_legacy_era() {
    python_sdk_resources("legacy").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn python_sdk_resources_and_prompts_modern_era() {
    python_sdk_resources("modern").await;
}
