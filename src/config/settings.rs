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
        }
    }
}

impl Settings {
    /// Parses the top-level keys; unknown keys are tolerated (other tools write their own).
    pub fn from_value(value: Value) -> Result<Self, String> {
        if let Some(obj) = value.as_object() {
            for key in obj.keys() {
                if ![
                    "roots",
                    "maxMessageBytes",
                    "maxRestarts",
                    "elicitation",
                    "sampling",
                    "gateway",
                    "inputs",
                ]
                .contains(&key.as_str())
                {
                    tracing::debug!(key, "ignoring unknown settings key");
                }
            }
        }
        let settings: Settings =
            serde_json::from_value(value).map_err(|e| format!("invalid settings: {e}"))?;
        if settings.max_message_bytes < 1024 {
            return Err("\"maxMessageBytes\" must be at least 1024".into());
        }
        Ok(settings)
    }
}

/// `gateway`: whether the sidecar serves its servers to agents on a loopback endpoint.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct GatewaySettings {
    /// On unless the person turns it off (loopback only, and every request needs the secret).
    pub enabled: bool,
}

impl Default for GatewaySettings {
    fn default() -> Self {
        Self { enabled: true }
    }
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
