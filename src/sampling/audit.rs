//! The audit log: every sampling exchange appended as one JSON line to
//! `$XDG_STATE_HOME/mcp-sidecar/sampling.jsonl` (default `~/.local/state/...`): the request as
//! received and as sent, the model's draft, the final answer, who or what decided, and timings.
//!
//! The file is `0600` in the `0700` state directory. An exchange that did not end accepted is
//! logged as a summary (sizes, not the messages); a string longer than [`BLOCK_CAP`] and a
//! content block larger than it are cut, with a note and the original length; an entry still
//! larger than [`ENTRY_CAP`] keeps only summaries. Past [`ROTATE_AT`] the file becomes
//! `sampling.jsonl.1` (one old file is kept) and a new one starts.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// The most of one string or one content block that is logged.
pub const BLOCK_CAP: usize = 64 * 1024;
/// The most of one entry that is logged in full.
pub const ENTRY_CAP: usize = 1024 * 1024;
/// The size at which the log is rotated.
pub const ROTATE_AT: u64 = 10 * 1024 * 1024;

/// The entry fields that hold messages or answers.
const CONTENT_FIELDS: [&str; 4] = ["requestReceived", "requestSent", "modelDraft", "final"];

pub fn log_path() -> Option<PathBuf> {
    crate::store::state_file("sampling.jsonl")
}

/// Appends one entry to the log at `path`; a failure to write is logged, never fatal.
pub fn append(path: &Path, entry: &Value) {
    if let Err(e) = append_to(path, entry, ROTATE_AT) {
        tracing::warn!(
            "could not append to the sampling audit log {}: {e}",
            path.display()
        );
    }
}

/// Appends `entry` (capped) to `path`, first rotating the file when it would pass `rotate_at`.
pub fn append_to(path: &Path, entry: &Value, rotate_at: u64) -> std::io::Result<()> {
    let mut entry = entry.clone();
    cap(&mut entry);
    let mut line = serde_json::to_vec(&entry)?;
    line.push(b'\n');
    // Two sidecars may log at once: rotation and append happen under the log's lock.
    let _lock = crate::store::Lock::exclusive(path)?;
    let size = std::fs::metadata(path).map_or(0, |m| m.len());
    if size > 0 && size + line.len() as u64 > rotate_at {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        std::fs::rename(path, PathBuf::from(old))?;
    }
    crate::store::open_append(path)?.write_all(&line)
}

/// Replaces the messages and answers of an exchange that did not end accepted with their
/// sizes: a refused request (by a person, a policy or a limit) is logged as who and why, not
/// what it said.
pub fn summarize(entry: &mut Value) {
    for field in CONTENT_FIELDS {
        if let Some(v) = entry.get_mut(field) {
            *v = summary(v);
        }
    }
}

fn summary(v: &Value) -> Value {
    let bytes = serde_json::to_vec(v).map_or(0, |b| b.len());
    let mut out = Map::new();
    out.insert("summary".into(), json!(true));
    out.insert("bytes".into(), json!(bytes));
    if let Some(messages) = v.get("messages").and_then(Value::as_array) {
        out.insert("messages".into(), json!(messages.len()));
        let blocks: usize = messages
            .iter()
            .map(|m| match m.get("content") {
                Some(Value::Array(a)) => a.len(),
                Some(_) => 1,
                None => 0,
            })
            .sum();
        out.insert("blocks".into(), json!(blocks));
    } else if let Some(content) = v.get("content") {
        out.insert(
            "blocks".into(),
            json!(content.as_array().map_or(1, Vec::len)),
        );
    }
    if let Some(n) = v.get("maxTokens") {
        out.insert("maxTokens".into(), n.clone());
    }
    Value::Object(out)
}

/// Caps what one entry logs: long strings, large blocks, then the whole entry.
fn cap(entry: &mut Value) {
    for field in CONTENT_FIELDS {
        if let Some(v) = entry.get_mut(field) {
            cap_value(v);
        }
    }
    let size = serde_json::to_vec(entry).map_or(0, |b| b.len());
    if size > ENTRY_CAP {
        summarize(entry);
        entry["capped"] = json!(format!(
            "the entry was {size} bytes; only summaries are logged past {ENTRY_CAP}"
        ));
    }
}

