//! Text other parties chose, cleaned for the editor's screen (`contract::shown`): never a
//! panic; the first byte picks the cap; what comes out is within the cap, holds no control,
//! escape, bidirectional or invisible character (a line: no line break either), and comes out
//! of a second cleaning unchanged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::contract::shown;

fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{FEFF}' | '\u{2028}' | '\u{2029}')
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    let max = usize::from(first) + 1;
    let line = shown::line(&text, max);
    assert!(line.chars().count() <= max, "{line:?}");
    assert!(!line.chars().any(|c| hidden(c) || c == '\n'), "{line:?}");
    assert_eq!(shown::line(&line, max), line);
    let block = shown::block(&text, max);
    assert!(block.chars().count() <= max, "{block:?}");
    assert!(!block.chars().any(hidden), "{block:?}");
    assert!(!block.contains("\n\n\n"), "{block:?}");
    assert_eq!(shown::block(&block, max), block);
});
