//! Sampling: a server's model request and the model's draft answer open as editable buffers;
//! only what the person accepts goes back. This module knows nothing of rmcp or LSP.

pub mod audit;
pub mod draft;
mod flow;
pub mod models;
pub mod openai;
pub mod provider;
pub mod providers;
pub mod types;

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;

pub use flow::Exchange;
pub use models::ModelSpec;

use crate::elicitation::{RateLimit, RateLimiter};

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

/// The sidecar-wide `sampling` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub provider: ProviderKind,
    pub openai: Option<Value>,
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
            openai: raw.openai,
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

/// The OpenAI-compatible provider from `sampling.openai`.
pub fn openai_provider(settings: &Settings) -> Result<Box<dyn provider::Provider>, String> {
    let raw = settings
        .openai
        .clone()
        .ok_or("sampling.openai is not configured")?;
    let config: openai::OpenAiConfig =
        serde_json::from_value(raw).map_err(|e| format!("sampling.openai: {e}"))?;
    let provider = openai::OpenAi::new(config).map_err(|e| e.to_string())?;
    Ok(Box::new(provider))
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("{0}")]
    Person(String),
    #[error("{0}")]
    Policy(String),
    #[error("{0}")]
    Limit(String),
    #[error("the model failed: {0}")]
    Provider(String),
    #[error("{0}")]
    Invalid(String),
}

/// What lasts for the editor session: servers allowed to skip the request draft, the rate
/// limit, and tokens spent (or reserved) in the last hour.
#[derive(Default)]
pub struct Sessions {
    remembered: Mutex<HashSet<String>>,
    limiter: RateLimiter,
    spent: Mutex<HashMap<String, VecDeque<Spent>>>,
    next_reservation: std::sync::atomic::AtomicU64,
    warned: Mutex<HashSet<String>>,
}

/// Tokens counted against a server's hourly budget: spent, or reserved for a request that is
/// with the provider (`reservation` set until it is settled).
struct Spent {
    at: Instant,
    tokens: u64,
    reservation: Option<u64>,
}

/// Tokens held for one request while the provider works on it. [`Reservation::settle`] turns it
/// into what was used, [`Reservation::release`] gives it back; dropped without either (the
/// exchange was abandoned mid-call), the whole reservation stays counted.
pub struct Reservation<'a> {
    sessions: &'a Sessions,
    server: String,
    id: u64,
}

impl Reservation<'_> {
    /// Counts `tokens` (what the exchange used) instead of the reservation.
    pub fn settle(self, tokens: u64) {
        self.sessions.adjust(&self.server, self.id, Some(tokens));
    }

    /// Gives the reservation back (the provider failed: nothing was used).
    pub fn release(self) {
        self.sessions.adjust(&self.server, self.id, None);
    }
}

impl Sessions {
    pub fn remembered(&self, server: &str) -> bool {
        self.remembered.lock().contains(server)
    }

    pub fn remember(&self, server: &str) {
        self.remembered.lock().insert(server.to_string());
    }

    /// True the first time this warning is given this session.
    pub fn first_warning(&self, warning: &str) -> bool {
        self.warned.lock().insert(warning.to_string())
    }

    /// Records the tokens an exchange used.
    pub fn spend(&self, server: &str, tokens: u64) {
        self.spent
            .lock()
            .entry(server.to_string())
            .or_default()
            .push_back(Spent {
                at: Instant::now(),
                tokens,
                reservation: None,
            });
    }

    /// Why a new request must be refused, if it must: the rate limit or the hourly budget
    /// (`tokens`: what it may use; spent and reserved tokens count).
    pub fn over_limit(&self, server: &str, settings: &Settings, tokens: u64) -> Option<String> {
        let spent = self.spent_this_hour(&mut self.spent.lock(), server);
        if let Some(reason) = over_budget(server, settings, spent, tokens) {
            return Some(reason);
        }
        if !self.limiter.admit(server, &settings.rate_limit) {
            return Some(format!(
                "{server} sent more than {} sampling requests in {:?}",
                settings.rate_limit.count, settings.rate_limit.per
            ));
        }
        None
    }

    /// Reserves `tokens` of the server's hourly budget, checked and taken in one step so that
    /// requests at the same time cannot all pass a nearly spent budget.
    pub fn reserve(
        &self,
        server: &str,
        settings: &Settings,
        tokens: u64,
    ) -> Result<Reservation<'_>, String> {
        let mut all = self.spent.lock();
        let spent = self.spent_this_hour(&mut all, server);
        if let Some(reason) = over_budget(server, settings, spent, tokens) {
            return Err(reason);
        }
        let id = self
            .next_reservation
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        all.entry(server.to_string()).or_default().push_back(Spent {
            at: Instant::now(),
            tokens,
            reservation: Some(id),
        });
        Ok(Reservation {
            sessions: self,
            server: server.to_string(),
            id,
        })
    }

    fn adjust(&self, server: &str, id: u64, tokens: Option<u64>) {
        let mut all = self.spent.lock();
        let Some(window) = all.get_mut(server) else {
            return;
        };
        if let Some(i) = window.iter().position(|s| s.reservation == Some(id)) {
            match tokens {
                Some(tokens) => {
                    window[i].tokens = tokens;
                    window[i].reservation = None;
                }
                None => {
                    window.remove(i);
                }
            }
        }
    }

    fn spent_this_hour(&self, all: &mut HashMap<String, VecDeque<Spent>>, server: &str) -> u64 {
        let hour = Duration::from_secs(3600);
        let window = all.entry(server.to_string()).or_default();
        while window.front().is_some_and(|s| s.at.elapsed() >= hour) {
            window.pop_front();
        }
        window.iter().map(|s| s.tokens).sum()
    }
}

fn over_budget(server: &str, settings: &Settings, spent: u64, tokens: u64) -> Option<String> {
    (spent.saturating_add(tokens) > settings.tokens_per_hour).then(|| {
        format!(
            "{server} used {spent} of its {} tokens this hour; this request may use {tokens} more",
            settings.tokens_per_hour
        )
    })
}

#[cfg(test)]
mod tests;
