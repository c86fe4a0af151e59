//! The demo server over `tokio::io::duplex` against an rmcp client, in both eras.
//!
//! Legacy clients use `ClientLifecycleMode::Initialize`; modern ones `Discover` at 2026-07-28,
//! where `call_tool` drives the MRTR rounds through the same `ClientHandler` callbacks.

// Sampling and roots are deprecated (SEP-2577) but still part of the protocol under test.
#![allow(deprecated)]

use std::sync::Arc;

use parking_lot::Mutex;

use rmcp::{
    ClientHandler, ClientLifecycleMode, ClientServiceExt, ErrorData, RoleClient, ServiceError,
    model::{
        CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult,
        ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
        ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, Implementation,
        InputRequiredResult, JsonObject, ListRootsResult, ProtocolVersion, Root, SamplingMessage,
    },
    service::{ClientInitializeError, PeerRequestOptions, RequestContext, RunningService},
};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};

use super::{Era, serve, state::StateCodec};

// ---------------------------------------------------------------------------------------------
// The test client

/// What the test client answers with; every request it gets is recorded.
#[derive(Clone)]
struct TestClient {
    config: ClientConfig,
    elicit_action: ElicitationAction,
    refuse_sampling: bool,
    /// The content an accepted form answers with (default [`TRIP_ANSWER`]).
    form_answer: Option<Value>,
    /// When set, elicitations wait until the server withdraws them.
    hold: Option<Arc<Hold>>,
    seen: Arc<Mutex<Seen>>,
}

/// Signals for an elicitation that waits to be withdrawn.
#[derive(Default)]
struct Hold {
    asked: tokio::sync::Notify,
    withdrawn: tokio::sync::Notify,
}

#[derive(Default)]
struct Seen {
    /// Each request's params as JSON (`roots/list` as `{"method": "roots/list"}`).
    requests: Vec<Value>,
    /// The property order of each form, as the client parsed it off the wire.
    form_orders: Vec<Vec<String>>,
}

/// The form answer; `travelers` is an integer and `budget` a float with no fraction, so a server
/// that re-encodes numbers would be caught.
const TRIP_ANSWER: &str = r#"{"name":"Ada Lovelace","email":"ada@example.com","travelers":2,
    "budget":1200.0,"window_seat":false,"cabin":"business","meal":"vegan","insurance":"basic",
    "extras":["lounge","wifi"],"departure":"2026-09-01"}"#;

impl TestClient {
    fn new(protocol_version: ProtocolVersion) -> Self {
        let capabilities = json!({
            "roots": {"listChanged": true},
            "sampling": {},
            "elicitation": {"form": {}, "url": {}}
        });
        Self::with_capabilities(protocol_version, capabilities)
    }

    fn with_capabilities(protocol_version: ProtocolVersion, capabilities: Value) -> Self {
        let capabilities: ClientCapabilities =
            serde_json::from_value(capabilities).expect("valid client capabilities");
        Self {
            config: ClientConfig::new(capabilities, Implementation::new("demo-test", "0.0.0"))
                .with_protocol_version(protocol_version),
            elicit_action: ElicitationAction::Accept,
            refuse_sampling: false,
            form_answer: None,
            hold: None,
            seen: Arc::default(),
        }
    }

    fn answering(mut self, action: ElicitationAction) -> Self {
        self.elicit_action = action;
        self
    }

    fn answering_forms_with(mut self, content: Value) -> Self {
        self.form_answer = Some(content);
        self
    }

    fn refusing_sampling(mut self) -> Self {
        self.refuse_sampling = true;
        self
    }

    fn holding(mut self, hold: Arc<Hold>) -> Self {
        self.hold = Some(hold);
        self
    }

    fn record(&self, request: Value) {
        self.seen.lock().requests.push(request);
    }

    fn requests(&self) -> Vec<Value> {
        self.seen.lock().requests.clone()
    }
}

