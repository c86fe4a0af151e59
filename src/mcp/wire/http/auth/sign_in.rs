//! One server's sign-in ([`Authority`]): the authorization code through the person's browser
//! (from a `401`'s challenge), a machine client's client credentials, and a step-up to more
//! scopes (from a `403 insufficient_scope`). A request that waited while another one signed in
//! does not start a sign-in of its own.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, WWWAuthenticateParams,
};
use tokio::sync::{Mutex, OnceCell};

use super::grant::FileStore;
use super::{Client, HttpError, HumanClock, SignInSource, discover, failed, words};
use crate::auth::callback::Listener;
use crate::auth::status::{Need, Status, host_of};
use crate::auth::tokens::TokenFile;
use crate::auth::{BrowserStep, SignIn, Stopped};
use crate::config::{OAuthGrant, OAuthSpec};

/// How long the browser step may take.
const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// The client name sent with Dynamic Client Registration.
const CLIENT_NAME: &str = "mcp-sidecar";

/// One server's sign-in state, shared by the transport's clones of [`Signed`](super::Signed).
pub(super) struct Authority {
    server: Arc<str>,
    url: url::Url,
    shown: String,
    oauth: OAuthSpec,
    sign_in: SignInSource,
    /// rmcp's client, made (with its manager) before the first request.
    auth: OnceCell<AuthClient<Client>>,
    store: Option<TokenFile>,
    /// The redirect URI of the last sign-in (a step-up must use the registered one).
    redirect_uri: parking_lot::Mutex<Option<String>>,
    /// Counts the sign-ins, so a request that waited for another's sign-in does not start its
    /// own.
    rounds: std::sync::atomic::AtomicU64,
    /// What the supervisor, the commands and `listServers` see of this sign-in.
    status: Arc<Status>,
    /// The server's human time: while a person signs in, its deadlines wait.
    clock: Arc<HumanClock>,
}

impl Authority {
    /// `keep_grants`: whether grants go to the credentials file (else they live in memory).
    pub(super) fn new(
        client: &Client,
        oauth: OAuthSpec,
        sign_in: SignInSource,
        keep_grants: bool,
        status: Arc<Status>,
        clock: Arc<HumanClock>,
    ) -> Authority {
        let link = &client.link;
        let store = keep_grants
            .then(|| TokenFile::for_server(link.url.as_str(), oauth.client_id.as_deref()))
            .flatten();
        Authority {
            server: link.server.clone(),
            url: link.url.clone(),
            shown: link.shown.clone(),
            oauth,
            sign_in,
            auth: OnceCell::new(),
            store,
            redirect_uri: parking_lot::Mutex::default(),
            rounds: Default::default(),
            status,
            clock,
        }
    }

    /// rmcp's client around `client`; the first call makes it and puts a stored grant to use.
    pub(super) async fn client(&self, client: &Client) -> Result<&AuthClient<Client>, HttpError> {
        self.auth
            .get_or_try_init(|| async {
                let manager = new_manager(&self.url, self.store.as_ref(), &self.status).await?;
                let auth = AuthClient::new(client.clone(), manager);
                self.load_stored(&auth.auth_manager).await;
                Ok(auth)
            })
            .await
            .map_err(failed)
    }

    /// How many sign-ins this server went through: a request notes it before it is sent, so
    /// that it does not start a sign-in of its own after waiting for another's.
    pub(super) fn rounds(&self) -> u64 {
        self.rounds.load(Ordering::SeqCst)
    }

    /// Before the first request: a stored grant is put to use (rmcp checks its issuer).
    async fn load_stored(&self, manager: &Mutex<AuthorizationManager>) {
        let has_grant = self
            .store
            .as_ref()
            .is_some_and(|f| matches!(f.load(), Ok(Some(_))));
        if !has_grant {
            return;
        }
        if let Err(e) = manager.lock().await.initialize_from_store().await {
            tracing::warn!(server = %self.server, "the stored sign-in could not be used: {}", words(&e));
        }
    }

    /// The person's side of the sign-in; without one, `asked` says what the server wanted.
    fn browser(&self, asked: &str) -> Result<Arc<dyn SignIn>, String> {
        (self.sign_in)().ok_or_else(|| {
            let message = format!(
                "{} {asked}; nothing here can show a sign-in (OAuth), so put the credentials in the server's \"headers\"",
                self.shown
            );
            self.status.need(Need {
                message: message.clone(),
                cancelled: false,
            });
            message
        })
    }

