//! The Content-Security-Policy a view runs under, built from its resource's `_meta.ui.csp`
//! (`connectDomains`, `resourceDomains`, `frameDomains`, `baseUriDomains`): nothing undeclared,
//! no `unsafe-eval`, `object-src 'none'`. A declared entry that is not a plain origin is dropped.

use serde_json::Value;

/// The policy, and the entries dropped (for one log line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub header: String,
    pub dropped: Vec<String>,
}

/// Builds the policy from `_meta.ui` of the view's resource (`None`: nothing declared).
pub fn build(ui: Option<&Value>) -> Policy {
    let csp = ui.and_then(|u| u.get("csp"));
    let mut dropped = Vec::new();
    let mut domains = |key: &str| -> Vec<String> {
        let Some(list) = csp.and_then(|c| c.get(key)) else {
            return Vec::new();
        };
        let Some(list) = list.as_array() else {
            dropped.push(format!("{key}: not a list"));
            return Vec::new();
        };
        let mut out = Vec::new();
        for entry in list.iter().take(64) {
            match entry.as_str().and_then(origin) {
                Some(o) if !out.contains(&o) => out.push(o),
                Some(_) => {}
                None => dropped.push(format!("{key}: {}", short(entry))),
            }
        }
        out
    };
    let connect = domains("connectDomains");
    let resource = domains("resourceDomains");
    let frame = domains("frameDomains");
    let base = domains("baseUriDomains");
    let with = |fixed: &str, extra: &[String]| {
        let mut s = fixed.to_string();
        for d in extra {
            s.push(' ');
            s.push_str(d);
        }
        s
    };
    let or_none = |list: &[String], default: &str| {
        if list.is_empty() {
            default.to_string()
        } else {
            list.join(" ")
        }
    };
    let header = [
        "default-src 'none'".to_string(),
        with("script-src 'self' 'unsafe-inline'", &resource),
        with("style-src 'self' 'unsafe-inline'", &resource),
        with("img-src 'self' data: blob:", &resource),
        with("font-src 'self' data:", &resource),
        with("media-src 'self' data: blob:", &resource),
        format!("connect-src {}", or_none(&connect, "'none'")),
        format!("frame-src {}", or_none(&frame, "'none'")),
        "worker-src 'self' blob:".to_string(),
        format!("base-uri {}", or_none(&base, "'self'")),
        "object-src 'none'".to_string(),
        "form-action 'none'".to_string(),
    ]
    .join("; ");
    Policy { header, dropped }
}

/// A declared domain as a CSP source: `http(s)://` or `ws(s)://`, a host of letters, digits,
/// dots and dashes (with an optional leading `*.`), an optional port, an optional `/`.
fn origin(entry: &str) -> Option<String> {
    let (scheme, rest) = entry.split_once("://")?;
    if !matches!(scheme, "http" | "https" | "ws" | "wss") {
        return None;
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let (host, port) = match rest.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (rest, None),
    };
    let bare = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !bare.is_empty()
        && bare.len() <= 253
        && bare
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
        && !bare.starts_with(['.', '-'])
        && bare.contains(|c: char| c.is_ascii_alphanumeric());
    let port_ok = port.is_none_or(|p| {
        (1..=5).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_digit()) || p == "*"
    });
    (host_ok && port_ok).then(|| format!("{scheme}://{}", rest.to_ascii_lowercase()))
}

fn short(entry: &Value) -> String {
    let text = entry.to_string();
    match text.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn without_a_declaration_nothing_is_reachable() {
        let p = build(None);
        assert_eq!(
            p.header,
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
             img-src 'self' data: blob:; font-src 'self' data:; media-src 'self' data: blob:; \
             connect-src 'none'; frame-src 'none'; worker-src 'self' blob:; base-uri 'self'; \
             object-src 'none'; form-action 'none'"
        );
        assert!(p.dropped.is_empty());
        assert!(!p.header.contains("unsafe-eval"));
    }

    #[test]
    fn declared_domains_go_where_the_spec_says() {
        let ui = json!({"csp": {
            "connectDomains": ["https://api.example.com", "wss://live.example.com:8443"],
            "resourceDomains": ["https://*.cdn.example.com/"],
            "frameDomains": ["https://www.youtube.com"],
            "baseUriDomains": ["https://base.example.com"]
        }});
        let p = build(Some(&ui));
        assert!(
            p.header
                .contains("connect-src https://api.example.com wss://live.example.com:8443;"),
            "{}",
            p.header
        );
        assert!(
            p.header
                .contains("script-src 'self' 'unsafe-inline' https://*.cdn.example.com;")
        );
        assert!(
            p.header
                .contains("img-src 'self' data: blob: https://*.cdn.example.com;")
        );
        assert!(
            p.header
                .contains("font-src 'self' data: https://*.cdn.example.com;")
        );
        assert!(p.header.contains("frame-src https://www.youtube.com;"));
        assert!(p.header.contains("base-uri https://base.example.com;"));
        assert!(p.dropped.is_empty(), "{:?}", p.dropped);
    }

    #[test]
    fn entries_that_are_not_plain_origins_are_dropped() {
        let ui = json!({"csp": {"connectDomains": [
            "https://ok.example",
            "https://a.example; script-src *",
            "'unsafe-eval'",
            "https://x.example 'unsafe-eval'",
            "*",
            "https://x.example/path",
            "javascript://x",
            "https://\"q.example",
            "https://evil.example\nscript-src *",
            "data:",
            7,
            "https://:80",
            "https://*.",
        ]}});
        let p = build(Some(&ui));
        assert!(
            p.header.contains("connect-src https://ok.example;"),
            "{}",
            p.header
        );
        assert_eq!(p.dropped.len(), 12, "{:?}", p.dropped);
        assert_eq!(p.header.matches(';').count(), 11);
        assert!(!p.header.contains("unsafe-eval") && !p.header.contains('\n'));
        let not_a_list = build(Some(&json!({"csp": {"frameDomains": "https://a.example"}})));
        assert!(not_a_list.header.contains("frame-src 'none'"));
        assert_eq!(not_a_list.dropped.len(), 1);
    }
}
