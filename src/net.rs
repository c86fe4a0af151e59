//! What both HTTP clients (the Streamable HTTP transport and the OpenAI-compatible sampling
//! provider) must agree on: which redirects are followed, and what counts as this machine.

/// Follows only same-origin 307/308 redirects (they keep the method and the body), at most 5;
/// anything else comes back as the redirect response, for the caller to report with its status.
/// So a request, and the credentials it carries, never go to a host the settings do not name.
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let keeps_body = matches!(attempt.status().as_u16(), 307 | 308);
        let same_origin = attempt
            .previous()
            .first()
            .is_some_and(|first| first.origin() == attempt.url().origin());
        if keeps_body && same_origin && attempt.previous().len() <= 5 {
            attempt.follow()
        } else {
            attempt.stop()
        }
    })
}

/// Whether the URL names this machine: `localhost`, `127.0.0.0/8` or `::1` (from its spelling;
/// nothing is resolved).
pub fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}
