//! Child processes for stdio servers: their own process group (so a server's own children die
//! with it), a parent-death signal (so nothing outlives a killed sidecar), stderr captured into
//! the log and kept for error messages, never inherited (it would corrupt nothing, but it would
//! be lost).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use tokio::io::AsyncBufReadExt;

use rmcp::model::{JsonRpcMessage, ServerNotification};
use rmcp::service::{RoleClient, RxJsonRpcMessage};

use crate::mcp::flood;
use crate::mcp::host::progress_key;
use crate::mcp::host::{Host, ProgressUpdate};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How many stderr lines are kept for error messages.
const STDERR_TAIL: usize = 20;
/// The longest stderr line kept or logged, in bytes; the rest of a longer line is skipped.
pub const STDERR_LINE_MAX: usize = 4096;
const TRUNCATED: &str = "…(truncated)";

/// Logs a server's stderr (at most [`flood::PER_SECOND`] lines a second, then one line saying how
/// many were dropped) and keeps its last lines for error messages.
async fn capture_stderr(
    server: String,
    stderr: impl tokio::io::AsyncRead + Unpin,
    diag: Arc<Diagnostics>,
) {
    let mut lines = CappedLines::new(tokio::io::BufReader::new(stderr), STDERR_LINE_MAX);
    let mut window = flood::Window::default();
    let mut pending_drop = false;
    let report = |dropped: u64| {
        tracing::warn!(target: "mcp_sidecar::server_stderr", server = %server,
            "{dropped} stderr lines dropped (more than {} a second)", flood::PER_SECOND);
    };
    loop {
        let line = tokio::select! {
            line = lines.next_line() => line,
            _ = tokio::time::sleep_until(window.end().into()), if pending_drop => {
                pending_drop = false;
                if let Some(dropped) = window.flush(std::time::Instant::now()) {
                    report(dropped);
                }
                continue;
            }
        };
        let Ok(Some(line)) = line else { break };
        let admit = window.admit(std::time::Instant::now());
        if let Some(dropped) = admit.summary {
            report(dropped);
        }
        pending_drop |= admit.first_drop;
        if admit.pass {
            tracing::info!(target: "mcp_sidecar::server_stderr", server = %server, "{line}");
        }
        diag.push_stderr(line);
    }
    if let Some(dropped) = window.flush(std::time::Instant::now() + flood::WINDOW) {
        report(dropped);
    }
    diag.stderr_ended();
}

/// Lines of at most `max` bytes (trailing whitespace trimmed, lossy UTF-8); a longer line keeps
/// its first `max` bytes (cut on a character boundary) and a note, and the rest is read and
/// thrown away, so one endless line cannot grow memory. `next_line` is cancel-safe.
struct CappedLines<R> {
    reader: R,
    max: usize,
    buf: Vec<u8>,
    truncated: bool,
}

impl<R: tokio::io::AsyncBufRead + Unpin> CappedLines<R> {
    fn new(reader: R, max: usize) -> Self {
        Self {
            reader,
            max,
            buf: Vec::new(),
            truncated: false,
        }
    }

    async fn next_line(&mut self) -> std::io::Result<Option<String>> {
        loop {
            let chunk = self.reader.fill_buf().await?;
            if chunk.is_empty() {
                if self.buf.is_empty() && !self.truncated {
                    return Ok(None);
                }
                return Ok(Some(self.take()));
            }
            let newline = chunk.iter().position(|&b| b == b'\n');
            let part = &chunk[..newline.unwrap_or(chunk.len())];
            let room = self.max.saturating_sub(self.buf.len());
            if part.len() > room {
                self.truncated = true;
            }
            self.buf.extend_from_slice(&part[..part.len().min(room)]);
            let used = part.len() + usize::from(newline.is_some());
            self.reader.consume(used);
            if newline.is_some() {
                return Ok(Some(self.take()));
            }
        }
    }

    fn take(&mut self) -> String {
        let mut bytes = std::mem::take(&mut self.buf);
        if self.truncated
            && let Err(e) = std::str::from_utf8(&bytes)
            && e.error_len().is_none()
        {
            // The cut split a character: drop its first bytes.
            bytes.truncate(e.valid_up_to());
        }
        let mut line = String::from_utf8_lossy(&bytes).trim_end().to_string();
        if std::mem::take(&mut self.truncated) {
            line.push_str(TRUNCATED);
        }
        line
    }
}

