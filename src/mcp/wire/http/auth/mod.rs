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
//! Grants are kept in the credentials file (`auth::tokens`) through
//! [`FileStore`](grant::FileStore), keyed by the server URL, the issuer and the client id. No
//! token is logged or put in an error.
//!
//! The parts: this file is [`Signed`], which sends each request and, when the server asks, signs
//! in or steps up and sends it again; `sign_in` is one server's sign-in ([`Authority`]: the
//! browser's authorization code, client credentials, the step-up); `grant` is what a sign-in
//! leaves: the grant kept, and signing out ([`sign_out`]).

mod grant;
mod sign_in;

pub use grant::sign_out;

use std::collections::HashMap;
use std::sync::Arc;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadataResolution,
};
use rmcp::transport::common::client_side_sse::BoxedSseResponse;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};

use super::{Client, HttpError};
use crate::auth::SignIn;
use crate::auth::status::Status;
use crate::config::OAuthSpec;
use crate::mcp::host::HumanClock;
use sign_in::Authority;

/// Sign-ins (or step-ups) one request may go through before its error stands.
pub(super) const MAX_ROUNDS: usize = 3;
/// Times the metadata discovery runs when a connection closes unanswered under it.
const DISCOVERY_TRIES: usize = 3;

/// Where the browser step goes: the editor's (or the conformance client's) [`SignIn`], if any.
pub type SignInSource = Arc<dyn Fn() -> Option<Arc<dyn SignIn>> + Send + Sync>;

/// The client under rmcp's worker: rmcp's [`AuthClient`] around the sidecar's [`Client`], and
/// the sign-in when the server asks for one.
#[derive(Clone)]
pub(super) struct Signed {
    client: Client,
    authority: Arc<Authority>,
}

/// A sign-in that did not happen, as the transport's error.
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
        let authority = Authority::new(&client, oauth, sign_in, keep_grants, status, clock);
        Signed {
            client,
            authority: Arc::new(authority),
        }
    }

    /// rmcp's client; the first call makes it and puts a stored grant to use.
    async fn auth(&self) -> Result<&AuthClient<Client>, HttpError> {
        self.authority.client(&self.client).await
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
            let seen = self.authority.rounds();
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

/// rmcp's metadata discovery, from the `401`'s challenge if any. Its requests are GETs on
/// connections rmcp's client keeps alive: one the server closed as a request went out on it
/// fails that request unanswered, and the discovery runs again (at most [`DISCOVERY_TRIES`]
/// times in all) rather than failing the server.
async fn discover(
    manager: &AuthorizationManager,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadataResolution, AuthError> {
    let mut tries = 1;
    loop {
        match manager.resolve_metadata_from_challenge(challenge).await {
            Err(AuthError::DiscoveryRequestFailed { url, source })
                if tries < DISCOVERY_TRIES && crate::net::closed_unanswered(&*source) =>
            {
                tracing::debug!(%url, "closed unanswered; discovering again");
                tries += 1;
            }
            resolved => return resolved,
        }
    }
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
