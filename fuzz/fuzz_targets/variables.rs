//! Variable substitution in server definitions: `${workspaceFolder}`, `${input:id}`,
//! `${NAME:-default}`, ... Never a panic; text without `${` comes back unchanged; every input id
//! found is one the text spells out.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::config::vars::{VarContext, expand, input_ids};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let cx = VarContext {
        workspace_folder: Some(PathBuf::from("/w/proj")),
        inputs: [("key".to_string(), "${workspaceFolder}".to_string())].into(),
        keep_missing_inputs: false,
    };
    let expanded = expand(text, &cx);
    if !text.contains("${") {
        assert_eq!(expanded.as_deref(), Ok(text));
    }
    for id in input_ids(text) {
        assert!(text.contains(&format!("${{input:{id}}}")), "{id:?}");
    }
});
