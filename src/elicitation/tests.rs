//! The schema model, validation and the step flow, driven by a scripted fake editor.

use serde_json::{Value, json};

use super::*;
use crate::testing::Script;

fn booking_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "title": "Full name", "minLength": 1},
            "email": {"type": "string", "format": "email"},
            "travelers": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
            "budget": {"type": "number", "minimum": 0, "default": 1500.5},
            "window_seat": {"type": "boolean", "default": true},
            "cabin": {"type": "string", "oneOf": [
                {"const": "economy", "title": "Economy"},
                {"const": "business", "title": "Business"}], "default": "economy"},
            "meal": {"type": "string", "enum": ["standard", "vegan"]},
            "insurance": {"type": "string", "enum": ["none", "full"], "enumNames": ["No insurance", "Full cover"], "default": "none"},
            "extras": {"type": "array", "items": {"type": "string", "enum": ["lounge", "wifi", "bag"]}, "maxItems": 2},
        },
        "required": ["name", "email"],
    })
}

async fn run_form(schema: Value, answers: Vec<Value>) -> (Outcome, Script) {
    let script = Script::new(answers);
    let request = Request::Form {
        message: "Confirm your trip".into(),
        schema,
    };
    let outcome = elicit(
        &script,
        "travel",
        Policy::Ask,
        &Settings::default(),
        &RateLimiter::default(),
        &request,
    )
    .await
    .unwrap();
    (outcome, script)
}

#[test]
fn every_kind_and_enum_spelling_parses_in_order() {
    let form = Form::parse(&booking_schema()).unwrap();
    let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "name",
            "email",
            "travelers",
            "budget",
            "window_seat",
            "cabin",
            "meal",
            "insurance",
            "extras"
        ]
    );
    assert!(form.fields[0].required && !form.fields[2].required);
    assert!(matches!(
        form.fields[2].kind,
        Kind::Number {
            integer: true,
            minimum: Some(1.0),
            maximum: Some(9.0)
        }
    ));
    assert!(matches!(
        form.fields[1].kind,
        Kind::String {
            format: Some(Format::Email),
            ..
        }
    ));
    let labels = |k: &Kind| match k {
        Kind::Choice { options } | Kind::MultiChoice { options, .. } => options
            .iter()
            .map(|o| (o.value.clone(), o.label.clone()))
            .collect::<Vec<_>>(),
        _ => vec![],
    };
    assert_eq!(
        labels(&form.fields[5].kind)[1],
        ("business".into(), "Business".into())
    );
    assert_eq!(
        labels(&form.fields[6].kind)[0],
        ("standard".into(), "standard".into())
    );
    assert_eq!(
        labels(&form.fields[7].kind)[1],
        ("full".into(), "Full cover".into())
    );
    assert!(matches!(
        form.fields[8].kind,
        Kind::MultiChoice {
            max_items: Some(2),
            ..
        }
    ));
    let anyof = json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}}}});
    assert!(matches!(
        Form::parse(&anyof).unwrap().fields[0].kind,
        Kind::MultiChoice { .. }
    ));
    assert!(!form.defaults_cover_required());
    assert_eq!(form.defaults()["travelers"], json!(1));
}