impl ClientHandler for TestClient {
    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.record(serde_json::to_value(&request).unwrap());
        if let Some(hold) = &self.hold {
            hold.asked.notify_one();
            context.ct.cancelled().await;
            hold.withdrawn.notify_one();
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        }
        let mut result = ElicitResult::new(self.elicit_action.clone());
        if let ElicitRequestParams::FormElicitationParams {
            requested_schema, ..
        } = &request
        {
            let order = requested_schema.property_order.clone().unwrap_or_default();
            self.seen.lock().form_orders.push(order);
            if self.elicit_action == ElicitationAction::Accept {
                let content = (self.form_answer.clone())
                    .unwrap_or_else(|| serde_json::from_str(TRIP_ANSWER).unwrap());
                result = result.with_content(serde_json::from_value(content).unwrap());
            }
        }
        Ok(result)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.record(serde_json::to_value(&params).unwrap());
        if self.refuse_sampling {
            return Err(ErrorData::new(
                ErrorCode(-1),
                "User rejected sampling request",
                None,
            ));
        }
        Ok(CreateMessageResult::new(
            SamplingMessage::assistant_text("EX517 to Boston: nonstop and cheapest."),
            "test-model".into(),
        )
        .with_stop_reason(CreateMessageResult::STOP_REASON_END_TURN))
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        self.record(json!({"method": "roots/list"}));
        Ok(ListRootsResult::new(vec![
            Root::new("file:///work/project").with_name("project"),
            Root::new("file:///work/library"),
        ]))
    }
}

// ---------------------------------------------------------------------------------------------
// Harness

type Client = RunningService<RoleClient, TestClient>;

/// A client/server pair in one of the two eras.
#[derive(Clone, Debug)]
enum Side {
    Legacy(ProtocolVersion),
    Modern,
}

const LEGACY: Side = Side::Legacy(ProtocolVersion::V_2025_11_25);
const MODERN: Side = Side::Modern;

impl Side {
    fn client(&self) -> TestClient {
        TestClient::new(self.version())
    }

    fn version(&self) -> ProtocolVersion {
        match self {
            Side::Legacy(version) => version.clone(),
            Side::Modern => ProtocolVersion::V_2026_07_28,
        }
    }

    fn lifecycle(&self) -> ClientLifecycleMode {
        match self {
            Side::Legacy(_) => ClientLifecycleMode::Initialize,
            Side::Modern => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        }
    }

    /// The server eras that must accept this side.
    fn server_eras(&self) -> [Era; 2] {
        match self {
            Side::Legacy(_) => [Era::Both, Era::Legacy],
            Side::Modern => [Era::Both, Era::Modern],
        }
    }

    fn is_modern(&self) -> bool {
        matches!(self, Side::Modern)
    }
}

fn start_server(era: Era) -> DuplexStream {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Err(error) = serve(server_io, era).await {
            eprintln!("demo server ended with an error: {error:#}");
        }
    });
    client_io
}

async fn try_connect(
    era: Era,
    client: TestClient,
    lifecycle: ClientLifecycleMode,
) -> Result<Client, ClientInitializeError> {
    client
        .serve_with_lifecycle(start_server(era), lifecycle)
        .await
}

async fn connect(era: Era, side: &Side, client: TestClient) -> Client {
    let client = try_connect(era, client, side.lifecycle())
        .await
        .unwrap_or_else(|error| panic!("{side:?} client against {era:?}: {error}"));
    let negotiated = client
        .peer_info()
        .expect("server info")
        .protocol_version
        .clone();
    assert_eq!(negotiated, side.version(), "{side:?} against {era:?}");
    client
}

fn call(tool: &str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments)
}

async fn call_tool(client: &Client, tool: &str, arguments: Value) -> CallToolResult {
    client
        .call_tool(call(tool, arguments))
        .await
        .unwrap_or_else(|error| panic!("{tool}: {error}"))
}

fn text_of(result: &CallToolResult) -> &str {
    &result.content[0].as_text().expect("a text block").text
}

fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}

/// rmcp models temperature and model priorities as `f32`; JSON built with `serde_json::to_value`
/// shows them widened (0.2 → 0.20000000298023224).
fn as_f32(value: &Value) -> f32 {
    value.as_f64().expect("a number") as f32
}

fn error_code(error: &ServiceError) -> i32 {
    match error {
        ServiceError::McpError(error) => error.code.0,
        other => panic!("expected a JSON-RPC error, got {other}"),
    }
}

/// Runs `check` for `side` against every server era that must accept it.
macro_rules! for_each_era {
    ($side:expr, |$era:ident| $body:expr) => {
        for $era in $side.server_eras() {
            $body;
        }
    };
}

// ---------------------------------------------------------------------------------------------
// Unit-level checks

