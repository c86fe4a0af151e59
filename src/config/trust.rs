//! Trust decisions for servers defined inside a workspace, kept per workspace and per exact
//! subject in `$XDG_STATE_HOME/mcp-sidecar/trust.json`: the definition as written and a digest of
//! what it expands to at start ([`TrustInfo`](super::TrustInfo)), so a changed command, args,
//! `envFile` contents, environment or resolved executable asks again. Only the latest decision
//! per server is kept: changing a definition back asks again too.

use std::path::{Path, PathBuf};

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
    crate::store::state_file("trust.json")
}

fn load() -> Vec<Decision> {
    store_path().map(|p| load_from(&p)).unwrap_or_default()
}

fn load_from(path: &Path) -> Vec<Decision> {
    std::fs::read_to_string(path)
        .ok()
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
    let Some(path) = store_path() else { return };
    let decision = Decision {
        workspace: info.workspace.clone(),
        server: server.into(),
        definition: info.definition.clone(),
        resolved: info.resolved.clone(),
        trusted,
    };
    if let Err(e) = record_in(&path, decision) {
        tracing::warn!(
            "could not save the trust decision to {}: {e}",
            path.display()
        );
    }
}

fn record_in(path: &Path, decision: Decision) -> std::io::Result<()> {
    update(path, |all| {
        all.retain(|d| !(d.workspace == decision.workspace && d.server == decision.server));
        all.push(decision);
    })
}

/// Read, change, write back under the store's lock, so that two sidecars deciding at once lose
/// nothing; the file is replaced atomically (`0600`, in the `0700` state directory).
fn update(path: &Path, change: impl FnOnce(&mut Vec<Decision>)) -> std::io::Result<()> {
    let _lock = crate::store::Lock::exclusive(path)?;
    let mut all = load_from(path);
    change(&mut all);
    let bytes = serde_json::to_vec_pretty(&all).map_err(std::io::Error::other)?;
    crate::store::write_atomic(path, &bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision(server: &str, trusted: bool) -> Decision {
        Decision {
            workspace: "/ws".into(),
            server: server.into(),
            definition: format!("{{\"command\":\"{server}\"}}"),
            resolved: String::new(),
            trusted,
        }
    }

    #[test]
    fn decisions_recorded_at_once_are_all_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("mcp-sidecar/trust.json");
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for i in 0..10 {
                        record_in(&path, decision(&format!("s{t}-{i}"), i % 2 == 0)).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let all = load_from(&path);
        assert_eq!(all.len(), 80, "every decision survives");
        // Replacing keeps one per server; forgetting removes it.
        record_in(&path, decision("s0-0", false)).unwrap();
        update(&path, |all| all.retain(|d| d.server != "s1-1")).unwrap();
        let all = load_from(&path);
        assert_eq!(all.len(), 79);
        assert!(all.contains(&decision("s0-0", false)));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(dir_mode, 0o700);
    }
}
