//! Sampling: a server's model request and the model's draft answer open as editable buffers;
//! only what the person accepts goes back. This module knows nothing of rmcp or LSP.

pub mod audit;
pub mod draft;
mod flow;
pub mod models;
pub mod openai;
pub mod provider;
pub mod types;

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant};

pub use crate::config::sampling::{ModelSpec, Policy, ProviderKind, Settings};
pub use flow::Exchange;

use crate::elicitation::RateLimiter;
use crate::ui::Prompter;
use provider::{EditorModel, Manual, Provider};

/// The sampling settings in force and the provider built from them. The OpenAI-compatible
/// endpoint (its HTTP client, its API key read from the environment) is set up once, when the
/// settings are applied, and shared by every request until the settings change.
#[derive(Default)]
pub struct Applied {
    pub settings: Settings,
    openai: Option<openai::OpenAi>,
}

impl Applied {
    /// Builds the provider `settings` name. When it cannot be built, the settings still apply
    /// (requests fall back to `manual`) and the second value says why, for the person.
    pub fn new(settings: Settings) -> (Applied, Option<String>) {
        let built = match (settings.provider, &settings.openai) {
            (ProviderKind::Openai, Some(config)) => openai::OpenAi::new(config.clone())
                .map(Some)
                .map_err(|e| e.0),
            (ProviderKind::Openai, None) => Err("sampling.openai is not configured".into()),
            _ => Ok(None),
        };
        let (openai, problem) = match built {
            Ok(openai) => (openai, None),
            Err(e) => (
                None,
                Some(format!(
                    "sampling.provider \"openai\" cannot be used ({e}); a person answers"
                )),
            ),
        };
        (Applied { settings, openai }, problem)
    }

    /// The provider for one request: the one built for the settings, or, for `editor`, the
    /// editor's model when the editor offers one. Anything that cannot work here is `manual` (a
    /// person writes the answer).
    pub fn provider<'a>(&'a self, ui: &'a dyn Prompter) -> Box<dyn Provider + 'a> {
        match self.settings.provider {
            ProviderKind::Manual => Box::new(Manual),
            ProviderKind::Editor if ui.capabilities().language_model => {
                Box::new(EditorModel { ui })
            }
            ProviderKind::Editor => {
                tracing::warn!(
                    "sampling.provider is \"editor\" but the editor offers no model; a person answers"
                );
                Box::new(Manual)
            }
            ProviderKind::Openai => match &self.openai {
                Some(openai) => Box::new(openai),
                // Why was reported when the settings were applied.
                None => Box::new(Manual),
            },
        }
    }
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
