//! The OpenAI-compatible provider against a small chat-completions server started here on
//! 127.0.0.1 (the tests' HTTP server, `support::http`), which records what it was sent.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp_sidecar::sampling::openai::{OpenAi, OpenAiConfig};
use mcp_sidecar::sampling::provider::Provider;
use mcp_sidecar::sampling::types::*;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

use crate::support::http::{HttpServer, Request, answer, closed_port, response};

/// What the test server answers to one request.
#[derive(Debug, Clone)]
enum Reply {
    /// A whole response.
    Body {
        status: u16,
        content_type: &'static str,
        body: String,
    },
    /// `text/event-stream`, written piece by piece with a pause between, then the connection is
    /// closed.
    Stream(Vec<String>),
    /// Like `Stream`, but then the connection stays open and silent.
    StreamThenSilence(Vec<String>),
    /// The request is read and never answered.
    Silence,
    /// A redirect to `location`.
    Redirect { status: u16, location: String },
}

fn json_reply(body: Value) -> Reply {
    Reply::Body {
        status: 200,
        content_type: "application/json",
        body: body.to_string(),
    }
}

struct Server {
    base_url: String,
    http: HttpServer,
}

impl Server {
    async fn start(replies: Vec<Reply>) -> Server {
        let replies = Arc::new(Mutex::new(VecDeque::from(replies)));
        let http = HttpServer::start(move |_, conn| serve(conn, replies.clone())).await;
        Server {
            base_url: format!("{}/v1", http.url()),
            http,
        }
    }

    fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    fn config(&self, stream: bool) -> OpenAiConfig {
        OpenAiConfig {
            stream,
            ..OpenAiConfig::new(&self.base_url, "test-model")
        }
    }

    fn requests(&self) -> Vec<Request> {
        self.http.requests()
    }

    fn only_request(&self) -> Request {
        let requests = self.requests();
        assert_eq!(requests.len(), 1, "expected one request, got {requests:#?}");
        requests[0].clone()
    }
}

async fn serve(mut conn: TcpStream, replies: Arc<Mutex<VecDeque<Reply>>>) {
    let reply = replies.lock().unwrap().pop_front().unwrap_or(Reply::Body {
        status: 500,
        content_type: "text/plain",
        body: "the test scripted no reply for this request".into(),
    });
    match reply {
        Reply::Body {
            status,
            content_type,
            body,
        } => answer(conn, &response(status, content_type, "", &body)).await,
        Reply::Stream(pieces) => {
            write_stream(&mut conn, &pieces).await;
            let _ = conn.shutdown().await;
        }
        Reply::StreamThenSilence(pieces) => {
            write_stream(&mut conn, &pieces).await;
            // Silent on purpose (the behaviour under test): the connection stays open.
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        // Never answers, on purpose (the behaviour under test).
        Reply::Silence => tokio::time::sleep(Duration::from_secs(30)).await,
        Reply::Redirect { status, location } => {
            let extra = format!("Location: {location}\r\n");
            answer(conn, &response(status, "text/plain", &extra, "")).await;
        }
    }
}

async fn write_stream(conn: &mut TcpStream, pieces: &[String]) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
    let _ = conn.write_all(head.as_bytes()).await;
    for piece in pieces {
        let _ = conn.write_all(piece.as_bytes()).await;
        let _ = conn.flush().await;
        // Each piece arrives on its own (the stream parsing is under test), not as one read.
        tokio::time::sleep(Duration::from_millis(15)).await;
    }
}

fn params(value: Value) -> CreateMessageParams {
    serde_json::from_value(value).expect("valid CreateMessageParams")
}

fn question() -> CreateMessageParams {
    params(json!({
        "systemPrompt": "Answer in one word.",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Capital of Italy?"}},
            {"role": "assistant", "content": {"type": "text", "text": "Rome."}},
            {"role": "user", "content": [{"type": "text", "text": "And of France?"}]},
        ],
        "maxTokens": 64,
        "temperature": 0.5,
        "stopSequences": ["END"],
        "includeContext": "none",
    }))
}

fn weather_request() -> CreateMessageParams {
    params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "Weather in Paris for 2 days?"}}],
        "maxTokens": 200,
        "tools": [{
            "name": "get_weather",
            "description": "Forecast by city",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
        }],
        "toolChoice": {"mode": "auto"},
    }))
}

