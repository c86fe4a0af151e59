//! Trust decisions for servers defined inside a workspace, kept per workspace and per exact
//! subject in `$XDG_STATE_HOME/mcp-sidecar/trust.json`: the definition as written and a digest of
//! what it expands to at start ([`TrustInfo`](super::TrustInfo)), so a changed command, args,
//! `envFile` contents, environment or resolved executable asks again. Only the latest decision
//! per server is kept: changing a definition back asks again too.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub workspace: String,
    pub server: String,
    /// The definition as written (before variables), canonical JSON.
    pub definition: String,
    /// The digest of what the definition expands to (decisions stored before it existed have
    /// none, and so ask again).
    #[serde(default)]
    pub resolved: String,
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

/// The stored decision for this exact subject, if any.
pub fn decision(server: &str, info: &super::TrustInfo) -> Option<bool> {
    load()
        .into_iter()
        .find(|d| {
            d.workspace == info.workspace
                && d.server == server
                && d.definition == info.definition
                && d.resolved == info.resolved
        })
        .map(|d| d.trusted)
}

/// Records a decision (replacing any for the same workspace and server).
pub fn record(server: &str, info: &super::TrustInfo, trusted: bool) {
    let mut all = load();
    all.retain(|d| !(d.workspace == info.workspace && d.server == server));
    all.push(Decision {
        workspace: info.workspace.clone(),
        server: server.into(),
        definition: info.definition.clone(),
        resolved: info.resolved.clone(),
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
