//! Series measured against peers in the same run (issue 8): other MCP clients calling the same
//! server, 1000 concurrent calls over ten servers, a 10 MiB tool result, parallel start-up, idle
//! memory next to a Node (TypeScript SDK) host, and tasks in flight against none ([`tasks`]). The
//! peer clients are scripts under `benches/peers/`; a peer whose environment variable is unset is
//! skipped with a line saying so.

pub mod byte_relay;
pub mod fixture;
pub mod lsp_relay;
pub mod procfs;
pub mod tasks;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use futures::future::join_all;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support::{demo_server, file_uri, sidecar_bin};
use crate::{Stats, reps, rmcp_client, spawn_sidecar, stats, warmup};

// ---------------------------------------------------------------------------------- peers

/// Where the peer clients come from: `MCP_PYTHON` (the venv with `mcp`), `MCP_PEERS_NODE_MODULES`
/// (holding `@modelcontextprotocol/sdk`), both exported by `.cache/peers/env.sh`.
pub struct Peers {
    pub python: Result<PathBuf, String>,
    pub node_modules: Result<PathBuf, String>,
}

const HOW: &str = "run scripts/install-peers.sh, then `. .cache/peers/env.sh`";

impl Peers {
    pub fn from_env() -> Self {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .ok_or_else(|| format!("{name} is not set ({HOW})"))
        };
        Peers {
            python: var("MCP_PYTHON"),
            node_modules: var("MCP_PEERS_NODE_MODULES"),
        }
    }
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches/peers")
        .join(name)
}

fn python_cmd(python: &Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(python);
    cmd.arg(script("py_client.py")).args(args);
    cmd
}

fn node_cmd(node_modules: &Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(script("ts_client.mjs"))
        .args(args)
        .env("MCP_PEERS_NODE_MODULES", node_modules);
    cmd
}

/// Runs a peer script to its end and returns the JSON object it printed last.
async fn run_json(mut cmd: tokio::process::Command) -> Value {
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .output()
        .await
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().rev().find(|l| !l.trim().is_empty());
    serde_json::from_str(last.unwrap_or_default())
        .unwrap_or_else(|e| panic!("{cmd:?} printed no JSON ({e}): {stdout}"))
}

pub fn skipped(series: &str, why: &str) -> Value {
    println!("skipped: {series}: {why}");
    json!({"skipped": why})
}

fn bin() -> String {
    sidecar_bin().display().to_string()
}

fn latencies(v: &Value) -> Stats {
    let samples = v["latencies_us"]
        .as_array()
        .expect("latencies_us")
        .iter()
        .map(|x| Duration::from_secs_f64(x.as_f64().unwrap() / 1e6))
        .collect();
    stats(samples)
}

/// `add` {1, 2} called `calls()` times in a row by a peer client on its own demo-server child.
/// `Err` (the JSON to report) when the peer is not installed, after printing why.
pub async fn peer_latency(peers: &Peers, peer: &str, era: &str) -> Result<(Stats, Value), Value> {
    let calls = crate::calls().to_string();
    let warm = warmup().to_string();
    let b = bin();
    let cmd = match (peer, &peers.python, &peers.node_modules) {
        ("python", Ok(py), _) => {
            let mode = if era == "modern" {
                "2026-07-28"
            } else {
                "legacy"
            };
            python_cmd(
                py,
                &[
                    "latency", "--bin", &b, "--era", era, "--mode", mode, "--calls", &calls,
                    "--warmup", &warm,
                ],
            )
        }
        ("python", Err(why), _) => return Err(skipped(&format!("Python SDK client, {era}"), why)),
        (_, _, Ok(nm)) => node_cmd(
            nm,
            &[
                "latency", "--bin", &b, "--era", era, "--calls", &calls, "--warmup", &warm,
            ],
        ),
        (_, _, Err(why)) => {
            return Err(skipped(&format!("TypeScript SDK client, {era}"), why));
        }
    };
    let out = run_json(cmd).await;
    let s = latencies(&out);
    let about = json!({"client": out["client"], "protocolVersion": out["protocolVersion"]});
    Ok((s, about))
}

