//! Benchmarks for the core (run by `scripts/bench.sh`, not timed tests):
//! - `callTool` round trip through the sidecar (editor → LSP → MCP stdio server → back) against
//!   the same tool called directly by an rmcp client on the same server, in both eras;
//! - time from `initialize` to its response;
//! - idle RSS of the sidecar process alone with three stdio servers connected;
//! - the stripped release binary's size.
//!
//! `BENCH_CALLS` (default 2000) sets the calls per series; results go to stdout and, as JSON, to
//! the file named by `BENCH_OUT` (default `target/bench-sidecar.json`).

#[path = "../tests/support/mod.rs"]
#[allow(unused_imports)]
mod support;

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use support::{TestEditor, demo_server, sidecar_bin};

fn calls() -> usize {
    std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

#[derive(Debug, Clone, serde::Serialize)]
struct Stats {
    n: usize,
    median_us: f64,
    p99_us: f64,
    mean_us: f64,
}

fn stats(mut samples: Vec<Duration>) -> Stats {
    samples.sort();
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    let n = samples.len();
    Stats {
        n,
        median_us: us(samples[n / 2]),
        p99_us: us(samples[(n * 99 / 100).min(n - 1)]),
        mean_us: samples.iter().map(|d| us(*d)).sum::<f64>() / n as f64,
    }
}

fn demo_command(era: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(sidecar_bin());
    cmd.args(["demo-server", "--era", era])
        .stderr(Stdio::null());
    cmd
}

/// The same `add` call made directly by an rmcp client.
async fn direct(version: ProtocolVersion, era: &str) -> Stats {
    let lifecycle = if version.has_initialize() {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        }
    };
    let info = rmcp::model::ClientConfig::default().with_protocol_version(version);
    let client = info
        .serve_with_lifecycle(
            TokioChildProcess::new(demo_command(era)).unwrap(),
            lifecycle,
        )
        .await
        .unwrap();
    let args = json!({"a": 1, "b": 2}).as_object().unwrap().clone();
    let call = || CallToolRequestParams::new("add").with_arguments(args.clone());
    for _ in 0..100 {
        client.call_tool(call()).await.unwrap();
    }
    let mut samples = Vec::with_capacity(calls());
    for _ in 0..calls() {
        let t = Instant::now();
        client.call_tool(call()).await.unwrap();
        samples.push(t.elapsed());
    }
    let _ = client.cancel().await;
    stats(samples)
}

struct Sidecar {
    child: tokio::process::Child,
    editor: std::sync::Arc<TestEditor>,
}

