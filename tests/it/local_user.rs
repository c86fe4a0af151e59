//! Another local user (issue 35): the gateway's discovery folder and files, `mcp-sidecar
//! gateway` reading them, the endpoint flooded by connections without the secret, and a
//! gateway's secret inherited from the environment. Against the built binary.

use crate::support;

use std::path::Path;

use serde_json::json;
use support::gateway::gateway_info;
use support::*;

/// A sidecar started with an outer editor's gateway variables (VS Code passes its own
/// environment on): its server's process does not get them; other variables pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inherited_gateway_secret_does_not_reach_the_servers() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let seen = home.path().join("server-env");
    let (mut child, editor) = spawn_editor(
        sidecar_command()
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("XDG_RUNTIME_DIR", home.path().join("run"))
            .env("MCP_SIDECAR_GATEWAY", "http://127.0.0.1:9/mcp")
            .env("MCP_SIDECAR_GATEWAY_TOKEN", "outer-editors-secret")
            .env("MCP_SIDECAR_TEST_PASSED_ON", "kept"),
    );
    let mark = editor.mark();
    let server = json!({"command": "sh", "args": [
        "-c", "env > \"$0\"; exec \"$1\" demo-server --era legacy",
        seen, sidecar_bin()]});
    editor
        .initialize(
            &[(folder.path(), "work")],
            json!({"servers": {"envy": server}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "envy", "running").await;
    let env = std::fs::read_to_string(&seen).unwrap();
    assert!(env.contains("MCP_SIDECAR_TEST_PASSED_ON=kept"), "{env}");
    assert!(!env.contains("outer-editors-secret"), "{env}");
    assert!(!env.contains("MCP_SIDECAR_GATEWAY"), "{env}");
    // The sidecar's own gateway is its own, with a new secret.
    let info = gateway_info(&editor, mark).await;
    assert_ne!(
        info["env"]["MCP_SIDECAR_GATEWAY_TOKEN"],
        "outer-editors-secret"
    );
    editor.shutdown_and_exit().await;
    wait_exit(&mut child).await;
}

fn as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// When process `pid` started (`/proc/<pid>/stat` field 22), as a discovery file records it.
fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 1..]
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()
}

/// The name of a folder's discovery file.
fn file_name(folder: &Path) -> String {
    mcp_sidecar::gateway::discovery::file_for(folder)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Another user made the discovery folder first (0777; as root, really another user's, else a
/// link to a folder), with links at the names of the file and its temporary file: the sidecar
/// writes nothing through them, and still serves the editor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_discovery_folder_another_user_made_first_gets_no_secret() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let run = home.path().join("run");
    let theirs = home.path().join("theirs");
    std::fs::create_dir_all(theirs.join("gateway")).unwrap();
    std::fs::create_dir_all(&run).unwrap();
    let victim = home.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();
    if as_root() {
        std::fs::rename(&theirs, run.join("mcp-sidecar")).unwrap();
    } else {
        std::os::unix::fs::symlink(&theirs, run.join("mcp-sidecar")).unwrap();
    }
    let gateway_dir = run.join("mcp-sidecar/gateway");
    let (mut child, editor) = spawn_editor(
        sidecar_command()
            .env("XDG_CONFIG_HOME", home.path().join("config"))
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("XDG_RUNTIME_DIR", &run),
    );
    let pid = child.id().unwrap();
    let name = file_name(folder.path());
    for planted in [
        format!("{name}.tmp{pid}"),
        format!(".{name}.{pid}.0.tmp"),
        name.clone(),
    ] {
        std::os::unix::fs::symlink(&victim, gateway_dir.join(planted)).unwrap();
    }
    for dir in [run.join("mcp-sidecar"), gateway_dir.clone()] {
        if as_root() {
            std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        }
        set_mode(&dir, 0o777);
    }
    let mark = editor.mark();
    editor
        .initialize(
            &[(folder.path(), "work")],
            json!({"servers": {}}),
            json!({}),
        )
        .await;
    let info = gateway_info(&editor, mark).await;
    let token = info["env"]["MCP_SIDECAR_GATEWAY_TOKEN"].as_str().unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    for entry in std::fs::read_dir(&gateway_dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!text.contains(token), "{} holds the secret", path.display());
    }
    editor.shutdown_and_exit().await;
    wait_exit(&mut child).await;
}

/// `mcp-sidecar gateway` in `folder`, finding the gateway through the discovery files under
/// `run` only; its exit status and stderr.
async fn bridge_in(folder: &Path, run: &Path) -> tokio::process::Child {
    tokio::process::Command::new(sidecar_bin())
        .arg("gateway")
        .current_dir(folder)
        .env_remove("MCP_SIDECAR_GATEWAY")
        .env_remove("MCP_SIDECAR_GATEWAY_TOKEN")
        .env("XDG_RUNTIME_DIR", run)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap()
}

