use super::*;
use rmcp::model::{
    CallToolResult, NumberOrString, ReadResourceResult, ServerJsonRpcMessage, ServerResult,
};

/// A result as the server sent it, stored for its response.
fn stored(passing: &Passing, result: &str) -> (u64, ()) {
    (passing.store(Bytes::from(result.to_string())), ())
}

fn big_result(text: &str) -> String {
    format!(r#"{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}"#)
}

fn big_text() -> String {
    "é \\\" tab\\t ✓ ".repeat(64 * 1024 / 8)
}

/// The response rmcp writes for a placeholder: its own types and serialization.
fn response(kind: Kind, token: u64, tail: &str, id: i64) -> Vec<u8> {
    let placeholder = placeholder_of(kind, token, tail);
    let result = match kind {
        Kind::Resource => ServerResult::ReadResourceResult(
            serde_json::from_value::<ReadResourceResult>(placeholder).unwrap(),
        ),
        _ => ServerResult::CallToolResult(
            serde_json::from_value::<CallToolResult>(placeholder).unwrap(),
        ),
    };
    let message = ServerJsonRpcMessage::response(result, NumberOrString::Number(id));
    serde_json::to_vec(&message).unwrap()
}

fn joined(pieces: Vec<Bytes>) -> Vec<u8> {
    pieces.concat()
}

#[test]
fn a_placeholder_becomes_the_stored_bytes_with_the_members_to_add() {
    let passing = std::sync::Arc::new(Passing::default());
    let result = big_result(&big_text());
    let (token, _) = stored(&passing, &result);
    let out = joined(splice(
        response(Kind::Tool, token, "", 5).into(),
        false,
        &passing,
    ));
    let want = format!(r#"{{"jsonrpc":"2.0","id":5,"result":{result}}}"#);
    assert_eq!(String::from_utf8(out).unwrap(), want, "byte for byte");
    assert!(passing.take(token).is_none(), "taken once");

    let resource = format!(
        r#"{{"contents":[{{"uri":"x:/a","text":"{}"}}]}}"#,
        big_text()
    );
    let (token, _) = stored(&passing, &resource);
    let out = joined(splice(
        response(Kind::Resource, token, "cts", 6).into(),
        false,
        &passing,
    ));
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["id"], 6);
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["ttlMs"], 0);
    assert_eq!(v["result"]["cacheScope"], "private");
    let mut expected: Value = serde_json::from_str(&resource).unwrap();
    expected["resultType"] = "complete".into();
    expected["ttlMs"] = 0.into();
    expected["cacheScope"] = "private".into();
    assert_eq!(v["result"], expected);
}

#[test]
fn gone_bytes_are_a_json_rpc_error_and_unknown_tails_are_left_alone() {
    let passing = std::sync::Arc::new(Passing::default());
    let (token, _) = stored(&passing, &big_result(&big_text()));
    passing.take(token).unwrap();
    // Keep something stored, so that the splice looks at all.
    let (other, _) = stored(&passing, &big_result("y"));
    let out = joined(splice(
        response(Kind::Tool, token, "c", 9).into(),
        false,
        &passing,
    ));
    let v: Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(v["id"], 9);
    assert_eq!(v["error"]["code"], -32603, "{v}");
    assert!(v.get("result").is_none());
    let odd = response(Kind::Tool, other, "x", 3);
    assert_eq!(joined(splice(odd.clone().into(), false, &passing)), odd);
    assert!(
        passing.take(other).is_some(),
        "not taken by a tail it does not know"
    );
}

#[test]
fn text_that_looks_like_a_placeholder_is_left_alone() {
    let passing = std::sync::Arc::new(Passing::default());
    let (token, _) = stored(&passing, &big_result(&big_text()));
    let marker = format!("{token}");
    let real = String::from_utf8(response(Kind::Tool, token, "", 1)).unwrap();
    // A server's result quoting a placeholder (escaped), a token that is not the whole
    // value, and a placeholder member that is not in the result's `_meta`.
    let cases = [
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": real}]}})).unwrap(),
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 2, "result": {"_meta": {PASS_META: format!("x{token}")}}})).unwrap(),
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3, "result": {"_meta": {"other": marker}}})).unwrap(),
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 4, "result": {PASS_META: marker}})).unwrap(),
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 5, "result": {"content": [], "x": {"_meta": {PASS_META: marker}}}})).unwrap(),
    ];
    for case in cases {
        assert_eq!(joined(splice(case.clone().into(), false, &passing)), case);
    }
    assert!(passing.take(token).is_some(), "still stored");
}

