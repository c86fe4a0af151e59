//! A call that needs steps in the browser first (2025-11-25 `URLElicitationRequiredError`,
//! -32042): consent to (and open) each URL the server names, then offer to retry the call. The
//! call is retried when the person chooses "Retry now", or at once when the server says one of
//! the steps is done (`notifications/elicitation/complete`); the prompt is closed then.

use std::future::Future;

use super::{Outcome, Request, Unsupported};
use crate::contract::{QuickPickItem, QuickPickParams, QuickPickResult};
use crate::ui::{Level, Prompter};

/// One step the server names before it can answer.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserStep {
    /// The server's `elicitationId`, which its completion notification names.
    pub id: String,
    pub message: String,
    pub url: String,
}

/// Whether to retry the call after the browser steps.
///
/// `consent` asks one URL question (under the server's policy and limits); every step must be
/// accepted, in order, or the call is not retried. `completion` is called with the accepted ids
/// once they are all accepted and resolves when the server says one of them is done.
pub async fn after_browser<Ask, Asked, Wait, Done>(
    ui: &dyn Prompter,
    server: &str,
    steps: &[BrowserStep],
    mut consent: Ask,
    completion: Wait,
) -> bool
where
    Ask: FnMut(Request) -> Asked,
    Asked: Future<Output = Result<Outcome, Unsupported>>,
    Wait: FnOnce(&[String]) -> Done,
    Done: Future<Output = ()>,
{
    let mut ids = Vec::new();
    for step in steps {
        let request = Request::Url {
            message: step.message.clone(),
            url: step.url.clone(),
        };
        match consent(request).await {
            Ok(Outcome::Accept(_)) => ids.push(step.id.clone()),
            _ => return false,
        }
    }
    if ids.is_empty() {
        return false;
    }
    let completed = completion(&ids);
    let asked = ui.quick_pick(QuickPickParams {
        server: Some(server.to_string()),
        title: crate::ui::title(ui, server, "finish in the browser, then retry"),
        placeholder: Some(
            "The call is retried when you choose, or when the server says the step is done".into(),
        ),
        items: vec![
            QuickPickItem::new("Retry now"),
            QuickPickItem::new("Cancel"),
        ],
        ..Default::default()
    });
    tokio::select! {
        () = completed => {
            ui.show_message(
                Level::Info,
                format!("{server}: the step in the browser is done; retrying."),
            );
            true
        }
        answer = asked => answer.as_ref().and_then(QuickPickResult::first) == Some(0),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::elicitation::{Policy, RateLimiter, Settings, elicit};
    use crate::testing::Script;

    fn steps(ids: &[&str]) -> Vec<BrowserStep> {
        ids.iter()
            .map(|id| BrowserStep {
                id: id.to_string(),
                message: format!("Sign in ({id})"),
                url: format!("https://example.com/{id}"),
            })
            .collect()
    }

    /// Runs the flow with the real URL consent and a completion that fires when `done` is
    /// notified; returns the answer and the ids the completion was asked to wait for.
    async fn run(
        ui: &Script,
        steps: &[BrowserStep],
        done: Arc<tokio::sync::Notify>,
    ) -> (bool, Vec<String>) {
        let limiter = RateLimiter::default();
        let settings = Settings::default();
        let mut waited = Vec::new();
        let retry = after_browser(
            ui,
            "srv",
            steps,
            |request| {
                let (limiter, settings) = (&limiter, &settings);
                async move { elicit(ui, "srv", Policy::Ask, settings, limiter, &request).await }
            },
            |ids| {
                waited = ids.to_vec();
                async move { done.notified().await }
            },
        )
        .await;
        (retry, waited)
    }

    /// "Open … in the browser" in the URL consent prompt.
    fn open() -> serde_json::Value {
        json!({"selected": [0]})
    }

    #[tokio::test]
    async fn every_step_is_consented_then_retry_now_retries() {
        let ui = Script::new(vec![open(), open(), json!({"selected": [0]})]);
        let (retry, waited) = run(&ui, &steps(&["a", "b"]), Arc::default()).await;
        assert!(retry);
        assert_eq!(waited, ["a", "b"]);
        assert_eq!(
            *ui.opened.lock(),
            ["https://example.com/a", "https://example.com/b"]
        );
        let shown = ui.shown();
        let pick = &shown[2]["params"];
        assert_eq!(pick["title"], "srv: finish in the browser, then retry");
        assert_eq!(pick["items"][0]["label"], "Retry now");
        assert_eq!(pick["items"][1]["label"], "Cancel");
        assert!(ui.messages.lock().is_empty());
    }

    #[tokio::test]
    async fn cancel_or_a_dismissed_prompt_does_not_retry() {
        for answer in [json!({"selected": [1]}), json!(null)] {
            let ui = Script::new(vec![open(), answer]);
            let (retry, _) = run(&ui, &steps(&["a"]), Arc::default()).await;
            assert!(!retry);
            assert_eq!(ui.shown().len(), 2);
        }
    }

    #[tokio::test]
    async fn a_declined_step_ends_the_flow_without_waiting() {
        // The first URL is declined: the second is not asked, nothing waits, no retry prompt.
        let ui = Script::new(vec![json!({"selected": [2]})]);
        let (retry, waited) = run(&ui, &steps(&["a", "b"]), Arc::default()).await;
        assert!(!retry);
        assert!(waited.is_empty());
        assert_eq!(ui.shown().len(), 1);
        assert!(ui.opened.lock().is_empty());
        // No steps at all: nothing is shown.
        let ui = Script::new(vec![]);
        assert!(!run(&ui, &[], Arc::default()).await.0);
        assert!(ui.shown().is_empty());
    }

    #[tokio::test]
    async fn the_servers_completion_retries_without_an_answer() {
        let ui = Script::new(vec![open(), Script::never()]);
        let done = Arc::new(tokio::sync::Notify::new());
        done.notify_one();
        let (retry, waited) = run(&ui, &steps(&["a"]), done).await;
        assert!(retry);
        assert_eq!(waited, ["a"]);
        assert_eq!(ui.shown()[1]["params"]["items"][0]["label"], "Retry now");
        assert_eq!(
            *ui.messages.lock(),
            ["srv: the step in the browser is done; retrying."]
        );
    }
}
