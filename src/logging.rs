//! Logging: to stderr or a file, never stdout (stdout is the LSP channel). The filter uses the
//! `RUST_LOG` syntax, from `--log-level`, `MCP_SIDECAR_LOG` or `RUST_LOG`, default `info`.

use std::path::Path;

use tracing_subscriber::EnvFilter;

pub fn init(filter: Option<&str>, file: Option<&Path>) -> anyhow::Result<()> {
    let filter = filter
        .map(str::to_string)
        .or_else(|| std::env::var("MCP_SIDECAR_LOG").ok())
        .or_else(|| std::env::var("RUST_LOG").ok())
        .unwrap_or_else(|| "info".into());
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
