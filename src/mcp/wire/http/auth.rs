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
use crate::auth::callback::Listener;
use crate::auth::status::{Need, Status, host_of};
use crate::auth::tokens::TokenFile;
use crate::auth::{BrowserStep, SignIn, Stopped};
use crate::config::{OAuthGrant, OAuthSpec};
use crate::mcp::host::HumanClock;

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
    /// What the supervisor, the commands and `listServers` see of this sign-in.
    status: Arc<Status>,
    /// The server's human time: while a person signs in, its deadlines wait.
    clock: Arc<HumanClock>,
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
    status: &Arc<Status>,
) -> Result<AuthorizationManager, String> {
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(|e| format!("could not set up sign-in for {url}: {}", words(&e)))?;
    if let Some(file) = store {
        manager.set_credential_store(FileStore {
            file: file.clone(),
            status: status.clone(),
        });
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
        status: Arc<Status>,
        clock: Arc<HumanClock>,
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
            status,
            clock,
        });
        Signed { client, authority }
    }

    /// rmcp's client; the first call makes it and puts a stored grant to use.
    async fn auth(&self) -> Result<&AuthClient<Client>, HttpError> {
        let authority = &self.authority;
        authority
            .auth
            .get_or_try_init(|| async {
                let manager =
                    new_manager(&authority.url, authority.store.as_ref(), &authority.status)
                        .await?;
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

/// Signs out of the server at `url`: revokes the stored grant where its authorization server
/// offers revocation (RFC 7009; the refresh token, then the access token), then forgets it.
/// `Ok(revoked)`: whether the authorization server confirmed a revocation. The tokens go only
/// to the revocation endpoint of the issuer that granted them.
pub async fn sign_out(url: &url::Url, oauth: &OAuthSpec) -> Result<bool, String> {
    let Some(file) = TokenFile::for_server(url.as_str(), oauth.client_id.as_deref()) else {
        return Ok(false);
    };
    let grant = file.load_async().await.map_err(|e| e.to_string())?;
    let revoked = match grant.and_then(|g| serde_json::from_value::<StoredCredentials>(g).ok()) {
        Some(grant) => revoke(url, oauth, &grant).await,
        None => false,
    };
    file.clear_async().await.map_err(|e| e.to_string())?;
    Ok(revoked)
}

async fn revoke(url: &url::Url, oauth: &OAuthSpec, grant: &StoredCredentials) -> bool {
    let discovered = match AuthorizationManager::new(url.as_str()).await {
        Ok(manager) => manager.resolve_metadata().await,
        Err(e) => Err(e),
    };
    let metadata = match discovered {
        Ok(resolution) => resolution.metadata,
        Err(e) => {
            tracing::info!(%url, "sign-out: no revocation ({})", words(&e));
            return false;
        }
    };
    if grant.issuer.is_some() && metadata.issuer != grant.issuer {
        tracing::warn!(%url, "sign-out: the authorization server is not the one that granted the sign-in; nothing was sent to it");
        return false;
    }
    let Some(endpoint) = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(serde_json::Value::as_str)
        .and_then(|e| url::Url::parse(e).ok())
    else {
        tracing::info!(%url, "sign-out: the authorization server offers no revocation");
        return false;
    };
    let Some(token) = grant
        .token_response
        .as_ref()
        .and_then(|t| serde_json::to_value(t).ok())
    else {
        return false;
    };
    let Ok(http) = crate::net::client_builder(&endpoint, Duration::from_secs(10)).build() else {
        return false;
    };
    let mut revoked = false;
    for hint in ["refresh_token", "access_token"] {
        let Some(value) = token.get(hint).and_then(serde_json::Value::as_str) else {
            continue;
        };
        let mut form = vec![
            ("token", value),
            ("token_type_hint", hint),
            ("client_id", grant.client_id.as_str()),
        ];
        if let Some(secret) = &oauth.client_secret {
            form.push(("client_secret", secret));
        }
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(&form)
            .finish();
        let request = http
            .post(endpoint.clone())
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(body);
        match request.send().await {
            Ok(answer) if answer.status().is_success() => revoked = true,
            Ok(answer) => {
                tracing::info!(%url, "sign-out: revoking the {hint} answered HTTP {}", answer.status());
            }
            Err(e) => {
                tracing::info!(%url, "sign-out: revoking the {hint} failed: {}", crate::net::innermost(&e));
            }
        }
    }
    revoked
}

/// rmcp's auth error in words. Its messages name URLs and OAuth error codes, never a token.
fn words(error: &AuthError) -> String {
    match error {
        // The redirect's `state` is none this sign-in issued: stale, or forged.
        AuthError::InternalError(e) if e == "Authorization state not found" => {
            "the address the browser came back with does not belong to this sign-in (its state is unknown: an old or forged redirect)".to_owned()
        }
        _ => error.to_string(),
    }
}

/// rmcp's credential store over the credentials file; every grant it keeps or finds is shown
/// in the server's [`Status`] (never the token itself).
struct FileStore {
    file: TokenFile,
    status: Arc<Status>,
}

/// What `listServers` shows of a grant.
fn show(status: &Status, credentials: &StoredCredentials) {
    let Some(token) = &credentials.token_response else {
        return;
    };
    let expires_in = serde_json::to_value(token)
        .ok()
        .and_then(|t| t.get("expires_in").and_then(serde_json::Value::as_u64));
    let expires_at = match (credentials.token_received_at, expires_in) {
        (Some(at), Some(within)) => Some(at.saturating_add(within)),
        _ => None,
    };
    status.signed_in(
        credentials.issuer.clone(),
        credentials.granted_scopes.clone(),
        expires_at,
    );
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(value) = self.file.load_async().await.map_err(store_error)? else {
            return Ok(None);
        };
        let credentials: StoredCredentials = serde_json::from_value(value).map_err(|_| {
            store_error(format!(
                "{} holds an unreadable grant",
                self.file.path().display()
            ))
        })?;
        show(&self.status, &credentials);
        Ok(Some(credentials))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        show(&self.status, &credentials);
        let issuer = credentials.issuer.clone();
        let client_id = credentials.client_id.clone();
        let value = serde_json::to_value(credentials).map_err(store_error)?;
        self.file
            .save_async(issuer, client_id, value)
            .await
            .map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.file.clear_async().await.map_err(store_error)
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
            status: Arc::default(),
            clock: Arc::default(),
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
            status: Arc::default(),
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
            status: Arc::default(),
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
        let error = FileStore {
            file,
            status: Arc::default(),
        }
        .load()
        .await
        .err()
        .unwrap();
        assert!(
            matches!(error, AuthError::CredentialStoreError(_)),
            "{error}"
        );
        assert!(!error.to_string().contains("at-secret"), "{error}");
    }
}
