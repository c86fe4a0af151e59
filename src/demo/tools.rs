//! The demo tools: their definitions (`tools/list`) and what each does when called.
//!
//! | tool | asks the client | result |
//! |---|---|---|
//! | `book_trip` | form elicitation (every restricted-schema kind) | `{action, content?}` |
//! | `login` | URL elicitation | `{action, url}` |
//! | `analyze_flights` | sampling | `{model, stopReason, text}` |
//! | `list_roots` | roots | `{roots, listChangedCount}` |
//! | `count_down` | nothing; reports progress and logs each step | `{steps}` |
//! | `slow_task` (`task.rs`; a task when the client declared the Tasks extension) | form elicitation halfway | `{steps, action, keep?}` |
//! | `add`, `echo` | nothing | `{sum}` / the text |
//! | `clock` (a view: `ui://demo/clock.html`), `clock_tick` (its view's only) | nothing | `{time}` |

// Sampling and roots are deprecated (SEP-2577) but still part of the protocol this demo exercises.
#![allow(deprecated)]

use rmcp::{
    ErrorData,
    model::{
        CallToolResult, ContentBlock, ElicitRequest, ElicitRequestParams, ElicitationSchema,
        InputRequest, ListRootsRequest, LoggingLevel, Tool,
    },
    object,
};
use serde::Deserialize;
use serde_json::{Map, Number, Value, json};

use super::ask::{Call, Stop};

/// Every tool this server lists.
pub(super) fn list() -> Vec<Tool> {
    vec![
        tool(
            "book_trip",
            "Book a trip",
            "Books a trip once you confirm your details in a form the editor shows, one \
             question at a time: text, email, numbers, yes/no, one choice and several.",
            object!({"type": "object", "properties": {
                "destination": {"type": "string", "description": "Where to travel, e.g. Lisbon"}
            }}),
        ),
        tool(
            "login",
            "Sign in",
            "Signs in to Example Travel: the editor asks before it opens the sign-in page in \
             your browser.",
            object!({"type": "object", "properties": {}}),
        ),
        tool(
            "analyze_flights",
            "Analyze flights",
            "Picks the best-value flight of ten with a model's help: you read and may edit the \
             question before it goes to the model, and the answer before it comes back.",
            object!({"type": "object", "properties": {}}),
        ),
        tool(
            "list_roots",
            "Report roots",
            "Shows the folders the editor shares with this server, and how many times that \
             list changed.",
            object!({"type": "object", "properties": {}}),
        ),
        tool(
            "count_down",
            "Count down",
            "Counts down from steps to zero, pausing between steps; the editor shows how far it \
             got and a log line for each step.",
            object!({"type": "object", "properties": {
                "steps": {"type": "integer", "minimum": 1, "maximum": 100, "default": 3,
                          "description": "How many steps"},
                "delayMs": {"type": "integer", "minimum": 0, "maximum": 10000, "default": 300,
                            "description": "Pause after each step, in milliseconds"}
            }}),
        ),
        tool(
            super::task::NAME,
            "Slow task",
            "Works through its steps in the background, asks halfway whether to keep the \
             details, then reports; the editor shows which step it is on and can stop it.",
            object!({"type": "object", "properties": {
                "steps": {"type": "integer", "minimum": 1, "maximum": 100, "default": 4,
                          "description": "How many steps"},
                "stepMs": {"type": "integer", "minimum": 0, "maximum": 10000, "default": 500,
                           "description": "How long each step takes, in milliseconds"},
                "forever": {"type": "boolean", "default": false,
                            "description": "Never finish (and never ask): runs until stopped"}
            }}),
        ),
        tool(
            "add",
            "Add two numbers",
            "Adds a and b.",
            object!({"type": "object", "properties": {
                "a": {"type": "number", "description": "First addend"},
                "b": {"type": "number", "description": "Second addend"}
            }, "required": ["a", "b"]}),
        ),
        tool(
            "echo",
            "Echo",
            "Sends your text back unchanged.",
            object!({"type": "object", "properties": {
                "text": {"type": "string", "description": "Text to send back"}
            }, "required": ["text"]}),
        ),
        tool(
            "clock",
            "Clock",
            "Shows the time on a small page of its own, with a button that asks again.",
            object!({"type": "object", "properties": {}}),
        )
        .with_meta(rmcp::model::MetaObject(
            object!({"ui": {"resourceUri": CLOCK_VIEW}}),
        )),
        tool(
            "clock_tick",
            "Clock tick",
            "The time, for the clock's view only.",
            object!({"type": "object", "properties": {}}),
        )
        .with_meta(rmcp::model::MetaObject(
            object!({"ui": {"resourceUri": CLOCK_VIEW, "visibility": ["app"]}}),
        )),
    ]
}

