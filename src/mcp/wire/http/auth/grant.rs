//! The grant a sign-in leaves: kept in the credentials file (`auth::tokens`) through rmcp's
//! credential store ([`FileStore`]), shown in the server's status (never the token), and on
//! sign-out revoked where the authorization server offers it, then forgotten ([`sign_out`]).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::{AuthError, AuthorizationManager, CredentialStore, StoredCredentials};

use super::{discover, words};
use crate::auth::status::Status;
use crate::auth::tokens::TokenFile;
use crate::config::OAuthSpec;

/// rmcp's credential store over the credentials file; every grant it keeps or finds is shown
/// in the server's [`Status`] (never the token itself).
pub(super) struct FileStore {
    file: TokenFile,
    status: Arc<Status>,
}

impl FileStore {
    pub(super) fn new(file: TokenFile, status: Arc<Status>) -> FileStore {
        FileStore { file, status }
    }
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
        Ok(manager) => discover(&manager, None).await,
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

#[cfg(test)]
mod tests {
    use super::*;

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