fn weather_reply() -> Value {
    json!({
        "id": "chatcmpl-9", "object": "chat.completion", "created": 1, "model": "test-model-v2",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": "Looking it up.",
            "tool_calls": [{"id": "call_w1", "type": "function",
                            "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\",\"days\":2}"}}],
        }}],
    })
}

fn weather_result() -> CreateMessageResult {
    CreateMessageResult {
        role: Role::Assistant,
        content: vec![
            Block::text("Looking it up."),
            Block::Other(json!({
                "type": "tool_use", "id": "call_w1", "name": "get_weather",
                "input": {"city": "Paris", "days": 2},
            })),
        ],
        model: "test-model-v2".into(),
        stop_reason: Some("toolUse".into()),
    }
}

/// [`weather_reply`] as an event stream, cut into pieces at awkward places: inside a `data:`
/// line, between the two halves of the tool call's arguments, before a blank line.
fn weather_stream() -> Vec<String> {
    let chunk = |delta: Value, finish: Value| {
        format!(
            "data: {}\n\n",
            json!({"id": "chatcmpl-9", "object": "chat.completion.chunk", "model": "test-model-v2",
                   "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        )
    };
    let text = [
        ": this is a comment line\n\n".to_owned(),
        chunk(json!({"role": "assistant", "content": ""}), Value::Null),
        chunk(json!({"content": "Looking"}), Value::Null),
        chunk(json!({"content": " it up."}), Value::Null),
        chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_w1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":\"Pa"}}]}),
            Value::Null,
        ),
        chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "ris\",\"days\":2}"}}]}),
            Value::Null,
        ),
        chunk(json!({}), json!("tool_calls")),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat();
    // Cut every 37 bytes (on char boundaries: the text is ASCII).
    assert!(text.is_ascii());
    text.as_bytes()
        .chunks(37)
        .map(|c| String::from_utf8(c.to_vec()).unwrap())
        .collect()
}

/// A variable of this process's environment whose value can stand in for an API key.
fn some_env_var() -> (String, String) {
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(_, v)| v.len() >= 12 && v.bytes().all(|b| b.is_ascii_graphic()))
        .collect();
    vars.sort();
    vars.into_iter()
        .next()
        .expect("some environment variable with a long plain value (PATH, HOME…)")
}

#[tokio::test]
async fn a_plain_completion_sends_the_whole_request() {
    let server = Server::start(vec![json_reply(json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model-v1",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Paris."}, "finish_reason": "stop"}],
    }))])
    .await;
    let provider = OpenAi::new(server.config(false)).unwrap();

    let result = provider.complete(&question(), None).await.unwrap();

    assert_eq!(
        result,
        CreateMessageResult {
            role: Role::Assistant,
            content: vec![Block::text("Paris.")],
            model: "test-model-v1".into(),
            stop_reason: Some("endTurn".into()),
        }
    );
    let request = server.only_request();
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        request.body,
        json!({
            "model": "test-model",
            "messages": [
                {"role": "system", "content": "Answer in one word."},
                {"role": "user", "content": "Capital of Italy?"},
                {"role": "assistant", "content": "Rome."},
                {"role": "user", "content": "And of France?"},
            ],
            "max_tokens": 64,
            "temperature": 0.5,
            "stop": ["END"],
            "stream": false,
        })
    );
}

#[tokio::test]
async fn the_chosen_model_wins_and_is_reported_when_the_reply_has_none() {
    let server = Server::start(vec![json_reply(json!({
        "choices": [{"message": {"content": "ok"}, "finish_reason": "length"}],
    }))])
    .await;
    let provider = OpenAi::new(server.config(false)).unwrap();

    let result = provider
        .complete(&question(), Some("other-model"))
        .await
        .unwrap();

    assert_eq!(result.model, "other-model");
    assert_eq!(result.stop_reason.as_deref(), Some("maxTokens"));
    assert_eq!(server.only_request().body["model"], "other-model");
}

#[tokio::test]
async fn a_tool_call_becomes_a_tool_use_block() {
    let server = Server::start(vec![json_reply(weather_reply())]).await;
    let provider = OpenAi::new(server.config(false)).unwrap();

    let result = provider.complete(&weather_request(), None).await.unwrap();

    assert_eq!(result, weather_result());
    let body = server.only_request().body;
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "get_weather",
            "description": "Forecast by city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
        }}])
    );
    assert_eq!(body["tool_choice"], "auto");
    assert_eq!(body["max_tokens"], 200);
}

