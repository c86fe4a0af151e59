//! The form flow: one step per field in schema order (`step i of n`, Back, defaults prefilled,
//! optional fields skippable, invalid input re-asked with the typed text kept), then a review
//! (Submit / change a field / Decline / Cancel; for the person's own call, its go-ahead / change a
//! field / Cancel). Escape anywhere is "cancel"; only the explicit Decline item is "decline".

use serde_json::{Map, Value};

use super::Outcome;
use super::input::{display, parse_text};
use super::schema::{Field, Form, Kind, MAX_LABEL, check_value};
use crate::contract::shown;
use crate::contract::{
    InputBoxParams, InputBoxResult, QuickPickItem, QuickPickParams, QuickPickResult,
};
use crate::ui::{FormAnswer, FormParams, Prompter};

/// Who asks and why, shown on every prompt.
pub struct Context<'a> {
    pub server: &'a str,
    /// "<server>: <message>", or with the agent that asks through the gateway ([`crate::ui::title`]).
    pub title: String,
    /// Where a text field's suggestions come from (a prompt's `completion/complete`), if any.
    pub suggest: Option<&'a dyn Suggest>,
    pub review: Review,
}

/// Whose form the review closes, and so what its choices are.
pub enum Review {
    /// A server's question: Submit, or Decline (the server is told no), or Cancel.
    Answer,
    /// The arguments of the person's own call: the go-ahead (its label, "Call add") or Cancel;
    /// nobody is told no.
    OwnCall(String),
}

/// Suggested values for a text field, given the answers so far (by field name). Shown as a
/// quick pick with a "type a value" item; no suggestions (or a failure) means the input box.
pub trait Suggest: Sync {
    fn suggest<'a>(
        &'a self,
        field: &'a str,
        earlier: Map<String, Value>,
    ) -> futures::future::BoxFuture<'a, Vec<String>>;
}

impl Context<'_> {
    fn title(&self) -> String {
        self.title.clone()
    }
}

enum Step {
    Answer(Option<Value>),
    Back,
    Cancel,
}

const SKIP_LABEL: &str = "Skip (leave empty)";
/// The suggestion list's way to the input box (free text is always allowed).
pub const TYPE_LABEL: &str = "Type a value…";

/// Words that suggest a field asks for a secret, which servers must not do in form mode.
const SECRET_HINTS: &[&str] = &[
    "password",
    "passwd",
    "passphrase",
    "token",
    "api key",
    "api_key",
    "apikey",
    "secret",
    "card number",
    "credit card",
    "cvv",
    "cvc",
    "private key",
];

pub fn looks_secret(field: &Field) -> bool {
    if let Kind::String {
        format: Some(super::schema::Format::Password),
        ..
    } = field.kind
    {
        return true;
    }
    let text = format!(
        "{} {} {}",
        field.name,
        field.title.as_deref().unwrap_or(""),
        field.description.as_deref().unwrap_or("")
    )
    .to_lowercase()
    .replace(['-', '_'], " ");
    SECRET_HINTS
        .iter()
        .any(|h| text.contains(&h.replace('_', " ")))
}

