//! Turning what a person typed into a typed JSON value, and checking values against a field.
//! Messages are written for the person re-asked with them.

use serde_json::{Number, Value};

use super::schema::{Field, Format, Kind};

/// Parses and checks typed text for a text-entry field (string, number, integer).
pub fn parse_text(field: &Field, text: &str) -> Result<Value, String> {
    let value = match &field.kind {
        Kind::String { .. } => Value::String(text.to_string()),
        Kind::Number { integer: true, .. } => {
            let t = text.trim();
            let n: i64 = t
                .parse()
                .ok()
                .or_else(|| {
                    t.parse::<f64>()
                        .ok()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                        .map(|f| f as i64)
                })
                .ok_or_else(|| format!("\"{t}\" is not a whole number"))?;
            Value::Number(n.into())
        }
        Kind::Number { integer: false, .. } => {
            let t = text.trim();
            let f: f64 = t
                .parse()
                .ok()
                .filter(|f: &f64| f.is_finite())
                .ok_or_else(|| format!("\"{t}\" is not a number"))?;
            number(f)
        }
        _ => return Err("this field is not typed in".into()),
    };
    check_value(field, &value)?;
    Ok(value)
}

/// A JSON number that stays an integer when it is one (`2`, not `2.0`).
fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::Number((f as i64).into())
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Checks a value against the field's type and bounds.
pub fn check_value(field: &Field, value: &Value) -> Result<(), String> {
    match (&field.kind, value) {
        (
            Kind::String {
                min_length,
                max_length,
                format,
                pattern,
            },
            Value::String(s),
        ) => {
            let len = s.chars().count() as u64;
            if let Some(min) = min_length
                && len < *min
            {
                return Err(if *min == 1 {
                    "This field cannot be empty".into()
                } else {
                    format!("Enter at least {min} characters")
                });
            }
            if let Some(max) = max_length
                && len > *max
            {
                return Err(format!("Enter at most {max} characters"));
            }
            if let Some(format) = format {
                check_format(*format, s)?;
            }
            if let Some(pattern) = pattern
                && let Some(matches) = pattern_matcher(pattern)
                && !matches(s)
            {
                return Err(format!("Must match the pattern {pattern}"));
            }
            Ok(())
        }
        (
            Kind::Number {
                integer,
                minimum,
                maximum,
            },
            Value::Number(n),
        ) => {
            if *integer && !(n.is_i64() || n.is_u64()) {
                return Err("Enter a whole number".into());
            }
            let f = n.as_f64().unwrap_or(f64::NAN);
            if let Some(min) = minimum
                && f < *min
            {
                return Err(format!("Enter a number of at least {}", show_num(*min)));
            }
            if let Some(max) = maximum
                && f > *max
            {
                return Err(format!("Enter a number of at most {}", show_num(*max)));
            }
            Ok(())
        }
        (Kind::Boolean, Value::Bool(_)) => Ok(()),
        (Kind::Choice { options }, Value::String(s)) => {
            if options.iter().any(|o| &o.value == s) {
                Ok(())
            } else {
                Err(format!("\"{s}\" is not one of the choices"))
            }
        }
        (
            Kind::MultiChoice {
                options,
                min_items,
                max_items,
            },
            Value::Array(items),
        ) => {
            for item in items {
                if !item
                    .as_str()
                    .is_some_and(|s| options.iter().any(|o| o.value == s))
                {
                    return Err(format!("{item} is not one of the choices"));
                }
            }
            let n = items.len() as u64;
            if let Some(min) = min_items
                && n < *min
            {
                return Err(format!("Pick at least {min}"));
            }
            if let Some(max) = max_items
                && n > *max
            {
                return Err(format!("Pick at most {max}"));
            }
            Ok(())
        }
        _ => Err(format!(
            "{value} does not fit the field \"{}\"",
            field.label()
        )),
    }
}

fn show_num(f: f64) -> String {
    if f.fract() == 0.0 {
        format!("{}", f as i64)
    } else {
        f.to_string()
    }
}

fn check_format(format: Format, s: &str) -> Result<(), String> {
    let ok = match format {
        Format::Email => {
            let mut parts = s.splitn(2, '@');
            let (local, domain) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            !local.is_empty()
                && domain.contains('.')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !s.contains(char::is_whitespace)
        }
        Format::Uri => url::Url::parse(s).is_ok(),
        Format::Password => true,
        Format::Date => is_date(s),
        Format::DateTime => {
            s.len() > 11
                && is_date(&s[..10])
                && matches!(&s[10..11], "T" | "t")
                && is_time(&s[11..])
        }
    };
    if ok {
        Ok(())
    } else {
        Err(match format {
            Format::Email => "Enter an email address, like name@example.com".into(),
            Format::Uri => "Enter a full URL, like https://example.com".into(),
            Format::Date => "Enter a date as YYYY-MM-DD".into(),
            Format::DateTime => "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ".into(),
            Format::Password => String::new(),
        })
    }
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (
        s[..4].parse::<u32>(),
        s[5..7].parse::<u32>(),
        s[8..].parse::<u32>(),
    ) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    (1..=12).contains(&m) && d >= 1 && d <= days[(m - 1) as usize]
}

fn is_time(s: &str) -> bool {
    // HH:MM:SS[.frac](Z|±HH:MM)
    let b = s.as_bytes();
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Ok(h), Ok(m), Ok(sec)) = (
        s[..2].parse::<u32>(),
        s[3..5].parse::<u32>(),
        s[6..8].parse::<u32>(),
    ) else {
        return false;
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut rest = &s[8..];
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 {
            return false;
        }
        rest = &frac[digits..];
    }
    matches!(rest, "Z" | "z")
        || (rest.len() == 6
            && matches!(&rest[..1], "+" | "-")
            && rest.as_bytes()[3] == b':'
            && rest[1..3].parse::<u32>().is_ok_and(|h| h < 24)
            && rest[4..].parse::<u32>().is_ok_and(|m| m < 60))
}

/// `pattern` (outside the spec's subset but in its examples), checked with the JSON Schema
/// validator's own regex dialect; a pattern that does not compile is ignored.
fn pattern_matcher(pattern: &str) -> Option<impl Fn(&str) -> bool> {
    let validator = jsonschema::options()
        .build(&serde_json::json!({"type": "string", "pattern": pattern}))
        .ok()?;
    Some(move |s: &str| validator.is_valid(&Value::String(s.to_string())))
}

/// How a value reads in the review step.
pub fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "Yes".into(),
        Value::Bool(false) => "No".into(),
        Value::Array(items) => items
            .iter()
            .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}
