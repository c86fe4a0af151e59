//! The `sampling` settings as the person writes them: the per-server `sampling.policy`, and the
//! sidecar-wide provider choice, the OpenAI-compatible endpoint (`sampling.openai`, checked here,
//! when the configuration is read), models, rate limit and budget.

use std::time::Duration;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::elicitation::RateLimit;

/// Per-server `sampling.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Policy {
    /// Both drafts shown (default).
    #[default]
    Ask,
    /// Skip the request draft; the answer is still reviewed.
    ReviewResponse,
    /// No drafts: the model's answer goes back as it is (for servers the person trusts so).
    Auto,
    /// Every request refused.
    Never,
}

/// Where model answers come from (`sampling.provider`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ProviderKind {
    /// A person writes the answer (the default when nothing is configured).
    #[default]
    Manual,
    /// The editor's own model (`mcp-sidecar/languageModel`).
    Editor,
    /// An OpenAI-compatible endpoint (`sampling.openai`).
    Openai,
}

/// One configured model: `{"name": "gpt-4o-mini", "cost": 0.9, "speed": 0.8, "intelligence": 0.5}`
/// (attributes 0–1, higher is better: cheaper, faster, smarter).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ModelSpec {
    pub name: String,
    #[serde(default)]
    pub cost: f64,
    #[serde(default)]
    pub speed: f64,
    #[serde(default)]
    pub intelligence: f64,
}

/// The sidecar-wide `sampling` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub provider: ProviderKind,
    /// `sampling.openai`, checked (whether or not `provider` is `openai`).
    pub openai: Option<OpenAiConfig>,
    pub models: Vec<ModelSpec>,
    pub rate_limit: RateLimit,
    pub tokens_per_hour: u64,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            provider: ProviderKind::Manual,
            openai: None,
            models: Vec::new(),
            rate_limit: RateLimit {
                count: 10,
                per: Duration::from_secs(60),
            },
            tokens_per_hour: 50_000,
        }
    }
}

impl Settings {
    /// `sampling: {"provider": "manual", "openai": {...}, "models": [...], "rateLimit": "10/min",
    /// "budget": {"tokensPerHour": 50000}}`.
    pub fn from_value(value: Value) -> Result<Settings, String> {
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", default)]
        struct Raw {
            provider: ProviderKind,
            openai: Option<Value>,
            models: Vec<ModelSpec>,
            rate_limit: Option<String>,
            budget: Option<Budget>,
        }
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Budget {
            tokens_per_hour: u64,
        }
        let raw: Raw =
            serde_json::from_value(value).map_err(|e| format!("invalid sampling settings: {e}"))?;
        let mut settings = Settings {
            provider: raw.provider,
            openai: raw
                .openai
                .filter(|v| !v.is_null())
                .map(OpenAiConfig::from_value)
                .transpose()?,
            models: raw.models,
            ..Settings::default()
        };
        if let Some(rate) = raw.rate_limit {
            settings.rate_limit = rate.parse()?;
        }
        if let Some(budget) = raw.budget {
            settings.tokens_per_hour = budget.tokens_per_hour;
        }
        Ok(settings)
    }
}

impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Settings::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// How long the OpenAI-compatible endpoint may stay silent unless configured otherwise.
pub const DEFAULT_OPENAI_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings of one OpenAI-compatible endpoint, as written in the sidecar's configuration
/// (`baseUrl`, `model`, `apiKeyEnv`, `stream`, `timeout` in seconds). Any other key is an error
/// (a misspelt `apiKeyEnv` would otherwise send no key without a word).
#[derive(Debug, Clone, PartialEq)]
pub struct OpenAiConfig {
    /// The API root, e.g. `http://127.0.0.1:11434/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// The model used when a request does not choose one.
    pub model: String,
    /// The name of the environment variable that holds the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Ask for a streamed reply (server-sent events). Default true.
    pub stream: bool,
    /// The longest the endpoint may stay silent: before its reply starts, and between two pieces
    /// of it. Written in seconds (a number); default 120.
    pub timeout: Duration,
}

/// The keys of `sampling.openai`.
const OPENAI_KEYS: &[&str] = &["baseUrl", "model", "apiKeyEnv", "stream", "timeout"];

/// `sampling.openai.<key>`, if given; the error names the key and what it must be, never the
/// value (which could be a key pasted in the wrong place).
fn openai_key<T: serde::de::DeserializeOwned>(
    obj: &serde_json::Map<String, Value>,
    key: &str,
    must_be: &str,
) -> Result<Option<T>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(v.clone())
            .map(Some)
            .map_err(|_| format!("`{key}` must be {must_be}")),
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
            timeout: DEFAULT_OPENAI_TIMEOUT,
        }
    }

    /// `sampling.openai` as written, checked as the provider will use it; the error names the
    /// key.
    pub fn from_value(value: Value) -> Result<OpenAiConfig, String> {
        Self::parse(value).map_err(|e| format!("sampling.openai: {e}"))
    }

    fn parse(value: Value) -> Result<OpenAiConfig, String> {
        let Value::Object(obj) = value else {
            return Err(format!(
                "must be an object such as {{\"baseUrl\": \"http://127.0.0.1:11434/v1\", \"model\": \"llama3.2\"}}, not {}",
                match value {
                    Value::Array(_) => "a list",
                    Value::String(_) => "a string",
                    _ => "a number or true/false",
                }
            ));
        };
        if let Some(key) = obj.keys().find(|k| !OPENAI_KEYS.contains(&k.as_str())) {
            return Err(format!(
                "unknown key `{key}` (the keys are {})",
                OPENAI_KEYS
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let required = |key: &str| {
            openai_key::<String>(&obj, key, "a string")?
                .ok_or_else(|| format!("`{key}` is missing"))
        };
        let mut config = OpenAiConfig::new(required("baseUrl")?, required("model")?);
        config.api_key_env = openai_key(&obj, "apiKeyEnv", "the name of an environment variable")?;
        if let Some(stream) = openai_key(&obj, "stream", "true or false")? {
            config.stream = stream;
        }
        if let Some(secs) = openai_key::<f64>(&obj, "timeout", "a number of seconds")? {
            if !(secs.is_finite() && secs > 0.0) {
                return Err(format!(
                    "`timeout` must be a positive number of seconds, not {secs}"
                ));
            }
            config.timeout =
                Duration::try_from_secs_f64(secs).map_err(|_| "`timeout` is too large")?;
        }
        config.endpoint_url()?;
        Ok(config)
    }

    /// Checks the settings and gives the URL requests go to: `{baseUrl}/chat/completions`
    /// (`baseUrl` must be an `http://` or `https://` URL that can hold a path; the timeout must
    /// be more than 0).
    pub fn endpoint_url(&self) -> Result<url::Url, String> {
        let base = self.base_url.trim();
        let mut url = url::Url::parse(base).map_err(|e| {
            format!("the OpenAI-compatible provider's baseUrl `{base}` is not a URL ({e})")
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "the OpenAI-compatible provider's baseUrl `{base}` must start with http:// or https://"
            ));
        }
        if url.cannot_be_a_base() {
            return Err(format!(
                "the OpenAI-compatible provider's baseUrl `{base}` cannot hold a path"
            ));
        }
        if self.timeout.is_zero() {
            return Err(
                "the OpenAI-compatible provider's timeout must be more than 0 seconds".into(),
            );
        }
        url.set_fragment(None);
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().push("chat").push("completions");
        }
        Ok(url)
    }
}

impl<'de> Deserialize<'de> for OpenAiConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        OpenAiConfig::from_value(Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}