#[test]
fn an_sse_event_gets_the_bytes_on_its_one_data_line() {
    let passing = std::sync::Arc::new(Passing::default());
    let text = big_text();
    let result = format!("{{\"content\":[{{\"type\":\"text\",\r\"text\":\"{text}\"}}]}}");
    let (token, _) = stored(&passing, &result);
    let data = String::from_utf8(response(Kind::Tool, token, "c", 2)).unwrap();
    let event = format!("data: {data}\nid: 0/7\n\n");
    let out = String::from_utf8(joined(splice(event.into(), true, &passing))).unwrap();
    let (data, rest) = out
        .strip_prefix("data: ")
        .unwrap()
        .split_once('\n')
        .unwrap();
    assert_eq!(rest, "id: 0/7\n\n");
    let v: Value = serde_json::from_str(data).unwrap();
    assert_eq!(
        v["result"]["content"][0]["text"],
        text.replace("\\\"", "\"").replace("\\t", "\t")
    );
    assert_eq!(v["result"]["resultType"], "complete");
}

/// A server's result that names a stored result under the placeholder's key, as JSON that
/// goes through rmcp's types, has the key taken out: it cannot claim another call's bytes.
#[test]
fn a_servers_own_meta_cannot_claim_a_stored_result() {
    let passing = std::sync::Arc::new(Passing::default());
    let (token, _) = stored(&passing, &big_result(&big_text()));
    let mut forged = json!({"content": [], "_meta": {PASS_META: format!("{token}"), "k": 1}});
    let as_sent =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 2, "result": forged.clone()})).unwrap();
    assert_ne!(
        joined(splice(as_sent.clone().into(), false, &passing)),
        as_sent,
        "the writer alone would splice it"
    );
    let (token, _) = stored(&passing, &big_result(&big_text()));
    forged["_meta"][PASS_META] = format!("{token}").into();
    clean(&mut forged);
    assert_eq!(forged["_meta"], json!({"k": 1}));
    let cleaned =
        serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3, "result": forged})).unwrap();
    assert_eq!(
        joined(splice(cleaned.clone().into(), false, &passing)),
        cleaned
    );
    assert!(passing.take(token).is_some(), "still stored");
}

#[test]
fn tails_follow_what_rmcp_does_for_each_agent() {
    let plain = br#"{"content":[]}"#;
    assert_eq!(tail(Kind::Tool, false, plain).as_deref(), Some(""));
    assert_eq!(tail(Kind::Tool, true, plain).as_deref(), Some("c"));
    let first = br#"{"resultType":"complete","ttlMs":5,"contents":[]}"#;
    assert_eq!(tail(Kind::Resource, true, first).as_deref(), Some("s"));
    assert_eq!(tail(Kind::Resource, false, first).as_deref(), Some("r"));
    let inside = br#"{"contents":[],"resultType":"complete","ttlMs":5}"#;
    assert_eq!(tail(Kind::Resource, false, inside), None, "rmcp strips it");
    let listed = br#"{"content":[],"structuredContent":[]}"#;
    assert_eq!(
        tail(Kind::Tool, false, listed),
        None,
        "rmcp moves it into content"
    );
    assert_eq!(tail(Kind::Tool, true, listed).as_deref(), Some("c"));
    let prompt = br#"{"messages":[]}"#;
    assert_eq!(tail(Kind::Prompt, true, prompt).as_deref(), Some("c"));
    assert_eq!(edit_of("q"), None);
}

