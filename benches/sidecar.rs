//! Benchmarks for the core (run by `scripts/bench.sh`, not timed tests):
//! - `callTool` round trip through the sidecar (editor → LSP → MCP stdio server → back) against
//!   the same tool called directly by an rmcp client, the Python SDK client and the TypeScript
//!   SDK client on the same server, in both eras (the TypeScript SDK: 2025-11-25 only);
//! - the first elicitation prompt, and a sampling draft's render + parse;
//! - 1000 concurrent calls over ten servers, through the sidecar and directly ([`compare`]);
//! - the same call from an event-loop client (plain Node) through the sidecar, through `socat`
//!   (a zero-work relay hop: the floor) and directly, interleaved;
//! - a 10 MiB tool result and a 10 MiB resource relayed (time, peak RSS, RSS back near idle)
//!   against parsing it once;
//! - five servers started in parallel against the slowest started alone;
//! - time from `initialize` to its response;
//! - idle RSS of the sidecar process alone with three and with five stdio servers (five: next
//!   to a Node process hosting them through the TypeScript SDK, and a Python SDK one);
//! - the stripped release binary's size;
//! - 100 tasks (Tasks extension) in flight over five servers: poll timing, CPU, RSS against no
//!   task, the task book's size and atomic rewrites ([`compare::tasks`]).
//!
//! `BENCH_CALLS` (default 2000) sets the calls per series; results go to stdout and, as JSON, to
//! the file named by `BENCH_OUT` (default `target/bench-sidecar.json`). `BENCH_SMOKE=1` (implied by
//! a debug build, so `cargo test --bench sidecar` is the smoke) runs a handful of everything (20
//! calls, 100 concurrent, 1 MiB) and writes `target/bench-sidecar-smoke.json` instead. The peer
//! clients need `MCP_PYTHON` / `MCP_PEERS_NODE_MODULES` (`. .cache/peers/env.sh`); without them
//! those series are skipped with a line saying so. `BENCH_ONLY=big,eventloop` (any of `calltool`,
//! `eventloop`, `prompts`, `throughput`, `big`, `startup`, `idle`, `tasks`) runs only those
//! sections and writes `target/bench-sidecar-only.json` (for A/B runs of one figure).

#[path = "../tests/it/support/mod.rs"]
#[allow(unused_imports)]
mod support;

