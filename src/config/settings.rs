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
    #[serde(deserialize_with = "elicitation_settings")]
    pub elicitation: crate::elicitation::Settings,
    #[serde(deserialize_with = "sampling_settings")]
    pub sampling: crate::sampling::Settings,
}

/// `sampling: {"provider": "manual", "openai": {...}, "models": [...], "rateLimit": "10/min",
/// "budget": {"tokensPerHour": 50000}}`.
fn sampling_settings<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<crate::sampling::Settings, D::Error> {
    crate::sampling::Settings::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// `elicitation: {"rateLimit": "10/min", "idleLimit": "30m"}`.
fn elicitation_settings<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<crate::elicitation::Settings, D::Error> {
    #[derive(Deserialize, Default)]
    #[serde(rename_all = "camelCase", default)]
    struct Raw {
        rate_limit: Option<String>,
        idle_limit: Option<String>,
    }
    let raw = Raw::deserialize(d)?;
    let mut settings = crate::elicitation::Settings::default();
    if let Some(rate) = raw.rate_limit {
        settings.rate_limit = rate.parse().map_err(serde::de::Error::custom)?;
    }
    if let Some(idle) = raw.idle_limit {
        settings.idle_limit =
            crate::elicitation::parse_duration(&idle).map_err(serde::de::Error::custom)?;
    }
    Ok(settings)
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            roots: RootsSettings::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            max_restarts: 5,
            elicitation: crate::elicitation::Settings::default(),
            sampling: crate::sampling::Settings::default(),
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
