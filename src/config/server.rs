//! One server definition in the VS Code `mcp.json` shape, plus the sidecar's own keys.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::question::{asks_for, summary};
use super::vars::{self, VarContext};
use super::{ConfigError, Context, RawServer, Scope, Source};

/// Protocol revisions the sidecar speaks, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &[
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
];

/// A validated server definition. Two specs compare equal exactly when restarting the server
/// would make no difference.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    pub name: String,
    pub source: Source,
    pub transport: TransportSpec,
    pub disabled: bool,
    pub protocol: ProtocolPin,
    pub roots: RootsFilter,
    /// Applies to start-up and to each request the sidecar sends to the server (the time a
    /// person spends answering its questions does not count).
    pub timeout: Duration,
    /// `elicitation.policy`: ask (default), decline, or acceptDefaults.
    pub elicitation: super::elicitation::Policy,
    /// `sampling.policy`: ask (default), reviewResponse, auto, or never.
    pub sampling: super::sampling::Policy,
    /// Set for definitions from the workspace: they run only once the person trusts them.
    pub trust: Option<TrustInfo>,
    /// `${input:id}` ids the definition uses that have no answer yet: the server does not start
    /// until they are answered (they are asked only for servers that may start).
    pub missing_inputs: Vec<String>,
    /// The `envFile` read (expanded), so that a change to it is noticed.
    pub env_file: Option<PathBuf>,
}

/// What a trust decision is about: this exact definition, in this workspace, and what it
/// expands to at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustInfo {
    pub workspace: String,
    /// The definition as written (before variables), canonical JSON.
    pub definition: String,
    /// SHA-256 (hex) of what the definition runs, `${input:}` references left as written: for
    /// stdio the executable `command` resolves to on the `PATH` the server gets, `args`, the
    /// environment it adds (`env` and the contents of `envFile`) and `cwd`; for HTTP the expanded
    /// URL and the header names. A digest, so no secret value is stored.
    pub resolved: String,
    /// The definition as written, for the trust question: command line (or URL), the names of
    /// its env variables and headers, its `envFile` and `cwd`; never a value.
    pub summary: String,
    /// The settings that loosen what the sidecar does for it ("sampling without review", ...).
    pub asks_for: Vec<String>,
}

/// The keys whose strings may hold variables.
const EXPANDED: &[&str] = &[
    "command", "args", "env", "cwd", "url", "headers", "envFile", "oauth",
];

#[derive(Debug, Clone, PartialEq)]
pub enum TransportSpec {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
    },
    Http {
        url: url::Url,
        headers: BTreeMap<String, String>,
        /// `oauth`: how the sidecar signs in when the server asks (`401`).
        oauth: OAuthSpec,
    },
}

/// A server's `oauth` settings: a pre-registered client (`clientId`, optional `clientSecret`,
/// best written as `${input:...}` or `${env:...}`), or the URL of a Client ID Metadata Document
/// (`clientMetadataUrl`). With neither, the sidecar registers itself (Dynamic Client
/// Registration) where the authorization server allows it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct OAuthSpec {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub client_metadata_url: Option<String>,
    /// `grant`: `"authorization_code"` (default: a person signs in) or `"client_credentials"`
    /// (a machine client: `clientId` and `clientSecret`, no browser).
    pub grant: OAuthGrant,
    /// `callbackPort`: the loopback port of the redirect URI (a pre-registered client whose
    /// redirect URI names one); default a random port.
    pub callback_port: Option<u16>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OAuthGrant {
    #[default]
    AuthorizationCode,
    ClientCredentials,
}

impl std::fmt::Debug for OAuthSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthSpec")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "…"))
            .field("client_metadata_url", &self.client_metadata_url)
            .field("grant", &self.grant)
            .field("callback_port", &self.callback_port)
            .finish()
    }
}