#[test]
fn era_parses_from_the_command_line() {
    assert_eq!("both".parse::<Era>().unwrap(), Era::Both);
    assert_eq!("legacy".parse::<Era>().unwrap(), Era::Legacy);
    assert_eq!("modern".parse::<Era>().unwrap(), Era::Modern);
    assert_eq!(Era::default(), Era::Both);
    let error = "2026".parse::<Era>().unwrap_err();
    assert!(error.to_string().contains("\"2026\""), "{error}");
}

#[test]
fn request_state_is_bound_to_the_call_and_sealed() {
    let codec = StateCodec::new();
    let args: JsonObject = serde_json::from_value(json!({"destination": "Oslo"})).unwrap();
    let fresh = codec.fresh("book_trip", Some(&args));
    let next = fresh.next_round();
    let sealed = codec.seal(&next);

    let expected = codec.fresh("book_trip", Some(&args));
    assert_eq!(codec.open(&sealed, &expected).unwrap(), next);
    assert_ne!(fresh.nonce, expected.nonce, "nonces are per call");

    let other_args: JsonObject = serde_json::from_value(json!({"destination": "Rome"})).unwrap();
    for (sealed, expected) in [
        (sealed.clone(), codec.fresh("login", Some(&args))),
        (sealed.clone(), codec.fresh("book_trip", Some(&other_args))),
        (sealed.replacen('7', "8", 1), expected.clone()),
        (format!("{sealed}0"), expected.clone()),
        ("not-a-state".to_owned(), expected.clone()),
    ] {
        let error = codec.open(&sealed, &expected).unwrap_err();
        assert_eq!(error.code, ErrorCode::INVALID_PARAMS);
    }
    let other_process = StateCodec::new();
    assert!(other_process.open(&sealed, &expected).is_err());
}

// ---------------------------------------------------------------------------------------------
// tools/list

#[tokio::test]
async fn tools_are_listed_with_titles_descriptions_and_object_schemas() {
    for side in [LEGACY, MODERN] {
        for_each_era!(side, |era| {
            let client = connect(era, &side, side.client()).await;
            let tools = client.list_all_tools().await.unwrap();
            let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
            assert_eq!(
                names,
                [
                    "book_trip",
                    "login",
                    "analyze_flights",
                    "list_roots",
                    "count_down",
                    "slow_task",
                    "add",
                    "echo",
                    "clock",
                    "clock_tick"
                ]
            );
            for tool in &tools {
                assert!(
                    tool.title.is_some() && tool.description.is_some(),
                    "{tool:?}"
                );
                // Said as a person sees it, not in the protocol's words.
                let description = tool.description.as_deref().unwrap_or_default();
                for jargon in [
                    "elicitation",
                    "sampling",
                    "roots/",
                    "notification",
                    "client",
                ] {
                    assert!(
                        !description.contains(jargon),
                        "{}: {description}",
                        tool.name
                    );
                }
                assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
            }
            let list_roots = tools.iter().find(|tool| tool.name == "list_roots").unwrap();
            assert_eq!(list_roots.title.as_deref(), Some("Report roots"));
            let add = tools.iter().find(|tool| tool.name == "add").unwrap();
            assert_eq!(add.input_schema["required"], json!(["a", "b"]));
        });
    }
}

// ---------------------------------------------------------------------------------------------
// book_trip

fn expected_trip_form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Full name", "description": "As printed on the passport", "minLength": 1},
            "email": {"type": "string", "title": "Email", "format": "email"},
            "travelers": {"type": "integer", "title": "Travelers", "minimum": 1, "maximum": 9, "default": 1},
            // rmcp models a number schema's bounds as f64.
            "budget": {"type": "number", "title": "Budget (EUR)", "minimum": 0.0, "default": 1500.5},
            "window_seat": {"type": "boolean", "title": "Window seat", "default": true},
            "cabin": {"type": "string", "title": "Cabin", "oneOf": [
                {"const": "economy", "title": "Economy"},
                {"const": "premium", "title": "Premium economy"},
                {"const": "business", "title": "Business"}
            ], "default": "economy"},
            "meal": {"type": "string", "title": "Meal", "enum": ["standard", "vegetarian", "vegan"], "default": "standard"},
            "insurance": {"type": "string", "title": "Insurance", "enum": ["none", "basic", "full"],
                "enumNames": ["No insurance", "Basic cover", "Full cover"], "default": "none"},
            "extras": {"type": "array", "title": "Extras",
                "items": {"type": "string", "enum": ["lounge", "wifi", "extra_bag"]}, "maxItems": 2, "default": []},
            "departure": {"type": "string", "title": "Departure date", "format": "date"}
        },
        "required": ["name", "email"]
    })
}

