//! The names the agent sees: `<server>__<tool>`, within `[A-Za-z0-9_-]` and 64 characters.
//!
//! A pair gets the plain form `<server>__<tool>` when both parts are made of `[A-Za-z0-9_-]` only,
//! the server's name has no `__` and neither starts nor ends with `_`, and the whole fits in 64
//! characters. The server part then never holds the separator, so the first `__` splits a plain
//! name back into exactly one pair. Any other pair gets the hashed form: the plain form with every
//! other character replaced by `_`, cut to 55 characters, then `_` and 8 hex digits of SHA-256
//! over `<server> NUL <tool>`, 64 characters at most. Both forms depend on the pair alone, so a
//! name stays the same while servers come and go.

use sha2::{Digest, Sha256};

/// Which tools an endpoint offers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// Every running server's tools, named `<server>__<tool>` ([`exposed`]).
    All,
    /// One server's tools under their own names (`mcp-sidecar gateway --server NAME`).
    One(String),
}

/// Longest name many agents accept (the OpenAI and Anthropic tool-name limit).
pub const MAX_LEN: usize = 64;
/// The separator between the server and the tool.
pub const SEPARATOR: &str = "__";
/// Hex digits of the hash in the hashed form.
const HASH_DIGITS: usize = 8;

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// The name of `tool` of `server` as the agent sees it.
pub fn exposed(server: &str, tool: &str) -> String {
    let plain = format!("{server}{SEPARATOR}{tool}");
    let clean = !server.is_empty()
        && !tool.is_empty()
        && plain.chars().all(allowed)
        && !server.contains(SEPARATOR)
        && !server.starts_with('_')
        && !server.ends_with('_')
        && plain.len() <= MAX_LEN;
    if clean {
        return plain;
    }
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    let digest = hasher.finalize();
    let hash: String = digest
        .iter()
        .take(HASH_DIGITS / 2)
        .map(|b| format!("{b:02x}"))
        .collect();
    let stem: String = plain
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .take(MAX_LEN - HASH_DIGITS - 1)
        .collect();
    format!("{stem}_{hash}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_read_as_server_and_tool() {
        assert_eq!(exposed("github", "create_issue"), "github__create_issue");
        assert_eq!(exposed("my-db", "query"), "my-db__query");
        assert_eq!(exposed("a_b", "_c"), "a_b___c");
    }

    #[test]
    fn anything_else_is_cleaned_and_hashed_within_64_characters() {
        let dotted = exposed("acme.tools", "run");
        assert!(dotted.starts_with("acme_tools__run_"), "{dotted}");
        assert_eq!(dotted.len(), "acme_tools__run_".len() + 8);
        // Two pairs that clean to the same text still differ.
        assert_ne!(exposed("acme.tools", "run"), exposed("acme_tools", "run."));
        // `__` inside a server name would make the split ambiguous.
        assert_ne!(exposed("a__b", "c"), exposed("a", "b__c"));
        assert_eq!(exposed("a", "b__c"), "a__b__c");
        let long = exposed(&"s".repeat(40), &"t".repeat(40));
        assert_eq!(long.len(), MAX_LEN);
        assert_ne!(
            long,
            exposed(&"s".repeat(40), &format!("{}u", "t".repeat(39)))
        );
        let unicode = exposed("über", "grüßen");
        assert!(unicode.chars().all(allowed) && unicode.len() <= MAX_LEN);
    }

    #[test]
    fn a_name_depends_on_its_pair_alone() {
        assert_eq!(exposed("x.y", "z"), exposed("x.y", "z"));
    }
}