#[tokio::test]
async fn a_tool_result_round_becomes_tool_messages() {
    let server = Server::start(vec![json_reply(json!({
        "model": "test-model",
        "choices": [{"message": {"role": "assistant", "content": "Sunny, 18°C."}, "finish_reason": "stop"}],
    }))])
    .await;
    let provider = OpenAi::new(server.config(false)).unwrap();
    let mut request = weather_request();
    request.messages.push(SamplingMessage {
        role: Role::Assistant,
        content: weather_result().content,
        meta: None,
    });
    request.messages.push(
        params(json!({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "toolUseId": "call_w1", "content": [
            {"type": "text", "text": "Sunny"}, {"type": "text", "text": "18°C"},
        ], "isError": false},
    ]}], "maxTokens": 1}))
        .messages
        .remove(0),
    );

    let result = provider.complete(&request, None).await.unwrap();

    assert_eq!(result.content, vec![Block::text("Sunny, 18°C.")]);
    assert_eq!(result.stop_reason.as_deref(), Some("endTurn"));
    assert_eq!(
        server.only_request().body["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris for 2 days?"},
            {"role": "assistant", "content": "Looking it up.", "tool_calls": [
                {"id": "call_w1", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\",\"days\":2}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_w1", "content": "Sunny\n18°C"},
        ])
    );
}

#[tokio::test]
async fn a_streamed_reply_gives_the_same_result_as_a_whole_one() {
    let server = Server::start(vec![
        json_reply(weather_reply()),
        Reply::Stream(weather_stream()),
    ])
    .await;
    let whole = OpenAi::new(server.config(false)).unwrap();
    let streamed = OpenAi::new(server.config(true)).unwrap();

    let from_whole = whole.complete(&weather_request(), None).await.unwrap();
    let from_stream = streamed.complete(&weather_request(), None).await.unwrap();

    assert_eq!(from_whole, weather_result());
    assert_eq!(from_stream, from_whole);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["stream"], false);
    assert_eq!(requests[1].body["stream"], true);
    assert_eq!(requests[1].header("accept"), Some("text/event-stream"));
}

#[tokio::test]
async fn the_api_key_is_sent_but_never_shown() {
    let (var, key) = some_env_var();
    let server = Server::start(vec![
        json_reply(json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]})),
        Reply::Body {
            status: 401,
            content_type: "application/json",
            body: json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}).to_string(),
        },
    ])
    .await;
    let provider = OpenAi::new(OpenAiConfig {
        api_key_env: Some(var.clone()),
        ..server.config(false)
    })
    .unwrap();

    provider.complete(&question(), None).await.unwrap();
    let err = provider.complete(&question(), None).await.unwrap_err().0;

    let requests = server.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {key}").as_str())
    );
    assert!(
        err.contains("401") && err.contains("Incorrect API key provided"),
        "{err}"
    );
    assert!(!err.contains(&key), "the error shows the key: {err}");
    assert!(!format!("{provider:?}").contains(&key));
    assert!(!provider.name().contains(&key));
}

#[tokio::test]
async fn an_unset_key_variable_is_a_clear_error() {
    let err = OpenAi::new(OpenAiConfig {
        api_key_env: Some("MCP_SIDECAR_TEST_NO_SUCH_VARIABLE_7f3e".into()),
        ..OpenAiConfig::new("http://127.0.0.1:1/v1", "m")
    })
    .unwrap_err()
    .0;
    assert!(
        err.contains("MCP_SIDECAR_TEST_NO_SUCH_VARIABLE_7f3e") && err.contains("not set"),
        "{err}"
    );
}

#[tokio::test]
async fn http_errors_carry_the_status_and_the_message() {
    let server = Server::start(vec![
        Reply::Body {
            status: 500,
            content_type: "application/json",
            body: json!({"error": {"message": "the model crashed", "type": "server_error", "code": null}}).to_string(),
        },
        Reply::Body {
            status: 404,
            content_type: "text/plain",
            body: format!("404 page not found {}", "x".repeat(500)),
        },
    ])
    .await;
    let provider = OpenAi::new(server.config(true)).unwrap();

    let err = provider.complete(&question(), None).await.unwrap_err().0;
    assert!(err.contains(&server.endpoint()), "{err}");
    assert!(err.contains("HTTP 500"), "{err}");
    assert!(err.contains("the model crashed"), "{err}");

    let err = provider.complete(&question(), None).await.unwrap_err().0;
    assert!(
        err.contains("HTTP 404") && err.contains("404 page not found"),
        "{err}"
    );
    assert!(err.len() < 400, "the body is quoted whole: {err}");
}

