//! RFC 6570 URI templates, all four levels, as MCP resource templates use them: a template is
//! parsed once ([`Template::parse`]), names its variables ([`Template::variables`]) and expands
//! with their values ([`Template::expand`]). The editors ask the sidecar for both
//! (`mcp-sidecar.expandUriTemplate`), so a template expands alike everywhere.
//!
//! Pure: no I/O, no protocol types. Templates come from servers, values from people, so the work is
//! bounded: a template past [`MAX_TEMPLATE`] bytes and an expansion past [`MAX_URI`] are errors.
//! An expression outside RFC 6570's grammar is an error that says what is wrong and where; a
//! literal character the URI syntax does not allow is pct-encoded, as §3.1 says.

use std::fmt::Write as _;

/// The longest template accepted, in bytes.
pub const MAX_TEMPLATE: usize = 8 * 1024;
/// The longest URI an expansion may make, in bytes.
pub const MAX_URI: usize = 64 * 1024;
/// How much of a template an error quotes, in characters.
const QUOTED: usize = 40;

/// Why a template cannot be parsed or expanded. `at` is a character position in the template,
/// counted from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("the URI template is {0} bytes long; at most {MAX_TEMPLATE} are accepted")]
    TemplateTooLong(usize),
    #[error("the \"{{\" at character {at} of the URI template is not closed by a \"}}\"")]
    Unclosed { at: usize },
    #[error("the \"}}\" at character {at} of the URI template has no \"{{\" before it")]
    Unopened { at: usize },
    #[error(
        "the URI template has a \"{{\" at character {at} inside the expression that starts at character {start}"
    )]
    Nested { at: usize, start: usize },
    #[error("the expression \"{{}}\" at character {at} of the URI template names no variable")]
    Empty { at: usize },
    #[error(
        "the expression \"{expression}\" at character {at} of the URI template uses the operator \"{operator}\", which RFC 6570 reserves for future extensions"
    )]
    ReservedOperator {
        at: usize,
        expression: String,
        operator: char,
    },
    #[error(
        "\"{name}\" in the expression \"{expression}\" at character {at} of the URI template is not a variable name (letters, digits, \"_\" and %XX, with single dots between them)"
    )]
    BadName {
        at: usize,
        expression: String,
        name: String,
    },
    #[error(
        "\"{spec}\" in the expression \"{expression}\" at character {at} of the URI template has a bad modifier: {why}"
    )]
    BadModifier {
        at: usize,
        expression: String,
        spec: String,
        why: &'static str,
    },
    #[error(
        "the variable \"{name}\" has a list or an object as its value, which its prefix modifier \":{length}\" cannot shorten (RFC 6570 §2.4.1)"
    )]
    PrefixOfComposite { name: String, length: usize },
    #[error("the expanded URI would be longer than {MAX_URI} bytes")]
    UriTooLong,
}

/// A variable's value: a string, a list, or an associative array (its pairs in order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    String(&'a str),
    List(&'a [String]),
    Map(&'a [(String, String)]),
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    parts: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Literal text, already as it goes into the URI (§3.1).
    Literal(String),
    Expression {
        operator: Operator,
        variables: Vec<VarSpec>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct VarSpec {
    name: String,
    modifier: Modifier,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Modifier {
    None,
    /// `:n`, 1 to 9999 characters.
    Prefix(usize),
    /// `*`.
    Explode,
}

/// An expression's operator: how its values are joined and encoded (RFC 6570 Appendix A).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operator {
    Simple,
    Reserved,
    Fragment,
    Label,
    Path,
    Param,
    Query,
    Continuation,
}

impl Operator {
    fn from_char(c: char) -> Option<Operator> {
        Some(match c {
            '+' => Operator::Reserved,
            '#' => Operator::Fragment,
            '.' => Operator::Label,
            '/' => Operator::Path,
            ';' => Operator::Param,
            '?' => Operator::Query,
            '&' => Operator::Continuation,
            _ => return None,
        })
    }

    /// What goes before the first defined value.
    fn first(self) -> &'static str {
        match self {
            Operator::Simple | Operator::Reserved => "",
            Operator::Fragment => "#",
            Operator::Label => ".",
            Operator::Path => "/",
            Operator::Param => ";",
            Operator::Query => "?",
            Operator::Continuation => "&",
        }
    }

    /// What goes between values.
    fn separator(self) -> char {
        match self {
            Operator::Simple | Operator::Reserved | Operator::Fragment => ',',
            Operator::Label => '.',
            Operator::Path => '/',
            Operator::Param => ';',
            Operator::Query | Operator::Continuation => '&',
        }
    }

    /// Whether values are written as `name=value`.
    fn named(self) -> bool {
        matches!(
            self,
            Operator::Param | Operator::Query | Operator::Continuation
        )
    }

    /// What follows a name whose value is empty.
    fn if_empty(self) -> &'static str {
        match self {
            Operator::Query | Operator::Continuation => "=",
            _ => "",
        }
    }

    /// Whether reserved characters and pct-encoded triplets pass unencoded (`+`, `#`).
    fn reserved(self) -> bool {
        matches!(self, Operator::Reserved | Operator::Fragment)
    }
}

/// RFC 3986 `unreserved`.
fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

/// RFC 3986 `reserved` (gen-delims and sub-delims).
fn is_reserved(c: char) -> bool {
    matches!(
        c,
        ':' | '/'
            | '?'
            | '#'
            | '['
            | ']'
            | '@'
            | '!'
            | '$'
            | '&'
            | '\''
            | '('
            | ')'
            | '*'
            | '+'
            | ','
            | ';'
            | '='
    )
}

/// Whether `text` starts with a pct-encoded triplet (`%` and two hex digits).
fn starts_with_triplet(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() >= 3 && b[0] == b'%' && b[1].is_ascii_hexdigit() && b[2].is_ascii_hexdigit()
}

/// Appends `text` pct-encoded (UTF-8, upper-case hex) except for unreserved characters and,
/// when `reserved`, reserved characters and pct-encoded triplets.
fn encode(out: &mut String, text: &str, reserved: bool) {
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if reserved && starts_with_triplet(rest) {
            out.push_str(&rest[..3]);
            rest = &rest[3..];
            continue;
        }
        if is_unreserved(c) || (reserved && is_reserved(c)) {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{byte:02X}");
            }
        }
        rest = &rest[c.len_utf8()..];
    }
}

