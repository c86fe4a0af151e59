//! The gateway's benchmark (issue 14): one real agent, the TypeScript SDK's client
//! (`fixtures/node/gateway_client.mjs`), calling the demo server's `echo` in three ways in the
//! same run:
//! - **direct**: the agent launches `mcp-sidecar demo-server --era legacy` itself (stdio);
//! - **http**: agent → the gateway's Streamable HTTP endpoint (bearer secret) → the sidecar's
//!   connection to the same demo server (stdio);
//! - **bridge**: agent → `mcp-sidecar gateway` (stdio, found through `MCP_SIDECAR_GATEWAY*`) →
//!   the gateway → the server.
//!
//! For each: the round trip one call after another (median, p99, and the ratio to direct), and
//! rounds of 100 calls at once (wall time per round, throughput), every answer checked: a lost,
//! failed or crossed answer (call i must get back `call-i`) fails the run. The sidecar is the
//! built binary (`mcp-sidecar lsp`, release under `cargo bench`) with a scripted editor.
//!
//! Then a **big result** (issue 18): the same three ways to the tool `big` of the fixture server
//! `benches/compare/fixture.rs` (this bench binary itself, run with `BENCH_ROLE=big-server`, as
//! server `big` next to `demo`), whose answer is a ~10 MiB JSON-RPC line (1 MiB in the smoke);
//! `BENCH_BIG_CALLS` (default 20, after 2 warm-ups; smoke: 2) calls one after another, each
//! answer's text checked to be as long as the fixture's. Per way: the median time per call, its
//! ratio to direct, to one `serde_json::from_slice` of the document in this process (the
//! reference `benches/compare` uses) and to one `JSON.parse` of it in the agent's Node, and the
//! sidecar's peak RSS growth (VmHWM, reset before each way through `/proc/PID/clear_refs`) as a
//! multiple of the document.
//!
//! `cargo bench --bench gateway` (release): `BENCH_CALLS` (default 2000) calls per latency series,
//! 20 rounds of 100; prints the figures and writes `target/bench-gateway.json` (or `BENCH_OUT`).
//! `BENCH_SMOKE=1`, implied by a debug build (`cargo test --bench gateway`, the interop tier's
//! smoke), runs 20 calls and 2 rounds and writes `target/bench-gateway-smoke.json`. Needs
//! `MCP_PEERS_NODE_MODULES` (`. .cache/peers/env.sh`); without it the run says `skipped` and
//! passes. `BENCH_PATHS` (e.g. `http,bridge`) runs only those ways besides direct (for a profile).

#[path = "../tests/it/support/mod.rs"]
#[allow(unused_imports)]
mod support;

/// The big-result server (the resource half is not used here).
#[path = "compare/fixture.rs"]
#[allow(dead_code)]
mod fixture;

#[path = "compare/procfs.rs"]
mod procfs;

use std::time::Instant;

use procfs::{cpu_ms, proc_kib};
use serde_json::{Value, json};
use support::gateway::{Via, agent_outcomes, bridge_env, gateway_info, ts_agent};
use support::{TestEditor, demo_server, sidecar_bin};

fn smoke() -> bool {
    cfg!(debug_assertions) || std::env::var("BENCH_SMOKE").is_ok_and(|v| v == "1")
}

fn reps(full: usize, quick: usize) -> usize {
    if smoke() { quick } else { full }
}