/// Runs the whole form: the steps, then the review until Submit, Decline or Cancel.
pub async fn run(ui: &dyn Prompter, cx: &Context<'_>, form: &Form, schema: &Value) -> Outcome {
    let whole = FormParams {
        server: Some(cx.server.to_string()),
        title: cx.title(),
        schema: schema.clone(),
        values: Map::new(),
        submit: match &cx.review {
            Review::Answer => "Submit".into(),
            Review::OwnCall(go) => go.clone(),
        },
        decline: matches!(cx.review, Review::Answer),
    };
    if let Some(answer) = ui.form(whole) {
        return match answer.await {
            FormAnswer::Submit(content) => Outcome::Accept(Some(content)),
            FormAnswer::Decline => Outcome::Decline,
            FormAnswer::Cancel => Outcome::Cancel,
        };
    }
    let n = form.fields.len();
    let mut answers: Vec<Option<Value>> = vec![None; n];
    let mut i = 0;
    while i < n {
        match ask(ui, cx, form, i, &answers, true).await {
            Step::Answer(v) => {
                answers[i] = v;
                i += 1;
            }
            Step::Back => i = i.saturating_sub(1),
            Step::Cancel => return Outcome::Cancel,
        }
    }
    let mut problem: Option<String> = None;
    loop {
        let content: Map<String, Value> = form
            .fields
            .iter()
            .zip(&answers)
            .filter_map(|(f, a)| a.clone().map(|v| (f.name.clone(), v)))
            .collect();
        let mut items = vec![match &cx.review {
            Review::Answer => QuickPickItem::new("Submit").with_description("send these answers"),
            Review::OwnCall(go) => QuickPickItem::new(go).with_description("with these arguments"),
        }];
        for (field, answer) in form.fields.iter().zip(&answers) {
            items.push(
                QuickPickItem::new(format!("Change {}", field.label())).with_description(
                    match answer {
                        None => "(empty)".into(),
                        // A secret never shows on the review screen.
                        Some(_) if looks_secret(field) => "••••".into(),
                        Some(v) => shown::line(&shown_value(field, v), MAX_LABEL).into_owned(),
                    },
                ),
            );
        }
        let decline = matches!(cx.review, Review::Answer);
        if decline {
            items.push(
                QuickPickItem::new("Decline").with_description(format!("tell {} no", cx.server)),
            );
        }
        items.push(
            QuickPickItem::new("Cancel").with_description(match cx.review {
                Review::Answer => "dismiss without answering",
                Review::OwnCall(_) => "do not make the call",
            }),
        );
        let picked = ui
            .quick_pick(QuickPickParams {
                server: Some(cx.server.to_string()),
                title: cx.title(),
                placeholder: Some(
                    problem
                        .take()
                        .unwrap_or_else(|| "Review your answers".into()),
                ),
                items,
                ..Default::default()
            })
            .await;
        match picked.as_ref().and_then(QuickPickResult::first) {
            Some(0) => match validate(schema, &content) {
                Ok(()) => return Outcome::Accept(Some(content)),
                Err(e) => problem = Some(e),
            },
            Some(k) if k <= n => {
                if let Step::Answer(v) = ask(ui, cx, form, k - 1, &answers, false).await {
                    answers[k - 1] = v;
                }
            }
            Some(k) if decline && k == n + 1 => return Outcome::Decline,
            _ => return Outcome::Cancel,
        }
    }
}

/// An answer as the person saw it picked: a choice's title (`oneOf` title, `enumNames`), not
/// its value.
fn shown_value(field: &Field, value: &Value) -> String {
    let options = match &field.kind {
        Kind::Choice { options } | Kind::MultiChoice { options, .. } => options,
        _ => return display(value),
    };
    let title = |v: &Value| {
        options
            .iter()
            .find(|o| v.as_str() == Some(o.value.as_str()))
            .map_or_else(|| display(v), |o| o.label.clone())
    };
    match value {
        Value::Array(items) => items.iter().map(title).collect::<Vec<_>>().join(", "),
        one => title(one),
    }
}

