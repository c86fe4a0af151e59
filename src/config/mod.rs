//! Settings: the one shape read from the editor (`initializationOptions`,
//! `workspace/didChangeConfiguration`) and from the person's own `mcp.json`, validated into
//! [`ServerSpec`]s. Each server is validated on its own, so one bad entry never stops the others.
//! The reference is `docs/configuration.md`.

pub mod elicitation;
mod file;
mod question;
pub mod sampling;
mod server;
mod settings;
pub mod trust;
mod user_file;
pub mod vars;
pub mod workspace;

pub use file::{MAX_FILE_BYTES, read_small_file};
pub use sampling::OpenAiConfig;
pub use server::{
    OAuthGrant, OAuthSpec, ProtocolPin, RootsFilter, SUPPORTED_VERSIONS, ServerSpec, TransportSpec,
    TrustInfo, resolve_executable,
};
pub use settings::{
    AppsSettings, DEFAULT_MAX_MESSAGE_BYTES, DiscoverSettings, GatewaySettings, OpenForAgents,
    PlainLspSettings, Questions, RootsSettings, Settings,
};
pub use user_file::UserFile;
pub use workspace::user_config_path;

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
/// and trust), the answers to `${input:...}` already given this session (keyed by
/// [`input_key`]: the same id in two files is two inputs), and what the editor says about the
/// scope of its own servers.
#[derive(Debug, Clone, Default)]
pub struct Context {
    pub folders: Vec<PathBuf>,
    pub inputs: HashMap<String, String>,
    pub editor_scopes: EditorScopes,
}

/// Whether the servers in the editor's settings are the person's own (user scope) or come from
/// the editor's workspace-level settings (need trust).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EditorScopes {
    /// The editor did not declare `serverScopes`: every server from its settings needs trust
    /// (fail closed; the sidecar cannot tell a workspace's `.vscode/settings.json` apart).
    #[default]
    Unreported,
    /// The editor declared `serverScopes`: `"user"` in the map is trusted, anything else (or a
    /// server missing from the map) needs trust.
    Reported,
    /// The settings are the sidecar's own, not an editor's (conformance runs, benchmarks).
    Own,
}

