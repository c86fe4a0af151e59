//! Signing in to a real OAuth-protected server, end to end: `fixtures/python/oauth_server.py` (the
//! Python SDK's own authorization server and bearer middleware, approving every authorization at
//! once) against the built sidecar, with the test as the editor and as the browser. Each test has
//! its own state directory (`XDG_STATE_HOME` in a tempdir, so grants never meet another test's)
//! and its own debug-level log file, which must never hold a token the fixture issued.
//!
//! The browser step is what a person's browser does: GET the authorization URL the sidecar
//! opened with `window/showDocument` (without following the redirect), then GET the `Location`,
//! the sidecar's loopback callback. Ignored by a plain `cargo test` (they need the Python peer);
//! the interop tier (`scripts/interop-matrix.py`) runs them.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use support::*;
use tokio::io::AsyncBufReadExt;

const PICK: &str = "mcp-sidecar/quickPick";

/// `oauth_server.py` on a free port.
struct Fixture {
    _child: tokio::process::Child,
    url: String,
    issuer: String,
    http: reqwest::Client,
}

impl Fixture {
    async fn start(args: &[&str]) -> Fixture {
        let mut child = tokio::process::Command::new(peer("MCP_PYTHON"))
            .arg(fixture("python/oauth_server.py"))
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(if std::env::var_os("SIDECAR_STDERR").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true)
            .spawn()
            .expect("the OAuth fixture starts");
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(WAIT, lines.next_line())
            .await
            .expect("the OAuth fixture's ready line")
            .unwrap()
            .expect("the OAuth fixture exited before it was ready");
        let ready: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(ready["event"], "ready", "{line}");
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(WAIT)
            .build()
            .unwrap();
        Fixture {
            _child: child,
            url: ready["url"].as_str().unwrap().to_owned(),
            issuer: ready["issuer"].as_str().unwrap().to_owned(),
            http,
        }
    }

    /// The authorization server's host, as the prompts name it.
    fn host(&self) -> String {
        url::Url::parse(&self.issuer)
            .unwrap()
            .host_str()
            .unwrap()
            .to_owned()
    }

    /// `GET /test/events`: `{"events": [...], "tokens": {"access": [...], "refresh": [...]}}`.
    async fn state(&self) -> Value {
        let answer = self
            .http
            .get(format!("{}/test/events", self.issuer))
            .send()
            .await
            .unwrap();
        answer.json().await.unwrap()
    }

