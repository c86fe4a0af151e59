use super::super::lines::*;
use super::*;
use crate::mcp::wire::raw::RAW_SCHEMA_META;
use rmcp::model::RequestId;

/// The allocation a big line was read into takes the next big line (its pages are mapped
/// already) and is given back once no big line came for a while.
#[tokio::test(flavor = "current_thread")]
async fn a_big_read_buffer_is_reused_then_given_back() {
    const BIG: usize = 3_000_000;
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "for i in 1 2; do head -c {BIG} /dev/zero | tr '\\0' a; echo; read go; done; echo small"
        ))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let codec = LineCodec::new(8 << 20);
    let mut reader = LineReader::new(child.stdout.take().unwrap(), codec);
    let first = reader.next().await.unwrap().unwrap();
    assert_eq!(first.len(), BIG);
    let at = first.as_ptr();
    drop(first);
    stdin.write_all(b"go\n").await.unwrap();
    // Where the first bytes of the next line land: the start of the kept allocation (not
    // its free end, then copied back to the start once that is full).
    let start = std::future::poll_fn(|cx| match reader.poll_line(cx) {
        std::task::Poll::Ready(Read::Line(line)) => {
            std::task::Poll::Ready(line.map(|l| l.unwrap().as_ptr()))
        }
        std::task::Poll::Pending if reader.buf.is_empty() => std::task::Poll::Pending,
        std::task::Poll::Pending | std::task::Poll::Ready(Read::Turn) => {
            std::task::Poll::Ready(Some(reader.buf.as_ptr()))
        }
    })
    .await;
    assert_eq!(start, Some(at), "read into the first line's pages");
    let second = reader.next().await.unwrap().unwrap();
    assert_eq!(second.len(), BIG);
    assert_eq!(second.as_ptr(), at);
    drop(second);
    assert!(reader.keep_until.is_some() && reader.reuse > BIG, "kept");
    // The server now sends nothing until told: with the clock paused, the wait runs up to
    // the keep deadline, the buffer is replaced, and the outer deadline ends the wait.
    tokio::time::pause();
    let waited = tokio::time::timeout(KEEP_BIG_BUFFER * 5, reader.next()).await;
    assert!(waited.is_err(), "nothing was sent");
    assert!(
        reader.buf.capacity() <= READ_BUFFER && reader.keep_until.is_none(),
        "given back: capacity {}",
        reader.buf.capacity()
    );
    tokio::time::resume();
    stdin.write_all(b"go\n").await.unwrap();
    let small = reader.next().await.unwrap().unwrap();
    assert_eq!(&small[..], b"small");
}

/// A server that writes a long line faster than it is read keeps the pipe full, so every
/// read is ready at once (here: a reader that always is): the reader still gives the event
/// loop back every [`READ_TURN`] bytes, and another task on the same thread runs between.
#[tokio::test(flavor = "current_thread")]
async fn a_long_line_comes_a_turn_at_a_time() {
    const BIG: usize = 8 * READ_TURN;
    let mut line = br#"{"jsonrpc":"2.0","id":1,"result":{"text":""#.to_vec();
    line.resize(BIG - 3, b'a');
    line.extend_from_slice(b"\"}}\n");
    let mut reader = LineReader::new(&line[..], LineCodec::new(16 << 20));
    let turns = std::cell::Cell::new(0);
    let other = async {
        loop {
            turns.set(turns.get() + 1);
            tokio::task::yield_now().await;
        }
    };
    let got = tokio::select! {
        biased;
        got = reader.next() => got.unwrap().unwrap(),
        () = other => unreachable!(),
    };
    assert_eq!(got.len(), BIG);
    assert!(reader.codec.take_outline().is_some(), "checked as it came");
    // A read takes what the buffer has room for (a pipe gives 1 MiB at most); here the
    // buffer doubles from 64 KiB and the last reads take 2 and 4 MiB at once, so there
    // are fewer turns than MiB: four. Without turns, none.
    assert!(
        turns.get() >= 4,
        "the other task ran {} times while {BIG} bytes came",
        turns.get()
    );
}