mod compare;

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{ClientLifecycleMode, ClientServiceExt, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use support::{TestEditor, demo_server, sidecar_bin};

/// A quick run that only proves every series still works: `BENCH_SMOKE=1`, or a debug build.
fn smoke() -> bool {
    cfg!(debug_assertions) || std::env::var("BENCH_SMOKE").is_ok_and(|v| v == "1")
}

/// `full` in a real run, `quick` in a smoke run.
fn reps(full: usize, quick: usize) -> usize {
    if smoke() { quick } else { full }
}

/// Whether a section runs: `BENCH_ONLY` (a comma-separated list of `calltool`, `eventloop`,
/// `prompts`, `throughput`, `big`, `startup`, `idle`, `tasks`) runs only those; unset, every one.
fn only(section: &str) -> bool {
    std::env::var("BENCH_ONLY").map_or(true, |list| list.split(',').any(|s| s.trim() == section))
}

fn calls() -> usize {
    std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(reps(2000, 20))
}

fn warmup() -> usize {
    reps(100, 5)
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

/// An rmcp client on a stdio child, in the given revision's lifecycle.
async fn rmcp_client(
    command: tokio::process::Command,
    version: ProtocolVersion,
) -> RunningService<RoleClient, rmcp::model::ClientConfig> {
    let lifecycle = if version.has_initialize() {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        }
    };
    let info = rmcp::model::ClientConfig::default().with_protocol_version(version);
    // rmcp's default stderr is inherited; the servers' logs would bury the report.
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    info.serve_with_lifecycle(transport, lifecycle)
        .await
        .unwrap()
}

/// The same `add` call made directly by an rmcp client.
async fn direct(version: ProtocolVersion, era: &str) -> Stats {
    let client = rmcp_client(demo_command(era), version).await;
    let args = json!({"a": 1, "b": 2}).as_object().unwrap().clone();
    let call = || CallToolRequestParams::new("add").with_arguments(args.clone());
    for _ in 0..warmup() {
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
    for _ in 0..warmup() {
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
    let warm = warmup().min(20);
    let (mut prompt, mut plain) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n + warm {
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
        if i >= warm {
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
    for _ in 0..calls().min(reps(30, 3)) {
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
    tokio::time::sleep(Duration::from_millis(reps(2000, 200) as u64)).await;
    let rss = rss_kib(sidecar.child.id().unwrap());
    sidecar.editor.shutdown_and_exit().await;
    rss
}

fn main() {
    // The bench binary doubles as the 10 MiB-result server the sidecar spawns (compare::fixture),
    // and as the floors of an LSP relay and of a relay on tokio the event-loop client measures
    // (compare::lsp_relay, compare::byte_relay).
    match std::env::var(compare::fixture::ROLE_VAR).as_deref() {
        Ok(compare::fixture::ROLE) => return compare::fixture::serve(),
        Ok(compare::lsp_relay::ROLE) => return compare::lsp_relay::serve(),
        Ok(compare::byte_relay::ROLE) => return compare::byte_relay::serve(),
        _ => {}
    }
    keep_heap();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}

/// This process plays the editor, and a long-running editor keeps its heap. glibc's default
/// gives a 10 MiB allocation a fresh mapping or trims the arena it came back to, depending on
/// the thread and on what ran before: the editor's own parse of a 10 MiB reply took 1× the
/// parse beside it in some runs and 2× in others (the pages faulted in again; a full run, after
/// the throughput series, mostly the latter), which read as the relay's time. Big blocks now come
/// from the heap and stay there, for both parses alike. The sidecar and the servers are other
/// processes and keep glibc's defaults.
fn keep_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets the allocator's thresholds; called before any other thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
    }
}

/// A /proc file's content (or the value of its first `key: value` line), trimmed.
fn read_trim(path: &str, key: Option<&str>) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    match key {
        None => Some(text.trim().to_string()),
        Some(key) => text
            .lines()
            .find(|l| l.starts_with(key))
            .and_then(|l| l.split_once(':'))
            .map(|(_, v)| v.trim().to_string()),
    }
}

fn ratio(a: f64, b: f64) -> String {
    format!("{:.2}x", a / b)
}

async fn run() {
    let started = Instant::now();
    if smoke() {
        println!(
            "smoke run ({} build): a handful of each series, figures are not meaningful; use scripts/bench.sh",
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
    }
    let peers = compare::Peers::from_env();
    let home = tempfile::tempdir().unwrap();
    let mut report = serde_json::Map::new();
    report.insert(
        "machine".into(),
        json!({
            "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "cpu": read_trim("/proc/cpuinfo", Some("model name")),
            "kernel": read_trim("/proc/sys/kernel/osrelease", None),
            "loadavg_at_start": read_trim("/proc/loadavg", None),
            "smoke": smoke(),
            "release": !cfg!(debug_assertions),
            "calls_per_series": calls(),
            "git": std::process::Command::new("git")
                .args(["describe", "--always", "--dirty"])
                .output()
                .ok()
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()),
        }),
    );
    if only("calltool") {
        for (label, version, era) in [
            ("2025-11-25", ProtocolVersion::V_2025_11_25, "legacy"),
            ("2026-07-28", ProtocolVersion::V_2026_07_28, "modern"),
        ] {
            let d = direct(version, era).await;
            let s = through_sidecar(home.path(), label, era).await;
            println!(
                "callTool add, {label}: direct rmcp median {:.1} µs p99 {:.1} µs | through sidecar median {:.1} µs p99 {:.1} µs | added median {:.1} µs ({})",
                d.median_us,
                d.p99_us,
                s.median_us,
                s.p99_us,
                s.median_us - d.median_us,
                ratio(s.median_us, d.median_us)
            );
            let mut entry = json!({"direct": d, "sidecar": s, "added_median_us": s.median_us - d.median_us,
            "ratio_median_sidecar_vs_rmcp": s.median_us / d.median_us,
            "ratio_p99_sidecar_vs_rmcp": s.p99_us / d.p99_us});
            let peer_list: &[&str] = if era == "legacy" {
                &["python", "typescript"]
            } else {
                &["python"] // the TypeScript SDK 1.x speaks only the initialize-era revisions
            };
            for peer in peer_list {
                let value = match compare::peer_latency(&peers, peer, era).await {
                    Ok((p, about)) => {
                        println!(
                            "callTool add, {label}: {} median {:.1} µs p99 {:.1} µs | sidecar / it: median {}, p99 {}",
                            about["client"].as_str().unwrap_or(peer),
                            p.median_us,
                            p.p99_us,
                            ratio(s.median_us, p.median_us),
                            ratio(s.p99_us, p.p99_us)
                        );
                        json!({"client": about["client"], "protocolVersion": about["protocolVersion"],
                        "stats": p, "ratio_median_sidecar_vs_peer": s.median_us / p.median_us,
                        "ratio_p99_sidecar_vs_peer": s.p99_us / p.p99_us})
                    }
                    Err(skipped) => skipped,
                };
                entry[format!("{peer}_sdk")] = value;
            }
            report.insert(format!("callTool_{label}"), entry);
        }
    }
    if only("eventloop") {
        let event_loop = compare::event_loop_client(home.path()).await;
        if event_loop.get("skipped").is_none() {
            let m = |k: &str, f: &str| event_loop[k][f].as_f64().unwrap_or(f64::NAN);
            println!(
                "event-loop client ({}), callTool add 2025-11-25: through the sidecar median {:.1} µs p99 {:.1} µs | through socat (zero-work hop) median {:.1} µs p99 {:.1} µs | through a minimal LSP relay median {:.1} µs | direct median {:.1} µs | sidecar / socat: median {}, p99 {} (target ≤ 1.15x at the median); minimal LSP relay / socat {}, sidecar / minimal LSP relay {}, zero-work relay on tokio / socat {} | CPU per call: sidecar {:.0} µs, socat {:.0} µs, minimal LSP relay {:.0} µs, zero-work relay on tokio {:.0} µs",
                event_loop["client"].as_str().unwrap_or("node"),
                m("sidecar", "median_us"),
                m("sidecar", "p99_us"),
                m("socat", "median_us"),
                m("socat", "p99_us"),
                m("minimal_lsp_relay", "median_us"),
                m("direct", "median_us"),
                ratio(m("sidecar", "median_us"), m("socat", "median_us")),
                ratio(m("sidecar", "p99_us"), m("socat", "p99_us")),
                ratio(m("minimal_lsp_relay", "median_us"), m("socat", "median_us")),
                ratio(
                    m("sidecar", "median_us"),
                    m("minimal_lsp_relay", "median_us")
                ),
                ratio(
                    m("zero_work_tokio_relay", "median_us"),
                    m("socat", "median_us")
                ),
                m("cpu_us_per_call", "sidecar"),
                m("cpu_us_per_call", "socat"),
                m("cpu_us_per_call", "relay"),
                m("cpu_us_per_call", "byte_relay"),
            );
        }
        report.insert("eventLoopClient".into(), event_loop);
    }
    if only("prompts") {
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
    }

    // Throughput: all at once (as an editor firing them would), and at most 100 in flight (under
    // the sidecar's cap of 128 operations at once).
    if only("throughput") {
        let measured = compare::throughput(
            home.path(),
            &[("all_at_once", usize::MAX), ("window_100", 100)],
        )
        .await;
        let (through, direct_rmcp) = (&measured["sidecar"], &measured["direct_rmcp"]);
        let ts = compare::ts_throughput(&peers).await;
        let rate = |v: &Value| v["median_calls_per_s"].as_f64().unwrap_or(f64::NAN);
        for (label, key) in [
            ("all at once", "all_at_once"),
            ("≤100 in flight", "window_100"),
        ] {
            let r = &through[key];
            let last = &r["rounds"][r["rounds"].as_array().map_or(0, |a| a.len().max(1) - 1)];
            println!(
                "{} concurrent callTool over 10 servers through the sidecar, {label}: median {:.0} answered calls/s (last round: {} ok, {} busy, {} wrong, {} other errors) | direct rmcp {:.0} calls/s, rounds interleaved: median of the rounds' ratios {:.2}x{}",
                r["calls"],
                rate(r),
                last["ok"],
                last["busy"],
                last["wrong"],
                last["other_errors"],
                rate(direct_rmcp),
                r["median_ratio_to_direct_rmcp"]
                    .as_f64()
                    .unwrap_or(f64::NAN),
                if ts.get("skipped").is_none() {
                    format!(
                        " | TypeScript SDK {:.0} calls/s ({})",
                        rate(&ts),
                        ratio(rate(r), rate(&ts))
                    )
                } else {
                    String::new()
                }
            );
        }
        println!(
            "routing check: {} of {} list_roots calls reached their own server",
            through["routing_check"]["reached_own_server"], through["routing_check"]["calls"]
        );
        report.insert(
            "throughput_10_servers".into(),
            json!({"sidecar": through, "direct_rmcp": direct_rmcp, "typescript_sdk": ts}),
        );
    }

    if only("big") {
        let big = compare::big_result(home.path()).await;
        println!(
            "{:.1} MiB tool result: relayed to the editor in {:.1} ms (median of {}) vs one serde_json parse {:.1} ms (each call over the parse right before it, median {:.2}x) vs direct rmcp call {:.1} ms ({}) | sidecar VmHWM {:.1} → {:.1} MiB (growth {:.1}x the document)",
            big["document_bytes"].as_f64().unwrap() / 1048576.0,
            big["relay_median_ms"].as_f64().unwrap(),
            big["calls"],
            big["parse_once_median_ms"].as_f64().unwrap(),
            big["relay_vs_parse"].as_f64().unwrap(),
            big["direct_rmcp_median_ms"].as_f64().unwrap(),
            ratio(
                big["relay_median_ms"].as_f64().unwrap(),
                big["direct_rmcp_median_ms"].as_f64().unwrap()
            ),
            big["sidecar_vmhwm_before_kib"].as_f64().unwrap() / 1024.0,
            big["sidecar_vmhwm_after_kib"].as_f64().unwrap() / 1024.0,
            big["peak_growth_vs_document"].as_f64().unwrap(),
        );
        for (label, key) in [("tool result", "tool"), ("resource", "resource")] {
            let b = &big[key];
            let f = |k: &str| b[k].as_f64().unwrap_or(f64::NAN);
            let phase = |k: &str| b["phases_median_ms"][k].as_f64().unwrap_or(f64::NAN);
            println!(
                "big {label}: relayed in {:.1} ms ({:.2}x the parse beside it, median; target ≤ 3x; parse {:.1} ms; sidecar CPU {:.1} ms a call) | split: reply header {:.1} ms, body {:.1} ms (delivered {:.2}x the parse), editor's parse {:.1} ms ({:.2}x the parse beside it) | VmHWM growth {:.1}x the document (target ≤ 3x) | VmRSS idle {:.1} MiB, after {:.1} MiB, {}",
                f("relay_median_ms"),
                f("relay_vs_parse"),
                f("parse_median_ms"),
                f("sidecar_cpu_ms_per_call"),
                phase("to_reply_header"),
                phase("reply_body"),
                f("delivered_vs_parse"),
                phase("editor_parse"),
                f("editor_parse_vs_parse"),
                (f("sidecar_vmhwm_after_kib") - f("sidecar_vmhwm_before_kib")) * 1024.0
                    / big["document_bytes"].as_f64().unwrap(),
                f("sidecar_vmrss_idle_kib") / 1024.0,
                f("sidecar_vmrss_after_kib") / 1024.0,
                match b["rss_return_ms"].as_f64() {
                    Some(ms) => format!("back within 20 % of idle after {ms:.0} ms"),
                    None => format!(
                        "still {:.1} MiB after 5 s (not within 20 % of idle)",
                        f("sidecar_vmrss_settled_kib") / 1024.0
                    ),
                }
            );
        }
        report.insert("bigResult".into(), big);
    }

    if only("startup") {
        let start = compare::startup(home.path()).await;
        println!(
            "start-up, initialized → running: all five in parallel median {:.1} ms p99 {:.1} ms | slowest alone ({}) median {:.1} ms | ratio {:.2}x | rmcp directly: five {:.1} ms vs one {:.1} ms ({:.2}x)",
            start["all_five_running"]["median_us"].as_f64().unwrap() / 1e3,
            start["all_five_running"]["p99_us"].as_f64().unwrap() / 1e3,
            start["slowest_alone"].as_str().unwrap(),
            start["slowest_alone_median_us"].as_f64().unwrap() / 1e3,
            start["ratio_all_vs_slowest_alone"].as_f64().unwrap(),
            start["direct_rmcp"]["five_in_parallel"]["median_us"]
                .as_f64()
                .unwrap()
                / 1e3,
            start["direct_rmcp"]["one"]["median_us"].as_f64().unwrap() / 1e3,
            start["direct_rmcp"]["ratio"].as_f64().unwrap(),
        );
        report.insert("startup_five".into(), start);

        let init = initialize_latency(home.path()).await;
        println!(
            "initialize → response: median {:.2} ms, p99 {:.2} ms",
            init.median_us / 1e3,
            init.p99_us / 1e3
        );
        report.insert("initialize".into(), json!(init));
    }
    if only("idle") {
        let rss = idle_rss(home.path()).await;
        println!(
            "idle RSS with three stdio servers: {:.1} MiB (sidecar process alone)",
            rss as f64 / 1024.0
        );
        report.insert("idle_rss_kib".into(), json!(rss));
        let five = compare::idle_rss_five(home.path(), &peers).await;
        let mib = |v: &Value| v.as_f64().map(|k| k / 1024.0);
        let side = mib(&five["sidecar_kib"]).unwrap();
        let mut line = format!("idle RSS with five stdio servers: sidecar {side:.1} MiB");
        for (name, key) in [
            ("Node (TypeScript SDK)", "node_ts_sdk_kib"),
            ("Python SDK", "python_sdk_kib"),
        ] {
            if let Some(peer) = mib(&five[key]) {
                line += &format!(
                    " | {name} host {peer:.1} MiB (sidecar / it {})",
                    ratio(side, peer)
                );
            }
        }
        println!("{line}");
        report.insert("idle_rss_five".into(), five);
        let size = std::fs::metadata(sidecar_bin())
            .map(|m| m.len())
            .unwrap_or(0);
        println!(
            "binary {}: {:.2} MiB",
            sidecar_bin().display(),
            size as f64 / (1024.0 * 1024.0)
        );
        report.insert("binary_bytes".into(), json!(size));
    }
    if only("tasks") {
        report.insert(
            "tasksInFlight".into(),
            compare::tasks::tasks_in_flight().await,
        );
    }
    report["machine"]["loadavg_at_end"] = json!(read_trim("/proc/loadavg", None));
    report.insert(
        "elapsed_s".into(),
        json!(started.elapsed().as_secs_f64().round()),
    );
    let default_out = if smoke() {
        "target/bench-sidecar-smoke.json"
    } else if std::env::var("BENCH_ONLY").is_ok() {
        "target/bench-sidecar-only.json"
    } else {
        "target/bench-sidecar.json"
    };
    let out = std::env::var("BENCH_OUT").unwrap_or_else(|_| default_out.into());
    std::fs::write(
        &out,
        serde_json::to_string_pretty(&Value::Object(report)).unwrap(),
    )
    .unwrap();
    println!("wrote {out} in {:.0} s", started.elapsed().as_secs_f64());
}
