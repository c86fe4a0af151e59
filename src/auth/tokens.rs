//! The credentials file: the index of every grant (the token response rmcp keeps, as JSON)
//! under a key made of the server URL, the issuer and the client id, so two accounts or two
//! authorization servers never share a grant. The file is `0600` in the `0700` state directory,
//! written whole and atomically under a lock (`store`).
//!
//! A grant's credentials (with the refresh token) are kept in the operating system's secret store
//! ([`keyring`]) where one works, and otherwise inline in the file: each entry of the index says
//! which (`"store": "secretService"` or `"file"`), so a grant is found wherever it was saved,
//! whatever the store is now. Which store new grants go to: [`STORE_VARIABLE`] when set
//! (`file` | `secret-service`), else the secret service when a store/lookup round trip works
//! (tried once per process), else the file. Nothing here logs a grant or puts one in an error.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::keyring::{self, SecretService};
use crate::store;

/// The file's name in the state directory.
pub const FILE_NAME: &str = "oauth-credentials.json";

/// The environment variable that chooses the store new grants go to: `file`, `secret-service`,
/// or `auto` (the default).
pub const STORE_VARIABLE: &str = "MCP_SIDECAR_TOKEN_STORE";

/// Where a grant's credentials are kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Store {
    /// Inline in the credentials file (every grant saved before there was a choice).
    #[default]
    File,
    /// In the freedesktop Secret Service, under the grant's key.
    SecretService,
}

impl std::fmt::Display for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Store::File => "the credentials file",
            Store::SecretService => "the secret service",
        })
    }
}

/// Which store new grants go to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    /// The secret service when it works (probed once per process), else the file; a secret
    /// service that fails later sends the grants to the file from then on, with one log line.
    Auto,
    /// Always the file.
    File,
    /// Always the secret service: a save it refuses is an error, nothing goes to the file.
    SecretService,
}

impl Choice {
    /// `value` of [`STORE_VARIABLE`]; unset or empty is `Auto`.
    pub fn parse(value: Option<&str>) -> Result<Choice, String> {
        match value.map(str::trim) {
            None | Some("" | "auto") => Ok(Choice::Auto),
            Some("file") => Ok(Choice::File),
            Some("secret-service") => Ok(Choice::SecretService),
            Some(other) => Err(format!(
                "{STORE_VARIABLE}={other:?} is not one of file, secret-service, auto"
            )),
        }
    }

    /// The process's choice, from [`STORE_VARIABLE`] (read once; a wrong value is logged once
    /// and counts as `auto`).
    pub fn from_env() -> Choice {
        static CHOICE: OnceLock<Choice> = OnceLock::new();
        *CHOICE.get_or_init(|| {
            let value = std::env::var(STORE_VARIABLE).ok();
            Choice::parse(value.as_deref()).unwrap_or_else(|e| {
                tracing::warn!("{e}; choosing the store for sign-in grants by itself");
                Choice::Auto
            })
        })
    }
}

/// One stored grant.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Grant {
    server: String,
    issuer: Option<String>,
    client_id: String,
    /// Seconds since the epoch: the newest grant for a URL is the one used.
    saved_at: u64,
    /// Where the credentials are (absent in files written before there was a choice: inline).
    #[serde(default)]
    store: Store,
    /// Changes with every save to the secret service, so a process knows whether what it read
    /// from there before is still the grant (another sidecar may have refreshed it since).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    revision: Option<String>,
    /// The credentials, when `store` is the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    credentials: Option<Value>,
}

#[derive(Default, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    grants: BTreeMap<String, Grant>,
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

/// What this process last read from or wrote to the secret service: key → (revision,
/// credentials). rmcp loads the grant before every request; with this only the index is read
/// then, and `secret-tool` runs when the revision there moved on.
static READ: parking_lot::Mutex<BTreeMap<String, (String, Value)>> =
    parking_lot::const_mutex(BTreeMap::new());

/// Set when the secret service the process chose by itself failed: new grants go to the file.
static FAILED: AtomicBool = AtomicBool::new(false);

