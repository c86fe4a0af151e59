//! Panic guards. A bug that hostile input reaches (a server's schema, what a person types) must
//! cost one request, never the sidecar: every LSP handler, every server's supervisor task and
//! every answer to a server runs under [`catch`], which turns a panic into an error for that
//! request. This only works with unwinding panics: the release profile must not set
//! `panic = "abort"` (see `Cargo.toml`).
//!
//! A caught panic keeps only where it happened, never its message: a panic message can quote the
//! input that caused it (a typed value, a token), and that must reach neither the log nor the
//! editor.

use std::cell::RefCell;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::OnceLock;

use futures::FutureExt;

/// A caught panic: a bug in the sidecar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Panic {
    /// `file:line:column`, when the sidecar's panic hook ([`install_hook`]) saw it.
    pub location: Option<String>,
}

impl fmt::Display for Panic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(at) => write!(
                f,
                "an internal error in mcp-sidecar (a bug: panicked at {at})"
            ),
            None => write!(f, "an internal error in mcp-sidecar (a bug: it panicked)"),
        }
    }
}

thread_local! {
    /// Where the last panic on this thread happened (set by the hook, taken by `catch`). A
    /// future is polled and unwinds on one thread, so the two always meet.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `future`; a panic inside it becomes `Err`. What the future held is dropped while
/// unwinding (locks are poison-tolerant everywhere in this crate), so nothing stays half-done
/// but the request itself.
pub async fn catch<F: Future>(future: F) -> Result<F::Output, Panic> {
    LAST.with(|l| l.borrow_mut().take());
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(value) => Ok(value),
        Err(_payload) => Err(Panic {
            location: LAST.with(|l| l.borrow_mut().take()),
        }),
    }
}

/// Replaces the default panic hook (which prints the message to stderr) with one log line that
/// names the place and leaves out the message. Installed by the binary only: in-process tests
/// keep the default hook, whose messages the test harness shows.
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
        tracing::error!(
            "panicked at {} (a bug in mcp-sidecar)",
            at.as_deref().unwrap_or("an unknown place")
        );
        LAST.with(|l| *l.borrow_mut() = at);
    }));
}

/// The environment variable that injects panics, for the tests that prove the guards work.
pub const TEST_PANIC_ENV: &str = "MCP_SIDECAR_TEST_PANIC";

/// Test-only fault injection: panics if `site` is listed in `MCP_SIDECAR_TEST_PANIC`
/// (comma-separated sites, e.g. `command:mcp-sidecar.listTools,elicitation:demo`).
///
/// Why an environment variable: the guards must be shown to work in the built binary, which a
/// `#[cfg(test)]` hook never reaches (integration tests link the crate without `cfg(test)`), and a
/// cargo feature would make the tested binary differ from the shipped one. The variable is read
/// once, when the sidecar starts ([`init_test_panics`]); only whoever starts the sidecar (the
/// editor, a test) sets its environment. A workspace cannot: its `mcp.json` sets the environment
/// of the servers it defines, never the sidecar's. When it is unset this is one comparison per
/// site visit. Documented as test-only in `docs/fuzzing.md`. The panic is reported at the
/// caller (the site), as a real bug there would be.
#[track_caller]
pub fn inject(site: impl FnOnce() -> String) {
    let sites = test_panics();
    if sites.is_empty() {
        return;
    }
    let site = site();
    if sites.contains(&site) {
        panic!("injected panic at {site} ({TEST_PANIC_ENV})");
    }
}

fn test_panics() -> &'static [String] {
    static SITES: OnceLock<Vec<String>> = OnceLock::new();
    SITES.get_or_init(|| {
        let sites: Vec<String> = std::env::var(TEST_PANIC_ENV)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if !sites.is_empty() {
            tracing::warn!(
                "{TEST_PANIC_ENV} is set: panics are injected at {sites:?} (tests only)"
            );
        }
        sites
    })
}

/// Reads `MCP_SIDECAR_TEST_PANIC` now (the sidecar's start), not at the first site visited.
pub fn init_test_panics() {
    let _ = test_panics();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_an_error_and_a_value_passes_through() {
        assert_eq!(catch(async { 7 }).await, Ok(7));
        let caught = catch(async {
            let text = "2024-01-01T00:00:0é";
            // The old date-time check: a byte index inside "é".
            text.get(18..19)
                .map(str::len)
                .unwrap_or_else(|| panic!("{text}"))
        })
        .await
        .unwrap_err();
        let shown = caught.to_string();
        assert!(shown.contains("internal error in mcp-sidecar"), "{shown}");
        assert!(
            !shown.contains("2024"),
            "the panic message is not kept: {shown}"
        );
    }

    #[test]
    fn no_profile_aborts_on_panic() {
        // With `panic = "abort"` the guards would catch nothing.
        let manifest = include_str!("../Cargo.toml");
        assert!(
            !manifest
                .lines()
                .any(|l| l.trim_start().starts_with("panic") && l.contains("abort")),
            "Cargo.toml sets panic = \"abort\""
        );
    }

    #[test]
    fn nothing_is_injected_without_the_variable() {
        // The test process does not set MCP_SIDECAR_TEST_PANIC.
        inject(|| "command:mcp-sidecar.listServers".into());
    }
}
