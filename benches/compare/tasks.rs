//! Tasks in flight (issue 39's budget): `BENCH_TASKS` (default 100, a multiple of five) `callTool`s
//! that become tasks, spread over five stdio servers (`fixtures/bad/task_farm.py`, `pollIntervalMs`
//! 200, 300, 500, 700 and 1000 ms), followed by the built sidecar for a window of
//! `BENCH_TASK_WINDOW_S` seconds (default 20), against a sidecar with the same servers and no task
//! over the same window.
//!
//! Measured: every `tasks/get` as the server saw it arrive (the servers log the monotonic clock,
//! the one this process reads): per task, each gap between two polls in the window against its
//! server's interval (early: a gap below the interval less [`TOLERANCE_MS`]; drift: gap −
//! interval); the sidecar's CPU over the window (`/proc/PID/stat`, % of one core) and the servers'
//! beside it; its VmRSS (median of one sample a second over the window) against the run with no
//! task; the task book (`$XDG_STATE_HOME/mcp-sidecar/tasks/*.json`, a private state directory per
//! run) read every few milliseconds from the first call to the sidecar's exit: each read must parse
//! as a whole JSON array (a failed parse fails the run), its largest size, and how many versions of
//! it (inode and mtime: each atomic rewrite is a new file) were seen while the tasks started, in
//! the window, and while they were cancelled. Then every task is cancelled with
//! `mcp-sidecar.cancelTask`, each call must end `cancelled`, each server must have had its
//! `tasks/cancel`, and the sidecar must exit cleanly after `shutdown`/`exit`.
//!
//! The smoke (a debug build or `BENCH_SMOKE=1`): 10 tasks, a 3 s window, 1 s with no task.

use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use futures::future::join_all;
use serde_json::{Value, json};

use super::procfs::{cpu_ms, proc_kib};
use crate::reps;
use crate::support::{TestEditor, fixture, sidecar_bin};

/// The servers' `pollIntervalMs`, one server each.
pub const INTERVALS_MS: [u64; 5] = [200, 300, 500, 700, 1000];
/// A gap this much below its interval counts as early (the servers stamp a poll when they read
/// its line, after whatever they were answering).
pub const TOLERANCE_MS: f64 = 2.0;
/// The budgets.
const DRIFT_BUDGET_MS: f64 = 50.0;
const CPU_BUDGET_PCT: f64 = 1.0;
const RSS_BUDGET_KIB: f64 = 2048.0;
const BOOK_BUDGET_BYTES: u64 = 100 * 1024;
/// The finished tasks a task book keeps at the most (`mcp-sidecar.listTasks`).
const KEEP_FINISHED: usize = 100;
/// How long anything the run waits for may take.
const DEADLINE: Duration = Duration::from_secs(60);

fn env_or(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CLOCK_MONOTONIC in milliseconds: the clock the servers stamp their events with.
fn mono_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only the struct it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// One line of the servers' log: `start|poll|cancel SERVER TASK MS`.
struct Event {
    kind: String,
    server: String,
    task: String,
    ms: f64,
}

fn events(log: &Path) -> Vec<Event> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut it = line.split(' ');
            let (kind, server, task, ms) = (it.next()?, it.next()?, it.next()?, it.next()?);
            Some(Event {
                kind: kind.into(),
                server: server.into(),
                task: task.into(),
                ms: ms.parse().ok()?,
            })
        })
        .collect()
}

fn server_name(interval_ms: u64) -> String {
    format!("farm{interval_ms}")
}

fn interval_of(server: &str) -> f64 {
    server
        .strip_prefix("farm")
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(f64::NAN)
}

/// A run's own HOME, config, state and runtime directories, workspace folder and server log.
struct Dirs {
    _root: tempfile::TempDir,
    home: PathBuf,
    config: PathBuf,
    state: PathBuf,
    runtime: PathBuf,
    folder: PathBuf,
    log: PathBuf,
}