#[tokio::test]
async fn a_silent_server_times_out() {
    let server = Server::start(vec![Reply::Silence]).await;
    let provider = OpenAi::new(OpenAiConfig {
        timeout: Duration::from_secs(1),
        ..server.config(false)
    })
    .unwrap();

    let started = Instant::now();
    let err = provider.complete(&question(), None).await.unwrap_err().0;
    let took = started.elapsed();

    assert_eq!(
        err,
        format!("{} did not answer within 1 s", server.endpoint())
    );
    assert!(took >= Duration::from_millis(900), "gave up after {took:?}");
    assert!(took < Duration::from_millis(2500), "took {took:?}");
}

#[tokio::test]
async fn a_stream_that_stalls_times_out() {
    let mut pieces = weather_stream();
    pieces.truncate(3);
    let server = Server::start(vec![Reply::StreamThenSilence(pieces)]).await;
    let provider = OpenAi::new(OpenAiConfig {
        timeout: Duration::from_secs(1),
        ..server.config(true)
    })
    .unwrap();

    let started = Instant::now();
    let err = provider.complete(&question(), None).await.unwrap_err().0;

    assert!(
        err.contains(&server.endpoint()) && err.contains("within 1 s"),
        "{err}"
    );
    assert!(started.elapsed() < Duration::from_millis(2500));
}

#[tokio::test]
async fn malformed_replies_are_clear_errors() {
    let cut_stream = weather_stream().concat().replace("data: [DONE]\n\n", "");
    let cut_mid_event = weather_stream()[..4].concat();
    let server = Server::start(vec![
        Reply::Body {
            status: 200,
            content_type: "application/json",
            body: "{\"choices\": [{\"message\": ".into(),
        },
        json_reply(json!({"choices": [{"message": {"tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": "{city: Paris}"}},
        ]}, "finish_reason": "tool_calls"}]})),
        Reply::Stream(vec!["<html><body>Bad gateway</body></html>\n".into()]),
        Reply::Stream(vec![cut_stream]),
        Reply::Stream(vec![cut_mid_event]),
        Reply::Stream(vec!["data: {\"choices\": [{\"delta\": \n\n".into()]),
    ])
    .await;
    let whole = OpenAi::new(server.config(false)).unwrap();
    let streamed = OpenAi::new(server.config(true)).unwrap();
    let unusable = format!("unusable reply from {}: ", server.endpoint());

    let err = whole.complete(&question(), None).await.unwrap_err().0;
    assert!(
        err.starts_with(&unusable) && err.contains("not valid JSON"),
        "{err}"
    );

    let err = whole.complete(&question(), None).await.unwrap_err().0;
    assert!(err.starts_with(&unusable), "{err}");
    assert!(
        err.contains("`get_weather`") && err.contains("{city: Paris}"),
        "{err}"
    );

    let err = streamed.complete(&question(), None).await.unwrap_err().0;
    assert!(
        err.starts_with(&unusable) && err.contains("Bad gateway"),
        "{err}"
    );

    let err = streamed.complete(&question(), None).await.unwrap_err().0;
    assert!(
        err.starts_with(&unusable) && err.contains("ended before `data: [DONE]`"),
        "{err}"
    );
    let err = streamed.complete(&question(), None).await.unwrap_err().0;
    assert!(
        err.starts_with(&unusable) && err.contains("ended before `data: [DONE]`"),
        "{err}"
    );

    let err = streamed.complete(&question(), None).await.unwrap_err().0;
    assert!(
        err.starts_with(&unusable) && err.contains("not valid JSON"),
        "{err}"
    );
}

