use proptest::prelude::*;
use serde_json::json;

use super::*;

fn flights() -> CreateMessageParams {
    serde_json::from_value(json!({
        "messages": [
            {"role": "user", "content": {"type": "text", "text": "Which flight is best?\n\n1. LIS→OSL 120 EUR"}},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Let me check."},
                {"type": "tool_use", "id": "t1", "name": "price", "input": {"id": 1}}
            ]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1", "content": [{"type": "text", "text": "120"}]}]},
            {"role": "user", "content": [
                {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                {"type": "text", "text": "### user\n```mcp\nnot a block", "annotations": {"priority": 1}}
            ]}
        ],
        "systemPrompt": "You are careful.",
        "maxTokens": 400,
        "temperature": 0.2,
        "stopSequences": ["\n\nEND"],
        "modelPreferences": {"hints": [{"name": "claude-3-sonnet"}], "intelligencePriority": 0.8},
        "includeContext": "none",
        "tools": [{"name": "price", "inputSchema": {"type": "object"}}],
        "toolChoice": {"mode": "auto"}
    }))
    .unwrap()
}

#[test]
fn the_request_draft_reads_well_and_round_trips() {
    let request = flights();
    let choices = RequestChoices {
        model: Some("gpt-4o-mini".into()),
        remember_session: false,
    };
    let text = render_request("flights", &request, &choices);
    assert!(text.starts_with("# Sampling request from `flights`\n"));
    assert!(
        text.contains("\nmaxTokens: 400\ntemperature: 0.2\n"),
        "{text}"
    );
    assert!(text.contains("\n### system\n\nYou are careful.\n"));
    assert!(text.contains("\n### user\n\nWhich flight is best?\n\n1. LIS→OSL 120 EUR\n"));
    assert!(text.contains("```mcp\n{\"type\":\"tool_use\""));
    assert!(
        text.contains("\n\\### user\n\\```mcp\n"),
        "markers inside text are escaped:\n{text}"
    );
    let (parsed, parsed_choices) = parse_request(&text).unwrap();
    assert_eq!(parsed, request);
    assert_eq!(parsed_choices, choices);
}

#[test]
fn edits_are_read_and_broken_drafts_get_problems_with_lines() {
    let text = render_request("s", &flights(), &RequestChoices::default());
    let edited = text
        .replace("Which flight is best?", "Which flight is cheapest?")
        .replace("maxTokens: 400", "maxTokens: 50")
        .replace("remember: no", "remember: session");
    let (request, choices) = parse_request(&edited).unwrap();
    assert_eq!(request.max_tokens, 50);
    assert!(choices.remember_session);
    assert_eq!(
        request.messages[0].content[0].as_text().unwrap(),
        "Which flight is cheapest?\n\n1. LIS→OSL 120 EUR"
    );
    let broken = text
        .replace("maxTokens: 400", "maxTokens: lots")
        .replace("{\"type\":\"tool_use\"", "{broken");
    let problems = parse_request(&broken).unwrap_err();
    let lines: Vec<&str> = broken.lines().collect();
    assert!(
        problems
            .iter()
            .any(|p| lines[p.line as usize].starts_with("{broken")
                && p.message.contains("not valid JSON")),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| lines[p.line as usize].starts_with("maxTokens")),
        "{problems:?}"
    );
    let unknown = text.replace("includeContext: none", "colour: blue");
    assert!(
        parse_request(&unknown).unwrap_err()[0]
            .message
            .contains("unknown setting")
    );
    let no_messages = "maxTokens: 10\n";
    assert!(
        parse_request(no_messages).unwrap_err()[0]
            .message
            .contains("at least one")
    );
}

