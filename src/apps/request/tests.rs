use super::*;
use crate::apps::views::{Opening, Views};
use crate::testing::Script;
use parking_lot::Mutex;
use std::sync::Arc;

/// A server with three tools: `both` (no visibility), `app-only`, `model-only`.
struct Fake {
    ui: Script,
    calls: Mutex<Vec<(String, String)>>,
}

impl AppHost for Fake {
    fn call_tool<'a>(
        &'a self,
        server: &'a str,
        name: &'a str,
        _arguments: Option<Map<String, Value>>,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        self.calls.lock().push((server.into(), name.into()));
        Box::pin(async move { Ok(json!({"content": [{"type": "text", "text": name}]})) })
    }
    fn tools<'a>(&'a self, _server: &'a str) -> BoxFuture<'a, Result<Vec<Value>, HostError>> {
        Box::pin(async {
            Ok(vec![
                json!({"name": "both", "inputSchema": {}}),
                json!({"name": "app-only", "inputSchema": {}, "_meta": {"ui": {"visibility": ["app"]}}}),
                json!({"name": "model-only", "inputSchema": {}, "_meta": {"ui": {"visibility": ["model"]}}}),
            ])
        })
    }
    fn resources<'a>(
        &'a self,
        server: &'a str,
        method: &'a str,
        _params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, HostError>> {
        Box::pin(async move { Ok(json!({"server": server, "method": method})) })
    }
    fn ui(&self) -> &dyn Prompter {
        &self.ui
    }
}

fn setup(answers: Vec<Value>) -> (Fake, Arc<View>) {
    let views = Views::default();
    let (view, _) = views.open(
        Opening {
            server: "srv".into(),
            tool: json!({"name": "show"}),
            title: "srv: show".into(),
            resource_uri: "ui://show".into(),
            csp: String::new(),
            arguments: json!({}),
            result: json!({}),
            html: None,
        },
        "tok".into(),
    );
    (
        Fake {
            ui: Script::new(answers),
            calls: Mutex::default(),
        },
        view,
    )
}

fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn error_code(answer: &Answer) -> Option<i64> {
    answer
        .response
        .as_ref()?
        .get("error")?
        .get("code")?
        .as_i64()
}

#[tokio::test]
async fn a_view_calls_only_its_servers_tools_for_views() {
    let (host, view) = setup(vec![]);
    let ok = answer(
        &host,
        &view,
        &request(1, "tools/call", json!({"name": "app-only"})),
    )
    .await;
    assert_eq!(
        ok.response.unwrap()["result"]["content"][0]["text"],
        "app-only"
    );
    let both = answer(
        &host,
        &view,
        &request(
            2,
            "tools/call",
            json!({"name": "both", "arguments": {"a": 1}}),
        ),
    )
    .await;
    assert!(both.response.unwrap().get("result").is_some());
    let refused = answer(
        &host,
        &view,
        &request(3, "tools/call", json!({"name": "model-only"})),
    )
    .await;
    assert_eq!(error_code(&refused), Some(DENIED));
    let unknown = answer(
        &host,
        &view,
        &request(4, "tools/call", json!({"name": "nope"})),
    )
    .await;
    assert_eq!(error_code(&unknown), Some(DENIED));
    let bad = answer(
        &host,
        &view,
        &request(5, "tools/call", json!({"name": "both", "arguments": [1]})),
    )
    .await;
    assert_eq!(error_code(&bad), Some(INVALID_PARAMS));
    assert_eq!(
        *host.calls.lock(),
        vec![
            ("srv".to_string(), "app-only".to_string()),
            ("srv".into(), "both".into())
        ]
    );
    let listed = answer(&host, &view, &request(6, "tools/list", json!({}))).await;
    let names: Vec<_> = listed.response.unwrap()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["both", "app-only"]);
}

#[tokio::test]
async fn resources_go_to_the_views_own_server() {
    let (host, view) = setup(vec![]);
    let read = answer(
        &host,
        &view,
        &request(1, "resources/read", json!({"uri": "ui://x"})),
    )
    .await;
    assert_eq!(
        read.response.unwrap()["result"],
        json!({"server": "srv", "method": "resources/read"})
    );
}

