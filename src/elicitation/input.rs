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
        Format::Date => is_date(s.as_bytes()),
        Format::DateTime => {
            // Bytes, not `&str` slices: the text is the server's or the person's, and a
            // multibyte character at any offset must read as "not a date", never a panic.
            let b = s.as_bytes();
            b.len() > 11 && is_date(&b[..10]) && matches!(b[10], b'T' | b't') && is_time(&b[11..])
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

/// A run of ASCII digits as a number; `None` for anything else (a sign, a space, a multibyte
/// character: `str::parse` would take `"+1"`).
fn digits(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    b.iter().try_fold(0u32, |n, d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

/// `YYYY-MM-DD`, a real calendar day.
fn is_date(b: &[u8]) -> bool {
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (digits(&b[..4]), digits(&b[5..7]), digits(&b[8..])) else {
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

/// `HH:MM:SS[.frac](Z|±HH:MM)`.
fn is_time(b: &[u8]) -> bool {
    if b.len() < 9 || b[2] != b':' || b[5] != b':' {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (digits(&b[..2]), digits(&b[3..5]), digits(&b[6..8]))
    else {
        return false;
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut rest = &b[8..];
    if let Some(frac) = rest.strip_prefix(b".") {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    matches!(rest, b"Z" | b"z")
        || (rest.len() == 6
            && matches!(rest[0], b'+' | b'-')
            && rest[3] == b':'
            && digits(&rest[1..3]).is_some_and(|h| h < 24)
            && digits(&rest[4..]).is_some_and(|m| m < 60))
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FORMATS: [Format; 4] = [Format::Email, Format::Uri, Format::Date, Format::DateTime];

    /// Valid values of each format the checks must keep accepting.
    const VALID: &[(Format, &str)] = &[
        (Format::Date, "2024-02-29"),
        (Format::DateTime, "2024-01-01T00:00:00Z"),
        (Format::DateTime, "2024-01-01t23:59:60.125-11:30"),
        (Format::DateTime, "2024-01-01T00:00:00+05:45"),
    ];

    #[test]
    fn multibyte_text_in_a_date_or_time_is_refused_not_a_panic() {
        // Each one panicked on `&str` slicing before (a multibyte character across the cut).
        let cases = [
            (Format::DateTime, "2024-01-01T00:00:0é"),
            (Format::DateTime, "2024-01-0éT00:00:00Z"),
            (Format::DateTime, "2024-01-01é00:00:00Z"),
            (Format::DateTime, "2024-01-01T0é:00:00Z"),
            (Format::DateTime, "2024-01-01T00:00:00+0é:00"),
            (Format::DateTime, "2024-01-01T00:00:00é0:00"),
            (Format::DateTime, "2024-01-01T00:00:00.5+01:0é"),
            (Format::DateTime, "2024-01-01T00:00:00Zé"),
            (Format::DateTime, "😀😀😀😀😀😀😀😀😀😀😀"),
            (Format::Date, "2024-01-0é"),
            (Format::Date, "20é4-01-1"),
            (Format::Date, "2024-é-011"),
            (Format::Date, "日本語の日付です"),
        ];
        for (format, text) in cases {
            assert!(check_format(format, text).is_err(), "{format:?} {text}");
        }
    }

    #[test]
    fn signs_and_spaces_are_not_digits() {
        // `str::parse::<u32>` takes a leading `+`; a date does not.
        assert!(check_format(Format::Date, "2024-+1-01").is_err());
        assert!(check_format(Format::Date, "+024-01-01").is_err());
        assert!(check_format(Format::DateTime, "2024-01-01T+1:00:00Z").is_err());
        assert!(check_format(Format::DateTime, "2024-01-01T00:00:00++1:00").is_err());
        for (format, text) in VALID {
            assert!(check_format(*format, text).is_ok(), "{format:?} {text}");
        }
    }

    #[test]
    fn a_multibyte_default_or_typed_value_goes_through_the_field_check() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "when": {"type": "string", "format": "date-time", "default": "2024-01-01T00:00:0é"},
            "day": {"type": "string", "format": "date", "default": "2024-01-0é"}}});
        let form = super::super::Form::parse(&schema).unwrap();
        // The defaults do not fit their fields, so they are dropped, not prefilled.
        assert!(form.fields.iter().all(|f| f.default.is_none()));
        let typed = parse_text(&form.fields[0], "2024-01-01T00:00:0é").unwrap_err();
        assert!(typed.contains("YYYY-MM-DDTHH:MM:SSZ"), "{typed}");
        assert!(parse_text(&form.fields[1], "2024-01-0é").is_err());
    }

    /// A valid value with one character replaced by, or with one inserted, arbitrary text.
    fn near_miss() -> impl Strategy<Value = (Format, String)> {
        (
            0..VALID.len(),
            any::<prop::sample::Index>(),
            any::<bool>(),
            ".{1,3}",
        )
            .prop_map(|(k, at, insert, junk)| {
                let (format, text) = VALID[k];
                let chars: Vec<char> = text.chars().collect();
                let i = at.index(chars.len());
                let mut out: String = chars[..i].iter().collect();
                out.push_str(&junk);
                let from = if insert { i } else { i + 1 };
                out.extend(&chars[from..]);
                (format, out)
            })
    }

    proptest! {
        /// Any Unicode at all, in any format: accepted or refused with a message, never a panic.
        #[test]
        fn format_checks_never_panic_on_arbitrary_text(text in any::<String>()) {
            for format in FORMATS {
                let _ = check_format(format, &text);
            }
        }

        /// Multibyte characters at every offset of otherwise valid dates and times.
        #[test]
        fn near_miss_dates_never_panic((format, text) in near_miss()) {
            let _ = check_format(format, &text);
        }

        /// The same through a parsed form: the text as a server's default and as typed text.
        #[test]
        fn forms_with_arbitrary_defaults_never_panic(
            text in any::<String>(),
            format in prop::sample::select(vec!["date", "date-time", "email", "uri"]),
        ) {
            let schema = serde_json::json!({"type": "object", "properties": {
                "f": {"type": "string", "format": format, "default": text.clone(), "pattern": "^.*$"}}});
            let form = super::super::Form::parse(&schema).unwrap();
            let _ = parse_text(&form.fields[0], &text);
        }
    }
}