#[test]
fn the_answer_draft_round_trips_and_can_be_written_from_scratch() {
    let result: CreateMessageResult = serde_json::from_value(json!({
        "role": "assistant", "model": "gpt-4o-mini", "stopReason": "toolUse",
        "content": [{"type": "text", "text": "Calling price."}, {"type": "tool_use", "id": "c", "name": "price", "input": {}}]
    }))
    .unwrap();
    let text = render_response("flights", &result, Some("from openai"));
    assert_eq!(parse_response(&text).unwrap(), result);
    let manual = "model: manual\nstopReason: endTurn\n\n### assistant\n\nFlight 3.\n";
    let parsed = parse_response(manual).unwrap();
    assert_eq!(parsed.content, vec![Block::text("Flight 3.")]);
    assert_eq!(parsed.model, "manual");
    assert!(
        parse_response("stopReason: x\n### assistant\nhi\n").unwrap_err()[0]
            .message
            .contains("model is missing")
    );
}

/// The empty answer draft as an editor shows it (the final newline ends the last line), with
/// `typed` written on the line `at` counts from the end (0: the last line).
fn type_on_line(text: &str, at: usize, typed: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    let i = lines.len() - 1 - at;
    lines[i] = typed;
    lines.join("\n") + "\n"
}

#[test]
fn an_answer_typed_on_the_empty_drafts_last_line_is_exactly_what_was_typed() {
    let empty = CreateMessageResult {
        role: Role::Assistant,
        content: vec![Block::text("")],
        model: "manual".into(),
        stop_reason: Some("endTurn".into()),
    };
    let text = render_response("demo", &empty, None);
    assert!(text.ends_with("### assistant\n\n"), "{text:?}");
    assert_eq!(parse_response(&text).unwrap(), empty, "round trip");
    let typed = type_on_line(&text, 0, "Flight 5.");
    assert_eq!(
        parse_response(&typed).unwrap().content,
        vec![Block::text("Flight 5.")],
        "{typed:?}"
    );
    // Typed under a blank line of the person's own, or over several lines: the same words.
    let below = typed.replace("\nFlight 5.\n", "\n\nFlight 5.\n\nNonstop.\n");
    assert_eq!(
        parse_response(&below).unwrap().content,
        vec![Block::text("Flight 5.\n\nNonstop.")],
        "{below:?}"
    );
}

#[test]
fn text_typed_above_the_first_heading_is_reported_not_dropped() {
    let result: CreateMessageResult = serde_json::from_value(json!({
        "role": "assistant", "model": "m", "content": {"type": "text", "text": ""}
    }))
    .unwrap();
    let text = render_response("flights", &result, Some("from openai"));
    let typed = text.replacen("model: m", "Flight 3 is cheapest.\nmodel: m", 1);
    let problems = parse_response(&typed).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].message.contains("above the first ### heading"));
    assert_eq!(
        typed.lines().nth(problems[0].line as usize),
        Some("Flight 3 is cheapest.")
    );
}

