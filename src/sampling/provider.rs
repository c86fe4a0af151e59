//! Where model answers come from. Each provider is real: the editor's own model
//! (`mcp-sidecar/languageModel`), an OpenAI-compatible HTTP endpoint, or `manual` (a person writes
//! the answer in the response draft).

use futures::future::BoxFuture;

use super::types::{CreateMessageParams, CreateMessageResult};

/// A provider's failure, phrased for the person reading the response draft.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderError(pub String);

/// Where a request goes, as the request draft names it (read-only there).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Destination {
    /// `manual`, `editor` or `openai`.
    pub provider: String,
    /// The endpoint's host (and port when not the default), for a network provider.
    pub host: Option<String>,
    /// The model asked when the request names none.
    pub default_model: Option<String>,
}

pub trait Provider: Send + Sync {
    /// Shown in drafts and the audit log.
    fn name(&self) -> &str;
    /// Something the person must know about this provider before it is used (shown once).
    fn warning(&self) -> Option<String> {
        None
    }
    /// Where requests go; by default the provider's name and nothing else.
    fn destination(&self) -> Destination {
        Destination {
            provider: self.name().to_string(),
            ..Destination::default()
        }
    }
    /// Asks the model. `model` is the model id chosen for this request (from the draft header),
    /// if any. `maxTokens` must be respected.
    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageParams,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ProviderError>>;
}
