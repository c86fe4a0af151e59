//! Black-box tests: the built binary driven over stdio as an editor would.

use crate::support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;
use tokio::process::{Child, Command};

struct Sidecar {
    child: Child,
    editor: CheckedEditor,
}

fn spawn_sidecar(config_home: &std::path::Path) -> Sidecar {
    let (child, editor) = spawn_editor(
        sidecar_command()
            .env("XDG_CONFIG_HOME", config_home)
            .env("MCP_SIDECAR_LOG", "debug"),
    );
    Sidecar { editor, child }
}

/// The sidecar logging to `log` at info level, its stderr captured (it must stay empty).
fn spawn_logging_sidecar(
    config_home: &std::path::Path,
    log: &std::path::Path,
) -> (Child, CheckedEditor) {
    spawn_editor(
        sidecar_command()
            .arg("--log-file")
            .arg(log)
            .args(["--log-level", "info"])
            .env("XDG_CONFIG_HOME", config_home)
            .stderr(Stdio::piped()),
    )
}

/// Processes whose parent is `pid` (from /proc).
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(child) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{child}/stat")) else {
            continue;
        };
        // Fields after the command name (which may contain spaces) are after the last ')'.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid) {
            out.push(child);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| !s[s.rfind(')').unwrap() + 2..].starts_with('Z'))
        .unwrap_or(false)
}

