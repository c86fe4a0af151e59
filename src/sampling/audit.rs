//! The audit log: every sampling exchange appended as one JSON line to
//! `$XDG_STATE_HOME/mcp-sidecar/sampling.jsonl` (default `~/.local/state/...`): the request as
//! received and as sent, the model's draft, the final answer, who or what decided, and timings.

use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

pub fn log_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(base.join("mcp-sidecar").join("sampling.jsonl"))
}

/// Appends one entry; a failure to write is logged, never fatal.
pub fn append(entry: &Value) {
    let Some(path) = log_path() else { return };
    let result = (|| -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        let mut line = serde_json::to_vec(entry)?;
        line.push(b'\n');
        file.write_all(&line)
    })();
    if let Err(e) = result {
        tracing::warn!(
            "could not append to the sampling audit log {}: {e}",
            path.display()
        );
    }
}