/// The event-loop client (`benches/peers/lsp_client.mjs`, plain Node): `callTool` through the
/// sidecar, `tools/call` through `socat` (a zero-work relay hop) and directly, interleaved in
/// blocks; every answer checked by the script. Skipped without `node` or `socat`.
pub async fn event_loop_client(home: &Path) -> Value {
    let series = "event-loop client (Node) through the sidecar vs through socat";
    for (tool, how) in [
        ("node", "Node is not on PATH (scripts/install-node.sh)"),
        ("socat", "socat is not installed (scripts/install-socat.sh)"),
    ] {
        let found = tokio::process::Command::new(tool)
            .arg(if tool == "node" { "--version" } else { "-V" })
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await
            .is_ok_and(|s| s.success());
        if !found {
            return skipped(series, how);
        }
    }
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(script("lsp_client.mjs")).args([
        "--bin",
        &bin(),
        "--home",
        &home.display().to_string(),
        "--calls",
        &crate::calls().to_string(),
        "--warmup",
        &warmup().to_string(),
        // The bench binary as the floor of an LSP relay (`lsp_relay`) and of a relay on tokio
        // (`byte_relay`).
        "--relay",
        &std::env::current_exe().unwrap().display().to_string(),
    ]);
    let out = run_json(cmd).await;
    let of = |path: &str| latencies(&json!({"latencies_us": out["latencies_us"][path]}));
    let (sidecar, socat, direct, relay) = (of("sidecar"), of("socat"), of("direct"), of("relay"));
    let bytes = of("byte_relay");
    json!({
        "client": out["client"],
        "sidecar": sidecar,
        "socat": socat,
        "direct": direct,
        "minimal_lsp_relay": relay,
        "zero_work_tokio_relay": bytes,
        "ratio_median_sidecar_vs_socat": sidecar.median_us / socat.median_us,
        "ratio_p99_sidecar_vs_socat": sidecar.p99_us / socat.p99_us,
        "ratio_median_socat_vs_direct": socat.median_us / direct.median_us,
        "ratio_median_relay_vs_socat": relay.median_us / socat.median_us,
        "ratio_median_sidecar_vs_relay": sidecar.median_us / relay.median_us,
        "ratio_median_tokio_relay_vs_socat": bytes.median_us / socat.median_us,
        "cpu_us_per_call": out["cpu_us_per_call"],
    })
}

// ---------------------------------------------------------------------------------- throughput

const SERVERS: usize = 10;

fn expected(i: usize) -> (i64, i64) {
    let a = ((i % SERVERS) * 1_000_000 + i) as i64;
    (a, i as i64)
}

/// One round's outcome: wall time and how every answer compared with its request.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Round {
    wall_us: f64,
    calls_per_s: f64,
    ok: usize,
    busy: usize,
    wrong: usize,
    other_errors: usize,
    first_other_error: Option<Value>,
}

