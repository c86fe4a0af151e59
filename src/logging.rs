//! Logging: to stderr or a file, never stdout (stdout is the LSP channel). The filter uses the
//! `RUST_LOG` syntax, from `--log-level`, `MCP_SIDECAR_LOG` or `RUST_LOG`, default
//! [`DEFAULT_FILTER`].

use std::path::Path;

use tracing_subscriber::EnvFilter;

/// The default filter: rmcp logs every notification it receives at INFO (target
/// `rmcp::service`), which a chatty server turns into thousands of lines; its warnings stay.
pub const DEFAULT_FILTER: &str = "info,rmcp=warn";

/// rmcp's OAuth module logs the authorization code at DEBUG: it never goes below INFO, whatever
/// the filter asks (secrets never reach the log).
const NEVER_BELOW_INFO: &str = "rmcp::transport::auth=info";

/// The filter actually used: one that names no `rmcp` directive and asks for nothing below INFO
/// (`info`, `warn`, as editors pass by default) keeps rmcp at WARN too; `debug`, `trace` or an
/// explicit `rmcp=...` is taken as written, except that rmcp's OAuth module stays at INFO.
pub fn effective_filter(filter: &str) -> String {
    let lower = filter.to_ascii_lowercase();
    let filter = if lower.contains("rmcp") || lower.contains("debug") || lower.contains("trace") {
        // Directives naming the OAuth module are dropped: the cap below is the only one.
        filter
            .split(',')
            .filter(|d| {
                !d.trim()
                    .to_ascii_lowercase()
                    .starts_with("rmcp::transport::auth")
            })
            .collect::<Vec<_>>()
            .join(",")
    } else if filter.trim().is_empty() {
        DEFAULT_FILTER.to_string()
    } else {
        format!("{filter},rmcp=warn")
    };
    format!("{filter},{NEVER_BELOW_INFO}")
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
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| anyhow::anyhow!("cannot open log file {}: {e}", path.display()))?;
            builder.with_writer(std::sync::Mutex::new(file)).try_init()
        }
        None => builder.with_writer(std::io::stderr).try_init(),
    }
    .map_err(|e| anyhow::anyhow!("cannot set up logging: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rmcp_stays_at_warn_unless_the_filter_asks_for_more() {
        let cap = ",rmcp::transport::auth=info";
        assert_eq!(
            effective_filter(DEFAULT_FILTER),
            format!("{DEFAULT_FILTER}{cap}")
        );
        assert_eq!(effective_filter("info"), format!("info,rmcp=warn{cap}"));
        assert_eq!(effective_filter(""), format!("{DEFAULT_FILTER}{cap}"));
        assert_eq!(effective_filter("debug"), format!("debug{cap}"));
        assert_eq!(
            effective_filter("info,rmcp=info"),
            format!("info,rmcp=info{cap}")
        );
        assert_eq!(
            effective_filter("mcp_sidecar=trace"),
            format!("mcp_sidecar=trace{cap}")
        );
        // Asking for the OAuth module's debug lines does not get them.
        assert_eq!(
            effective_filter("debug,rmcp::transport::auth=trace"),
            format!("debug{cap}")
        );
        for f in [
            "info",
            "warn",
            "debug",
            "info,rmcp=info",
            "debug,rmcp::transport::auth=trace",
        ] {
            assert!(EnvFilter::try_new(effective_filter(f)).is_ok(), "{f}");
        }
    }
}
