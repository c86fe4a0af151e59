//! The OpenAI-compatible provider's unit tests: settings, request mapping, reply parsing (whole
//! and streamed, however the stream is cut), without a network.

use std::time::Duration;

use serde_json::{Value, json};

use super::client::error_detail;
use super::reply::{Completion, read_completion};
use super::request::{audio_format, chat_request};
use super::stream::{self, END_OF_BODY, Framing, ReadError, StreamError};
use super::*;
use crate::sampling::provider::Provider;
use crate::sampling::types::{Block, CreateMessageParams, CreateMessageResult, Role};

fn params(value: Value) -> CreateMessageParams {
    serde_json::from_value(value).expect("valid CreateMessageParams")
}

#[test]
fn config_reads_camel_case_with_defaults() {
    let config: OpenAiConfig = serde_json::from_value(json!({
        "baseUrl": "http://127.0.0.1:11434/v1",
        "model": "llama3.2",
    }))
    .unwrap();
    assert_eq!(
        config,
        OpenAiConfig::new("http://127.0.0.1:11434/v1", "llama3.2")
    );
    assert!(config.stream);
    assert_eq!(config.timeout, Duration::from_secs(120));

    let config: OpenAiConfig = serde_json::from_value(json!({
        "baseUrl": "https://api.openai.com/v1",
        "model": "gpt-4o-mini",
        "apiKeyEnv": "OPENAI_API_KEY",
        "stream": false,
        "timeout": 2.5,
    }))
    .unwrap();
    assert_eq!(config.api_key_env.as_deref(), Some("OPENAI_API_KEY"));
    assert!(!config.stream);
    assert_eq!(config.timeout, Duration::from_millis(2500));

    for bad in [json!(0), json!(-1), json!("10")] {
        let err = serde_json::from_value::<OpenAiConfig>(
            json!({"baseUrl": "http://x/v1", "model": "m", "timeout": bad}),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("timeout") || err.to_string().contains("invalid type"),
            "{err}"
        );
    }
}

#[test]
fn new_checks_the_config_and_builds_the_endpoint() {
    let ai = OpenAi::new(OpenAiConfig::new("http://127.0.0.1:11434/v1/", "m")).unwrap();
    assert_eq!(ai.endpoint(), "http://127.0.0.1:11434/v1/chat/completions");
    assert_eq!(ai.name(), "openai (http://127.0.0.1:11434/v1)");

    // https needs the ring provider: building the client must not panic.
    let ai = OpenAi::new(OpenAiConfig::new(
        "https://user:secret@example.com/openai/v1?api-version=1",
        "m",
    ))
    .unwrap();
    assert_eq!(
        ai.endpoint(),
        "https://example.com/openai/v1/chat/completions"
    );
    assert_eq!(
        ai.url.as_str(),
        "https://user:secret@example.com/openai/v1/chat/completions?api-version=1"
    );
    assert!(!format!("{ai:?}").contains("secret") && !ai.name().contains("secret"));

    let err = OpenAi::new(OpenAiConfig::new("localhost:11434", "m")).unwrap_err();
    assert!(err.0.contains("http://"), "{err}");
    let err = OpenAi::new(OpenAiConfig::new("not a url", "m")).unwrap_err();
    assert!(err.0.contains("not a URL"), "{err}");
    let mut config = OpenAiConfig::new("http://127.0.0.1:1/v1", "m");
    config.api_key_env = Some("MCP_SIDECAR_OPENAI_UNIT_TEST_UNSET_VAR".into());
    let err = OpenAi::new(config).unwrap_err();
    assert!(
        err.0.contains("MCP_SIDECAR_OPENAI_UNIT_TEST_UNSET_VAR"),
        "{err}"
    );
}

