//! What the trust question shows of a definition: the command line as written, each word that
//! is not plain quoted so that none can pass for another, and what the definition loosens.

use std::path::PathBuf;

use serde_json::Value;

/// The definition as written, for the trust question: no value of any variable, env entry or
/// header is shown (references such as `${env:TOKEN}` are shown as written). Every word a
/// workspace chose is shown so that it cannot pass for another: see [`shell_word`].
pub(super) fn summary(obj: &serde_json::Map<String, Value>) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let names = |key: &str| -> Vec<String> {
        obj.get(key)
            .and_then(Value::as_object)
            .map(|m| m.keys().map(|k| shell_word(k)).collect())
            .unwrap_or_default()
    };
    let mut line = if let Some(command) = obj.get("command") {
        std::iter::once(text(command))
            .chain(
                obj.get("args")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(text),
            )
            .map(|word| shell_word(&word))
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        obj.get("url")
            .map(|u| shell_word(&text(u)))
            .unwrap_or_default()
    };
    let env = names("env");
    if !env.is_empty() {
        line.push_str(&format!(" (env: {})", env.join(", ")));
    }
    if let Some(file) = obj.get("envFile") {
        line.push_str(&format!(" (env file: {})", shell_word(&text(file))));
    }
    let headers = names("headers");
    if !headers.is_empty() {
        line.push_str(&format!(" (headers: {})", headers.join(", ")));
    }
    if let Some(cwd) = obj.get("cwd") {
        line.push_str(&format!(" (in {})", shell_word(&text(cwd))));
    }
    line
}

/// Whether the screen would not show `c` as itself: a control, invisible or bidirectional
/// character ([`crate::contract::shown`] decides which).
fn hidden(c: char) -> bool {
    let mut buf = [0u8; 4];
    let one = c.encode_utf8(&mut buf);
    c != ' ' && crate::contract::shown::line(one, 1) != *one
}

/// Runs of spaces longer than this are shown counted (`⟨300 spaces⟩`), so padding cannot push
/// the rest of a command line out of sight.
const SPACE_RUN: usize = 8;

/// One word of a command line as the trust question shows it, shell style: a plain word
/// (`[A-Za-z0-9_./:=@%+,-]` and whole `${...}` references) as it is; any other in single
/// quotes; one holding a control, invisible or bidirectional character as `$'...'` with that
/// character escaped (`\n`, `\e`, `\u202E`). A long run of spaces is counted, not drawn.
pub fn shell_word(word: &str) -> String {
    let plain_char = |c: char| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c);
    let plain = !word.is_empty() && {
        let mut rest = word;
        let mut ok = true;
        while let Some(c) = rest.chars().next() {
            if let Some(after) = rest.strip_prefix("${")
                && let Some(end) = after.find('}')
                && end > 0
                && after[..end].chars().all(|c| plain_char(c) || c == '-')
            {
                rest = &after[end + 1..];
            } else if plain_char(c) {
                rest = &rest[c.len_utf8()..];
            } else {
                ok = false;
                break;
            }
        }
        ok
    };
    if plain {
        return word.to_string();
    }
    let ansi_c = word.chars().any(hidden);
    let mut out = String::with_capacity(word.len() + 2);
    out.push_str(if ansi_c { "$'" } else { "'" });
    let mut chars = word.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' {
            let mut run = 1;
            while chars.peek() == Some(&' ') {
                chars.next();
                run += 1;
            }
            if run > SPACE_RUN {
                out.push_str(&format!("⟨{run} spaces⟩"));
            } else {
                out.extend(std::iter::repeat_n(' ', run));
            }
            continue;
        }
        match c {
            '\'' if ansi_c => out.push_str("\\'"),
            '\'' => out.push_str("'\\''"),
            '\\' if ansi_c => out.push_str("\\\\"),
            '\n' if ansi_c => out.push_str("\\n"),
            '\r' if ansi_c => out.push_str("\\r"),
            '\t' if ansi_c => out.push_str("\\t"),
            '\u{1B}' if ansi_c => out.push_str("\\e"),
            c if hidden(c) => {
                if (c as u32) < 0x100 {
                    out.push_str(&format!("\\x{:02X}", c as u32));
                } else {
                    out.push_str(&format!("\\u{:04X}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// The per-server settings that loosen what the sidecar does, in words (`roots`: the paths of
/// a `roots` filter that names them, if any).
pub(super) fn asks_for(
    sampling: crate::config::sampling::Policy,
    elicitation: crate::config::elicitation::Policy,
    roots: Option<&[PathBuf]>,
    folders: &[PathBuf],
) -> Vec<String> {
    let mut out = Vec::new();
    match sampling {
        crate::config::sampling::Policy::Auto => {
            out.push("sampling without review (sampling.policy: auto)".to_string())
        }
        crate::config::sampling::Policy::ReviewResponse => out.push(
            "sampling requests sent unreviewed (sampling.policy: reviewResponse)".to_string(),
        ),
        _ => {}
    }
    if elicitation == crate::config::elicitation::Policy::AcceptDefaults {
        out.push(
            "questions answered with defaults unasked (elicitation.policy: acceptDefaults)".into(),
        );
    }
    if let Some(paths) = roots {
        let outside: Vec<String> = paths
            .iter()
            .filter(|p| !folders.iter().any(|f| p.starts_with(f)))
            .map(|p| p.display().to_string())
            .collect();
        let listed: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        out.push(if outside.is_empty() {
            format!("roots: {}", listed.join(", "))
        } else {
            format!(
                "roots: {} (outside the workspace folders: {})",
                listed.join(", "),
                outside.join(", ")
            )
        });
    }
    out
}
