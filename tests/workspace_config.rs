//! Workspace configuration through the built binary: the mcp.json family, trust, variables and
//! inputs, JSONC errors, and re-reading files when they change.

mod support;

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use support::*;
use tokio::process::{Child, Command};

struct Sidecar {
    child: Child,
    editor: Arc<TestEditor>,
}

fn spawn(home: &Path, log: &Path) -> Sidecar {
    let mut child = Command::new(sidecar_bin())
        .args(["lsp", "--log-file"])
        .arg(log)
        .args(["--log-level", "debug"])
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("MCP_SIDECAR_TEST_SECRET_DIR", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let editor = TestEditor::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    Sidecar { child, editor }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A `.vscode/mcp.json` with comments and trailing commas.
fn vscode_json(servers: &[(&str, &str)]) -> String {
    let bin = sidecar_bin().display().to_string();
    let entries: Vec<String> = servers
        .iter()
        .map(|(name, era)| format!("    // the demo server\n    \"{name}\": {{\"command\": \"{bin}\", \"args\": [\"demo-server\", \"--era\", \"{era}\",],}},"))
        .collect();
    format!("{{\n  \"servers\": {{\n{}\n  }},\n}}\n", entries.join("\n"))
}

fn child_count(sidecar: &Sidecar) -> usize {
    let pid = sidecar.child.id().unwrap();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
            fields[0] != "Z" && fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(pid)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workspace_servers_wait_for_trust_and_changed_definitions_ask_again() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let config = folder.path().join(".vscode/mcp.json");
    write(&config, &vscode_json(&[("ws", "both")]));
    let sidecar = spawn(home.path(), &home.path().join("log"));
    let editor = &sidecar.editor;
    let mark = editor.mark();
    editor
        .initialize(&[(folder.path(), "proj")], json!({}), full_ui())
        .await;
    let waiting = editor.wait_status(mark, "ws", "needsTrust").await;
    assert_eq!(waiting["source"], config.display().to_string());
    // Not spawned before trust.
    assert_eq!(child_count(&sidecar), 0);
    let ask = editor.next_prompt().await;
    assert_eq!(ask["method"], "mcp-sidecar/quickPick");
    let title = ask["params"]["title"].as_str().unwrap();
    assert!(
        title.contains("\"ws\"") && title.contains(".vscode/mcp.json"),
        "{title}"
    );
    let command_line = ask["params"]["items"][0]["description"].as_str().unwrap();
    assert!(
        command_line.contains("demo-server --era both"),
        "{command_line}"
    );
    let mark = editor.mark();
    editor.respond(&ask, json!({"selected": [0]})).await;
    editor.wait_status(mark, "ws", "running").await;
    assert_eq!(child_count(&sidecar), 1);
    // A changed command asks again; "Don't trust" stops it.
    let mark = editor.mark();
    write(&config, &vscode_json(&[("ws", "legacy")]));
    let ask = editor.next_prompt().await;
    assert!(
        ask["params"]["items"][0]["description"]
            .as_str()
            .unwrap()
            .contains("--era legacy")
    );
    editor.respond(&ask, json!({"selected": [1]})).await;
    let refused = editor
        .wait_notification(mark, |n| {
            n["method"] == "mcp-sidecar/serverStatus"
                && n["params"]["name"] == "ws"
                && n["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("not trusted"))
        })
        .await;
    assert_eq!(refused["params"]["state"], "needsTrust");
    // The command trusts it after all.
    let mark = editor.mark();
    let trusted = editor
        .command("mcp-sidecar.trustServer", json!({"server": "ws"}))
        .await;
    assert_eq!(trusted["trusted"], true);
    let status = editor.wait_status(mark, "ws", "running").await;
    assert_eq!(status["protocolVersion"], "2025-11-25");
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_a_file_restarts_only_that_server_and_jsonc_errors_say_where() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    // Trusted servers from the person's own file, read the same way.
    let user = home.path().join("config/mcp-sidecar/mcp.json");
    write(&user, &vscode_json(&[("a", "both"), ("b", "both")]));
    let sidecar = spawn(home.path(), &home.path().join("log"));
    let editor = &sidecar.editor;
    let mark = editor.mark();
    editor
        .initialize(&[(folder.path(), "proj")], json!({}), full_ui())
        .await;
    editor.wait_status(mark, "a", "running").await;
    editor.wait_status(mark, "b", "running").await;
    let mark = editor.mark();
    write(&user, &vscode_json(&[("a", "legacy"), ("b", "both")]));
    let status = editor.wait_status(mark, "a", "running").await;
    assert_eq!(status["protocolVersion"], "2025-11-25");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let about_b = editor
        .notifications()
        .into_iter()
        .skip(mark)
        .filter(|n| n["params"]["name"] == "b")
        .count();
    assert_eq!(about_b, 0, "b was restarted");
    // A JSONC syntax error in a workspace file: one message with line and column; the others run.
    let mark = editor.mark();
    let broken = folder.path().join(".mcp.json");
    write(
        &broken,
        "{\n  \"mcpServers\": {\n    \"x\": {\"command\" \"y\"}\n  }\n}\n",
    );
    let shown = editor
        .wait_notification(mark, |n| n["method"] == "window/showMessage")
        .await;
    let message = shown["params"]["message"].as_str().unwrap();
    assert!(
        message.contains(".mcp.json") && message.contains("line 3, column"),
        "{message}"
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let messages = editor
        .notifications()
        .into_iter()
        .skip(mark)
        .filter(|n| n["method"] == "window/showMessage")
        .count();
    assert_eq!(messages, 1, "reported once");
    let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["state"] == "running"),
        "{listed}"
    );
    editor.shutdown_and_exit().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inputs_are_asked_once_and_never_logged_and_unknown_variables_are_named() {
    let home = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let bin = sidecar_bin().display().to_string();
    let user = home.path().join("config/mcp-sidecar/mcp.json");
    let text = |era: &str| {
        json!({
            "inputs": [{"type": "promptString", "id": "api-key", "description": "Demo API key", "password": true}],
            "servers": {
                "keyed": {"command": bin, "args": ["demo-server", "--era", era], "env": {"DEMO_KEY": "${input:api-key}", "ROOT": "${workspaceFolder}"}},
                "typo": {"command": bin, "args": ["${workspaceFolderr}"]},
            }
        })
        .to_string()
    };
    write(&user, &text("both"));
    let log = home.path().join("log");
    let sidecar = spawn(home.path(), &log);
    let editor = &sidecar.editor;
    let mark = editor.mark();
    editor
        .initialize(&[(folder.path(), "proj")], json!({}), full_ui())
        .await;
    let ask = editor.next_prompt().await;
    assert_eq!(ask["method"], "mcp-sidecar/inputBox");
    assert_eq!(ask["params"]["password"], true);
    assert!(
        ask["params"]["title"]
            .as_str()
            .unwrap()
            .contains("Demo API key")
    );
    editor
        .respond(&ask, json!({"value": "sk-very-secret-123"}))
        .await;
    editor.wait_status(mark, "keyed", "running").await;
    let typo = editor.wait_status(mark, "typo", "failed").await;
    let message = typo["message"].as_str().unwrap();
    assert!(
        message.contains("${workspaceFolderr}") && message.contains("not set"),
        "{message}"
    );
    // Changing the file re-reads it without asking again.
    let mark = editor.mark();
    write(&user, &text("legacy"));
    editor.wait_status(mark, "keyed", "running").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let prompts = editor.notifications();
    assert!(!prompts.is_empty());
    editor.shutdown_and_exit().await;
    let mut child = sidecar.child;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        !logged.contains("sk-very-secret-123"),
        "the input leaked into the log"
    );
    assert!(logged.contains("keyed"), "the log has content");
}
