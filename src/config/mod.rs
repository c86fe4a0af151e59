//! Settings: the one shape read from the editor (`initializationOptions`,
//! `workspace/didChangeConfiguration`) and from the person's own `mcp.json`, validated into
//! [`ServerSpec`]s. Each server is validated on its own, so one bad entry never stops the others.
//! The reference is `docs/configuration.md`.

mod server;
mod settings;
pub mod trust;
mod user_file;
pub mod vars;
pub mod workspace;

pub use server::{ProtocolPin, RootsFilter, ServerSpec, TransportSpec, TrustInfo};
pub use settings::{DEFAULT_MAX_MESSAGE_BYTES, DiscoverSettings, RootsSettings, Settings};
pub use user_file::{UserFile, user_config_path};

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

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

/// Whether a definition needs the person's trust before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// The person's own file or the editor's user-level settings: trusted.
    #[default]
    User,
    /// A file inside the workspace, or the editor's workspace-level settings: needs trust.
    Workspace,
}

/// A server entry as found in one source, before validation.
#[derive(Debug, Clone)]
pub struct RawServer {
    pub name: String,
    pub source: Source,
    pub value: Value,
    pub scope: Scope,
    /// The workspace folder the defining file belongs to.
    pub folder: Option<PathBuf>,
}

/// What resolution needs besides the layers: the workspace folders (for `${workspaceFolder}`
/// and trust) and the answers to `${input:...}` already given this session.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub folders: Vec<PathBuf>,
    pub inputs: HashMap<String, String>,
}

/// One `inputs` entry of a `.vscode/mcp.json`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputDef {
    pub id: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub password: bool,
    #[serde(default)]
    pub default: Option<String>,
}

/// The `${input:id}` variables the servers use, with their definitions (an undeclared id gets
/// a plain one), in first-use order.
pub fn inputs_needed(layers: &[Layer]) -> Vec<InputDef> {
    let mut declared: HashMap<String, InputDef> = HashMap::new();
    for layer in layers {
        for input in layer
            .value
            .get("inputs")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Ok(def) = serde_json::from_value::<InputDef>(input.clone()) {
                declared.entry(def.id.clone()).or_insert(def);
            }
        }
    }
    let mut needed: Vec<InputDef> = Vec::new();
    for layer in layers {
        for key in ["servers", "mcpServers"] {
            let text = layer
                .value
                .get(key)
                .map(Value::to_string)
                .unwrap_or_default();
            for id in vars::input_ids(&text) {
                if !needed.iter().any(|d| d.id == id) {
                    needed.push(declared.get(&id).cloned().unwrap_or(InputDef {
                        id: id.clone(),
                        description: None,
                        password: false,
                        default: None,
                    }));
                }
            }
        }
    }
    needed
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
    pub scope: Scope,
    pub folder: Option<PathBuf>,
}

impl Layer {
    pub fn new(source: Source, value: Value) -> Layer {
        Layer {
            source,
            value,
            scope: Scope::User,
            folder: None,
        }
    }
}

/// Merges layers (highest precedence first): top-level keys from the first layer that has them,
/// `servers` (or `mcpServers`) merged by name.
pub fn resolve(layers: &[Layer], cx: &Context) -> (Resolved, Vec<ConfigError>) {
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
                "serverScopes" | "inputs" => {}
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
    // The editor says which of its servers come from workspace-level settings.
    let scopes = layers
        .iter()
        .find(|l| l.source == Source::EditorSettings)
        .and_then(|l| l.value.get("serverScopes"))
        .and_then(Value::as_object);
    let servers = servers
        .into_values()
        .map(|mut raw| {
            if raw.source == Source::EditorSettings
                && scopes
                    .and_then(|s| s.get(&raw.name))
                    .and_then(Value::as_str)
                    == Some("workspace")
            {
                raw.scope = Scope::Workspace;
            }
            ServerSpec::parse(&raw, cx)
        })
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
            scope: layer.scope,
            folder: layer.folder.clone(),
        });
    }
}

#[cfg(test)]
mod tests;

/// Every source, highest precedence first: the editor's settings, each workspace folder's
/// files, the person's own file.
pub fn layers(editor_settings: &Value, folders: &[PathBuf]) -> (Vec<Layer>, Vec<ConfigError>) {
    let mut layers = vec![Layer::new(Source::EditorSettings, editor_settings.clone())];
    let (workspace, mut errors) = workspace::layers(folders);
    layers.extend(workspace);
    if let Some(path) = user_config_path() {
        match UserFile::load(&path) {
            Ok(Some(layer)) => layers.push(layer),
            Ok(None) => {}
            Err(e) => errors.push(e),
        }
    }
    (layers, errors)
}

/// The effective configuration (no `${input:}` answers).
pub fn load(editor_settings: &Value) -> (Resolved, Vec<ConfigError>) {
    let (layers, mut errors) = layers(editor_settings, &[]);
    let (resolved, more) = resolve(&layers, &Context::default());
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
