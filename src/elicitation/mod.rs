//! Elicitation: a server's question (form or URL mode, either era) becomes the editor's own
//! prompts. This module knows nothing of rmcp or LSP: it sees a [`Request`], asks through a
//! [`Prompter`], and answers with an [`Outcome`].

pub mod arguments;
pub mod document;
mod flow;
mod input;
mod rate;
pub mod retry;
mod schema;
pub mod url;

use std::future::Future;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

pub use crate::config::elicitation::{
    MAX_DURATION, Policy, RateLimit, Settings, capped_secs, parse_duration,
};
pub use flow::{looks_secret, validate};
pub use rate::RateLimiter;
pub use schema::{
    CUT, Choice, Field, Form, Format, Kind, MAX_DESCRIPTION, MAX_FIELDS, MAX_LABEL, MAX_MESSAGE,
    MAX_OPTIONS, MAX_TITLE, Unsupported,
};

use crate::contract::{
    EditDraftParams, EditDraftResult, InputBoxParams, InputBoxResult, QuickPickParams,
    QuickPickResult,
};
use crate::ui::{FormAnswer, FormParams, Level, Prompter};

/// A server's question.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    Form { message: String, schema: Value },
    Url { message: String, url: String },
}

/// The person's answer (`ElicitResult.action` and `content`).
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Accept(Option<Map<String, Value>>),
    Decline,
    Cancel,
}

impl Outcome {
    pub fn action(&self) -> &'static str {
        match self {
            Outcome::Accept(_) => "accept",
            Outcome::Decline => "decline",
            Outcome::Cancel => "cancel",
        }
    }
}

/// Answers one question from `server`. `Err` means the question cannot be shown at all (a
/// schema outside the spec's subset, or over its caps); the person has been told (within the
/// rate limit), and the caller answers the server the way its era wants (legacy -32602,
/// 2026-07-28 decline).
///
/// Under `ask` the rate limit comes first: a question over it is cancelled before its schema is
/// parsed or anything is shown. `decline` and `acceptDefaults` answer without showing anything and
/// do not count, except for a form that cannot be shown, whose message counts.
pub async fn elicit(
    ui: &dyn Prompter,
    server: &str,
    policy: Policy,
    settings: &Settings,
    limiter: &RateLimiter,
    request: &Request,
) -> Result<Outcome, Unsupported> {
    if policy == Policy::Ask && !limiter.admit(server, &settings.rate_limit) {
        return Ok(Outcome::Cancel);
    }
    let message = match request {
        Request::Form { message, .. } | Request::Url { message, .. } => {
            crate::contract::shown::block(message, schema::MAX_MESSAGE)
        }
    };
    let form = match request {
        Request::Form { schema, .. } => match Form::parse(schema) {
            Ok(form) => Some(form),
            Err(e) => {
                if policy == Policy::Ask || limiter.admit(server, &settings.rate_limit) {
                    ui.show_message(
                        Level::Warning,
                        format!("{server} asked \"{message}\" with a form this editor cannot show ({e}); it was told so."),
                    );
                }
                return Err(e);
            }
        },
        Request::Url { .. } => None,
    };
    match policy {
        Policy::Decline => return Ok(Outcome::Decline),
        Policy::AcceptDefaults => {
            return Ok(match &form {
                Some(form) if form.defaults_cover_required() => {
                    Outcome::Accept(Some(form.defaults()))
                }
                _ => Outcome::Decline,
            });
        }
        Policy::Ask => {}
    }
    let ui = Idle {
        inner: ui,
        limit: settings.idle_limit,
    };
    Ok(match (request, form) {
        (Request::Form { schema, .. }, Some(form)) => {
            let cx = flow::Context {
                server,
                title: crate::ui::title(&ui, server, &message),
                suggest: None,
                review: flow::Review::Answer,
            };
            flow::run(&ui, &cx, &form, schema).await
        }
        (Request::Url { url, .. }, _) => url::run(&ui, server, &message, url).await,
        (Request::Form { .. }, None) => Outcome::Cancel,
    })
}

/// Closes any prompt left unanswered for longer than the idle limit.
struct Idle<'a> {
    inner: &'a dyn Prompter,
    limit: Duration,
}

impl Idle<'_> {
    fn bounded<'a, T: Send + 'a>(
        &'a self,
        fut: impl Future<Output = Option<T>> + Send + 'a,
    ) -> BoxFuture<'a, Option<T>> {
        Box::pin(async move {
            match tokio::time::timeout(self.limit, fut).await {
                Ok(answer) => answer,
                Err(_) => {
                    self.inner.show_message(
                        Level::Info,
                        "A question was left unanswered for too long and was closed.".into(),
                    );
                    None
                }
            }
        })
    }
}

impl Prompter for Idle<'_> {
    crate::ui::pass_on!(
        capabilities,
        open_external,
        clipboard,
        language_model,
        show_file,
        show_message,
        open_app,
        close_app,
        requester,
    );
    fn input_box(&self, params: InputBoxParams) -> BoxFuture<'_, Option<InputBoxResult>> {
        self.bounded(self.inner.input_box(params))
    }
    fn quick_pick(&self, params: QuickPickParams) -> BoxFuture<'_, Option<QuickPickResult>> {
        self.bounded(self.inner.quick_pick(params))
    }
    fn edit_draft(&self, params: EditDraftParams) -> BoxFuture<'_, Option<EditDraftResult>> {
        self.bounded(self.inner.edit_draft(params))
    }
    fn form(&self, params: FormParams) -> Option<BoxFuture<'_, FormAnswer>> {
        let form = self.inner.form(params)?;
        Some(Box::pin(async move {
            self.bounded(async move { Some(form.await) })
                .await
                .unwrap_or(FormAnswer::Cancel)
        }))
    }
}

#[cfg(test)]
mod tests;