#[test]
fn request_maps_every_field() {
    let request = params(json!({
        "systemPrompt": "Be brief.",
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Hi"}},
            {"role": "assistant", "content": [{"type": "text", "text": "Hello."}]},
            {"role": "user", "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image", "data": "iVBORw0K", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
            ]},
        ],
        "maxTokens": 256,
        "temperature": 0.25,
        "stopSequences": ["\n\nUser:"],
        "metadata": {"x": 1},
        "modelPreferences": {"hints": [{"name": "claude"}]},
    }));
    let body = chat_request(&request, "llama3.2", true).unwrap();
    assert_eq!(
        body,
        json!({
            "model": "llama3.2",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": [
                    {"type": "text", "text": "What is this?"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0K"}},
                    {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
                ]},
            ],
            "max_tokens": 256,
            "temperature": 0.25,
            "stop": ["\n\nUser:"],
            "stream": true,
        })
    );
    let minimal = params(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
        "maxTokens": 5,
    }));
    assert_eq!(
        chat_request(&minimal, "m", false).unwrap(),
        json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5, "stream": false})
    );
}

#[test]
fn request_maps_a_tool_round() {
    let request = params(json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Weather in Paris?"}},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me look."},
                {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "call_2", "name": "get_time", "input": {}},
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "toolUseId": "call_1", "content": [
                    {"type": "text", "text": "18°C"}, {"type": "text", "text": "sunny"},
                    {"type": "image", "data": "AAAA", "mimeType": "image/png"},
                ]},
                {"type": "tool_result", "toolUseId": "call_2", "content": [], "isError": true,
                 "structuredContent": {"code": 7}},
            ]},
            {"role": "assistant", "content": {"type": "tool_use", "id": "c3", "name": "noop", "input": {}}},
            {"role": "user", "content": {"type": "tool_result", "toolUseId": "c3", "content": [
                {"type": "resource", "resource": {"uri": "file:///a", "text": "A"}},
                {"type": "resource_link", "uri": "file:///b", "name": "b"},
            ]}},
        ],
        "maxTokens": 100,
        "tools": [
            {"name": "get_weather", "description": "Weather by city",
             "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
            {"name": "get_time", "inputSchema": {"type": "object"}},
        ],
        "toolChoice": {"mode": "required"},
    }));
    let body = chat_request(&request, "m", false).unwrap();
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "Let me look.", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "18°C\nsunny\n[image (image/png) omitted]"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Error: {\"code\":7}"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c3", "type": "function", "function": {"name": "noop", "arguments": "{}"}},
            ]},
            {"role": "tool", "tool_call_id": "c3", "content": "A\n[resource link: file:///b]"},
        ])
    );
    assert_eq!(
        body["tools"],
        json!([
            {"type": "function", "function": {"name": "get_weather", "description": "Weather by city",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
            {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}},
        ])
    );
    assert_eq!(body["tool_choice"], "required");

    for (choice, expected) in [
        (json!({"mode": "auto"}), "auto"),
        (json!({"mode": "none"}), "none"),
        (json!({}), "auto"),
    ] {
        let mut r = request.clone();
        r.tool_choice = Some(choice);
        assert_eq!(
            chat_request(&r, "m", false).unwrap()["tool_choice"],
            expected
        );
    }
    let mut r = request.clone();
    r.tool_choice = Some(json!({"mode": "any"}));
    assert!(chat_request(&r, "m", false).unwrap_err().contains("`any`"));
    // No tools: neither `tools` nor `tool_choice` is sent.
    let mut r = request;
    r.tools = Some(vec![]);
    let body = chat_request(&r, "m", false).unwrap();
    assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
}