/// The clock's view (MCP Apps).
pub(super) const CLOCK_VIEW: &str = "ui://demo/clock.html";
pub(super) const CLOCK_HTML: &str = include_str!("assets/clock.html");

/// The time of day (UTC) as the clock shows it, and whether the client said it shows views
/// (`view`: the MCP Apps extension with the app's MIME type, in `initialize` or the request's
/// `_meta`).
fn clock(call: &Call<'_>) -> CallToolResult {
    let view = call.client_capabilities()["extensions"][crate::apps::EXTENSION]["mimeTypes"]
        .as_array()
        .is_some_and(|m| m.iter().any(|t| t == crate::apps::MIME_TYPE));
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (h, m, s) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
    let time = format!("{h:02}:{m:02}:{s:02} UTC");
    done(
        format!("It is {time}."),
        json!({"time": time, "view": view}),
    )
}

/// Runs the tool `call` names.
pub(super) async fn run(call: &Call<'_>, roots_list_changed: u64) -> Result<CallToolResult, Stop> {
    match call.tool() {
        "book_trip" => book_trip(call).await,
        "login" => login(call).await,
        "analyze_flights" => analyze_flights(call).await,
        "list_roots" => list_roots(call, roots_list_changed).await,
        "count_down" => count_down(call).await,
        "add" => add(call),
        "echo" => echo(call),
        "clock" | "clock_tick" => Ok(clock(call)),
        other => Err(ErrorData::invalid_params(format!("unknown tool {other:?}"), None).into()),
    }
}

fn tool(
    name: &'static str,
    title: &str,
    description: &'static str,
    input_schema: Map<String, Value>,
) -> Tool {
    Tool::new(name, description, input_schema).with_title(title)
}

/// A text result with structured content.
fn done(text: impl Into<String>, structured: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(structured);
    result
}

// ---------------------------------------------------------------------------------------------
// book_trip: form-mode elicitation

/// The property order is the order the form is shown in. rmcp keeps the order it parses
/// (`property_order`), and so would `json!` here (the crate enables serde_json's
/// `preserve_order`); written as text so it reads as the JSON a server sends.
const TRIP_FORM: &str = r#"{
  "type": "object",
  "properties": {
    "name": {"type": "string", "title": "Full name", "description": "As printed on the passport", "minLength": 1},
    "email": {"type": "string", "title": "Email", "format": "email"},
    "travelers": {"type": "integer", "title": "Travelers", "minimum": 1, "maximum": 9, "default": 1},
    "budget": {"type": "number", "title": "Budget (EUR)", "minimum": 0, "default": 1500.5},
    "window_seat": {"type": "boolean", "title": "Window seat", "default": true},
    "cabin": {"type": "string", "title": "Cabin", "oneOf": [
      {"const": "economy", "title": "Economy"},
      {"const": "premium", "title": "Premium economy"},
      {"const": "business", "title": "Business"}
    ], "default": "economy"},
    "meal": {"type": "string", "title": "Meal", "enum": ["standard", "vegetarian", "vegan"], "default": "standard"},
    "insurance": {"type": "string", "title": "Insurance", "enum": ["none", "basic", "full"],
      "enumNames": ["No insurance", "Basic cover", "Full cover"], "default": "none"},
    "extras": {"type": "array", "title": "Extras", "items": {"type": "string", "enum": ["lounge", "wifi", "extra_bag"]},
      "maxItems": 2, "default": []},
    "departure": {"type": "string", "title": "Departure date", "format": "date"}
  },
  "required": ["name", "email"]
}"#;

fn trip_form() -> ElicitationSchema {
    serde_json::from_str(TRIP_FORM).expect("TRIP_FORM is a valid elicitation schema")
}

#[derive(Deserialize)]
struct TripArgs {
    destination: Option<String>,
}

