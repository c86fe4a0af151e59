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
//! `cargo bench --bench gateway` (release): `BENCH_CALLS` (default 2000) calls per latency series,
//! 20 rounds of 100; prints the figures and writes `target/bench-gateway.json` (or `BENCH_OUT`).
//! `BENCH_SMOKE=1`, implied by a debug build (`cargo test --bench gateway`, the interop tier's
//! smoke), runs 20 calls and 2 rounds and writes `target/bench-gateway-smoke.json`. Needs
//! `MCP_PEERS_NODE_MODULES` (`. .cache/peers/env.sh`); without it the run says `skipped` and
//! passes.

#[path = "../tests/it/support/mod.rs"]
#[allow(unused_imports)]
mod support;

use std::time::Instant;

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

async fn start_sidecar(
    home: &std::path::Path,
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
    editor
        .initialize(
            &[(&folder, "work")],
            json!({"servers": {"demo": demo_server("legacy", None)}}),
            json!({}),
        )
        .await;
    editor.wait_status(mark, "demo", "running").await;
    let info = gateway_info(&editor, mark).await;
    (child, editor, info)
}

fn main() {
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
    let (mut child, editor, info) = start_sidecar(home.path()).await;
    let direct_argv = ["demo-server", "--era", "legacy"];
    let bridge_argv = ["gateway"];
    let paths = [
        ("direct", Via::Stdio(&direct_argv), "echo"),
        ("http", Via::http(&info), "demo__echo"),
        ("bridge", Via::Stdio(&bridge_argv), "demo__echo"),
    ];
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
