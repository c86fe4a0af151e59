//! The credentials file: each grant (the token response rmcp keeps, as JSON) under a key made
//! of the server URL, the issuer and the client id, so two accounts or two authorization servers
//! never share a grant. The file is `0600` in the `0700` state directory, written whole and
//! atomically under a lock (`store`); nothing here logs a grant or puts one in an error.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::store;

/// The file's name in the state directory.
pub const FILE_NAME: &str = "oauth-credentials.json";

/// One stored grant.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Grant {
    server: String,
    issuer: Option<String>,
    client_id: String,
    /// Seconds since the epoch: the newest grant for a URL is the one used.
    saved_at: u64,
    credentials: Value,
}

#[derive(Default, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    grants: std::collections::BTreeMap<String, Grant>,
}

/// The key of a grant: SHA-256 over the server URL, the issuer and the client id.
pub fn key(server: &str, issuer: Option<&str>, client_id: &str) -> String {
    let mut hash = Sha256::new();
    for part in [server, issuer.unwrap_or(""), client_id] {
        hash.update((part.len() as u64).to_be_bytes());
        hash.update(part.as_bytes());
    }
    hash.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The credentials file of one server URL (and, when configured, one client id).
#[derive(Clone, Debug)]
pub struct TokenFile {
    path: PathBuf,
    server: String,
    client_id: Option<String>,
}

impl TokenFile {
    /// The file in the state directory, for `server`; `None` without a state directory.
    pub fn for_server(server: &str, client_id: Option<&str>) -> Option<TokenFile> {
        store::state_file(FILE_NAME).map(|path| TokenFile::at(path, server, client_id))
    }

    pub fn at(path: PathBuf, server: &str, client_id: Option<&str>) -> TokenFile {
        TokenFile {
            path,
            server: server.to_owned(),
            client_id: client_id.map(str::to_owned),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> io::Result<Contents> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not a credentials file", self.path.display()),
                )
            }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(e),
        }
    }

    fn write(&self, contents: &Contents) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(contents).map_err(io::Error::other)?;
        store::write_atomic(&self.path, &bytes)
    }

    fn matches(&self, grant: &Grant) -> bool {
        grant.server == self.server
            && self
                .client_id
                .as_deref()
                .is_none_or(|id| id == grant.client_id)
    }

    /// The newest grant for this server (and client id), as saved.
    pub fn load(&self) -> io::Result<Option<Value>> {
        let contents = self.read()?;
        Ok(contents
            .grants
            .into_values()
            .filter(|g| self.matches(g))
            .max_by_key(|g| g.saved_at)
            .map(|g| g.credentials))
    }

    /// Saves (or replaces) the grant of (this server, `issuer`, `client_id`).
    pub fn save(
        &self,
        issuer: Option<&str>,
        client_id: &str,
        credentials: Value,
    ) -> io::Result<()> {
        let _lock = store::Lock::exclusive(&self.path)?;
        let mut contents = self.read()?;
        let saved_at = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        contents.grants.insert(
            key(&self.server, issuer, client_id),
            Grant {
                server: self.server.clone(),
                issuer: issuer.map(str::to_owned),
                client_id: client_id.to_owned(),
                saved_at,
                credentials,
            },
        );
        self.write(&contents)
    }

    /// Forgets this server's grants (of the configured client id, if any).
    pub fn clear(&self) -> io::Result<()> {
        let _lock = store::Lock::exclusive(&self.path)?;
        let mut contents = self.read()?;
        let before = contents.grants.len();
        contents.grants.retain(|_, g| !self.matches(g));
        if contents.grants.len() == before {
            return Ok(());
        }
        self.write(&contents)
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use serde_json::json;

    use super::*;

    #[test]
    fn keys_differ_by_each_part_and_do_not_run_together() {
        let base = key("https://s/mcp", Some("https://a"), "c");
        assert_eq!(base, key("https://s/mcp", Some("https://a"), "c"));
        assert_eq!(base.len(), 64);
        assert_ne!(base, key("https://s/mcp2", Some("https://a"), "c"));
        assert_ne!(base, key("https://s/mcp", Some("https://b"), "c"));
        assert_ne!(base, key("https://s/mcp", Some("https://a"), "d"));
        assert_ne!(base, key("https://s/mcp", None, "c"));
        // The lengths keep ("ab", "c") apart from ("a", "bc").
        assert_ne!(key("ab", Some("c"), "x"), key("a", Some("bc"), "x"));
    }

    #[test]
    fn the_file_is_private_and_keeps_grants_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state").join(FILE_NAME);
        let any = TokenFile::at(path.clone(), "https://s/mcp", None);
        assert_eq!(any.load().unwrap(), None);
        any.save(Some("https://a"), "one", json!({"t": 1})).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);

        let two = TokenFile::at(path.clone(), "https://s/mcp", Some("two"));
        assert_eq!(two.load().unwrap(), None, "another client id sees nothing");
        two.save(Some("https://a"), "two", json!({"t": 2})).unwrap();
        assert_eq!(two.load().unwrap(), Some(json!({"t": 2})));
        let one = TokenFile::at(path.clone(), "https://s/mcp", Some("one"));
        assert_eq!(one.load().unwrap(), Some(json!({"t": 1})));
        let other = TokenFile::at(path.clone(), "https://other/mcp", None);
        assert_eq!(other.load().unwrap(), None, "another server sees nothing");

        one.save(Some("https://a"), "one", json!({"t": 3})).unwrap();
        assert_eq!(
            one.load().unwrap(),
            Some(json!({"t": 3})),
            "a save replaces"
        );
        one.clear().unwrap();
        assert_eq!(one.load().unwrap(), None);
        assert_eq!(
            two.load().unwrap(),
            Some(json!({"t": 2})),
            "clear keeps the others"
        );
    }

    #[test]
    fn a_damaged_file_is_an_error_that_shows_no_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        std::fs::write(&path, "secret-token-text").unwrap();
        let err = TokenFile::at(path, "https://s/mcp", None)
            .load()
            .unwrap_err();
        assert!(!err.to_string().contains("secret-token-text"), "{err}");
    }
}
