//! The Streamable HTTP transport's unit tests: URLs and headers from the definition, failures put
//! into words, SSE data handled like a stdio line.

use serde_json::Value;

use super::failure::{Unexpected, read_unexpected};
use super::session::Inbound;
use super::*;
use crate::mcp::wire::raw::{RAW_PARAMS_META, RAW_SCHEMA_META};

fn options() -> Options {
    Options {
        timeout: Duration::from_secs(5),
        max_message_bytes: 1 << 20,
        oauth: Default::default(),
        sign_in: Arc::new(|| None),
        status: Arc::default(),
        clock: Arc::default(),
    }
}

fn link() -> Arc<Link> {
    let url = url::Url::parse("http://user:secret@127.0.0.1:1/mcp?token=x").unwrap();
    let t = transport("t", &url, &BTreeMap::new(), options(), Arc::default()).unwrap();
    t.link.clone()
}

#[tokio::test]
async fn urls_are_shown_without_credentials() {
    assert_eq!(link().shown, "http://127.0.0.1:1/mcp?…");
}

#[test]
fn headers_are_checked() {
    let ok = BTreeMap::from([("Authorization".to_owned(), "Bearer x".to_owned())]);
    let map = custom_headers(&ok).unwrap();
    assert!(map[&HeaderName::from_static("authorization")].is_sensitive());
    for name in [
        "Accept",
        "Mcp-Session-Id",
        "mcp-param-x",
        "MCP-Protocol-Version",
    ] {
        let bad = BTreeMap::from([(name.to_owned(), "v".to_owned())]);
        let err = custom_headers(&bad).unwrap_err();
        assert!(err.contains("set by the sidecar"), "{name}: {err}");
    }
    let bad = BTreeMap::from([("bad name".to_owned(), "v".to_owned())]);
    assert!(custom_headers(&bad).unwrap_err().contains("not a valid"));
    let bad = BTreeMap::from([("X-A".to_owned(), "line\nbreak".to_owned())]);
    assert!(custom_headers(&bad).unwrap_err().contains("cannot be sent"));
}

#[tokio::test]
async fn error_statuses_and_non_mcp_answers_are_sentences() {
    let link = link();
    let text = link.describe_response("HTTP 404 Not Found: <html>Cannot POST /</html>");
    assert_eq!(
        text,
        "http://127.0.0.1:1/mcp?… answered HTTP 404 Not Found; is this the server's MCP endpoint?"
    );
    let text = link.describe_response(
        r#"HTTP 500 Internal Server Error: {"error":{"code":1,"message":"boom"}}"#,
    );
    assert!(
        text.ends_with("answered HTTP 500 Internal Server Error (boom)"),
        "{text}"
    );
    let text = link.describe_response(
        "could not parse JSON response as ServerJsonRpcMessage: data did not match any variant at line 1 column 16: {\"status\": \"ok\"}",
    );
    assert!(
        text.ends_with("its JSON is not a JSON-RPC message ({\"status\": \"ok\"})"),
        "{text}"
    );
    let status = rmcp::transport::streamable_http_client::HttpStatusError::new(503, None);
    let Failure::Exchange(text) = link.describe(&StreamableHttpError::HttpStatus(status)) else {
        panic!()
    };
    assert!(
        text.ends_with("answered HTTP 503 Service Unavailable"),
        "{text}"
    );
    assert!(matches!(
        link.describe(&StreamableHttpError::ResponseBodyTooLarge { max_size: 1 }),
        Failure::Lost(t) if t.contains("maxMessageBytes (1048576 bytes)")
    ));
}

#[tokio::test]
async fn refused_connections_are_lost_connections() {
    let link = link(); // installs the crypto provider reqwest needs
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let error = reqwest::Client::new()
        .get(format!("http://127.0.0.1:{port}/mcp"))
        .send()
        .await
        .unwrap_err();
    let Failure::Lost(text) = link.describe(&StreamableHttpError::Client(error)) else {
        panic!()
    };
    assert_eq!(
        text,
        "could not connect to http://127.0.0.1:1/mcp?…: connection refused"
    );
}