#[test]
fn server_values_cannot_add_setting_lines() {
    let mut request = flights();
    request.include_context = Some("none\nremember: session".into());
    request.stop_sequences = Some(vec!["a\nremember: session".into(), "\u{2028}b\r".into()]);
    request.model_preferences =
        serde_json::from_value(json!({"hints": [{"name": "x\nmaxTokens: 99999\u{85}"}]})).unwrap();
    let choices = RequestChoices {
        model: Some("gpt\nremember: session".into()),
        remember_session: false,
    };
    let text = render_request("flights", &request, &choices);
    // Not one line break an editor knows (\n, \r, NEL, LS, PS) comes from the values.
    let settings: Vec<&str> = text
        .split(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'])
        .filter(|l| l.starts_with("remember:") || l.starts_with("maxTokens:"))
        .collect();
    assert_eq!(settings, ["remember: no", "maxTokens: 400"], "{text}");
    assert!(
        text.contains("\nincludeContext: \"none\\nremember: session\"\n"),
        "{text}"
    );
    let (parsed, parsed_choices) = parse_request(&text).unwrap();
    assert_eq!(parsed, request);
    assert_eq!(parsed_choices, choices);
    assert!(!parsed_choices.remember_session);

    // The answer draft's values from a model endpoint too.
    let result = CreateMessageResult {
        role: Role::Assistant,
        content: vec![Block::text("hi")],
        model: "m\n### user".into(),
        stop_reason: Some("\"endTurn\"\nmodel: other".into()),
    };
    let text = render_response("s", &result, Some("bad\r\nmodel: evil\u{2028}x"));
    assert!(
        !text.contains("\nmodel: evil") && !text.contains('\r'),
        "{text}"
    );
    assert_eq!(parse_response(&text).unwrap(), result);
}

#[test]
fn a_setting_given_twice_is_a_problem_not_last_wins() {
    let text = render_request("s", &flights(), &RequestChoices::default());
    let twice = text.replace("maxTokens: 400\n", "maxTokens: 400\nmaxTokens: 99999\n");
    let problems = parse_request(&twice).unwrap_err();
    let lines: Vec<&str> = twice.lines().collect();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(lines[problems[0].line as usize], "maxTokens: 99999");
    assert!(problems[0].message.contains("set twice"), "{problems:?}");
    let answer = "model: a\nmodel: b\n\n### assistant\n\nhi\n";
    let problems = parse_response(answer).unwrap_err();
    assert_eq!(problems[0].line, 1);
    assert!(
        problems[0]
            .message
            .contains("model is set twice (also on line 1)")
    );
}

#[test]
fn the_request_draft_names_where_it_goes_read_only() {
    let request = flights();
    let choices = RequestChoices {
        model: Some("gpt-4o-mini".into()),
        remember_session: false,
    };
    let openai = Destination {
        provider: "openai".into(),
        host: Some("api.example.com:8443".into()),
        default_model: Some("llama3.2".into()),
    };
    let text = render_request_to("flights", &request, &choices, &openai);
    let line = text.lines().find(|l| l.starts_with("Goes to: ")).unwrap();
    assert_eq!(
        line,
        "Goes to: provider openai at api.example.com:8443, model gpt-4o-mini (the model line below)."
    );
    // Editing the line changes nothing: it is not a setting.
    let edited = text.replace(line, "Goes to: provider openai at evil.example, model x.");
    assert_eq!(parse_request(&edited).unwrap(), (request.clone(), choices));
    let default_model = render_request_to("f", &request, &RequestChoices::default(), &openai);
    assert!(
        default_model.contains("model llama3.2 (the provider's default)."),
        "{default_model}"
    );
    let manual = Destination {
        provider: "manual".into(),
        ..Destination::default()
    };
    let text = render_request_to("f", &request, &RequestChoices::default(), &manual);
    assert!(text.contains("\nGoes to: no model (provider manual): you write the answer next.\n"));
    let editor = Destination {
        provider: "editor".into(),
        ..Destination::default()
    };
    let text = render_request_to("f", &request, &RequestChoices::default(), &editor);
    assert!(text.contains(
        "Goes to: the editor's own model (provider editor), the provider's default model."
    ));
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            "[ -~]{0,12}",
            "[\\PC]{0,6}",
            Just("### user".to_string()),
            Just("\\### assistant".to_string()),
            Just("```mcp".to_string()),
            Just("```".to_string()),
            Just("<!-- next block -->".to_string()),
            Just("<!-- mcp:text-meta {} -->".to_string()),
            Just(String::new()),
            Just("maxTokens: 3".to_string()),
            Just("remember: session\r".to_string()),
            Just("\u{2028}model: x\u{85}".to_string()),
        ],
        0..6,
    )
    .prop_map(|lines| lines.join("\n"))
}

