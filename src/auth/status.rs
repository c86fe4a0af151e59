//! One server's sign-in as the rest of the sidecar sees it: whether a sign-in is needed (and
//! why: the `needsAuth` message), whether the person asked for one (`mcp-sidecar.signIn`: no
//! "Sign in / Not now" question then), and what `listServers` shows (`auth`). The transport
//! writes it; the supervisor watches it (a running server that loses its sign-in is ended and
//! waits in `needsAuth`); nothing in it is a token.

use parking_lot::Mutex;
use tokio::sync::watch;

use crate::contract::AuthSummary;

/// Why a server needs a sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// The `needsAuth` message: "needs you to sign in at <host>…".
    pub message: String,
    /// The person dismissed the sign-in (or it timed out), as opposed to it failing.
    pub cancelled: bool,
}

#[derive(Default)]
struct Inner {
    /// The server asked for a sign-in, or a grant is stored: `listServers` shows `auth`.
    uses_oauth: bool,
    requested: bool,
    summary: AuthSummary,
    /// The authorization server's host, once known.
    host: Option<String>,
}

/// Shared by a server's slot and the transports of its connections.
pub struct Status {
    inner: Mutex<Inner>,
    need: watch::Sender<Option<Need>>,
}

impl Default for Status {
    fn default() -> Self {
        Status {
            inner: Mutex::default(),
            need: watch::Sender::new(None),
        }
    }
}

/// The host of an authorization server's URL (its issuer or an endpoint).
pub fn host_of(url: &str) -> Option<String> {
    url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(|h| h.trim_end_matches('.').to_owned()))
}

impl Status {
    /// The person asked to sign in: the next sign-in goes straight to the browser step.
    pub fn request(&self) {
        self.inner.lock().requested = true;
    }

    /// Whether the person asked to sign in (once: the flag is taken).
    pub fn take_requested(&self) -> bool {
        std::mem::take(&mut self.inner.lock().requested)
    }

    /// The authorization server's host is known (from discovery).
    pub fn set_host(&self, host: &str) {
        let mut inner = self.inner.lock();
        inner.uses_oauth = true;
        inner.host = Some(host.to_owned());
    }

    pub fn host(&self) -> Option<String> {
        self.inner.lock().host.clone()
    }

    /// A sign-in is needed: the server waits in `needsAuth` with this message.
    pub fn need(&self, need: Need) {
        {
            let mut inner = self.inner.lock();
            inner.uses_oauth = true;
            inner.summary.signed_in = false;
            inner.summary.expires_at = None;
        }
        self.need.send_replace(Some(need));
    }

    /// What is needed, if anything.
    pub fn needed(&self) -> Option<Need> {
        self.need.borrow().clone()
    }

    /// Forgets an earlier need (a new start asks again).
    pub fn clear_need(&self) {
        self.need.send_if_modified(|need| need.take().is_some());
    }

    /// Waits until a sign-in is needed.
    pub async fn lost(&self) -> Need {
        let mut watching = self.need.subscribe();
        loop {
            if let Some(need) = watching.borrow_and_update().clone() {
                return need;
            }
            if watching.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    /// A grant was received, refreshed or loaded.
    pub fn signed_in(&self, issuer: Option<String>, scopes: Vec<String>, expires_at: Option<u64>) {
        {
            let mut inner = self.inner.lock();
            inner.uses_oauth = true;
            if inner.host.is_none() {
                inner.host = issuer.as_deref().and_then(host_of);
            }
            inner.summary = AuthSummary {
                signed_in: true,
                issuer,
                scopes,
                expires_at,
            };
        }
        self.clear_need();
    }

    /// `listServers`' `auth`, for a server that uses OAuth.
    pub fn summary(&self) -> Option<AuthSummary> {
        let inner = self.inner.lock();
        inner.uses_oauth.then(|| inner.summary.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_need_wakes_the_watcher_and_a_sign_in_clears_it() {
        let status = std::sync::Arc::new(Status::default());
        assert_eq!(status.summary(), None, "no OAuth seen yet");
        let watcher = tokio::spawn({
            let status = status.clone();
            async move { status.lost().await }
        });
        let need = Need {
            message: "needs you to sign in at a.example".into(),
            cancelled: true,
        };
        status.need(need.clone());
        assert_eq!(watcher.await.unwrap(), need);
        assert_eq!(status.summary().map(|s| s.signed_in), Some(false));
        status.signed_in(
            Some("https://a.example".into()),
            vec!["read".into()],
            Some(9),
        );
        assert_eq!(status.needed(), None);
        let summary = status.summary().unwrap();
        assert!(summary.signed_in);
        assert_eq!(summary.expires_at, Some(9));
        assert_eq!(status.host().as_deref(), Some("a.example"));
    }

    #[test]
    fn a_request_is_taken_once() {
        let status = Status::default();
        assert!(!status.take_requested());
        status.request();
        assert!(status.take_requested());
        assert!(!status.take_requested());
    }
}