fn parse_oauth(obj: &serde_json::Map<String, Value>) -> Result<OAuthSpec, String> {
    let Some(value) = obj.get("oauth") else {
        return Ok(OAuthSpec::default());
    };
    let Some(oauth) = value.as_object() else {
        return Err("\"oauth\" must be an object".into());
    };
    let field = |key: &str| {
        opt_str(oauth, key)
            .map(|v| v.filter(|s| !s.trim().is_empty()))
            .map_err(|e| format!("\"oauth\": {e}"))
    };
    let grant = match field("grant")?.as_deref() {
        None | Some("authorization_code") => OAuthGrant::AuthorizationCode,
        Some("client_credentials") => OAuthGrant::ClientCredentials,
        Some(other) => {
            return Err(format!(
                "\"oauth\": \"grant\" must be \"authorization_code\" or \"client_credentials\", not \"{other}\""
            ));
        }
    };
    let callback_port = match oauth.get("callbackPort") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_u64() {
            Some(port @ 1024..=65535) => Some(port as u16),
            _ => {
                return Err(format!(
                    "\"oauth\": \"callbackPort\" must be a port number from 1024 to 65535, not {v}"
                ));
            }
        },
    };
    let spec = OAuthSpec {
        client_id: field("clientId")?,
        client_secret: field("clientSecret")?,
        client_metadata_url: field("clientMetadataUrl")?,
        grant,
        callback_port,
    };
    if grant == OAuthGrant::ClientCredentials
        && (spec.client_id.is_none() || spec.client_secret.is_none())
    {
        return Err(
            "\"oauth\": \"grant\": \"client_credentials\" needs \"clientId\" and \"clientSecret\""
                .into(),
        );
    }
    if spec.client_secret.is_some() && spec.client_id.is_none() {
        return Err("\"oauth\": \"clientSecret\" needs a \"clientId\"".into());
    }
    if let Some(u) = &spec.client_metadata_url
        && !url::Url::parse(u).is_ok_and(|u| u.scheme() == "https" && u.path() != "/")
    {
        return Err(format!(
            "\"oauth\": \"clientMetadataUrl\" must be an https URL with a path, not {u}"
        ));
    }
    Ok(spec)
}

impl TransportSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            TransportSpec::Stdio { .. } => "stdio",
            TransportSpec::Http { .. } => "http",
        }
    }
}

/// `protocolVersion`: `auto` tries 2026-07-28 (`server/discover`) and falls back to `initialize`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolPin {
    Auto,
    Version(String),
}

impl ProtocolPin {
    /// Whether the pinned revision uses the stateless 2026-07-28 lifecycle.
    pub fn is_modern(&self) -> Option<bool> {
        match self {
            ProtocolPin::Auto => None,
            ProtocolPin::Version(v) => Some(v.as_str() >= "2026-07-28"),
        }
    }
}

/// Per-server `roots`: `true` (all), `false` (none, and the capability is not declared), or a
/// list of allowed paths (a root is shared when it lies inside one of them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootsFilter {
    All,
    None,
    Only(Vec<PathBuf>),
}

const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