#[test]
fn the_servers_result_type_is_found_first_or_last_only() {
    let passing = std::sync::Arc::new(Passing::default());
    let cut = |s: &str| {
        result_type_member(s.as_bytes()).map(|r| format!("{}{}", &s[..r.start], &s[r.end..]))
    };
    let found = [
        (
            r#"{"resultType":"complete","content":[]}"#,
            r#"{"content":[]}"#,
        ),
        (
            "{ \"resultType\" :\t\"complete\"\r\n, \"a\":1}",
            r#"{  "a":1}"#,
        ),
        (
            r#"{"content":[],"resultType":"complete"}"#,
            r#"{"content":[]}"#,
        ),
        ("{\"a\":1 ,\n\"resultType\": \"complete\" }", "{\"a\":1  }"),
    ];
    for (stored, left) in found {
        assert_eq!(cut(stored).as_deref(), Some(left), "{stored}");
    }
    for stored in [
        "",
        "{",
        r#"{"content":[],"resultType":"complete","isError":false}"#,
        r#"{"resultType":1,"a":2}"#,
        r#"{"resultType":"complete"}"#,
        r#"{"a":""resultType":"complete"}"#,
        r#"{"a":["x","resultType"],"b":"complete"}"#,
        r#"{"resultTypes":"complete","a":1}"#,
    ] {
        assert_eq!(cut(stored), None, "{stored}");
    }
    // Through the writer: a legacy agent's answer without it, byte for byte otherwise.
    let result = format!(
        r#"{{"resultType":"complete","content":[{{"type":"text","text":"{}"}}]}}"#,
        big_text()
    );
    let (token, _) = stored(&passing, &result);
    let pieces = splice(response(Kind::Tool, token, "r", 8).into(), false, &passing);
    assert!(pieces.iter().all(|p| !p.is_empty()), "no empty piece");
    let out = joined(pieces);
    let without = result.replacen(r#""resultType":"complete","#, "", 1);
    let want = format!(r#"{{"jsonrpc":"2.0","id":8,"result":{without}}}"#);
    assert_eq!(String::from_utf8(out).unwrap(), want);
}

#[test]
fn http_bodies_get_the_bytes_in_sse_events_and_json_other_responses_stay() {
    let passing = std::sync::Arc::new(Passing::default());
    let result = big_result(&big_text());
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let through = |kind: &'static str, frames: Vec<Bytes>| {
        let stream = futures::stream::iter(frames.into_iter().map(|f| Ok(Frame::data(f))));
        let response = http::Response::builder()
            .header(http::header::CONTENT_TYPE, kind)
            .body(StreamBody::new(stream).boxed())
            .unwrap();
        let body = body(response, passing.clone()).into_body();
        rt.block_on(body.collect()).unwrap().to_bytes()
    };
    let (token, _) = stored(&passing, &result);
    let data = String::from_utf8(response(Kind::Tool, token, "", 3)).unwrap();
    let events = vec![
        Bytes::from_static(b"data: \nid: 0\nretry: 3000\n\n"),
        Bytes::from(format!("data: {data}\nid: 1\n\n")),
        Bytes::from_static(b":\n\n"),
    ];
    let out = through("text/event-stream", events);
    let want = format!(
        "data: \nid: 0\nretry: 3000\n\ndata: {{\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{result}}}\nid: 1\n\n:\n\n"
    );
    assert_eq!(String::from_utf8(out.to_vec()).unwrap(), want);
    let (token, _) = stored(&passing, &result);
    let out = through(
        "application/json",
        vec![response(Kind::Tool, token, "c", 4).into()],
    );
    let v: Value = serde_json::from_slice(&out).unwrap();
    let sent: Value = serde_json::from_str(&result).unwrap();
    assert_eq!(v["result"]["resultType"], "complete");
    assert_eq!(v["result"]["content"], sent["content"]);
    // Another content type is not looked into: the placeholder stays.
    let (token, _) = stored(&passing, &result);
    let plain = Bytes::from(response(Kind::Tool, token, "", 5));
    assert_eq!(through("text/plain", vec![plain.clone()]), plain);
    assert!(passing.take(token).is_some());
    // A JSON error keeps its length (it is not looked into).
    let refused = http::Response::builder()
        .status(http::StatusCode::BAD_REQUEST)
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(http_body_util::Full::new(Bytes::from_static(b"{}")).boxed())
        .unwrap();
    let hint = hyper::body::Body::size_hint(body(refused, passing.clone()).body());
    assert_eq!(hint.exact(), Some(2));
}

/// Writes `lines` through the tunnel's writer in chunks of `chunk` bytes.
fn through_tunnel(passing: &std::sync::Arc<Passing>, lines: &[u8], chunk: usize) -> Vec<u8> {
    crate::mcp::write_in_chunks(Tunnel::new(Vec::new(), passing.clone()), lines, chunk).inner
}

#[test]
fn the_tunnel_splices_whole_lines_in_any_chunks() {
    let passing = std::sync::Arc::new(Passing::default());
    for chunk in [1, 7, 100, usize::MAX] {
        let result = big_result(&big_text());
        let (token, _) = stored(&passing, &result);
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"{}\"}}\n",
            "z".repeat(HOLD_MAX)
        );
        let mut input = b"{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n".to_vec();
        input.extend_from_slice(long.as_bytes());
        input.extend(response(Kind::Tool, token, "", 4));
        input.push(b'\n');
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":6,\"result\":{}}\n");
        let out = String::from_utf8(through_tunnel(&passing, &input, chunk)).unwrap();
        let lines: Vec<&str> = out.split_terminator('\n').collect();
        assert_eq!(lines.len(), 4, "chunk {chunk}");
        assert_eq!(lines[1], long.trim_end());
        assert_eq!(
            lines[2],
            format!(r#"{{"jsonrpc":"2.0","id":4,"result":{result}}}"#),
            "chunk {chunk}"
        );
        assert_eq!(lines[3], r#"{"jsonrpc":"2.0","id":6,"result":{}}"#);
    }
}