/// What the sidecar learned about a server's health, for the message people see; also where
/// its transport hands progress notifications.
#[derive(Debug, Default)]
pub struct Diagnostics {
    stderr: Mutex<VecDeque<String>>,
    /// Set when the server's stderr reached its end (every line it wrote is in `stderr`).
    stderr_end: std::sync::atomic::AtomicBool,
    stderr_ended: tokio::sync::Notify,
    fatal: Mutex<Option<String>>,
    progress: ProgressRoute,
}

/// The host that receives progress as the transport reads it.
#[derive(Default)]
struct ProgressRoute(std::sync::OnceLock<Arc<Host>>);

impl std::fmt::Debug for ProgressRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() {
            "ProgressRoute(set)"
        } else {
            "ProgressRoute(unset)"
        })
    }
}

impl Diagnostics {
    /// From now on the transport hands `notifications/progress` straight to `host`.
    pub fn route_progress(&self, host: Arc<Host>) {
        let _ = self.progress.0.set(host);
    }

    /// Delivers `message` at once if it is a progress notification and progress is routed: true
    /// when it was (the transport then drops it). Done as the message is read, so a call's last
    /// progress always arrives before its result; rmcp would hand each notification to a task
    /// of its own, which a flood of them leaves queued behind the result.
    pub fn deliver_progress(&self, message: &RxJsonRpcMessage<RoleClient>) -> bool {
        let (Some(host), JsonRpcMessage::Notification(n)) = (self.progress.0.get(), message) else {
            return false;
        };
        let ServerNotification::ProgressNotification(p) = &n.notification else {
            return false;
        };
        host.progress(
            &progress_key(&p.params.progress_token),
            ProgressUpdate {
                progress: p.params.progress,
                total: p.params.total,
                message: p.params.message.clone(),
            },
        );
        true
    }

    pub fn push_stderr(&self, line: String) {
        let mut tail = self.stderr.lock();
        if tail.len() == STDERR_TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    }

    /// The server's stderr reached its end.
    pub fn stderr_ended(&self) {
        self.stderr_end
            .store(true, std::sync::atomic::Ordering::SeqCst);
        self.stderr_ended.notify_waiters();
    }

    /// Waits (at most `bound`) until every line of the server's stderr is read: an exited
    /// server's last words may still be in the pipe when its exit is seen.
    pub async fn stderr_read(&self, bound: std::time::Duration) {
        let ended = self.stderr_ended.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        if self.stderr_end.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        let _ = tokio::time::timeout(bound, ended).await;
    }

    /// The last `n` stderr lines, oldest first.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        let tail = self.stderr.lock();
        tail.iter()
            .skip(tail.len().saturating_sub(n))
            .cloned()
            .collect()
    }

    /// Records why the connection is being closed by the sidecar (first reason wins).
    pub fn set_fatal(&self, reason: String) {
        let mut fatal = self.fatal.lock();
        fatal.get_or_insert(reason);
    }

    pub fn fatal(&self) -> Option<String> {
        self.fatal.lock().clone()
    }
}

/// A spawned server process. Dropping it kills the whole process group.
pub struct ServerProcess {
    child: Child,
    pgid: Option<i32>,
}

pub struct Spawned {
    pub process: ServerProcess,
    pub stdin: ChildStdin,
    pub stdout: ChildStdout,
}

/// Starts `command` with piped stdio; stderr goes to the log and to `diag`.
pub fn spawn(
    server: &str,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&PathBuf>,
    diag: Arc<Diagnostics>,
) -> Result<Spawned, String> {
    let mut cmd = Command::new(command);
    cmd.args(args)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    #[cfg(unix)]
    {
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe; the closure allocates nothing.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            format!("cannot start \"{command}\": command not found (is it installed and on PATH?)")
        }
        std::io::ErrorKind::PermissionDenied => {
            format!("cannot start \"{command}\": permission denied")
        }
        _ => format!("cannot start \"{command}\": {e}"),
    })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err("the child process has no stdio pipes".into());
    };
    tokio::spawn(capture_stderr(server.to_string(), stderr, diag));
    {
        use std::os::fd::AsRawFd;
        widen_pipe(stdout.as_raw_fd());
    }
    Ok(Spawned {
        process: ServerProcess { child, pgid },
        stdin,
        stdout,
    })
}