/// 1000 `callTool`s over ten demo servers through the sidecar, each round with at most `window`
/// requests in flight (`usize::MAX`: all at once, as an editor writes them), one entry per name,
/// and the same 1000 calls made directly over ten rmcp client connections (all at once), the
/// rounds of the ways interleaved so that a slow moment of the machine costs each alike (this
/// machine's speed drifts within seconds; a round is tens of milliseconds): each round's ratio
/// is the sidecar's rate over the direct round right after it, and the report gives each way's
/// median rate and the median of those ratios. Every answer is checked against its request
/// (distinct addends); a separate pass checks each server name reaches its own server (each has
/// one root of its own, reported by `list_roots`).
pub async fn throughput(home: &Path, windows: &[(&str, usize)]) -> Value {
    let total = reps(1000, 100);
    let rounds = reps(15, 1);
    let dirs: Vec<tempfile::TempDir> = (0..SERVERS).map(|_| tempfile::tempdir().unwrap()).collect();
    let mut servers = serde_json::Map::new();
    for (k, dir) in dirs.iter().enumerate() {
        let mut def = demo_server("legacy", Some("2025-11-25"));
        def["roots"] = json!([dir.path()]);
        servers.insert(format!("s{k}"), def);
    }
    let folders: Vec<(&Path, String)> = dirs
        .iter()
        .enumerate()
        .map(|(k, d)| (d.path(), format!("f{k}")))
        .collect();
    let folders: Vec<(&Path, &str)> = folders.iter().map(|(p, n)| (*p, n.as_str())).collect();
    let sidecar = spawn_sidecar(home);
    let editor = sidecar.editor.clone();
    let mark = editor.mark();
    editor
        .initialize(&folders, json!({"servers": servers}), json!({}))
        .await;
    for k in 0..SERVERS {
        editor.wait_status(mark, &format!("s{k}"), "running").await;
    }
    for i in 0..SERVERS * 5 {
        let arg = json!({"server": format!("s{}", i % SERVERS), "tool": "add", "arguments": {"a": 0, "b": 0}});
        editor.command("mcp-sidecar.callTool", arg).await;
    }
    let clients = join_all(
        (0..SERVERS)
            .map(|_| rmcp_client(crate::demo_command("legacy"), ProtocolVersion::V_2025_11_25)),
    )
    .await;
    for c in &clients {
        for _ in 0..5 {
            c.call_tool(
                CallToolRequestParams::new("add")
                    .with_arguments(json!({"a": 0, "b": 0}).as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        }
    }
    let mut through: Vec<Vec<Round>> = vec![Vec::new(); windows.len()];
    let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); windows.len()];
    let mut direct = Vec::new();
    for _ in 0..rounds {
        for (w, &(_, window)) in windows.iter().enumerate() {
            let round = sidecar_round(&editor, total, window).await;
            let beside = rmcp_round(&clients, total).await;
            ratios[w].push(round.calls_per_s / beside.calls_per_s);
            through[w].push(round);
            direct.push(beside);
        }
    }
    let mut report = serde_json::Map::new();
    for ((&(name, _), rounds), ratios) in windows.iter().zip(through).zip(ratios) {
        let mut summary = summarize(rounds, total);
        summary["median_ratio_to_direct_rmcp"] = json!(median_f64(ratios.clone()));
        summary["ratios_to_direct_rmcp"] = json!(ratios);
        report.insert(name.into(), summary);
    }
    // Routing: each name reaches its own server (10 concurrent `list_roots` per server).
    let checks = (0..SERVERS * 10).map(|i| {
        let editor = editor.clone();
        let k = i % SERVERS;
        let want = file_uri(dirs[k].path());
        async move {
            let r = editor
                .command(
                    "mcp-sidecar.callTool",
                    json!({"server": format!("s{k}"), "tool": "list_roots", "arguments": {}}),
                )
                .await;
            let roots = r["structuredContent"]["roots"].as_array().cloned();
            roots.is_some_and(|r| r.len() == 1 && r[0]["uri"] == want)
        }
    });
    let routed = join_all(checks).await.iter().filter(|ok| **ok).count();
    assert_eq!(routed, SERVERS * 10, "calls reached another server");
    report.insert(
        "routing_check".into(),
        json!({"calls": SERVERS * 10, "reached_own_server": routed}),
    );
    editor.shutdown_and_exit().await;
    for c in clients {
        let _ = c.cancel().await;
    }
    json!({"sidecar": report, "direct_rmcp": summarize(direct, total)})
}