const FORM_ORDER: [&str; 10] = [
    "name",
    "email",
    "travelers",
    "budget",
    "window_seat",
    "cabin",
    "meal",
    "insurance",
    "extras",
    "departure",
];

#[tokio::test]
async fn book_trip_accept_echoes_exactly_what_the_client_sent() {
    for side in [LEGACY, MODERN] {
        for_each_era!(side, |era| {
            let test_client = side.client();
            let client = connect(era, &side, test_client.clone()).await;
            let result = call_tool(&client, "book_trip", json!({"destination": "Oslo"})).await;

            assert_eq!(result.is_error, Some(false));
            assert_eq!(
                text_of(&result),
                "Booked: Ada Lovelace <ada@example.com>, 2 traveler(s) to Oslo, business cabin"
            );
            let sent: Value = serde_json::from_str(TRIP_ANSWER).unwrap();
            assert_eq!(
                structured(&result),
                &json!({"action": "accept", "content": sent})
            );
            let content = &structured(&result)["content"];
            assert!(content["travelers"].is_u64(), "integer stays integer");
            assert!(content["budget"].is_f64(), "1200.0 stays a float");
            assert_eq!(content["budget"].to_string(), "1200.0");

            let requests = test_client.requests();
            assert_eq!(requests.len(), 1, "{side:?}/{era:?}: asked once");
            assert_eq!(requests[0]["mode"], "form");
            assert_eq!(requests[0]["message"], "Confirm your trip to Oslo");
            assert_eq!(requests[0]["requestedSchema"], expected_trip_form());
        });
    }
}

#[tokio::test]
async fn form_property_order_survives_the_wire() {
    for side in [LEGACY, MODERN] {
        let test_client = side.client();
        let client = connect(Era::Both, &side, test_client.clone()).await;
        call_tool(&client, "book_trip", json!({})).await;
        let orders = test_client.seen.lock().form_orders.clone();
        assert_eq!(
            orders,
            [FORM_ORDER.map(String::from).to_vec()],
            "{side:?}: rmcp serializes request params through serde_json::Value, so the \
             property order survives only with serde_json's `preserve_order` feature"
        );
    }
}