/// Found in CI: a flood of log notifications held the sidecar's one thread for over a second
/// (the editor's requests waited behind it). Lines already in the read buffer are decoded
/// without touching the event loop, so `receive` takes a share of tokio's budget per message
/// and a reader of a full buffer lets other tasks run long before it is through.
#[test]
fn a_full_read_buffer_does_not_hold_the_thread() {
    const LINES: usize = 600; // about 52 KB: all of it fits in the pipe before the reader starts
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let line = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(format!("yes '{line}' | head -n {LINES}"))
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
        assert!(child.wait().await.unwrap().success());
        let mut transport =
            StdioTransport::new("flood", stdin, stdout, 1 << 20, Default::default());
        let received = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let count = received.clone();
        let reader = tokio::spawn(async move {
            while transport.receive().await.is_some() {
                count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        });
        // Spawned after the reader, so it runs when the reader first gives the thread back.
        let seen = received.clone();
        let other = tokio::spawn(async move { seen.load(std::sync::atomic::Ordering::Relaxed) });
        let when_other_ran = other.await.unwrap();
        reader.await.unwrap();
        assert_eq!(received.load(std::sync::atomic::Ordering::Relaxed), LINES);
        assert!(
            when_other_ran < LINES / 2,
            "another task ran only after {when_other_ran} of {LINES} messages"
        );
    });
}

#[test]
fn lines_are_split_at_newlines_up_to_the_limit() {
    let mut codec = LineCodec::new(8);
    let mut buf = bytes::BytesMut::from(&b"ab\ncd"[..]);
    assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"ab");
    assert!(codec.decode(&mut buf).unwrap().is_none(), "no newline yet");
    buf.extend_from_slice(b"e\n\nxyz");
    assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"cde");
    assert_eq!(&codec.decode(&mut buf).unwrap().unwrap()[..], b"");
    assert_eq!(&codec.decode_eof(&mut buf).unwrap().unwrap()[..], b"xyz");
    assert!(codec.decode_eof(&mut buf).unwrap().is_none());
    buf.extend_from_slice(b"123456789");
    assert!(
        codec.decode(&mut buf).is_err(),
        "over the limit without a newline"
    );
    let mut codec = LineCodec::new(8);
    let mut buf = bytes::BytesMut::from(&b"123456789\n"[..]);
    assert!(codec.decode(&mut buf).is_err(), "over the limit");
}

/// What the codec said of one line it returned.
struct Decoded {
    line: bytes::Bytes,
    checked: bool,
    depth: Depth,
    outline: Option<Outline>,
    /// The outline taken a second time.
    again: Option<Outline>,
}

/// `lines`, each with its newline, fed to a codec (long lines from 16 bytes) in reads as
/// long as `cuts` says, in turn.
fn decode_in_reads(lines: &[Vec<u8>], cuts: &[usize]) -> Vec<Decoded> {
    let stream: Vec<u8> = lines
        .iter()
        .flat_map(|l| l.iter().copied().chain([b'\n']))
        .collect();
    let mut codec = LineCodec::new(1 << 20);
    codec.long = 16;
    let mut buf = bytes::BytesMut::new();
    let mut got = Vec::new();
    let (mut at, mut cut) = (0, cuts.iter().cycle());
    while at < stream.len() {
        let end = (at + cut.next().unwrap()).min(stream.len());
        buf.extend_from_slice(&stream[at..end]);
        at = end;
        while let Some(line) = codec.decode(&mut buf).unwrap() {
            got.push(Decoded {
                line,
                checked: codec.checked,
                depth: codec.depth(),
                outline: codec.take_outline(),
                again: codec.take_outline(),
            });
        }
    }
    got
}