impl Dirs {
    fn new() -> Dirs {
        let root = tempfile::tempdir().unwrap();
        let dir = |name: &str| {
            let d = root.path().join(name);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
            d
        };
        let (home, config, state, runtime, folder) = (
            dir("home"),
            dir("config"),
            dir("state"),
            dir("run"),
            dir("workspace"),
        );
        let log = root.path().join("servers.log");
        Dirs {
            home,
            config,
            state,
            runtime,
            folder,
            log,
            _root: root,
        }
    }

    fn book_dir(&self) -> PathBuf {
        self.state.join("mcp-sidecar").join("tasks")
    }
}

struct Sidecar {
    child: tokio::process::Child,
    pid: u32,
    editor: Arc<TestEditor>,
}

/// The built sidecar over stdio with the five servers, every server running.
async fn start(dirs: &Dirs) -> Sidecar {
    let mut child = tokio::process::Command::new(sidecar_bin())
        .arg("lsp")
        .env("HOME", &dirs.home)
        .env("XDG_CONFIG_HOME", &dirs.config)
        .env("XDG_STATE_HOME", &dirs.state)
        .env("XDG_RUNTIME_DIR", &dirs.runtime)
        .env("MCP_SIDECAR_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let pid = child.id().unwrap();
    let editor = TestEditor::new(child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let script = fixture("bad/task_farm.py").display().to_string();
    let servers: serde_json::Map<String, Value> = INTERVALS_MS
        .iter()
        .map(|&ms| {
            let name = server_name(ms);
            let def = json!({
                "command": "python3",
                "args": [script, "--name", name, "--poll-ms", ms.to_string()],
                "env": {"TASK_FARM_LOG": dirs.log.display().to_string()},
                "protocolVersion": "2025-11-25",
            });
            (name, def)
        })
        .collect();
    let mark = editor.mark();
    editor
        .initialize(
            &[(&dirs.folder, "ws")],
            json!({"servers": servers}),
            json!({}),
        )
        .await;
    for ms in INTERVALS_MS {
        editor.wait_status(mark, &server_name(ms), "running").await;
    }
    editor.command("mcp-sidecar.listTools", json!({})).await;
    // One plain call to each server, in both runs: what a first call costs is not the tasks'.
    for ms in INTERVALS_MS {
        let arg = json!({"server": server_name(ms), "tool": "ping_tool", "arguments": {}});
        let pong = editor.command("mcp-sidecar.callTool", arg).await;
        assert_eq!(pong["content"][0]["text"], "pong", "{pong}");
    }
    Sidecar { child, pid, editor }
}

/// `shutdown`, `exit`, and the sidecar's exit status, which must be success.
async fn stop(sidecar: Sidecar) -> Value {
    let Sidecar {
        mut child, editor, ..
    } = sidecar;
    let t = Instant::now();
    editor.shutdown_and_exit().await;
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("the sidecar did not exit within 10 s of `exit`")
        .unwrap();
    assert!(status.success(), "the sidecar exited with {status}");
    json!({"exit": status.code(), "ms": t.elapsed().as_secs_f64() * 1e3})
}

/// The sidecar's child processes (its servers).
fn children(pid: u32) -> Vec<u32> {
    let Ok(threads) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    threads
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// What one window measured of the sidecar (and its servers).
struct Window {
    start_ms: f64,
    end_ms: f64,
    cpu_pct: f64,
    servers_cpu_pct: f64,
    servers_found: usize,
    sidecar_cpu_ms: f64,
    rss_kib: Vec<u64>,
}

/// Waits `length`, sampling VmRSS once a second; the CPU used over it.
async fn window(pid: u32, length: Duration) -> Window {
    let servers = children(pid);
    let servers_cpu = || servers.iter().filter_map(|p| cpu_ms(*p)).sum::<f64>();
    let (cpu0, scpu0) = (cpu_ms(pid).unwrap(), servers_cpu());
    let (start_ms, t) = (mono_ms(), Instant::now());
    let mut rss_kib = Vec::new();
    loop {
        let left = length.saturating_sub(t.elapsed());
        if left.is_zero() {
            break;
        }
        tokio::time::sleep(left.min(Duration::from_secs(1))).await;
        rss_kib.push(proc_kib(pid, "VmRSS:").unwrap());
    }
    let (cpu1, scpu1) = (cpu_ms(pid).unwrap(), servers_cpu());
    let (end_ms, wall_ms) = (mono_ms(), t.elapsed().as_secs_f64() * 1e3);
    Window {
        start_ms,
        end_ms,
        cpu_pct: (cpu1 - cpu0) / wall_ms * 100.0,
        servers_cpu_pct: (scpu1 - scpu0) / wall_ms * 100.0,
        servers_found: servers.len(),
        sidecar_cpu_ms: cpu1 - cpu0,
        rss_kib,
    }
}

// ---------------------------------------------------------------------------------- the book

/// The phases the book is watched in.
const PHASES: [&str; 4] = ["start", "window", "cancel", "shutdown"];

#[derive(Default)]
struct PhaseSeen {
    reads: usize,
    unparsed: usize,
    first_unparsed: Option<String>,
    max_bytes: u64,
    /// (inode, mtime in ns): an atomic rewrite is a new file, so each version has its own.
    versions: HashSet<(u64, i64, i64)>,
    modes: HashSet<u32>,
}

/// Reads the task book over and over on a thread of its own until stopped.
struct BookWatch {
    phase: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Vec<PhaseSeen>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl BookWatch {
    fn start(dir: PathBuf) -> BookWatch {
        let phase = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let seen = Arc::new(Mutex::new(
            (0..PHASES.len())
                .map(|_| PhaseSeen::default())
                .collect::<Vec<_>>(),
        ));
        let (p, s, out) = (phase.clone(), stop.clone(), seen.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::SeqCst) {
                let now = p.load(Ordering::SeqCst);
                for file in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                    let path = file.path();
                    if path.extension().is_none_or(|e| e != "json") {
                        continue; // the writer's temporary file, before its rename
                    }
                    // Opened by name: the file the name stands for now, old or new, never half.
                    let Ok(meta) = std::fs::metadata(&path) else {
                        continue;
                    };
                    let Ok(bytes) = std::fs::read(&path) else {
                        continue;
                    };
                    let parsed =
                        serde_json::from_slice::<Value>(&bytes).is_ok_and(|v| v.is_array());
                    let mut seen = out.lock().unwrap();
                    let ph = &mut seen[now];
                    ph.reads += 1;
                    ph.max_bytes = ph.max_bytes.max(bytes.len() as u64);
                    ph.versions
                        .insert((meta.ino(), meta.mtime(), meta.mtime_nsec()));
                    ph.modes.insert(meta.mode() & 0o777);
                    if !parsed {
                        ph.unparsed += 1;
                        ph.first_unparsed.get_or_insert_with(|| {
                            String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned()
                        });
                    }
                }
                // Tight while the book is written (tasks starting, cancelled), looser between.
                let pause = if now == 1 { 50 } else { 5 };
                std::thread::sleep(Duration::from_millis(pause));
            }
        });
        BookWatch {
            phase,
            stop,
            seen,
            thread: Some(thread),
        }
    }

    fn phase(&self, name: &str) {
        let i = PHASES.iter().position(|p| *p == name).unwrap();
        self.phase.store(i, Ordering::SeqCst);
    }

    /// Stops the reader; per phase what it saw. A read that did not parse fails the run.
    fn finish(mut self) -> (Value, u64) {
        self.stop.store(true, Ordering::SeqCst);
        self.thread.take().unwrap().join().unwrap();
        let seen = self.seen.lock().unwrap();
        let mut out = serde_json::Map::new();
        for (name, ph) in PHASES.iter().zip(seen.iter()) {
            assert!(
                ph.unparsed == 0,
                "the task book was read {} time(s) as something other than a whole JSON array ({}): {:?}",
                ph.unparsed,
                name,
                ph.first_unparsed
            );
            let modes: Vec<String> = ph.modes.iter().map(|m| format!("{m:o}")).collect();
            out.insert(
                name.to_string(),
                json!({"reads": ph.reads, "parsed": ph.reads - ph.unparsed, "max_bytes": ph.max_bytes,
                       "versions_seen": ph.versions.len(), "modes": modes}),
            );
        }
        let max = seen.iter().map(|p| p.max_bytes).max().unwrap_or(0);
        (Value::Object(out), max)
    }
}

// ---------------------------------------------------------------------------------- figures

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Drift figures of a set of (gap − interval) values, in ms.
fn drift_stats(mut drifts: Vec<f64>) -> Value {
    drifts.sort_by(f64::total_cmp);
    let early = drifts.iter().filter(|d| **d < -TOLERANCE_MS).count();
    json!({
        "gaps": drifts.len(),
        "early": early,
        "min_ms": drifts.first().copied().unwrap_or(f64::NAN),
        "median_ms": percentile(&drifts, 0.5),
        "p90_ms": percentile(&drifts, 0.9),
        "p99_ms": percentile(&drifts, 0.99),
        "max_ms": drifts.last().copied().unwrap_or(f64::NAN),
    })
}

/// The polls of every task inside [start, end]: drift per server and overall, polls per task.
fn polls(events: &[Event], start: f64, end: f64, window_s: f64) -> Value {
    let mut by_task: BTreeMap<(&str, &str), Vec<f64>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == "start") {
        by_task
            .entry((e.server.as_str(), e.task.as_str()))
            .or_default();
    }
    for e in events.iter().filter(|e| e.kind == "poll") {
        if e.ms >= start && e.ms <= end {
            by_task
                .entry((e.server.as_str(), e.task.as_str()))
                .or_default()
                .push(e.ms);
        }
    }
    // By interval, shortest first.
    let mut per_server: BTreeMap<u64, (&str, Vec<f64>, Vec<usize>)> = BTreeMap::new();
    let mut all = Vec::new();
    for (&(server, _), times) in by_task.iter_mut() {
        times.sort_by(f64::total_cmp);
        let interval = interval_of(server);
        let drifts: Vec<f64> = times.windows(2).map(|w| w[1] - w[0] - interval).collect();
        let entry = per_server
            .entry(interval as u64)
            .or_insert((server, Vec::new(), Vec::new()));
        entry.1.extend(&drifts);
        entry.2.push(times.len());
        all.extend(drifts);
    }
    let servers: serde_json::Map<String, Value> = per_server
        .into_values()
        .map(|(server, drifts, counts)| {
            let mut s = drift_stats(drifts);
            s["interval_ms"] = json!(interval_of(server) as u64);
            s["tasks"] = json!(counts.len());
            s["polls"] = json!(counts.iter().sum::<usize>());
            s["fewest_polls_of_a_task"] = json!(counts.iter().min());
            (server.to_string(), s)
        })
        .collect();
    let total: usize = by_task.values().map(Vec::len).sum();
    let mut overall = drift_stats(all);
    overall["polls"] = json!(total);
    overall["polls_per_s"] = json!(total as f64 / window_s);
    overall["tasks_polled"] = json!(by_task.values().filter(|t| !t.is_empty()).count());
    overall["tasks"] = json!(by_task.len());
    json!({"all": overall, "servers": servers})
}