#[test]
fn schemas_outside_the_subset_name_the_property() {
    let nested =
        json!({"type": "object", "properties": {"address": {"type": "object", "properties": {}}}});
    let e = Form::parse(&nested).unwrap_err();
    assert_eq!(e.property.as_deref(), Some("address"));
    assert!(e.message.contains("nested objects"), "{e}");
    let r#ref = json!({"type": "object", "properties": {"x": {"$ref": "#/defs/x"}}});
    assert!(Form::parse(&r#ref).unwrap_err().message.contains("$ref"));
    let unknown = json!({"type": "object", "properties": {"x": {"type": "color"}}});
    assert!(
        Form::parse(&unknown)
            .unwrap_err()
            .message
            .contains("unknown type \"color\"")
    );
    let arrays = json!({"type": "object", "properties": {"x": {"type": "array", "items": {"type": "number"}}}});
    assert!(Form::parse(&arrays).is_err());
    // Unknown keywords are tolerated, and `pattern` is enforced.
    let pattern = json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$", "x-ui": 1}}});
    let form = Form::parse(&pattern).unwrap();
    assert!(input::parse_text(&form.fields[0], "LIS").is_ok());
    assert!(
        input::parse_text(&form.fields[0], "lis")
            .unwrap_err()
            .contains("pattern")
    );
}

#[test]
fn typed_text_is_checked_and_typed() {
    let form = Form::parse(&booking_schema()).unwrap();
    let f = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
    assert_eq!(input::parse_text(f("travelers"), "3").unwrap(), json!(3));
    assert_eq!(input::parse_text(f("travelers"), "3.0").unwrap(), json!(3));
    assert!(
        input::parse_text(f("travelers"), "2.5")
            .unwrap_err()
            .contains("whole number")
    );
    assert!(
        input::parse_text(f("travelers"), "12")
            .unwrap_err()
            .contains("at most 9")
    );
    assert!(
        input::parse_text(f("travelers"), "0")
            .unwrap_err()
            .contains("at least 1")
    );
    assert_eq!(input::parse_text(f("budget"), "99.5").unwrap(), json!(99.5));
    assert_eq!(input::parse_text(f("budget"), "100").unwrap(), json!(100));
    assert!(input::parse_text(f("budget"), "-1").is_err());
    assert!(input::parse_text(f("budget"), "lots").is_err());
    assert!(input::parse_text(f("email"), "ada@example.com").is_ok());
    assert!(input::parse_text(f("email"), "ada@").is_err());
    assert!(
        input::parse_text(f("name"), "")
            .unwrap_err()
            .contains("cannot be empty")
    );
    let dates = json!({"type": "object", "properties": {
        "d": {"type": "string", "format": "date"}, "t": {"type": "string", "format": "date-time"},
        "u": {"type": "string", "format": "uri"}, "s": {"type": "string", "maxLength": 3}}});
    let form = Form::parse(&dates).unwrap();
    assert!(input::parse_text(&form.fields[0], "2026-02-28").is_ok());
    assert!(input::parse_text(&form.fields[0], "2026-02-30").is_err());
    assert!(input::parse_text(&form.fields[1], "2026-11-30T12:00:00Z").is_ok());
    assert!(input::parse_text(&form.fields[1], "2026-11-30T12:00:00.5+01:00").is_ok());
    assert!(input::parse_text(&form.fields[1], "2026-11-30 12:00").is_err());
    assert!(input::parse_text(&form.fields[2], "https://example.com/x").is_ok());
    assert!(input::parse_text(&form.fields[2], "example.com").is_err());
    assert!(
        input::parse_text(&form.fields[3], "abcd")
            .unwrap_err()
            .contains("at most 3")
    );
}

#[tokio::test]
async fn a_full_form_with_back_invalid_then_valid_skip_and_review() {
    let (outcome, script) = run_form(
        booking_schema(),
        vec![
            json!({"value": "Ada Lovelace"}),    // name
            json!({"value": "ada@"}),            // email: invalid
            json!({"value": "ada@example.com"}), // email again
            json!({"back": true}),               // travelers: back to email
            json!({"value": "ada@example.org"}), // email changed
            json!({"value": "2"}),               // travelers
            json!({"skip": true}),               // budget: skipped
            json!({"selected": [1]}),            // window_seat: No
            json!({"selected": [1]}),            // cabin: Business
            json!({"selected": [2]}),            // meal: Skip
            json!({"selected": [0]}),            // insurance
            json!({"selected": [0, 1, 2]}),      // extras: too many
            json!({"selected": [0, 2]}),         // extras
            json!({"selected": [3]}),            // review: change travelers
            json!({"value": "3"}),               // travelers again
            json!({"selected": [0]}),            // Submit
        ],
    )
    .await;
    assert_eq!(
        outcome,
        Outcome::Accept(Some(
            json!({"name": "Ada Lovelace", "email": "ada@example.org", "travelers": 3,
                   "window_seat": false, "cabin": "business", "insurance": "none",
                   "extras": ["lounge", "bag"]})
            .as_object()
            .unwrap()
            .clone()
        ))
    );
    let shown = script.shown();
    // Every prompt names the server; steps count; the invalid value is kept with its message.
    assert!(shown.iter().all(|s| {
        s["params"]["title"]
            .as_str()
            .unwrap()
            .starts_with("travel: ")
    }));
    assert_eq!(shown[1]["params"]["step"], 2);
    assert_eq!(shown[1]["params"]["totalSteps"], 9);
    assert_eq!(shown[2]["params"]["value"], "ada@");
    assert!(
        shown[2]["params"]["validationMessage"]
            .as_str()
            .unwrap()
            .contains("email")
    );
    assert_eq!(
        shown[0]["params"]["canGoBack"],
        Value::Null,
        "no Back on the first step"
    );
    assert_eq!(shown[3]["params"]["value"], "1", "default prefilled");
    assert_eq!(shown[6]["params"]["canSkip"], true);
    assert_eq!(
        shown[7]["params"]["items"][0]["picked"], true,
        "boolean default preselected"
    );
    assert_eq!(shown[8]["params"]["items"][0]["label"], "Economy");
    assert!(
        shown[9]["params"]["items"][2]["label"]
            .as_str()
            .unwrap()
            .starts_with("Skip")
    );
    assert_eq!(shown[11]["params"]["canPickMany"], true);
    assert!(
        shown[12]["params"]["placeholder"]
            .as_str()
            .unwrap()
            .contains("Pick at most 2")
    );
    assert_eq!(shown[13]["params"]["items"][0]["label"], "Submit");
    // The review shows each choice as its picker did: the title, not the value.
    let review = |label: &str| {
        let items = shown[15]["params"]["items"].as_array().unwrap();
        let item = items.iter().find(|i| i["label"] == label).unwrap();
        item["description"].as_str().unwrap().to_string()
    };
    assert_eq!(review("Change cabin"), "Business");
    assert_eq!(review("Change insurance"), "No insurance");
    assert_eq!(review("Change extras"), "lounge, bag");
    assert_eq!(review("Change window_seat"), "No");
}

#[tokio::test]
async fn an_optional_multi_select_can_be_skipped_a_required_one_cannot() {
    let schema = json!({"type": "object", "properties": {
        "extras": {"type": "array", "items": {"type": "string", "enum": ["lounge", "wifi"]}},
        "seats": {"type": "array", "items": {"type": "string", "enum": ["1A", "1B"]}}},
        "required": ["seats"]});
    let (outcome, script) = run_form(
        schema,
        vec![
            json!({"skip": true}),
            json!({"selected": [1]}),
            json!({"selected": [0]}),
        ],
    )
    .await;
    assert_eq!(
        outcome,
        Outcome::Accept(json!({"seats": ["1B"]}).as_object().cloned())
    );
    let shown = script.shown();
    assert_eq!(shown[0]["params"]["canSkip"], true, "optional: {shown:#?}");
    assert_eq!(shown[1]["params"]["canSkip"], Value::Null, "required");
}

#[tokio::test]
async fn decline_and_cancel_are_kept_apart() {
    let schema =
        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
    let (outcome, _) = run_form(
        schema.clone(),
        vec![json!({"selected": [0]}), json!({"selected": [2]})],
    )
    .await;
    assert_eq!(outcome, Outcome::Decline);
    let (outcome, _) = run_form(
        schema.clone(),
        vec![json!({"selected": [0]}), json!({"selected": [3]})],
    )
    .await;
    assert_eq!(outcome, Outcome::Cancel);
    let (outcome, _) = run_form(schema.clone(), vec![json!(null)]).await;
    assert_eq!(outcome, Outcome::Cancel, "Escape on a step is cancel");
    let (outcome, _) = run_form(schema, vec![json!({"selected": [0]}), json!(null)]).await;
    assert_eq!(outcome, Outcome::Cancel, "Escape on the review is cancel");
}

#[tokio::test]
async fn secrets_get_a_warning_and_a_hidden_box() {
    let schema = json!({"type": "object", "properties": {"api_key": {"type": "string", "title": "API key"}}});
    let (_, script) = run_form(
        schema,
        vec![json!({"value": "x"}), json!({"selected": [0]})],
    )
    .await;
    let first = &script.shown()[0]["params"];
    assert_eq!(first["password"], true);
    assert!(
        first["prompt"]
            .as_str()
            .unwrap()
            .contains("must not ask for secrets")
    );
}

#[tokio::test]
async fn secret_answers_are_masked_on_the_review_screen() {
    // One secret-named field, one `format: password` field with a harmless name, one plain one.
    let schema = json!({"type": "object", "properties": {
        "api_key": {"type": "string", "title": "API key"},
        "pin": {"type": "string", "format": "password"},
        "city": {"type": "string"}
    }});
    let (outcome, script) = run_form(
        schema,
        vec![
            json!({"value": "sk-live-hunter2"}),
            json!({"value": "4711"}),
            json!({"value": "Lisbon"}),
            json!({"selected": [0]}),
        ],
    )
    .await;
    assert!(matches!(outcome, Outcome::Accept(Some(_))), "{outcome:?}");
    let shown = script.shown();
    assert_eq!(
        shown[1]["params"]["password"], true,
        "format password hides the box"
    );
    let review = &shown[3]["params"];
    let text = review.to_string();
    assert!(
        !text.contains("sk-live-hunter2") && !text.contains("4711"),
        "{text}"
    );
    assert_eq!(review["items"][1]["description"], "••••");
    assert_eq!(review["items"][2]["description"], "••••");
    assert_eq!(review["items"][3]["description"], "Lisbon");
}

#[tokio::test]
async fn policies_and_rate_limit_answer_without_prompts() {
    let script = Script::new(vec![]);
    let limiter = RateLimiter::default();
    let defaults = json!({"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5}, "verified": {"type": "boolean", "default": true}}});
    let request = Request::Form {
        message: "m".into(),
        schema: defaults,
    };
    let out = elicit(
        &script,
        "s",
        Policy::AcceptDefaults,
        &Settings::default(),
        &limiter,
        &request,
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        Outcome::Accept(Some(
            json!({"name": "John Doe", "age": 30, "score": 95.5, "verified": true})
                .as_object()
                .unwrap()
                .clone()
        ))
    );
    let out = elicit(
        &script,
        "s",
        Policy::Decline,
        &Settings::default(),
        &limiter,
        &request,
    )
    .await
    .unwrap();
    assert_eq!(out, Outcome::Decline);
    let needs = Request::Form {
        message: "m".into(),
        schema: json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
    };
    let out = elicit(
        &script,
        "s",
        Policy::AcceptDefaults,
        &Settings::default(),
        &limiter,
        &needs,
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        Outcome::Decline,
        "a required field without a default cannot be auto-accepted"
    );
    // Past the rate limit: cancel without a prompt (the script has no answers; a prompt would panic).
    let settings = Settings {
        rate_limit: RateLimit {
            count: 0,
            per: std::time::Duration::from_secs(60),
        },
        ..Settings::default()
    };
    let out = elicit(&script, "s", Policy::Ask, &settings, &limiter, &request)
        .await
        .unwrap();
    assert_eq!(out, Outcome::Cancel);
    assert!(script.shown().is_empty());
    assert_eq!("10/min".parse::<RateLimit>().unwrap().count, 10);
    assert!("ten/min".parse::<RateLimit>().is_err());
    assert_eq!(parse_duration("30m").unwrap().as_secs(), 1800);
}

/// Found while writing the fuzz targets: `Duration::from_secs_f64` panicked on these, so an
/// `idleLimit` of "99999999999999999999h" stopped the whole configuration from applying.
#[test]
fn absurd_durations_are_capped_not_a_panic() {
    assert_eq!(
        parse_duration("99999999999999999999h").unwrap(),
        MAX_DURATION
    );
    assert_eq!(parse_duration(&"9".repeat(400)).unwrap(), MAX_DURATION);
    assert_eq!(parse_duration("1.5m").unwrap(), Duration::from_secs(90));
    assert!(parse_duration("1e9").is_err());
    assert_eq!(capped_secs(1e300), MAX_DURATION);
    assert_eq!(capped_secs(f64::INFINITY), MAX_DURATION);
    assert_eq!(capped_secs(f64::NAN), Duration::ZERO);
    assert_eq!(capped_secs(-1.0), Duration::ZERO);
    assert_eq!(capped_secs(2.5), Duration::from_millis(2500));
    assert!(
        std::time::Instant::now()
            .checked_add(MAX_DURATION)
            .is_some()
    );
}

/// A URL question from server "s" under the default settings and the `ask` policy.
async fn ask_url(script: &Script, message: &str, url: &str) -> Outcome {
    let request = Request::Url {
        message: message.into(),
        url: url.into(),
    };
    elicit(
        script,
        "s",
        Policy::Ask,
        &Settings::default(),
        &RateLimiter::default(),
        &request,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn url_mode_asks_consent_copies_and_opens_only_after_it() {
    let script = Script::new(vec![json!({"selected": [1]}), json!({"selected": [0]})]);
    let out = ask_url(&script, "Sign in", "https://xn--exmple-cua.com/login").await;
    assert_eq!(out, Outcome::Accept(None));
    assert_eq!(
        *script.clipboard.lock(),
        vec!["https://xn--exmple-cua.com/login"]
    );
    assert_eq!(
        *script.opened.lock(),
        vec!["https://xn--exmple-cua.com/login"]
    );
    let first = &script.shown()[0]["params"];
    assert!(
        first["items"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("imitate")
    );
    assert_eq!(
        first["items"][0]["description"],
        "https://xn--exmple-cua.com/login"
    );
    assert!(
        first["placeholder"]
            .as_str()
            .unwrap()
            .contains("xn--exmple-cua.com")
    );
    // Plain http only on this machine, and warned about.
    let script = Script::new(vec![json!({"selected": [0]})]);
    let out = ask_url(&script, "m", "http://localhost:3000/x").await;
    assert_eq!(out, Outcome::Accept(None));
    assert!(
        script.shown()[0]["params"]["items"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("not encrypted")
    );
    // Decline and Cancel, and nothing opened.
    let script = Script::new(vec![json!({"selected": [2]})]);
    let out = ask_url(&script, "m", "https://10.0.0.1/x").await;
    assert_eq!(out, Outcome::Decline);
    assert!(script.opened.lock().is_empty());
    assert!(
        script.shown()[0]["params"]["items"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("raw IP")
    );
}

#[tokio::test]
async fn url_mode_opens_only_https_or_this_machines_http() {
    for url in [
        "javascript:alert(1)",
        "file:///home/me/.ssh/id_ed25519",
        "vscode://vscode.git/clone?url=x",
        "http://example.com/login",
        "http://192.168.1.1/",
        "not a url",
    ] {
        let script = Script::new(vec![]);
        let out = ask_url(&script, "m", url).await;
        assert_eq!(out, Outcome::Decline, "{url}");
        assert!(script.shown().is_empty(), "{url}: nothing asked");
        assert!(script.opened.lock().is_empty(), "{url}");
        assert!(
            script.messages.lock()[0].contains("declined"),
            "{url}: {:?}",
            script.messages.lock()
        );
    }
}

#[tokio::test]
async fn a_long_url_is_shown_once_cut_and_copied_whole() {
    let long = format!("https://example.com/{}", "a".repeat(5000));
    let script = Script::new(vec![json!({"selected": [1]}), json!(null)]);
    let out = ask_url(&script, "Sign in", &long).await;
    assert_eq!(out, Outcome::Cancel);
    assert_eq!(*script.clipboard.lock(), vec![long.clone()]);
    let shown = script.shown()[0]["params"].to_string();
    assert_eq!(
        shown.matches("https://example.com/aaaa").count(),
        1,
        "the URL once: {shown}"
    );
    assert!(shown.len() < 1000, "{}", shown.len());
}

#[tokio::test]
async fn unsupported_schemas_tell_the_person_and_return_an_error() {
    let script = Script::new(vec![]);
    let request = Request::Form {
        message: "Address?".into(),
        schema: json!({"type": "object", "properties": {"addr": {"type": "object"}}}),
    };
    let e = elicit(
        &script,
        "s",
        Policy::Ask,
        &Settings::default(),
        &RateLimiter::default(),
        &request,
    )
    .await
    .unwrap_err();
    assert_eq!(e.property.as_deref(), Some("addr"));
    assert!(script.messages.lock()[0].contains("cannot show"));
}

#[test]
fn submit_validation_uses_the_original_schema_with_formats() {
    let schema = json!({"type": "object", "properties": {"e": {"type": "string", "format": "email"}}, "required": ["e"]});
    assert!(validate(&schema, json!({"e": "a@b.co"}).as_object().unwrap()).is_ok());
    assert!(validate(&schema, json!({"e": "nope"}).as_object().unwrap()).is_err());
    assert!(validate(&schema, json!({}).as_object().unwrap()).is_err());
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    fn field_schema() -> impl Strategy<Value = Value> {
        prop_oneof![
            (proptest::option::of(0u64..5), proptest::option::of(0u64..8)).prop_map(|(min, max)| {
                let mut s = json!({"type": "string"});
                if let Some(m) = min { s["minLength"] = json!(m); }
                if let Some(m) = max { s["maxLength"] = json!(m); }
                s
            }),
            (any::<bool>(), proptest::option::of(-50i32..50), proptest::option::of(-50i32..50)).prop_map(|(int, min, max)| {
                let mut s = json!({"type": if int { "integer" } else { "number" }});
                if let Some(m) = min { s["minimum"] = json!(m); }
                if let Some(m) = max { s["maximum"] = json!(m); }
                s
            }),
            Just(json!({"type": "boolean"})),
            Just(json!({"type": "string", "enum": ["a", "b", "c"]})),
            Just(json!({"type": "string", "oneOf": [{"const": "x", "title": "X"}, {"const": "y", "title": "Y"}]})),
            (proptest::option::of(0u64..3), proptest::option::of(0u64..4)).prop_map(|(min, max)| {
                let mut s = json!({"type": "array", "items": {"type": "string", "enum": ["p", "q", "r"]}});
                if let Some(m) = min { s["minItems"] = json!(m); }
                if let Some(m) = max { s["maxItems"] = json!(m); }
                s
            }),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[a-c]{0,9}".prop_map(Value::String),
            (-80i64..80).prop_map(|n| json!(n)),
            (-80.0f64..80.0).prop_map(|f| json!(f)),
            any::<bool>().prop_map(Value::Bool),
            prop::collection::vec(
                prop_oneof![Just("p"), Just("q"), Just("r"), Just("z")],
                0..5
            )
            .prop_map(|v| json!(v)),
        ]
    }

    proptest! {
        /// The step flow's per-field check agrees with JSON Schema validation of the same
        /// schema, for every kind of the subset: what a person can submit is what validates.
        #[test]
        fn field_checks_agree_with_json_schema(field in field_schema(), v in value()) {
            let schema = json!({"type": "object", "properties": {"f": field}});
            let form = Form::parse(&schema).unwrap();
            let ours = schema::check_value(&form.fields[0], &v).is_ok();
            let content = json!({"f": v}).as_object().unwrap().clone();
            let theirs = validate(&schema, &content).is_ok();
            prop_assert_eq!(ours, theirs, "schema {} value {}", schema, content["f"]);
        }

        /// Any JSON at all as a schema: parsed, or refused with a message; never a panic.
        #[test]
        fn arbitrary_schemas_never_panic(props in prop::collection::btree_map("[a-z]{1,4}", value(), 0..4)) {
            let schema = json!({"type": "object", "properties": props});
            let _ = Form::parse(&schema);
        }
    }
}

fn form_with_fields(n: usize) -> Value {
    let props: Map<String, Value> = (0..n)
        .map(|i| (format!("f{i}"), json!({"type": "boolean"})))
        .collect();
    json!({"type": "object", "properties": props})
}

#[test]
fn a_form_over_the_field_cap_is_refused_with_the_reason() {
    assert_eq!(
        Form::parse(&form_with_fields(MAX_FIELDS))
            .unwrap()
            .fields
            .len(),
        MAX_FIELDS
    );
    let e = Form::parse(&form_with_fields(MAX_FIELDS + 1)).unwrap_err();
    assert_eq!(e.property, None);
    assert_eq!(
        e.message,
        "the form has 51 fields; at most 50 are supported"
    );
}

#[test]
fn a_choice_over_the_option_cap_is_refused_naming_the_property() {
    let choice = |n: usize, key: &str| {
        let values: Vec<Value> = (0..n).map(|i| json!(format!("v{i}"))).collect();
        let list = match key {
            "enum" => json!(values),
            _ => json!(
                values
                    .iter()
                    .map(|v| json!({"const": v}))
                    .collect::<Vec<_>>()
            ),
        };
        json!({"type": "object", "properties": {"pick": {"type": "string", key: list}}})
    };
    for key in ["enum", "oneOf"] {
        let form = Form::parse(&choice(MAX_OPTIONS, key)).unwrap();
        assert!(
            matches!(&form.fields[0].kind, Kind::Choice { options } if options.len() == MAX_OPTIONS)
        );
        let e = Form::parse(&choice(MAX_OPTIONS + 1, key)).unwrap_err();
        assert_eq!(e.property.as_deref(), Some("pick"), "{key}");
        assert!(e.message.contains("501 choices; at most 500"), "{e}");
    }
    let multi = json!({"type": "object", "properties": {"many": {"type": "array",
        "items": {"anyOf": (0..=MAX_OPTIONS).map(|i| json!({"const": i.to_string()})).collect::<Vec<_>>()}}}});
    assert_eq!(
        Form::parse(&multi).unwrap_err().property.as_deref(),
        Some("many")
    );
}

#[test]
fn long_texts_are_cut_on_a_character_boundary_with_a_note() {
    let long = "é".repeat(5000);
    let name = "n".repeat(300);
    let schema = json!({"type": "object", "properties": {
        "a": {"type": "string", "title": long, "description": long},
        name.clone(): {"type": "string", "enum": ["x"], "enumNames": [long]},
    }});
    let form = Form::parse(&schema).unwrap();
    let a = &form.fields[0];
    assert_eq!(
        a.label(),
        format!("{}{CUT}", "é".repeat(MAX_TITLE - CUT.chars().count()))
    );
    assert_eq!(
        a.description.as_deref(),
        Some(format!("{}{CUT}", "é".repeat(MAX_DESCRIPTION - CUT.chars().count())).as_str())
    );
    let b = &form.fields[1];
    assert_eq!(b.name, name, "the name sent back is kept whole");
    assert_eq!(
        b.label(),
        format!("{}{CUT}", "n".repeat(MAX_TITLE - CUT.chars().count()))
    );
    let Kind::Choice { options } = &b.kind else {
        panic!("{b:?}")
    };
    assert_eq!(options[0].value, "x");
    assert_eq!(
        options[0].label,
        format!("{}{CUT}", "é".repeat(MAX_LABEL - CUT.chars().count()))
    );
}

#[tokio::test]
async fn a_long_message_is_cut_where_the_person_sees_it() {
    let script = Script::new(vec![json!(null)]);
    let request = Request::Form {
        message: "m".repeat(10_000),
        schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
    };
    let out = elicit(
        &script,
        "s",
        Policy::Ask,
        &Settings::default(),
        &RateLimiter::default(),
        &request,
    )
    .await
    .unwrap();
    assert_eq!(out, Outcome::Cancel);
    let title = script.shown()[0]["params"]["title"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        title,
        format!("s: {}{CUT}", "m".repeat(MAX_MESSAGE - CUT.chars().count()))
    );
    // And in the message about a form that cannot be shown.
    let broken = Request::Form {
        message: "m".repeat(10_000),
        schema: json!({"type": "object", "properties": {"x": {"type": "object"}}}),
    };
    let script = Script::new(vec![]);
    elicit(
        &script,
        "s",
        Policy::Ask,
        &Settings::default(),
        &RateLimiter::default(),
        &broken,
    )
    .await
    .unwrap_err();
    let shown = script.messages.lock()[0].clone();
    assert!(shown.chars().count() < MAX_MESSAGE + 200, "{}", shown.len());
}

#[tokio::test]
async fn a_flood_of_unsupported_forms_shows_at_most_the_rate_limit() {
    let settings = Settings {
        rate_limit: RateLimit {
            count: 3,
            per: std::time::Duration::from_secs(60),
        },
        ..Settings::default()
    };
    let broken = Request::Form {
        message: "Address?".into(),
        schema: json!({"type": "object", "properties": {"addr": {"type": "object"}}}),
    };
    for policy in [Policy::Ask, Policy::Decline, Policy::AcceptDefaults] {
        let (script, limiter) = (Script::new(vec![]), RateLimiter::default());
        let mut refused = 0;
        for _ in 0..200 {
            match elicit(&script, "s", policy, &settings, &limiter, &broken).await {
                Err(_) => refused += 1,
                Ok(out) => assert_eq!(out, Outcome::Cancel, "{policy:?}"),
            }
        }
        assert_eq!(script.messages.lock().len(), 3, "{policy:?}");
        // Ask stops at the limit before parsing; the others still refuse each one (unshown).
        let expected = if policy == Policy::Ask { 3 } else { 200 };
        assert_eq!(refused, expected, "{policy:?}");
    }
}

#[tokio::test]
async fn decline_and_accept_defaults_do_not_use_up_the_rate_limit() {
    let settings = Settings {
        rate_limit: RateLimit {
            count: 1,
            per: std::time::Duration::from_secs(60),
        },
        ..Settings::default()
    };
    let request = Request::Form {
        message: "m".into(),
        schema: json!({"type": "object", "properties": {"ok": {"type": "boolean", "default": true}}}),
    };
    let (script, limiter) = (Script::new(vec![json!(null)]), RateLimiter::default());
    for _ in 0..20 {
        for policy in [Policy::Decline, Policy::AcceptDefaults] {
            elicit(&script, "s", policy, &settings, &limiter, &request)
                .await
                .unwrap();
        }
    }
    assert!(script.shown().is_empty());
    // The one question the limit allows is still asked.
    elicit(&script, "s", Policy::Ask, &settings, &limiter, &request)
        .await
        .unwrap();
    assert_eq!(script.shown().len(), 1);
}
