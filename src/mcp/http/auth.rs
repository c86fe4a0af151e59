//! Sign-in over rmcp's `auth`: the HTTP client under rmcp's worker ([`Signed`]) is rmcp's
//! [`AuthClient`] (the token on every request, one silent refresh when the server rejects it)
//! around the sidecar's own client, plus what rmcp leaves to its caller:
//!
//! - a `401` with its `WWW-Authenticate` challenge starts a sign-in ([`Authority::sign_in`]):
//!   rmcp discovers the metadata from the challenge (RFC 9728, then RFC 8414 / OpenID), picks the
//!   registration (the server's `oauth.clientId`/`clientSecret`, else `oauth.clientMetadataUrl`
//!   where the authorization server takes Client ID Metadata Documents, else Dynamic Client
//!   Registration), the scopes (the challenge's, else the resource metadata's, else none) and
//!   builds the authorization URL (PKCE S256, `resource`); the feature layer's
//!   [`SignIn`](crate::auth::SignIn) takes the person there, the loopback
//!   [`Listener`](crate::auth::callback::Listener) receives the redirect, and rmcp checks its
//!   `state` and `iss` and exchanges the code;
//! - a `403` with `insufficient_scope` asks for the union of the scopes (step-up, rmcp's count
//!   bounds it), through the same browser step;
//! - the request is then sent again, at most [`MAX_ROUNDS`] times.
//!
//! Grants are kept in the credentials file (`auth::tokens`) through [`FileStore`], keyed by the
//! server URL, the issuer and the client id. No token is logged or put in an error.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationRequest,
    AuthorizationSession, ClientCredentialsConfig, CredentialStore, StoredCredentials,
    WWWAuthenticateParams,
};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use tokio::sync::{Mutex, OnceCell};

use super::{Client, HttpError};
use crate::auth::SignIn;
use crate::auth::callback::Listener;
use crate::auth::tokens::TokenFile;
use crate::config::{OAuthGrant, OAuthSpec};

/// Sign-ins (or step-ups) one request may go through before its error stands.
pub(super) const MAX_ROUNDS: usize = 3;
/// How long the browser step may take.
const SIGN_IN_TIMEOUT: Duration = Duration::from_secs(300);
/// The client name sent with Dynamic Client Registration.
const CLIENT_NAME: &str = "mcp-sidecar";

/// Where the browser step goes: the editor's (or the conformance client's) [`SignIn`], if any.
pub type SignInSource = Arc<dyn Fn() -> Option<Arc<dyn SignIn>> + Send + Sync>;

/// One server's sign-in state, shared by the transport's clones of [`Signed`].
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
}

/// The client under rmcp's worker: rmcp's [`AuthClient`] around the sidecar's [`Client`], and
/// the sign-in when the server asks for one.
#[derive(Clone)]
pub(super) struct Signed {
    client: Client,
    authority: Arc<Authority>,
}

/// A manager for `url`, with the credentials file as its store when there is one.
async fn new_manager(
    url: &url::Url,
    store: Option<&TokenFile>,
) -> Result<AuthorizationManager, String> {
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| format!("could not set up sign-in for {url}: {}", words(&e)))?;
    if let Some(file) = store {
        manager.set_credential_store(FileStore { file: file.clone() });
    }
    Ok(manager)
}

fn failed(reason: String) -> HttpError {
    StreamableHttpError::Auth(AuthError::AuthorizationFailed(reason))
}

impl Signed {
    /// `keep_grants`: whether grants go to the credentials file (else they live in memory).
    pub(super) fn new(
        client: Client,
        oauth: OAuthSpec,
        sign_in: SignInSource,
        keep_grants: bool,
    ) -> Signed {
        let link = client.link.clone();
        let store = keep_grants
            .then(|| TokenFile::for_server(link.url.as_str(), oauth.client_id.as_deref()))
            .flatten();
        let authority = Arc::new(Authority {
            server: link.server.clone(),
            url: link.url.clone(),
            shown: link.shown.clone(),
            oauth,
            sign_in,
            auth: OnceCell::new(),
            store,
            redirect_uri: parking_lot::Mutex::default(),
            rounds: Default::default(),
        });
        Signed { client, authority }
    }

