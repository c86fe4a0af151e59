//! The provider's settings as written in the sidecar's configuration (`sampling.openai`).

use std::time::Duration;

use serde::{Deserialize, Deserializer};

/// How long the endpoint may stay silent unless configured otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings of one OpenAI-compatible endpoint, as written in the sidecar's configuration
/// (`baseUrl`, `model`, `apiKeyEnv`, `stream`, `timeout` in seconds).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OpenAiConfig {
    /// The API root, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// The model used when a request does not choose one.
    pub model: String,
    /// The name of the environment variable that holds the API key (never the key itself).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Ask for a streamed reply (server-sent events). Default true.
    #[serde(default = "default_stream")]
    pub stream: bool,
    /// The longest the endpoint may stay silent: before its reply starts, and between two pieces
    /// of it. Written in seconds (a number); default 120.
    #[serde(default = "default_timeout", deserialize_with = "seconds")]
    pub timeout: Duration,
}

fn default_stream() -> bool {
    true
}

fn default_timeout() -> Duration {
    DEFAULT_TIMEOUT
}

fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let secs = f64::deserialize(d)?;
    if secs.is_finite() && secs > 0.0 {
        Duration::try_from_secs_f64(secs)
            .map_err(|_| serde::de::Error::custom("`timeout` is too large"))
    } else {
        Err(serde::de::Error::custom(
            "`timeout` must be a positive number of seconds",
        ))
    }
}

impl OpenAiConfig {
    /// A configuration with the defaults: no API key, streaming, 120 s timeout.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            stream: true,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}