impl ServerSpec {
    pub fn parse(raw: &RawServer, cx: &Context) -> Result<ServerSpec, ConfigError> {
        let err = |message: String| ConfigError {
            origin: raw.source.clone(),
            server: Some(raw.name.clone()),
            message: format!("server \"{}\": {message}", raw.name),
        };
        let obj = raw
            .value
            .as_object()
            .ok_or_else(|| err("a server definition must be an object".into()))?;
        for key in obj.keys() {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                tracing::debug!(server = %raw.name, key, "ignoring unknown server key");
            }
        }
        // `${input:}` answers belong to the file (or editor settings) that uses them.
        let used: Vec<String> = EXPANDED
            .iter()
            .filter_map(|k| obj.get(*k))
            .flat_map(|v| vars::input_ids(&v.to_string()))
            .fold(Vec::new(), |mut ids, id| {
                if !ids.contains(&id) {
                    ids.push(id);
                }
                ids
            });
        let inputs: HashMap<String, String> = used
            .iter()
            .filter_map(|id| {
                cx.inputs
                    .get(&super::input_key(&raw.source, id))
                    .map(|v| (id.clone(), v.clone()))
            })
            .collect();
        let missing_inputs: Vec<String> = used
            .iter()
            .filter(|id| !inputs.contains_key(*id))
            .cloned()
            .collect();
        // No answer reaches a message: each is put back as the reference it came from.
        let redact = |message: String| {
            inputs
                .iter()
                .filter(|(_, v)| v.len() >= 3)
                .fold(message, |m, (id, v)| {
                    m.replace(v.as_str(), &format!("${{input:{id}}}"))
                })
        };
        let err = |message: String| err(redact(message));
        // A secret in a file a repository ships would be everyone's: only a reference there.
        if raw.scope == Scope::Workspace
            && matches!(raw.source, Source::File(_))
            && let Some(secret) = obj
                .get("oauth")
                .and_then(|o| o.get("clientSecret"))
                .and_then(Value::as_str)
            && !is_reference(secret)
        {
            return Err(err(
                "\"oauth\": \"clientSecret\" must be written as ${input:...} or ${env:...} in a workspace file, never inline".into(),
            ));
        }
        let workspace_folder = raw.folder.clone().or_else(|| cx.folders.first().cloned());
        let var_cx = VarContext {
            workspace_folder: workspace_folder.clone(),
            inputs: inputs.clone(),
            keep_missing_inputs: true,
        };
        let (mut transport, env_file) = expand_transport(obj, &var_cx).map_err(err)?;
        // A workspace server runs the executable its trust was given for: a later restart does
        // not look it up on PATH again (where another binary may have appeared).
        if raw.scope == Scope::Workspace
            && let TransportSpec::Stdio {
                command, env, cwd, ..
            } = &mut transport
            && let Some(exe) = resolve_executable(command, env, cwd.as_deref())
        {
            *command = exe.display().to_string();
        }
        let subject = if raw.scope == Scope::Workspace {
            let subject_cx = VarContext {
                workspace_folder,
                inputs: HashMap::new(),
                keep_missing_inputs: true,
            };
            let (subject, _) = expand_transport(obj, &subject_cx).map_err(err)?;
            Some(digest(&subject_json(&subject)))
        } else {
            None
        };
        let disabled = opt_bool(obj, "disabled").map_err(err)?.unwrap_or(false);
        let protocol = match obj.get("protocolVersion") {
            None | Some(Value::Null) => ProtocolPin::Auto,
            Some(Value::String(s)) if s == "auto" => ProtocolPin::Auto,
            Some(Value::String(s)) if SUPPORTED_VERSIONS.contains(&s.as_str()) => {
                ProtocolPin::Version(s.clone())
            }
            Some(other) => {
                return Err(err(format!(
                    "\"protocolVersion\" must be \"auto\" or one of {}, not {other}",
                    SUPPORTED_VERSIONS.join(", ")
                )));
            }
        };
        let roots = match obj.get("roots") {
            None | Some(Value::Null) | Some(Value::Bool(true)) => RootsFilter::All,
            Some(Value::Bool(false)) => RootsFilter::None,
            Some(Value::Array(items)) => RootsFilter::Only(
                items
                    .iter()
                    .map(|v| v.as_str().map(crate::paths::expand_home))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| err("\"roots\" must list paths as strings".into()))?,
            ),
            Some(other) => {
                return Err(err(format!(
                    "\"roots\" must be true, false or a list of paths, not {other}"
                )));
            }
        };
        let timeout = match obj.get("timeout") {
            None | Some(Value::Null) => DEFAULT_TIMEOUT_SECS,
            Some(v) => v
                .as_f64()
                .filter(|s| *s > 0.0 && s.is_finite())
                .ok_or_else(|| {
                    err(format!(
                        "\"timeout\" must be a positive number of seconds, not {v}"
                    ))
                })?,
        };
        let elicitation = match obj.get("elicitation").and_then(|e| e.get("policy")) {
            None | Some(Value::Null) => super::elicitation::Policy::default(),
            Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
                err(format!(
                    "\"elicitation.policy\" must be \"ask\", \"decline\" or \"acceptDefaults\", not {v}"
                ))
            })?,
        };
        let sampling = match obj.get("sampling").and_then(|e| e.get("policy")) {
            None | Some(Value::Null) => super::sampling::Policy::default(),
            Some(v) => serde_json::from_value(v.clone()).map_err(|_| {
                err(format!(
                    "\"sampling.policy\" must be \"ask\", \"reviewResponse\", \"auto\" or \"never\", not {v}"
                ))
            })?,
        };
        // The workspace a decision belongs to: the folder of the defining file (or, for the
        // editor's workspace-level settings, the first folder), so adding or removing other
        // folders neither forgets the decision nor restarts the server.
        let trust = subject.map(|resolved| TrustInfo {
            workspace: raw
                .folder
                .as_ref()
                .or(cx.folders.first())
                .map(|f| f.display().to_string())
                .unwrap_or_default(),
            definition: raw.value.to_string(),
            resolved,
            summary: summary(obj),
            asks_for: asks_for(
                sampling,
                elicitation,
                match &roots {
                    RootsFilter::Only(paths) => Some(paths),
                    _ => None,
                },
                &raw.folder
                    .iter()
                    .chain(&cx.folders)
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
        });
        Ok(ServerSpec {
            trust,
            missing_inputs,
            env_file,
            sampling,
            elicitation,
            name: raw.name.clone(),
            source: raw.source.clone(),
            transport,
            disabled,
            protocol,
            roots,
            // A timeout too long to represent means "never": capped, not a panic.
            timeout: super::elicitation::capped_secs(timeout),
        })
    }
}

