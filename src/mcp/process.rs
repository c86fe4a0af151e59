//! Child processes for stdio servers: their own process group (so a server's own children die
//! with it), a parent-death signal (so nothing outlives a killed sidecar), stderr captured into
//! the log and kept for error messages, never inherited (it would corrupt nothing, but it would
//! be lost).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How many stderr lines are kept for error messages.
const STDERR_TAIL: usize = 20;

/// What the sidecar learned about a server's health, for the message people see.
#[derive(Debug, Default)]
pub struct Diagnostics {
    stderr: Mutex<VecDeque<String>>,
    fatal: Mutex<Option<String>>,
}

impl Diagnostics {
    pub fn push_stderr(&self, line: String) {
        let mut tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        if tail.len() == STDERR_TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    }

    /// The last `n` stderr lines, oldest first.
    pub fn stderr_tail(&self, n: usize) -> Vec<String> {
        let tail = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        tail.iter()
            .skip(tail.len().saturating_sub(n))
            .cloned()
            .collect()
    }

    /// Records why the connection is being closed by the sidecar (first reason wins).
    pub fn set_fatal(&self, reason: String) {
        let mut fatal = self.fatal.lock().unwrap_or_else(|e| e.into_inner());
        fatal.get_or_insert(reason);
    }

    pub fn fatal(&self) -> Option<String> {
        self.fatal.lock().unwrap_or_else(|e| e.into_inner()).clone()
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
    let server = server.to_string();
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).split(b'\n');
        while let Ok(Some(line)) = lines.next_segment().await {
            let line = String::from_utf8_lossy(&line).trim_end().to_string();
            tracing::info!(target: "mcp_sidecar::server_stderr", server = %server, "{line}");
            diag.push_stderr(line);
        }
    });
    Ok(Spawned {
        process: ServerProcess { child, pgid },
        stdin,
        stdout,
    })
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