    /// The sign-in at `host` did not happen: the server needs one (`why` says more).
    fn needs(&self, host: &str, why: Option<String>, cancelled: bool) -> String {
        let message = match why {
            Some(why) => format!("needs you to sign in at {host}: {why}"),
            None => format!("needs you to sign in at {host}"),
        };
        self.status.need(Need {
            message: message.clone(),
            cancelled,
        });
        format!("{} {message}", self.server)
    }

    /// When another request's sign-in ran while this one waited: go again, unless that one
    /// ended with a sign-in still needed.
    fn after_other(&self) -> Result<(), String> {
        match self.status.needed() {
            Some(need) => Err(format!("{} {}", self.server, need.message)),
            None => Ok(()),
        }
    }

    /// The whole authorization-code flow, from the `401`'s challenge.
    pub(super) async fn sign_in(
        &self,
        manager: &Mutex<AuthorizationManager>,
        challenge: &str,
        seen: u64,
    ) -> Result<(), String> {
        if self.oauth.grant == OAuthGrant::ClientCredentials {
            return self.client_credentials(manager, challenge, seen).await;
        }
        let mut guard = manager.lock().await;
        if self.rounds.load(Ordering::SeqCst) != seen {
            return self.after_other();
        }
        let browser = self.browser(&format!(
            "requires authorization (HTTP 401 Unauthorized; it asks for {challenge})"
        ))?;
        let requested = self.status.take_requested();
        if !requested && let Some(need) = self.status.needed() {
            // Declined (or failed) since this connection began: not asked again until the
            // person signs in or restarts the server.
            return Err(format!("{} {}", self.server, need.message));
        }
        let mut manager = std::mem::replace(
            &mut *guard,
            new_manager(&self.url, self.store.as_ref(), &self.status).await?,
        );
        let resolution = match discover(&manager, Some(challenge)).await {
            Ok(r) => r,
            Err(e) => {
                *guard = manager;
                return Err(format!(
                    "could not find how to sign in to {}: {}",
                    self.shown,
                    words(&e)
                ));
            }
        };
        let host = resolution
            .metadata
            .issuer
            .as_deref()
            .and_then(host_of)
            .or_else(|| host_of(&resolution.metadata.authorization_endpoint))
            .unwrap_or_else(|| self.shown.clone());
        self.status.set_host(&host);
        manager.set_metadata(resolution.metadata);
        let _busy = self.clock.busy();
        if !requested && !browser.confirm(&self.server, &host).await {
            *guard = manager;
            self.rounds.fetch_add(1, Ordering::SeqCst);
            tracing::info!(server = %self.server, "sign-in: not now");
            return Err(self.needs(&host, None, true));
        }
        let listener = match Listener::bind(self.oauth.callback_port.unwrap_or(0)).await {
            Ok(listener) => listener,
            Err(e) => {
                *guard = manager;
                self.rounds.fetch_add(1, Ordering::SeqCst);
                return Err(self.needs(&host, Some(e), false));
            }
        };
        let redirect_uri = listener.redirect_uri();
        let mut request = AuthorizationRequest::new(redirect_uri.clone())
            .with_client_name(CLIENT_NAME)
            .with_challenge(challenge)
            .with_initial_scope_selection();
        if let Some(id) = &self.oauth.client_id {
            request = request.with_preregistered_client(id);
            if let Some(secret) = &self.oauth.client_secret {
                request = request.with_client_secret(secret);
            }
        }
        if let Some(cimd) = &self.oauth.client_metadata_url {
            request = request.with_client_metadata_url(cimd);
        }
        let session = match AuthorizationSession::new(manager, request).await {
            Ok(session) => session,
            Err((manager, e)) => {
                *guard = manager;
                return Err(format!(
                    "could not start signing in to {}: {}",
                    self.shown,
                    words(&e)
                ));
            }
        };
        *self.redirect_uri.lock() = Some(redirect_uri.clone());
        let step = BrowserStep {
            server: self.server.to_string(),
            host: host.clone(),
            url: session.get_authorization_url().to_owned(),
            redirect_uri,
        };
        let outcome = match browse(&*browser, &step, listener).await {
            Ok(redirect) => session
                .handle_callback_url(&redirect)
                .await
                .map(|_| ())
                .map_err(|e| {
                    let why = format!("signing in to {} failed: {}", self.shown, words(&e));
                    self.needs(&host, Some(why), false)
                }),
            Err((why, cancelled)) => Err(self.needs(&host, Some(why), cancelled)),
        };
        *guard = session.auth_manager;
        self.rounds.fetch_add(1, Ordering::SeqCst);
        match &outcome {
            Ok(()) => tracing::info!(server = %self.server, "signed in"),
            Err(e) => tracing::warn!(server = %self.server, "{e}"),
        }
        outcome
    }

