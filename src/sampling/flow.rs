//! One sampling exchange: policy and limits, the request draft, the provider, the answer draft,
//! and the audit entry. Only what the person accepts goes back.

use std::path::Path;
use std::time::Instant;

use serde_json::{Value, json};

use super::draft::{self, RequestChoices};
use super::provider::Provider;
use super::types::{Block, CreateMessageParams, CreateMessageResult, Role};
use super::{Policy, Refusal, Sessions, Settings, audit, models};
use crate::contract::{DraftKind, DraftProblem, EditDraftParams, EditDraftResult};
use crate::ui::{Level, Prompter};

pub struct Exchange<'a> {
    pub ui: &'a dyn Prompter,
    pub provider: &'a dyn Provider,
    pub server: &'a str,
    pub policy: Policy,
    pub settings: &'a Settings,
    pub sessions: &'a Sessions,
    /// Where the exchange's entry is appended ([`audit::log_path`] in the sidecar); `None`
    /// logs nothing.
    pub audit_log: Option<&'a Path>,
}

impl Exchange<'_> {
    pub async fn run(&self, raw: &Value) -> Result<CreateMessageResult, Refusal> {
        let started = Instant::now();
        // The request's own `_meta` (progress token, ...) is transport detail, not content.
        let mut received = raw.clone();
        if let Some(obj) = received.as_object_mut() {
            obj.remove("_meta");
        }
        let mut audit = Audit(
            self.audit_log,
            Some(json!({
                "time": time_now(),
                "server": self.server,
                "policy": self.policy,
                "provider": self.provider.name(),
                "requestReceived": received,
                // Until the exchange ends: a server or editor that gives up leaves this.
                "outcome": "cancelled",
            })),
        );
        let entry = audit.1.as_mut().expect("set above");
        let outcome = self.exchange(&received, entry).await;
        entry["totalMs"] = json!(started.elapsed().as_millis() as u64);
        match &outcome {
            Ok(result) => {
                entry["outcome"] = json!("accepted");
                entry["final"] = serde_json::to_value(result).unwrap_or(Value::Null);
                let edited = entry.get("modelDraft") != entry.get("final");
                entry["answerEdited"] = json!(edited);
            }
            Err(refusal) => {
                entry["outcome"] = json!("refused");
                entry["reason"] = json!(refusal.to_string());
                if entry.get("decidedBy").is_none() {
                    entry["decidedBy"] = json!(match refusal {
                        Refusal::Person(_) => "person",
                        Refusal::Policy(_) => "policy",
                        Refusal::Limit(_) => "limit",
                        Refusal::Provider(_) => "provider",
                        Refusal::Invalid(_) => "invalid request",
                    });
                }
            }
        }
        drop(audit);
        outcome
    }

    async fn exchange(
        &self,
        raw: &Value,
        entry: &mut Value,
    ) -> Result<CreateMessageResult, Refusal> {
        if self.policy == Policy::Never {
            entry["decidedBy"] = json!("policy: never");
            return Err(Refusal::Policy(format!(
                "sampling is turned off for {}",
                self.server
            )));
        }
        if let Some(warning) = self.provider.warning()
            && self.sessions.first_warning(&warning)
        {
            tracing::warn!("{warning}");
            self.ui.show_message(Level::Warning, warning);
        }
        let request: CreateMessageParams = serde_json::from_value(raw.clone())
            .map_err(|e| Refusal::Invalid(format!("the sampling request is malformed: {e}")))?;
        if let Some(reason) =
            self.sessions
                .over_limit(self.server, self.settings, may_use(&request))
        {
            entry["decidedBy"] = json!("limit");
            tracing::warn!(
                server = self.server,
                "refusing a sampling request: {reason}"
            );
            return Err(Refusal::Limit(reason));
        }
        let choices = RequestChoices {
            model: models::choose(request.model_preferences.as_ref(), &self.settings.models),
            remember_session: false,
        };
        let review_request = self.policy == Policy::Ask && !self.sessions.remembered(self.server);
        let t = Instant::now();
        let (request, choices) = if review_request {
            let (request, choices) = self.review_request(&request, &choices).await?;
            if choices.remember_session {
                self.sessions.remember(self.server);
            }
            (request, choices)
        } else {
            (request, choices)
        };
        entry["requestReviewMs"] = json!(t.elapsed().as_millis() as u64);
        entry["requestSent"] = serde_json::to_value(&request).unwrap_or(Value::Null);
        entry["requestEdited"] = json!(entry["requestSent"] != entry["requestReceived"]);
        entry["model"] = json!(choices.model);
        // What the request may use is held before the provider is asked, so that requests at
        // the same time cannot all pass a nearly spent budget; then it becomes what was used.
        let reservation = self
            .sessions
            .reserve(self.server, self.settings, may_use(&request))
            .map_err(|reason| {
                entry["decidedBy"] = json!("limit");
                tracing::warn!(
                    server = self.server,
                    "refusing a sampling request: {reason}"
                );
                Refusal::Limit(reason)
            })?;
        let t = Instant::now();
        let answer = self
            .provider
            .complete(&request, choices.model.as_deref())
            .await;
        entry["modelMs"] = json!(t.elapsed().as_millis() as u64);
        match &answer {
            Ok(result) => {
                reservation.settle(request.estimated_tokens() + result.estimated_tokens())
            }
            Err(_) => reservation.release(),
        }
        let (draft_result, note) = match answer {
            Ok(result) => (result, None),
            Err(e) if self.policy == Policy::Auto => {
                entry["decidedBy"] = json!("policy: auto");
                return Err(Refusal::Provider(e.to_string()));
            }
            Err(e) => (
                CreateMessageResult {
                    role: Role::Assistant,
                    content: vec![Block::text("")],
                    model: "manual".into(),
                    stop_reason: Some("endTurn".into()),
                },
                Some(format!(
                    "{} failed: {e}. Write the answer yourself, or Reject.",
                    self.provider.name()
                )),
            ),
        };
        entry["modelDraft"] = serde_json::to_value(&draft_result).unwrap_or(Value::Null);
        if self.policy == Policy::Auto {
            entry["decidedBy"] = json!("policy: auto");
            return Ok(draft_result);
        }
        let t = Instant::now();
        let result = self.review_answer(&draft_result, note.as_deref()).await;
        entry["answerReviewMs"] = json!(t.elapsed().as_millis() as u64);
        entry["decidedBy"] = json!("person");
        result
    }

    async fn review_request(
        &self,
        request: &CreateMessageParams,
        choices: &RequestChoices,
    ) -> Result<(CreateMessageParams, RequestChoices), Refusal> {
        self.review(
            DraftKind::SamplingRequest,
            format!(
                "{} wants a model answer",
                crate::ui::who(self.ui, self.server)
            ),
            draft::render_request_to(self.server, request, choices, &self.provider.destination()),
            draft::parse_request,
            "request",
        )
        .await
    }

    async fn review_answer(
        &self,
        result: &CreateMessageResult,
        note: Option<&str>,
    ) -> Result<CreateMessageResult, Refusal> {
        self.review(
            DraftKind::SamplingResponse,
            format!("Answer for {}", crate::ui::who(self.ui, self.server)),
            draft::render_response(self.server, result, note),
            draft::parse_response,
            "answer",
        )
        .await
    }

    /// Shows a draft until the person accepts one that parses (re-opened with its problems
    /// otherwise), rejects it, or closes it.
    async fn review<T>(
        &self,
        kind: DraftKind,
        title: String,
        mut text: String,
        parse: impl Fn(&str) -> Result<T, Vec<DraftProblem>>,
        what: &str,
    ) -> Result<T, Refusal> {
        let mut problems = Vec::new();
        loop {
            match self.ask(kind, title.clone(), &text, problems).await {
                Some(EditDraftResult::Accept { text: edited }) => match parse(&edited) {
                    Ok(parsed) => return Ok(parsed),
                    Err(found) => {
                        problems = found;
                        text = edited;
                    }
                },
                Some(EditDraftResult::Reject) => {
                    return Err(Refusal::Person(format!("the person rejected the {what}")));
                }
                None => {
                    return Err(Refusal::Person(format!(
                        "the person closed the {what} draft"
                    )));
                }
            }
        }
    }

    async fn ask(
        &self,
        kind: DraftKind,
        title: String,
        text: &str,
        problems: Vec<DraftProblem>,
    ) -> Option<EditDraftResult> {
        if !self.ui.capabilities().edit_draft {
            self.ui.show_message(
                Level::Warning,
                format!(
                    "{} asked for a model answer, but this editor cannot show drafts; refused.",
                    self.server
                ),
            );
            return None;
        }
        self.ui
            .edit_draft(EditDraftParams {
                id: String::new(),
                server: Some(self.server.to_string()),
                kind,
                title,
                language: "markdown".into(),
                text: text.to_string(),
                problems,
            })
            .await
    }
}

/// Appends its entry when dropped: at the end of the exchange, or when the exchange is
/// abandoned (the server cancelled, the call was cancelled), so every exchange is logged.
struct Audit<'a>(Option<&'a Path>, Option<Value>);

impl Drop for Audit<'_> {
    fn drop(&mut self) {
        if let (Some(path), Some(mut entry)) = (self.0, self.1.take()) {
            // Refused or abandoned: who and why, with sizes, not the messages.
            if entry.get("outcome").and_then(Value::as_str) != Some("accepted") {
                audit::summarize(&mut entry);
            }
            audit::append(path, &entry);
        }
    }
}

/// The most of the hourly budget a request may use: its estimated size plus `maxTokens`.
fn may_use(request: &CreateMessageParams) -> u64 {
    request
        .estimated_tokens()
        .saturating_add(request.max_tokens)
}

/// Seconds since the Unix epoch, with milliseconds.
fn time_now() -> f64 {
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or_default();
    millis as f64 / 1000.0
}
