//! One line from an MCP server's stdout, as the stdio transport reads it: a batch splits into its
//! members, each member (or the line) becomes a message, junk, or a refusal. Never a panic; a
//! message always serializes again; a refusal always answers a real id with -32602.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::mcp::{Line, parse_line, split_batch};

fuzz_target!(|data: &[u8]| {
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