    /// A machine client (`grant: "client_credentials"`): the token straight from the token
    /// endpoint, no browser. The `resource` is the server's URL.
    async fn client_credentials(
        &self,
        manager: &Mutex<AuthorizationManager>,
        challenge: &str,
        seen: u64,
    ) -> Result<(), String> {
        let mut manager = manager.lock().await;
        if self.rounds.load(Ordering::SeqCst) != seen {
            return self.after_other();
        }
        self.rounds.fetch_add(1, Ordering::SeqCst);
        let (Some(client_id), Some(client_secret)) =
            (&self.oauth.client_id, &self.oauth.client_secret)
        else {
            return Err("\"oauth\": client credentials need a clientId and a clientSecret".into());
        };
        let fail = |e: AuthError| format!("signing in to {} failed: {}", self.shown, words(&e));
        let resolution = discover(&manager, Some(challenge)).await.map_err(fail)?;
        manager.set_metadata(resolution.metadata);
        let scopes = WWWAuthenticateParams::parse(challenge, &self.url)
            .scope
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let mut resource = self.url.clone();
        resource.set_fragment(None);
        let config = ClientCredentialsConfig::ClientSecret {
            client_id: client_id.clone(),
            client_secret: client_secret.clone(),
            scopes,
            resource: Some(resource.to_string()),
        };
        manager
            .configure_client_credentials(&config)
            .map_err(fail)?;
        manager
            .exchange_client_credentials(&config)
            .await
            .map_err(fail)?;
        tracing::info!(server = %self.server, "signed in (client credentials)");
        Ok(())
    }

    /// A `403 insufficient_scope`: authorize again with the union of the scopes.
    pub(super) async fn step_up(
        &self,
        manager: &Mutex<AuthorizationManager>,
        challenge: &str,
        seen: u64,
    ) -> Result<(), String> {
        let params = WWWAuthenticateParams::parse(challenge, &self.url);
        let Some(scope) = params.scope.filter(|s| !s.trim().is_empty()) else {
            return Err(format!(
                "{} refused the credentials (HTTP 403 Forbidden, insufficient scope) without saying which scope it needs",
                self.shown
            ));
        };
        let manager = manager.lock().await;
        if self.rounds.load(Ordering::SeqCst) != seen {
            return self.after_other();
        }
        let browser = self.browser(&format!(
            "refused the credentials (HTTP 403 Forbidden, insufficient scope; it asks for {challenge})"
        ))?;
        self.rounds.fetch_add(1, Ordering::SeqCst);
        let redirect_uri = self.redirect_uri.lock().clone();
        let listener = Listener::bind_for(redirect_uri.as_deref()).await?;
        let url = manager.request_scope_upgrade(&scope).await.map_err(|e| {
            format!(
                "{} needs more access ({scope}) than was granted: {}",
                self.shown,
                words(&e)
            )
        })?;
        let host = self.status.host().unwrap_or_else(|| self.shown.clone());
        let _busy = self.clock.busy();
        let step = BrowserStep {
            server: self.server.to_string(),
            host: host.clone(),
            url,
            redirect_uri: listener.redirect_uri(),
        };
        let redirect = browse(&*browser, &step, listener)
            .await
            .map_err(|(why, _)| format!("{} needs more access ({scope}): {why}", self.shown))?;
        let callback = AuthorizationCallback::from_redirect_url(&redirect)
            .map_err(|e| format!("signing in to {} failed: {}", self.shown, words(&e)))?;
        manager
            .exchange_code_for_token_with_issuer(
                &callback.code,
                &callback.csrf_token,
                callback.issuer.as_deref(),
            )
            .await
            .map_err(|e| format!("signing in to {} failed: {}", self.shown, words(&e)))?;
        Ok(())
    }
}

/// A manager for `url`, with the credentials file as its store when there is one.
async fn new_manager(
    url: &url::Url,
    store: Option<&TokenFile>,
    status: &Arc<Status>,
) -> Result<AuthorizationManager, String> {
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| format!("could not set up sign-in for {url}: {}", words(&e)))?;
    if let Some(file) = store {
        manager.set_credential_store(FileStore::new(file.clone(), status.clone()));
    }
    Ok(manager)
}