fn calls() -> usize {
    std::env::var("BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(reps(2000, 20))
}

fn big_calls() -> usize {
    std::env::var("BENCH_BIG_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(reps(20, 2))
}

/// Concurrent calls per round.
const AT_ONCE: usize = 100;

#[derive(Debug, Clone, serde::Serialize)]
struct Stats {
    n: usize,
    median_us: f64,
    p99_us: f64,
    mean_us: f64,
}

fn stats(samples: &[f64]) -> Stats {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    Stats {
        n,
        median_us: sorted[n / 2],
        p99_us: sorted[(n * 99 / 100).min(n - 1)],
        mean_us: sorted.iter().sum::<f64>() / n as f64,
    }
}

fn samples(outcome: &Value, key: &str) -> Vec<f64> {
    outcome[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}: {outcome}"))
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect()
}

/// One path: the agent's latency series and its concurrent rounds, every answer checked.
async fn measure(via: &Via<'_>, info: &Value, tool: &str) -> (Stats, Stats) {
    let steps = json!([
        {"op": "bench", "name": tool, "arguments": {"text": "x"}, "expect": "x",
         "count": calls(), "warmup": reps(100, 5)},
        {"op": "throughput", "name": tool, "field": "text", "count": AT_ONCE, "rounds": reps(20, 2)},
    ]);
    let mut command = ts_agent(via, &steps);
    if matches!(via, Via::Stdio(["gateway", ..])) {
        bridge_env(&mut command, info);
    }
    let out = agent_outcomes(command.spawn().expect("node")).await;
    for (step, what) in [(0, "one after another"), (1, "at once")] {
        assert_eq!(
            out[step]["wrong"], 0,
            "{tool} ({what}): answers lost, failed or crossed: {}",
            out[step]
        );
    }
    (
        stats(&samples(&out[0], "latencies_us")),
        stats(&samples(&out[1], "wall_us")),
    )
}

/// The bench binary as the big-result server, and the environment that makes it one.
fn big_server(bytes: usize) -> (std::path::PathBuf, [(&'static str, String); 2]) {
    (
        std::env::current_exe().unwrap(),
        [
            (fixture::ROLE_VAR, fixture::ROLE.into()),
            (fixture::BYTES_VAR, bytes.to_string()),
        ],
    )
}

/// The sidecar's peak RSS from now on: VmHWM reset to the current RSS (`clear_refs` 5, Linux
/// 4.0 and later), then read; `None` when the kernel does not allow the reset.
fn reset_peak(pid: u32) -> Option<u64> {
    std::fs::write(format!("/proc/{pid}/clear_refs"), "5").ok()?;
    proc_kib(pid, "VmHWM:")
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 2]
}

/// One way to the big tool: the agent's `big` step (every answer's text `text_bytes` long, or the
/// run fails), with the sidecar's peak RSS before and after when the way goes through it.
async fn measure_big(
    via: &Via<'_>,
    info: &Value,
    tool: &str,
    text_bytes: usize,
    bytes: usize,
    sidecar: Option<u32>,
) -> Value {
    let steps = json!([{"op": "big", "name": tool, "count": big_calls(), "warmup": reps(2, 0),
                        "bytes": text_bytes}]);
    let mut command = ts_agent(via, &steps);
    match via {
        Via::Stdio(["gateway", ..]) => {
            bridge_env(&mut command, info);
        }
        Via::Program(..) => {
            command.envs(big_server(bytes).1);
        }
        _ => {}
    }
    let before = sidecar.and_then(reset_peak);
    let cpu_before = sidecar.and_then(cpu_ms);
    let out = agent_outcomes(command.spawn().expect("node")).await;
    let after = sidecar.and_then(|pid| proc_kib(pid, "VmHWM:"));
    let cpu = sidecar.and_then(cpu_ms).zip(cpu_before).map(|(a, b)| a - b);
    assert_eq!(
        out[0]["wrong"], 0,
        "{tool}: big answers of the wrong length ({text_bytes} bytes expected)"
    );
    let ms = |key| median(&samples(&out[0], key)) / 1000.0;
    json!({
        "median_ms": ms("latencies_us"),
        "latencies_us": out[0]["latencies_us"],
        "node_json_parse_median_ms": ms("json_parse_us"),
        "node_document_bytes": out[0]["document_bytes"],
        "sidecar_cpu_ms_per_call": cpu.map(|ms| ms / (big_calls() + reps(2, 0)) as f64),
        "sidecar_vmhwm_before_kib": before,
        "sidecar_vmhwm_after_kib": after,
    })
}

/// The big series over `paths`; the figures relative to direct and to one parse.
async fn big_result(paths: &[(&str, Via<'_>, &str)], info: &Value, pid: u32) -> Value {
    let bytes = big_bytes();
    let result = fixture::result_bytes(bytes);
    let document = fixture::response_line(b"1", &result);
    let text_bytes = fixture::text_len(&result);
    let parse: Vec<f64> = (0..big_calls().max(5))
        .map(|_| {
            let t = Instant::now();
            let v: Value = serde_json::from_slice(&document).unwrap();
            let took = t.elapsed().as_secs_f64() * 1e6;
            drop(v);
            took
        })
        .collect();
    let parse_ms = median(&parse) / 1000.0;
    let doc_kib = document.len() as f64 / 1024.0;
    println!(
        "big result: a {:.1} MiB document, {} calls a way; one serde_json parse {parse_ms:.1} ms",
        document.len() as f64 / (1 << 20) as f64,
        big_calls()
    );
    let mut report = serde_json::Map::new();
    report.insert("document_bytes".into(), json!(document.len()));
    report.insert("text_bytes".into(), json!(text_bytes));
    report.insert("calls".into(), json!(big_calls()));
    report.insert("serde_json_parse_median_ms".into(), json!(parse_ms));
    let mut direct_ms = None;
    for (name, via, tool) in paths {
        let through_sidecar = !matches!(via, Via::Program(..));
        let mut way = measure_big(
            via,
            info,
            tool,
            text_bytes,
            bytes,
            through_sidecar.then_some(pid),
        )
        .await;
        let call_ms = way["median_ms"].as_f64().unwrap();
        let base = *direct_ms.get_or_insert(call_ms);
        let node_ms = way["node_json_parse_median_ms"].as_f64().unwrap();
        let growth = match (
            way["sidecar_vmhwm_before_kib"].as_f64(),
            way["sidecar_vmhwm_after_kib"].as_f64(),
        ) {
            (Some(before), Some(after)) => Some((after - before) / doc_kib),
            _ => None,
        };
        way["ratio_vs_direct"] = json!(call_ms / base);
        way["ratio_vs_serde_parse"] = json!(call_ms / parse_ms);
        way["ratio_vs_node_parse"] = json!(call_ms / node_ms);
        way["sidecar_peak_growth_vs_document"] = json!(growth);
        let sidecar = match (way["sidecar_cpu_ms_per_call"].as_f64(), growth) {
            (Some(cpu), Some(g)) => {
                format!("; sidecar CPU {cpu:.1} ms a call, peak RSS +{g:.1}x the document")
            }
            _ => String::new(),
        };
        println!(
            "{name:>6}: {call_ms:.1} ms a call (x{:.2} direct, x{:.1} one parse; Node JSON.parse {node_ms:.1} ms: x{:.1}){sidecar}",
            call_ms / base,
            call_ms / parse_ms,
            call_ms / node_ms,
        );
        report.insert((*name).into(), way);
    }
    Value::Object(report)
}

fn big_bytes() -> usize {
    reps(10 << 20, 1 << 20)
}

async fn start_sidecar(
    home: &std::path::Path,
    big_bytes: usize,
) -> (tokio::process::Child, std::sync::Arc<TestEditor>, Value) {
    let folder = home.join("work");
    std::fs::create_dir_all(&folder).unwrap();
    let mut child = tokio::process::Command::new(sidecar_bin())
        .arg("lsp")
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env("XDG_RUNTIME_DIR", home.join("run"))
        .env("MCP_SIDECAR_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let editor = TestEditor::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let mark = editor.mark();
    let (exe, env) = big_server(big_bytes);
    let big = json!({"command": exe, "env": serde_json::Map::from_iter(
        env.map(|(k, v)| (k.to_string(), json!(v)))), "protocolVersion": "2025-11-25"});
    editor
        .initialize(
            &[(&folder, "work")],
            json!({"servers": {"demo": demo_server("legacy", None), "big": big}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "demo", "running").await;
    editor.wait_status(mark, "big", "running").await;
    let info = gateway_info(&editor, mark).await;
    (child, editor, info)
}

fn main() {
    // The bench binary doubles as the big-result server the sidecar and the direct agent spawn.
    if std::env::var(fixture::ROLE_VAR).is_ok_and(|r| r == fixture::ROLE) {
        return fixture::serve();
    }
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(run());
}

async fn run() {
    // Like benches/sidecar.rs's peer series: without the peers (`cargo test --all-targets` in
    // the unit tier), say so and measure nothing.
    if std::env::var_os("MCP_PEERS_NODE_MODULES").is_none() {
        println!(
            "skipped: MCP_PEERS_NODE_MODULES is not set (scripts/install-peers.sh, then . .cache/peers/env.sh)"
        );
        return;
    }
    if smoke() {
        println!(
            "smoke run ({} build): a handful of calls, figures are not meaningful",
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            }
        );
    }
    let started = Instant::now();
    let home = tempfile::tempdir().unwrap();
    let (mut child, editor, info) = start_sidecar(home.path(), big_bytes()).await;
    let pid = child.id().unwrap();
    println!("sidecar: pid {pid}");
    let direct_argv = ["demo-server", "--era", "legacy"];
    let bridge_argv = ["gateway"];
    let only = std::env::var("BENCH_PATHS").ok();
    let wanted = |name: &str| {
        name == "direct"
            || only
                .as_ref()
                .is_none_or(|o| o.split(',').any(|p| p == name))
    };
    let paths: Vec<_> = [
        ("direct", Via::Stdio(&direct_argv), "echo"),
        ("http", Via::http(&info), "demo__echo"),
        ("bridge", Via::Stdio(&bridge_argv), "demo__echo"),
    ]
    .into_iter()
    .filter(|(name, ..)| wanted(name))
    .collect();
    let (big_exe, _) = big_server(big_bytes());
    let big_paths: Vec<_> = [
        ("direct", Via::Program(&big_exe, &[]), "big"),
        ("http", Via::http(&info), "big__big"),
        ("bridge", Via::Stdio(&bridge_argv), "big__big"),
    ]
    .into_iter()
    .filter(|(name, ..)| wanted(name))
    .collect();
    let mut report = serde_json::Map::new();
    report.insert(
        "machine".into(),
        json!({
            "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
            "loadavg_at_start": std::fs::read_to_string("/proc/loadavg").ok().map(|s| s.trim().to_string()),
            "smoke": smoke(),
            "release": !cfg!(debug_assertions),
            "calls_per_series": calls(),
            "concurrent_per_round": AT_ONCE,
            "agent": "typescript @modelcontextprotocol/sdk (fixtures/node/gateway_client.mjs)",
        }),
    );
    let mut direct: Option<(Stats, Stats)> = None;
    for (name, via, tool) in &paths {
        let (latency, rounds) = measure(via, &info, tool).await;
        let throughput = AT_ONCE as f64 / (rounds.median_us / 1e6);
        let (base, base_rounds) = direct.get_or_insert_with(|| (latency.clone(), rounds.clone()));
        println!(
            "{name:>6}: round trip median {:.0} µs (x{:.2}), p99 {:.0} µs (x{:.2}) | {AT_ONCE} at once: median {:.1} ms a round (x{:.2}), {throughput:.0} calls/s, none lost",
            latency.median_us,
            latency.median_us / base.median_us,
            latency.p99_us,
            latency.p99_us / base.p99_us,
            rounds.median_us / 1000.0,
            rounds.median_us / base_rounds.median_us,
        );
        report.insert(
            (*name).into(),
            json!({
                "round_trip": latency,
                "ratio_median_vs_direct": latency.median_us / base.median_us,
                "ratio_p99_vs_direct": latency.p99_us / base.p99_us,
                "concurrent_round": rounds,
                "calls_per_second": throughput,
            }),
        );
    }
    report.insert(
        "big_result".into(),
        big_result(&big_paths, &info, pid).await,
    );
    editor.shutdown_and_exit().await;
    let _ = child.wait().await;
    report.insert("elapsed_s".into(), json!(started.elapsed().as_secs_f64()));
    let out = std::env::var("BENCH_OUT").unwrap_or_else(|_| {
        format!(
            "{}/target/bench-gateway{}.json",
            env!("CARGO_MANIFEST_DIR"),
            if smoke() { "-smoke" } else { "" }
        )
    });
    std::fs::write(
        &out,
        serde_json::to_string_pretty(&Value::Object(report)).unwrap(),
    )
    .unwrap();
    println!(
        "written to {out} ({:.0} s)",
        started.elapsed().as_secs_f64()
    );
}