fn spawn_sidecar(home: &std::path::Path) -> Sidecar {
    let mut child = tokio::process::Command::new(sidecar_bin())
        .env("XDG_CONFIG_HOME", home)
        .env("MCP_SIDECAR_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let editor = TestEditor::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    Sidecar { child, editor }
}

/// The same call through the sidecar binary, as an editor makes it.
async fn through_sidecar(home: &std::path::Path, pin: &str, era: &str) -> Stats {
    let sidecar = spawn_sidecar(home);
    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .initialize(
            &[],
            json!({"servers": {"demo": demo_server(era, Some(pin))}}),
            json!({}),
        )
        .await;
    sidecar.editor.wait_status(mark, "demo", "running").await;
    let arg = json!({"server": "demo", "tool": "add", "arguments": {"a": 1, "b": 2}});
    for _ in 0..100 {
        sidecar
            .editor
            .command("mcp-sidecar.callTool", arg.clone())
            .await;
    }
    let mut samples = Vec::with_capacity(calls());
    for _ in 0..calls() {
        let t = Instant::now();
        let r = sidecar
            .editor
            .command("mcp-sidecar.callTool", arg.clone())
            .await;
        samples.push(t.elapsed());
        debug_assert_eq!(r["structuredContent"]["sum"], 3.0);
    }
    sidecar.editor.shutdown_and_exit().await;
    stats(samples)
}

/// Time from `callTool` to the first prompt of the demo's booking form reaching the editor
/// (editor → sidecar → server → `elicitation/create` → sidecar → editor), against the plain
/// `echo` round trip over the same hops: the difference is what the elicitation relay adds.
async fn prompt_latency(home: &std::path::Path, pin: &str, era: &str) -> (Stats, Stats) {
    let sidecar = spawn_sidecar(home);
    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .initialize(
            &[],
            json!({"servers": {"demo": demo_server(era, Some(pin))}, "elicitation": {"rateLimit": "100000/s"}}),
            support::full_ui(),
        )
        .await;
    sidecar.editor.wait_status(mark, "demo", "running").await;
    let book = json!({"command": "mcp-sidecar.callTool", "arguments": [{"server": "demo", "tool": "book_trip", "arguments": {}}]});
    let echo = json!({"server": "demo", "tool": "echo", "arguments": {"text": "x"}});
    let n = calls().min(500);
    let (mut prompt, mut plain) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n + 20 {
        let t = Instant::now();
        let (_, done) = sidecar
            .editor
            .start_request("workspace/executeCommand", book.clone())
            .await;
        let first = sidecar.editor.next_prompt().await;
        let took = t.elapsed();
        sidecar.editor.respond(&first, Value::Null).await;
        done.await.unwrap();
        let t = Instant::now();
        sidecar
            .editor
            .command("mcp-sidecar.callTool", echo.clone())
            .await;
        if i >= 20 {
            prompt.push(took);
            plain.push(t.elapsed());
        }
    }
    sidecar.editor.shutdown_and_exit().await;
    (stats(prompt), stats(plain))
}

/// Render + parse of a sampling request draft: 47 flights as 47 messages (text, a tool_use and
/// a tool_result each 5th), the largest request of the issue's example.
fn draft_roundtrip() -> (Stats, usize) {
    use mcp_sidecar::sampling::draft::{RequestChoices, parse_request, render_request};
    let messages: Vec<Value> = (0..47)
        .map(|i| {
            let text = format!("Flight {i}: LIS→OSL, departs 0{}:15, {} EUR, {} stop(s). ```not a fence``` ### user", i % 10, 80 + i * 7, i % 3);
            if i % 5 == 4 {
                json!({"role": "assistant", "content": [{"type": "text", "text": text}, {"type": "tool_use", "id": format!("t{i}"), "name": "price", "input": {"flight": i}}]})
            } else {
                json!({"role": "user", "content": {"type": "text", "text": text}})
            }
        })
        .collect();
    let request = serde_json::from_value(json!({"messages": messages, "systemPrompt": "You are a careful travel analyst.", "maxTokens": 400, "temperature": 0.2})).unwrap();
    let choices = RequestChoices::default();
    let mut samples = Vec::new();
    let mut size = 0;
    for _ in 0..(calls().min(1000)) {
        let t = Instant::now();
        let text = render_request("flights", &request, &choices);
        let (parsed, _) = parse_request(&text).unwrap();
        samples.push(t.elapsed());
        assert_eq!(parsed, request);
        size = text.len();
    }
    (stats(samples), size)
}

/// Time from sending `initialize` to its response, over fresh processes.
async fn initialize_latency(home: &std::path::Path) -> Stats {
    let mut samples = Vec::new();
    for _ in 0..calls().min(30) {
        let mut sidecar = spawn_sidecar(home);
        let t = Instant::now();
        let r = sidecar
            .editor
            .request("initialize", json!({"capabilities": {}, "initializationOptions": {"servers": {"demo": demo_server("both", None)}}}))
            .await;
        samples.push(t.elapsed());
        assert!(r.get("result").is_some());
        let _ = sidecar.child.kill().await;
    }
    stats(samples)
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// RSS of the sidecar process alone, idle, with three stdio servers connected.
async fn idle_rss(home: &std::path::Path) -> u64 {
    let sidecar = spawn_sidecar(home);
    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .initialize(
            &[(home, "home")],
            json!({"servers": {
                "one": demo_server("both", None),
                "two": demo_server("legacy", None),
                "three": demo_server("modern", None),
            }}),
            json!({}),
        )
        .await;
    for s in ["one", "two", "three"] {
        sidecar.editor.wait_status(mark, s, "running").await;
    }
    sidecar
        .editor
        .command("mcp-sidecar.listTools", json!({}))
        .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let rss = rss_kib(sidecar.child.id().unwrap());
    sidecar.editor.shutdown_and_exit().await;
    rss
}

#[tokio::main]
async fn main() {
    if cfg!(debug_assertions) {
        println!("smoke run (debug build): figures are not meaningful; use scripts/bench.sh");
    }
    let home = tempfile::tempdir().unwrap();
    let mut report = serde_json::Map::new();
    for (label, version, era) in [
        ("2025-11-25", ProtocolVersion::V_2025_11_25, "legacy"),
        ("2026-07-28", ProtocolVersion::V_2026_07_28, "modern"),
    ] {
        let d = direct(version, era).await;
        let s = through_sidecar(home.path(), label, era).await;
        println!(
            "callTool add, {label}: direct rmcp median {:.1} µs p99 {:.1} µs | through sidecar median {:.1} µs p99 {:.1} µs | added median {:.1} µs ({:.2}x)",
            d.median_us,
            d.p99_us,
            s.median_us,
            s.p99_us,
            s.median_us - d.median_us,
            s.median_us / d.median_us
        );
        report.insert(
            format!("callTool_{label}"),
            json!({"direct": d, "sidecar": s, "added_median_us": s.median_us - d.median_us}),
        );
    }
    for (label, era) in [("2025-11-25", "legacy"), ("2026-07-28", "modern")] {
        let (prompt, plain) = prompt_latency(home.path(), label, era).await;
        println!(
            "first elicitation prompt, {label}: median {:.1} µs p99 {:.1} µs | echo round trip median {:.1} µs p99 {:.1} µs | relay adds median {:.1} µs",
            prompt.median_us,
            prompt.p99_us,
            plain.median_us,
            plain.p99_us,
            prompt.median_us - plain.median_us
        );
        report.insert(
            format!("firstPrompt_{label}"),
            json!({"prompt": prompt, "echo": plain}),
        );
    }
    let (draft, bytes) = draft_roundtrip();
    println!(
        "sampling draft render+parse, 47 messages ({bytes} bytes): median {:.1} µs p99 {:.1} µs",
        draft.median_us, draft.p99_us
    );
    report.insert(
        "draftRoundTrip47".into(),
        json!({"stats": draft, "bytes": bytes}),
    );
    let init = initialize_latency(home.path()).await;
    println!(
        "initialize → response: median {:.2} ms, p99 {:.2} ms",
        init.median_us / 1e3,
        init.p99_us / 1e3
    );
    report.insert("initialize".into(), json!(init));
    let rss = idle_rss(home.path()).await;
    println!(
        "idle RSS with three stdio servers: {:.1} MiB (sidecar process alone)",
        rss as f64 / 1024.0
    );
    report.insert("idle_rss_kib".into(), json!(rss));
    let size = std::fs::metadata(sidecar_bin())
        .map(|m| m.len())
        .unwrap_or(0);
    println!(
        "binary {}: {:.2} MiB",
        sidecar_bin().display(),
        size as f64 / (1024.0 * 1024.0)
    );
    report.insert("binary_bytes".into(), json!(size));
    let out = std::env::var("BENCH_OUT").unwrap_or_else(|_| "target/bench-sidecar.json".into());
    std::fs::write(
        &out,
        serde_json::to_string_pretty(&Value::Object(report)).unwrap(),
    )
    .unwrap();
    println!("wrote {out}");
}
