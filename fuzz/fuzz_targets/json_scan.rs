//! A long line from a server's stdout checked as it comes in, a read at a time
//! (`mcp::scan::Scan`): the input's first four bytes say where the reads end, the rest is the
//! line. Never a panic; the same outline wherever the reads end; an outline only for JSON, and
//! then where a `serde_json` reading of the whole line finds the `id` and the `result`, unless
//! that reading declined what only looks like a surrogate escape. The depth bound: where
//! the scan stops for depth, the bracket count (`scan::nests_deeper`) finds the line too deep; a
//! line the scan read whole, it finds within the bound.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::mcp::scan::{self, Scan};

fuzz_target!(|data: &[u8]| {
    let (cuts, line) = data.split_at(data.len().min(4));
    let line = bytes::Bytes::copy_from_slice(line);
    let mut whole = Scan::default();
    whole.feed(&line);
    if whole.too_deep() {
        assert!(scan::nests_deeper(&line, scan::LINE_DEPTH));
    }
    if whole.complete() {
        assert!(!scan::nests_deeper(&line, scan::LINE_DEPTH));
    }
    let whole = whole.finish();

    let mut ends: Vec<usize> = cuts.iter().map(|&c| usize::from(c) * line.len() / 255).collect();
    ends.sort_unstable();
    let mut pieces = Scan::default();
    for end in ends {
        pieces.feed(&line[..end]);
    }
    pieces.feed(&line);
    assert_eq!(pieces.finish(), whole, "cut at {cuts:?}");

    // UTF-8 is the transport's own check, before the outline is used.
    if let Some(outline) = whole.filter(|_| std::str::from_utf8(&line).is_ok()) {
        assert!(serde_json::from_slice::<&serde_json::value::RawValue>(&line).is_ok());
        type Members<'a> = std::collections::HashMap<String, &'a serde_json::value::RawValue>;
        let span = |raw: &serde_json::value::RawValue| {
            let at = raw.get().as_ptr() as usize - line.as_ptr() as usize;
            at..at + raw.get().len()
        };
        match serde_json::from_slice::<Members>(&line) {
            Ok(members) => {
                assert_eq!(span(members["id"]), outline.id);
                assert_eq!(span(members["result"]), outline.result);
            }
            // serde's way declines anything that might be a surrogate escape (an escaped
            // backslash followed by `ud8`…, too); the scan reads escapes exactly.
            Err(_) => assert!(mcp_sidecar::mcp::has_surrogate_escape(&line)),
        }
    }
});