/// Validates the content against the server's original schema (formats asserted).
pub fn validate(schema: &Value, content: &Map<String, Value>) -> Result<(), String> {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .map_err(|e| format!("the server's schema is not valid JSON Schema: {e}"))?;
    let instance = Value::Object(content.clone());
    let errors: Vec<String> = validator
        .iter_errors(&instance)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

/// Asks one field. `flow` is true during the first pass (Back goes to the previous field).
async fn ask(
    ui: &dyn Prompter,
    cx: &Context<'_>,
    form: &Form,
    i: usize,
    answers: &[Option<Value>],
    flow: bool,
) -> Step {
    let current = &answers[i];
    let field = &form.fields[i];
    let n = form.fields.len() as u32;
    let step = Some(i as u32 + 1);
    let can_go_back = flow && i > 0;
    let secret = looks_secret(field);
    let mut prompt = field.label().to_string();
    if let Some(d) = &field.description {
        prompt.push_str(&format!(" — {d}"));
    }
    if !field.required {
        prompt.push_str(" (optional)");
    }
    if secret {
        prompt = format!(
            "⚠ {} asks for what looks like a secret. Servers must not ask for secrets this way. {prompt}",
            cx.server
        );
    }
    let prefill = current.as_ref().or(field.default.as_ref());
    match &field.kind {
        Kind::String { .. } | Kind::Number { .. } => {
            let mut value = prefill.map(text_of);
            if let (Some(suggest), Kind::String { .. }, false) = (cx.suggest, &field.kind, secret) {
                let earlier = form
                    .fields
                    .iter()
                    .zip(answers)
                    .filter_map(|(f, a)| a.clone().map(|v| (f.name.clone(), v)))
                    .filter(|(name, _)| *name != field.name)
                    .collect();
                let values = suggest.suggest(&field.name, earlier).await;
                if !values.is_empty() {
                    let steps = (step, n, can_go_back);
                    let picked = pick_suggestion(ui, cx, field, &prompt, &values, prefill, steps);
                    if let Some(step) = picked.await {
                        return step;
                    }
                }
            }
            let mut validation_message = None;
            loop {
                let answer = ui
                    .input_box(InputBoxParams {
                        server: Some(cx.server.to_string()),
                        title: cx.title(),
                        prompt: Some(prompt.clone()),
                        placeholder: placeholder(field),
                        value: value.clone(),
                        password: secret,
                        validation_message: validation_message.take(),
                        step,
                        total_steps: Some(n),
                        can_go_back,
                        can_skip: !field.required,
                        ..Default::default()
                    })
                    .await;
                match answer {
                    Some(InputBoxResult::Value { value: typed }) => {
                        if typed.is_empty() && !field.required {
                            return Step::Answer(None);
                        }
                        match parse_text(field, &typed) {
                            Ok(v) => return Step::Answer(Some(v)),
                            Err(e) => {
                                // Editors may hide the prompt while a message shows: name the field.
                                validation_message = Some(format!("{}: {e}", field.label()));
                                value = Some(typed);
                            }
                        }
                    }
                    Some(InputBoxResult::Back { .. }) if can_go_back => return Step::Back,
                    Some(InputBoxResult::Skip { .. }) if !field.required => {
                        return Step::Answer(None);
                    }
                    Some(_) => {}
                    None => return Step::Cancel,
                }
            }
        }
        Kind::Boolean | Kind::Choice { .. } => {
            let (labels, values): (Vec<QuickPickItem>, Vec<Value>) = match &field.kind {
                Kind::Boolean => (
                    vec![QuickPickItem::new("Yes"), QuickPickItem::new("No")],
                    vec![Value::Bool(true), Value::Bool(false)],
                ),
                Kind::Choice { options } => options
                    .iter()
                    .map(|o| {
                        let item = QuickPickItem::new(&o.label);
                        let item = if o.label != o.value {
                            item.with_description(shown::line(&o.value, MAX_LABEL))
                        } else {
                            item
                        };
                        (item, Value::String(o.value.clone()))
                    })
                    .unzip(),
                _ => unreachable!(),
            };
            let items: Vec<QuickPickItem> = labels
                .into_iter()
                .zip(&values)
                .map(|(mut item, v)| {
                    item.picked = prefill == Some(v);
                    item
                })
                .collect();
            let picked = pick_step(ui, cx, field, prompt, items, (step, n, can_go_back)).await;
            match picked {
                Some(QuickPickResult::Selected { selected }) => match selected.first() {
                    Some(&k) if k < values.len() => Step::Answer(Some(values[k].clone())),
                    Some(_) if !field.required => Step::Answer(None),
                    _ => Step::Cancel,
                },
                Some(QuickPickResult::Back { .. }) if can_go_back => Step::Back,
                _ => Step::Cancel,
            }
        }
        Kind::MultiChoice { options, .. } => {
            let chosen: Vec<&str> = prefill
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut problem: Option<String> = None;
            loop {
                let items = options
                    .iter()
                    .map(|o| {
                        let mut item = QuickPickItem::new(&o.label);
                        if o.label != o.value {
                            item = item.with_description(shown::line(&o.value, MAX_LABEL));
                        }
                        item.picked = chosen.contains(&o.value.as_str());
                        item
                    })
                    .collect();
                let picked = ui
                    .quick_pick(QuickPickParams {
                        server: Some(cx.server.to_string()),
                        title: cx.title(),
                        placeholder: Some(match problem.take() {
                            Some(p) => format!("{p} — {prompt}"),
                            None => prompt.clone(),
                        }),
                        items,
                        can_pick_many: true,
                        step,
                        total_steps: Some(n),
                        can_go_back,
                        can_skip: !field.required,
                        ..Default::default()
                    })
                    .await;
                match picked {
                    Some(QuickPickResult::Selected { selected }) => {
                        let value = Value::Array(
                            selected
                                .iter()
                                .filter_map(|&k| options.get(k))
                                .map(|o| Value::String(o.value.clone()))
                                .collect(),
                        );
                        if selected.is_empty() && !field.required {
                            return Step::Answer(None);
                        }
                        match check_value(field, &value) {
                            Ok(()) => return Step::Answer(Some(value)),
                            Err(e) => problem = Some(e),
                        }
                    }
                    Some(QuickPickResult::Back { .. }) if can_go_back => return Step::Back,
                    Some(QuickPickResult::Skip { .. }) if !field.required => {
                        return Step::Answer(None);
                    }
                    _ => return Step::Cancel,
                }
            }
        }
    }
}

/// One field's single-choice quick pick, with Skip last for an optional field.
async fn pick_step(
    ui: &dyn Prompter,
    cx: &Context<'_>,
    field: &Field,
    placeholder: String,
    mut items: Vec<QuickPickItem>,
    (step, n, can_go_back): (Option<u32>, u32, bool),
) -> Option<QuickPickResult> {
    if !field.required {
        items.push(QuickPickItem::new(SKIP_LABEL));
    }
    ui.quick_pick(QuickPickParams {
        server: Some(cx.server.to_string()),
        title: cx.title(),
        placeholder: Some(placeholder),
        items,
        step,
        total_steps: Some(n),
        can_go_back,
        ..Default::default()
    })
    .await
}

/// The suggestions as a quick pick: a value (`Some(Answer)`), "type a value" (`None`: the input
/// box follows), Skip, Back, or dismissed.
async fn pick_suggestion(
    ui: &dyn Prompter,
    cx: &Context<'_>,
    field: &Field,
    prompt: &str,
    values: &[String],
    prefill: Option<&Value>,
    (step, n, can_go_back): (Option<u32>, u32, bool),
) -> Option<Step> {
    let values = &values[..values.len().min(super::schema::MAX_OPTIONS)];
    let mut items: Vec<QuickPickItem> = values
        .iter()
        .map(|v| {
            let mut item = QuickPickItem::new(shown::line(v, MAX_LABEL));
            item.picked = prefill.and_then(Value::as_str) == Some(v.as_str());
            item
        })
        .collect();
    items.push(QuickPickItem::new(TYPE_LABEL).with_description("not one of these"));
    let steps = (step, n, can_go_back);
    match pick_step(ui, cx, field, prompt.to_string(), items, steps).await {
        Some(QuickPickResult::Selected { selected }) => match selected.first() {
            Some(&k) if k < values.len() => match parse_text(field, &values[k]) {
                Ok(v) => Some(Step::Answer(Some(v))),
                // A suggestion the field's own rules refuse: the person types instead.
                Err(_) => None,
            },
            Some(&k) if k == values.len() => None,
            Some(_) if !field.required => Some(Step::Answer(None)),
            _ => Some(Step::Cancel),
        },
        Some(QuickPickResult::Back { .. }) if can_go_back => Some(Step::Back),
        _ => Some(Step::Cancel),
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn placeholder(field: &Field) -> Option<String> {
    use super::schema::Format;
    match &field.kind {
        Kind::String {
            format: Some(Format::Email),
            ..
        } => Some("name@example.com".into()),
        Kind::String {
            format: Some(Format::Uri),
            ..
        } => Some("https://".into()),
        Kind::String {
            format: Some(Format::Date),
            ..
        } => Some("YYYY-MM-DD".into()),
        Kind::String {
            format: Some(Format::DateTime),
            ..
        } => Some("YYYY-MM-DDTHH:MM:SSZ".into()),
        Kind::Number {
            integer: true,
            minimum,
            maximum,
        } => Some(range("a whole number", *minimum, *maximum)),
        Kind::Number {
            integer: false,
            minimum,
            maximum,
        } => Some(range("a number", *minimum, *maximum)),
        _ => None,
    }
}

fn range(what: &str, min: Option<f64>, max: Option<f64>) -> String {
    match (min, max) {
        (Some(a), Some(b)) => format!("{what} from {a} to {b}"),
        (Some(a), None) => format!("{what}, at least {a}"),
        (None, Some(b)) => format!("{what}, at most {b}"),
        (None, None) => what.to_string(),
    }
}