/// A revision no other save (in any process) makes.
fn new_revision() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{nanos:x}-{:x}-{n:x}", std::process::id())
}

/// The secret service this process reaches, if any (looked for once).
fn found() -> Option<SecretService> {
    static FOUND: OnceLock<Option<SecretService>> = OnceLock::new();
    FOUND.get_or_init(SecretService::find).clone()
}

/// The secret service `auto` uses: found, and a round trip through it worked (tried once, on
/// the first save; the outcome is logged once).
fn probed() -> Option<SecretService> {
    static PROBED: OnceLock<Option<SecretService>> = OnceLock::new();
    PROBED
        .get_or_init(|| {
            let Some(service) = found() else {
                tracing::info!(
                    "sign-in grants are kept in the credentials file (no {} on PATH or no D-Bus session)",
                    keyring::PROGRAM
                );
                return None;
            };
            match service.probe() {
                Ok(()) => {
                    tracing::info!("sign-in grants are kept in the secret service");
                    Some(service)
                }
                Err(e) => {
                    tracing::warn!("sign-in grants are kept in the credentials file: {e}");
                    None
                }
            }
        })
        .clone()
}

/// Runs `work` on tokio's blocking threads.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> io::Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|_| io::Error::other("the credentials store's task ended early"))?
}

/// The credentials file of one server URL (and, when configured, one client id).
#[derive(Clone, Debug)]
pub struct TokenFile {
    path: PathBuf,
    server: String,
    client_id: Option<String>,
    choice: Choice,
    /// The secret service to use instead of the process's (tests).
    service: Option<SecretService>,
}

impl TokenFile {
    /// The file in the state directory, for `server`, with new grants going where
    /// [`Choice::from_env`] says; `None` without a state directory.
    pub fn for_server(server: &str, client_id: Option<&str>) -> Option<TokenFile> {
        store::state_file(FILE_NAME)
            .map(|path| TokenFile::at(path, server, client_id).with_store(Choice::from_env()))
    }

    /// The file at `path`, keeping new grants in it (see [`TokenFile::with_store`]). Grants it
    /// lists in the secret service are read from there.
    pub fn at(path: PathBuf, server: &str, client_id: Option<&str>) -> TokenFile {
        TokenFile {
            path,
            server: server.to_owned(),
            client_id: client_id.map(str::to_owned),
            choice: Choice::File,
            service: None,
        }
    }

    /// Where new grants go.
    pub fn with_store(mut self, choice: Choice) -> TokenFile {
        self.choice = choice;
        self
    }

