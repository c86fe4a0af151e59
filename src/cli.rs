//! Command-line arguments. Kept by hand: a few subcommands and options do not need a parser
//! crate.

use std::path::PathBuf;

use crate::demo::Era;

#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// LSP over stdio (the default).
    Lsp,
    /// The built-in demo MCP server over stdio.
    DemoServer {
        era: Era,
    },
    /// A headless client for the official conformance suite, against the server at this URL.
    Conformance {
        url: String,
    },
    /// Check the configuration files, the servers' commands and the state directory.
    Doctor {
        folders: Vec<PathBuf>,
    },
    /// The stdio MCP server agents launch: a bridge to the gateway of this workspace's sidecar.
    Gateway {
        server: Option<String>,
    },
    Version,
    Help,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    pub command: Command,
    pub log_file: Option<PathBuf>,
    pub log_level: Option<String>,
}

pub const USAGE: &str = "\
usage: mcp-sidecar [lsp] [--log-file PATH] [--log-level FILTER]
       mcp-sidecar demo-server [--era both|legacy|modern] [--log-level FILTER]
       mcp-sidecar conformance URL [--log-level FILTER]
       mcp-sidecar doctor [FOLDER...]
       mcp-sidecar gateway [--server NAME] [--log-level FILTER]
       mcp-sidecar --version | --help

  lsp           serve the Language Server Protocol on stdin/stdout (default)
  demo-server   serve the built-in demo MCP server on stdin/stdout
  conformance   run one scenario of the MCP conformance suite against URL, headless (reads
                MCP_CONFORMANCE_SCENARIO, _PROTOCOL_VERSION, _CONTEXT; exit 0 = success)
  doctor        check the person's own mcp.json, the workspace files of each FOLDER (default: the
                current directory), each server's command and the state directory; print what
                was found (exit 1 = a problem was found)
  gateway       serve MCP on stdin/stdout to an agent, through the gateway of the sidecar
                serving this workspace (found through $MCP_SIDECAR_GATEWAY and
                $MCP_SIDECAR_GATEWAY_TOKEN, else the discovery file of the current directory or
                a folder above it); --server NAME: that server's tools only, unprefixed
  --version     print the version and the MCP protocol revisions spoken
  --log-file    append logs to PATH instead of stderr (stdout is never used for logs)
  --log-level   RUST_LOG-style filter, e.g. info or mcp_sidecar=debug (default: $MCP_SIDECAR_LOG,
                $RUST_LOG, then info)
";

pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Args, String> {
    let mut parsed = Args {
        command: Command::Lsp,
        log_file: None,
        log_level: None,
    };
    let mut era = Era::default();
    let mut subcommand: Option<String> = None;
    let mut operand: Option<String> = None;
    let mut folders: Vec<PathBuf> = Vec::new();
    let mut server: Option<String> = None;
    let mut iter = args.into_iter();
    while let Some(arg) = iter.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| iter.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag.as_str() {
            "--version" | "-V" => parsed.command = Command::Version,
            "--help" | "-h" => parsed.command = Command::Help,
            "--log-file" => parsed.log_file = Some(PathBuf::from(value("--log-file")?)),
            "--log-level" => parsed.log_level = Some(value("--log-level")?),
            "--era" => era = value("--era")?.parse()?,
            "--server" if subcommand.as_deref() == Some("gateway") => {
                server = Some(value("--server")?)
            }
            "lsp" | "demo-server" | "conformance" | "doctor" | "gateway"
                if subcommand.is_none() =>
            {
                subcommand = Some(arg)
            }
            folder if subcommand.as_deref() == Some("doctor") && !folder.starts_with('-') => {
                folders.push(PathBuf::from(folder))
            }
            // The conformance suite appends the server URL.
            url if subcommand.as_deref() == Some("conformance")
                && operand.is_none()
                && !url.starts_with('-') =>
            {
                operand = Some(arg)
            }
            // vscode-languageclient appends it for the stdio transport; stdio is the only one.
            "--stdio" => {}
            other => return Err(format!("unknown argument \"{other}\"")),
        }
    }
    if matches!(parsed.command, Command::Lsp) {
        parsed.command = match subcommand.as_deref() {
            Some("demo-server") => Command::DemoServer { era },
            Some("conformance") => Command::Conformance {
                url: operand.ok_or("conformance needs the server URL")?,
            },
            Some("gateway") => Command::Gateway { server },
            Some("doctor") => Command::Doctor {
                folders: if folders.is_empty() {
                    vec![PathBuf::from(".")]
                } else {
                    folders
                },
            },
            _ => Command::Lsp,
        };
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Args, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(p(&[]).unwrap().command, Command::Lsp);
        assert_eq!(p(&["lsp"]).unwrap().command, Command::Lsp);
        assert_eq!(p(&["--version"]).unwrap().command, Command::Version);
        let a = p(&["lsp", "--log-file", "/tmp/x.log", "--log-level=debug"]).unwrap();
        assert_eq!(a.log_file, Some(PathBuf::from("/tmp/x.log")));
        assert_eq!(a.log_level.as_deref(), Some("debug"));
        assert_eq!(
            p(&["demo-server", "--era", "legacy"]).unwrap().command,
            Command::DemoServer { era: Era::Legacy }
        );
        assert!(p(&["--bogus"]).is_err());
        assert_eq!(p(&["lsp", "--stdio"]).unwrap().command, Command::Lsp);
        assert!(p(&["--log-file"]).is_err());
        assert!(p(&["demo-server", "--era", "future"]).is_err());
        assert_eq!(
            p(&["conformance", "http://localhost:1/mcp"])
                .unwrap()
                .command,
            Command::Conformance {
                url: "http://localhost:1/mcp".into()
            }
        );
        assert!(p(&["conformance"]).is_err());
        assert!(p(&["conformance", "http://a", "http://b"]).is_err());
        assert_eq!(
            p(&["doctor"]).unwrap().command,
            Command::Doctor {
                folders: vec![PathBuf::from(".")]
            }
        );
        assert_eq!(
            p(&["doctor", "/a", "/b"]).unwrap().command,
            Command::Doctor {
                folders: vec![PathBuf::from("/a"), PathBuf::from("/b")]
            }
        );
        assert!(p(&["doctor", "--bogus"]).is_err());
        assert_eq!(
            p(&["gateway"]).unwrap().command,
            Command::Gateway { server: None }
        );
        assert_eq!(
            p(&["gateway", "--server", "demo"]).unwrap().command,
            Command::Gateway {
                server: Some("demo".into())
            }
        );
        assert!(p(&["--server", "demo"]).is_err());
    }
}
