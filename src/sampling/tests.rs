//! The sampling flow driven by a scripted editor: both drafts edited, refusals, policies, limits.

use serde_json::{Value, json};

use super::provider::Manual;
use super::*;
use crate::testing::Script;

fn raw() -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Which flight?"}}],
           "maxTokens": 100, "temperature": 0.2, "modelPreferences": {"hints": [{"name": "mini"}]}})
}

fn settings() -> Settings {
    Settings {
        models: serde_json::from_value(json!([{"name": "gpt-4o-mini"}, {"name": "big"}])).unwrap(),
        ..Settings::default()
    }
}

async fn run(
    script: &Script,
    policy: Policy,
    sessions: &Sessions,
) -> Result<types::CreateMessageResult, Refusal> {
    let settings = settings();
    let log = tempfile::tempdir().unwrap();
    let exchange = Exchange {
        ui: script,
        provider: &Manual,
        server: "flights",
        policy,
        settings: &settings,
        sessions,
        audit_log: Some(&log.path().join("sampling.jsonl")),
    };
    exchange.run(&raw()).await
}

fn accept(text: String) -> Value {
    json!({"action": "accept", "text": text})
}

#[tokio::test]
async fn both_drafts_are_shown_and_only_the_accepted_answer_goes_back() {
    // The script needs the drafts' text to edit it; answer by transforming what was shown.
    let script = Script::new(vec![]);
    let sessions = Sessions::default();
    let settings = settings();
    let exchange = Exchange {
        ui: &script,
        provider: &Manual,
        server: "flights",
        policy: Policy::Ask,
        settings: &settings,
        sessions: &sessions,
        audit_log: None,
    };
    let request_text = draft::render_request(
        "flights",
        &serde_json::from_value(raw()).unwrap(),
        &draft::RequestChoices {
            model: Some("gpt-4o-mini".into()),
            remember_session: false,
        },
    );
    let edited_request = request_text.replace("Which flight?", "Which flight is cheapest?");
    let answer_text =
        "model: manual\nstopReason: endTurn\n\n### assistant\n\nFlight 3, 120 EUR.\n".to_string();
    script
        .answers
        .lock()
        .extend([accept(edited_request), accept(answer_text)]);
    let result = exchange.run(&raw()).await.unwrap();
    assert_eq!(result.content[0].as_text(), Some("Flight 3, 120 EUR."));
    assert_eq!(result.model, "manual");
    let shown = script.shown();
    assert_eq!(shown[0]["params"]["kind"], "samplingRequest");
    assert!(
        shown[0]["params"]["text"]
            .as_str()
            .unwrap()
            .contains("model: gpt-4o-mini"),
        "hint matched a configured model"
    );
    assert_eq!(shown[1]["params"]["kind"], "samplingResponse");
}

#[tokio::test]
async fn a_broken_draft_is_reopened_with_problems_and_the_text_kept() {
    let script = Script::new(vec![
        accept("maxTokens: lots\n\n### user\n\nhi\n".into()),
        accept("maxTokens: 5\n\n### user\n\nhi\n".into()),
        json!({"action": "reject"}),
    ]);
    let out = run(&script, Policy::Ask, &Sessions::default()).await;
    assert_eq!(
        out,
        Err(Refusal::Person("the person rejected the answer".into()))
    );
    let shown = script.shown();
    assert_eq!(
        shown[1]["params"]["text"],
        "maxTokens: lots\n\n### user\n\nhi\n"
    );
    assert_eq!(shown[1]["params"]["problems"][0]["line"], 0);
}

#[tokio::test]
async fn reject_and_close_refuse_and_policies_skip_drafts() {
    let script = Script::new(vec![json!({"action": "reject"})]);
    assert!(matches!(
        run(&script, Policy::Ask, &Sessions::default()).await,
        Err(Refusal::Person(_))
    ));
    let script = Script::new(vec![Value::Null]);
    assert!(matches!(
        run(&script, Policy::Ask, &Sessions::default()).await,
        Err(Refusal::Person(_))
    ));
    // reviewResponse: only the answer draft.
    let script = Script::new(vec![accept("model: m\n\n### assistant\n\nok\n".into())]);
    assert!(
        run(&script, Policy::ReviewResponse, &Sessions::default())
            .await
            .is_ok()
    );
    assert_eq!(script.shown().len(), 1);
    // auto: no drafts; never: refused.
    let script = Script::new(vec![]);
    assert_eq!(
        run(&script, Policy::Auto, &Sessions::default())
            .await
            .unwrap()
            .model,
        "manual"
    );
    assert!(matches!(
        run(&script, Policy::Never, &Sessions::default()).await,
        Err(Refusal::Policy(_))
    ));
    assert!(script.shown().is_empty());
}

#[tokio::test]
async fn remember_session_skips_the_request_draft_next_time_and_limits_refuse_without_prompts() {
    let sessions = Sessions::default();
    let text = draft::render_request(
        "flights",
        &serde_json::from_value(raw()).unwrap(),
        &draft::RequestChoices::default(),
    )
    .replace("remember: no", "remember: session");
    let script = Script::new(vec![
        accept(text),
        accept("model: m\n\n### assistant\n\nok\n".into()),
    ]);
    run(&script, Policy::Ask, &sessions).await.unwrap();
    let script = Script::new(vec![accept("model: m\n\n### assistant\n\nok\n".into())]);
    run(&script, Policy::Ask, &sessions).await.unwrap();
    assert_eq!(script.shown()[0]["params"]["kind"], "samplingResponse");
    // Budget: spent tokens this hour over the limit → refused, no prompt.
    sessions.spend("flights", 1_000_000);
    let script = Script::new(vec![]);
    assert!(matches!(
        run(&script, Policy::Ask, &sessions).await,
        Err(Refusal::Limit(_))
    ));
    assert!(script.shown().is_empty());
}