async fn book_trip(call: &Call<'_>) -> Result<CallToolResult, Stop> {
    let TripArgs { destination } = call.arguments()?;
    let destination = destination.unwrap_or_else(|| "Lisbon".to_owned());
    let request = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("Confirm your trip to {destination}"),
        requested_schema: trip_form(),
    };
    let answer = call.ask("trip", elicit(request)).await?;
    Ok(match Action::of(&answer)? {
        Action::Accept => {
            let content = answer.get("content").cloned().unwrap_or(Value::Null);
            let text = booking_summary(&destination, &content);
            done(text, json!({"action": "accept", "content": content}))
        }
        Action::Decline => done("Booking declined", json!({"action": "decline"})),
        Action::Cancel => done("Booking cancelled", json!({"action": "cancel"})),
    })
}

fn booking_summary(destination: &str, content: &Value) -> String {
    let field = |key: &str| match content.get(key) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "?".to_owned(),
    };
    format!(
        "Booked: {} <{}>, {} traveler(s) to {destination}, {} cabin",
        field("name"),
        field("email"),
        field("travelers"),
        field("cabin"),
    )
}

// ---------------------------------------------------------------------------------------------
// login: URL-mode elicitation

async fn login(call: &Call<'_>) -> Result<CallToolResult, Stop> {
    let url = format!("https://example.com/login?session={}", call.nonce());
    let request = ElicitRequestParams::UrlElicitationParams {
        meta: None,
        message: "Sign in to Example Travel".to_owned(),
        url: url.clone(),
        elicitation_id: format!("login-{}", call.nonce()),
    };
    let answer = call.ask("login", elicit(request)).await?;
    let action = Action::of(&answer)?;
    let text = match action {
        Action::Accept => format!("Sign-in started in the browser: {url}"),
        Action::Decline => "Sign-in declined".to_owned(),
        Action::Cancel => "Sign-in cancelled".to_owned(),
    };
    Ok(done(text, json!({"action": action.as_str(), "url": url})))
}

fn elicit(params: ElicitRequestParams) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(params))
}

/// An `ElicitResult`'s `action`.
#[derive(Clone, Copy, Debug)]
enum Action {
    Accept,
    Decline,
    Cancel,
}

impl Action {
    fn of(answer: &Value) -> Result<Self, Stop> {
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => Ok(Action::Accept),
            Some("decline") => Ok(Action::Decline),
            Some("cancel") => Ok(Action::Cancel),
            _ => Err(Stop::ToolError(format!(
                "the client's elicitation answer has no valid action: {answer}"
            ))),
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Action::Accept => "accept",
            Action::Decline => "decline",
            Action::Cancel => "cancel",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// analyze_flights: sampling

const FLIGHTS: [&str; 10] = [
    "EX101 Lisbon → New York JFK, nonstop, 7h40, €612",
    "EX214 Lisbon → New York JFK, 1 stop (Madrid), 10h55, €438",
    "EX330 Lisbon → Newark, nonstop, 8h05, €575",
    "EX402 Lisbon → New York JFK, 1 stop (Paris), 11h20, €455",
    "EX517 Lisbon → Boston, nonstop, 7h10, €389",
    "EX623 Lisbon → New York JFK, 2 stops (London, Dublin), 15h30, €351",
    "EX708 Lisbon → Newark, 1 stop (Frankfurt), 12h15, €498",
    "EX811 Lisbon → New York JFK, nonstop, 7h35, €699 (includes checked bag)",
    "EX905 Lisbon → Philadelphia, nonstop, 8h20, €402",
    "EX999 Lisbon → New York JFK, 1 stop (Ponta Delgada), 9h50, €417",
];

fn flights_prompt() -> String {
    let list: Vec<String> = FLIGHTS
        .iter()
        .enumerate()
        .map(|(index, flight)| format!("{}. {flight}", index + 1))
        .collect();
    format!(
        "Which of these flights is the best value? Answer with the flight number and one \
         sentence of reasoning.\n\n{}",
        list.join("\n")
    )
}

/// The sampling request, as JSON: rmcp's typed params would send `temperature` and the
/// priorities widened from `f32` (see [`super::ask::Exact`]).
fn flights_request() -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": flights_prompt()}}],
        "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8},
        "systemPrompt": "You are a concise travel assistant. Prices are per person.",
        "includeContext": "none",
        "temperature": 0.2,
        "maxTokens": 400
    })
}

