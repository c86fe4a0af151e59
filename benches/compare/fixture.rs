//! The big-result server: the bench binary itself, run with `BENCH_ROLE=big-server`, is a minimal
//! legacy (2025-11-25) stdio MCP server with one tool, `big`, whose result is one text block of
//! about `BENCH_BIG_BYTES` bytes once serialized, and one resource of the same size. The result is serialized once at start and
//! written as it is for every call, so the server's own cost stays out of the relay figure.

use std::io::{BufRead, Write};

use serde_json::{Value, json};

pub const ROLE_VAR: &str = "BENCH_ROLE";
pub const ROLE: &str = "big-server";
pub const BYTES_VAR: &str = "BENCH_BIG_BYTES";

/// A text of many short lines with quotes, tabs and non-ASCII (escaping is part of the work),
/// whose JSON-escaped length is just under `target` bytes.
pub fn big_text(target: usize) -> String {
    let mut text = String::with_capacity(target);
    let mut escaped = 0;
    for i in 0.. {
        let line = format!(
            "{i:08}\t\"src/module_{}/file-{i}.rs\": {} bytes — ok, checksum {:016x}\n",
            i % 97,
            (i * 7919) % 100_000,
            (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        );
        let cost = serde_json::to_string(&line).unwrap().len() - 2;
        if escaped + cost > target {
            break;
        }
        escaped += cost;
        text.push_str(&line);
    }
    text
}

/// The serialized `result` of a `tools/call` answer whose whole line is about `target` bytes.
pub fn result_bytes(target: usize) -> Vec<u8> {
    let text = big_text(target.saturating_sub(128));
    serde_json::to_vec(&json!({"content": [{"type": "text", "text": text}], "isError": false}))
        .unwrap()
}

/// The text's length in bytes in a [`result_bytes`] result.
pub fn text_len(result: &[u8]) -> usize {
    serde_json::from_slice::<Value>(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap()
        .len()
}

/// The serialized `result` of a `resources/read` answer: the same text as one resource.
pub fn resource_bytes(target: usize) -> Vec<u8> {
    let text = big_text(target.saturating_sub(160));
    serde_json::to_vec(
        &json!({"contents": [{"uri": RESOURCE_URI, "mimeType": "text/plain", "text": text}]}),
    )
    .unwrap()
}

/// The fixture's one resource.
pub const RESOURCE_URI: &str = "bench://big.txt";

/// One JSON-RPC response line (without the newline) around an already serialized result.
pub fn response_line(id: &[u8], result: &[u8]) -> Vec<u8> {
    let mut line = response_head(id);
    line.reserve(result.len() + 1);
    line.extend_from_slice(result);
    line.push(b'}');
    line
}

/// What comes before the result in a [`response_line`].
fn response_head(id: &[u8]) -> Vec<u8> {
    let mut head = Vec::with_capacity(64);
    head.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    head.extend_from_slice(id);
    head.extend_from_slice(br#","result":"#);
    head
}

pub fn bytes_from_env() -> usize {
    std::env::var(BYTES_VAR)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10 << 20)
}

/// Serves stdin/stdout until stdin closes.
pub fn serve() {
    let result = result_bytes(bytes_from_env());
    let resource = resource_bytes(bytes_from_env());
    let stdin = std::io::stdin().lock();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for line in stdin.lines() {
        let Ok(line) = line else { break };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
            continue; // notifications and answers
        };
        let id_bytes = serde_json::to_vec(id).unwrap();
        let answer =
            |result: Value| response_line(&id_bytes, &serde_json::to_vec(&result).unwrap());
        // The big results are written as they were serialized at start, around the head and
        // tail of their line: no per-call copy of the document (that would be the server's
        // cost in every figure, not the relay's).
        let (head, big): (Vec<u8>, &[u8]) = match method {
            "initialize" => (
                answer(json!({
                    "protocolVersion": message["params"]["protocolVersion"],
                    "capabilities": {"tools": {}, "resources": {}},
                    "serverInfo": {"name": "bench-big", "version": "0"},
                })),
                b"",
            ),
            "tools/list" => (
                answer(json!({"tools": [{
                    "name": "big",
                    "description": "Returns one large text block.",
                    "inputSchema": {"type": "object", "properties": {}},
                }]})),
                b"",
            ),
            "tools/call" => (response_head(&id_bytes), &result),
            "resources/list" => (
                answer(json!({"resources": [{"uri": RESOURCE_URI, "name": "big"}]})),
                b"",
            ),
            "resources/read" => (response_head(&id_bytes), &resource),
            "ping" => (answer(json!({})), b""),
            _ => (
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601, "message": format!("{method} is not supported by this fixture")}}))
                .unwrap(),
                b"",
            ),
        };
        let tail: &[u8] = if big.is_empty() { b"\n" } else { b"}\n" };
        if out.write_all(&head).is_err()
            || out.write_all(big).is_err()
            || out.write_all(tail).is_err()
            || out.flush().is_err()
        {
            break;
        }
    }
}
