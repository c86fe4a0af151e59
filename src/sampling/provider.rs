//! Where model answers come from. Each provider is real: the editor's own model
//! (`mcp-sidecar/languageModel`), an OpenAI-compatible HTTP endpoint, or `manual` (a person writes
//! the answer in the response draft).

use futures::future::BoxFuture;

use super::types::{CreateMessageParams, CreateMessageResult};

/// A provider's failure, phrased for the person reading the response draft.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProviderError(pub String);

pub trait Provider: Send + Sync {
    /// Shown in drafts and the audit log.
    fn name(&self) -> &str;
    /// Asks the model. `model` is the model id chosen for this request (from the draft header),
    /// if any. `maxTokens` must be respected.
    fn complete<'a>(
        &'a self,
        request: &'a CreateMessageParams,
        model: Option<&'a str>,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ProviderError>>;
}
