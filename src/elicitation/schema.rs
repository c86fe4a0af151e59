//! The 2025-11-25 restricted schema as a small typed form model: a flat object of primitive
//! fields, and the check of a value against a field (its type, bounds and format). Anything
//! outside that subset is refused with a message naming the property.

use serde_json::{Map, Value};

use crate::contract::shown;

/// One field of a form, in the server's order.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
    pub kind: Kind,
    pub default: Option<Value>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    String {
        min_length: Option<u64>,
        max_length: Option<u64>,
        format: Option<Format>,
        /// Not in the spec's subset, but seen in its own examples: enforced when it compiles.
        pattern: Option<String>,
    },
    Number {
        integer: bool,
        minimum: Option<f64>,
        maximum: Option<f64>,
    },
    Boolean,
    /// Single choice: untitled `enum`, legacy `enum` + `enumNames`, or titled `oneOf`.
    Choice {
        options: Vec<Choice>,
    },
    /// Multiple choice: `type: "array"` with `items.enum` or `items.anyOf`.
    MultiChoice {
        options: Vec<Choice>,
        min_items: Option<u64>,
        max_items: Option<u64>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Email,
    Uri,
    Date,
    DateTime,
    /// Not a JSON Schema format, but used for secrets: any text, always masked.
    Password,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    pub value: String,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    pub fields: Vec<Field>,
}

/// Why a schema cannot be shown as a form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Unsupported {
    pub property: Option<String>,
    pub message: String,
}

/// The most fields a form may have; a larger one is refused as unsupported.
pub const MAX_FIELDS: usize = 50;
/// The most options one choice may offer; more are refused as unsupported.
pub const MAX_OPTIONS: usize = 500;
/// The longest text shown to the person, in characters; longer text is cut, ending with
/// [`CUT`] (`contract::shown` cleans it).
pub const MAX_MESSAGE: usize = shown::MAX_MESSAGE;
/// ... for a field's title (or its name when it has none).
pub const MAX_TITLE: usize = shown::MAX_LINE;
/// ... for a field's description.
pub const MAX_DESCRIPTION: usize = shown::MAX_TEXT;
/// ... for a choice's label (and its value where that is shown).
pub const MAX_LABEL: usize = shown::MAX_LINE;
pub use shown::CUT;

fn unsupported(property: &str, message: impl Into<String>) -> Unsupported {
    Unsupported {
        property: Some(property.to_string()),
        message: format!("property \"{property}\": {}", message.into()),
    }
}

impl Field {
    /// The label people see: the title, else the property name.
    pub fn label(&self) -> &str {
        self.title.as_deref().unwrap_or(&self.name)
    }
}

impl Form {
    /// Parses a `requestedSchema` (or a tool's flat `inputSchema`), keeping property order.
    pub fn parse(schema: &Value) -> Result<Form, Unsupported> {
        let obj = schema.as_object().ok_or_else(|| Unsupported {
            property: None,
            message: "the schema is not an object".into(),
        })?;
        if let Some(t) = obj.get("type")
            && t != "object"
        {
            return Err(Unsupported {
                property: None,
                message: format!("the schema's type must be \"object\", not {t}"),
            });
        }
        if obj.contains_key("$ref") {
            return Err(Unsupported {
                property: None,
                message: "the schema uses $ref, which forms do not support".into(),
            });
        }
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let empty = Map::new();
        let props = match obj.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => {
                return Err(Unsupported {
                    property: None,
                    message: "\"properties\" is not an object".into(),
                });
            }
        };
        if props.len() > MAX_FIELDS {
            return Err(Unsupported {
                property: None,
                message: format!(
                    "the form has {} fields; at most {MAX_FIELDS} are supported",
                    props.len()
                ),
            });
        }
        let fields = props
            .iter()
            .map(|(name, prop)| parse_field(name, prop, required.contains(&name.as_str())))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Form { fields })
    }

    /// Whether every required field has a default (the `acceptDefaults` policy needs that).
    pub fn defaults_cover_required(&self) -> bool {
        self.fields
            .iter()
            .all(|f| !f.required || f.default.is_some())
    }

    /// The content made of every default.
    pub fn defaults(&self) -> Map<String, Value> {
        self.fields
            .iter()
            .filter_map(|f| f.default.clone().map(|d| (f.name.clone(), d)))
            .collect()
    }
}

