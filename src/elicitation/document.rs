//! A whole form as a small text document, for editors with no prompts of their own (plain LSP):
//! one `key: value` line per field, with the field's title, description, type, bounds and
//! default in `#` notes above it. [`render`] writes it; [`read`] reads what the person saved,
//! checked field by field, with each problem on its line.
//!
//! Text the server chose (titles, descriptions, choices) only ever appears in notes, on one
//! line each: a description cannot make a line that reads as a field. A field whose name could
//! not be read back as a key (a colon, a leading `#`, control characters) gets `field-N`.

use serde_json::{Map, Value};

use super::input::{display, parse_text};
use super::schema::{Choice, Field, Form, Format, Kind, MAX_DESCRIPTION, MAX_LABEL, check_value};
use crate::contract::shown;

/// What is wrong with a saved form: the line (0-based) and the message for the person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub line: u32,
    pub message: String,
}

/// The key a field's line starts with.
pub fn key(form: &Form, index: usize) -> String {
    let name = &form.fields[index].name;
    let safe = !name.is_empty()
        && !name.starts_with('#')
        && name.trim() == name
        && !name.contains(':')
        && !name.chars().any(char::is_control)
        && shown::line(name, shown::MAX_NAME) == name.as_str();
    if safe {
        return name.clone();
    }
    let mut key = format!("field-{}", index + 1);
    while form.fields.iter().any(|f| f.name == key) {
        key.push('-');
    }
    key
}

/// The document: `intro` (one note line each), then every field. `values` prefill fields
/// (else their defaults); a field that looks secret is never prefilled.
pub fn render(form: &Form, intro: &[String], values: &Map<String, Value>) -> String {
    let mut out = String::new();
    for line in intro {
        note(&mut out, line);
    }
    for (i, field) in form.fields.iter().enumerate() {
        out.push('\n');
        let need = if field.required {
            "required"
        } else {
            "optional"
        };
        let mut head = format!(
            "{} — {need} · {}",
            shown::line(field.label(), MAX_LABEL),
            kind_text(&field.kind)
        );
        let secret = super::looks_secret(field);
        if let Some(default) = field.default.as_ref().filter(|_| !secret) {
            head.push_str(&format!(" · default {}", shown_value(field, default)));
        }
        note(&mut out, &head);
        if let Some(description) = &field.description {
            note(&mut out, &shown::line(description, MAX_DESCRIPTION));
        }
        if secret {
            note(
                &mut out,
                "⚠ this looks like a secret, which servers must not ask for in a form",
            );
        }
        let value = values
            .get(&field.name)
            .or(field.default.as_ref())
            .filter(|_| !secret)
            .map(|v| value_text(field, v))
            .unwrap_or_default();
        out.push_str(&key(form, i));
        out.push(':');
        if !value.is_empty() {
            out.push(' ');
            out.push_str(&value);
        }
        out.push('\n');
    }
    out
}

fn note(out: &mut String, text: &str) {
    out.push('#');
    if !text.is_empty() {
        out.push(' ');
        out.push_str(&shown::line(text, shown::MAX_MESSAGE));
    }
    out.push('\n');
}

fn kind_text(kind: &Kind) -> String {
    match kind {
        Kind::String {
            min_length,
            max_length,
            format,
            pattern,
        } => {
            let mut text = match format {
                Some(Format::Email) => "an email address".to_string(),
                Some(Format::Uri) => "a URI".to_string(),
                Some(Format::Date) => "a date, YYYY-MM-DD".to_string(),
                Some(Format::DateTime) => "a date and time, YYYY-MM-DDTHH:MM:SSZ".to_string(),
                _ => "text".to_string(),
            };
            match (min_length, max_length) {
                (Some(a), Some(b)) => text.push_str(&format!(", {a} to {b} characters")),
                (Some(a), None) => text.push_str(&format!(", at least {a} characters")),
                (None, Some(b)) => text.push_str(&format!(", at most {b} characters")),
                (None, None) => {}
            }
            if let Some(p) = pattern {
                text.push_str(&format!(", matching {}", shown::line(p, MAX_LABEL)));
            }
            text
        }
        Kind::Number {
            integer,
            minimum,
            maximum,
        } => {
            let what = if *integer {
                "a whole number"
            } else {
                "a number"
            };
            match (minimum, maximum) {
                (Some(a), Some(b)) => format!("{what} from {a} to {b}"),
                (Some(a), None) => format!("{what}, at least {a}"),
                (None, Some(b)) => format!("{what}, at most {b}"),
                (None, None) => what.to_string(),
            }
        }
        Kind::Boolean => "yes or no".into(),
        Kind::Choice { options } => format!("one of: {}", options_text(options)),
        Kind::MultiChoice {
            options,
            min_items,
            max_items,
        } => {
            let mut text = format!("any of, separated by commas: {}", options_text(options));
            if let Some(a) = min_items {
                text.push_str(&format!(" · at least {a}"));
            }
            if let Some(b) = max_items {
                text.push_str(&format!(" · at most {b}"));
            }
            text
        }
    }
}