    /// rmcp's client; the first call makes it and puts a stored grant to use.
    async fn auth(&self) -> Result<&AuthClient<Client>, HttpError> {
        let authority = &self.authority;
        authority
            .auth
            .get_or_try_init(|| async {
                let manager = new_manager(&authority.url, authority.store.as_ref()).await?;
                let auth = AuthClient::new(self.client.clone(), manager);
                authority.load_stored(&auth.auth_manager).await;
                Ok(auth)
            })
            .await
            .map_err(failed)
    }

    /// Runs `call`, signing in (or stepping up) when the server asks, then trying again.
    async fn signed<'a, T, F, Fut>(&'a self, call: F) -> Result<T, HttpError>
    where
        F: Fn(&'a AuthClient<Client>) -> Fut,
        Fut: Future<Output = Result<T, HttpError>>,
    {
        let auth = self.auth().await?;
        let mut rounds = 0;
        loop {
            let seen = self.authority.rounds.load(Ordering::SeqCst);
            let result = call(auth).await;
            let outcome = match &result {
                Err(StreamableHttpError::AuthRequired(c)) if rounds < MAX_ROUNDS => {
                    let manager = &auth.auth_manager;
                    self.authority
                        .sign_in(manager, &c.www_authenticate_header, seen)
                        .await
                }
                Err(StreamableHttpError::InsufficientScope(c)) if rounds < MAX_ROUNDS => {
                    let manager = &auth.auth_manager;
                    self.authority
                        .step_up(manager, &c.www_authenticate_header, seen)
                        .await
                }
                _ => return result,
            };
            if let Err(reason) = outcome {
                return Err(failed(reason));
            }
            rounds += 1;
        }
    }
}

impl Authority {
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

    /// The browser step; without one, `asked` says what the server wanted.
    fn browser(&self, asked: &str) -> Result<Arc<dyn SignIn>, String> {
        (self.sign_in)().ok_or_else(|| {
            format!(
                "{} {asked}; signing in (OAuth) from the editor is not available yet, so put the credentials in the server's \"headers\"",
                self.shown
            )
        })
    }

