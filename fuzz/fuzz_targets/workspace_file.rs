//! A workspace `mcp.json` (JSONC), read as the sidecar reads a folder's file before anyone trusts
//! it: parsed, an `${input:...}` definition looked up, then resolved into server definitions. Never a
//! panic, never a hang; every server error names its server.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::config::{self, Context, Layer, Scope, Source, workspace};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = workspace::parse_jsonc(text) else {
        return;
    };
    let folder = PathBuf::from("/w/proj");
    let layer = Layer {
        source: Source::File("/w/proj/.vscode/mcp.json".into()),
        value,
        scope: Scope::Workspace,
        folder: Some(folder.clone()),
    };
    let layers = [layer];
    let _ = config::input_def(&layers, &layers[0].source, "key");
    let cx = Context {
        folders: vec![folder],
        inputs: [(config::input_key(&layers[0].source, "key"), "v".to_string())].into(),
        ..Context::default()
    };
    let (resolved, _) = config::resolve(&layers, &cx);
    for server in &resolved.servers {
        if let Err(e) = server {
            assert!(e.server.is_some(), "{e}");
        }
    }
});
