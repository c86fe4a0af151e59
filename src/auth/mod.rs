//! Signing in to a server that answers `401` (OAuth 2.1), the parts that know no rmcp: the
//! browser step ([`SignIn`]: "send the person to this authorization URL"), the loopback listener
//! that receives the redirect ([`callback`]), the credentials store ([`tokens`]) and each
//! server's sign-in state ([`status`]).
//!
//! The flow itself (discovery, registration, PKCE, the token exchange with its `state` and `iss`
//! checks, refresh, step-up) is rmcp's, driven from `mcp/http/auth.rs`: it asks a [`SignIn`] to
//! open the authorization URL and waits on a [`callback::Listener`] for the redirect. The
//! conformance client's [`SignIn`] follows the URL with a plain GET (the suite's authorization
//! server approves at once); the editor's ([`prompt::EditorSignIn`]) asks the person first, with
//! the same URL consent as URL-mode elicitation, and opens the browser.

pub mod callback;
pub mod prompt;
pub mod status;
pub mod tokens;

use futures::future::BoxFuture;

/// One browser step: where the person goes, and where the redirect comes back.
#[derive(Debug, Clone)]
pub struct BrowserStep {
    /// The server's name.
    pub server: String,
    /// The authorization server's host.
    pub host: String,
    /// The full authorization URL.
    pub url: String,
    /// The loopback redirect URI (`http://127.0.0.1:PORT/callback`).
    pub redirect_uri: String,
}

/// How a browser step ended without a redirect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// The person dismissed it.
    Cancelled,
    /// It could not be done (a sentence: the browser could not be opened...).
    Failed(String),
}

/// The person's side of a sign-in: the question, and the browser step.
pub trait SignIn: Send + Sync {
    /// "<server> needs you to sign in at <host>": Sign in (`true`) or Not now.
    fn confirm<'a>(&'a self, server: &'a str, host: &'a str) -> BoxFuture<'a, bool>;

    /// Takes the person (or a headless stand-in) to `step.url`. `Ok(None)`: the browser was
    /// sent there and the redirect goes to the loopback listener (the flow waits for it, and
    /// drops this future when it comes); `Ok(Some(address))`: the person pasted the address
    /// they were redirected to (a browser that cannot reach this machine's loopback).
    fn authorize<'a>(
        &'a self,
        step: &'a BrowserStep,
    ) -> BoxFuture<'a, Result<Option<String>, Stopped>>;

    /// Whether the grants it brings are kept in the credentials store (the one-shot
    /// conformance client keeps none).
    fn keeps_grants(&self) -> bool {
        true
    }
}
