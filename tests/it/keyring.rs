//! Sign-in grants in a real freedesktop Secret Service (gnome-keyring), in the D-Bus session
//! `scripts/keyring-test.sh` starts for them (it sets `MCP_SIDECAR_KEYRING_SESSION`). Ignored in
//! the unit tier; outside that session a test says it is skipped, and fails when `CI=true`.

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;

use mcp_sidecar::auth::keyring;
use mcp_sidecar::auth::tokens::{self, Choice, Store, TokenFile};
use serde_json::{Value, json};

/// A directory for the credentials file, and the file's path in it, when the session is there;
/// without it `None`: skipped (or, in CI, a failure).
fn in_session(test: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    if std::env::var_os("MCP_SIDECAR_KEYRING_SESSION").is_some() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(tokens::FILE_NAME);
        return Some((dir, path));
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: no Secret Service session; run it through scripts/keyring-test.sh"
    );
    // Past libtest's capture, so the skip is seen.
    let _ = writeln!(
        std::io::stderr(),
        "{test}: skipped, no Secret Service session (scripts/keyring-test.sh starts one)"
    );
    None
}

/// A server URL no other test (or earlier run) uses: the keyring outlives a test.
fn server(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!(
        "https://{name}.keyring-test.invalid/{}-{nanos}/mcp",
        std::process::id()
    )
}

fn credentials(refresh: &str) -> Value {
    json!({
        "client_id": "client-1",
        "token_response": {"access_token": format!("at-{refresh}"), "token_type": "Bearer",
                           "refresh_token": refresh},
    })
}

/// `secret-tool lookup` for the grant's key, as the person would run it.
fn lookup(key: &str) -> Option<String> {
    let out = Command::new(keyring::PROGRAM)
        .args(["lookup", "service", keyring::SERVICE, "key", key])
        .output()
        .unwrap();
    match out.status.code() {
        Some(0) => Some(String::from_utf8(out.stdout).unwrap()),
        Some(1) if out.stderr.is_empty() => None,
        _ => panic!(
            "secret-tool lookup: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

#[test]
#[ignore = "needs a Secret Service session: scripts/keyring-test.sh"]
fn a_grant_goes_to_the_secret_service_not_the_file_and_clear_removes_it() {
    let Some((_dir, path)) =
        in_session("a_grant_goes_to_the_secret_service_not_the_file_and_clear_removes_it")
    else {
        return;
    };
    let server = server("one");
    let issuer = "https://auth.keyring-test.invalid";
    let grants = TokenFile::at(path.clone(), &server, None).with_store(Choice::Auto);
    assert_eq!(
        grants.saves_to(),
        Store::SecretService,
        "auto finds the keyring"
    );

    let refresh = "rt-only-in-the-keyring-4711";
    grants
        .save(Some(issuer), "client-1", credentials(refresh))
        .unwrap();
    let index = std::fs::read_to_string(&path).unwrap();
    assert!(
        !index.contains(refresh),
        "the refresh token is in the file: {index}"
    );
    assert!(
        !index.contains("at-"),
        "the access token is in the file: {index}"
    );
    assert!(index.contains("\"store\": \"secretService\""), "{index}");
    assert_eq!(grants.location().unwrap(), Some(Store::SecretService));

    let key = tokens::key(&server, Some(issuer), "client-1");
    let kept: Value =
        serde_json::from_str(&lookup(&key).expect("the item is in the keyring")).unwrap();
    assert_eq!(kept, credentials(refresh));
    assert_eq!(grants.load().unwrap(), Some(credentials(refresh)));

    // Another sidecar refreshes the grant: a new item and a new revision in the index. This
    // process reads the keyring again rather than what it read before.
    let refreshed = credentials("rt-refreshed-by-another-sidecar");
    let mut child = Command::new(keyring::PROGRAM)
        .args([
            "store",
            "--label=refreshed",
            "service",
            keyring::SERVICE,
            "key",
            &key,
        ])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(refreshed.to_string().as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    let mut contents: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    contents["grants"][&key]["revision"] = json!("another-sidecar-1");
    std::fs::write(&path, serde_json::to_vec(&contents).unwrap()).unwrap();
    assert_eq!(grants.load().unwrap(), Some(refreshed));

    grants.clear().unwrap();
    assert_eq!(lookup(&key), None, "the item is gone from the keyring");
    assert_eq!(grants.load().unwrap(), None);
    assert_eq!(grants.location().unwrap(), None);
    let index = std::fs::read_to_string(&path).unwrap();
    assert!(!index.contains(&key), "{index}");
}

#[test]
#[ignore = "needs a Secret Service session: scripts/keyring-test.sh"]
fn a_grant_is_found_wherever_it_was_saved_and_moves_with_the_next_save() {
    let Some((_dir, path)) =
        in_session("a_grant_is_found_wherever_it_was_saved_and_moves_with_the_next_save")
    else {
        return;
    };
    let server = server("two");
    let key = tokens::key(&server, None, "client-1");
    let in_file = TokenFile::at(path.clone(), &server, None);
    let in_keyring = TokenFile::at(path.clone(), &server, None).with_store(Choice::SecretService);

    // Saved in the file, read with the secret service chosen: found, still in the file.
    in_file.save(None, "client-1", credentials("rt-a")).unwrap();
    assert_eq!(in_keyring.location().unwrap(), Some(Store::File));
    assert_eq!(in_keyring.load().unwrap(), Some(credentials("rt-a")));
    assert_eq!(lookup(&key), None);

    // The next save goes to the keyring, and the file loses the token.
    in_keyring
        .save(None, "client-1", credentials("rt-b"))
        .unwrap();
    assert!(lookup(&key).is_some_and(|s| s.contains("rt-b")));
    let index = std::fs::read_to_string(&path).unwrap();
    assert!(
        !index.contains("rt-a") && !index.contains("rt-b"),
        "{index}"
    );
    // With the file chosen now, the grant is still found in the keyring.
    assert_eq!(in_file.load().unwrap(), Some(credentials("rt-b")));

    // A save with the file chosen moves it back and leaves nothing in the keyring.
    in_file.save(None, "client-1", credentials("rt-c")).unwrap();
    assert_eq!(lookup(&key), None, "the keyring item went with the move");
    assert_eq!(in_keyring.location().unwrap(), Some(Store::File));
    assert_eq!(in_keyring.load().unwrap(), Some(credentials("rt-c")));
    in_file.clear().unwrap();
    assert_eq!(in_keyring.load().unwrap(), None);
}
