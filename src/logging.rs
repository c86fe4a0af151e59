//! Logging: to stderr or a file, never stdout (stdout is the LSP channel). The filter uses the
//! `RUST_LOG` syntax, from `--log-level`, `MCP_SIDECAR_LOG` or `RUST_LOG`, default
//! [`DEFAULT_FILTER`].

use std::path::Path;

use tracing_subscriber::EnvFilter;

/// The default filter: rmcp logs every notification it receives at INFO (target
/// `rmcp::service`), which a chatty server turns into thousands of lines; its warnings stay.
pub const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// rmcp's DEBUG and TRACE lines print whole messages (a server's request, the sidecar's answer to
/// it: an elicitation's content, a password among them) and its OAuth module the authorization
/// code: rmcp never goes below INFO, whatever the filter asks (no answer or secret reaches the log).
const RMCP_FLOOR: &str = "rmcp=info";

/// Whether a directive (`target=level`, `level`, `target`) names rmcp or a module of it.
fn names_rmcp(directive: &str) -> bool {
    let target = directive
        .split(['=', '['])
        .next()
        .unwrap_or_default()
        .trim();
    target == "rmcp" || target.starts_with("rmcp::")
}

/// Whether a directive lets DEBUG or TRACE through (a bare target means every level).
fn below_info(directive: &str) -> bool {
    match directive.rsplit_once('=') {
        Some((_, level)) => matches!(level.trim(), "debug" | "trace"),
        None => {
            let d = directive.trim();
            matches!(d, "debug" | "trace") || names_rmcp(d)
        }
    }
}

/// The filter actually used: one that names no `rmcp` directive and asks for nothing below INFO
/// (`info`, `warn`, as editors pass by default) keeps rmcp at WARN too; otherwise the filter is
/// taken as written, except that rmcp and each of its modules stay at INFO or above (a global
/// `debug` or `trace` gets `rmcp=info` added).
pub fn effective_filter(filter: &str) -> String {
    if filter.trim().is_empty() {
        return DEFAULT_FILTER.to_string();
    }
    let mut directives = Vec::new();
    let (mut rmcp_named, mut any_below, mut global_below) = (false, false, false);
    for d in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        let lower = d.to_ascii_lowercase();
        if names_rmcp(&lower) {
            rmcp_named = true;
            if below_info(&lower) {
                let target = lower.split(['=', '[']).next().unwrap_or_default().trim();
                directives.push(format!("{target}=info"));
                continue;
            }
        } else if below_info(&lower) {
            any_below = true;
            global_below |= !lower.contains('=');
        }
        directives.push(d.to_string());
    }
    if !rmcp_named && global_below {
        directives.push(RMCP_FLOOR.to_string());
    } else if !rmcp_named && !any_below {
        directives.push("rmcp=warn".to_string());
    }
    directives.join(",")
}

pub fn init(filter: Option<&str>, file: Option<&Path>) -> anyhow::Result<()> {
    let filter = filter
        .map(str::to_string)
        .or_else(|| std::env::var("MCP_SIDECAR_LOG").ok())
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| DEFAULT_FILTER.into());
    let filter = effective_filter(&filter);
    let filter = EnvFilter::try_new(&filter)
        .map_err(|e| anyhow::anyhow!("bad log filter \"{filter}\": {e}"))?;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false);
    match file {
        Some(path) => {
            let file = open_private(path)
                .map_err(|e| anyhow::anyhow!("cannot open log file {}: {e}", path.display()))?;
            builder.with_writer(std::sync::Mutex::new(file)).try_init()
        }
        None => builder.with_writer(std::io::stderr).try_init(),
    }
    .map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))
}

/// The log file, created `0600`; one that exists is made `0600` too (it holds the servers'
/// stderr and the sidecar's events, for the person's eyes only).
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let file = options.open(path)?;
        let meta = file.metadata()?;
        if meta.is_file() && meta.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    options.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmcp_stays_at_warn_unless_the_filter_asks_for_more_and_never_goes_below_info() {
        assert_eq!(effective_filter(DEFAULT_FILTER), DEFAULT_FILTER);
        assert_eq!(effective_filter("info"), "info,rmcp=warn");
        assert_eq!(effective_filter(""), DEFAULT_FILTER);
        assert_eq!(effective_filter("debug"), "debug,rmcp=info");
        assert_eq!(effective_filter("TRACE"), "TRACE,rmcp=info");
        assert_eq!(effective_filter("info,rmcp=info"), "info,rmcp=info");
        assert_eq!(effective_filter("warn,rmcp=error"), "warn,rmcp=error");
        assert_eq!(effective_filter("mcp_sidecar=trace"), "mcp_sidecar=trace");
        assert_eq!(
            effective_filter("warn,mcp_sidecar=debug"),
            "warn,mcp_sidecar=debug"
        );
        // Asking for rmcp's (or one of its modules') DEBUG or TRACE lines does not get them.
        assert_eq!(
            effective_filter("debug,rmcp::transport::auth=trace"),
            "debug,rmcp::transport::auth=info"
        );
        assert_eq!(
            effective_filter("info,rmcp::service=debug,rmcp"),
            "info,rmcp::service=info,rmcp=info"
        );
        assert_eq!(effective_filter("rmcp[span]=trace"), "rmcp=info");
        for f in [
            "info",
            "warn",
            "debug",
            "info,rmcp=info",
            "debug,rmcp::transport::auth=trace",
            "rmcp[span]=trace",
        ] {
            assert!(EnvFilter::try_new(effective_filter(f)).is_ok(), "{f}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_log_file_is_private_whether_new_or_found() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let new = dir.path().join("new.log");
        open_private(&new).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&new), 0o600);
        let found = dir.path().join("found.log");
        std::fs::write(&found, "earlier\n").unwrap();
        std::fs::set_permissions(&found, std::fs::Permissions::from_mode(0o644)).unwrap();
        open_private(&found).unwrap();
        assert_eq!(mode(&found), 0o600);
        assert_eq!(std::fs::read_to_string(&found).unwrap(), "earlier\n");
    }
}
