//! A server's `requestedSchema` (JSON): the sidecar's form parser either refuses it with a reason
//! or yields fields; a form's own defaults are then checked against the schema, as an answer
//! would be. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::elicitation::{Form, validate};

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let Ok(form) = Form::parse(&schema) else {
        return;
    };
    let _ = form.defaults_cover_required();
    let _ = validate(&schema, &form.defaults());
});