/// The browser step and the wait for the redirect, together: the browser step may end before
/// the redirect comes (a browser was opened), with it (the person pasted the address), or
/// never (the editor's waiting prompt, dropped here, which closes it, when the redirect
/// arrives); when it stops, the sign-in stops at once. `Err`: why, and whether it was a
/// cancel (a dismissal or the deadline) rather than a failure.
async fn browse(
    browser: &dyn SignIn,
    step: &BrowserStep,
    listener: Listener,
) -> Result<String, (String, bool)> {
    let waiting = listener.wait(SIGN_IN_TIMEOUT);
    tokio::pin!(waiting);
    tokio::select! {
        done = browser.authorize(step) => match done {
            Ok(Some(pasted)) => Ok(pasted),
            Ok(None) => waiting.await.map_err(|e| (e, true)),
            Err(Stopped::Cancelled) => Err(("the sign-in was cancelled".to_owned(), true)),
            Err(Stopped::Failed(why)) => Err((why, false)),
        },
        redirect = &mut waiting => redirect.map_err(|e| (e, true)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::wire::http::auth::Signed;
    use crate::mcp::wire::http::{Options, transport};

    /// A sign-in state for a server on a closed port, with no browser step.
    async fn no_browser(grant: OAuthGrant) -> (Signed, Arc<Mutex<AuthorizationManager>>) {
        let url = url::Url::parse("http://127.0.0.1:1/mcp").unwrap();
        let options = Options {
            timeout: Duration::from_secs(5),
            max_message_bytes: 1 << 20,
            oauth: OAuthSpec::default(),
            sign_in: Arc::new(|| None),
            status: Arc::default(),
            clock: Arc::default(),
        };
        let t = transport("t", &url, &Default::default(), options, Arc::default()).unwrap();
        let client = Client {
            http: t.link.http.clone(),
            link: t.link.clone(),
        };
        let oauth = OAuthSpec {
            grant,
            ..OAuthSpec::default()
        };
        let signed = Signed::new(
            client,
            oauth,
            Arc::new(|| None),
            false,
            Arc::default(),
            Arc::default(),
        );
        let manager = signed.auth().await.ok().unwrap().auth_manager.clone();
        (signed, manager)
    }

    #[tokio::test]
    async fn without_a_browser_step_the_status_says_what_the_server_asked() {
        let (signed, manager) = no_browser(OAuthGrant::AuthorizationCode).await;
        let a = &signed.authority;
        let e = a
            .sign_in(&manager, "Bearer realm=\"x\"", 0)
            .await
            .unwrap_err();
        assert!(
            e.contains(
                "requires authorization (HTTP 401 Unauthorized; it asks for Bearer realm=\"x\")"
            ) && e.contains("nothing here can show a sign-in"),
            "{e}"
        );
        let e = a
            .step_up(
                &manager,
                "Bearer error=\"insufficient_scope\", scope=\"admin\"",
                0,
            )
            .await
            .unwrap_err();
        assert!(
            e.contains("HTTP 403 Forbidden, insufficient scope") && e.contains("scope=\"admin\""),
            "{e}"
        );
        // A step-up needs to know the scope to ask for.
        let e = a
            .step_up(&manager, "Bearer error=\"insufficient_scope\"", 0)
            .await
            .unwrap_err();
        assert!(e.contains("without saying which scope"), "{e}");
    }

    #[tokio::test]
    async fn client_credentials_need_the_client_and_its_secret() {
        let (signed, manager) = no_browser(OAuthGrant::ClientCredentials).await;
        let e = signed
            .authority
            .sign_in(&manager, "Bearer", 0)
            .await
            .unwrap_err();
        assert!(e.contains("need a clientId and a clientSecret"), "{e}");
    }

    #[tokio::test]
    async fn a_request_that_waited_for_another_sign_in_does_not_start_its_own() {
        let (signed, manager) = no_browser(OAuthGrant::AuthorizationCode).await;
        signed.authority.rounds.store(1, Ordering::SeqCst);
        // Seen before the other sign-in: nothing to do (no browser step was needed for it).
        assert_eq!(
            signed.authority.sign_in(&manager, "Bearer", 0).await,
            Ok(())
        );
    }
}
