//! One line from an MCP server's stdout, as the stdio transport reads it: a batch splits into its
//! members, each member (or the line) becomes a message, junk, or a refusal. Never a panic; a
//! message always serializes again; a refusal always answers a real id with -32602. What a call
//! made past rmcp is handed of a line (`answer_of`) is, for a line that parses, what that parse
//! finds as its `id` and `result` (or its error), and is judged plain (`mcp::plain`) only as an
//! object.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::mcp::{Line, answer_of, parse_line, plain, split_batch};

fuzz_target!(|data: &[u8]| {
    let line = bytes::Bytes::copy_from_slice(data);
    if let Some((id, answer)) = answer_of(&line, None)
        && let Ok(full) = serde_json::from_slice::<serde_json::Value>(data)
    {
        assert_eq!(serde_json::to_value(&id).unwrap(), full["id"]);
        match answer {
            Ok(result) => {
                // Judged as a call judges it: never a panic, and never plain unless an object.
                if plain(&result) {
                    assert!(full["result"].is_object());
                }
                let result: serde_json::Value =
                    serde_json::from_slice(&result).expect("the result parses when the line does");
                assert_eq!(result, full["result"]);
            }
            Err(error) => assert_eq!(serde_json::to_value(&error).unwrap(), full["error"]),
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