    /// The whole authorization-code flow, from the `401`'s challenge.
    async fn sign_in(
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
            return Ok(());
        }
        let browser = self.browser(&format!(
            "requires authorization (HTTP 401 Unauthorized; it asks for {challenge})"
        ))?;
        let listener = Listener::bind(0).await?;
        let redirect_uri = listener.redirect_uri();
        let mut manager = std::mem::replace(
            &mut *guard,
            new_manager(&self.url, self.store.as_ref()).await?,
        );
        let resolution = match manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
        {
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
        manager.set_metadata(resolution.metadata);
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
        *self.redirect_uri.lock() = Some(redirect_uri);
        let redirect = browse(
            &*browser,
            &self.server,
            session.get_authorization_url(),
            listener,
        )
        .await;
        let outcome = match redirect {
            Ok(redirect) => session
                .handle_callback_url(&redirect)
                .await
                .map(|_| ())
                .map_err(|e| format!("signing in to {} failed: {}", self.shown, words(&e))),
            Err(e) => Err(e),
        };
        *guard = session.auth_manager;
        self.rounds.fetch_add(1, Ordering::SeqCst);
        if outcome.is_ok() {
            tracing::info!(server = %self.server, "signed in");
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
            return Ok(());
        }
        self.rounds.fetch_add(1, Ordering::SeqCst);
        let (Some(client_id), Some(client_secret)) =
            (&self.oauth.client_id, &self.oauth.client_secret)
        else {
            return Err("\"oauth\": client credentials need a clientId and a clientSecret".into());
        };
        let fail = |e: AuthError| format!("signing in to {} failed: {}", self.shown, words(&e));
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
            .map_err(fail)?;
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
    async fn step_up(
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
            return Ok(());
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
        let redirect = browse(&*browser, &self.server, &url, listener).await?;
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

/// The browser step and the wait for the redirect, together: the browser step may return
/// before the redirect comes (a browser was opened) or after it (the headless one follows the
/// redirect itself); when it fails, the sign-in fails at once.
async fn browse(
    browser: &dyn SignIn,
    server: &str,
    url: &str,
    listener: Listener,
) -> Result<String, String> {
    let waiting = listener.wait(SIGN_IN_TIMEOUT);
    tokio::pin!(waiting);
    tokio::select! {
        opened = browser.authorize(server, url) => {
            opened?;
            waiting.await
        }
        redirect = &mut waiting => redirect,
    }
}

/// rmcp's auth error in words. Its messages name URLs and OAuth error codes, never a token.
fn words(error: &AuthError) -> String {
    error.to_string()
}

/// rmcp's credential store over the credentials file.
struct FileStore {
    file: TokenFile,
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(value) = self.file.load().map_err(store_error)? else {
            return Ok(None);
        };
        serde_json::from_value(value).map(Some).map_err(|_| {
            store_error(format!(
                "{} holds an unreadable grant",
                self.file.path().display()
            ))
        })
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let issuer = credentials.issuer.clone();
        let client_id = credentials.client_id.clone();
        let value = serde_json::to_value(credentials).map_err(store_error)?;
        self.file
            .save(issuer.as_deref(), &client_id, value)
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.file.clear().map_err(store_error)
    }
}

impl StreamableHttpClient for Signed {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let limits = self.client.limits();
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut limits = self.client.limits();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        self.signed(|inner| {
            inner.post_message_with_response_limits(
                uri.clone(),
                message.clone(),
                session_id.clone(),
                auth_header.clone(),
                custom_headers.clone(),
                limits,
            )
        })
        .await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        // Closing a session never starts a sign-in.
        self.auth()
            .await?
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxedSseResponse, HttpError> {
        self.auth()
            .await?
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxedSseResponse, HttpError> {
        // The GET stream rides on the POSTs' sign-in; it does not start one of its own.
        self.auth()
            .await?
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sign-in state for a server on a closed port, with no browser step.
    async fn no_browser(grant: OAuthGrant) -> (Signed, Arc<Mutex<AuthorizationManager>>) {
        let url = url::Url::parse("http://127.0.0.1:1/mcp").unwrap();
        let options = super::super::Options {
            timeout: Duration::from_secs(5),
            max_message_bytes: 1 << 20,
            oauth: OAuthSpec::default(),
            sign_in: Arc::new(|| None),
        };
        let t = super::super::transport("t", &url, &Default::default(), options, Arc::default())
            .unwrap();
        let client = Client {
            http: t.link.http.clone(),
            link: t.link.clone(),
        };
        let oauth = OAuthSpec {
            grant,
            ..OAuthSpec::default()
        };
        let signed = Signed::new(client, oauth, Arc::new(|| None), false);
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
            ) && e.contains("not available yet"),
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

    fn credentials(client_id: &str, issuer: &str, received_at: u64) -> StoredCredentials {
        let token = serde_json::from_value(serde_json::json!({
            "access_token": "at-secret",
            "refresh_token": "rt-secret",
            "token_type": "Bearer",
            "expires_in": 3600,
        }))
        .unwrap();
        StoredCredentials::new(
            client_id.into(),
            Some(token),
            vec!["read".into()],
            Some(received_at),
        )
        .with_issuer(Some(issuer.into()))
    }

    #[tokio::test]
    async fn the_file_store_keeps_what_refresh_needs_per_client() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("oauth.json");
        let any = FileStore {
            file: TokenFile::at(path.clone(), "https://s/mcp", None),
        };
        assert!(any.load().await.unwrap().is_none());
        any.save(credentials("one", "https://a", 1_000))
            .await
            .unwrap();
        let loaded = any.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "one");
        assert_eq!(loaded.issuer.as_deref(), Some("https://a"));
        // Without the time it was received, rmcp could not tell when to refresh.
        assert_eq!(loaded.token_received_at, Some(1_000));
        assert_eq!(loaded.granted_scopes, vec!["read".to_owned()]);
        assert!(loaded.token_response.is_some());

        let two = FileStore {
            file: TokenFile::at(path.clone(), "https://s/mcp", Some("two")),
        };
        assert!(two.load().await.unwrap().is_none(), "another client id");
        two.save(credentials("two", "https://a", 2_000))
            .await
            .unwrap();
        assert_eq!(two.load().await.unwrap().unwrap().client_id, "two");
        two.clear().await.unwrap();
        assert!(two.load().await.unwrap().is_none());
        assert!(any.load().await.unwrap().is_some(), "the other grant stays");
    }

    #[tokio::test]
    async fn a_damaged_grant_is_a_store_error_without_its_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("oauth.json");
        let file = TokenFile::at(path, "https://s/mcp", None);
        file.save(None, "c", serde_json::json!({"access_token": "at-secret"}))
            .unwrap();
        let error = FileStore { file }.load().await.err().unwrap();
        assert!(
            matches!(error, AuthError::CredentialStoreError(_)),
            "{error}"
        );
        assert!(!error.to_string().contains("at-secret"), "{error}");
    }
}