#[test]
fn request_rejects_what_cannot_be_sent() {
    let cases = [
        (
            json!({"role": "user", "content": {"type": "tool_use", "id": "a", "name": "n", "input": {}}}),
            "message 1 (user): a user message cannot hold a `tool_use` block",
        ),
        (
            json!({"role": "assistant", "content": {"type": "image", "data": "AA", "mimeType": "image/png"}}),
            "`image` block",
        ),
        (
            json!({"role": "user", "content": {"type": "image", "mimeType": "image/png"}}),
            "an image block has no `data`",
        ),
        (
            json!({"role": "user", "content": {"type": "audio", "data": "AA", "mimeType": "video/mp4"}}),
            "`video/mp4`",
        ),
        (
            json!({"role": "user", "content": {"type": "hologram"}}),
            "a `hologram` block cannot be sent",
        ),
        (
            json!({"role": "user", "content": {"type": "tool_result", "content": []}}),
            "has no `toolUseId`",
        ),
    ];
    for (message, expected) in cases {
        let request = params(json!({"messages": [message], "maxTokens": 1}));
        let err = chat_request(&request, "m", false).unwrap_err();
        assert!(
            err.contains(expected),
            "{err:?} should contain {expected:?}"
        );
    }
    let request =
        params(json!({"messages": [{"role": "user", "content": {"type": "x"}}], "maxTokens": 1}));
    assert!(
        build_request(&request, "m", false)
            .unwrap_err()
            .0
            .contains("`x` block")
    );
    assert!(
        parse_completion(b"{}", "m")
            .unwrap_err()
            .0
            .contains("no `choices`")
    );
    assert_eq!(audio_format("audio/mpeg").as_deref(), Some("mp3"));
    assert_eq!(audio_format("audio/x-wav").as_deref(), Some("wav"));
    assert_eq!(audio_format("audio/flac").as_deref(), Some("flac"));
}

const PLAIN: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"llama3.2:latest",
    "choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}],
    "usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}"#;

const TOOL: &str = r#"{"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"Checking.",
    "tool_calls":[{"id":"call_abc","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"days\":2}"}},
                  {"id":"call_def","type":"function","function":{"name":"get_time","arguments":""}}]},
    "finish_reason":"tool_calls"}]}"#;

fn tool_result_expected() -> CreateMessageResult {
    CreateMessageResult {
        role: Role::Assistant,
        content: vec![
            Block::text("Checking."),
            Block::Other(
                json!({"type": "tool_use", "id": "call_abc", "name": "get_weather", "input": {"city": "Paris", "days": 2}}),
            ),
            Block::Other(
                json!({"type": "tool_use", "id": "call_def", "name": "get_time", "input": {}}),
            ),
        ],
        model: "gpt-x".into(),
        stop_reason: Some("toolUse".into()),
    }
}

#[test]
fn parses_a_plain_reply() {
    let result = read_completion(PLAIN.as_bytes(), "asked").unwrap();
    assert_eq!(
        result,
        CreateMessageResult {
            role: Role::Assistant,
            content: vec![Block::text("Hello there.")],
            model: "llama3.2:latest".into(),
            stop_reason: Some("endTurn".into()),
        }
    );
    // No model in the reply: the requested one; finish reasons mapped or kept.
    for (reason, expected) in [
        ("length", "maxTokens"),
        ("content_filter", "contentFilter"),
        ("eos", "eos"),
    ] {
        let body = json!({"choices": [{"message": {"content": null}, "finish_reason": reason}]});
        let result = read_completion(body.to_string().as_bytes(), "asked").unwrap();
        assert_eq!(result.model, "asked");
        assert_eq!(result.content, vec![Block::text("")]);
        assert_eq!(result.stop_reason.as_deref(), Some(expected));
    }
    let refusal = json!({"choices": [{"message": {"content": null, "refusal": "I can't."}, "finish_reason": "stop"}]});
    let result = read_completion(refusal.to_string().as_bytes(), "m").unwrap();
    assert_eq!(result.content, vec![Block::text("I can't.")]);
}

