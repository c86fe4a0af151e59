//! Signing in to a server that answers `401` (OAuth 2.1), the parts that know no rmcp: the
//! browser step ([`SignIn`]: "send the person to this authorization URL"), the loopback listener
//! that receives the redirect ([`callback`]), and the credentials file ([`tokens`]).
//!
//! The flow itself (discovery, registration, PKCE, the token exchange with its `state` and `iss`
//! checks, refresh, step-up) is rmcp's, driven from `mcp/http/auth.rs`: it asks a [`SignIn`] to
//! open the authorization URL and waits on a [`callback::Listener`] for the redirect. The
//! conformance client's [`SignIn`] follows the URL with a plain GET (the suite's authorization
//! server approves at once); the editor's (phase 2) asks the person first and opens the browser.

pub mod callback;
pub mod keyring;
pub mod tokens;

use futures::future::BoxFuture;

/// The browser step of a sign-in: take the person (or a headless stand-in) to `url`, the
/// authorization server's page; the redirect back reaches the flow's loopback listener.
pub trait SignIn: Send + Sync {
    /// `server` is the server's name, `url` the full authorization URL. `Err` is a sentence
    /// (the person said no, the browser could not be opened).
    fn authorize(&self, server: &str, url: &str) -> BoxFuture<'_, Result<(), String>>;

    /// Whether the grants it brings are kept in the credentials file (the one-shot conformance
    /// client keeps none).
    fn keeps_grants(&self) -> bool {
        true
    }
}