/// Discovery files that are not this user's own private files of a running sidecar (another
/// user's, readable by others, from an exited sidecar whose pid is used again): the bridge
/// connects nowhere (the secret goes nowhere) and says there is no sidecar. A good file is used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_trusts_only_our_private_files_of_a_live_sidecar() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let run = home.path().join("run");
    let dir = run.join("mcp-sidecar/gateway");
    std::fs::create_dir_all(&dir).unwrap();
    set_mode(&run.join("mcp-sidecar"), 0o700);
    set_mode(&dir, 0o700);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        listener.local_addr().unwrap().port()
    );
    let path = dir.join(file_name(folder.path()));
    let pid = std::process::id();
    let started = start_time(pid).unwrap();
    let plant = |pid: u32, started: u64, mode: u32, owner: Option<u32>| {
        let _ = std::fs::remove_file(&path);
        let file = json!({"url": url, "token": "planted-secret", "pid": pid, "started": started,
                          "folder": folder.path()});
        std::fs::write(&path, file.to_string()).unwrap();
        set_mode(&path, mode);
        if let Some(uid) = owner {
            std::os::unix::fs::chown(&path, Some(uid), None).unwrap();
        }
    };
    let mut bad = vec![
        ("readable by others", (pid, started, 0o644, None)),
        ("a pid used again", (pid, started + 1, 0o600, None)),
    ];
    if as_root() {
        bad.push(("another user's", (pid, started, 0o600, Some(65534))));
    } else if let Some(init) = start_time(1) {
        bad.push(("another user's process (EPERM)", (1, init, 0o600, None)));
    }
    for (what, (pid, started, mode, owner)) in bad {
        plant(pid, started, mode, owner);
        let bridge = bridge_in(folder.path(), &run).await.wait_with_output();
        let output = tokio::time::timeout(WAIT, bridge)
            .await
            .unwrap_or_else(|_| panic!("{what}: the bridge waits on the planted URL"))
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{what}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("no mcp-sidecar is serving"),
            "{what}: {stderr}"
        );
        let connected = listener.accept();
        assert!(
            matches!(&connected, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
            "{what}: the bridge connected to the planted URL"
        );
    }
    // Our own 0600 file naming this (live) process: used.
    plant(pid, started, 0o600, None);
    let _bridge = bridge_in(folder.path(), &run).await;
    listener.set_nonblocking(false).unwrap();
    let (mut stream, _) = tokio::task::spawn_blocking(move || listener.accept())
        .await
        .unwrap()
        .unwrap();
    let mut head = vec![0u8; 512];
    let n = std::io::Read::read(&mut stream, &mut head).unwrap();
    let head = String::from_utf8_lossy(&head[..n]);
    assert!(head.contains("Bearer planted-secret"), "{head}");
}

/// The status of an authorized `POST /mcp` (an `initialize`) on a new connection; `None` when
/// no answer came in 10 s.
async fn authorized_status(port: u16, token: &str) -> Option<u16> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nAuthorization: Bearer {token}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .ok()?;
        stream.write_all(request.as_bytes()).await.ok()?;
        let mut head = [0u8; 12];
        stream.read_exact(&mut head).await.ok()?;
        String::from_utf8_lossy(&head[9..12]).parse().ok()
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), exchange)
        .await
        .ok()
        .flatten()
}

/// Another user opens more idle connections to the gateway than the sidecar may open files
/// (the sidecar started with 256): an agent's request with the secret is still answered, a
/// server still starts, and the flood is one line in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_without_the_secret_do_not_exhaust_the_gateway() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let log = home.path().join("sidecar.log");
    let mut command = sidecar_command();
    command
        .arg("--log-file")
        .arg(&log)
        .args(["--log-level", "info"])
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_RUNTIME_DIR", home.path().join("run"));
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 256,
                rlim_max: 256,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let (mut child, editor) = spawn_editor(&mut command);
    let mark = editor.mark();
    editor
        .initialize(
            &[(folder.path(), "work")],
            json!({"servers": {}}),
            json!({}),
        )
        .await;
    let info = gateway_info(&editor, mark).await;
    let token = info["env"]["MCP_SIDECAR_GATEWAY_TOKEN"].as_str().unwrap();
    let port = url::Url::parse(info["url"].as_str().unwrap())
        .unwrap()
        .port()
        .unwrap();
    let mut idle = Vec::new();
    for _ in 0..400 {
        let connect = tokio::net::TcpStream::connect(("127.0.0.1", port));
        match tokio::time::timeout(std::time::Duration::from_secs(2), connect).await {
            Ok(Ok(stream)) => idle.push(stream),
            // The listen queue is full: the sidecar no longer takes connections.
            _ => break,
        }
    }
    let lines = || {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let floods = text
            .lines()
            .filter(|l| l.contains("gateway: flood"))
            .count();
        let failed = text.lines().filter(|l| l.contains("accept failed")).count();
        (floods, failed)
    };
    eventually("the flood's log line", || async { lines().0 > 0 }).await;
    // The agent's request is answered while the idle connections stay open: once they have been
    // let be for the gate's grace, the oldest gives way to it (until then it is refused at once).
    eventually(
        "an agent's request with the secret answered during the flood",
        || async { authorized_status(port, token).await == Some(200) },
    )
    .await;
    let mark = editor.mark();
    editor
        .notify(
            "workspace/didChangeConfiguration",
            json!({"settings": {"servers": {"demo": demo_server("legacy", None)}}}),
        )
        .await;
    editor.wait_status(mark, "demo", "running").await;
    drop(idle);
    editor.shutdown_and_exit().await;
    wait_exit(&mut child).await;
    assert_eq!(lines(), (1, 0), "one line for the flood");
}
