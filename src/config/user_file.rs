//! The person's own file, `$XDG_CONFIG_HOME/mcp-sidecar/mcp.json` (default `~/.config/...`).

use std::path::Path;

use super::{ConfigError, Layer, Scope};

/// The user file as a settings layer.
pub struct UserFile;

impl UserFile {
    /// Reads the file; a missing file is an empty layer, an unreadable or malformed one an error
    /// naming the file, line and column.
    pub fn load(path: &Path) -> Result<Option<Layer>, ConfigError> {
        super::workspace::read(path, Scope::User, None)
    }
}