#[test]
fn parses_tool_calls() {
    assert_eq!(
        read_completion(TOOL.as_bytes(), "asked").unwrap(),
        tool_result_expected()
    );
    // `stop` with tool calls (some servers) still means toolUse; object arguments accepted.
    let body = json!({"choices": [{"message": {"content": "", "tool_calls": [
        {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}, "finish_reason": "stop"}]});
    let result = read_completion(body.to_string().as_bytes(), "m").unwrap();
    assert_eq!(
        result.content,
        vec![Block::Other(
            json!({"type": "tool_use", "id": "call_0", "name": "f", "input": {"a": 1}})
        )]
    );
    assert_eq!(result.stop_reason.as_deref(), Some("toolUse"));
}

#[test]
fn rejects_bad_replies() {
    let bad_args = json!({"choices": [{"message": {"tool_calls": [
        {"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Par"}}]},
        "finish_reason": "tool_calls"}]});
    let err = read_completion(bad_args.to_string().as_bytes(), "m").unwrap_err();
    assert!(
        err.contains("get_weather") && err.contains("not valid JSON"),
        "{err}"
    );
    let array_args = json!({"choices": [{"message": {"tool_calls": [
        {"id": "x", "function": {"name": "f", "arguments": "[1]"}}]}}]});
    let err = read_completion(array_args.to_string().as_bytes(), "m").unwrap_err();
    assert!(err.contains("not a JSON object"), "{err}");

    let err = read_completion(b"<html>Bad Gateway</html>", "m").unwrap_err();
    assert!(
        err.contains("not valid JSON") && err.contains("<html>Bad Gateway</html>"),
        "{err}"
    );
    let err = read_completion(br#"{"object":"list","data":[]}"#, "m").unwrap_err();
    assert!(err.contains("no `choices`"), "{err}");
    let err = read_completion(br#"{"error":{"message":"model not loaded"}}"#, "m").unwrap_err();
    assert!(err.contains("model not loaded"), "{err}");
    let long = "x".repeat(1000);
    let err = read_completion(long.as_bytes(), "m").unwrap_err();
    assert!(err.len() < 400, "{err}");
}

#[test]
fn error_bodies_are_quoted() {
    assert_eq!(
        error_detail(br#"{"error":{"message":"bad key","type":"auth"}}"#),
        "bad key"
    );
    assert_eq!(
        error_detail(br#"{"error":"model 'x' not found"}"#),
        "model 'x' not found"
    );
    assert_eq!(
        error_detail(br#"{"object":"error","message":"too long"}"#),
        "too long"
    );
    assert_eq!(error_detail(b""), "(empty body)");
    let long = "é".repeat(300);
    assert_eq!(error_detail(long.as_bytes()).chars().count(), 201);
}

/// The stream of [`TOOL`]: content deltas, then two tool calls whose pieces interleave,
/// with the name and arguments of the first split over chunks.
fn tool_stream() -> String {
    let chunks = [
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]}),
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"content": "Check"}, "finish_reason": null}]}),
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"content": "ing."}, "finish_reason": null}]}),
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_abc", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}}]}),
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]}}]}),
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_def", "type": "function", "function": {"name": "get_time", "arguments": ""}}]}}]}),
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\",\"days\":2}"}}]}}]}),
        json!({"model": "gpt-x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
        json!({"model": "gpt-x", "choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 2}}),
    ];
    let mut out = String::from(": keep-alive\n\n");
    for chunk in chunks {
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: [DONE]\n\n");
    out
}

/// Reads `pieces` as the body of a streamed reply, lines held to `max_line` bytes.
fn read_stream(pieces: &[&[u8]], max_line: usize) -> Result<Completion, StreamError> {
    let framing = Framing::default();
    let body = futures::stream::iter(pieces.iter().map(|piece| Ok::<_, ReadError>(*piece)));
    let body = stream::framed(body, &framing, max_line, END_OF_BODY);
    let events = sse_stream::SseStream::from_bytes_stream(body);
    futures::executor::block_on(stream::read_events(events, &framing))
}

fn decode(pieces: &[&[u8]]) -> Result<CreateMessageResult, String> {
    match read_stream(pieces, usize::MAX) {
        Ok(completion) => completion.into_result("asked"),
        Err(StreamError::Unusable(why)) => Err(why),
        Err(StreamError::Read(e)) => panic!("reading failed: {e}"),
    }
}

#[test]
fn a_stream_gives_what_the_whole_reply_gives_however_it_is_cut() {
    let stream = tool_stream();
    let bytes = stream.as_bytes();
    let whole = decode(&[bytes]).unwrap();
    assert_eq!(whole, tool_result_expected());
    assert_eq!(whole, read_completion(TOOL.as_bytes(), "asked").unwrap());
    for cut in 1..bytes.len() {
        let (a, b) = bytes.split_at(cut);
        assert_eq!(decode(&[a, b]).unwrap(), whole, "cut at {cut}");
    }
    let bytewise: Vec<&[u8]> = bytes.chunks(1).collect();
    assert_eq!(decode(&bytewise).unwrap(), whole);
    let crlf = stream.replace('\n', "\r\n");
    assert_eq!(decode(&[crlf.as_bytes()]).unwrap(), whole);
}

#[test]
fn a_plain_stream_and_its_edges() {
    let stream = "data: {\"model\":\"m1\",\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n\
                  event: message\nid: 2\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo\"},\"finish_reason\":\"length\"}]}\n\n\
                  data: [DONE]\n\ndata: garbage after done is ignored\n\n";
    let result = decode(&[stream.as_bytes()]).unwrap();
    assert_eq!(result.content, vec![Block::text("Hello")]);
    assert_eq!(result.model, "m1");
    assert_eq!(result.stop_reason.as_deref(), Some("maxTokens"));
    // `[DONE]` without its blank line at the very end is still the end.
    let result =
        decode(&[b"data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]"])
            .unwrap();
    assert_eq!(result.content, vec![Block::text("x")]);
    assert_eq!(result.model, "asked");
    assert_eq!(result.stop_reason, None);
    // Tool-call pieces without `index` (some servers) still add up.
    let stream = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\"\"}}]}}]}\n\n\
                  data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\":1}\"}}]}}]}\n\n\
                  data: [DONE]\n\n";
    let result = decode(&[stream.as_bytes()]).unwrap();
    assert_eq!(
        result.content,
        vec![Block::Other(
            json!({"type": "tool_use", "id": "a", "name": "f", "input": {"x": 1}})
        )]
    );
}

#[test]
fn a_broken_stream_is_an_error() {
    let cut = "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n";
    assert!(
        decode(&[cut.as_bytes()])
            .unwrap_err()
            .contains("ended before `data: [DONE]`")
    );
    let cut_mid_event = &cut[..20];
    assert!(
        decode(&[cut_mid_event.as_bytes()])
            .unwrap_err()
            .contains("ended before")
    );
    let no_blank_line = "data: {\"choices\":[]}\n";
    assert!(
        decode(&[no_blank_line.as_bytes()])
            .unwrap_err()
            .contains("ended before")
    );
    assert!(decode(&[b""]).unwrap_err().contains("ended before"));
    let err = decode(&[b"data: {\"choices\": [oops\n\n"]).unwrap_err();
    assert!(
        err.contains("not valid JSON") && err.contains("oops"),
        "{err}"
    );
    let err = decode(&[b"<html>\n<body>502</body>\n"]).unwrap_err();
    assert!(
        err.contains("unexpected line") && err.contains("<html>"),
        "{err}"
    );
    let err = decode(&[b"data: {\"error\":{\"message\":\"out of memory\"}}\n\n"]).unwrap_err();
    assert!(err.contains("out of memory"), "{err}");
    let err = decode(&[b"data: \xff\xfe\n\n"]).unwrap_err();
    assert!(err.contains("not UTF-8"), "{err}");
    let bad_args = "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{nope\"}}]}}]}\n\ndata: [DONE]\n\n";
    let err = decode(&[bad_args.as_bytes()]).unwrap_err();
    assert!(
        err.contains("`f`") && err.contains("not valid JSON"),
        "{err}"
    );
}

#[test]
fn a_stream_line_over_the_limit_stops_the_reading() {
    let long = read_stream(&[b"data: {\"choices\"", b":[]}\n\n"], 10);
    assert!(
        matches!(long, Err(StreamError::Read(ReadError::LineTooLong))),
        "{long:?}"
    );
    // The limit is per line: many short lines are fine.
    let short = read_stream(&[b"data: {}\n\n", b"data: {}\n\n", b"data: [DONE]\n\n"], 14);
    assert!(short.is_ok(), "{short:?}");
    // A line the framing refuses is quoted even when it began in an earlier piece.
    let err = decode(&[b"data: {}\n\n<ht", b"ml>\n"]).unwrap_err();
    assert!(err.contains("unexpected line: `ml>`"), "{err}");
    let err = decode(&[b": ok\nevent: a\nno colon here\n"]).unwrap_err();
    assert!(err.contains("unexpected line: `no colon here`"), "{err}");
}