#[tokio::test]
async fn a_link_opens_only_after_the_person_says_so() {
    // Declined in the quick pick ("Decline" is the third choice).
    let (host, view) = setup(vec![json!({"selected": [2]})]);
    let declined = answer(
        &host,
        &view,
        &request(1, "ui/open-link", json!({"url": "https://example.com/a"})),
    )
    .await;
    assert_eq!(error_code(&declined), Some(DENIED));
    assert!(host.ui.opened.lock().is_empty());
    // Schemes other than the web's are refused without asking.
    for url in [
        "javascript:alert(1)",
        "file:///etc/passwd",
        "http://evil.example/",
    ] {
        let refused = answer(
            &host,
            &view,
            &request(2, "ui/open-link", json!({"url": url})),
        )
        .await;
        assert_eq!(error_code(&refused), Some(DENIED), "{url}");
    }
    assert_eq!(
        host.ui.shown().len(),
        1,
        "only the https link was asked about"
    );
    let (host, view) = setup(vec![json!({"selected": [0]})]);
    let opened = answer(
        &host,
        &view,
        &request(3, "ui/open-link", json!({"url": "https://example.com/b"})),
    )
    .await;
    assert_eq!(opened.response.unwrap()["result"], json!({}));
    assert_eq!(
        *host.ui.opened.lock(),
        vec!["https://example.com/b".to_string()]
    );
}

#[tokio::test]
async fn messages_and_model_context_are_kept_and_shown() {
    let (host, view) = setup(vec![]);
    // The spec's object and the SDK's list of blocks.
    answer(
        &host,
        &view,
        &request(
            1,
            "ui/message",
            json!({"role": "user", "content": {"type": "text", "text": "hi\u{202e}"}}),
        ),
    )
    .await;
    answer(&host, &view, &request(2, "ui/message", json!({"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}))).await;
    let messages = host.ui.messages.lock().clone();
    assert_eq!(messages[0], "srv (view of show): hi⟨U+202E⟩");
    assert_eq!(view.shown().message.as_deref(), Some("a b"));
    answer(
        &host,
        &view,
        &request(
            3,
            "ui/update-model-context",
            json!({"content": [{"type": "text", "text": "1"}]}),
        ),
    )
    .await;
    answer(
        &host,
        &view,
        &request(
            4,
            "ui/update-model-context",
            json!({"structuredContent": {"n": 2}}),
        ),
    )
    .await;
    assert_eq!(
        view.shown().model_context,
        Some(json!({"structuredContent": {"n": 2}}))
    );
}

#[tokio::test]
async fn notifications_get_no_answer_and_unknown_methods_are_refused() {
    let (host, view) = setup(vec![]);
    let init = answer(
        &host,
        &view,
        &json!({"jsonrpc": "2.0", "method": "ui/notifications/initialized"}),
    )
    .await;
    assert_eq!(init, Answer::default());
    assert!(view.is_initialized());
    let teardown = answer(
        &host,
        &view,
        &json!({"jsonrpc": "2.0", "method": "ui/notifications/request-teardown"}),
    )
    .await;
    assert!(teardown.close && teardown.response.is_none());
    let unknown = answer(
        &host,
        &view,
        &request(1, "sampling/createMessage", json!({})),
    )
    .await;
    assert_eq!(error_code(&unknown), Some(METHOD_NOT_FOUND));
    let mode = answer(
        &host,
        &view,
        &request(2, "ui/request-display-mode", json!({"mode": "fullscreen"})),
    )
    .await;
    assert_eq!(mode.response.unwrap()["result"], json!({"mode": "inline"}));
    let garbage = answer(&host, &view, &json!({"id": 3})).await;
    assert_eq!(error_code(&garbage), Some(INVALID_PARAMS));
    assert_eq!(
        answer(&host, &view, &json!([1, 2])).await,
        Answer::default()
    );
}

#[tokio::test]
async fn a_flooding_view_is_refused_past_its_allowance() {
    let (host, view) = setup(vec![]);
    let mut refused = 0;
    for i in 0..200 {
        if error_code(&answer(&host, &view, &request(i, "ping", json!({}))).await) == Some(DENIED) {
            refused += 1;
        }
    }
    assert!(refused >= 150, "{refused}");
}
