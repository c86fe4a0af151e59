//! Another local user (issue 35): the gateway's discovery folder and files, `mcp-sidecar
//! gateway` reading them, the endpoint flooded by connections without the secret, and a
//! gateway's secret inherited from the environment. Against the built binary.

use crate::support;

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