#[tokio::test]
async fn book_trip_decline_and_cancel() {
    let cases = [
        (ElicitationAction::Decline, "Booking declined", "decline"),
        (ElicitationAction::Cancel, "Booking cancelled", "cancel"),
    ];
    for side in [LEGACY, MODERN] {
        for (action, text, wire) in cases.clone() {
            let client = connect(Era::Both, &side, side.client().answering(action)).await;
            let result = call_tool(&client, "book_trip", json!({})).await;
            assert_eq!(text_of(&result), text);
            assert_eq!(structured(&result), &json!({"action": wire}));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// login

#[tokio::test]
async fn login_uses_url_mode_with_a_fresh_session_per_call() {
    for side in [LEGACY, MODERN] {
        for_each_era!(side, |era| {
            let test_client = side.client();
            let client = connect(era, &side, test_client.clone()).await;
            let first = call_tool(&client, "login", json!({})).await;
            let second = call_tool(&client, "login", json!({})).await;

            let requests = test_client.requests();
            assert_eq!(requests.len(), 2);
            for (request, result) in requests.iter().zip([&first, &second]) {
                assert_eq!(request["mode"], "url");
                assert_eq!(request["message"], "Sign in to Example Travel");
                let url = request["url"].as_str().unwrap();
                assert!(
                    url.starts_with("https://example.com/login?session="),
                    "{url}"
                );
                assert_eq!(structured(result), &json!({"action": "accept", "url": url}));
                assert!(text_of(result).contains(url));
                let elicitation_id = request["elicitationId"].as_str().unwrap_or_default();
                // 2026-07-28 has no elicitationId; rmcp writes it as "".
                assert_eq!(elicitation_id.is_empty(), side.is_modern(), "{request}");
            }
            assert_ne!(requests[0]["url"], requests[1]["url"]);
        });
    }
}

#[tokio::test]
async fn login_declined() {
    for side in [LEGACY, MODERN] {
        let client = connect(
            Era::Both,
            &side,
            side.client().answering(ElicitationAction::Decline),
        )
        .await;
        let result = call_tool(&client, "login", json!({})).await;
        assert_eq!(text_of(&result), "Sign-in declined");
        assert_eq!(structured(&result)["action"], "decline");
        assert!(structured(&result)["url"].is_string());
    }
}

// ---------------------------------------------------------------------------------------------
// analyze_flights

#[tokio::test]
async fn analyze_flights_samples_and_returns_the_text() {
    for side in [LEGACY, MODERN] {
        for_each_era!(side, |era| {
            let test_client = side.client();
            let client = connect(era, &side, test_client.clone()).await;
            let result = call_tool(&client, "analyze_flights", json!({})).await;

            let answer = "EX517 to Boston: nonstop and cheapest.";
            assert_eq!(text_of(&result), answer);
            assert_eq!(
                structured(&result),
                &json!({"model": "test-model", "stopReason": "endTurn", "text": answer})
            );

            let requests = test_client.requests();
            assert_eq!(requests.len(), 1);
            let request = &requests[0];
            let prompt = request["messages"][0]["content"]["text"].as_str().unwrap();
            assert_eq!(request["messages"][0]["role"], "user");
            assert!(prompt.starts_with("Which of these flights is the best value?"));
            assert_eq!(prompt.matches(" EX").count(), 10, "{prompt}");
            assert_eq!(request["maxTokens"], 400);
            assert_eq!(as_f32(&request["temperature"]), 0.2);
            assert_eq!(request["includeContext"], "none");
            assert_eq!(
                request["modelPreferences"]["hints"],
                json!([{"name": "claude-3-sonnet"}])
            );
            assert_eq!(
                as_f32(&request["modelPreferences"]["intelligencePriority"]),
                0.8
            );
            assert!(request["systemPrompt"].is_string());
        });
    }
}

#[tokio::test]
async fn refused_sampling_is_a_tool_error_in_legacy_and_no_retry_in_modern() {
    let client = connect(Era::Both, &LEGACY, LEGACY.client().refusing_sampling()).await;
    let result = call_tool(&client, "analyze_flights", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(
        text_of(&result).contains("refused sampling"),
        "{}",
        text_of(&result)
    );
    assert!(text_of(&result).contains("User rejected sampling request"));

    // A modern client that refuses simply does not retry: rmcp surfaces the handler's error.
    let client = connect(Era::Both, &MODERN, MODERN.client().refusing_sampling()).await;
    let error = client
        .call_tool(call("analyze_flights", json!({})))
        .await
        .unwrap_err();
    assert_eq!(error_code(&error), -1);
}

// ---------------------------------------------------------------------------------------------
// list_roots

#[tokio::test]
async fn list_roots_reports_roots_and_list_changed_notifications() {
    let roots = json!([
        {"uri": "file:///work/project", "name": "project"},
        {"uri": "file:///work/library"}
    ]);
    for_each_era!(LEGACY, |era| {
        let client = connect(era, &LEGACY, LEGACY.client()).await;
        client.notify_roots_list_changed().await.unwrap();
        client.notify_roots_list_changed().await.unwrap();
        // Notifications and requests are handled concurrently; wait for both to land.
        let mut result = call_tool(&client, "list_roots", json!({})).await;
        for _ in 0..50 {
            if structured(&result)["listChangedCount"] == 2 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            result = call_tool(&client, "list_roots", json!({})).await;
        }
        let expected = json!({"roots": roots, "listChangedCount": 2});
        assert_eq!(structured(&result), &expected);
        assert_eq!(
            serde_json::from_str::<Value>(text_of(&result)).unwrap(),
            expected
        );
    });
    for_each_era!(MODERN, |era| {
        let test_client = MODERN.client();
        let client = connect(era, &MODERN, test_client.clone()).await;
        let result = call_tool(&client, "list_roots", json!({})).await;
        assert_eq!(
            structured(&result),
            &json!({"roots": roots, "listChangedCount": 0})
        );
        assert_eq!(test_client.requests(), [json!({"method": "roots/list"})]);
    });
}

// ---------------------------------------------------------------------------------------------
// add, echo

#[tokio::test]
async fn add_and_echo_need_nothing_from_the_client() {
    for side in [LEGACY, MODERN] {
        let test_client = side.client();
        let client = connect(Era::Both, &side, test_client.clone()).await;

        let result = call_tool(&client, "add", json!({"a": 2, "b": 3})).await;
        assert_eq!(text_of(&result), "2 + 3 = 5");
        assert_eq!(structured(&result), &json!({"sum": 5}));
        assert!(structured(&result)["sum"].is_i64());

        let result = call_tool(&client, "add", json!({"a": 1.5, "b": 2})).await;
        assert_eq!(structured(&result), &json!({"sum": 3.5}));

        let result = call_tool(&client, "add", json!({"a": 1})).await;
        assert_eq!(result.is_error, Some(true), "missing b is a tool error");

        let result = call_tool(&client, "echo", json!({"text": "héllo\nworld"})).await;
        assert_eq!(text_of(&result), "héllo\nworld");

        assert!(test_client.requests().is_empty(), "no client features used");

        let error = client.call_tool(call("nope", json!({}))).await.unwrap_err();
        assert_eq!(error_code(&error), ErrorCode::INVALID_PARAMS.0);
    }
}

#[tokio::test]
async fn cancelling_a_legacy_call_withdraws_its_question() {
    let hold = Arc::new(Hold::default());
    let client = connect(Era::Both, &LEGACY, LEGACY.client().holding(hold.clone())).await;
    let request = CallToolRequest::new(call("book_trip", json!({})));
    let pending = client
        .send_cancellable_request(request.into(), PeerRequestOptions::no_options())
        .await
        .unwrap();
    let within = std::time::Duration::from_secs(5);
    tokio::time::timeout(within, hold.asked.notified())
        .await
        .expect("asked");
    pending
        .cancel(Some("user pressed Escape".into()))
        .await
        .unwrap();
    tokio::time::timeout(within, hold.withdrawn.notified())
        .await
        .expect("the server cancels its elicitation/create");
}

// ---------------------------------------------------------------------------------------------
// Capabilities

#[tokio::test]
async fn undeclared_capabilities_are_never_asked() {
    let nothing = json!({});
    let legacy = TestClient::with_capabilities(ProtocolVersion::V_2025_11_25, nothing.clone());
    let client = connect(Era::Both, &LEGACY, legacy.clone()).await;
    for tool in ["book_trip", "login", "analyze_flights", "list_roots"] {
        let result = call_tool(&client, tool, json!({})).await;
        assert_eq!(result.is_error, Some(true), "{tool}");
        assert!(
            text_of(&result).contains("did not declare"),
            "{}",
            text_of(&result)
        );
    }
    assert!(legacy.requests().is_empty());

    let modern = TestClient::with_capabilities(ProtocolVersion::V_2026_07_28, nothing);
    let client = connect(Era::Both, &MODERN, modern.clone()).await;
    let error = client
        .call_tool(call("analyze_flights", json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        error_code(&error),
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY.0
    );
    let ServiceError::McpError(error) = error else {
        unreachable!()
    };
    assert_eq!(
        error.data.unwrap()["requiredCapabilities"],
        json!({"sampling": {}})
    );
    assert!(modern.requests().is_empty());
}

#[tokio::test]
async fn a_2025_06_18_client_gets_forms_but_not_url_mode() {
    let side = Side::Legacy(ProtocolVersion::V_2025_06_18);
    let capabilities = json!({"roots": {}, "sampling": {}, "elicitation": {}});
    let test_client = TestClient::with_capabilities(side.version(), capabilities);
    let client = connect(Era::Both, &side, test_client.clone()).await;

    let result = call_tool(&client, "book_trip", json!({})).await;
    assert_eq!(structured(&result)["action"], "accept");
    let result = call_tool(&client, "login", json!({})).await;
    assert_eq!(result.is_error, Some(true));
    assert!(text_of(&result).contains("URL elicitation"));
    assert_eq!(test_client.requests().len(), 1);
}

// ---------------------------------------------------------------------------------------------
// MRTR rounds, driven by hand

fn input_required(response: CallToolResponse) -> InputRequiredResult {
    match response {
        CallToolResponse::InputRequired(result) => result,
        other => panic!("expected input_required, got {other:?}"),
    }
}

#[tokio::test]
async fn mrtr_rounds_are_per_call_and_validated() {
    let client = connect(Era::Modern, &MODERN, MODERN.client()).await;
    let first = call("book_trip", json!({"destination": "Oslo"}));
    let round1 = input_required(client.call_tool_once(first.clone()).await.unwrap());

    let wire = serde_json::to_value(&round1).unwrap();
    assert_eq!(wire["resultType"], "input_required");
    let entry = &wire["inputRequests"]["trip"];
    assert_eq!(entry["method"], "elicitation/create");
    assert_eq!(entry["params"]["message"], "Confirm your trip to Oslo");
    let state = round1.request_state.clone().expect("requestState");

    // Another call gets another state.
    let other = input_required(client.call_tool_once(first.clone()).await.unwrap());
    assert_ne!(other.request_state.as_ref(), Some(&state));

    // A retry without the answer is asked again, with the next round's state.
    let retry = first.clone().with_request_state(state.clone());
    let round2 = input_required(client.call_tool_once(retry).await.unwrap());
    assert!(round2.input_requests.unwrap().contains_key("trip"));
    assert_ne!(round2.request_state.as_ref(), Some(&state));

    // The answer completes the call.
    let answer = json!({"action": "decline"});
    let responses = [("trip".to_owned(), answer)].into();
    let done = first
        .clone()
        .with_request_state(state.clone())
        .with_input_responses(responses);
    let CallToolResponse::Complete(result) = client.call_tool_once(done).await.unwrap() else {
        panic!("expected a complete result");
    };
    assert_eq!(structured(&result), &json!({"action": "decline"}));

    // State that was tampered with, or issued for other arguments or another tool, is refused.
    let tampered = format!("0{state}");
    let other_args = call("book_trip", json!({"destination": "Rome"}));
    for params in [
        first.clone().with_request_state(tampered),
        other_args.with_request_state(state.clone()),
        call("login", json!({"destination": "Oslo"})).with_request_state(state.clone()),
    ] {
        let error = client.call_tool_once(params).await.unwrap_err();
        assert_eq!(error_code(&error), ErrorCode::INVALID_PARAMS.0);
    }
}

// ---------------------------------------------------------------------------------------------
// Era gating

#[tokio::test]
async fn legacy_era_refuses_discover_so_auto_clients_fall_back() {
    let error = try_connect(Era::Legacy, MODERN.client(), MODERN.lifecycle())
        .await
        .err()
        .expect("discover must fail against a legacy-only server");
    let ClientInitializeError::JsonRpcError(error) = error else {
        panic!("expected a JSON-RPC error, got {error}");
    };
    assert_eq!(error.code, ErrorCode::METHOD_NOT_FOUND);

    let auto = ClientLifecycleMode::Auto {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        legacy_version: Some(ProtocolVersion::V_2025_11_25),
    };
    let client = try_connect(Era::Legacy, LEGACY.client(), auto)
        .await
        .unwrap();
    let version = client.peer_info().unwrap().protocol_version.clone();
    assert_eq!(version, ProtocolVersion::V_2025_11_25);
    let result = call_tool(&client, "book_trip", json!({})).await;
    assert_eq!(structured(&result)["action"], "accept");
}

#[tokio::test]
async fn modern_era_refuses_initialize() {
    let error = try_connect(Era::Modern, LEGACY.client(), LEGACY.lifecycle())
        .await
        .err()
        .expect("initialize must fail against a modern-only server");
    let ClientInitializeError::JsonRpcError(error) = error else {
        panic!("expected a JSON-RPC error, got {error}");
    };
    assert_eq!(error.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    assert_eq!(error.data.unwrap()["supported"], json!(["2026-07-28"]));
}

/// Raw newline-delimited JSON-RPC, to see the wire and that a refusal keeps the connection open.
struct RawClient {
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
    writer: tokio::io::WriteHalf<DuplexStream>,
}

impl RawClient {
    fn start(era: Era) -> Self {
        let (reader, writer) = tokio::io::split(start_server(era));
        Self {
            lines: BufReader::new(reader).lines(),
            writer,
        }
    }

    async fn request(&mut self, message: Value) -> Value {
        self.send(message.clone()).await;
        let reply = self.next().await;
        assert_eq!(reply["id"], message["id"], "{reply}");
        reply
    }

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
    }

    /// The server's next message.
    async fn next(&mut self) -> Value {
        let line = self.lines.next_line().await.unwrap().expect("a message");
        serde_json::from_str(&line).unwrap()
    }
}

fn discover_request(id: u32) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "server/discover", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
    }}})
}

