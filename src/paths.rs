//! Where things live on this machine: the home directory (`~`), the person's configuration
//! directory and the sidecar's state directory (XDG, with the usual defaults). Reads the
//! environment only; creates nothing.

use std::path::PathBuf;

/// Expands a leading `~/` (or a lone `~`) to the home directory; anything else is returned as is.
pub fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), home()) {
        (Some(rest), Some(home)) => home.join(rest),
        (_, Some(home)) if path == "~" => home,
        _ => PathBuf::from(path),
    }
}

/// `$HOME`, when set and not empty.
pub fn home() -> Option<PathBuf> {
    non_empty("HOME")
}

/// `$XDG_CONFIG_HOME/mcp-sidecar`, else `~/.config/mcp-sidecar`; `None` when neither is known.
pub fn config_dir() -> Option<PathBuf> {
    xdg("XDG_CONFIG_HOME", ".config")
}

/// `$XDG_STATE_HOME/mcp-sidecar`, else `~/.local/state/mcp-sidecar`; `None` when neither is
/// known.
pub fn state_dir() -> Option<PathBuf> {
    xdg("XDG_STATE_HOME", ".local/state")
}

fn xdg(variable: &str, under_home: &str) -> Option<PathBuf> {
    let base = non_empty(variable).or_else(|| home().map(|h| h.join(under_home)))?;
    Some(base.join("mcp-sidecar"))
}

fn non_empty(variable: &str) -> Option<PathBuf> {
    std::env::var_os(variable)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}
