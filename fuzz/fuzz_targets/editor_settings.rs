//! The editor's settings (`initializationOptions` / `didChangeConfiguration`, JSON): unwrapped
//! from the sidecar's section, the top-level settings validated (rates, durations, limits,
//! sampling), and the servers resolved. Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::config::{self, Context, Layer, Settings, Source};

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let value = config::unwrap_editor_settings(Some(value));
    let _ = Settings::from_value(value.clone());
    let layers = [Layer::new(Source::EditorSettings, value)];
    let _ = config::resolve(&layers, &Context::default());
});