/// One round of `total` calls through the sidecar, at most `window` in flight.
async fn sidecar_round(editor: &crate::support::TestEditor, total: usize, window: usize) -> Round {
    let sem = std::sync::Arc::new(tokio::sync::Semaphore::new(window.min(total)));
    let t = Instant::now();
    let calls = (0..total).map(|i| {
        let sem = sem.clone();
        async move {
            let _permit = sem.acquire_owned().await.unwrap();
            let (a, b) = expected(i);
            let params = json!({"command": "mcp-sidecar.callTool", "arguments": [
                {"server": format!("s{}", i % SERVERS), "tool": "add", "arguments": {"a": a, "b": b}}]});
            let (_, rx) = editor
                .start_request("workspace/executeCommand", params)
                .await;
            let response = tokio::time::timeout(Duration::from_secs(60), rx)
                .await
                .expect("a callTool was never answered")
                .unwrap();
            (a + b, response)
        }
    });
    let answers = join_all(calls).await;
    let wall = t.elapsed();
    let mut round = Round {
        wall_us: wall.as_secs_f64() * 1e6,
        ..Round::default()
    };
    for (sum, response) in answers {
        if let Some(error) = response.get("error") {
            if error["data"]["kind"] == "busy" {
                round.busy += 1;
            } else {
                round.other_errors += 1;
                round.first_other_error.get_or_insert(error.clone());
            }
        } else if response["result"]["structuredContent"]["sum"] == json!(sum) {
            round.ok += 1;
        } else {
            round.wrong += 1;
        }
    }
    round.calls_per_s = round.ok as f64 / wall.as_secs_f64();
    // Refusals at the cap ("busy") are the sidecar's documented answer; anything else that is
    // not the right sum is a lost or misrouted answer.
    assert!(
        round.wrong == 0 && round.other_errors == 0,
        "answers that do not match their request: {round:?}"
    );
    round
}

/// The same `total` calls made directly over the ten rmcp client connections, all at once.
async fn rmcp_round(
    clients: &[rmcp::service::RunningService<rmcp::RoleClient, rmcp::model::ClientConfig>],
    total: usize,
) -> Round {
    let t = Instant::now();
    let calls = (0..total).map(|i| {
        let client = &clients[i % SERVERS];
        let (a, b) = expected(i);
        async move {
            let args = json!({"a": a, "b": b}).as_object().unwrap().clone();
            let r = client
                .call_tool(CallToolRequestParams::new("add").with_arguments(args))
                .await;
            r.ok()
                .and_then(|r| r.structured_content)
                .is_some_and(|s| s["sum"] == json!(a + b))
        }
    });
    let answers = join_all(calls).await;
    let wall = t.elapsed();
    let ok = answers.iter().filter(|ok| **ok).count();
    assert_eq!(
        ok, total,
        "direct rmcp answers that do not match their request"
    );
    Round {
        wall_us: wall.as_secs_f64() * 1e6,
        calls_per_s: ok as f64 / wall.as_secs_f64(),
        ok,
        wrong: total - ok,
        ..Round::default()
    }
}

fn summarize(rounds: Vec<Round>, total: usize) -> Value {
    let rates: Vec<f64> = rounds.iter().map(|r| r.calls_per_s).collect();
    json!({"calls": total, "servers": SERVERS, "median_calls_per_s": median_f64(rates), "rounds": rounds})
}

