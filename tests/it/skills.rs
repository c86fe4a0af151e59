//! Skills (SEP-2640) through the editor contract: `listSkills` lists without reading a file,
//! `readSkill` reads one file and verifies it against the manifest (size, digest, frontmatter),
//! asks `skills/get` once when it does not match, and refuses a file the manifest does not list
//! without asking the server. Against the demo server's skills, the hostile
//! `fixtures/bad/hostile_tasks.py` (stdlib) and FastMCP's skills provider
//! (`fixtures/python/fastmcp_skills_server.py`; ignored by a plain `cargo test`, the interop tier
//! runs it).

use crate::support;

use serde_json::{Value, json};
use support::*;

async fn with_server(name: &str, definition: Value) -> CheckedEditor {
    let editor = in_process();
    let mark = editor.mark();
    editor
        .initialize(&[], json!({"servers": {name: definition}}), full_ui())
        .await;
    editor.wait_status(mark, name, "running").await;
    editor
}

fn rows(listed: &Value) -> &Vec<Value> {
    listed
        .as_array()
        .unwrap_or_else(|| panic!("not rows: {listed}"))
}

fn row<'a>(listed: &'a Value, uri: &str) -> &'a Value {
    rows(listed)
        .iter()
        .find(|r| r["uri"] == uri)
        .unwrap_or_else(|| panic!("no {uri} in {listed:#}"))
}

async fn read(editor: &TestEditor, server: &str, uri: &str, file: Option<&str>) -> Value {
    let mut arg = json!({"server": server, "uri": uri});
    if let Some(file) = file {
        arg["file"] = json!(file);
    }
    editor.command_response("mcp-sidecar.readSkill", arg).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demos_skills_are_listed_and_their_files_verified() {
    let editor = with_server("demoskills", demo_server("modern", None)).await;
    let listed = editor
        .command("mcp-sidecar.listSkills", json!({"server": "demoskills"}))
        .await;
    assert_eq!(rows(&listed).len(), 2, "{listed:#}");
    let report = row(&listed, "skill://flight-report/SKILL.md");
    assert_eq!(report["name"], "flight-report");
    assert_eq!(report["files"].as_array().unwrap().len(), 2);
    assert!(report.get("problem").is_none(), "{report:#}");
    let skill_md = read(
        &editor,
        "demoskills",
        "skill://flight-report/SKILL.md",
        None,
    )
    .await;
    let skill_md = &skill_md["result"];
    assert_eq!(skill_md["verified"], true, "{skill_md:#}");
    assert!(
        skill_md["text"]
            .as_str()
            .unwrap()
            .starts_with("---\nname: flight-report")
    );
    assert_eq!(skill_md["digest"], report["files"][0]["digest"]);
    let template = read(
        &editor,
        "demoskills",
        "skill://flight-report/SKILL.md",
        Some("skill://flight-report/templates/report.md"),
    )
    .await;
    assert_eq!(template["result"]["verified"], true, "{template:#}");
    // A file the manifest does not list is refused here.
    let unlisted = read(
        &editor,
        "demoskills",
        "skill://flight-report/SKILL.md",
        Some("skill://flight-report/secret.md"),
    )
    .await;
    assert_eq!(unlisted["error"]["data"]["kind"], "refused", "{unlisted:#}");
    // Without a server: every server that offers skills.
    let all = editor.command("mcp-sidecar.listSkills", json!({})).await;
    assert!(rows(&all).iter().all(|r| r["server"] == "demoskills"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hostile_servers_skills_are_refused_each_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("events.log");
    let mut def = python_fixture("bad/hostile_tasks.py", &["--page", "1"], 20);
    def["env"] = json!({"HOSTILE_TASKS_LOG": log.display().to_string()});
    let editor = with_server("badskills", def).await;
    let listed = editor
        .command("mcp-sidecar.listSkills", json!({"server": "badskills"}))
        .await;
    let reads = || -> Vec<String> {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix("read ").map(str::to_string))
            .collect()
    };
    // Listing reads nothing.
    assert_eq!(reads(), Vec::<String>::new());
    let problem = |uri| {
        row(&listed, uri)["problem"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    assert!(problem("skill://huge-manifest/SKILL.md").contains("100000 files"));
    assert!(problem("skill://dotdot/SKILL.md").contains("outside its folder"));
    assert_eq!(problem("skill://good/SKILL.md"), "");
    // Same names are shown on both rows.
    let a = row(&listed, "skill://a/dup/SKILL.md");
    assert_eq!(
        a["sameName"],
        json!([{"server": "badskills", "uri": "skill://b/dup/SKILL.md"}])
    );

    // A digest that does not match, even after skills/get: refused, the bytes not returned.
    let bad = read(&editor, "badskills", "skill://bad-digest/SKILL.md", None).await;
    assert_eq!(bad["error"]["data"]["kind"], "refused", "{bad:#}");
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("digest"),
        "{bad:#}"
    );
    assert!(bad.get("result").is_none());
    // A stale listing that skills/get corrects.
    let fixed = read(&editor, "badskills", "skill://fixed-by-get/SKILL.md", None).await;
    assert_eq!(fixed["result"]["verified"], true, "{fixed:#}");
    // A manifest with .. and an unlisted file: refused without asking the server.
    let before = reads();
    let dotdot = read(&editor, "badskills", "skill://dotdot/SKILL.md", None).await;
    assert_eq!(dotdot["error"]["data"]["kind"], "refused", "{dotdot:#}");
    let unlisted = read(
        &editor,
        "badskills",
        "skill://good/SKILL.md",
        Some("skill://good/scripts/x.py"),
    )
    .await;
    assert_eq!(unlisted["error"]["data"]["kind"], "refused", "{unlisted:#}");
    assert_eq!(reads(), before, "nothing was read for them");
    let good = read(
        &editor,
        "badskills",
        "skill://good/SKILL.md",
        Some("skill://good/references/guide.md"),
    )
    .await;
    assert_eq!(good["result"]["verified"], true, "{good:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs peers: scripts/install-peers.sh"]
async fn fastmcps_skills_are_listed_and_verified() {
    let def = json!({
        "command": peer("MCP_PYTHON"),
        "args": [fixture("python/fastmcp_skills_server.py").display().to_string(), "--page", "1"],
    });
    let editor = with_server("fmskills", def).await;
    let listed = editor
        .command("mcp-sidecar.listSkills", json!({"server": "fmskills"}))
        .await;
    let notes = row(&listed, "skill://release-notes/SKILL.md");
    for file in notes["files"].as_array().unwrap() {
        let read = read(
            &editor,
            "fmskills",
            "skill://release-notes/SKILL.md",
            file["uri"].as_str(),
        )
        .await;
        assert_eq!(read["result"]["verified"], true, "{read:#}");
        assert_eq!(read["result"]["digest"], file["digest"]);
    }
    row(&listed, "skill://review-checklist/SKILL.md");
}
