//! Turning what a person typed into a typed JSON value (checked against its field with
//! [`check_value`]), and showing a value back. Messages are written for the person re-asked
//! with them.

use serde_json::{Number, Value};

use super::schema::{Field, Kind, check_value};

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

    proptest! {
        /// Any text through a parsed form, as a server's default and as typed text: never a panic.
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
