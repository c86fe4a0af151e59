//! A server's `requestedSchema` (JSON): the sidecar's form parser either refuses it with a reason
//! or yields fields; a form's own defaults are then checked against the schema, as an answer
//! would be, and the form is written as plain LSP's document and read back: one line per field
//! whatever the titles and descriptions hold, every problem on a line of the text. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::elicitation::{Form, document, validate};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(form) = Form::parse(&schema) else {
        return;
    };
    let _ = form.defaults_cover_required();
    let _ = validate(&schema, &form.defaults());
    let text = document::render(&form, &[], &serde_json::Map::new());
    let fields = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .count();
    assert_eq!(fields, form.fields.len(), "{text}");
    if let Err(problems) = document::read(&form, &text) {
        let lines = text.lines().count().max(1) as u32;
        assert!(problems.iter().all(|p| p.line < lines));
    }
});