fn median_f64(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// The same over ten TypeScript SDK connections (one Node process), all at once.
pub async fn ts_throughput(peers: &Peers) -> Value {
    let nm = match &peers.node_modules {
        Ok(nm) => nm,
        Err(why) => return skipped("TypeScript SDK throughput", why),
    };
    let total = reps(1000, 100).to_string();
    let rounds = reps(5, 1).to_string();
    let servers = SERVERS.to_string();
    let out = run_json(node_cmd(
        nm,
        &[
            "throughput",
            "--bin",
            &bin(),
            "--servers",
            &servers,
            "--calls",
            &total,
            "--rounds",
            &rounds,
        ],
    ))
    .await;
    let n = total.parse::<f64>().unwrap();
    let mut rates: Vec<f64> = out["wall_us"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| n / (w.as_f64().unwrap() / 1e6))
        .collect();
    rates.sort_by(f64::total_cmp);
    json!({"client": out["client"], "calls": n, "servers": SERVERS,
           "median_calls_per_s": rates[rates.len() / 2], "wall_us": out["wall_us"]})
}

// ---------------------------------------------------------------------------------- 10 MiB result

/// A `/proc/PID/status` figure in KiB of a process that must still be there.
fn proc_kib(pid: u32, key: &str) -> u64 {
    procfs::proc_kib(pid, key).unwrap()
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn big_command(bytes: usize) -> (PathBuf, Vec<(&'static str, String)>) {
    (
        std::env::current_exe().unwrap(),
        vec![
            (fixture::ROLE_VAR, fixture::ROLE.into()),
            (fixture::BYTES_VAR, bytes.to_string()),
        ],
    )
}

/// A ~10 MiB tool result relayed through the sidecar (time to the editor having it parsed, the
/// sidecar's peak RSS, and how soon its RSS is back near idle), against one
/// `serde_json::from_slice` of the same document, and the same call made directly by an rmcp
/// client; then the same for a ~10 MiB resource (`readResource`).
pub async fn big_result(home: &Path) -> Value {
    let target = reps(10 << 20, 1 << 20);
    let n = reps(7, 2);
    let result = fixture::result_bytes(target);
    let document = fixture::response_line(b"1", &result);
    let text_len = fixture::text_len(&result);

    let (exe, env) = big_command(target);
    let tool = relay_big(
        home,
        &document,
        n,
        "mcp-sidecar.callTool",
        json!({"server": "big", "tool": "big", "arguments": {}}),
        |r| r["result"]["content"][0]["text"].as_str().map(str::len) == Some(text_len),
    )
    .await;
    let resource_doc = fixture::resource_bytes(target);
    let resource_len = resource_doc.len();
    let resource_text =
        serde_json::from_slice::<Value>(&resource_doc).unwrap()["contents"][0]["text"]
            .as_str()
            .unwrap()
            .len();
    let resource = relay_big(
        home,
        &document,
        n,
        "mcp-sidecar.readResource",
        json!({"server": "big", "uri": fixture::RESOURCE_URI}),
        |r| r["result"]["contents"][0]["text"].as_str().map(str::len) == Some(resource_text),
    )
    .await;

    let mut cmd = tokio::process::Command::new(&exe);
    cmd.envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stderr(Stdio::null());
    let client = rmcp_client(cmd, ProtocolVersion::V_2025_11_25).await;
    let mut direct = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let r = client
            .call_tool(CallToolRequestParams::new("big"))
            .await
            .unwrap();
        direct.push(t.elapsed());
        assert_eq!(r.content.len(), 1);
    }
    let _ = client.cancel().await;

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let direct_ms = ms(median(direct));
    let parse_ms = tool["parse_median_ms"].as_f64().unwrap();
    let relay_ms = tool["relay_median_ms"].as_f64().unwrap();
    let doc_kib = document.len() as f64 / 1024.0;
    let growth = |v: &Value| {
        (v["sidecar_vmhwm_after_kib"].as_f64().unwrap()
            - v["sidecar_vmhwm_before_kib"].as_f64().unwrap())
            / doc_kib
    };
    json!({
        "document_bytes": document.len(),
        "resource_bytes": resource_len,
        "calls": n,
        "relayed_intact": true,
        "relay_median_ms": relay_ms,
        "parse_once_median_ms": parse_ms,
        "direct_rmcp_median_ms": direct_ms,
        "relay_vs_parse": tool["relay_vs_parse"],
        "relay_vs_direct_rmcp": relay_ms / direct_ms,
        "sidecar_vmhwm_before_kib": tool["sidecar_vmhwm_before_kib"],
        "sidecar_vmhwm_after_kib": tool["sidecar_vmhwm_after_kib"],
        "sidecar_vmrss_after_kib": tool["sidecar_vmrss_after_kib"],
        "peak_growth_vs_document": growth(&tool),
        "peak_vs_document": tool["sidecar_vmhwm_after_kib"].as_f64().unwrap() / doc_kib,
        "tool": tool,
        "resource": resource,
        "resource_relay_vs_parse": resource["relay_vs_parse"],
        "resource_peak_growth_vs_document": growth(&resource),
    })
}

/// One fresh sidecar with the fixture server: `n` big answers to `command`, each checked by
/// `intact`; the times, VmHWM before and after, and how long VmRSS took to come back to within
/// 20 % of what it was before the first answer. Right before each answer, one `serde_json` parse
/// of `reference` in this process, timed: the machine's speed drifts within seconds, so each
/// call is set against a parse of its own moment (`relay_vs_parse`: the median of those ratios).
async fn relay_big(
    home: &Path,
    reference: &[u8],
    n: usize,
    command: &str,
    arg: Value,
    intact: impl Fn(&Value) -> bool,
) -> Value {
    let (exe, env) = big_command(reps(10 << 20, 1 << 20));
    let env_obj: serde_json::Map<String, Value> =
        env.iter().map(|(k, v)| (k.to_string(), json!(v))).collect();
    let sidecar = spawn_sidecar(home);
    let pid = sidecar.child.id().unwrap();
    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .initialize(
            &[],
            json!({"servers": {"big": {"command": exe, "env": env_obj, "protocolVersion": "2025-11-25"}}}),
            json!({}),
        )
        .await;
    sidecar.editor.wait_status(mark, "big", "running").await;
    sidecar
        .editor
        .command("mcp-sidecar.listTools", json!({}))
        .await;
    let hwm_before = proc_kib(pid, "VmHWM:");
    let rss_idle = proc_kib(pid, "VmRSS:");
    let cpu_before = procfs::cpu_ms(pid).unwrap();
    let mut relay = Vec::new();
    let mut parse = Vec::new();
    let mut ratios = Vec::new();
    // Each call split where the editor saw it: the reply's header (the sidecar has read the
    // server's whole answer), its body read, the body parsed.
    let (mut to_header, mut body, mut editor_parse) = (Vec::new(), Vec::new(), Vec::new());
    let mut delivered_ratios = Vec::new();
    let mut editor_parse_ratios = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        let v: Value = serde_json::from_slice(reference).unwrap();
        parse.push(t.elapsed());
        drop(v);
        let t = Instant::now();
        let r = sidecar.editor.command_response(command, arg.clone()).await;
        relay.push(t.elapsed());
        let beside = parse[parse.len() - 1].as_secs_f64();
        ratios.push(relay[relay.len() - 1].as_secs_f64() / beside);
        assert!(
            intact(&r),
            "big {command}: not relayed intact: {}",
            r.to_string().chars().take(300).collect::<String>()
        );
        let arrivals = sidecar.editor.big_arrivals();
        assert_eq!(
            arrivals.len(),
            relay.len(),
            "big {command}: an arrival not kept"
        );
        let a = arrivals[arrivals.len() - 1];
        to_header.push(a.header - t);
        body.push(a.body - a.header);
        editor_parse.push(a.parsed - a.body);
        delivered_ratios.push((a.body - t).as_secs_f64() / beside);
        editor_parse_ratios.push((a.parsed - a.body).as_secs_f64() / beside);
    }
    // The sidecar's own share: when the relay time moves between runs and this does not, the
    // time went elsewhere (the server, the editor's reading, the machine).
    let cpu_ms_per_call = (procfs::cpu_ms(pid).unwrap() - cpu_before) / n as f64;
    let hwm_after = proc_kib(pid, "VmHWM:");
    let rss_after = proc_kib(pid, "VmRSS:");
    // Polled: the figure is how soon the allocator gives the memory back.
    let t = Instant::now();
    let mut rss_back = rss_after;
    while rss_back as f64 > rss_idle as f64 * 1.2 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(50)).await;
        rss_back = proc_kib(pid, "VmRSS:");
    }
    let returned = rss_back as f64 <= rss_idle as f64 * 1.2;
    sidecar.editor.shutdown_and_exit().await;
    json!({
        "relay_median_ms": median(relay).as_secs_f64() * 1e3,
        "parse_median_ms": median(parse).as_secs_f64() * 1e3,
        "relay_vs_parse": median_f64(ratios),
        "phases_median_ms": {
            "to_reply_header": median(to_header).as_secs_f64() * 1e3,
            "reply_body": median(body).as_secs_f64() * 1e3,
            "editor_parse": median(editor_parse).as_secs_f64() * 1e3,
        },
        "delivered_vs_parse": median_f64(delivered_ratios),
        "editor_parse_vs_parse": median_f64(editor_parse_ratios),
        "sidecar_cpu_ms_per_call": cpu_ms_per_call,
        "sidecar_vmhwm_before_kib": hwm_before,
        "sidecar_vmhwm_after_kib": hwm_after,
        "sidecar_vmrss_idle_kib": rss_idle,
        "sidecar_vmrss_after_kib": rss_after,
        "sidecar_vmrss_settled_kib": rss_back,
        "rss_within_20pct_of_idle": returned,
        "rss_return_ms": returned.then(|| t.elapsed().as_secs_f64() * 1e3),
    })
}