#[tokio::test]
async fn sse_data_is_handled_like_a_stdio_line() {
    let link = link();
    let plain = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
    assert!(matches!(link.inbound(plain), Inbound::Keep));
    let form = r#"{"jsonrpc":"2.0","id":2,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"object"}}}}}"#;
    let Inbound::Replace(text) = link.inbound(form) else {
        panic!()
    };
    let v: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<_> = v["params"]["_meta"][RAW_SCHEMA_META]["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["z", "a"], "raw schema kept, in order: {v}");
    let sampling = r#"{"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5,"temperature":0.7}}"#;
    let Inbound::Replace(text) = link.inbound(sampling) else {
        panic!()
    };
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["params"]["_meta"][RAW_PARAMS_META]["temperature"], 0.7);
    assert!(matches!(link.inbound("not json"), Inbound::Drop));
    // A request the sidecar cannot read is refused (the refusal is queued), not dropped.
    let mut t = transport(
        "t",
        &url::Url::parse("http://127.0.0.1:1/mcp").unwrap(),
        &BTreeMap::new(),
        options(),
        Arc::default(),
    )
    .unwrap();
    assert!(matches!(
        t.link
            .inbound(r#"{"jsonrpc":"1.0","id":5,"method":"ping"}"#),
        Inbound::Drop
    ));
    let refusal = serde_json::to_value(t.outbound.try_recv().unwrap()).unwrap();
    assert_eq!(refusal["id"], 5);
    assert_eq!(refusal["error"]["code"], -32602);
}

#[test]
fn rmcp_error_text_is_read_in_one_place() {
    assert_eq!(
        read_unexpected("HTTP 405 Method Not Allowed: nope"),
        Unexpected::Status {
            status: "405 Method Not Allowed",
            code: Some(405),
            body: "nope"
        }
    );
    assert_eq!(
        read_unexpected("HTTP 404 Not Found"),
        Unexpected::Status {
            status: "404 Not Found",
            code: Some(404),
            body: ""
        }
    );
    assert_eq!(
        read_unexpected(
            "could not parse JSON response as ServerJsonRpcMessage: expected value at line 1 column 1: <html>"
        ),
        Unexpected::NotJsonRpc { detail: "<html>" }
    );
    assert_eq!(
        read_unexpected("invalid www-authenticate header value"),
        Unexpected::Other("invalid www-authenticate header value")
    );
    let status = |text: &str| {
        failure::is_client_error_status(&StreamableHttpError::UnexpectedServerResponse(
            text.to_owned().into(),
        ))
    };
    assert!(status("HTTP 405 Method Not Allowed: "));
    assert!(!status("HTTP 307 Temporary Redirect: "));
    assert!(!status("could not parse JSON response as X: e: HTTP 404"));
}

/// An event nested past the depth bound is refused as a stdio line is, before rmcp reads it:
/// an answer becomes the sidecar's error for its id (101 levels, which rmcp's parse would
/// take, and a million); the bound itself passes.
#[tokio::test]
async fn sse_data_nested_too_deep_is_refused() {
    use crate::mcp::scan::MAX_DEPTH;
    let link = link();
    let answer = |levels: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":4,"result":{{"a":{}1{}}}}}"#,
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
    };
    assert!(matches!(link.inbound(&answer(MAX_DEPTH)), Inbound::Keep));
    for levels in [MAX_DEPTH + 1, 1_000_000] {
        let Inbound::Replace(text) = link.inbound(&answer(levels)) else {
            panic!("{levels}")
        };
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["id"], 4);
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("its result nests deeper than 100 levels"),
            "{message}"
        );
        assert!(v["error"]["data"][crate::mcp::wire::lines::REFUSED].is_string());
    }
}