const KNOWN_KEYS: &[&str] = &[
    "type",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "disabled",
    "protocolVersion",
    "roots",
    "timeout",
    "elicitation",
    "sampling",
    "envFile",
    "oauth",
];

/// The transport after variables, with the `envFile` (its path expanded) merged under `env`.
fn expand_transport(
    obj: &serde_json::Map<String, Value>,
    cx: &VarContext,
) -> Result<(TransportSpec, Option<PathBuf>), String> {
    let mut expanded = obj.clone();
    for key in EXPANDED {
        if let Some(v) = expanded.get_mut(*key) {
            expand_strings(v, cx).map_err(|e| format!("\"{key}\": {e}"))?;
        }
    }
    let mut transport = parse_transport(&expanded)?;
    let mut env_file = None;
    if let (Some(path), TransportSpec::Stdio { env, .. }) =
        (opt_str(&expanded, "envFile")?, &mut transport)
    {
        for (k, v) in read_env_file(&path)? {
            env.entry(k).or_insert(v);
        }
        env_file = Some(crate::paths::expand_home(&path));
    }
    Ok((transport, env_file))
}

/// What a transport runs, as canonical JSON for the trust digest.
fn subject_json(transport: &TransportSpec) -> Value {
    match transport {
        TransportSpec::Stdio {
            command,
            args,
            env,
            cwd,
        } => serde_json::json!({
            "type": "stdio",
            "command": command,
            // Canonical, so a symlink pointed elsewhere is a different subject.
            "executable": resolve_executable(command, env, cwd.as_deref())
                .map(|p| p.canonicalize().unwrap_or(p).display().to_string()),
            "args": args,
            "env": env,
            "cwd": cwd.as_ref().map(|c| c.display().to_string()),
        }),
        TransportSpec::Http {
            url,
            headers,
            oauth,
        } => {
            let mut subject = serde_json::json!({
                "type": "http",
                "url": url.as_str(),
                "headers": headers.keys().collect::<Vec<_>>(),
            });
            // Who the sidecar signs in as is part of what was trusted (left out when unset,
            // so the digests of servers without `oauth` stay as they were).
            if *oauth != OAuthSpec::default() {
                subject["oauth"] = serde_json::json!({
                    "clientId": oauth.client_id,
                    "clientSecret": oauth.client_secret.is_some(),
                    "clientMetadataUrl": oauth.client_metadata_url,
                    "grant": format!("{:?}", oauth.grant),
                    "callbackPort": oauth.callback_port,
                });
            }
            subject
        }
    }
}

/// SHA-256 of a value's JSON text, in hex.
fn digest(value: &Value) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(value.to_string().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The file `command` runs, found as the spawn finds it: a name with a `/` relative to the
/// server's `cwd`, a bare name on the `PATH` the server gets (its own `env`, else the sidecar's).
/// The path is absolute but not canonical (a symlink keeps its name, so argv[0] is unchanged).
pub fn resolve_executable(
    command: &str,
    env: &BTreeMap<String, String>,
    cwd: Option<&std::path::Path>,
) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let base = std::env::current_dir()
        .unwrap_or_default()
        .join(cwd.unwrap_or(std::path::Path::new("")));
    let runnable = |p: &std::path::Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let path = base.join(crate::paths::expand_home(command));
        return runnable(&path).then_some(path);
    }
    let path_var = env
        .get("PATH")
        .cloned()
        .or_else(|| std::env::var("PATH").ok())
        .unwrap_or_default();
    std::env::split_paths(&path_var)
        .map(|dir| base.join(dir).join(command))
        .find(|p| runnable(p))
}

