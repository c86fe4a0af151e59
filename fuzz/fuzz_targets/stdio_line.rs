//! One line from an MCP server's stdout, as the stdio transport reads it: a batch splits into its
//! members, each member (or the line) becomes a message, junk, or a refusal. Never a panic; a
//! message always serializes again; a refusal always answers a real id with -32602. What the
//! big-result relay stores of a line it takes (`relay::stand_in`, with the transport's gate on
//! the id) is, for a line that parses, what that parse finds as its `result`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::mcp::{Line, parse_line, relay, split_batch};

fuzz_target!(|data: &[u8]| {
    let line = bytes::Bytes::copy_from_slice(data);
    // The transport's gate: an id it can read as a request id (a number or a string).
    let readable = |id: &str| {
        serde_json::from_str::<i64>(id).is_ok() || serde_json::from_str::<String>(id).is_ok()
    };
    if let Some(small) = relay::stand_in(&line, None, readable) {
        // Small members go into the stand-in as they came: one serde cannot read (a number
        // past f64) leaves the stand-in as unreadable as the line, and the same error. Members
        // the relay does not read (`jsonrpc`, unknown ones) are not checked for UTF-8.
        if let Ok(full) = serde_json::from_slice::<serde_json::Value>(data) {
            let small: serde_json::Value =
                serde_json::from_slice(&small).expect("the stand-in parses when the line does");
            let token = small["result"]["_meta"][relay::token_meta()].as_u64().expect("a token");
            let stored = relay::take(token).expect("stored");
            let stored: serde_json::Value = serde_json::from_slice(&stored).expect("stored parses");
            assert_eq!(stored, full["result"]);
        }
    }
    let members = split_batch(data).unwrap_or_else(|| vec![data.to_vec()]);
    for member in &members {
        match parse_line(member) {
            Line::Message(message) => {
                serde_json::to_vec(&message).expect("a parsed message serializes");
            }
            Line::Refuse(reply) => {
                assert!(!reply["id"].is_null(), "{reply}");
                assert_eq!(reply["error"]["code"], -32602, "{reply}");
            }
            Line::Skip | Line::Garbage(_) => {}
        }
    }
});
