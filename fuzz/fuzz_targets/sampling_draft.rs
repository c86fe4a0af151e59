//! An edited sampling draft (Markdown), request or answer: either problems with line numbers, or
//! a request/answer that renders to a draft which reads back the same (the drafts are lossless).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::sampling::draft::{
    parse_request, parse_response, render_request, render_response,
};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok((request, choices)) = parse_request(text) {
        let again = render_request("fuzz", &request, &choices);
        assert_eq!(
            parse_request(&again).as_ref().ok(),
            Some(&(request, choices)),
            "request draft did not round-trip:\n{again}"
        );
    }
    if let Ok(result) = parse_response(text) {
        let again = render_response("fuzz", &result, None);
        assert_eq!(
            parse_response(&again).as_ref().ok(),
            Some(&result),
            "answer draft did not round-trip:\n{again}"
        );
    }
});