/// Waits (10 s at most) until none of `pids` is alive; returns how long that took.
async fn wait_gone(pids: &[u32]) -> Duration {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(10);
    while pids.iter().any(|p| alive(*p)) {
        assert!(
            Instant::now() < deadline,
            "server processes survived: {pids:?}"
        );
        // A poll interval: a process that is not our child sends no event when it ends.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

async fn start_with_two_servers(
    sidecar: &Sidecar,
    folders: &[(&std::path::Path, &str)],
) -> Vec<u32> {
    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .initialize(
            folders,
            json!({"servers": {"legacy": demo_server("legacy", None), "modern": demo_server("modern", None)}}),
            json!({}),
        )
        .await;
    sidecar.editor.wait_status(mark, "legacy", "running").await;
    sidecar.editor.wait_status(mark, "modern", "running").await;
    let children = children_of(sidecar.child.id().unwrap());
    assert_eq!(children.len(), 2, "{children:?}");
    children
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_serves_roots_over_stdio_and_stops_its_servers_on_exit() {
    let home = tempfile::tempdir().unwrap();
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let mut sidecar = spawn_sidecar(home.path());
    let children = start_with_two_servers(&sidecar, &[(a.path(), "a"), (b.path(), "b")]).await;
    for server in ["legacy", "modern"] {
        let result = sidecar
            .editor
            .command(
                "mcp-sidecar.callTool",
                json!({"server": server, "tool": "list_roots"}),
            )
            .await;
        let mut got: Vec<String> = structured(&result)["roots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap().to_string())
            .collect();
        got.sort();
        let mut want = vec![file_uri(a.path()), file_uri(b.path())];
        want.sort();
        assert_eq!(got, want, "{server}");
    }
    sidecar.editor.shutdown_and_exit().await;
    let status = tokio::time::timeout(Duration::from_secs(10), sidecar.child.wait())
        .await
        .expect("the sidecar did not exit after exit")
        .unwrap();
    assert!(status.success(), "{status}");
    wait_gone(&children).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_die_when_the_editor_pipe_closes() {
    let home = tempfile::tempdir().unwrap();
    let mut sidecar = spawn_sidecar(home.path());
    let children = start_with_two_servers(&sidecar, &[]).await;
    // The editor disappears without shutdown: its end of the pipes closes.
    let closed = Instant::now();
    drop(sidecar.editor);
    tokio::time::timeout(Duration::from_secs(10), sidecar.child.wait())
        .await
        .expect("the sidecar did not exit when its stdin closed")
        .unwrap();
    let exited = closed.elapsed();
    wait_gone(&children).await;
    eprintln!(
        "pipe closed: sidecar exited after {exited:.2?}, servers gone after {:.2?}",
        closed.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_die_even_when_the_sidecar_is_killed() {
    let home = tempfile::tempdir().unwrap();
    let mut sidecar = spawn_sidecar(home.path());
    let children = start_with_two_servers(&sidecar, &[]).await;
    let killed = Instant::now();
    sidecar.child.kill().await.unwrap();
    wait_gone(&children).await;
    eprintln!(
        "sidecar SIGKILLed: servers gone after {:.2?}",
        killed.elapsed()
    );
}

/// A stand-in editor: starts the sidecar on pipes it alone holds, initializes it with the
/// servers in argv[2], waits until they all run, prints the sidecar's pid, then waits to be
/// killed.
const EDITOR_PY: &str = r#"
import json, subprocess, sys

sidecar, settings = sys.argv[1], json.loads(sys.argv[2])
p = subprocess.Popen([sidecar, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)

def send(message):
    body = json.dumps(message).encode()
    p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    p.stdin.flush()

def read():
    length = None
    while True:
        line = p.stdout.readline()
        if not line:
            sys.exit("the sidecar closed its stdout")
        line = line.strip()
        if not line:
            break
        name, _, value = line.partition(b":")
        if name.lower() == b"content-length":
            length = int(value)
    return json.loads(p.stdout.read(length))

settings["serverScopes"] = {name: "user" for name in settings["servers"]}
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "processId": None, "rootUri": None, "workspaceFolders": [],
    "capabilities": {"experimental": {"mcpSidecar": {"serverScopes": True}}},
    "initializationOptions": settings}})
running = set()
initialized = False
while running != set(settings["servers"]):
    message = read()
    if message.get("id") == 1 and not initialized:
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        initialized = True
    elif message.get("method") == "mcp-sidecar/serverStatus":
        if message["params"]["state"] == "running":
            running.add(message["params"]["name"])
print(p.pid, flush=True)
sys.stdin.read()
"#;

/// The editor process itself is SIGKILLed (no shutdown, no chance to close anything on
/// purpose): the kernel closes its pipe ends, the orphaned sidecar sees EOF and exits, and no
/// server survives it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_server_survives_the_editor_process_being_killed() {
    use tokio::io::AsyncBufReadExt;
    let home = tempfile::tempdir().unwrap();
    let settings = json!({"servers": {"legacy": demo_server("legacy", None), "modern": demo_server("modern", None)}});
    let mut editor = Command::new("python3")
        .args(["-c", EDITOR_PY])
        .arg(sidecar_bin())
        .arg(settings.to_string())
        .env("XDG_CONFIG_HOME", home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(editor.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(WAIT, lines.next_line())
        .await
        .expect("the stand-in editor never got its servers running")
        .unwrap()
        .expect("the stand-in editor exited early");
    let sidecar: u32 = line.trim().parse().unwrap();
    assert_eq!(children_of(editor.id().unwrap()), [sidecar]);
    let servers = children_of(sidecar);
    assert_eq!(servers.len(), 2, "{servers:?}");
    assert!(alive(sidecar));

    let killed = Instant::now();
    editor.kill().await.unwrap();
    let sidecar_gone = wait_gone(&[sidecar]).await;
    wait_gone(&servers).await;
    let servers_gone = killed.elapsed();
    eprintln!(
        "editor SIGKILLed: sidecar exited after {sidecar_gone:.2?}, servers gone after {servers_gone:.2?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_help_and_bad_arguments() {
    let out = std::process::Command::new(sidecar_bin())
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!(
            "mcp-sidecar {}\nMCP protocol revisions: 2026-07-28, 2025-11-25, 2025-06-18, \
             2025-03-26, 2024-11-05",
            env!("CARGO_PKG_VERSION")
        )
    );
    let out = std::process::Command::new(sidecar_bin())
        .arg("--bogus")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing may go to stdout on errors");
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown argument"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_own_file_is_read_and_named_as_the_source() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("mcp-sidecar");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mcp.json"),
        serde_json::to_string(&json!({"servers": {"mine": demo_server("both", None)}})).unwrap(),
    )
    .unwrap();
    let sidecar = spawn_sidecar(home.path());
    let mark = sidecar.editor.mark();
    sidecar.editor.initialize(&[], json!({}), json!({})).await;
    let status = sidecar.editor.wait_status(mark, "mine", "running").await;
    assert_eq!(status["source"], dir.join("mcp.json").display().to_string());
    sidecar.editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_go_to_the_log_file_with_each_servers_stderr() {
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("sidecar.log");
    let (child, editor) = spawn_logging_sidecar(home.path(), &log);
    let mark = editor.mark();
    let exits = json!({"command": "python3", "args": [fixture("bad/exits.py")]});
    editor
        .initialize(
            &[],
            json!({"servers": {"exits": exits}, "maxRestarts": 0}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "exits", "failed").await;
    editor.shutdown_and_exit().await;
    let shown = editor.read_notifications(mark, |n| n["method"] == "window/showMessage");
    assert!(
        !shown.is_empty()
            && shown.iter().all(|n| {
                let text = n["params"]["message"].as_str().unwrap_or_default();
                text.starts_with("MCP server \"exits\"") && text.contains("fatal: missing API key")
            }),
        "{shown:#?}"
    );
    let out = child.wait_with_output().await.unwrap();
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("exits") && text.contains("fatal: missing API key"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_relays_a_servers_question_to_the_editor() {
    let home = tempfile::tempdir().unwrap();
    for era in ["legacy", "modern"] {
        let sidecar = spawn_sidecar(home.path());
        let mark = sidecar.editor.mark();
        sidecar
            .editor
            .initialize(
                &[],
                json!({"servers": {"demo": demo_server(era, None)}, "elicitation": {"rateLimit": "100000/s"}}),
                full_ui(),
            )
            .await;
        sidecar.editor.wait_status(mark, "demo", "running").await;
        let (_, done) = sidecar
            .editor
            .start_request(
                "workspace/executeCommand",
                json!({"command": "mcp-sidecar.callTool",
                "arguments": [{"server": "demo", "tool": "book_trip", "arguments": {}}]}),
            )
            .await;
        let prompt = sidecar.editor.next_prompt().await;
        assert_eq!(prompt["method"], "mcp-sidecar/inputBox", "{era}");
        sidecar
            .editor
            .respond(&prompt, serde_json::Value::Null)
            .await;
        let response = tokio::time::timeout(WAIT, done).await.unwrap().unwrap();
        assert_eq!(
            structured(&response["result"]),
            json!({"action": "cancel"}),
            "{era}"
        );
        sidecar.editor.shutdown_and_exit().await;
    }
}

/// Malformed, oversized-in-depth, non-UTF-8 and unexpected lines from a server, through the
/// built binary with its log file: junk is skipped with a log line naming the server, an answer
/// that cannot be read fails its call at once with the reason, a request that cannot be read is
/// refused, nothing panics, and the sidecar keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_lines_from_a_server_get_clear_errors_and_nothing_else_breaks() {
    const PROMPT: Duration = Duration::from_secs(2);
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("sidecar.log");
    let (child, editor) = spawn_logging_sidecar(home.path(), &log);
    let mark = editor.mark();
    let malformed =
        json!({"command": "python3", "args": [fixture("bad/malformed.py")], "timeout": 5});
    editor
        .initialize(
            &[],
            json!({"servers": {"malformed": malformed, "demo": demo_server("both", None)}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "malformed", "running").await;
    editor.wait_status(mark, "demo", "running").await;
    let emit = |kind: &'static str| {
        let editor = editor.clone();
        async move {
            let started = Instant::now();
            let response = editor
                .command_response(
                    "mcp-sidecar.callTool",
                    json!({"server": "malformed", "tool": "emit", "arguments": {"kind": kind}}),
                )
                .await;
            (response, started.elapsed())
        }
    };

    // Junk around a correct answer: the call gets its answer.
    for kind in [
        "invalid_utf8_junk",
        "deep_junk",
        "unknown_id",
        "wrong_id_type",
        "nul_and_controls",
        "bom",
        "batch_answer",
    ] {
        let (response, took) = emit(kind).await;
        assert_eq!(
            text_of(&response["result"]),
            format!("ok {kind}"),
            "{kind}: {response}"
        );
        eprintln!("{kind}: answered in {took:.2?}");
        assert!(took < PROMPT, "{kind}: {took:?}");
    }

    // The batch's other member, a log notification, reached the editor too.
    let logged = editor
        .wait_notification(mark, |n| {
            n["method"] == "window/logMessage"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("inside a batch"))
        })
        .await;
    assert!(
        logged["params"]["message"]
            .as_str()
            .unwrap()
            .starts_with("[malformed]"),
        "{logged}"
    );

    // The call's own answer cannot be read: it fails at once, saying why.
    for (kind, reason) in [
        ("invalid_utf8_answer", "could not be read"),
        ("lone_surrogate_answer", "could not be read"),
        ("deep_answer", "its result nests deeper than 100 levels"),
        ("error_missing_fields", "could not be read"),
    ] {
        let (response, took) = emit(kind).await;
        let message = response["error"]["message"].as_str().unwrap_or_default();
        eprintln!("{kind}: failed in {took:.2?}: {message}");
        assert!(message.contains(reason), "{kind}: {response}");
        assert!(took < PROMPT, "{kind}: {took:?}");
    }

    // A request the sidecar cannot read is answered with an error, not left waiting.
    let (response, took) = emit("bad_request").await;
    let refused = &structured(&response["result"])["response"];
    assert_eq!(refused["error"]["code"], -32602, "{response}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("could not read this request"),
        "{response}"
    );
    eprintln!("bad_request: refused in {took:.2?}");

    // Still serving: the same server, another server, the editor's own requests.
    let pong = call(&editor, "malformed", "ping_tool", json!({})).await;
    assert_eq!(text_of(&pong), "pong");
    let echo = call(&editor, "demo", "echo", json!({"text": "fine"})).await;
    assert_eq!(text_of(&echo), "fine");
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    for row in listed.as_array().unwrap() {
        assert_eq!(row["state"], "running", "{row}");
        assert_eq!(row["restarts"], 0, "{row}");
    }
    editor.shutdown_and_exit().await;
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("the sidecar did not exit")
        .unwrap();
    assert!(out.status.success(), "{}", out.status);
    assert!(
        out.stderr.is_empty(),
        "nothing (no panic) on stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let skipped: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("not a JSON-RPC message") && l.contains("malformed"))
        .collect();
    eprintln!(
        "{} junk lines logged, e.g. {:?}",
        skipped.len(),
        skipped.first()
    );
    assert!(skipped.len() >= 3, "{text}");
    assert!(!text.contains("panicked"), "{text}");
}

/// `mcp-sidecar doctor` over a home and a workspace it makes: what is fine, then each problem.
#[test]
fn doctor_reports_config_commands_and_state_dir() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let config = home.path().join("config");
    let state = home.path().join("state");
    let ws = home.path().join("ws");
    std::fs::create_dir_all(config.join("mcp-sidecar")).unwrap();
    std::fs::create_dir_all(ws.join(".vscode")).unwrap();
    let doctor = |folder: &std::path::Path| {
        let out = std::process::Command::new(sidecar_bin())
            .arg("doctor")
            .arg(folder)
            .env("XDG_CONFIG_HOME", &config)
            .env("XDG_STATE_HOME", &state)
            .env("SECRET_TOKEN", "s3cr3t-value")
            .output()
            .unwrap();
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.code(), String::from_utf8(out.stdout).unwrap())
    };
    std::fs::write(
        config.join("mcp-sidecar/mcp.json"),
        serde_json::to_string(&json!({"servers": {
            "mine": demo_server("both", None),
            "remote": {"url": "https://example.com/mcp?token=${env:SECRET_TOKEN}"},
        }}))
        .unwrap(),
    )
    .unwrap();
    let (code, text) = doctor(&ws);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("MCP protocol revisions: 2026-07-28"),
        "{text}"
    );
    assert!(
        text.contains(&format!("ok: \"mine\" runs {}", sidecar_bin().display())),
        "{text}"
    );
    assert!(
        text.contains("ok: \"remote\" is an HTTP server at https://example.com ["),
        "{text}"
    );
    assert!(text.contains("does not exist yet"), "{text}");
    assert!(text.contains("no problem found"), "{text}");
    assert!(!text.contains("s3cr3t"), "{text}");

    // A workspace server whose command is missing, a malformed workspace file, a readable state
    // directory: three problems, each named, exit 1.
    std::fs::write(
        ws.join(".mcp.json"),
        r#"{"mcpServers": {"gone": {"command": "no-such-command-xyz"}}}"#,
    )
    .unwrap();
    std::fs::write(ws.join(".vscode/mcp.json"), "{\"servers\": {").unwrap();
    std::fs::create_dir_all(state.join("mcp-sidecar")).unwrap();
    std::fs::set_permissions(
        state.join("mcp-sidecar"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let (code, text) = doctor(&ws);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("problem: \"gone\": command \"no-such-command-xyz\" is not an executable file on its PATH"),
        "{text}"
    );
    assert!(text.contains("runs once trusted"), "{text}");
    assert!(text.contains(".vscode/mcp.json: line 1"), "{text}");
    assert!(
        text.contains("is 755, others may read it: run chmod 700"),
        "{text}"
    );
    assert!(text.contains("3 problems found"), "{text}");
}

/// At `trace`, every library's lines on: the person's answers to a server's form (a name here,
/// a password on a real form) reach the server and appear in no log line, in either era; the
/// log file is created `0600`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_never_reach_the_log_even_at_trace_and_the_log_file_is_private() {
    use std::os::unix::fs::PermissionsExt;
    const ANSWER: &str = "Zq7-private-answer-4481";
    let home = tempfile::tempdir().unwrap();
    let log = home.path().join("sidecar.log");
    let (child, editor) = spawn_editor(
        sidecar_command()
            .arg("--log-file")
            .arg(&log)
            .args(["--log-level", "trace"])
            .env("XDG_CONFIG_HOME", home.path())
            .env("XDG_STATE_HOME", home.path()),
    );
    let mark = editor.mark();
    editor
        .initialize(
            &[],
            json!({"servers": {
                "legacy": demo_server("both", Some("2025-11-25")),
                "modern": demo_server("both", Some("2026-07-28")),
            }}),
            full_ui(),
        )
        .await;
    editor.wait_status(mark, "legacy", "running").await;
    editor.wait_status(mark, "modern", "running").await;
    for server in ["legacy", "modern"] {
        let (_, done) = editor
            .start_request(
                "workspace/executeCommand",
                json!({"command": "mcp-sidecar.callTool",
                "arguments": [{"server": server, "tool": "book_trip", "arguments": {"destination": "Oslo"}}]}),
            )
            .await;
        let mut script = crate::elicitation::booking_script();
        script[0].1 = json!({"value": ANSWER});
        editor.answer_prompts(&script).await;
        let response = tokio::time::timeout(WAIT, done).await.unwrap().unwrap();
        assert_eq!(
            structured(&response["result"])["content"]["name"],
            ANSWER,
            "{server}: the server got the answer"
        );
    }
    editor.shutdown_and_exit().await;
    let _ = child.wait_with_output().await.unwrap();
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("answered an elicitation"), "{text}");
    let leaks: Vec<&str> = text.lines().filter(|l| l.contains(ANSWER)).collect();
    assert!(leaks.is_empty(), "answers in the log: {leaks:#?}");
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the log file's mode");
}