/// Pipes hold 64 KiB, so a big answer crossed the server's stdout in 64 KiB turns (the server
/// blocked, the sidecar woke, read, slept: 160 times for 10 MiB). 1 MiB is what Linux lets any
/// process ask for (`/proc/sys/fs/pipe-max-size`); the kernel gives the pages only as they fill.
/// A refusal (an older kernel, a lower limit, not a pipe) leaves the descriptor as it was.
pub fn widen_pipe(fd: std::os::fd::RawFd) {
    #[cfg(target_os = "linux")]
    // SAFETY: F_SETPIPE_SZ only resizes the pipe's buffer; it touches no memory of ours.
    unsafe {
        libc::fcntl(fd, libc::F_SETPIPE_SZ, 1 << 20);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = fd;
}

impl ServerProcess {
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// The exit status if it has exited.
    pub fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stops the process: the caller has closed stdin already; wait `grace`, then SIGTERM the
    /// group, wait again, then SIGKILL it.
    pub async fn stop(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Ok(Ok(status)) = tokio::time::timeout(grace, self.child.wait()).await {
            self.signal_group(libc::SIGKILL);
            return Some(status);
        }
        self.signal_group(libc::SIGTERM);
        if let Ok(Ok(status)) = tokio::time::timeout(grace, self.child.wait()).await {
            self.signal_group(libc::SIGKILL);
            return Some(status);
        }
        self.signal_group(libc::SIGKILL);
        self.child.wait().await.ok()
    }

    fn signal_group(&self, signal: i32) {
        if let Some(pgid) = self.pgid {
            // SAFETY: kill(2) with a negative pid signals the process group we created.
            unsafe {
                libc::kill(-pgid, signal);
            }
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.signal_group(libc::SIGKILL);
    }
}

/// Describes an exit status for people: "exited with code 3" / "was killed by signal 9".
pub fn describe_exit(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        Some(s) if s.code().is_some() => format!("exited with code {}", s.code().unwrap_or(-1)),
        Some(s) if s.signal().is_some() => {
            format!("was killed by signal {}", s.signal().unwrap_or(0))
        }
        _ => "stopped".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines_of(input: &[u8], max: usize) -> Vec<String> {
        let mut lines = CappedLines::new(input, max);
        let mut out = Vec::new();
        while let Some(line) = lines.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn stderr_lines_are_capped_on_a_character_boundary() {
        assert_eq!(
            lines_of(b"one\ntwo\r\n\nlast", 8).await,
            ["one", "two", "", "last"]
        );
        assert_eq!(
            lines_of(b"0123456789abc\nok\n", 8).await,
            ["01234567…(truncated)", "ok"]
        );
        // "é" is two bytes: a cut after its first byte drops it whole.
        assert_eq!(
            lines_of("abcdefgé!\n".as_bytes(), 8).await,
            ["abcdefg…(truncated)"]
        );
    }

    #[tokio::test]
    async fn one_endless_line_is_read_in_bounded_memory() {
        // 64 MiB without a newline through a small buffer: the line stays at the cap.
        let (mut writer, reader) = tokio::io::duplex(64 * 1024);
        let feeder = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let block = vec![b'x'; 1 << 20];
            for _ in 0..64 {
                writer.write_all(&block).await.unwrap();
            }
        });
        let mut lines = CappedLines::new(tokio::io::BufReader::new(reader), STDERR_LINE_MAX);
        let line = lines.next_line().await.unwrap().unwrap();
        feeder.await.unwrap();
        assert_eq!(line.len(), STDERR_LINE_MAX + TRUNCATED.len());
        assert!(lines.buf.capacity() <= 2 * STDERR_LINE_MAX);
        assert_eq!(lines.next_line().await.unwrap(), None);
    }
}
