//! Variables in server definitions: `${workspaceFolder}`, `${workspaceFolderBasename}`,
//! `${userHome}`, `${env:NAME}`, `${NAME}`, `${NAME:-default}` and `${input:id}` (asked once per
//! editor session; see `inputs_needed`). An unknown variable is an error, never an empty string.

use std::collections::HashMap;
use std::path::PathBuf;

/// What variables expand to for one definition.
#[derive(Debug, Clone, Default)]
pub struct VarContext {
    /// The folder the defining file belongs to (or the first workspace folder).
    pub workspace_folder: Option<PathBuf>,
    pub inputs: HashMap<String, String>,
    /// Leave an unanswered `${input:id}` as it is written instead of failing (for the trust
    /// subject, and for servers whose inputs are asked only once they may start).
    pub keep_missing_inputs: bool,
}

/// Expands every `${...}` in `text`.
pub fn expand(text: &str, cx: &VarContext) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("\"{text}\" has an unclosed ${{"))?;
        out.push_str(&value_of(&after[..end], cx)?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn value_of(var: &str, cx: &VarContext) -> Result<String, String> {
    let folder = || {
        cx.workspace_folder
            .clone()
            .ok_or_else(|| format!("${{{var}}} needs a workspace folder, and none is open"))
    };
    match var {
        "workspaceFolder" => Ok(folder()?.display().to_string()),
        "workspaceFolderBasename" => Ok(folder()?
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()),
        "userHome" => env("HOME").ok_or_else(|| "${userHome}: HOME is not set".to_string()),
        _ => {
            if let Some(id) = var.strip_prefix("input:") {
                return match cx.inputs.get(id) {
                    Some(value) => Ok(value.clone()),
                    None if cx.keep_missing_inputs => Ok(format!("${{input:{id}}}")),
                    None => Err(format!("${{input:{id}}} was not answered")),
                };
            }
            if let Some(name) = var.strip_prefix("env:") {
                return env(name).ok_or_else(|| format!("${{env:{name}}}: {name} is not set"));
            }
            if let Some((name, default)) = var.split_once(":-") {
                return Ok(env(name)
                    .filter(|v| !v.is_empty())
                    .unwrap_or_else(|| default.to_string()));
            }
            if !var.is_empty() && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return env(var).ok_or_else(|| format!("${{{var}}}: {var} is not set"));
            }
            Err(format!("unknown variable ${{{var}}}"))
        }
    }
}

/// The `${input:id}` ids used in `text`.
pub fn input_ids(text: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${input:") {
        let after = &rest[start + 8..];
        let Some(end) = after.find('}') else { break };
        ids.push(after[..end].to_string());
        rest = &after[end + 1..];
    }
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cx() -> VarContext {
        VarContext {
            workspace_folder: Some(PathBuf::from("/w/proj")),
            inputs: HashMap::from([("key".to_string(), "s3cret".to_string())]),
            keep_missing_inputs: false,
        }
    }

    #[test]
    fn every_form_expands() {
        // SAFETY: a variable name no other test uses.
        unsafe { std::env::set_var("MCP_SIDECAR_VARS_TEST", "v1") };
        let cases = [
            ("${workspaceFolder}/x", "/w/proj/x"),
            ("${workspaceFolderBasename}", "proj"),
            ("a${env:MCP_SIDECAR_VARS_TEST}b", "av1b"),
            ("${MCP_SIDECAR_VARS_TEST}", "v1"),
            ("${MCP_SIDECAR_UNSET_XYZ:-fallback}", "fallback"),
            ("${MCP_SIDECAR_VARS_TEST:-fallback}", "v1"),
            ("Bearer ${input:key}", "Bearer s3cret"),
            ("no vars", "no vars"),
        ];
        for (input, want) in cases {
            assert_eq!(expand(input, &cx()).unwrap(), want, "{input}");
        }
        assert!(expand("${userHome}", &cx()).is_ok());
    }

    #[test]
    fn unknown_and_unset_variables_are_errors() {
        assert!(
            expand("${nope:x}", &cx())
                .unwrap_err()
                .contains("unknown variable")
        );
        assert!(
            expand("${MCP_SIDECAR_UNSET_XYZ}", &cx())
                .unwrap_err()
                .contains("not set")
        );
        assert!(
            expand("${env:MCP_SIDECAR_UNSET_XYZ}", &cx())
                .unwrap_err()
                .contains("not set")
        );
        assert!(
            expand("${input:other}", &cx())
                .unwrap_err()
                .contains("not answered")
        );
        assert!(
            expand("${workspaceFolder", &cx())
                .unwrap_err()
                .contains("unclosed")
        );
        let none = VarContext::default();
        assert!(
            expand("${workspaceFolder}", &none)
                .unwrap_err()
                .contains("workspace folder")
        );
        assert_eq!(input_ids("${input:a} and ${input:b}"), ["a", "b"]);
        let keep = VarContext {
            keep_missing_inputs: true,
            ..cx()
        };
        assert_eq!(
            expand("${input:other} ${input:key}", &keep).unwrap(),
            "${input:other} s3cret"
        );
    }

    proptest::proptest! {
        /// Text without `${` comes back unchanged; nothing panics on arbitrary text.
        #[test]
        fn plain_text_is_unchanged(text in "[^$]{0,40}") {
            proptest::prop_assert_eq!(expand(&text, &cx()).unwrap(), text);
        }

        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,40}") {
            let _ = expand(&text, &cx());
            let _ = input_ids(&text);
        }
    }
}