fn cap_value(v: &mut Value) {
    match v {
        Value::String(s) if s.len() > BLOCK_CAP => {
            let all = s.len();
            let mut end = BLOCK_CAP;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
            s.push_str(&format!(" … [capped at {BLOCK_CAP} of {all} bytes]"));
        }
        Value::Array(items) => items.iter_mut().for_each(cap_value),
        Value::Object(map) => {
            map.values_mut().for_each(cap_value);
            // A content block (many medium strings, a deep tool input) larger than the cap
            // keeps its type and a note.
            if let Some(kind) = map.get("type").and_then(Value::as_str).map(str::to_owned) {
                // (Room for a capped string's note and the block's small fields.)
                let size = serde_json::to_vec(&*map).map_or(0, |b| b.len());
                if size > BLOCK_CAP + 1024 {
                    *v = json!({
                        "type": kind,
                        "capped": format!("a {size}-byte block, over the {BLOCK_CAP}-byte cap, is not logged"),
                        "originalBytes": size,
                    });
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn large_blocks_are_capped_with_their_length() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("mcp-sidecar/sampling.jsonl");
        let big = "é".repeat(100_000);
        let many: Vec<Value> = (0..40)
            .map(|i| json!(format!("{i}{}", "x".repeat(4000))))
            .collect();
        let entry = json!({
            "server": "s", "outcome": "accepted",
            "requestReceived": {"messages": [{"role": "user", "content": [
                {"type": "text", "text": big},
                {"type": "tool_use", "id": "t", "name": "n", "input": {"many": many}},
                {"type": "text", "text": "small"}
            ]}], "maxTokens": 5},
        });
        append_to(&path, &entry, ROTATE_AT).unwrap();
        let logged = &read_lines(&path)[0];
        let content = &logged["requestReceived"]["messages"][0]["content"];
        let text = content[0]["text"].as_str().unwrap();
        assert!(text.len() < BLOCK_CAP + 100, "{}", text.len());
        assert!(text.ends_with(&format!("[capped at {BLOCK_CAP} of 200000 bytes]")));
        assert_eq!(content[1]["type"], "tool_use");
        assert!(content[1]["originalBytes"].as_u64().unwrap() > BLOCK_CAP as u64);
        assert!(content[1].get("input").is_none());
        assert_eq!(content[2]["text"], "small");
    }

    #[test]
    fn a_huge_entry_keeps_only_summaries() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sampling.jsonl");
        let blocks: Vec<Value> = (0..40)
            .map(|_| json!({"type": "text", "text": "y".repeat(60_000)}))
            .collect();
        let entry = json!({"server": "s", "outcome": "accepted",
            "requestReceived": {"messages": [{"role": "user", "content": blocks}], "maxTokens": 5}});
        append_to(&path, &entry, ROTATE_AT).unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert!(size < 4096, "{size}");
        let logged = &read_lines(&path)[0];
        assert_eq!(logged["requestReceived"]["summary"], true);
        assert_eq!(logged["requestReceived"]["blocks"], 40);
        assert!(
            logged["capped"]
                .as_str()
                .unwrap()
                .contains("only summaries")
        );
    }

    #[test]
    fn refused_exchanges_are_summaries_not_messages() {
        let mut entry = json!({
            "server": "s", "outcome": "refused", "reason": "the person rejected the request",
            "requestReceived": {"messages": [
                {"role": "user", "content": {"type": "text", "text": "my secret plan"}},
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}
            ], "maxTokens": 400},
        });
        summarize(&mut entry);
        let text = entry.to_string();
        assert!(!text.contains("secret plan"), "{text}");
        assert_eq!(entry["requestReceived"]["messages"], 2);
        assert_eq!(entry["requestReceived"]["blocks"], 3);
        assert_eq!(entry["requestReceived"]["maxTokens"], 400);
        assert!(entry["requestReceived"]["bytes"].as_u64().unwrap() > 50);
        assert_eq!(entry["reason"], "the person rejected the request");
    }

    #[test]
    fn the_log_rotates_keeping_one_old_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sampling.jsonl");
        let old = tmp.path().join("sampling.jsonl.1");
        let entry = |n: u32| json!({"n": n, "pad": "z".repeat(300)});
        for n in 0..10 {
            append_to(&path, &entry(n), 1000).unwrap();
        }
        let current = read_lines(&path);
        let previous = read_lines(&old);
        assert!(std::fs::metadata(&path).unwrap().len() <= 1000);
        assert!(std::fs::metadata(&old).unwrap().len() <= 1000);
        assert_eq!(current.last().unwrap()["n"], 9);
        assert_eq!(
            previous.last().unwrap()["n"].as_u64().unwrap() + 1,
            current[0]["n"].as_u64().unwrap(),
            "the old file ends where the new one starts"
        );
        assert!(!tmp.path().join("sampling.jsonl.2").exists());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