/// The key of one `${input:id}` answer: the id within the file (or the editor settings) that
/// uses it.
pub fn input_key(source: &Source, id: &str) -> String {
    format!("{source}\u{0}{id}")
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

/// The definition of `${input:id}` as used by a server from `source`: that source's own
/// `inputs` entry (a workspace file cannot redefine the prompt of an input the person's own file
/// declares), or a plain one.
pub fn input_def(layers: &[Layer], source: &Source, id: &str) -> InputDef {
    layers
        .iter()
        .filter(|l| &l.source == source)
        .flat_map(|l| l.value.get("inputs").and_then(Value::as_array))
        .flatten()
        .filter_map(|input| serde_json::from_value::<InputDef>(input.clone()).ok())
        .find(|def| def.id == id)
        .unwrap_or(InputDef {
            id: id.to_string(),
            description: None,
            password: false,
            default: None,
        })
}

/// The effective configuration: settings merged from the sources allowed to set them, servers
/// merged by name (the higher source wins), every server validated on its own.
#[derive(Debug, Clone, Default)]
pub struct Resolved {
    pub settings: Settings,
    pub servers: Vec<Result<ServerSpec, ConfigError>>,
    /// Keys that were ignored (workspace files may set only a few), each file reported once.
    pub warnings: Vec<ConfigError>,
    /// The editor's workspace is in Restricted Mode (`workspaceTrusted: false` in the editor's
    /// settings): no workspace-scoped server runs and no trust question is asked.
    pub restricted: bool,
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

    /// A file inside a workspace folder (`.vscode/mcp.json`, `.mcp.json`, `.cursor/mcp.json`).
    fn is_workspace_file(&self) -> bool {
        self.scope == Scope::Workspace && matches!(self.source, Source::File(_))
    }
}

/// What a workspace file may set besides its servers and inputs: keys that can only narrow
/// what servers see. `roots.exclude` adds up across sources (it never replaces an exclusion).
pub const WORKSPACE_ALLOWED: &[&str] = &["servers", "mcpServers", "inputs", "roots.exclude"];

/// Top-level keys whose objects are merged key by key across sources (the highest source that
/// has a sub-key wins it), so an editor-level `sampling.provider` does not hide the person's own
/// `sampling.openai`.
const MERGED_OBJECTS: &[&str] = &["sampling", "elicitation", "roots"];

/// Keys that only the editor's own settings may carry.
const EDITOR_ONLY: &[&str] = &["serverScopes", "workspaceTrusted"];

/// A workspace file's object with everything it may not set removed; the removed keys are named.
fn workspace_allowed(
    obj: &serde_json::Map<String, Value>,
) -> (serde_json::Map<String, Value>, Vec<String>) {
    let mut kept = serde_json::Map::new();
    let mut ignored = Vec::new();
    for (key, value) in obj {
        match key.as_str() {
            "servers" | "mcpServers" | "inputs" => {
                kept.insert(key.clone(), value.clone());
            }
            "roots" => match value.as_object() {
                Some(roots) => {
                    for (sub, v) in roots {
                        if sub == "exclude" {
                            kept.insert("roots".into(), serde_json::json!({"exclude": v}));
                        } else {
                            ignored.push(format!("roots.{sub}"));
                        }
                    }
                }
                None => ignored.push(key.clone()),
            },
            _ => ignored.push(key.clone()),
        }
    }
    (kept, ignored)
}

/// Merges layers (highest precedence first). Workspace files contribute only their servers,
/// inputs and `roots.exclude` (anything else is ignored with one warning per file); other
/// top-level keys come from the highest source that has them, `sampling` / `elicitation` /
/// `roots` key by key, `roots.exclude` from every source; `servers` (or `mcpServers`) are merged
/// by name.
pub fn resolve(layers: &[Layer], cx: &Context) -> (Resolved, Vec<ConfigError>) {
    let mut errors = Vec::new();
    let mut warnings = Vec::new();
    let mut top = serde_json::Map::new();
    let mut excludes: Vec<Value> = Vec::new();
    let mut servers: BTreeMap<String, RawServer> = BTreeMap::new();
    let editor = layers.iter().find(|l| l.source == Source::EditorSettings);
    // The editor says which of its servers come from its user-level settings.
    let scopes = editor
        .and_then(|l| l.value.get("serverScopes"))
        .and_then(Value::as_object);
    let editor_scope = |name: &str| {
        let user = match cx.editor_scopes {
            EditorScopes::Own => true,
            EditorScopes::Unreported => false,
            EditorScopes::Reported => {
                scopes.and_then(|s| s.get(name)).and_then(Value::as_str) == Some("user")
            }
        };
        if user { Scope::User } else { Scope::Workspace }
    };
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
        let allowed;
        let obj = if layer.is_workspace_file() {
            let (kept, ignored) = workspace_allowed(obj);
            if !ignored.is_empty() {
                warnings.push(ConfigError {
                    origin: layer.source.clone(),
                    server: None,
                    message: format!(
                        "ignored {}: a workspace file may set only {}",
                        ignored
                            .iter()
                            .map(|k| format!("\"{k}\""))
                            .collect::<Vec<_>>()
                            .join(", "),
                        WORKSPACE_ALLOWED
                            .iter()
                            .map(|k| format!("\"{k}\""))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
            allowed = kept;
            &allowed
        } else {
            obj
        };
        for (key, value) in obj {
            match key.as_str() {
                "servers" | "mcpServers" => collect_servers(
                    layer,
                    value,
                    &editor_scope,
                    &mut servers,
                    &mut errors,
                    &mut warnings,
                ),
                "inputs" => {}
                k if EDITOR_ONLY.contains(&k) => {}
                k if MERGED_OBJECTS.contains(&k) && value.is_object() => {
                    if let Some(Value::Array(items)) = value.get("exclude").filter(|_| k == "roots")
                    {
                        excludes.extend(items.iter().cloned());
                    }
                    let slot = top
                        .entry(key.clone())
                        .or_insert_with(|| Value::Object(Default::default()));
                    if let (Some(slot), Some(value)) = (slot.as_object_mut(), value.as_object()) {
                        for (sub, v) in value {
                            slot.entry(sub.clone()).or_insert_with(|| v.clone());
                        }
                    }
                }
                _ => {
                    top.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
    if let Some(roots) = top.get_mut("roots").and_then(Value::as_object_mut)
        && roots.get("exclude").is_some_and(Value::is_array)
    {
        let mut all: Vec<Value> = Vec::new();
        for item in excludes {
            if !all.contains(&item) {
                all.push(item);
            }
        }
        roots.insert("exclude".into(), Value::Array(all));
    }
    let (settings, bad) = Settings::from_value(Value::Object(top));
    errors.extend(bad.into_iter().map(|message| {
        ConfigError {
            origin: layers
                .first()
                .map(|l| l.source.clone())
                .unwrap_or(Source::EditorSettings),
            server: None,
            message,
        }
    }));
    let restricted = editor
        .and_then(|l| l.value.get("workspaceTrusted"))
        .and_then(Value::as_bool)
        == Some(false);
    let servers = servers
        .into_values()
        .map(|raw| ServerSpec::parse(&raw, cx))
        .collect();
    (
        Resolved {
            settings,
            servers,
            warnings,
            restricted,
        },
        errors,
    )
}

/// The most servers one workspace file may define; the rest are refused with one error naming
/// the file (a cloned repository's forty thousand would each be parsed, held and asked about).
pub const MAX_WORKSPACE_FILE_SERVERS: usize = 100;

/// Adds a layer's servers by name. The first definition of a name wins, except that a
/// workspace-scoped one (a workspace file, the editor's workspace-level settings) never
/// replaces or hides the person's own (their file, the editor's user-level settings): the
/// person's wins wherever it comes in the order, and the clash is one warning naming both.
fn collect_servers(
    layer: &Layer,
    value: &Value,
    editor_scope: &dyn Fn(&str) -> Scope,
    servers: &mut BTreeMap<String, RawServer>,
    errors: &mut Vec<ConfigError>,
    warnings: &mut Vec<ConfigError>,
) {
    let Some(map) = value.as_object() else {
        errors.push(ConfigError {
            origin: layer.source.clone(),
            server: None,
            message: "\"servers\" must be an object mapping names to server definitions".into(),
        });
        return;
    };
    let capped = layer.is_workspace_file() && map.len() > MAX_WORKSPACE_FILE_SERVERS;
    if capped {
        errors.push(ConfigError {
            origin: layer.source.clone(),
            server: None,
            message: format!(
                "defines {} servers; a workspace file may define at most {MAX_WORKSPACE_FILE_SERVERS}: only the first {MAX_WORKSPACE_FILE_SERVERS} are read",
                map.len()
            ),
        });
    }
    for (name, entry) in map.iter().take(if capped {
        MAX_WORKSPACE_FILE_SERVERS
    } else {
        usize::MAX
    }) {
        let scope = if layer.source == Source::EditorSettings {
            editor_scope(name)
        } else {
            layer.scope
        };
        let raw = RawServer {
            name: name.clone(),
            source: layer.source.clone(),
            value: entry.clone(),
            scope,
            folder: layer.folder.clone(),
        };
        match servers.get(name) {
            None => {
                servers.insert(name.clone(), raw);
            }
            Some(kept) if kept.scope != raw.scope => {
                let (own, other) = if kept.scope == Scope::User {
                    (kept, &raw)
                } else {
                    (&raw, kept)
                };
                warnings.push(ConfigError {
                    origin: other.source.clone(),
                    server: Some(name.clone()),
                    message: format!(
                        "server \"{}\" is ignored: your own definition of it in {} is used",
                        crate::contract::shown::line(name, crate::contract::shown::MAX_NAME),
                        own.source
                    ),
                });
                if raw.scope == Scope::User {
                    servers.insert(name.clone(), raw);
                }
            }
            Some(_) => {}
        }
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

/// The effective configuration (no `${input:}` answers; servers from `editor_settings` need
/// trust, as from an editor that does not report scopes).
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