/// The first `length` characters of `value` (a pct-encoded triplet counts as one character
/// where triplets pass unencoded, so none is split).
fn prefix(value: &str, length: usize, reserved: bool) -> &str {
    let mut rest = value;
    for _ in 0..length {
        let Some(c) = rest.chars().next() else {
            break;
        };
        let step = if reserved && starts_with_triplet(rest) {
            3
        } else {
            c.len_utf8()
        };
        rest = &rest[step..];
    }
    &value[..value.len() - rest.len()]
}

/// `text` quoted in an error: at most [`QUOTED`] characters.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// RFC 6570 `varname`: varchars (ALPHA, DIGIT, `_`, pct-encoded) with single dots between.
fn is_varname(name: &str) -> bool {
    let mut rest = name;
    let mut after_char = false;
    while let Some(c) = rest.chars().next() {
        if c == '.' {
            if !after_char {
                return false;
            }
            after_char = false;
            rest = &rest[1..];
        } else if c.is_ascii_alphanumeric() || c == '_' {
            after_char = true;
            rest = &rest[1..];
        } else if starts_with_triplet(rest) {
            after_char = true;
            rest = &rest[3..];
        } else {
            return false;
        }
    }
    after_char
}

/// One `varspec`: its name and modifier. `expression` and `at` are for the error.
fn varspec(spec: &str, expression: &str, at: usize) -> Result<VarSpec, Error> {
    let bad_modifier = |why| Error::BadModifier {
        at,
        expression: quoted(expression),
        spec: quoted(spec),
        why,
    };
    let split = spec.find([':', '*']).unwrap_or(spec.len());
    let (name, modifier) = spec.split_at(split);
    if !is_varname(name) {
        return Err(Error::BadName {
            at,
            expression: quoted(expression),
            name: quoted(name),
        });
    }
    let modifier =
        match modifier {
            "" => Modifier::None,
            "*" => Modifier::Explode,
            m if m.starts_with('*') => return Err(bad_modifier("nothing may follow \"*\"")),
            m if m.contains('*') => {
                return Err(bad_modifier(
                    "a variable takes a prefix \":n\" or an explode \"*\", not both",
                ));
            }
            m => {
                let digits = &m[1..];
                let valid = (1..=4).contains(&digits.len())
                    && digits.bytes().all(|b| b.is_ascii_digit())
                    && !digits.starts_with('0');
                if !valid {
                    return Err(bad_modifier(
                        "a prefix length is a whole number from 1 to 9999",
                    ));
                }
                Modifier::Prefix(digits.parse().map_err(|_| {
                    bad_modifier("a prefix length is a whole number from 1 to 9999")
                })?)
            }
        };
    Ok(VarSpec {
        name: name.to_owned(),
        modifier,
    })
}

/// One expression, `body` being what is between its braces; `at` is the position of its `{`.
fn expression(body: &str, at: usize) -> Result<Part, Error> {
    let whole = format!("{{{body}}}");
    let Some(first) = body.chars().next() else {
        return Err(Error::Empty { at });
    };
    if matches!(first, '=' | ',' | '!' | '@' | '|') {
        return Err(Error::ReservedOperator {
            at,
            expression: quoted(&whole),
            operator: first,
        });
    }
    let (operator, list) = match Operator::from_char(first) {
        Some(operator) => (operator, &body[1..]),
        None => (Operator::Simple, body),
    };
    let variables = list
        .split(',')
        .map(|spec| varspec(spec, &whole, at))
        .collect::<Result<_, _>>()?;
    Ok(Part::Expression {
        operator,
        variables,
    })
}

