//! The person's own file, `$XDG_CONFIG_HOME/mcp-sidecar/mcp.json` (default `~/.config/...`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ConfigError, Layer, Source};

/// Where the person's own file lives, if a home or XDG directory is known.
pub fn user_config_path() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("mcp-sidecar").join("mcp.json"))
}

/// The user file as a settings layer.
pub struct UserFile;

impl UserFile {
    /// Reads the file; a missing file is an empty layer, an unreadable or malformed one an error
    /// naming the file, line and column.
    pub fn load(path: &Path) -> Result<Option<Layer>, ConfigError> {
        let source = Source::File(path.display().to_string());
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(ConfigError {
                    origin: source,
                    server: None,
                    message: format!("cannot read the file: {e}"),
                });
            }
        };
        let value: Value = super::workspace::parse_jsonc(&text).map_err(|message| ConfigError {
            origin: source.clone(),
            server: None,
            message,
        })?;
        Ok(Some(Layer::new(source, value)))
    }
}