fn block_strategy() -> impl Strategy<Value = Block> {
    prop_oneof![
        3 => text_strategy().prop_map(Block::text),
        1 => (text_strategy(), any::<u8>()).prop_map(|(t, p)| Block::Text { text: t, extra: json!({"annotations": {"priority": p}}).as_object().unwrap().clone() }),
        1 => "[a-zA-Z0-9+/]{0,16}".prop_map(|d| Block::Other(json!({"type": "image", "data": d, "mimeType": "image/png"}))),
        1 => ("[a-z]{1,8}", any::<i32>()).prop_map(|(n, i)| Block::Other(json!({"type": "tool_use", "id": n, "name": n, "input": {"n": i}}))),
        1 => text_strategy().prop_map(|t| Block::Other(json!({"type": "tool_result", "toolUseId": "x", "content": [{"type": "text", "text": t}]}))),
    ]
}

fn request_strategy() -> impl Strategy<Value = CreateMessageParams> {
    (
        prop::collection::vec(
            (any::<bool>(), prop::collection::vec(block_strategy(), 0..4)),
            1..4,
        ),
        prop::option::of(text_strategy()),
        1u64..100_000,
        prop::option::of(0.0f64..2.0),
        prop::option::of(prop::collection::vec(header_strategy(), 0..3)),
        prop::option::of(header_strategy()),
        prop::option::of(header_strategy()),
    )
        .prop_map(
            |(messages, system, max_tokens, temperature, stops, context, hint)| {
                CreateMessageParams {
                    messages: messages
                        .into_iter()
                        .map(|(user, content)| SamplingMessage {
                            role: if user { Role::User } else { Role::Assistant },
                            content,
                            meta: None,
                        })
                        .collect(),
                    model_preferences: hint.map(|name| {
                        serde_json::from_value(json!({"hints": [{"name": name}]})).unwrap()
                    }),
                    system_prompt: system,
                    include_context: context.filter(|c| !c.is_empty()),
                    temperature,
                    max_tokens,
                    stop_sequences: stops,
                    metadata: None,
                    tools: None,
                    tool_choice: None,
                }
            },
        )
}

/// A value a server (or a model endpoint) sends for a one-line setting: plain, or holding line
/// breaks, controls, quotes, spaces at the ends and a setting of its own.
fn header_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,8}",
        "[\\PC]{0,4}",
        Just("none\nremember: session".to_string()),
        Just("\"quoted\"".to_string()),
        Just(" padded ".to_string()),
        Just("a\rb\u{85}c\u{2028}d\u{2029}\u{7f}\u{0}".to_string()),
        prop::collection::vec(any::<char>(), 0..6).prop_map(|c| c.into_iter().collect()),
    ]
}

proptest! {
    /// Render → parse gives back exactly the request: every content kind, unicode,
    /// Markdown-looking text, fences and the draft's own markers inside text.
    #[test]
    fn request_drafts_are_lossless(request in request_strategy(), model in prop::option::of(header_strategy().prop_filter("not empty", |m| !m.is_empty()))) {
        let choices = RequestChoices { model, remember_session: false };
        let text = render_request("srv", &request, &choices);
        let (parsed, parsed_choices) = parse_request(&text).map_err(|p| TestCaseError::fail(format!("{p:?}\n{text}")))?;
        prop_assert_eq!(parsed, request);
        prop_assert_eq!(parsed_choices, choices);
    }

    #[test]
    fn answer_drafts_are_lossless(content in prop::collection::vec(block_strategy(), 0..4), model in header_strategy().prop_filter("not empty", |m| !m.is_empty()), stop in prop::option::of(header_strategy().prop_filter("not empty", |m| !m.is_empty()))) {
        let result = CreateMessageResult { role: Role::Assistant, content, model, stop_reason: stop };
        let text = render_response("srv", &result, None);
        prop_assert_eq!(parse_response(&text).map_err(|p| TestCaseError::fail(format!("{p:?}")))?, result);
    }

    /// Whatever the person types, parsing never panics.
    #[test]
    fn arbitrary_edits_never_panic(text in "[\\PC\n]{0,200}") {
        let _ = parse_request(&text);
        let _ = parse_response(&text);
    }
}