// ---------------------------------------------------------------------------------- startup

/// Five demo servers of different kinds: negotiated by `server/discover`, pinned legacy, pinned
/// modern, a legacy-only server found by the automatic fallback, and one more pinned legacy.
fn five_servers() -> Vec<(&'static str, Value)> {
    vec![
        ("auto-both", demo_server("both", None)),
        ("legacy", demo_server("legacy", Some("2025-11-25"))),
        ("modern", demo_server("modern", Some("2026-07-28"))),
        ("auto-fallback", demo_server("legacy", None)),
        ("both-legacy", demo_server("both", Some("2025-11-25"))),
    ]
}

/// Fresh sidecar; time from sending `initialized` to each server's `running` status.
async fn start_once(home: &Path, servers: &[(&str, Value)]) -> Vec<Duration> {
    let sidecar = spawn_sidecar(home);
    let editor = sidecar.editor.clone();
    let mark = editor.mark();
    let defs: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(n, d)| (n.to_string(), d.clone()))
        .collect();
    let r = editor
        .request(
            "initialize",
            json!({"processId": null, "rootUri": null, "workspaceFolders": [],
                   "capabilities": {"experimental": {"mcpSidecar": {"serverScopes": true}}},
                   "initializationOptions": crate::support::with_user_scopes(json!({"servers": defs}))}),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let t0 = Instant::now();
    editor.notify("initialized", json!({})).await;
    let times = join_all(servers.iter().map(|(name, _)| {
        let editor = editor.clone();
        async move {
            editor.wait_status(mark, name, "running").await;
            t0.elapsed()
        }
    }))
    .await;
    editor.shutdown_and_exit().await;
    let mut child = sidecar.child;
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    times
}

