//! Settings: the one shape read from the editor (`initializationOptions`,
//! `workspace/didChangeConfiguration`) and from the person's own `mcp.json`, validated into
//! [`ServerSpec`]s. Each server is validated on its own, so one bad entry never stops the others.
//! The reference is `docs/configuration.md`.

mod server;
mod settings;
mod user_file;

pub use server::{ProtocolPin, RootsFilter, ServerSpec, TransportSpec};
pub use settings::{DEFAULT_MAX_MESSAGE_BYTES, DiscoverSettings, RootsSettings, Settings};
pub use user_file::{UserFile, user_config_path};

use std::collections::BTreeMap;

use serde_json::Value;

/// Where a server definition came from, shown in `listServers` and in every error about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// `initializationOptions` or `workspace/didChangeConfiguration`.
    EditorSettings,
    /// A file, by path.
    File(String),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::EditorSettings => f.write_str("editor settings"),
            Source::File(path) => f.write_str(path),
        }
    }
}

/// A problem with one part of the configuration, phrased for the person who has to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: {message}")]
pub struct ConfigError {
    pub origin: Source,
    /// The server the problem is about, if any.
    pub server: Option<String>,
    pub message: String,
}

/// A server entry as found in one source, before validation.
#[derive(Debug, Clone)]
pub struct RawServer {
    pub name: String,
    pub source: Source,
    pub value: Value,
}

/// The effective configuration: settings from the highest-precedence source that has each key,
/// servers merged by name (the higher source wins), every server validated on its own.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub settings: Settings,
    pub servers: Vec<Result<ServerSpec, ConfigError>>,
}

/// One source of settings, as a JSON object, in precedence order (highest first).
pub struct Layer {
    pub source: Source,
    pub value: Value,
}

/// Merges layers (highest precedence first): top-level keys from the first layer that has them,
/// `servers` (or `mcpServers`) merged by name.
pub fn resolve(layers: &[Layer]) -> (Resolved, Vec<ConfigError>) {
    let mut errors = Vec::new();
    let mut top = serde_json::Map::new();
    let mut servers: BTreeMap<String, RawServer> = BTreeMap::new();
    for layer in layers {
        let Some(obj) = layer.value.as_object() else {
            if !layer.value.is_null() {
                errors.push(ConfigError {
                    origin: layer.source.clone(),
                    server: None,
                    message: "settings must be a JSON object".into(),
                });
            }
            continue;
        };
        for (key, value) in obj {
            match key.as_str() {
                "servers" | "mcpServers" => {
                    collect_servers(layer, value, &mut servers, &mut errors)
                }
                _ => {
                    top.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
    let settings = match Settings::from_value(Value::Object(top)) {
        Ok(s) => s,
        Err(message) => {
            errors.push(ConfigError {
                origin: layers
                    .first()
                    .map(|l| l.source.clone())
                    .unwrap_or(Source::EditorSettings),
                server: None,
                message,
            });
            Settings::default()
        }
    };
    let servers = servers
        .into_values()
        .map(|raw| ServerSpec::parse(&raw))
        .collect();
    (Resolved { settings, servers }, errors)
}

fn collect_servers(
    layer: &Layer,
    value: &Value,
    servers: &mut BTreeMap<String, RawServer>,
    errors: &mut Vec<ConfigError>,
) {
    let Some(map) = value.as_object() else {
        errors.push(ConfigError {
            origin: layer.source.clone(),
            server: None,
            message: "\"servers\" must be an object mapping names to server definitions".into(),
        });
        return;
    };
    for (name, entry) in map {
        servers.entry(name.clone()).or_insert_with(|| RawServer {
            name: name.clone(),
            source: layer.source.clone(),
            value: entry.clone(),
        });
    }
}

#[cfg(test)]
mod tests;

/// The effective configuration from the editor's settings and the person's own file.
pub fn load(editor_settings: &Value) -> (Resolved, Vec<ConfigError>) {
    let mut layers = vec![Layer {
        source: Source::EditorSettings,
        value: editor_settings.clone(),
    }];
    let mut errors = Vec::new();
    if let Some(path) = user_config_path() {
        match UserFile::load(&path) {
            Ok(Some(layer)) => layers.push(layer),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    let (resolved, more) = resolve(&layers);
    errors.extend(more);
    (resolved, errors)
}

/// Editors may nest the sidecar's settings under its name; accept both spellings and bare.
pub fn unwrap_editor_settings(value: Option<Value>) -> Value {
    match value {
        Some(Value::Object(mut obj)) => {
            for key in ["mcpSidecar", "mcp-sidecar", "mcp_sidecar"] {
                if let Some(inner) = obj.remove(key) {
                    return inner;
                }
            }
            Value::Object(obj)
        }
        Some(other) => other,
        None => Value::Null,
    }
}