/// A provider that counts its calls and answers only when the gate opens.
struct Gated {
    calls: std::sync::atomic::AtomicUsize,
    gate: tokio::sync::Semaphore,
}

impl provider::Provider for Gated {
    fn name(&self) -> &str {
        "gated"
    }

    fn complete<'a>(
        &'a self,
        _request: &'a types::CreateMessageParams,
        _model: Option<&'a str>,
    ) -> futures::future::BoxFuture<'a, Result<types::CreateMessageResult, provider::ProviderError>>
    {
        Box::pin(async move {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.gate.acquire().await.unwrap().forget();
            Ok(types::CreateMessageResult {
                role: types::Role::Assistant,
                content: vec![types::Block::text("ok")],
                model: "m".into(),
                stop_reason: Some("endTurn".into()),
            })
        })
    }
}

#[tokio::test]
async fn concurrent_requests_reserve_the_budget_before_the_provider_is_asked() {
    use futures::StreamExt;
    // 1000 tokens an hour, 700 spent: 300 left. Each request may use 3 (its text) + 100
    // (maxTokens), so two fit and the other three are refused without reaching the provider.
    let settings = Settings {
        tokens_per_hour: 1000,
        ..Settings::default()
    };
    let sessions = Sessions::default();
    sessions.spend("flights", 700);
    let provider = Gated {
        calls: Default::default(),
        gate: tokio::sync::Semaphore::new(0),
    };
    let script = Script::new(vec![]);
    let request = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Which flight?"}}],
                         "maxTokens": 100});
    let exchange = Exchange {
        ui: &script,
        provider: &provider,
        server: "flights",
        policy: Policy::Auto,
        settings: &settings,
        sessions: &sessions,
        audit_log: None,
    };
    let mut running: futures::stream::FuturesUnordered<_> =
        (0..5).map(|_| exchange.run(&request)).collect();
    let mut refused = 0;
    let mut accepted = 0;
    let all = async {
        while let Some(outcome) = running.next().await {
            match outcome {
                Err(Refusal::Limit(reason)) => {
                    assert!(reason.contains("tokens this hour"), "{reason}");
                    refused += 1;
                    // Every refusal came while the two admitted requests were still with the
                    // provider: open the gate once all three are in.
                    if refused == 3 {
                        provider.gate.add_permits(5);
                    }
                }
                Ok(_) => accepted += 1,
                Err(other) => panic!("{other:?}"),
            }
        }
    };
    let finished = tokio::time::timeout(std::time::Duration::from_secs(30), all).await;
    let calls = provider.calls.load(std::sync::atomic::Ordering::SeqCst);
    assert!(
        finished.is_ok(),
        "stuck: {calls} requests reached the provider"
    );
    assert_eq!(calls, 2);
    assert_eq!((accepted, refused), (2, 3));
    // Settled to what was used (3 + 0 tokens each), not the 103 reserved: another fits now.
    assert!(sessions.over_limit("flights", &settings, 103).is_none());
}

/// Manual, with a warning.
struct Warns;

impl provider::Provider for Warns {
    fn name(&self) -> &str {
        "warns"
    }

    fn warning(&self) -> Option<String> {
        Some("the key goes over plain http".into())
    }

    fn complete<'a>(
        &'a self,
        request: &'a types::CreateMessageParams,
        model: Option<&'a str>,
    ) -> futures::future::BoxFuture<'a, Result<types::CreateMessageResult, provider::ProviderError>>
    {
        Manual.complete(request, model)
    }
}

#[tokio::test]
async fn a_provider_warning_is_shown_once_and_logged() {
    let settings = settings();
    let sessions = Sessions::default();
    let script = Script::new(vec![]);
    let exchange = Exchange {
        ui: &script,
        provider: &Warns,
        server: "flights",
        policy: Policy::Auto,
        settings: &settings,
        sessions: &sessions,
        audit_log: None,
    };
    exchange.run(&raw()).await.unwrap();
    exchange.run(&raw()).await.unwrap();
    assert_eq!(
        *script.messages.lock(),
        vec!["the key goes over plain http".to_string()]
    );
}

#[tokio::test]
async fn the_entry_goes_to_the_log_the_exchange_names() {
    let log = tempfile::tempdir().unwrap();
    let path = log.path().join("sampling.jsonl");
    let settings = settings();
    let sessions = Sessions::default();
    let script = Script::new(vec![json!({"action": "reject"})]);
    let exchange = Exchange {
        ui: &script,
        provider: &Manual,
        server: "flights",
        policy: Policy::Ask,
        settings: &settings,
        sessions: &sessions,
        audit_log: Some(&path),
    };
    assert!(exchange.run(&raw()).await.is_err());
    let text = std::fs::read_to_string(&path).unwrap();
    let entries: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 1, "{text}");
    assert_eq!(entries[0]["server"], "flights");
    assert_eq!(entries[0]["outcome"], "refused");
    // With no log named, nothing is written anywhere.
    let script = Script::new(vec![]);
    let exchange = Exchange {
        audit_log: None,
        ui: &script,
        policy: Policy::Never,
        ..exchange
    };
    exchange.run(&raw()).await.unwrap_err();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
