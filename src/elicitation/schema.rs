//! The 2025-11-25 restricted schema as a small typed form model: a flat object of primitive
//! fields. Anything outside that subset is refused with a message naming the property.

use serde_json::{Map, Value};

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
/// The longest text shown to the person, in characters; longer text is cut with [`CUT`].
pub const MAX_MESSAGE: usize = 2000;
/// ... for a field's title (or its name when it has none).
pub const MAX_TITLE: usize = 200;
/// ... for a field's description.
pub const MAX_DESCRIPTION: usize = 500;
/// ... for a choice's label (and its value where that is shown).
pub const MAX_LABEL: usize = 200;
/// What a cut text ends with.
pub const CUT: &str = "… (truncated)";

/// `text` cut to at most `max` characters (on a character boundary), with [`CUT`] after it.
pub fn clip(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => text.into(),
        Some((at, _)) => format!("{}{CUT}", &text[..at]).into(),
    }
}

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
        Some(title) => Some(clip(&title, MAX_TITLE).into_owned()),
        // A name too long to show is shown cut, as the title.
        None if name.chars().count() > MAX_TITLE => Some(clip(name, MAX_TITLE).into_owned()),
        None => None,
    };
    let field = Field {
        name: name.to_string(),
        title,
        description: text("description").map(|d| clip(&d, MAX_DESCRIPTION).into_owned()),
        required,
        default: p.get("default").cloned().filter(|d| !d.is_null()),
        kind,
    };
    if let Some(default) = &field.default
        && super::input::check_value(&field, default).is_err()
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
            label: clip(&c.label, MAX_LABEL).into_owned(),
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
