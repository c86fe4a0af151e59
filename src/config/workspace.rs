//! The mcp.json family inside workspace folders: `.vscode/mcp.json` (`servers` + `inputs`),
//! `.mcp.json` and `.cursor/mcp.json` (`mcpServers`). All are read as JSONC (comments, trailing
//! commas); a syntax error names the file, line and column.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{ConfigError, Layer, Scope, Source};

/// The files read in each folder, highest precedence first.
pub const FILES: &[&str] = &[".vscode/mcp.json", ".mcp.json", ".cursor/mcp.json"];

/// Parses JSONC text; errors say line and column.
pub fn parse_jsonc(text: &str) -> Result<Value, String> {
    let options = jsonc_parser::ParseOptions::default();
    jsonc_parser::parse_to_serde_value::<Value>(text, &options).map_err(|e| {
        format!(
            "line {}, column {}: {}",
            e.line_display(),
            e.column_display(),
            e.kind()
        )
    })
}

/// Reads one file as a layer; a missing file is `None`.
pub fn read(
    path: &Path,
    scope: Scope,
    folder: Option<PathBuf>,
) -> Result<Option<Layer>, ConfigError> {
    let source = Source::File(path.display().to_string());
    let text = match super::file::read_small_file(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ConfigError {
                origin: source,
                server: None,
                message: format!("cannot read the file: {e}"),
            });
        }
    };
    let value = parse_jsonc(&text).map_err(|message| ConfigError {
        origin: source.clone(),
        server: None,
        message,
    })?;
    Ok(Some(Layer {
        source,
        value,
        scope,
        folder,
    }))
}

/// Every workspace file of every folder, folder by folder, in precedence order.
pub fn layers(folders: &[PathBuf]) -> (Vec<Layer>, Vec<ConfigError>) {
    let mut layers = Vec::new();
    let mut errors = Vec::new();
    for folder in folders {
        for file in FILES {
            match read(&folder.join(file), Scope::Workspace, Some(folder.clone())) {
                Ok(Some(layer)) => layers.push(layer),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
    }
    (layers, errors)
}

/// Where the person's own file lives, if a home or XDG directory is known.
pub fn user_config_path() -> Option<PathBuf> {
    Some(crate::paths::config_dir()?.join("mcp.json"))
}

/// Every file the configuration may come from, for change watching.
pub fn watched_files(folders: &[PathBuf]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = folders
        .iter()
        .flat_map(|f| FILES.iter().map(move |n| f.join(n)))
        .collect();
    files.extend(user_config_path());
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonc_comments_and_trailing_commas() {
        let v = parse_jsonc(
            "{\n // a comment\n \"servers\": {\"a\": {\"command\": \"x\",},}, /* more */\n}",
        )
        .unwrap();
        assert_eq!(v["servers"]["a"]["command"], "x");
        let e = parse_jsonc("{\n  \"servers\": {\n    \"a\": {\"command\" \"x\"}\n}").unwrap_err();
        assert!(e.starts_with("line 3, column"), "{e}");
        assert_eq!(parse_jsonc("").unwrap(), Value::Null);
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
            let _ = parse_jsonc(&text);
        }

        /// Plain JSON objects read the same through the JSONC parser.
        #[test]
        fn json_is_jsonc(map in proptest::collection::btree_map("[a-z]{1,5}", "[ -~]{0,8}", 0..5)) {
            let json = serde_json::to_string(&map).unwrap();
            proptest::prop_assert_eq!(parse_jsonc(&json).unwrap(), serde_json::to_value(&map).unwrap());
        }
    }
}