fn initialize_request(id: u32) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}
    }})
}

/// The server's capabilities, the same in `initialize` and `server/discover`.
fn capabilities() -> Value {
    json!({"logging": {}, "resources": {}, "tools": {}, "extensions": {
        "io.modelcontextprotocol/tasks": {}, "io.modelcontextprotocol/skills": {}
    }})
}

#[tokio::test]
async fn refusals_keep_the_connection_open() {
    let mut legacy = RawClient::start(Era::Legacy);
    let reply = legacy.request(discover_request(1)).await;
    assert_eq!(reply["error"]["code"], -32601);
    let reply = legacy.request(initialize_request(2)).await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25");
    assert_eq!(reply["result"]["serverInfo"]["name"], "mcp-sidecar-demo");
    assert_eq!(reply["result"]["capabilities"], capabilities());

    let mut modern = RawClient::start(Era::Modern);
    let reply = modern.request(initialize_request(1)).await;
    assert_eq!(reply["error"]["code"], -32022);
    let reply = modern.request(discover_request(2)).await;
    assert_eq!(reply["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(reply["result"]["capabilities"], capabilities());
    let server_info = &reply["result"]["_meta"]["io.modelcontextprotocol/serverInfo"];
    assert_eq!(server_info["name"], "mcp-sidecar-demo");
    assert_eq!(server_info["version"], env!("CARGO_PKG_VERSION"));
}

#[tokio::test]
async fn both_era_discover_lists_every_version() {
    let mut both = RawClient::start(Era::Both);
    let reply = both.request(discover_request(1)).await;
    assert_eq!(
        reply["result"]["supportedVersions"],
        json!([
            "2024-11-05",
            "2025-03-26",
            "2025-06-18",
            "2025-11-25",
            "2026-07-28"
        ])
    );
}

fn tools_call(id: u32, tool: &str, capabilities: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": tool, "arguments": {}, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": capabilities,
            "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"}
        }
    }})
}