proptest::proptest! {
    /// Long lines are checked for UTF-8 a read at a time, wherever the reads cut them (a
    /// character cut in two included): `checked` says exactly whether the whole line is.
    #[test]
    fn long_lines_are_checked_for_utf8_as_they_come(
        lines in proptest::collection::vec(
            ("[^\n]{0,40}", proptest::option::of((0usize..200, 0x80u8..=0xff))),
            1..6,
        ),
        cuts in proptest::collection::vec(1usize..30, 1..60),
    ) {
        let lines: Vec<Vec<u8>> = lines
            .into_iter()
            .map(|(text, flip)| {
                let mut bytes = text.into_bytes();
                if let Some((at, byte)) = flip.filter(|_| !bytes.is_empty()) {
                    let at = at % bytes.len();
                    bytes[at] = byte;
                }
                bytes
            })
            .collect();
        let got = decode_in_reads(&lines, &cuts);
        proptest::prop_assert_eq!(got.len(), lines.len());
        for (Decoded { line, checked, .. }, sent) in got.iter().zip(&lines) {
            proptest::prop_assert_eq!(&line[..], &sent[..]);
            let text = line.len() >= 16 && std::str::from_utf8(line).is_ok();
            proptest::prop_assert_eq!(*checked, text, "line {:?}", String::from_utf8_lossy(line));
        }
    }

    /// Long answers are outlined as they come, a read at a time: for each line the codec
    /// returns, the same outline the relay's one `serde_json` scan finds after the fact.
    #[test]
    fn long_answers_are_outlined_as_they_come(
        lines in proptest::collection::vec(
            (0u32..3, "[^\n\"\\\\]{0,60}", proptest::option::of((0usize..200, 0u8..0x80))),
            1..6,
        ),
        cuts in proptest::collection::vec(1usize..40, 1..60),
    ) {
        let lines: Vec<Vec<u8>> = lines
            .into_iter()
            .map(|(id, text, flip)| {
                let mut bytes = format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{text}"}}],"isError":false}}}}"#
                )
                .into_bytes();
                if let Some((at, byte)) = flip.filter(|&(_, b)| b != b'\n') {
                    let at = at % bytes.len();
                    bytes[at] = byte;
                }
                bytes
            })
            .collect();
        let got = decode_in_reads(&lines, &cuts);
        proptest::prop_assert_eq!(got.len(), lines.len());
        for Decoded { line, outline, again, .. } in got {
            let text = std::str::from_utf8(&line).ok();
            let expected = crate::mcp::scan::tests::outline(&line, text);
            proptest::prop_assert_eq!(outline, expected, "{:?}", text);
            proptest::prop_assert_eq!(again, None, "taken once");
        }
    }
}

/// The codec's scan says how deep a long line nests, wherever the reads cut it: within the
/// bound when it read the line whole, deeper past it (the scan stopped there), unknown for
/// a short line or one it stopped on for another reason.
#[test]
fn long_lines_say_how_deep_they_nest() {
    let answer = |levels: usize| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"a":{}1{}}}}}"#,
            "[".repeat(levels - 1),
            "]".repeat(levels - 1)
        )
        .into_bytes()
    };
    let lines = [
        answer(scan::MAX_DEPTH),
        answer(scan::MAX_DEPTH + 1),
        answer(300_000),
        b"{}".to_vec(),
        br#"{"jsonrpc":"2.0","i\u0064":1,"result":{"a":[[[1]]]}}"#.to_vec(),
    ];
    for cuts in [&[1usize][..], &[7, 300, 4096], &[1 << 20]] {
        let got: Vec<Depth> = decode_in_reads(&lines, cuts)
            .iter()
            .map(|d| d.depth)
            .collect();
        assert_eq!(
            got,
            [
                Depth::Within,
                Depth::Deeper,
                Depth::Deeper,
                Depth::Unknown,
                Depth::Unknown
            ],
            "{cuts:?}"
        );
    }
}