fn parse_transport(obj: &serde_json::Map<String, Value>) -> Result<TransportSpec, String> {
    let kind = opt_str(obj, "type")?;
    let command = opt_str(obj, "command")?;
    let url = opt_str(obj, "url")?;
    match (kind.as_deref(), command, url) {
        (Some("stdio") | None, Some(command), _) => {
            if command.trim().is_empty() {
                return Err("\"command\" is empty".into());
            }
            Ok(TransportSpec::Stdio {
                command,
                args: string_list(obj, "args")?,
                env: string_map(obj, "env")?,
                cwd: opt_str(obj, "cwd")?.map(|c| crate::paths::expand_home(&c)),
            })
        }
        (Some("http" | "sse" | "streamable-http") | None, None, Some(url)) => {
            let parsed = url::Url::parse(&url)
                .map_err(|e| format!("\"url\" is not a valid URL ({e}): {url}"))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(format!(
                    "\"url\" must be an http or https URL, not {}: {url}",
                    parsed.scheme()
                ));
            }
            Ok(TransportSpec::Http {
                url: parsed,
                headers: string_map(obj, "headers")?,
                oauth: parse_oauth(obj)?,
            })
        }
        (Some("stdio"), None, _) => Err("a stdio server needs a \"command\"".into()),
        (Some(k @ ("http" | "sse" | "streamable-http")), _, None) => {
            Err(format!("a server of type \"{k}\" needs a \"url\""))
        }
        (Some(other), _, _) if !["stdio", "http", "sse", "streamable-http"].contains(&other) => {
            Err(format!(
                "unknown \"type\" \"{other}\" (expected \"stdio\", \"http\" or \"sse\")"
            ))
        }
        _ => Err("needs either \"command\" (a stdio server) or \"url\" (an HTTP server)".into()),
    }
}

/// Expands variables in every string of a value (strings, arrays of strings, objects of strings).
fn expand_strings(value: &mut Value, cx: &VarContext) -> Result<(), String> {
    match value {
        Value::String(s) => *s = vars::expand(s, cx)?,
        Value::Array(items) => items.iter_mut().try_for_each(|v| expand_strings(v, cx))?,
        Value::Object(map) => map.values_mut().try_for_each(|v| expand_strings(v, cx))?,
        _ => {}
    }
    Ok(())
}

/// `envFile`: `KEY=VALUE` lines (`#` comments, optional quotes, optional `export`). Only a
/// regular file up to 1 MiB is read ([`super::file::read_small_file`]): definitions (a
/// workspace's too) are parsed before anyone trusts them, so a FIFO, a device or a huge file must
/// fail, not block or fill memory.
fn read_env_file(path: &str) -> Result<Vec<(String, String)>, String> {
    let text = super::file::read_small_file(&crate::paths::expand_home(path))
        .map_err(|e| format!("\"envFile\" {path}: {e}"))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.strip_prefix("export ").unwrap_or(l).split_once('='))
        .map(|(k, v)| {
            let v = v.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            (k.trim().to_string(), v.to_string())
        })
        .collect())
}

/// Whether a value is one `${input:...}` or `${env:...}` reference and nothing else.
fn is_reference(value: &str) -> bool {
    let value = value.trim();
    ["${input:", "${env:"].iter().any(|start| {
        value
            .strip_prefix(start)
            .and_then(|rest| rest.strip_suffix('}'))
            .is_some_and(|name| !name.is_empty() && !name.contains(['{', '}']))
    })
}

fn opt_str(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("\"{key}\" must be a string, not {other}")),
    }
}

fn opt_bool(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Option<bool>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(other) => Err(format!("\"{key}\" must be true or false, not {other}")),
    }
}

fn string_list(obj: &serde_json::Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                Value::Number(n) => Ok(n.to_string()),
                other => Err(format!("\"{key}\" must list strings, found {other}")),
            })
            .collect(),
        Some(other) => Err(format!("\"{key}\" must be a list of strings, not {other}")),
    }
}

fn string_map(
    obj: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<BTreeMap<String, String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                other => Err(format!("\"{key}.{k}\" must be a string, not {other}")),
            })
            .collect(),
        Some(other) => Err(format!(
            "\"{key}\" must be an object of strings, not {other}"
        )),
    }
}