    /// The fixture's events named `event` (and, for `token`, of that `grant`).
    async fn events(&self, event: &str, grant: Option<&str>) -> Vec<Value> {
        self.state().await["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["event"] == event && grant.is_none_or(|g| e["grant"] == g))
            .cloned()
            .collect()
    }

    /// Every token string the fixture ever issued.
    async fn tokens(&self) -> Vec<String> {
        let state = self.state().await;
        ["access", "refresh"]
            .iter()
            .flat_map(|k| state["tokens"][k].as_array().cloned().unwrap_or_default())
            .map(|t| t.as_str().unwrap().to_owned())
            .collect()
    }

    /// Revokes an account's tokens behind the sidecar's back (`POST /test/revoke`).
    async fn revoke_behind_the_back(&self, account: &str) -> u64 {
        let answer = self
            .http
            .post(format!("{}/test/revoke", self.issuer))
            .json(&json!({"account": account}))
            .send()
            .await
            .unwrap();
        answer.json::<Value>().await.unwrap()["revoked"]
            .as_u64()
            .unwrap()
    }

    /// The browser at the authorization endpoint: it approves at once and redirects; the
    /// `Location` (the sidecar's loopback callback with `code`, `state`, `iss`) is returned,
    /// not followed.
    async fn authorize(&self, authorization_url: &str) -> url::Url {
        let answer = self.http.get(authorization_url).send().await.unwrap();
        assert_eq!(answer.status(), 302, "{authorization_url}");
        let location = answer.headers()["location"].to_str().unwrap();
        let location = url::Url::parse(location).unwrap();
        assert!(
            location.as_str().starts_with("http://127.0.0.1:")
                && location.path() == "/callback"
                && location.query_pairs().any(|(k, _)| k == "iss"),
            "{location}"
        );
        location
    }

    /// The browser following the redirect to the sidecar's listener; its status and page.
    async fn deliver(&self, callback: &url::Url) -> (u16, String) {
        let answer = self.http.get(callback.as_str()).send().await.unwrap();
        (answer.status().as_u16(), answer.text().await.unwrap())
    }
}

/// A per-test home: the state and config directories and the sidecar's log file.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    fn log(&self) -> PathBuf {
        self.dir.path().join("sidecar.log")
    }

    /// Everything the sidecar keeps in its state directory, as text (the grant file among it).
    fn stored(&self) -> String {
        fn walk(dir: &Path, out: &mut String) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, out);
                } else if let Ok(text) = std::fs::read_to_string(&path) {
                    out.push_str(&text);
                }
            }
        }
        let mut out = String::new();
        walk(&self.state_dir(), &mut out);
        out
    }

    /// The built sidecar in this home (debug logs to the log file), initialized with `servers`.
    async fn sidecar(&self, servers: Value) -> Sidecar {
        let mut command = sidecar_command();
        command
            .arg("--log-file")
            .arg(self.log())
            .arg("--log-level")
            .arg("debug")
            .env("XDG_STATE_HOME", self.state_dir())
            .env("XDG_CONFIG_HOME", self.dir.path().join("config"))
            .env_remove("MCP_SIDECAR_LOG")
            .env_remove("RUST_LOG");
        let (child, editor) = spawn_editor(&mut command);
        let mark = editor.mark();
        editor
            .initialize(&[], json!({"servers": servers}), full_ui())
            .await;
        Sidecar {
            child,
            editor,
            mark,
        }
    }

    /// The log must exist, hold something, and hold none of the tokens the fixture issued (nor,
    /// with `codes`, its authorization codes).
    async fn assert_no_secret_logged(&self, fixture: &Fixture, codes: bool) {
        let log = std::fs::read_to_string(self.log()).expect("the sidecar's log file");
        assert!(!log.trim().is_empty(), "the log file is empty");
        let tokens = fixture.tokens().await;
        assert!(!tokens.is_empty(), "the fixture issued no token");
        let line_with = |secret: &str| log.lines().find(|l| l.contains(secret)).map(str::to_owned);
        for token in tokens {
            assert_eq!(line_with(&token), None, "a token is in the log");
        }
        let state = fixture.state().await;
        let issued_codes = state["tokens"]["code"].as_array().unwrap();
        assert!(
            !codes || !issued_codes.is_empty(),
            "the fixture issued no code"
        );
        for code in issued_codes.iter().filter(|_| codes) {
            let code = code.as_str().unwrap();
            assert_eq!(line_with(code), None, "an authorization code is in the log");
        }
    }
}

struct Sidecar {
    child: tokio::process::Child,
    editor: CheckedEditor,
    /// The notification mark right after `initialize`.
    mark: usize,
}

impl Sidecar {
    async fn stop(mut self) {
        self.editor.shutdown_and_exit().await;
        wait_exit(&mut self.child).await;
    }