    /// Reaches the secret service through `service` rather than the process's (with
    /// `Choice::Auto`, it is used without a probe).
    pub fn with_secret_service(mut self, service: SecretService) -> TokenFile {
        self.service = Some(service);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> io::Result<Contents> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|_| self.damaged()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(e),
        }
    }

    fn damaged(&self) -> io::Error {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not a credentials file", self.path.display()),
        )
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

    /// The newest grant for this server (and client id), with its key.
    fn newest(&self) -> io::Result<Option<(String, Grant)>> {
        Ok(self
            .read()?
            .grants
            .into_iter()
            .filter(|(_, g)| self.matches(g))
            .max_by_key(|(_, g)| g.saved_at))
    }

    /// The secret service to read and clear grants with.
    fn reader(&self) -> io::Result<SecretService> {
        self.service.clone().or_else(found).ok_or_else(|| {
            keyring::error(format!(
                "the grant for {} is in the secret service, and there is none to reach (no {} \
                 on PATH or no D-Bus session)",
                self.server,
                keyring::PROGRAM
            ))
        })
    }

    /// The secret service new grants go to (and whether it was asked for), or `None`: the file.
    fn writer(&self) -> io::Result<Option<(SecretService, bool)>> {
        match self.choice {
            Choice::File => Ok(None),
            Choice::SecretService => {
                let service = self.service.clone().or_else(found).ok_or_else(|| {
                    keyring::error(format!(
                        "{STORE_VARIABLE}=secret-service, and there is no secret service to \
                         reach (no {} on PATH or no D-Bus session)",
                        keyring::PROGRAM
                    ))
                })?;
                Ok(Some((service, true)))
            }
            Choice::Auto if self.service.is_some() => Ok(self.service.clone().map(|s| (s, false))),
            Choice::Auto if FAILED.load(Ordering::Relaxed) => Ok(None),
            Choice::Auto => Ok(probed().map(|s| (s, false))),
        }
    }

    /// The newest grant for this server (and client id), as saved.
    pub fn load(&self) -> io::Result<Option<Value>> {
        let Some((key, grant)) = self.newest()? else {
            return Ok(None);
        };
        match grant.store {
            Store::File => grant.credentials.map(Some).ok_or_else(|| self.damaged()),
            Store::SecretService => self.read_secret(&key, grant.revision),
        }
    }

    fn read_secret(&self, key: &str, revision: Option<String>) -> io::Result<Option<Value>> {
        if let Some(revision) = &revision
            && let Some((known, value)) = READ.lock().get(key)
            && known == revision
        {
            return Ok(Some(value.clone()));
        }
        let service = self.reader()?;
        let text = service.lookup(key).map_err(|e| {
            keyring::error(format!(
                "the grant for {} could not be read from the secret service: {e}",
                self.server
            ))
        })?;
        // Gone from the keyring (the person removed it there): signed out.
        let Some(text) = text else {
            return Ok(None);
        };
        let value: Value = serde_json::from_str(&text).map_err(|_| {
            keyring::error(format!(
                "the secret service holds an unreadable grant for {}",
                self.server
            ))
        })?;
        if let Some(revision) = revision {
            READ.lock()
                .insert(key.to_owned(), (revision, value.clone()));
        }
        Ok(Some(value))
    }

    /// Where the newest grant for this server (and client id) is kept; `None`: there is none.
    pub fn location(&self) -> io::Result<Option<Store>> {
        Ok(self.newest()?.map(|(_, g)| g.store))
    }

    /// Where a grant saved now would go (the first call in a process with `Choice::Auto` tries
    /// the secret service).
    pub fn saves_to(&self) -> Store {
        match self.writer() {
            Ok(Some(_)) => Store::SecretService,
            Ok(None) | Err(_) => Store::File,
        }
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
        let key = key(&self.server, issuer, client_id);
        let mut grant = Grant {
            server: self.server.clone(),
            issuer: issuer.map(str::to_owned),
            client_id: client_id.to_owned(),
            saved_at,
            store: Store::File,
            revision: None,
            credentials: None,
        };
        if let Some((service, asked)) = self.writer()? {
            let text = serde_json::to_string(&credentials).map_err(io::Error::other)?;
            let label = format!("mcp-sidecar sign-in for {}", self.server);
            match service.store(&key, &label, &text) {
                Ok(()) => {
                    let revision = new_revision();
                    READ.lock()
                        .insert(key.clone(), (revision.clone(), credentials.clone()));
                    grant.store = Store::SecretService;
                    grant.revision = Some(revision);
                }
                Err(e) if asked => {
                    return Err(keyring::error(format!(
                        "the grant for {} could not be kept in the secret service \
                         ({STORE_VARIABLE}=secret-service): {e}",
                        self.server
                    )));
                }
                Err(e) => {
                    if self.service.is_none() {
                        FAILED.store(true, Ordering::Relaxed);
                    }
                    tracing::warn!(
                        "sign-in grants are kept in {} from now on: {e}",
                        self.path.display()
                    );
                }
            }
        }
        if grant.store == Store::File {
            grant.credentials = Some(credentials);
        }
        let now = grant.store;
        let was = contents.grants.insert(key.clone(), grant).map(|g| g.store);
        self.write(&contents)?;
        if was == Some(Store::SecretService) && now == Store::File {
            // Moved to the file: the old item in the secret service goes.
            if let Err(e) = self.remove_secret(&key) {
                tracing::warn!("{e}");
            }
        }
        Ok(())
    }

    fn remove_secret(&self, key: &str) -> io::Result<()> {
        READ.lock().remove(key);
        let service = self.reader()?;
        service.clear(key).map_err(|e| {
            keyring::error(format!(
                "the grant for {} is forgotten, but the secret service still holds it (service \
                 {}, key {key}): {e}",
                self.server,
                keyring::SERVICE
            ))
        })
    }

    /// [`TokenFile::load`] on a blocking thread (the secret service may take seconds, and the
    /// sidecar's runtime has one thread).
    pub async fn load_async(&self) -> io::Result<Option<Value>> {
        let file = self.clone();
        off_runtime(move || file.load()).await
    }

    /// [`TokenFile::save`] on a blocking thread.
    pub async fn save_async(
        &self,
        issuer: Option<String>,
        client_id: String,
        credentials: Value,
    ) -> io::Result<()> {
        let file = self.clone();
        off_runtime(move || file.save(issuer.as_deref(), &client_id, credentials)).await
    }

    /// [`TokenFile::clear`] on a blocking thread.
    pub async fn clear_async(&self) -> io::Result<()> {
        let file = self.clone();
        off_runtime(move || file.clear()).await
    }

    /// Forgets this server's grants (of the configured client id, if any), in the file and in
    /// the secret service. The index forgets them even when the secret service fails; the error
    /// then says which item is left there.
    pub fn clear(&self) -> io::Result<()> {
        let _lock = store::Lock::exclusive(&self.path)?;
        let mut contents = self.read()?;
        let (gone, kept): (BTreeMap<_, _>, BTreeMap<_, _>) = std::mem::take(&mut contents.grants)
            .into_iter()
            .partition(|(_, g)| self.matches(g));
        contents.grants = kept;
        if gone.is_empty() {
            return Ok(());
        }
        self.write(&contents)?;
        let mut result = Ok(());
        for (key, grant) in gone {
            if grant.store == Store::SecretService
                && let Err(e) = self.remove_secret(&key)
            {
                result = Err(e);
            }
        }
        result
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
    fn the_store_choice_is_file_secret_service_or_auto() {
        assert_eq!(Choice::parse(None), Ok(Choice::Auto));
        assert_eq!(Choice::parse(Some("")), Ok(Choice::Auto));
        assert_eq!(Choice::parse(Some("auto")), Ok(Choice::Auto));
        assert_eq!(Choice::parse(Some("file")), Ok(Choice::File));
        assert_eq!(
            Choice::parse(Some(" secret-service ")),
            Ok(Choice::SecretService)
        );
        let err = Choice::parse(Some("keychain")).unwrap_err();
        assert!(
            err.contains(STORE_VARIABLE) && err.contains("keychain"),
            "{err}"
        );
    }

    #[test]
    fn a_file_from_before_the_stores_reads_as_the_file_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let key = key("https://s/mcp", None, "c");
        let old = json!({"grants": {key.clone(): {
            "server": "https://s/mcp", "issuer": null, "clientId": "c", "savedAt": 1,
            "credentials": {"t": 1}}}});
        std::fs::write(&path, old.to_string()).unwrap();
        let grants = TokenFile::at(path.clone(), "https://s/mcp", None);
        assert_eq!(grants.location().unwrap(), Some(Store::File));
        assert_eq!(grants.load().unwrap(), Some(json!({"t": 1})));
        // Saved again, it says where its credentials are.
        grants.save(None, "c", json!({"t": 2})).unwrap();
        let index: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(index["grants"][&key]["store"], "file");
        assert_eq!(index["grants"][&key]["credentials"], json!({"t": 2}));
        assert!(index["grants"][&key].get("revision").is_none(), "{index}");
    }

    #[test]
    fn with_the_secret_service_the_file_holds_the_index_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let service = keyring::fake_service(dir.path(), false);
        let grants = TokenFile::at(path.clone(), "https://s/mcp", None)
            .with_store(Choice::SecretService)
            .with_secret_service(service);
        assert_eq!(grants.saves_to(), Store::SecretService);
        grants
            .save(Some("https://a"), "c", json!({"refresh": "rt-secret"}))
            .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("rt-secret"), "{text}");
        let index: Value = serde_json::from_str(&text).unwrap();
        let key = key("https://s/mcp", Some("https://a"), "c");
        let entry = &index["grants"][&key];
        assert_eq!(entry["store"], "secretService", "{index}");
        assert!(entry.get("credentials").is_none(), "{index}");
        assert!(entry["revision"].is_string(), "{index}");
        let item = std::fs::read_to_string(dir.path().join("items").join(&key)).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&item).unwrap(),
            json!({"refresh": "rt-secret"})
        );

        let calls = || std::fs::read_to_string(dir.path().join("calls")).unwrap();
        assert_eq!(
            grants.load().unwrap(),
            Some(json!({"refresh": "rt-secret"}))
        );
        assert_eq!(
            grants.load().unwrap(),
            Some(json!({"refresh": "rt-secret"}))
        );
        assert_eq!(
            calls(),
            "store\n",
            "loads of the revision it saved ask nothing"
        );

        // Another process saved a new revision: the next load asks the service.
        std::fs::write(
            dir.path().join("items").join(&key),
            r#"{"refresh": "rt-new"}"#,
        )
        .unwrap();
        let mut index = index;
        index["grants"][&key]["revision"] = json!("elsewhere");
        std::fs::write(&path, index.to_string()).unwrap();
        assert_eq!(grants.load().unwrap(), Some(json!({"refresh": "rt-new"})));
        assert_eq!(calls(), "store\nlookup\n");

        // The person removed it in their keyring manager: signed out.
        std::fs::remove_file(dir.path().join("items").join(&key)).unwrap();
        index["grants"][&key]["revision"] = json!("elsewhere-2");
        std::fs::write(&path, index.to_string()).unwrap();
        assert_eq!(grants.load().unwrap(), None);

        grants
            .save(Some("https://a"), "c", json!({"refresh": "rt-3"}))
            .unwrap();
        grants.clear().unwrap();
        assert!(!dir.path().join("items").join(&key).exists());
        assert_eq!(grants.location().unwrap(), None);
        assert!(calls().ends_with("store\nclear\n"), "{}", calls());
    }

    #[test]
    fn a_refused_save_falls_back_to_the_file_unless_the_secret_service_was_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let broken = keyring::fake_service(dir.path(), true);
        let asked = TokenFile::at(path.clone(), "https://s/mcp", None)
            .with_store(Choice::SecretService)
            .with_secret_service(broken.clone());
        let err = asked
            .save(None, "c", json!({"refresh": "rt-secret"}))
            .unwrap_err()
            .to_string();
        assert!(err.contains("locked collection"), "{err}");
        assert!(!err.contains("rt-secret"), "{err}");
        assert!(!path.exists(), "nothing was written");

        let auto = TokenFile::at(path.clone(), "https://s/mcp", None)
            .with_store(Choice::Auto)
            .with_secret_service(broken);
        auto.save(None, "c", json!({"refresh": "rt-secret"}))
            .unwrap();
        assert_eq!(auto.location().unwrap(), Some(Store::File));
        assert_eq!(auto.load().unwrap(), Some(json!({"refresh": "rt-secret"})));
    }

    #[test]
    fn an_unreachable_secret_service_is_an_error_naming_the_server_not_the_grant() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let key = key("https://s/mcp", None, "c");
        let index = json!({"grants": {key: {
            "server": "https://s/mcp", "issuer": null, "clientId": "c", "savedAt": 1,
            "store": "secretService", "revision": "r-unread"}}});
        std::fs::write(&path, index.to_string()).unwrap();
        let grants = TokenFile::at(path, "https://s/mcp", None)
            .with_secret_service(keyring::fake_service(dir.path(), true));
        let err = grants.load().unwrap_err().to_string();
        assert!(
            err.contains("https://s/mcp") && err.contains("locked collection"),
            "{err}"
        );
        // The index forgets it; the error says what is left in the keyring.
        let err = grants.clear().unwrap_err().to_string();
        assert!(err.contains("still holds it"), "{err}");
        assert_eq!(grants.location().unwrap(), None);
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
