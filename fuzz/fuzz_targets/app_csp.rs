//! A view's CSP from what its server declared (`_meta.ui` of the resource, as JSON): never a
//! panic; always the twelve directives, in order, on one line; no `unsafe-eval`; every source
//! kept is a plain origin (so no declared text can add a directive, a keyword or a quote).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::apps::csp;

const DIRECTIVES: [&str; 12] = [
    "default-src", "script-src", "style-src", "img-src", "font-src", "media-src", "connect-src",
    "frame-src", "worker-src", "base-uri", "object-src", "form-action",
];

fuzz_target!(|data: &[u8]| {
    let Ok(ui) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let policy = csp::build(Some(&ui));
    let header = &policy.header;
    assert!(!header.contains("unsafe-eval"), "{header}");
    assert!(!header.contains(['\n', '\r', '"', ',']), "{header}");
    let parts: Vec<&str> = header.split("; ").collect();
    assert_eq!(parts.len(), DIRECTIVES.len(), "{header}");
    for (part, name) in parts.iter().zip(DIRECTIVES) {
        let mut words = part.split(' ');
        assert_eq!(words.next(), Some(name), "{header}");
        for source in words {
            let keyword = matches!(
                source,
                "'none'" | "'self'" | "'unsafe-inline'" | "data:" | "blob:"
            );
            let origin = ["http://", "https://", "ws://", "wss://"]
                .iter()
                .any(|s| source.starts_with(s))
                && !source.contains(['\'', ';']);
            assert!(keyword || origin, "{source} in {header}");
        }
    }
});