fn parse_field(name: &str, prop: &Value, required: bool) -> Result<Field, Unsupported> {
    let p = prop
        .as_object()
        .ok_or_else(|| unsupported(name, "its definition is not an object"))?;
    if p.contains_key("$ref") {
        return Err(unsupported(name, "uses $ref, which forms do not support"));
    }
    let text = |k: &str| p.get(k).and_then(Value::as_str).map(str::to_string);
    let uint = |k: &str| p.get(k).and_then(Value::as_u64);
    let num = |k: &str| p.get(k).and_then(Value::as_f64);
    let ty = p.get("type").and_then(Value::as_str);
    let kind = match ty {
        Some("string") if p.contains_key("enum") || p.contains_key("oneOf") => Kind::Choice {
            options: choices(name, p)?,
        },
        Some("string") => Kind::String {
            min_length: uint("minLength"),
            max_length: uint("maxLength"),
            format: match text("format").as_deref() {
                None => None,
                Some("email") => Some(Format::Email),
                Some("uri") => Some(Format::Uri),
                Some("date") => Some(Format::Date),
                Some("date-time") => Some(Format::DateTime),
                Some("password") => Some(Format::Password),
                Some(other) => {
                    tracing::debug!(
                        property = name,
                        format = other,
                        "ignoring unknown string format"
                    );
                    None
                }
            },
            pattern: text("pattern"),
        },
        Some(t @ ("number" | "integer")) => Kind::Number {
            integer: t == "integer",
            minimum: num("minimum"),
            maximum: num("maximum"),
        },
        Some("boolean") => Kind::Boolean,
        Some("array") => {
            let items = p
                .get("items")
                .and_then(Value::as_object)
                .ok_or_else(|| unsupported(name, "an array needs \"items\" with enum or anyOf"))?;
            if !(items.contains_key("enum") || items.contains_key("anyOf")) {
                return Err(unsupported(
                    name,
                    "only arrays of choices (items.enum or items.anyOf) are supported",
                ));
            }
            Kind::MultiChoice {
                options: choices(name, items)?,
                min_items: uint("minItems"),
                max_items: uint("maxItems"),
            }
        }
        Some("object") => return Err(unsupported(name, "nested objects are not supported")),
        Some(other) => return Err(unsupported(name, format!("unknown type \"{other}\""))),
        None => return Err(unsupported(name, "has no \"type\"")),
    };
    let title = match text("title") {
        Some(title) => Some(shown::line(&title, MAX_TITLE).into_owned()),
        // A name that cannot be shown as it is is shown cleaned, as the title.
        None => match shown::line(name, MAX_TITLE) {
            std::borrow::Cow::Owned(shown) => Some(shown),
            std::borrow::Cow::Borrowed(_) => None,
        },
    };
    let field = Field {
        name: name.to_string(),
        title,
        description: text("description").map(|d| shown::block(&d, MAX_DESCRIPTION).into_owned()),
        required,
        default: p.get("default").cloned().filter(|d| !d.is_null()),
        kind,
    };
    if let Some(default) = &field.default
        && check_value(&field, default).is_err()
    {
        tracing::debug!(
            property = name,
            "ignoring a default that does not fit its field"
        );
        return Ok(Field {
            default: None,
            ..field
        });
    }
    Ok(field)
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

/// The options of a choice: `enum` (+ `enumNames`), `oneOf` or `anyOf` of `{const, title}`, at
/// most [`MAX_OPTIONS`], labels cut at [`MAX_LABEL`].
fn choices(name: &str, p: &Map<String, Value>) -> Result<Vec<Choice>, Unsupported> {
    let count = ["enum", "oneOf", "anyOf"]
        .iter()
        .find_map(|k| p.get(*k).and_then(Value::as_array))
        .map_or(0, Vec::len);
    if count > MAX_OPTIONS {
        return Err(unsupported(
            name,
            format!("{count} choices; at most {MAX_OPTIONS} are supported"),
        ));
    }
    let options = choices_uncapped(name, p)?;
    Ok(options
        .into_iter()
        .map(|c| Choice {
            label: shown::line(&c.label, MAX_LABEL).into_owned(),
            value: c.value,
        })
        .collect())
}

fn choices_uncapped(name: &str, p: &Map<String, Value>) -> Result<Vec<Choice>, Unsupported> {
    if let Some(Value::Array(values)) = p.get("enum") {
        let names = p.get("enumNames").and_then(Value::as_array);
        return values
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let value = v
                    .as_str()
                    .ok_or_else(|| unsupported(name, "enum values must be strings"))?
                    .to_string();
                let label = names
                    .and_then(|n| n.get(i))
                    .and_then(Value::as_str)
                    .map_or_else(|| value.clone(), str::to_string);
                Ok(Choice { value, label })
            })
            .collect();
    }
    let list = p
        .get("oneOf")
        .or_else(|| p.get("anyOf"))
        .and_then(Value::as_array)
        .ok_or_else(|| unsupported(name, "choices need enum, oneOf or anyOf"))?;
    list.iter()
        .map(|o| {
            let value = o
                .get("const")
                .and_then(Value::as_str)
                .ok_or_else(|| unsupported(name, "each choice needs a string \"const\""))?
                .to_string();
            let label = o
                .get("title")
                .and_then(Value::as_str)
                .map_or_else(|| value.clone(), str::to_string);
            Ok(Choice { value, label })
        })
        .collect()
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
    }
}