impl Template {
    /// Parses a template: its expressions checked against RFC 6570's grammar, its literals
    /// encoded as they go into a URI.
    pub fn parse(text: &str) -> Result<Template, Error> {
        if text.len() > MAX_TEMPLATE {
            return Err(Error::TemplateTooLong(text.len()));
        }
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut rest = text;
        // The character position of `rest`, from 1.
        let mut at = 1;
        while let Some(c) = rest.chars().next() {
            match c {
                '{' => {
                    let inner = &rest[1..];
                    let end = inner.find(['{', '}']);
                    let Some(end) = end.filter(|&e| inner.as_bytes()[e] == b'}') else {
                        return Err(match end {
                            Some(nested) => Error::Nested {
                                at: at + 1 + inner[..nested].chars().count(),
                                start: at,
                            },
                            None => Error::Unclosed { at },
                        });
                    };
                    if !literal.is_empty() {
                        parts.push(Part::Literal(std::mem::take(&mut literal)));
                    }
                    let body = &inner[..end];
                    parts.push(expression(body, at)?);
                    at += body.chars().count() + 2;
                    rest = &inner[end + 1..];
                }
                '}' => return Err(Error::Unopened { at }),
                _ => {
                    // A literal: a triplet, or one character, encoded where the URI syntax
                    // wants it (§3.1).
                    let take = if starts_with_triplet(rest) {
                        3
                    } else {
                        c.len_utf8()
                    };
                    encode(&mut literal, &rest[..take], true);
                    at += rest[..take].chars().count();
                    rest = &rest[take..];
                }
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Literal(literal));
        }
        Ok(Template { parts })
    }

    /// The variables' names in order of first appearance, each once.
    pub fn variables(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            if let Part::Expression { variables, .. } = part {
                for var in variables {
                    if !names.contains(&var.name.as_str()) {
                        names.push(&var.name);
                    }
                }
            }
        }
        names
    }

    /// The URI: each expression expanded with the value `value(name)` gives (`None`: undefined,
    /// as is an empty list or object; RFC 6570 §3.2.1 says how each expands).
    pub fn expand<'v>(&self, value: impl Fn(&str) -> Option<Value<'v>>) -> Result<String, Error> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(text) => out.push_str(text),
                Part::Expression {
                    operator,
                    variables,
                } => {
                    let mut first = true;
                    for var in variables {
                        let defined = value(&var.name).filter(|v| match v {
                            Value::String(_) => true,
                            Value::List(items) => !items.is_empty(),
                            Value::Map(pairs) => !pairs.is_empty(),
                        });
                        let Some(defined) = defined else {
                            continue;
                        };
                        if first {
                            out.push_str(operator.first());
                            first = false;
                        } else {
                            out.push(operator.separator());
                        }
                        expand_one(&mut out, *operator, var, defined)?;
                    }
                }
            }
            if out.len() > MAX_URI {
                return Err(Error::UriTooLong);
            }
        }
        Ok(out)
    }
}

/// Appends one defined variable's expansion (RFC 6570 Appendix A).
fn expand_one(out: &mut String, op: Operator, var: &VarSpec, value: Value) -> Result<(), Error> {
    let reserved = op.reserved();
    let name = var.name.as_str();
    // `name` then `=`, or what follows a name whose value is empty.
    let named = |out: &mut String, name: &str, empty: bool| {
        out.push_str(name);
        out.push_str(if empty { op.if_empty() } else { "=" });
    };
    let check = |out: &String| {
        if out.len() > MAX_URI {
            Err(Error::UriTooLong)
        } else {
            Ok(())
        }
    };
    match (value, var.modifier) {
        (Value::String(text), modifier) => {
            if op.named() {
                named(out, name, text.is_empty());
            }
            let text = match modifier {
                Modifier::Prefix(length) => prefix(text, length, reserved),
                _ => text,
            };
            encode(out, text, reserved);
        }
        (Value::List(_) | Value::Map(_), Modifier::Prefix(length)) => {
            return Err(Error::PrefixOfComposite {
                name: quoted(name),
                length,
            });
        }
        (Value::List(items), Modifier::None) => {
            if op.named() {
                named(out, name, false);
            }
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(out, item, reserved);
                check(out)?;
            }
        }
        (Value::Map(pairs), Modifier::None) => {
            if op.named() {
                named(out, name, false);
            }
            for (i, (key, item)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                encode(out, key, reserved);
                out.push(',');
                encode(out, item, reserved);
                check(out)?;
            }
        }
        (Value::List(items), Modifier::Explode) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(op.separator());
                }
                if op.named() {
                    named(out, name, item.is_empty());
                }
                encode(out, item, reserved);
                check(out)?;
            }
        }
        (Value::Map(pairs), Modifier::Explode) => {
            for (i, (key, item)) in pairs.iter().enumerate() {
                if i > 0 {
                    out.push(op.separator());
                }
                encode(out, key, reserved);
                if op.named() {
                    out.push_str(if item.is_empty() { op.if_empty() } else { "=" });
                } else {
                    out.push('=');
                }
                encode(out, item, reserved);
                check(out)?;
            }
        }
    }
    check(out)
}

#[cfg(test)]
mod tests;
