//! Floods from a server (log notifications, `tools/list_changed`, progress, stderr) are absorbed
//! before the editor: the built binary forwards at most about 100 a second per server plus one
//! summary line, and the editor's requests and the other servers keep answering meanwhile.
//! Run with `--nocapture` for the figures.

use crate::support;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::*;
use tokio::process::Child;

/// What the sidecar lets through per server and second (`mcp::flood::PER_SECOND`).
const PER_SECOND: f64 = 100.0;

struct Sidecar {
    child: Child,
    editor: CheckedEditor,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

/// The built binary at its default log filter, logging to a file, with a flooding server and the
/// demo server, both running.
async fn start() -> Sidecar {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sidecar.log");
    let (child, editor) = spawn_editor(
        sidecar_command()
            .arg("--log-file")
            .arg(&log)
            .env("XDG_CONFIG_HOME", dir.path())
            .env_remove("MCP_SIDECAR_LOG")
            .env_remove("RUST_LOG"),
    );
    let mark = editor.mark();
    let flood = json!({"command": "python3", "args": [fixture("bad/flood.py")], "timeout": 30});
    editor
        .initialize(
            &[],
            json!({"servers": {"flood": flood, "demo": demo_server("both", None)}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "flood", "running").await;
    editor.wait_status(mark, "demo", "running").await;
    Sidecar {
        child,
        editor,
        log,
        _dir: dir,
    }
}

impl Sidecar {
    async fn stop(mut self) {
        self.editor.shutdown_and_exit().await;
        let status = tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .expect("the sidecar did not exit")
            .unwrap();
        assert!(status.success(), "{status}");
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The sidecar's peak resident memory, in KiB (`VmHWM`).
    fn peak_rss_kib(&self) -> u64 {
        let pid = self.child.id().unwrap();
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap()
    }
}

/// `window/logMessage` texts after `mark`.
fn logs(editor: &TestEditor, mark: usize) -> Vec<String> {
    editor
        .notifications()
        .into_iter()
        .skip(mark)
        .filter(|n| n["method"] == "window/logMessage")
        .filter_map(|n| n["params"]["message"].as_str().map(str::to_string))
        .collect()
}

/// The number just before `marker` in `line` ("... 19900 messages from flood dropped ...").
fn number_before(line: &str, marker: &str) -> Option<u64> {
    let before = &line[..line.find(marker)?];
    before.rsplit(' ').next()?.parse().ok()
}

/// Latencies of the editor's requests while a flood runs.
#[derive(Default)]
struct Latencies(Vec<Duration>);

impl Latencies {
    /// One `listServers` (every row running) and, every tenth time, a call to the demo server.
    async fn probe(&mut self, editor: &TestEditor) {
        let start = Instant::now();
        let listed = editor.command("mcp-sidecar.listServers", json!({})).await;
        self.0.push(start.elapsed());
        let rows = listed.as_array().expect("listServers answers with rows");
        assert!(rows.iter().all(|r| r["state"] == "running"), "{listed}");
        if self.0.len() % 10 == 1 {
            let echo = call(editor, "demo", "echo", json!({"text": "still here"})).await;
            assert_eq!(text_of(&echo), "still here", "{echo}");
        }
    }

    fn worst(&self) -> Duration {
        self.0.iter().copied().max().unwrap_or_default()
    }

    fn median(&self) -> Duration {
        let mut sorted = self.0.clone();
        sorted.sort();
        sorted.get(sorted.len() / 2).copied().unwrap_or_default()
    }
}

/// The most a flood lasting `elapsed` may forward at the per-server rate (whole windows, one
/// more for the window in progress).
fn allowed(elapsed: Duration) -> usize {
    ((elapsed.as_secs_f64().ceil() + 1.0) * PER_SECOND) as usize
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_flood_is_summarized_and_the_editor_keeps_answering() {
    const COUNT: u64 = 20_000;
    let sidecar = start().await;
    let editor = sidecar.editor.clone();
    let mark = editor.mark();
    let started = Instant::now();
    let answer = call(&editor, "flood", "log_flood", json!({"count": COUNT})).await;
    assert_eq!(text_of(&answer), "flooding 20000", "{answer}");
    // Every message is accounted for (forwarded, or counted in a summary) once the last
    // summary arrives; meanwhile the editor keeps asking.
    let mut latencies = Latencies::default();
    let (forwarded, dropped, summaries) = loop {
        latencies.probe(&editor).await;
        let lines = logs(&editor, mark);
        let forwarded = lines
            .iter()
            .filter(|l| l.starts_with("[flood] flood: "))
            .count() as u64;
        let counted: Vec<u64> = lines
            .iter()
            .filter_map(|l| number_before(l, " messages from flood dropped"))
            .collect();
        let dropped: u64 = counted.iter().sum();
        if forwarded + dropped > COUNT {
            break (forwarded, dropped, counted.len());
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "only {forwarded} forwarded + {dropped} dropped of {COUNT} after a minute"
        );
    };
    let elapsed = started.elapsed();
    eprintln!(
        "log flood of {COUNT}: forwarded {forwarded}, dropped {dropped} in {summaries} summary lines, \
         over {elapsed:.2?}; listServers x{}: worst {:.2?}, median {:.2?}",
        latencies.0.len(),
        latencies.worst(),
        latencies.median()
    );
    assert_eq!(forwarded + dropped, COUNT + 1, "nothing counted twice");
    assert!(
        forwarded as usize <= allowed(elapsed),
        "{forwarded} forwarded in {elapsed:.2?}"
    );
    assert!(
        summaries <= elapsed.as_secs() as usize + 2,
        "{summaries} summaries"
    );
    assert!(
        latencies.worst() < Duration::from_secs(1),
        "worst {:.2?}",
        latencies.worst()
    );
    // rmcp's per-message INFO lines stay out of the log at the default filter.
    let log = sidecar.log_text();
    assert!(
        !log.contains("received notification"),
        "rmcp logged each message"
    );
    let pong = call(&editor, "flood", "ping_tool", json!({})).await;
    assert_eq!(text_of(&pong), "pong");
    sidecar.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_list_changed_flood_is_one_refresh() {
    const COUNT: u64 = 5_000;
    let sidecar = start().await;
    let editor = sidecar.editor.clone();
    let before = structured(&call(&editor, "flood", "tally", json!({})).await)["tools_list"]
        .as_u64()
        .unwrap();
    let mark = editor.mark();
    let started = Instant::now();
    let answer = call(&editor, "flood", "tools_flood", json!({"count": COUNT})).await;
    assert_eq!(text_of(&answer), "flooding 5000", "{answer}");
    let mut latencies = Latencies::default();
    // Each refresh tells the editor once; wait for one, then until the server has seen the
    // refresh it made (its tools/list count settles when no refresh is pending).
    while !logs(&editor, mark)
        .iter()
        .any(|l| l == "[flood] tool list changed")
    {
        latencies.probe(&editor).await;
        assert!(started.elapsed() < Duration::from_secs(60), "no refresh");
    }
    let listed = editor
        .command("mcp-sidecar.listTools", json!({"server": "flood"}))
        .await;
    assert!(listed.to_string().contains("tools_flood"), "{listed}");
    let tally = structured(&call(&editor, "flood", "tally", json!({})).await)["tools_list"]
        .as_u64()
        .unwrap();
    let requests = tally - before;
    let told = logs(&editor, mark)
        .iter()
        .filter(|l| l.as_str() == "[flood] tool list changed")
        .count();
    let elapsed = started.elapsed();
    eprintln!(
        "tools/list_changed flood of {COUNT}: {requests} tools/list requests, {told} \"tool list \
         changed\" lines, over {elapsed:.2?}; listServers x{}: worst {:.2?}, median {:.2?}",
        latencies.0.len(),
        latencies.worst(),
        latencies.median()
    );
    assert!(
        requests <= 5,
        "{requests} tools/list requests for one burst"
    );
    assert!(told <= 5, "{told} lines for one burst");
    assert!(
        latencies.worst() < Duration::from_secs(1),
        "worst {:.2?}",
        latencies.worst()
    );
    sidecar.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_flood_coalesces_and_keeps_the_final_value() {
    const COUNT: u64 = 20_000;
    let sidecar = start().await;
    let editor = sidecar.editor.clone();
    let started = Instant::now();
    let (response, progress) = call_with_progress(
        &editor,
        "flood",
        "progress_flood",
        json!({"count": COUNT}),
        "flood-progress",
    )
    .await;
    let elapsed = started.elapsed();
    assert_eq!(
        structured(&response["result"]),
        json!({"sent": COUNT}),
        "{response}"
    );
    let reports: Vec<&Value> = progress.iter().filter(|p| p["kind"] == "report").collect();
    eprintln!(
        "progress flood of {COUNT}: {} reports reached the editor in {elapsed:.2?}",
        reports.len()
    );
    assert!(
        reports.len() <= allowed(elapsed),
        "{} reports in {elapsed:.2?}",
        reports.len()
    );
    assert_eq!(
        reports.last().map(|r| r["message"].clone()),
        Some(json!("20000 of 20000 (100%)")),
        "the final value is never lost"
    );
    assert_eq!(progress.last().unwrap()["kind"], "end");
    let mut latencies = Latencies::default();
    latencies.probe(&editor).await;
    sidecar.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_floods_and_endless_lines_are_capped_in_the_log() {
    const COUNT: u64 = 20_000;
    const LONG: u64 = 100 << 20;
    let sidecar = start().await;
    let editor = sidecar.editor.clone();
    let started = Instant::now();
    call(&editor, "flood", "stderr_flood", json!({"count": COUNT})).await;
    let stderr_lines = |log: &str| log.lines().filter(|l| l.contains("stderr line ")).count();
    let dropped = |log: &str| -> u64 {
        log.lines()
            .filter_map(|l| number_before(l, " stderr lines dropped"))
            .sum()
    };
    eventually("every stderr line logged or counted", || {
        let log = sidecar.log_text();
        let done = stderr_lines(&log) as u64 + dropped(&log) >= COUNT;
        async move { done }
    })
    .await;
    let elapsed = started.elapsed();
    let log = sidecar.log_text();
    eprintln!(
        "stderr flood of {COUNT}: {} lines logged, {} dropped, over {elapsed:.2?}",
        stderr_lines(&log),
        dropped(&log)
    );
    assert_eq!(stderr_lines(&log) as u64 + dropped(&log), COUNT);
    assert!(
        stderr_lines(&log) <= allowed(elapsed),
        "{}",
        stderr_lines(&log)
    );

    let rss_before = sidecar.peak_rss_kib();
    call(&editor, "flood", "stderr_long", json!({"bytes": LONG})).await;
    eventually("the line after the long one is logged", || {
        let done = sidecar.log_text().contains("after the long line");
        async move { done }
    })
    .await;
    let log = sidecar.log_text();
    let long = log
        .lines()
        .find(|l| l.contains("xxxxxxxx"))
        .expect("the long line is logged");
    let rss_after = sidecar.peak_rss_kib();
    eprintln!(
        "one stderr line of {LONG} bytes: logged as {} bytes; peak RSS {rss_before} KiB before, \
         {rss_after} KiB after",
        long.len()
    );
    assert!(
        long.contains("x…(truncated)"),
        "{}",
        &long[long.len() - 60..]
    );
    assert!(long.len() < 4096 + 200, "{}", long.len());
    assert!(
        rss_after < rss_before + 32 * 1024,
        "peak RSS grew from {rss_before} KiB to {rss_after} KiB"
    );
    let pong = call(&editor, "flood", "ping_tool", json!({})).await;
    assert_eq!(text_of(&pong), "pong");
    sidecar.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lines_that_are_not_json_rpc_are_logged_at_the_flood_rate() {
    const COUNT: u64 = 20_000;
    let sidecar = start().await;
    let editor = sidecar.editor.clone();
    let mark = editor.mark();
    let started = Instant::now();
    call(&editor, "flood", "junk_flood", json!({"count": COUNT})).await;
    // The notification written after the junk arrives once every junk line was read.
    wait_log(&editor, mark, "junk done").await;
    let elapsed = started.elapsed();
    let log = sidecar.log_text();
    let logged = log.lines().filter(|l| l.contains("junk line ")).count();
    eprintln!("{COUNT} junk lines: {logged} logged over {elapsed:.2?}");
    assert!(logged >= 1, "the first junk lines are logged");
    assert!(logged <= allowed(elapsed), "{logged} junk lines logged");
    assert!(
        log.contains("ignored and counted, not logged"),
        "the drop is said"
    );
    let pong = call(&editor, "flood", "ping_tool", json!({})).await;
    assert_eq!(text_of(&pong), "pong");
    sidecar.editor.shutdown_and_exit().await;
}
