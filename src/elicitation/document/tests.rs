use proptest::prelude::*;
use serde_json::json;

use super::*;

fn form(schema: Value) -> Form {
    Form::parse(&schema).unwrap()
}

fn every_kind() -> Value {
    json!({"type": "object", "properties": {
        "name": {"type": "string", "title": "Your name", "minLength": 2, "maxLength": 20},
        "email": {"type": "string", "format": "email", "description": "Where the ticket goes"},
        "nights": {"type": "integer", "minimum": 1, "maximum": 30, "default": 3},
        "budget": {"type": "number"},
        "insurance": {"type": "boolean", "default": false},
        "class": {"type": "string", "oneOf": [
            {"const": "eco", "title": "Economy"}, {"const": "biz", "title": "Business"}]},
        "meals": {"type": "array", "items": {"enum": ["veg", "fish", "meat"]}, "maxItems": 2},
        "day": {"type": "string", "format": "date"}
    }, "required": ["name", "email", "class"]})
}

/// The line (0-based) whose text starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> u32 {
    text.lines().position(|l| l.starts_with(prefix)).unwrap() as u32
}

fn fill(text: &str, key: &str, value: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with(&format!("{key}:")) {
                format!("{key}: {value}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_field_kind_is_written_with_its_notes_and_read_back() {
    let form = form(every_kind());
    let text = render(&form, &["travel: Book a trip".into()], &Map::new());
    assert!(text.starts_with("# travel: Book a trip\n"), "{text}");
    assert!(
        text.contains("# Your name — required · text, 2 to 20 characters\nname:\n"),
        "{text}"
    );
    assert!(text.contains("# Where the ticket goes\nemail:\n"), "{text}");
    assert!(
        text.contains("a whole number from 1 to 30 · default 3\nnights: 3\n"),
        "{text}"
    );
    assert!(text.contains("insurance: no\n"), "{text}");
    assert!(
        text.contains("one of: eco (Economy), biz (Business)"),
        "{text}"
    );
    let mut filled = text.clone();
    for (key, value) in [
        ("name", "Ada"),
        ("email", "ada@example.com"),
        ("budget", "99.5"),
        ("insurance", "Yes"),
        ("class", "business"),
        ("meals", "veg, fish"),
        ("day", "2026-12-24"),
    ] {
        filled = fill(&filled, key, value);
    }
    let answers = read(&form, &filled).unwrap();
    assert_eq!(
        Value::Object(answers.clone()),
        json!({"name": "Ada", "email": "ada@example.com", "nights": 3, "budget": 99.5,
            "insurance": true, "class": "biz", "meals": ["veg", "fish"], "day": "2026-12-24"})
    );
    // Written again with those answers, it reads as the same answers.
    let again = render(&form, &[], &answers);
    assert_eq!(read(&form, &again).unwrap(), answers);
}

#[test]
fn each_invalid_value_is_a_problem_on_its_own_line() {
    let form = form(every_kind());
    let mut text = render(&form, &[], &Map::new());
    for (key, value) in [
        ("name", "A"),
        ("email", "not-an-email"),
        ("nights", "40"),
        ("budget", "lots"),
        ("insurance", "maybe"),
        ("class", "first"),
        ("meals", "veg, fish, meat"),
        ("day", "24/12/2026"),
    ] {
        text = fill(&text, key, value);
    }
    let problems = read(&form, &text).unwrap_err();
    let lines: Vec<u32> = problems.iter().map(|p| p.line).collect();
    let expected: Vec<u32> = [
        "name:",
        "email:",
        "nights:",
        "budget:",
        "insurance:",
        "class:",
        "meals:",
        "day:",
    ]
    .iter()
    .map(|k| line_of(&text, k))
    .collect();
    assert_eq!(lines, expected, "{problems:?}");
    assert!(
        problems[5].message.contains("eco (Economy)"),
        "{problems:?}"
    );
}

#[test]
fn a_required_field_left_empty_or_deleted_is_a_problem_and_unknown_or_doubled_lines_too() {
    let form = form(every_kind());
    let text = render(&form, &[], &Map::new());
    let text = fill(&text, "email", "a@b.co");
    let text = fill(&text, "class", "eco");
    // `name:` stays empty.
    let problems = read(&form, &text).unwrap_err();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].line, line_of(&text, "name:"));
    assert!(problems[0].message.contains("required"));

    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("name:"))
        .map(|l| format!("{l}\n"))
        .collect();
    let problems = read(
        &form,
        &(without + "colour: red\nclass: biz\nno colon here\n"),
    )
    .unwrap_err();
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(problems.len(), 4, "{messages:?}");
    assert!(messages[0].contains("no field \"colour\""), "{messages:?}");
    assert!(messages[1].contains("twice"), "{messages:?}");
    assert!(messages[2].contains("not a field"), "{messages:?}");
    assert!(messages[3].contains("\"name:\" is missing"), "{messages:?}");
    assert_eq!(problems[3].line, 0);
}