pub async fn startup(home: &Path) -> Value {
    let n = reps(15, 1);
    let servers = five_servers();
    let mut alone = serde_json::Map::new();
    let mut slowest = ("", Duration::ZERO);
    for server in &servers {
        let mut runs = Vec::new();
        for _ in 0..n {
            runs.push(start_once(home, std::slice::from_ref(server)).await[0]);
        }
        let s = stats(runs);
        let m = Duration::from_secs_f64(s.median_us / 1e6);
        if m > slowest.1 {
            slowest = (server.0, m);
        }
        alone.insert(server.0.into(), json!(s));
    }
    let mut all = Vec::new();
    let mut each: Vec<Vec<Duration>> = vec![Vec::new(); servers.len()];
    for _ in 0..n {
        let times = start_once(home, &servers).await;
        all.push(*times.iter().max().unwrap());
        for (i, t) in times.into_iter().enumerate() {
            each[i].push(t);
        }
    }
    let parallel: serde_json::Map<String, Value> = servers
        .iter()
        .zip(each)
        .map(|((name, _), runs)| (name.to_string(), json!(stats(runs))))
        .collect();
    let all = stats(all);
    let slowest_us = slowest.1.as_secs_f64() * 1e6;
    // The machine's own share: the same children started and handshaken by rmcp directly.
    let (mut one, mut five) = (Vec::new(), Vec::new());
    for _ in 0..n {
        one.push(direct_start(1).await);
        five.push(direct_start(5).await);
    }
    let (one, five) = (stats(one), stats(five));
    json!({
        "runs": n,
        "all_five_running": all,
        "each_in_parallel": parallel,
        "each_alone": alone,
        "slowest_alone": slowest.0,
        "slowest_alone_median_us": slowest_us,
        "ratio_all_vs_slowest_alone": all.median_us / slowest_us,
        "direct_rmcp": {"one": one, "five_in_parallel": five, "ratio": five.median_us / one.median_us},
    })
}