async fn analyze_flights(call: &Call<'_>) -> Result<CallToolResult, Stop> {
    let request = super::ask::exact_sampling(flights_request())?;
    let answer = call.ask("flights", request).await?;
    let text = sampled_text(&answer).ok_or_else(|| {
        Stop::ToolError(format!(
            "the client's sampling answer has no text: {answer}"
        ))
    })?;
    let structured = json!({
        "model": answer.get("model").cloned().unwrap_or(Value::Null),
        "stopReason": answer.get("stopReason").cloned().unwrap_or(Value::Null),
        "text": text,
    });
    Ok(done(text, structured))
}

/// The text blocks of a `CreateMessageResult` (`content` is one block or an array), joined.
fn sampled_text(answer: &Value) -> Option<String> {
    let blocks = match answer.get("content")? {
        Value::Array(blocks) => blocks.iter().collect(),
        block => vec![block],
    };
    let texts: Vec<&str> = blocks
        .into_iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|block| block.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join("\n"))
}

// ---------------------------------------------------------------------------------------------
// list_roots: roots

async fn list_roots(call: &Call<'_>, roots_list_changed: u64) -> Result<CallToolResult, Stop> {
    let request = InputRequest::ListRoots(ListRootsRequest::default());
    let answer = call.ask("roots", request).await?;
    let roots: Vec<Value> = answer
        .get("roots")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            Stop::ToolError(format!("the client's roots answer has no roots: {answer}"))
        })?
        .iter()
        .map(|root| {
            let mut entry = json!({"uri": root.get("uri").cloned().unwrap_or(Value::Null)});
            if let Some(name) = root.get("name") {
                entry["name"] = name.clone();
            }
            entry
        })
        .collect();
    let structured = json!({"roots": roots, "listChangedCount": roots_list_changed});
    let text = serde_json::to_string_pretty(&structured).unwrap_or_default();
    Ok(done(text, structured))
}

// ---------------------------------------------------------------------------------------------
// add, echo: no client features

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CountDownArgs {
    #[serde(default = "default_steps")]
    steps: u32,
    #[serde(default = "default_delay_ms")]
    delay_ms: u64,
}

fn default_steps() -> u32 {
    3
}

fn default_delay_ms() -> u64 {
    300
}

async fn count_down(call: &Call<'_>) -> Result<CallToolResult, Stop> {
    let CountDownArgs { steps, delay_ms } = call.arguments()?;
    if !(1..=100).contains(&steps) || delay_ms > 10_000 {
        return Err(Stop::ToolError(
            "steps must be 1..=100 and delayMs at most 10000".into(),
        ));
    }
    for step in 1..=steps {
        let left = steps - step;
        call.log(LoggingLevel::Info, format!("count_down: {left} left"))
            .await;
        let total = Some(f64::from(steps));
        call.progress(f64::from(step), total, format!("{left} left"))
            .await;
        tokio::time::sleep(std::time::Duration::from_millis(delay_ms)).await;
    }
    Ok(done(
        format!("Counted down {steps} steps."),
        json!({"steps": steps}),
    ))
}

#[derive(Deserialize)]
struct AddArgs {
    a: Number,
    b: Number,
}

fn add(call: &Call<'_>) -> Result<CallToolResult, Stop> {
    let AddArgs { a, b } = call.arguments()?;
    let sum = sum(&a, &b).ok_or_else(|| Stop::ToolError(format!("{a} + {b} is not finite")))?;
    Ok(done(format!("{a} + {b} = {sum}"), json!({"sum": sum})))
}

/// Integer when both addends are integers (and it fits), otherwise floating point.
fn sum(a: &Number, b: &Number) -> Option<Number> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64())
        && let Some(total) = x.checked_add(y)
    {
        return Some(total.into());
    }
    Number::from_f64(a.as_f64()? + b.as_f64()?)
}

#[derive(Deserialize)]
struct EchoArgs {
    text: String,
}

fn echo(call: &Call<'_>) -> Result<CallToolResult, Stop> {
    let EchoArgs { text } = call.arguments()?;
    Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
}
