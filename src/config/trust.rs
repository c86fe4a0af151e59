//! Trust decisions for servers defined inside a workspace, kept per workspace and per exact
//! definition (a changed command or args asks again) in `$XDG_STATE_HOME/mcp-sidecar/trust.json`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub workspace: String,
    pub server: String,
    /// The definition as written (before variables), canonical JSON.
    pub definition: String,
    pub trusted: bool,
}

pub fn store_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))?;
    Some(base.join("mcp-sidecar").join("trust.json"))
}

fn load() -> Vec<Decision> {
    store_path()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default()
}

/// The stored decision for this exact definition, if any.
pub fn decision(workspace: &str, server: &str, definition: &str) -> Option<bool> {
    load()
        .into_iter()
        .find(|d| d.workspace == workspace && d.server == server && d.definition == definition)
        .map(|d| d.trusted)
}

/// Records a decision (replacing any for the same workspace and server).
pub fn record(workspace: &str, server: &str, definition: &str, trusted: bool) {
    let mut all = load();
    all.retain(|d| !(d.workspace == workspace && d.server == server));
    all.push(Decision {
        workspace: workspace.into(),
        server: server.into(),
        definition: definition.into(),
        trusted,
    });
    let Some(path) = store_path() else { return };
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(&path, serde_json::to_vec_pretty(&all).unwrap_or_default())
    };
    if let Err(e) = write() {
        tracing::warn!(
            "could not save the trust decision to {}: {e}",
            path.display()
        );
    }
}

/// Forgets every decision about a server in a workspace.
pub fn forget(workspace: &str, server: &str) {
    let mut all = load();
    all.retain(|d| !(d.workspace == workspace && d.server == server));
    if let Some(path) = store_path() {
        let _ = std::fs::write(&path, serde_json::to_vec_pretty(&all).unwrap_or_default());
    }
}