/// A line nested too deep: an answer becomes an error for its id that says so (and that
/// the sidecar made it), a request is refused, anything else is junk; no stack overflow.
#[test]
fn lines_nested_too_deep_are_refused_with_their_id() {
    let deep = |head: &str| {
        format!(
            r#"{{"jsonrpc":"2.0",{head}{}{}}}"#,
            "[".repeat(1_000_000),
            "]".repeat(1_000_000)
        )
    };
    for (head, what) in [
        (r#""id":7,"result":"#, "result"),
        (r#""id":7,"error":"#, "error"),
    ] {
        let Line::Message(m) = too_deep(deep(head).as_bytes()) else {
            panic!("{head}")
        };
        let JsonRpcMessage::Error(e) = *m else {
            panic!("{head}")
        };
        assert_eq!(e.id, Some(RequestId::Number(7)));
        assert!(refused(&e.error), "{e:?}");
        assert_eq!(e.error.message, scan::refusal(what));
        assert!(e.error.message.contains("nests deeper than 100 levels"));
    }
    let Line::Refuse(reply) = too_deep(deep(r#""id":"r","method":"x","params":"#).as_bytes())
    else {
        panic!()
    };
    assert_eq!(reply["id"], "r");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("nests deeper than 100 levels")
    );
    assert!(matches!(
        too_deep(deep(r#""method":"x","params":"#).as_bytes()),
        Line::Garbage(_)
    ));
    // A server's own error is not the sidecar's refusal.
    let Line::Message(m) =
        parse_line(br#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#)
    else {
        panic!()
    };
    let JsonRpcMessage::Error(e) = *m else {
        panic!()
    };
    assert!(!refused(&e.error));
}

#[test]
fn parse_line_skips_blank_and_reports_garbage() {
    assert!(matches!(parse_line(b"   \r"), Line::Skip));
    let Line::Garbage(err) = parse_line(b"Hello from stdout") else {
        panic!()
    };
    assert!(err.contains("Hello from stdout"));
    assert!(matches!(parse_line(b"\xff\xfe\x00"), Line::Garbage(_)));
    let ok = parse_line(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
    assert!(matches!(ok, Line::Message(_)));
    let bom = parse_line(
        b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\r",
    );
    assert!(matches!(bom, Line::Message(_)));
}

#[test]
fn unreadable_requests_are_refused_and_unreadable_responses_become_errors() {
    // A known method with broken params reaches rmcp as a custom request (answered with an
    // error there); a request that is not JSON-RPC-shaped is refused here.
    let broken =
        br#"{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{"messages":3}}"#;
    assert!(matches!(parse_line(broken), Line::Message(_)));
    let Line::Refuse(reply) = parse_line(br#"{"jsonrpc":"2.0","id":[7],"method":"ping"}"#) else {
        panic!()
    };
    assert_eq!(reply["id"], serde_json::json!([7]));
    assert_eq!(reply["error"]["code"], -32602);
    let Line::Message(m) =
        parse_line(br#"{"jsonrpc":"2.0","id":8,"error":{"code":"bad","message":3}}"#)
    else {
        panic!()
    };
    let v = serde_json::to_value(&m).unwrap();
    assert_eq!(v["id"], 8);
    assert!(
        v["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("could not be read")),
        "{v}"
    );
}

/// Found by the fault tests: an answer that fails to parse for a reason other than its
/// shape (bytes that are not UTF-8, a lone surrogate, nesting past the depth limit) used to
/// be skipped as junk, so its call waited for the whole timeout and lost the reason.
#[test]
fn unreadable_answers_still_fail_their_call_with_the_reason() {
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":4,"result":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let cases: [(&[u8], &str); 4] = [
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]}}",
            "invalid unicode",
        ),
        (
            br#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"a\ud800b"}]}}"#,
            "hex escape",
        ),
        (deep.as_bytes(), "recursion limit"),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\tb\x01\"}]}}",
            "control character",
        ),
    ];
    for (n, (line, reason)) in cases.into_iter().enumerate() {
        let Line::Message(m) = parse_line(line) else {
            panic!("case {n}: {:?}", parse_line(line))
        };
        let v = serde_json::to_value(&m).unwrap();
        assert_eq!(v["id"], n + 2, "{v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains("could not be read"), "{message}");
        assert!(message.contains(reason), "case {n}: {message}");
    }
    // The same breakage in a request: refused with its id.
    let Line::Refuse(reply) = parse_line(
        br#"{"jsonrpc":"2.0","id":"r","method":"elicitation/create","params":{"message":"\ud800"}}"#,
    ) else {
        panic!()
    };
    assert_eq!(reply["id"], "r");
    // Depth alone, with no id to answer: junk, and no stack overflow.
    assert!(matches!(parse_line(&[b'['; 100_000]), Line::Garbage(_)));
    let deep_notification = format!(
        r#"{{"jsonrpc":"2.0","method":"x","params":{}}}"#,
        "[".repeat(100_000)
    );
    assert!(matches!(
        parse_line(deep_notification.as_bytes()),
        Line::Garbage(_)
    ));
}

#[test]
fn batches_split_into_their_messages() {
    let batch = br#" [{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}]"#;
    let members = split_batch(batch).unwrap();
    assert_eq!(members.len(), 2);
    assert!(
        members
            .iter()
            .all(|m| matches!(parse_line(m), Line::Message(_)))
    );
    for not_a_batch in [
        &b"[]"[..],
        b"[1, 2]",
        b"[{\"a\": 1}, 3]",
        b"{\"jsonrpc\":\"2.0\"}",
        b"[[[[",
        b"",
    ] {
        assert!(
            split_batch(not_a_batch).is_none(),
            "{}",
            String::from_utf8_lossy(not_a_batch)
        );
    }
    assert!(split_batch(&[b'['; 100_000]).is_none());
}

#[test]
fn form_schemas_are_stashed_raw_in_both_eras() {
    let legacy = br#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"message":"m","requestedSchema":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"object"}}}}}"#;
    let Line::Message(m) = parse_line(legacy) else {
        panic!("{:?}", parse_line(legacy))
    };
    let v = serde_json::to_value(&m).unwrap();
    let raw = &v["params"]["_meta"][RAW_SCHEMA_META];
    let keys: Vec<_> = raw["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        keys,
        ["z", "a"],
        "order kept, nested object kept for the sidecar to refuse"
    );
    let modern = br#"{"jsonrpc":"2.0","id":2,"result":{"resultType":"input_required","inputRequests":{"k":{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{"b":{"type":"boolean"}}}}},"u":{"method":"elicitation/create","params":{"mode":"url","message":"m","url":"https://e.com"}}}}}"#;
    let Line::Message(m) = parse_line(modern) else {
        panic!()
    };
    let v = serde_json::to_value(&m).unwrap();
    let k = &v["result"]["inputRequests"]["k"]["params"];
    assert_eq!(
        k["_meta"][RAW_SCHEMA_META]["properties"]["b"]["type"],
        "boolean"
    );
    assert!(
        v["result"]["inputRequests"]["u"]["params"]
            .get("_meta")
            .is_none()
    );
}

proptest::proptest! {
    /// Whatever a server prints, one line never panics the parser.
    #[test]
    fn arbitrary_lines_never_panic(line in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
        let _ = parse_line(&line);
    }

    /// Arbitrary JSON objects never panic either, including ones that look like requests.
    #[test]
    fn arbitrary_json_never_panics(method in "[a-z/]{0,20}", id in proptest::option::of(0i64..10), params in "[ -~]{0,40}") {
        let mut v = serde_json::json!({"jsonrpc": "2.0", "method": method, "params": {"x": params}});
        if let Some(id) = id { v["id"] = serde_json::json!(id); }
        let _ = parse_line(v.to_string().as_bytes());
    }

    /// Valid JSON-RPC responses are recognised whatever their id and result.
    #[test]
    fn responses_parse(id in 0i64..1_000_000, text in "[ -~]{0,40}") {
        let line = serde_json::to_vec(&serde_json::json!({
            "jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": text}]}
        })).unwrap();
        proptest::prop_assert!(matches!(parse_line(&line), Line::Message(_)));
    }
}