fn options_text(options: &[Choice]) -> String {
    options
        .iter()
        .map(|o| {
            if o.label == o.value {
                shown::line(&o.value, MAX_LABEL).into_owned()
            } else {
                format!(
                    "{} ({})",
                    shown::line(&o.value, MAX_LABEL),
                    shown::line(&o.label, MAX_LABEL)
                )
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// How a value is written on its field's line: what [`read`] reads back as the same value. A
/// value that cannot stay on one line is left out (the person types it).
fn value_text(field: &Field, value: &Value) -> String {
    let text = match (&field.kind, value) {
        (Kind::Boolean, Value::Bool(b)) => if *b { "yes" } else { "no" }.into(),
        (_, Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
        _ => display(value),
    };
    if text.contains(['\n', '\r']) {
        String::new()
    } else {
        text
    }
}

fn shown_value(field: &Field, value: &Value) -> String {
    shown::line(&value_text(field, value), MAX_LABEL).into_owned()
}

/// Reads a saved form: the answers (optional fields left empty are left out), or every
/// problem with its line. A required field whose line is gone is a problem on line 0.
pub fn read(form: &Form, text: &str) -> Result<Map<String, Value>, Vec<Problem>> {
    let keys: Vec<String> = (0..form.fields.len()).map(|i| key(form, i)).collect();
    let mut seen: Vec<Option<u32>> = vec![None; form.fields.len()];
    let mut answers = Map::new();
    let mut problems = Vec::new();
    for (n, raw) in text.lines().enumerate() {
        let line = n as u32;
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let Some((name, value)) = trimmed.split_once(':') else {
            problems.push(Problem {
                line,
                message: "not a field: a field's line is its name, a colon and the value".into(),
            });
            continue;
        };
        let name = name.trim();
        let Some(i) = keys.iter().position(|k| k == name) else {
            problems.push(Problem {
                line,
                message: format!(
                    "this form has no field \"{}\"",
                    shown::line(name, shown::MAX_NAME)
                ),
            });
            continue;
        };
        if seen[i].is_some() {
            problems.push(Problem {
                line,
                message: format!("{} is given twice", name),
            });
            continue;
        }
        seen[i] = Some(line);
        let field = &form.fields[i];
        let value = value.trim();
        if value.is_empty() {
            if field.required {
                problems.push(Problem {
                    line,
                    message: format!("{} is required", shown::line(field.label(), MAX_LABEL)),
                });
            }
            continue;
        }
        match parse(field, value) {
            Ok(v) => {
                answers.insert(field.name.clone(), v);
            }
            Err(message) => problems.push(Problem { line, message }),
        }
    }
    for (i, field) in form.fields.iter().enumerate() {
        if seen[i].is_none() && field.required {
            problems.push(Problem {
                line: 0,
                message: format!(
                    "the line \"{}:\" is missing; {} is required",
                    keys[i],
                    shown::line(field.label(), MAX_LABEL)
                ),
            });
        }
    }
    if problems.is_empty() {
        Ok(answers)
    } else {
        Err(problems)
    }
}

/// One field's typed text as its value.
fn parse(field: &Field, text: &str) -> Result<Value, String> {
    match &field.kind {
        Kind::String { .. } | Kind::Number { .. } => parse_text(field, text),
        Kind::Boolean => match text.to_lowercase().as_str() {
            "yes" | "y" | "true" => Ok(Value::Bool(true)),
            "no" | "n" | "false" => Ok(Value::Bool(false)),
            _ => Err("answer yes or no".into()),
        },
        Kind::Choice { options } => choice(options, text).map(Value::String),
        Kind::MultiChoice { options, .. } => {
            let picked = text
                .split(',')
                .map(str::trim)
                .filter(|t| !t.is_empty())
                .map(|t| choice(options, t).map(Value::String))
                .collect::<Result<Vec<_>, _>>()?;
            let value = Value::Array(picked);
            check_value(field, &value)?;
            Ok(value)
        }
    }
}

/// A choice by its value, or by its title (any case).
fn choice(options: &[Choice], text: &str) -> Result<String, String> {
    options
        .iter()
        .find(|o| o.value == text)
        .or_else(|| options.iter().find(|o| o.label.eq_ignore_ascii_case(text)))
        .map(|o| o.value.clone())
        .ok_or_else(|| {
            format!(
                "\"{}\" is not one of: {}",
                shown::line(text, MAX_LABEL),
                options_text(options)
            )
        })
}

#[cfg(test)]
mod tests;