fn median_kib(mut xs: Vec<u64>) -> f64 {
    xs.sort();
    xs.get(xs.len() / 2).copied().unwrap_or(0) as f64
}

// ---------------------------------------------------------------------------------- the runs

/// The same sidecar and servers with no task: CPU and RSS over the window.
async fn no_tasks(length: Duration, settle: Duration) -> Value {
    let dirs = Dirs::new();
    let sidecar = start(&dirs).await;
    tokio::time::sleep(settle).await;
    let w = window(sidecar.pid, length).await;
    let stopped = stop(sidecar).await;
    let polled = events(&dirs.log)
        .iter()
        .filter(|e| e.kind == "poll")
        .count();
    assert_eq!(polled, 0, "the run with no task saw polls");
    json!({
        "window_s": length.as_secs_f64(),
        "cpu_pct": w.cpu_pct,
        "servers_cpu_pct": w.servers_cpu_pct,
        "server_processes": w.servers_found,
        "rss_median_kib": median_kib(w.rss_kib.clone()),
        "rss_samples_kib": w.rss_kib,
        "stopped": stopped,
    })
}

/// `per_server` tasks on each server, followed for `length`, then cancelled.
async fn with_tasks(per_server: usize, length: Duration, settle: Duration) -> Value {
    let dirs = Dirs::new();
    let sidecar = start(&dirs).await;
    let editor = sidecar.editor.clone();
    tokio::time::sleep(settle).await;
    let rss_before_kib = proc_kib(sidecar.pid, "VmRSS:").unwrap();
    let total = per_server * INTERVALS_MS.len();
    let book = BookWatch::start(dirs.book_dir());

    // Every call at once, as an editor firing them would.
    let t = Instant::now();
    let mut replies = Vec::with_capacity(total);
    for i in 0..total {
        let server = server_name(INTERVALS_MS[i % INTERVALS_MS.len()]);
        let params = json!({"command": "mcp-sidecar.callTool",
            "arguments": [{"server": server, "tool": "work", "arguments": {}}]});
        replies.push(
            editor
                .start_request("workspace/executeCommand", params)
                .await
                .1,
        );
    }
    // Started: each server made its tasks, and each task had its first poll.
    let (tasks, started_ms) = loop {
        let evs = events(&dirs.log);
        let made: Vec<(String, String)> = evs
            .iter()
            .filter(|e| e.kind == "start")
            .map(|e| (e.server.clone(), e.task.clone()))
            .collect();
        let polled: HashSet<(&str, &str)> = evs
            .iter()
            .filter(|e| e.kind == "poll")
            .map(|e| (e.server.as_str(), e.task.as_str()))
            .collect();
        if made.len() == total
            && made
                .iter()
                .all(|(s, k)| polled.contains(&(s.as_str(), k.as_str())))
        {
            break (made, t.elapsed().as_secs_f64() * 1e3);
        }
        for r in &mut replies {
            if let Some(done) = r.now_or_never() {
                panic!("a callTool ended before its task was cancelled: {done:?}");
            }
        }
        assert!(
            t.elapsed() < DEADLINE,
            "{} of {total} tasks made, not all polled, after {DEADLINE:?}",
            made.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    tokio::time::sleep(settle).await;

    book.phase("window");
    let w = window(sidecar.pid, length).await;
    let evs = events(&dirs.log);
    let window_s = (w.end_ms - w.start_ms) / 1e3;
    let polls = polls(&evs, w.start_ms, w.end_ms, window_s);
    if length.as_millis() as f64 >= 1.5 * *INTERVALS_MS.iter().max().unwrap() as f64 {
        assert_eq!(
            polls["all"]["tasks_polled"], total,
            "a task was not polled in the window"
        );
    }

    book.phase("cancel");
    let t = Instant::now();
    let cancels = join_all(tasks.iter().map(|(server, task)| {
        editor.command_response(
            "mcp-sidecar.cancelTask",
            json!({"server": server, "taskId": task}),
        )
    }))
    .await;
    for c in &cancels {
        assert!(c.get("error").is_none(), "cancelTask failed: {c}");
    }
    let ended = join_all(
        replies
            .into_iter()
            .map(|r| tokio::time::timeout(DEADLINE, r)),
    )
    .await;
    let cancel_ms = t.elapsed().as_secs_f64() * 1e3;
    let cancelled = ended
        .iter()
        .filter(|r| matches!(r, Ok(Ok(m)) if m["error"]["data"]["kind"] == "cancelled"))
        .count();
    assert_eq!(
        cancelled,
        total,
        "calls that did not end cancelled: {:?}",
        ended
            .iter()
            .find(|r| !matches!(r, Ok(Ok(m)) if m["error"]["data"]["kind"] == "cancelled"))
    );
    let sent: HashSet<(String, String)> = events(&dirs.log)
        .into_iter()
        .filter(|e| e.kind == "cancel")
        .map(|e| (e.server, e.task))
        .collect();
    assert!(
        tasks.iter().all(|t| sent.contains(t)),
        "{} of {total} tasks got tasks/cancel",
        sent.len()
    );
    let listed = editor.command("mcp-sidecar.listTasks", Value::Null).await;
    let listed_cancelled = listed.as_array().map_or(0, |l| {
        l.iter().filter(|t| t["status"] == "cancelled").count()
    });
    // Every task, as long as the book keeps them all (finished ones: at most 100).
    let kept_finished = total.min(KEEP_FINISHED);
    let listed_all = listed.as_array().map_or(0, Vec::len);
    assert_eq!(
        (listed_cancelled, listed_all),
        (kept_finished, kept_finished),
        "listTasks after the cancels: {listed_all} tasks, {listed_cancelled} cancelled"
    );
    tokio::time::sleep(settle).await;
    let rss_after_cancel_kib = proc_kib(sidecar.pid, "VmRSS:").unwrap();

    book.phase("shutdown");
    let stopped = stop(sidecar).await;
    let (book_seen, book_max) = book.finish();
    let files: Vec<PathBuf> = std::fs::read_dir(dirs.book_dir())
        .unwrap()
        .flatten()
        .map(|f| f.path())
        .collect();
    assert_eq!(files.len(), 1, "one task book: {files:?}");
    let kept: Value = serde_json::from_slice(&std::fs::read(&files[0]).unwrap()).unwrap();
    let kept_cancelled = kept.as_array().map_or(0, |a| {
        a.iter()
            .filter(|t| t["info"]["status"] == "cancelled")
            .count()
    });
    assert_eq!(kept_cancelled, kept_finished, "the book after the cancels");

    json!({
        "tasks": total,
        "servers": INTERVALS_MS.len(),
        "intervals_ms": INTERVALS_MS,
        "window_s": window_s,
        "started_ms": started_ms,
        "polls": polls,
        "cpu_pct": w.cpu_pct,
        "cpu_us_per_poll": w.sidecar_cpu_ms * 1e3 / polls["all"]["polls"].as_f64().unwrap_or(f64::NAN),
        "servers_cpu_pct": w.servers_cpu_pct,
        "server_processes": w.servers_found,
        "rss_before_tasks_kib": rss_before_kib,
        "rss_after_cancel_kib": rss_after_cancel_kib,
        "rss_median_kib": median_kib(w.rss_kib.clone()),
        "rss_samples_kib": w.rss_kib,
        "book": {"max_bytes": book_max, "phases": book_seen, "final_bytes": std::fs::metadata(&files[0]).unwrap().len()},
        "cancel": {"all_ended_ms": cancel_ms, "calls_cancelled": cancelled, "tasks_cancel_sent": sent.len(), "listed_cancelled": listed_cancelled},
        "stopped": stopped,
    })
}

/// The series: the run with no task, then the run with the tasks; prints a table.
pub async fn tasks_in_flight() -> Value {
    let total = env_or("BENCH_TASKS", reps(100, 10));
    let per_server = total.div_ceil(INTERVALS_MS.len()).max(1);
    let length = Duration::from_secs(env_or("BENCH_TASK_WINDOW_S", reps(20, 3)) as u64);
    let settle = Duration::from_millis(reps(1000, 200) as u64);
    let none = no_tasks(
        if crate::smoke() {
            Duration::from_secs(1)
        } else {
            length
        },
        settle,
    )
    .await;
    let with = with_tasks(per_server, length, settle).await;
    let rss_growth_kib =
        with["rss_median_kib"].as_f64().unwrap() - none["rss_median_kib"].as_f64().unwrap();
    let report = json!({"no_tasks": none, "tasks": with, "rss_growth_vs_no_tasks_kib": rss_growth_kib,
        "budget": {"drift_median_ms": DRIFT_BUDGET_MS, "early_tolerance_ms": TOLERANCE_MS,
                   "cpu_pct": CPU_BUDGET_PCT, "rss_growth_kib": RSS_BUDGET_KIB, "book_bytes": BOOK_BUDGET_BYTES}});
    print_table(&report);
    report
}

/// A budget's verdict; none in a smoke run, whose figures mean nothing.
fn verdict(met: bool) -> &'static str {
    match (crate::smoke(), met) {
        (true, _) => "(smoke)",
        (false, true) => "met",
        (false, false) => "NOT MET",
    }
}

fn print_table(r: &Value) {
    let t = &r["tasks"];
    let n = &r["no_tasks"];
    let f = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let all = &t["polls"]["all"];
    let book = &t["book"];
    println!(
        "tasks in flight: {} tasks over {} servers (pollIntervalMs {:?}), {:.1} s window; the same servers with no task over {:.1} s",
        t["tasks"],
        t["servers"],
        INTERVALS_MS,
        f(&t["window_s"]),
        f(&n["window_s"])
    );
    println!("| figure | budget | measured | |");
    println!("|---|---|---|---|");
    println!(
        "| polls early (gap < interval − {TOLERANCE_MS} ms) | none | {} of {} gaps (smallest gap − interval {:+.1} ms) | {} |",
        all["early"],
        all["gaps"],
        f(&all["min_ms"]),
        verdict(all["early"] == 0)
    );
    println!(
        "| drift (gap − interval), median | < {DRIFT_BUDGET_MS} ms | {:.1} ms (p90 {:.1}, p99 {:.1}, max {:.1}) | {} |",
        f(&all["median_ms"]),
        f(&all["p90_ms"]),
        f(&all["p99_ms"]),
        f(&all["max_ms"]),
        verdict(f(&all["median_ms"]) < DRIFT_BUDGET_MS)
    );
    for (server, s) in t["polls"]["servers"].as_object().into_iter().flatten() {
        println!(
            "| {server}: {} tasks at {} ms | | {} polls, drift median {:.1} ms, p99 {:.1}, max {:.1}; {} early | |",
            s["tasks"],
            s["interval_ms"],
            s["polls"],
            f(&s["median_ms"]),
            f(&s["p99_ms"]),
            f(&s["max_ms"]),
            s["early"]
        );
    }
    println!(
        "| sidecar CPU over the window, % of one core | < {CPU_BUDGET_PCT} % | {:.2} % ({:.0} polls/s, {:.0} µs a poll; no task: {:.2} %; the {} servers: {:.2} %) | {} |",
        f(&t["cpu_pct"]),
        f(&all["polls_per_s"]),
        f(&t["cpu_us_per_poll"]),
        f(&n["cpu_pct"]),
        t["server_processes"],
        f(&t["servers_cpu_pct"]),
        verdict(f(&t["cpu_pct"]) < CPU_BUDGET_PCT)
    );
    println!(
        "| sidecar VmRSS, median over the window, vs no task | < +{:.0} MiB | {:+.2} MiB ({:.2} vs {:.2} MiB; before the calls {:.2}, after the cancels {:.2} MiB) | {} |",
        RSS_BUDGET_KIB / 1024.0,
        f(&r["rss_growth_vs_no_tasks_kib"]) / 1024.0,
        f(&t["rss_median_kib"]) / 1024.0,
        f(&n["rss_median_kib"]) / 1024.0,
        f(&t["rss_before_tasks_kib"]) / 1024.0,
        f(&t["rss_after_cancel_kib"]) / 1024.0,
        verdict(f(&r["rss_growth_vs_no_tasks_kib"]) < RSS_BUDGET_KIB)
    );
    let ph = |p: &str, k: &str| book["phases"][p][k].clone();
    println!(
        "| task book size, largest read | < {} KiB | {:.1} KiB (after the cancels {:.1} KiB) | {} |",
        BOOK_BUDGET_BYTES / 1024,
        f(&book["max_bytes"]) / 1024.0,
        f(&book["final_bytes"]) / 1024.0,
        verdict(book["max_bytes"].as_u64().unwrap_or(u64::MAX) < BOOK_BUDGET_BYTES)
    );
    let reads: u64 = PHASES
        .iter()
        .map(|p| ph(p, "reads").as_u64().unwrap_or(0))
        .sum();
    println!(
        "| task book read while written: whole JSON every time | always | {reads} of {reads} reads parsed; versions seen: {} while starting, {} in the window, {} while cancelling; mode {} | {} |",
        ph("start", "versions_seen"),
        ph("window", "versions_seen"),
        ph("cancel", "versions_seen"),
        ph("start", "modes"),
        // A read that did not parse failed the run before this table.
        verdict(true)
    );
    println!(
        "| cancel all, shutdown | | {} calls ended cancelled, {} tasks/cancel, in {:.0} ms; exit {} | |",
        t["cancel"]["calls_cancelled"],
        t["cancel"]["tasks_cancel_sent"],
        f(&t["cancel"]["all_ended_ms"]),
        t["stopped"]["exit"]
    );
}
