//! The sidecar's own top-level keys (everything except `servers`).

use serde::Deserialize;
use serde_json::Value;

/// Default cap on one message from a server (one stdio line), in bytes.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Settings {
    pub roots: RootsSettings,
    pub max_message_bytes: usize,
    /// How many times a crashed server is restarted before the sidecar gives up on it.
    pub max_restarts: u32,
    pub elicitation: super::elicitation::Settings,
    pub sampling: super::sampling::Settings,
    /// `gateway`: the agents' face (see `docs/gateway.md`).
    pub gateway: GatewaySettings,
    /// `apps`: servers' views (MCP Apps, see `docs/apps.md`).
    pub apps: AppsSettings,
    /// `plainLsp`: what an editor without the sidecar's plugin gets (see `docs/editors.md`).
    pub plain_lsp: PlainLspSettings,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            roots: RootsSettings::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_restarts: 5,
            elicitation: super::elicitation::Settings::default(),
            sampling: super::sampling::Settings::default(),
            gateway: GatewaySettings::default(),
            apps: AppsSettings::default(),
            plain_lsp: PlainLspSettings::default(),
        }
    }
}

/// The top-level keys [`Settings`] reads.
const KEYS: &[&str] = &[
    "roots",
    "maxMessageBytes",
    "maxRestarts",
    "elicitation",
    "sampling",
    "gateway",
    "apps",
    "plainLsp",
];

impl Settings {
    /// Parses the top-level keys; unknown keys are tolerated (other tools write their own).
    /// Each key stands on its own: a bad one is an error naming it and keeps its default,
    /// and the others still apply.
    pub fn from_value(value: Value) -> (Self, Vec<String>) {
        let mut settings = Settings::default();
        let mut errors = Vec::new();
        let Some(obj) = value.as_object() else {
            return (settings, errors);
        };
        for (key, value) in obj {
            if !KEYS.contains(&key.as_str()) {
                if key != "inputs" {
                    tracing::debug!(key, "ignoring unknown settings key");
                }
                continue;
            }
            let alone = serde_json::json!({ key.as_str(): value });
            let parsed = serde_json::from_value::<Settings>(alone)
                .map_err(|e| format!("invalid settings: \"{key}\": {e}"))
                .and_then(|one| match key.as_str() {
                    "maxMessageBytes" if one.max_message_bytes < 1024 => {
                        Err("\"maxMessageBytes\" must be at least 1024".into())
                    }
                    _ => Ok(one),
                });
            match parsed {
                Ok(one) => match key.as_str() {
                    "roots" => settings.roots = one.roots,
                    "maxMessageBytes" => settings.max_message_bytes = one.max_message_bytes,
                    "maxRestarts" => settings.max_restarts = one.max_restarts,
                    "elicitation" => settings.elicitation = one.elicitation,
                    "gateway" => settings.gateway = one.gateway,
                    "apps" => settings.apps = one.apps,
                    "plainLsp" => settings.plain_lsp = one.plain_lsp,
                    _ => settings.sampling = one.sampling,
                },
                Err(message) => errors.push(message),
            }
        }
        (settings, errors)
    }
}

/// `gateway`: whether the sidecar serves its servers to agents on a loopback endpoint.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GatewaySettings {
    /// On unless the person turns it off (loopback only, and every request needs the secret).
    pub enabled: bool,
    /// Who answers a server's questions during an agent's call.
    pub questions: Questions,
}

impl Default for GatewaySettings {
    fn default() -> Self {
        Self {
            enabled: true,
            questions: Questions::Editor,
        }
    }
}

/// `apps`: what happens with servers' views.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct AppsSettings {
    /// When an agent (through the gateway) calls a tool that has a view.
    pub open_for_agents: OpenForAgents,
}

/// `plainLsp`: an editor without the sidecar's plugin.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PlainLspSettings {
    /// The languages (LSP language ids) whose documents offer "MCP: call ‹server›/‹tool›…" code
    /// actions: `["*"]` every one, `[]` none.
    pub tool_actions: Vec<String>,
}

impl Default for PlainLspSettings {
    fn default() -> Self {
        Self {
            tool_actions: vec!["*".into()],
        }
    }
}

impl PlainLspSettings {
    /// Whether a document of `language` offers tool actions.
    pub fn tool_actions_in(&self, language: Option<&str>) -> bool {
        self.tool_actions
            .iter()
            .any(|l| l == "*" || Some(l.as_str()) == language)
    }
}

/// `apps.openForAgents`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OpenForAgents {
    /// The editor asks the person whether to open it.
    #[default]
    Ask,
    Always,
    Never,
}

/// `gateway.questions`: where a server's elicitation and sampling requests go during an agent's
/// call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Questions {
    /// The person, in the editor (with the editor's policies), saying which agent asks.
    #[default]
    Editor,
    /// The agent itself, when it declared the capability (elicitation, sampling); the editor
    /// otherwise.
    Agent,
}

/// `roots`: how workspace folders become MCP roots.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RootsSettings {
    /// Paths or globs removed from the roots.
    pub exclude: Vec<String>,
    /// Paths added to the roots.
    pub extra: Vec<String>,
    /// Nested-project discovery; off unless given.
    pub discover: Option<DiscoverSettings>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DiscoverSettings {
    pub markers: Vec<String>,
    pub max_depth: usize,
}

impl Default for DiscoverSettings {
    fn default() -> Self {
        Self {
            markers: vec![".git".into(), "Cargo.toml".into(), "package.json".into()],
            max_depth: 3,
        }
    }
}