/// rmcp would write the sampling floats widened from `f32` (0.2 → 0.20000000298023224); the
/// demo sends the request's JSON as written, in both eras.
#[tokio::test]
async fn sampling_numbers_go_out_exact() {
    let exact = |params: &Value| {
        assert_eq!(params["temperature"], json!(0.2), "{params}");
        assert_eq!(
            params["modelPreferences"]["intelligencePriority"],
            json!(0.8),
            "{params}"
        );
        assert_eq!(params["maxTokens"], 400);
        assert_eq!(params["messages"][0]["role"], "user");
    };
    let mut modern = RawClient::start(Era::Modern);
    let reply = modern
        .request(tools_call(1, "analyze_flights", json!({"sampling": {}})))
        .await;
    let request = &reply["result"]["inputRequests"]["flights"];
    assert_eq!(request["method"], "sampling/createMessage", "{reply}");
    exact(&request["params"]);
    assert!(reply["result"]["requestState"].is_string(), "{reply}");

    let mut legacy = RawClient::start(Era::Legacy);
    let mut initialize = initialize_request(1);
    initialize["params"]["capabilities"] = json!({"sampling": {}});
    legacy.request(initialize).await;
    legacy
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    legacy
        .send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "analyze_flights", "arguments": {}}}))
        .await;
    let asked = legacy.next().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    exact(&asked["params"]);
}

