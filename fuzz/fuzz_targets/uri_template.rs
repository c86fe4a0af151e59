//! RFC 6570 URI templates (`mcp-sidecar.expandUriTemplate`): the first line is a template (a
//! server's `uriTemplate`), each further line a value for the next variable (`[a,b]` a list,
//! `{k=v,k2=v2}` an object, else a string). Never a panic; the variables are the template's own,
//! each once; an expansion is within the bound and a URI's characters, a `%` only ever starting a
//! triplet; a template of URI characters without braces expands to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_sidecar::uri_template::{MAX_URI, Template, Value};

enum Owned {
    String(String),
    List(Vec<String>),
    Map(Vec<(String, String)>),
}

fn owned(line: &str) -> Owned {
    if let Some(items) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
        Owned::List(items.split(',').map(str::to_owned).collect())
    } else if let Some(pairs) = line.strip_prefix('{').and_then(|l| l.strip_suffix('}')) {
        Owned::Map(
            pairs
                .split(',')
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').unwrap_or((p, ""));
                    (k.to_owned(), v.to_owned())
                })
                .collect(),
        )
    } else {
        Owned::String(line.to_owned())
    }
}

fn uri_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c)
}

/// Every `%` starts a triplet.
fn triplets_only(text: &str) -> bool {
    let b = text.as_bytes();
    b.iter().enumerate().all(|(i, &c)| {
        c != b'%'
            || (i + 2 < b.len() && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit())
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines = text.split('\n');
    let template = lines.next().unwrap_or_default();
    let Ok(parsed) = Template::parse(template) else {
        return;
    };
    let variables = parsed.variables();
    for (i, name) in variables.iter().enumerate() {
        assert!(template.contains(name), "{name:?}");
        assert!(!variables[..i].contains(name), "{name:?} twice");
    }
    let values: Vec<(String, Owned)> = variables
        .iter()
        .zip(lines)
        .map(|(name, line)| (name.to_string(), owned(line)))
        .collect();
    let expanded = parsed.expand(|name| {
        values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| match v {
                Owned::String(s) => Value::String(s),
                Owned::List(l) => Value::List(l),
                Owned::Map(m) => Value::Map(m),
            })
    });
    if let Ok(uri) = &expanded {
        assert!(uri.len() <= MAX_URI);
        assert!(uri.chars().all(uri_char), "{uri:?}");
        assert!(triplets_only(uri), "{uri:?}");
    }
    if !template.contains(['{', '}']) && template.chars().all(uri_char) && triplets_only(template) {
        assert_eq!(expanded.as_deref(), Ok(template));
    }
});
