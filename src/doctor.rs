//! `mcp-sidecar doctor`: checks what the sidecar would read and use, outside any editor, and
//! prints what it found. The configuration files are read by the same code as the sidecar's
//! (`config::layers` / `config::resolve`); no server is started and no value of a variable, env
//! entry or header is printed.

use std::fmt::Write as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::config::{self, Context, EditorScopes, TransportSpec};

/// The protocol revisions line printed by `--version`.
pub fn version_text() -> String {
    format!(
        "mcp-sidecar {}\nMCP protocol revisions: {}",
        env!("CARGO_PKG_VERSION"),
        config::SUPPORTED_VERSIONS.join(", ")
    )
}

/// The report and whether it found a problem.
pub struct Report {
    pub text: String,
    pub problems: usize,
}

/// Checks the person's own `mcp.json`, the workspace files of `folders`, each server's command
/// and the state directory.
pub fn run(folders: &[PathBuf]) -> Report {
    let mut out = String::new();
    let mut problems = 0usize;
    let mut problem = |out: &mut String, line: String| {
        problems += 1;
        let _ = writeln!(out, "  problem: {line}");
    };
    let _ = writeln!(out, "{}", version_text());

    let _ = writeln!(out, "\nconfiguration files:");
    let mut files: Vec<PathBuf> = config::user_config_path().into_iter().collect();
    for folder in folders {
        files.extend(config::workspace::FILES.iter().map(|f| folder.join(f)));
    }
    for file in &files {
        let state = if file.is_file() { "found" } else { "absent" };
        let _ = writeln!(out, "  {state}: {}", file.display());
    }

    let (layers, errors) = config::layers(&serde_json::Value::Null, folders);
    let cx = Context {
        folders: folders.to_vec(),
        editor_scopes: EditorScopes::Own,
        ..Context::default()
    };
    let (resolved, more) = config::resolve(&layers, &cx);
    for e in errors.iter().chain(&more) {
        problem(&mut out, e.to_string());
    }
    for w in &resolved.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }

    let _ = writeln!(out, "\nservers:");
    if resolved.servers.is_empty() {
        let _ = writeln!(out, "  none defined");
    }
    for server in &resolved.servers {
        let spec = match server {
            Ok(spec) => spec,
            Err(e) => {
                problem(&mut out, e.to_string());
                continue;
            }
        };
        let mut notes = Vec::new();
        if spec.disabled {
            notes.push("disabled".to_string());
        }
        if spec.trust.is_some() {
            notes.push("from the workspace: runs once trusted".to_string());
        }
        if !spec.missing_inputs.is_empty() {
            notes.push(format!("asks for {}", spec.missing_inputs.join(", ")));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        match &spec.transport {
            TransportSpec::Stdio {
                command, env, cwd, ..
            } => match config::resolve_executable(command, env, cwd.as_deref()) {
                Some(path) => {
                    let _ = writeln!(
                        out,
                        "  ok: \"{}\" runs {}{notes} [{}]",
                        spec.name,
                        path.display(),
                        spec.source
                    );
                }
                None if spec.disabled => {
                    let _ = writeln!(
                        out,
                        "  ok: \"{}\": command \"{command}\" not found{notes} [{}]",
                        spec.name, spec.source
                    );
                }
                None => problem(
                    &mut out,
                    format!(
                        "\"{}\": command \"{command}\" is not an executable file{}{notes} [{}]",
                        spec.name,
                        if command.contains('/') {
                            ""
                        } else {
                            " on its PATH"
                        },
                        spec.source
                    ),
                ),
            },
            TransportSpec::Http { url, .. } => {
                // Only scheme, host and port: a path or query may carry a token.
                let _ = writeln!(
                    out,
                    "  ok: \"{}\" is an HTTP server at {}{notes} [{}]",
                    spec.name,
                    url.origin().ascii_serialization(),
                    spec.source
                );
            }
        }
    }

    let _ = writeln!(out, "\nstate directory:");
    match crate::store::state_dir() {
        None => problem(
            &mut out,
            "neither XDG_STATE_HOME nor HOME is set: trust decisions cannot be kept".into(),
        ),
        Some(dir) => match check_private(&dir) {
            Ok(Some(line)) => {
                let _ = writeln!(out, "  ok: {line}");
            }
            Ok(None) => {
                let _ = writeln!(
                    out,
                    "  ok: {} does not exist yet (created 0700 on first use)",
                    dir.display()
                );
            }
            Err(lines) => {
                for line in lines {
                    problem(&mut out, line);
                }
            }
        },
    }

    let _ = writeln!(
        out,
        "\n{}",
        match problems {
            0 => "no problem found".to_string(),
            1 => "1 problem found".to_string(),
            n => format!("{n} problems found"),
        }
    );
    Report {
        text: out,
        problems,
    }
}

/// The state directory must be ours and `0700`, its files ours and `0600`. `Ok(None)`: absent.
fn check_private(dir: &Path) -> Result<Option<String>, Vec<String>> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(vec![format!("{}: {e}", dir.display())]),
    };
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut bad = Vec::new();
    let mode = meta.permissions().mode() & 0o777;
    if !meta.is_dir() {
        bad.push(format!("{} is not a directory", dir.display()));
    } else if meta.uid() != me {
        bad.push(format!("{} belongs to another user", dir.display()));
    } else if mode & 0o077 != 0 {
        bad.push(format!(
            "{} is {mode:o}, others may read it: run chmod 700 {}",
            dir.display(),
            dir.display()
        ));
    }
    let mut files = 0;
    if bad.is_empty()
        && let Ok(entries) = std::fs::read_dir(dir)
    {
        for entry in entries.flatten() {
            let Ok(m) = entry.metadata() else { continue };
            files += 1;
            let mode = m.permissions().mode() & 0o777;
            if m.uid() != me {
                bad.push(format!(
                    "{} belongs to another user",
                    entry.path().display()
                ));
            } else if mode & 0o077 != 0 {
                bad.push(format!(
                    "{} is {mode:o}, others may read it: run chmod 600 {}",
                    entry.path().display(),
                    entry.path().display()
                ));
            }
        }
    }
    if bad.is_empty() {
        Ok(Some(format!(
            "{} is 700 and private ({files} file{})",
            dir.display(),
            if files == 1 { "" } else { "s" }
        )))
    } else {
        Err(bad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_names_every_revision() {
        let text = version_text();
        assert!(text.starts_with(concat!("mcp-sidecar ", env!("CARGO_PKG_VERSION"))));
        for v in config::SUPPORTED_VERSIONS {
            assert!(text.contains(v), "{v} missing from {text}");
        }
    }

    #[test]
    fn state_dir_permissions() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("mcp-sidecar");
        assert_eq!(check_private(&dir), Ok(None));
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = check_private(&dir).unwrap_err();
        assert!(err[0].contains("chmod 700"), "{err:?}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        std::fs::write(dir.join("trust.json"), "[]").unwrap();
        std::fs::set_permissions(
            dir.join("trust.json"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        let err = check_private(&dir).unwrap_err();
        assert!(err[0].contains("chmod 600"), "{err:?}");
        std::fs::set_permissions(
            dir.join("trust.json"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        assert!(check_private(&dir).unwrap().unwrap().contains("(1 file)"));
    }
}