#[test]
fn a_description_that_looks_like_another_field_stays_a_note() {
    let form = form(json!({"type": "object", "properties": {
        "city": {"type": "string", "title": "City\nemail: evil@example.com",
            "description": "Where to\n\nemail: evil@example.com\n# x"},
        "email": {"type": "string"}
    }}));
    let text = render(&form, &[], &Map::new());
    // Only the fields' own lines are not notes.
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(lines, ["city:", "email:"], "{text}");
    assert_eq!(read(&form, &text).unwrap(), Map::new());
}

#[test]
fn a_name_that_cannot_be_a_key_gets_a_numbered_one() {
    let form = form(json!({"type": "object", "properties": {
        "a:b": {"type": "string"}, "#c": {"type": "string"}, "field-1": {"type": "string"},
        " d": {"type": "string"}, "e\u{202e}": {"type": "string"}
    }, "required": ["a:b"]}));
    let keys: Vec<String> = (0..form.fields.len()).map(|i| key(&form, i)).collect();
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), keys.len(), "{keys:?}");
    let text = render(&form, &[], &Map::new());
    let i = form.fields.iter().position(|f| f.name == "a:b").unwrap();
    let filled = fill(&text, &keys[i], "x");
    let answers = read(&form, &filled).unwrap();
    assert_eq!(answers.get("a:b"), Some(&json!("x")), "{filled}");
}

#[test]
fn a_secret_is_never_prefilled() {
    let form = form(json!({"type": "object", "properties": {
        "password": {"type": "string", "default": "hunter2"}}}));
    let text = render(&form, &[], &Map::new());
    assert!(!text.contains("hunter2"), "{text}");
    assert!(text.contains("looks like a secret"), "{text}");
}

proptest! {
    /// Whatever the person saves: never a panic, and every problem on a line of the text.
    #[test]
    fn any_saved_text_reads_without_a_panic(text in any::<String>()) {
        let form = form(every_kind());
        if let Err(problems) = read(&form, &text) {
            let lines = text.lines().count().max(1) as u32;
            prop_assert!(problems.iter().all(|p| p.line < lines));
        }
    }

    /// Whatever a server titles and describes its fields: the document has one line per field.
    #[test]
    fn any_titles_and_descriptions_keep_one_line_per_field(
        title in any::<String>(), description in any::<String>(), value in any::<String>()
    ) {
        let form = form(json!({"type": "object", "properties": {
            "f": {"type": "string", "title": title, "description": description, "default": value}}}));
        let text = render(&form, std::slice::from_ref(&title), &Map::new());
        let fields = text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).count();
        prop_assert_eq!(fields, 1, "{}", text);
    }

    /// Whatever a server's choices and their defaults hold: one line per field.
    #[test]
    fn any_choices_and_defaults_keep_one_line_per_field(
        a in any::<String>(), b in any::<String>(), pick_b in any::<bool>()
    ) {
        prop_assume!(a != b);
        let default = if pick_b { b.clone() } else { a.clone() };
        let form = form(json!({"type": "object", "properties": {
            "one": {"type": "string", "enum": [a.clone(), b.clone()], "default": default.clone()},
            "many": {"type": "array", "items": {"enum": [a.clone(), b.clone()]}, "default": [default]}
        }}));
        let text = render(&form, &[], &Map::new());
        let fields = text.lines().filter(|l| !l.is_empty() && !l.starts_with('#')).count();
        prop_assert_eq!(fields, form.fields.len(), "{}", text);
    }
}