#[tokio::test]
async fn input_required_on_the_wire() {
    let mut raw = RawClient::start(Era::Modern);
    let capabilities = json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}});
    let cases = [
        ("book_trip", "trip", "elicitation/create"),
        ("login", "login", "elicitation/create"),
        ("analyze_flights", "flights", "sampling/createMessage"),
        ("list_roots", "roots", "roots/list"),
    ];
    for (id, (tool, key, method)) in (1..).zip(cases) {
        let reply = raw
            .request(tools_call(id, tool, capabilities.clone()))
            .await;
        let result = &reply["result"];
        assert_eq!(result["resultType"], "input_required", "{reply}");
        let requests = result["inputRequests"].as_object().unwrap();
        assert_eq!(requests.keys().collect::<Vec<_>>(), [key]);
        assert_eq!(requests[key]["method"], method);
        let state = result["requestState"].as_str().unwrap();
        let (body, tag) = state.rsplit_once('.').unwrap();
        assert!(
            body.chars()
                .chain(tag.chars())
                .all(|c| c.is_ascii_hexdigit()),
            "{state}"
        );
    }
    let reply = raw.request(tools_call(9, "add", json!({}))).await;
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(
        reply["result"]["isError"], true,
        "add without arguments: {reply}"
    );
}

mod skills;
mod tasks;