/// `n` demo servers spawned and handshaken (legacy `initialize`) by rmcp clients at once.
async fn direct_start(n: usize) -> Duration {
    let t = Instant::now();
    let clients = join_all(
        (0..n).map(|_| rmcp_client(crate::demo_command("both"), ProtocolVersion::V_2025_11_25)),
    )
    .await;
    let took = t.elapsed();
    for c in clients {
        let _ = c.cancel().await;
    }
    took
}

// ---------------------------------------------------------------------------------- idle RSS

/// Five `demo-server --era both` children, all on 2025-11-25 (what the TypeScript SDK speaks).
fn five_hosted() -> serde_json::Map<String, Value> {
    (1..=5)
        .map(|i| (format!("s{i}"), demo_server("both", Some("2025-11-25"))))
        .collect()
}

fn settle() -> Duration {
    Duration::from_millis(reps(2000, 200) as u64)
}

/// Idle RSS of the sidecar process alone with five servers connected, and of a Node process
/// (TypeScript SDK) and a Python process (Python SDK) hosting the same five servers.
pub async fn idle_rss_five(home: &Path, peers: &Peers) -> Value {
    let sidecar = spawn_sidecar(home);
    let mark = sidecar.editor.mark();
    sidecar
        .editor
        .initialize(&[], json!({"servers": five_hosted()}), json!({}))
        .await;
    for i in 1..=5 {
        sidecar
            .editor
            .wait_status(mark, &format!("s{i}"), "running")
            .await;
    }
    sidecar
        .editor
        .command("mcp-sidecar.listTools", json!({}))
        .await;
    tokio::time::sleep(settle()).await;
    let rss = proc_kib(sidecar.child.id().unwrap(), "VmRSS:");
    sidecar.editor.shutdown_and_exit().await;
    let b = bin();
    let node = match &peers.node_modules {
        Ok(nm) => json!(
            host_rss(node_cmd(
                nm,
                &["host", "--bin", &b, "--era", "both", "--servers", "5"]
            ))
            .await
        ),
        Err(why) => skipped("Node (TypeScript SDK) host RSS", why),
    };
    let python = match &peers.python {
        Ok(py) => json!(
            host_rss(python_cmd(
                py,
                &[
                    "host",
                    "--bin",
                    &b,
                    "--era",
                    "both",
                    "--mode",
                    "legacy",
                    "--servers",
                    "5"
                ]
            ))
            .await
        ),
        Err(why) => skipped("Python SDK host RSS", why),
    };
    json!({"sidecar_kib": rss, "node_ts_sdk_kib": node, "python_sdk_kib": python})
}

/// Starts a host script, waits for its "ready" line and `settle()`, reads its own VmRSS, then
/// closes its stdin so it shuts its servers down.
async fn host_rss(mut cmd: tokio::process::Command) -> u64 {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the host never became ready")
        .unwrap()
        .unwrap_or_else(|| panic!("{cmd:?} exited before it was ready"));
    assert!(ready.contains("\"ready\""), "{ready}");
    tokio::time::sleep(settle()).await;
    let rss = proc_kib(child.id().unwrap(), "VmRSS:");
    drop(child.stdin.take());
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    rss
}