#[tokio::test]
async fn a_closed_port_is_connection_refused() {
    let port = closed_port();
    let provider = OpenAi::new(OpenAiConfig {
        stream: false,
        ..OpenAiConfig::new(format!("http://127.0.0.1:{port}/v1"), "m")
    })
    .unwrap();

    let started = Instant::now();
    let err = provider.complete(&question(), None).await.unwrap_err().0;

    assert_eq!(
        err,
        format!("could not reach http://127.0.0.1:{port}/v1/chat/completions: connection refused")
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn requests_that_cannot_be_mapped_fail_before_sending() {
    let server = Server::start(vec![]).await;
    let provider = OpenAi::new(server.config(false)).unwrap();
    let request = params(json!({
        "messages": [{"role": "assistant", "content": {"type": "image", "data": "AA", "mimeType": "image/png"}}],
        "maxTokens": 10,
    }));

    let err = provider.complete(&request, None).await.unwrap_err().0;

    assert!(
        err.starts_with(&format!(
            "cannot send this request to {}",
            server.endpoint()
        )),
        "{err}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_cross_origin_redirect_is_not_followed_and_the_key_stays_home() {
    let (var, key) = some_env_var();
    let elsewhere = Server::start(vec![json_reply(
        json!({"choices": [{"message": {"content": "stolen"}, "finish_reason": "stop"}]}),
    )])
    .await;
    let server = Server::start(vec![
        Reply::Redirect {
            status: 307,
            location: format!("{}?k=1", elsewhere.endpoint()),
        },
        Reply::Redirect {
            status: 302,
            location: "/v1/elsewhere".into(),
        },
    ])
    .await;
    let provider = OpenAi::new(OpenAiConfig {
        api_key_env: Some(var.clone()),
        ..server.config(false)
    })
    .unwrap();

    let err = provider.complete(&question(), None).await.unwrap_err().0;
    assert!(
        err.contains("HTTP 307") && err.contains("not followed"),
        "{err}"
    );
    let origin = elsewhere.base_url.trim_end_matches("/v1");
    assert!(err.contains(origin) && !err.contains("k=1"), "{err}");
    assert!(!err.contains(&key), "{err}");
    assert!(
        elsewhere.requests().is_empty(),
        "the other origin was asked: {:#?}",
        elsewhere.requests()
    );
    // A same-origin 302 would turn the POST into a GET: not followed either.
    let err = provider.complete(&question(), None).await.unwrap_err().0;
    assert!(err.contains("HTTP 302"), "{err}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_same_origin_307_is_followed_with_the_body() {
    let server = Server::start(vec![
        Reply::Redirect {
            status: 307,
            location: "/v2/chat/completions".into(),
        },
        json_reply(
            json!({"choices": [{"message": {"content": "Paris."}, "finish_reason": "stop"}]}),
        ),
    ])
    .await;
    let provider = OpenAi::new(server.config(false)).unwrap();
    let result = provider.complete(&question(), None).await.unwrap();
    assert_eq!(result.content, vec![Block::text("Paris.")]);
    let requests = server.requests();
    assert_eq!(
        requests[1].request_line,
        "POST /v2/chat/completions HTTP/1.1"
    );
    assert_eq!(requests[1].body["max_tokens"], 64);
}

#[tokio::test]
async fn a_key_over_plain_http_to_another_machine_is_warned_about() {
    let (var, key) = some_env_var();
    let remote = OpenAi::new(OpenAiConfig {
        api_key_env: Some(var.clone()),
        ..OpenAiConfig::new("http://models.example.com:8080/v1", "m")
    })
    .unwrap();
    let warning = remote.insecure_key_warning().expect("a warning");
    assert!(
        warning.contains("http://models.example.com:8080/v1/chat/completions")
            && warning.contains("https://"),
        "{warning}"
    );
    assert!(!warning.contains(&key));
    for quiet in [
        // Encrypted, on this machine, or no key to leak.
        OpenAiConfig {
            api_key_env: Some(var.clone()),
            ..OpenAiConfig::new("https://models.example.com/v1", "m")
        },
        OpenAiConfig {
            api_key_env: Some(var.clone()),
            ..OpenAiConfig::new("http://127.0.0.1:11434/v1", "m")
        },
        OpenAiConfig {
            api_key_env: Some(var.clone()),
            ..OpenAiConfig::new("http://localhost:11434/v1", "m")
        },
        OpenAiConfig::new("http://models.example.com/v1", "m"),
    ] {
        let base = quiet.base_url.clone();
        assert_eq!(
            OpenAi::new(quiet).unwrap().insecure_key_warning(),
            None,
            "{base}"
        );
    }
}