    async fn row(&self, server: &str) -> Value {
        let rows = self
            .editor
            .command("mcp-sidecar.listServers", json!({}))
            .await;
        rows.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == server)
            .unwrap_or_else(|| panic!("no {server} in {rows}"))
            .clone()
    }

    async fn whoami(&self, server: &str) -> Value {
        structured(&call(&self.editor, server, "whoami", json!({})).await)
    }

    /// The "Sign in / Not now" question after a 401; answers it with `choice`.
    async fn answer_sign_in_question(&self, fixture: &Fixture, server: &str, choice: &str) {
        let prompt = self.editor.next_prompt().await;
        let host = fixture.host();
        assert_eq!(prompt["method"], PICK, "{prompt}");
        assert_eq!(prompt["params"]["server"], server, "{prompt}");
        assert_eq!(
            prompt["params"]["title"],
            format!("{server} needs you to sign in at {host}"),
            "{prompt}"
        );
        let items = &prompt["params"]["items"];
        assert_eq!(items[0]["label"], "Sign in", "{prompt}");
        assert_eq!(items[1]["label"], "Not now", "{prompt}");
        let index = if choice == "Sign in" { 0 } else { 1 };
        self.editor
            .respond(&prompt, json!({"selected": [index]}))
            .await;
    }

    /// "Not now" to the question: the server waits in `needsAuth`, naming the host.
    async fn not_now(&self, fixture: &Fixture, server: &str, mark: usize) {
        self.answer_sign_in_question(fixture, server, "Not now")
            .await;
        let status = self.editor.wait_status(mark, server, "needsAuth").await;
        let message = status["message"].as_str().unwrap_or_default();
        assert_eq!(
            message,
            format!("needs you to sign in at {}", fixture.host()),
            "{status}"
        );
    }

    /// The URL consent: "Open" → `window/showDocument` (external) with the authorization URL,
    /// then the "waiting for the sign-in" prompt. Returns the URL and the waiting prompt.
    async fn consent_and_open(&self, fixture: &Fixture, server: &str) -> (String, Value) {
        let host = fixture.host();
        let consent = self.editor.next_prompt().await;
        assert_eq!(consent["method"], PICK, "{consent}");
        assert_eq!(
            consent["params"]["title"],
            format!("{server}: sign in at {host}"),
            "{consent}"
        );
        let items = &consent["params"]["items"];
        let labels: Vec<&str> = items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap())
            .collect();
        assert_eq!(
            labels,
            [
                format!("Open {host} in the browser").as_str(),
                "Copy URL",
                "Paste the address you were redirected to",
                "Cancel"
            ],
            "{consent}"
        );
        // The URL is shown once, cut to a line; the editor is asked to open it whole.
        let shown = items[0]["description"].as_str().unwrap();
        let shown = shown
            .strip_suffix("… (truncated)")
            .unwrap_or(shown)
            .to_owned();
        assert!(
            shown.starts_with(&format!("{}/authorize?", fixture.issuer)),
            "{shown}"
        );
        self.editor
            .respond(&consent, json!({"selected": [0]}))
            .await;
        let open = self.editor.next_request("window/showDocument").await;
        let url = open["params"]["uri"].as_str().unwrap().to_owned();
        assert!(url.starts_with(&shown), "{open}");
        assert_eq!(open["params"]["external"], true, "{open}");
        self.editor.respond(&open, json!({"success": true})).await;
        let waiting = self.editor.next_prompt().await;
        assert_eq!(
            waiting["params"]["title"],
            format!("{server}: waiting for the sign-in at {host}"),
            "{waiting}"
        );
        (url, waiting)
    }

    /// Consent, Open, the browser step; the waiting prompt is closed by the sidecar.
    async fn complete_sign_in(&self, fixture: &Fixture, server: &str) {
        let mark = self.editor.mark();
        let (url, waiting) = self.consent_and_open(fixture, server).await;
        let callback = fixture.authorize(&url).await;
        let (status, page) = fixture.deliver(&callback).await;
        assert_eq!(status, 200, "{page}");
        let id = waiting["params"]["id"].clone();
        self.editor
            .wait_notification(mark, |n| {
                n["method"] == "mcp-sidecar/cancelPrompt" && n["params"]["id"] == id
            })
            .await;
    }

    /// 401 → "Sign in" → consent → Open → the browser step; returns the `running` status.
    async fn sign_in_by_prompt(&self, fixture: &Fixture, server: &str) -> Value {
        self.answer_sign_in_question(fixture, server, "Sign in")
            .await;
        self.complete_sign_in(fixture, server).await;
        self.editor.wait_status(self.mark, server, "running").await
    }

    /// `mcp-sidecar.signIn` through the whole browser step, until the server runs; returns
    /// the command's result (the row).
    async fn sign_in_command(&self, fixture: &Fixture, server: &str) -> Value {
        let mark = self.editor.mark();
        let editor = self.editor.clone();
        let arg = json!({"server": server});
        let pending =
            tokio::spawn(async move { editor.command_response("mcp-sidecar.signIn", arg).await });
        self.complete_sign_in(fixture, server).await;
        let response = pending.await.unwrap();
        assert!(response.get("error").is_none(), "{response}");
        self.editor.wait_status(mark, server, "running").await;
        response["result"].clone()
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A signed-in `listServers` row: issuer, scopes, a future expiry, and no token anywhere.
async fn assert_signed_in_row(row: &Value, fixture: &Fixture) {
    assert_eq!(row["state"], "running", "{row}");
    let auth = &row["auth"];
    assert_eq!(auth["signedIn"], true, "{row}");
    assert_eq!(auth["issuer"], fixture.issuer.as_str(), "{row}");
    assert_eq!(auth["scopes"], json!(["mcp:tools"]), "{row}");
    let expires = auth["expiresAt"].as_u64().unwrap_or_default();
    assert!(expires + 5 >= now() && expires <= now() + 3700, "{row}");
    let text = row.to_string();
    for token in fixture.tokens().await {
        assert!(!text.contains(&token), "a token in the row: {row}");
    }
}

fn server(fixture: &Fixture) -> Value {
    json!({"type": "http", "url": fixture.url})
}

/// The fixture started with `args`, and a sidecar in a new home signed in to it as "py": the
/// question, "Not now" (`needsAuth`), then `mcp-sidecar.signIn`.
async fn signed_in(args: &[&str]) -> (Fixture, Home, Sidecar) {
    let fixture = Fixture::start(args).await;
    let home = Home::new();
    let sidecar = home.sidecar(json!({"py": server(&fixture)})).await;
    sidecar.not_now(&fixture, "py", sidecar.mark).await;
    sidecar.sign_in_command(&fixture, "py").await;
    (fixture, home, sidecar)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn not_now_then_the_sign_in_command() {
    let fixture = Fixture::start(&["--account", "dana"]).await;
    let home = Home::new();
    let sidecar = home.sidecar(json!({"py": server(&fixture)})).await;
    sidecar.not_now(&fixture, "py", sidecar.mark).await;
    let row = sidecar.row("py").await;
    assert_eq!(row["state"], "needsAuth", "{row}");
    assert_eq!(row["auth"]["signedIn"], false, "{row}");
    assert!(fixture.events("token", None).await.is_empty());

    let row = sidecar.sign_in_command(&fixture, "py").await;
    assert_signed_in_row(&row, &fixture).await;
    assert_signed_in_row(&sidecar.row("py").await, &fixture).await;
    assert_eq!(sidecar.whoami("py").await["account"], "dana");
    // Registered dynamically, once; one authorization, one code exchanged.
    assert_eq!(fixture.events("register", None).await.len(), 1);
    assert_eq!(
        fixture
            .events("token", Some("authorization_code"))
            .await
            .len(),
        1
    );
    sidecar.stop().await;
    home.assert_no_secret_logged(&fixture, false).await;
}

/// 401 → "Sign in" → consent → Open → the browser step → running, in the era `pin` picks
/// (else negotiated: 2026-07-28).
async fn the_prompt_signs_in(pin: Option<&str>) {
    let fixture = Fixture::start(&[]).await;
    let home = Home::new();
    let mut def = server(&fixture);
    if let Some(pin) = pin {
        def["protocolVersion"] = json!(pin);
    }
    let sidecar = home.sidecar(json!({"py": def})).await;
    let status = sidecar.sign_in_by_prompt(&fixture, "py").await;
    assert_eq!(
        status["protocolVersion"],
        pin.unwrap_or("2026-07-28"),
        "{status}"
    );
    assert_signed_in_row(&sidecar.row("py").await, &fixture).await;
    assert_eq!(sidecar.whoami("py").await["account"], "user");
    sidecar.stop().await;
    home.assert_no_secret_logged(&fixture, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn the_prompt_signs_in_modern_era() {
    the_prompt_signs_in(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn the_prompt_signs_in_legacy_era() {
    the_prompt_signs_in(Some("2025-11-25")).await;
}

/// Waits until the newest access token the fixture issued has expired (its `expiresAt`): a
/// deadline, not a synchronization (the tokens expire by the clock).
async fn until_expired(fixture: &Fixture) {
    let events = fixture.events("token", None).await;
    let expires = events.last().expect("no token issued")["expiresAt"]
        .as_f64()
        .unwrap();
    let clock = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let left = expires + 0.2 - clock.as_secs_f64();
    assert!(left < 5.0, "not a short-lived token: {left} s left");
    if left > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(left)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn expired_tokens_are_refreshed_and_the_rotated_grant_is_kept() {
    let fixture = Fixture::start(&["--token-lifetime", "2"]).await;
    let home = Home::new();
    let servers = json!({"py": server(&fixture)});
    let sidecar = home.sidecar(servers.clone()).await;
    sidecar.not_now(&fixture, "py", sidecar.mark).await;
    sidecar.sign_in_command(&fixture, "py").await;
    assert_eq!(sidecar.whoami("py").await["account"], "user");
    let prompts = sidecar.editor.prompts_seen();

    until_expired(&fixture).await;
    assert_eq!(sidecar.whoami("py").await["account"], "user");
    assert_eq!(
        sidecar.editor.prompts_seen(),
        prompts,
        "a prompt to refresh"
    );
    let refreshes = fixture.events("token", Some("refresh_token")).await;
    assert!(!refreshes.is_empty(), "no refresh at the fixture");
    assert!(fixture.events("refreshRefused", None).await.is_empty());
    // The grant stored is the rotated one: the newest refresh token, not the first.
    let state = fixture.state().await;
    let refresh_tokens: Vec<&str> = state["tokens"]["refresh"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    let stored = home.stored();
    assert!(
        stored.contains(refresh_tokens.last().unwrap()),
        "not the newest grant stored"
    );
    assert!(
        !stored.contains(refresh_tokens[0]),
        "the first refresh token is still stored"
    );
    sidecar.stop().await;

    // A new sidecar in the same home: signed in from the stored grant, no prompt; its access
    // token expired meanwhile, so the rotated refresh token is what gets it going.
    until_expired(&fixture).await;
    let sidecar = home.sidecar(servers).await;
    sidecar
        .editor
        .wait_status(sidecar.mark, "py", "running")
        .await;
    assert_eq!(sidecar.whoami("py").await["account"], "user");
    assert_eq!(sidecar.editor.prompts_seen(), 0, "prompts after a restart");
    assert!(fixture.events("refreshRefused", None).await.is_empty());
    assert_eq!(fixture.events("authorize", None).await.len(), 1);
    sidecar.stop().await;
    home.assert_no_secret_logged(&fixture, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn sign_out_revokes_and_forgets_the_grant() {
    let (fixture, home, sidecar) = signed_in(&[]).await;
    let tokens = fixture.tokens().await;
    let stored = home.stored();
    assert!(tokens.iter().any(|t| stored.contains(t)), "no grant stored");

    let mark = sidecar.editor.mark();
    let result = sidecar
        .editor
        .command("mcp-sidecar.signOut", json!({"server": "py"}))
        .await;
    assert_eq!(
        result,
        json!({"server": "py", "signedOut": true, "revoked": true})
    );
    let revoked = fixture.events("revoke", None).await;
    assert!(
        !revoked.is_empty() && revoked.iter().all(|e| e["via"] == "endpoint"),
        "{revoked:?}"
    );
    sidecar.editor.wait_status(mark, "py", "needsAuth").await;
    let row = sidecar.row("py").await;
    assert_eq!(row["auth"]["signedIn"], false, "{row}");
    let stored = home.stored();
    for token in &tokens {
        assert!(!stored.contains(token), "the grant is still stored");
    }
    sidecar.stop().await;
    home.assert_no_secret_logged(&fixture, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_grant_revoked_elsewhere_fails_the_call_then_needs_sign_in() {
    let (fixture, home, sidecar) = signed_in(&["--account", "erin"]).await;
    assert_eq!(sidecar.whoami("py").await["account"], "erin");

    assert_eq!(fixture.revoke_behind_the_back("erin").await, 2);
    let mark = sidecar.editor.mark();
    let started = std::time::Instant::now();
    let pending = spawn_call_response(&sidecar.editor, "py", "whoami", json!({}));
    // The access token is refused and the refresh token too: the question comes again.
    sidecar.not_now(&fixture, "py", mark).await;
    let response = tokio::time::timeout(WAIT, pending)
        .await
        .expect("the call hung")
        .unwrap();
    assert!(started.elapsed() < WAIT, "{:?}", started.elapsed());
    let message = response["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("py") && message.contains("sign in"),
        "{response}"
    );
    assert!(!fixture.events("refreshRefused", None).await.is_empty());
    sidecar.stop().await;
    home.assert_no_secret_logged(&fixture, false).await;
}

/// The redirect with one parameter replaced.
fn with_param(callback: &url::Url, name: &str, value: &str) -> url::Url {
    let pairs: Vec<(String, String)> = callback
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == name {
                value.into()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    let mut changed = callback.clone();
    changed.query_pairs_mut().clear().extend_pairs(pairs);
    changed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn a_redirect_with_the_wrong_state_or_issuer_is_refused() {
    let fixture = Fixture::start(&[]).await;
    let home = Home::new();
    let sidecar = home.sidecar(json!({"py": server(&fixture)})).await;
    sidecar.not_now(&fixture, "py", sidecar.mark).await;
    for (param, value, says) in [
        ("state", "forged-state", "state"),
        ("iss", "http://evil.example", "issuer"),
    ] {
        let mark = sidecar.editor.mark();
        let editor = sidecar.editor.clone();
        let pending = tokio::spawn(async move {
            editor
                .command_response("mcp-sidecar.signIn", json!({"server": "py"}))
                .await
        });
        let (url, waiting) = sidecar.consent_and_open(&fixture, "py").await;
        let callback = fixture.authorize(&url).await;
        // The listener takes the redirect whatever it holds; the flow checks it afterwards.
        fixture.deliver(&with_param(&callback, param, value)).await;
        let response = tokio::time::timeout(WAIT, pending)
            .await
            .expect("signIn hung")
            .unwrap();
        // A sign-in that failed: `notRunning`, the message says why (docs/lsp-extensions.md).
        assert_eq!(
            response["error"]["data"]["kind"], "notRunning",
            "{response}"
        );
        let message = response["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(says), "{param}: {response}");
        // The "waiting for the sign-in" prompt is closed.
        sidecar
            .editor
            .wait_notification(mark, |n| {
                n["method"] == "mcp-sidecar/cancelPrompt"
                    && n["params"]["id"] == waiting["params"]["id"]
            })
            .await;
        assert_eq!(sidecar.row("py").await["state"], "needsAuth");
    }
    // No code was ever exchanged: nothing to store.
    assert!(fixture.events("token", None).await.is_empty());
    assert!(fixture.tokens().await.is_empty());
    assert!(!home.stored().contains("access_token"), "{}", home.stored());
    sidecar.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn two_accounts_on_one_url_stay_apart() {
    let fixture = Fixture::start(&["--client", "app-a=alice", "--client", "app-b=bob"]).await;
    let home = Home::new();
    let def =
        |client: &str| json!({"type": "http", "url": fixture.url, "oauth": {"clientId": client}});
    let sidecar = home
        .sidecar(json!({"a": def("app-a"), "b": def("app-b")}))
        .await;
    // Both ask; "Not now" to each, in whichever order they came.
    for _ in 0..2 {
        let prompt = sidecar.editor.next_prompt().await;
        assert_eq!(prompt["params"]["items"][1]["label"], "Not now", "{prompt}");
        sidecar
            .editor
            .respond(&prompt, json!({"selected": [1]}))
            .await;
    }
    sidecar
        .editor
        .wait_status(sidecar.mark, "a", "needsAuth")
        .await;
    sidecar
        .editor
        .wait_status(sidecar.mark, "b", "needsAuth")
        .await;

    sidecar.sign_in_command(&fixture, "a").await;
    sidecar.sign_in_command(&fixture, "b").await;
    assert_eq!(
        sidecar.whoami("a").await,
        json!({"account": "alice", "clientId": "app-a", "scopes": ["mcp:tools"]})
    );
    assert_eq!(
        sidecar.whoami("b").await,
        json!({"account": "bob", "clientId": "app-b", "scopes": ["mcp:tools"]})
    );
    assert!(fixture.events("register", None).await.is_empty());

    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .command("mcp-sidecar.signOut", json!({"server": "a"}))
        .await;
    sidecar.editor.wait_status(mark, "a", "needsAuth").await;
    let revoked = fixture.events("revoke", None).await;
    assert!(
        !revoked.is_empty() && revoked.iter().all(|e| e["account"] == "alice"),
        "{revoked:?}"
    );
    assert_eq!(sidecar.whoami("b").await["account"], "bob");
    assert_eq!(sidecar.row("b").await["auth"]["signedIn"], true);
    assert_eq!(sidecar.row("a").await["auth"]["signedIn"], false);
    sidecar.stop().await;
    home.assert_no_secret_logged(&fixture, false).await;
}

/// Every path a grant takes (the code exchange, a refresh, a sign-out) with the log at debug
/// level: no access or refresh token, and no authorization code, in the log file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn the_debug_log_holds_no_token_nor_code() {
    let fixture = Fixture::start(&["--token-lifetime", "2"]).await;
    let home = Home::new();
    let sidecar = home.sidecar(json!({"py": server(&fixture)})).await;
    sidecar.sign_in_by_prompt(&fixture, "py").await;
    until_expired(&fixture).await;
    assert_eq!(sidecar.whoami("py").await["account"], "user");
    assert!(
        !fixture
            .events("token", Some("refresh_token"))
            .await
            .is_empty()
    );
    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .command("mcp-sidecar.signOut", json!({"server": "py"}))
        .await;
    let status = sidecar.editor.wait_status(mark, "py", "needsAuth").await;
    assert!(
        status["message"]
            .as_str()
            .unwrap()
            .ends_with("(signed out)"),
        "{status}"
    );
    sidecar.stop().await;
    home.assert_no_secret_logged(&fixture, true).await;
}
