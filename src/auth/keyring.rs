//! The operating system's secret store, where the credentials file ([`super::tokens`]) keeps a
//! grant when it can: the freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC), through
//! its command-line client `secret-tool` (libsecret-tools), so the sidecar links no D-Bus stack.
//!
//! Each item is found by the attributes `service=mcp-sidecar` and `key=<grant key>`; the secret
//! goes to `secret-tool` on its stdin, never in its arguments or the environment. Every call ends
//! within [`TIMEOUT`] (a locked keyring may open an unlock prompt and wait for the person): then
//! the process is killed and the call is an error. Errors are `secret-tool`'s own sentence (it
//! never repeats the secret) or ours; nothing here logs a secret or puts one in an error.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The program.
pub const PROGRAM: &str = "secret-tool";
/// The `service` attribute of every item the sidecar keeps.
pub const SERVICE: &str = "mcp-sidecar";
/// How long one call may take before it is killed and counted as failed.
pub const TIMEOUT: Duration = Duration::from_secs(5);
/// Longest error sentence taken from `secret-tool`'s stderr.
const MAX_ERROR: usize = 200;

/// The Secret Service, reached through one `secret-tool` program.
#[derive(Clone, Debug)]
pub struct SecretService {
    program: PathBuf,
    timeout: Duration,
}

impl SecretService {
    /// The service through `secret-tool` on `PATH`; `None` when there is no such program or no
    /// D-Bus session to reach a service on (then nothing is run: without a session bus
    /// `secret-tool` would try to start one for the sidecar).
    pub fn find() -> Option<SecretService> {
        if !session_bus() {
            return None;
        }
        let program = on_path(PROGRAM)?;
        Some(SecretService::with_program(program))
    }

    /// The service through `program` (a test's stand-in, or a known path).
    pub fn with_program(program: PathBuf) -> SecretService {
        SecretService {
            program,
            timeout: TIMEOUT,
        }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> SecretService {
        self.timeout = timeout;
        self
    }

    /// Stores `secret` under `key` (replacing the item there), with `label` as the name the
    /// person sees in their keyring manager.
    pub fn store(&self, key: &str, label: &str, secret: &str) -> Result<(), String> {
        let label = format!("--label={label}");
        let out = self.run(
            &["store", &label, "service", SERVICE, "key", key],
            secret.as_bytes(),
        )?;
        match out.status {
            Some(0) => Ok(()),
            _ => Err(out.failure("store")),
        }
    }

    /// The secret under `key`; `None` when there is no such item.
    pub fn lookup(&self, key: &str) -> Result<Option<String>, String> {
        let out = self.run(&["lookup", "service", SERVICE, "key", key], b"")?;
        match out.status {
            Some(0) => String::from_utf8(out.stdout)
                .map(Some)
                .map_err(|_| "the secret service returned an item that is not text".to_owned()),
            // secret-tool says nothing and exits 1 when no item matches.
            Some(1) if out.stderr.trim_ascii().is_empty() => Ok(None),
            _ => Err(out.failure("lookup")),
        }
    }

    /// Removes the item under `key`; no item there is not an error.
    pub fn clear(&self, key: &str) -> Result<(), String> {
        let out = self.run(&["clear", "service", SERVICE, "key", key], b"")?;
        match out.status {
            Some(0) => Ok(()),
            Some(1) if out.stderr.trim_ascii().is_empty() => Ok(()),
            _ => Err(out.failure("clear")),
        }
    }

    /// Whether a store, a lookup and a clear of a throwaway item work: the service is running,
    /// unlocked, and answers in time.
    pub fn probe(&self) -> Result<(), String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let key = format!("probe-{}-{nanos:x}", std::process::id());
        let value = format!("probe {nanos}");
        self.store(&key, "mcp-sidecar: checking the secret service", &value)?;
        let found = self.lookup(&key);
        let cleared = self.clear(&key);
        match found? {
            Some(v) if v == value => cleared,
            Some(_) => Err("the secret service returned another value than was stored".into()),
            None => Err("the secret service lost an item as soon as it was stored".into()),
        }
    }

    /// Runs `secret-tool args…` with `input` on its stdin, killing it after the timeout.
    fn run(&self, args: &[&str], input: &[u8]) -> Result<Output, String> {
        let mut child = Command::new(&self.program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("could not run {}: {e}", self.program.display()))?;
        let (stdin, stdout, stderr) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take());
        let input = input.to_vec();
        let (done, finished) = mpsc::channel();
        // The pipes are served on a thread, so a program that stops reading or writing cannot
        // hold the caller past the timeout; the caller keeps the child, to kill and reap it.
        std::thread::spawn(move || {
            let err = std::thread::spawn(move || read_all(stderr));
            if let Some(mut stdin) = stdin {
                // A program that exits without reading its input closes the pipe: not our error.
                let _ = stdin.write_all(&input);
            }
            let out = read_all(stdout);
            let err = err.join().unwrap_or_default();
            let _ = done.send((out, err));
        });
        match finished.recv_timeout(self.timeout) {
            Ok((stdout, stderr)) => {
                let status = child
                    .wait()
                    .map_err(|e| format!("{PROGRAM} could not be waited for: {e}"))?;
                Ok(Output {
                    status: status.code(),
                    stdout,
                    stderr,
                })
            }
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(format!(
                    "the secret service did not answer within {} s (a locked keyring waiting \
                     for its password?)",
                    self.timeout.as_secs_f32()
                ))
            }
        }
    }
}

struct Output {
    /// `None` when killed by a signal.
    status: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Output {
    /// What went wrong, in `secret-tool`'s words (its first line, cut).
    fn failure(&self, what: &str) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let line: String = line.trim().chars().take(MAX_ERROR).collect();
        let status = match self.status {
            Some(code) => format!("exit status {code}"),
            None => "killed".to_owned(),
        };
        if line.is_empty() {
            format!("the secret service's {what} failed ({status})")
        } else {
            format!("the secret service's {what} failed: {line}")
        }
    }
}

fn read_all(pipe: Option<impl Read>) -> Vec<u8> {
    let mut bytes = Vec::new();
    if let Some(mut pipe) = pipe {
        let _ = pipe.read_to_end(&mut bytes);
    }
    bytes
}

/// Whether a D-Bus session bus is there to reach: `DBUS_SESSION_BUS_ADDRESS`, or the per-user
/// bus socket systemd puts at `$XDG_RUNTIME_DIR/bus`.
fn session_bus() -> bool {
    if std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|a| !a.is_empty()) {
        return true;
    }
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(|dir| Path::new(&dir).join("bus"))
        .is_some_and(|bus| bus.exists())
}

/// `name` found in an absolute directory of `PATH`, as an executable file.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|file| {
            std::fs::metadata(file)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// An `io::Error` carrying a sentence from here.
pub fn error(sentence: String) -> io::Error {
    io::Error::other(sentence)
}

/// A stand-in `secret-tool` for unit tests: a shell script keeping each item in a file of its
/// own directory, and recording every call in `calls`; `broken` makes every call fail.
#[cfg(test)]
pub(crate) fn fake_service(dir: &Path, broken: bool) -> SecretService {
    use std::os::unix::fs::PermissionsExt;
    let items = dir.join("items");
    std::fs::create_dir_all(&items).unwrap();
    let program = dir.join("secret-tool");
    let failure = if broken {
        "echo 'secret-tool: Cannot create an item in a locked collection' >&2; exit 1"
    } else {
        ""
    };
    std::fs::write(
        &program,
        format!(
            r#"#!/bin/sh
echo "$1" >> '{dir}/calls'
{failure}
case "$1" in
  store) cat > '{items}'/"$6" ;;
  lookup) [ -f '{items}'/"$5" ] || exit 1; cat '{items}'/"$5" ;;
  clear) [ -f '{items}'/"$5" ] || exit 1; rm '{items}'/"$5" ;;
esac
"#,
            dir = dir.display(),
            items = items.display(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o700)).unwrap();
    SecretService::with_program(program)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    /// A stand-in `secret-tool`: a shell script that records its arguments and stdin, and
    /// answers as `body` says.
    fn fake(dir: &Path, body: &str) -> SecretService {
        let program = dir.join("secret-tool");
        std::fs::write(
            &program,
            format!(
                "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{0}/args'\ncat > '{0}/stdin'\n{body}\n",
                dir.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o700)).unwrap();
        SecretService::with_program(program)
    }

    #[test]
    fn the_secret_goes_on_stdin_never_in_the_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let service = fake(dir.path(), "exit 0");
        service.store("k1", "a label", "the-secret").unwrap();
        let args = std::fs::read_to_string(dir.path().join("args")).unwrap();
        assert_eq!(
            args,
            "store\n--label=a label\nservice\nmcp-sidecar\nkey\nk1\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("stdin")).unwrap(),
            "the-secret"
        );
    }

    #[test]
    fn lookup_tells_a_missing_item_from_a_failure() {
        let dir = tempfile::tempdir().unwrap();
        let found = fake(dir.path(), "printf 'abc'");
        assert_eq!(found.lookup("k").unwrap(), Some("abc".into()));
        let missing = fake(dir.path(), "exit 1");
        assert_eq!(missing.lookup("k").unwrap(), None);
        assert!(missing.clear("k").is_ok(), "clearing nothing is fine");
        let locked = fake(
            dir.path(),
            "echo 'secret-tool: Cannot create an item in a locked collection' >&2; exit 1",
        );
        let err = locked.lookup("k").unwrap_err();
        assert!(err.contains("locked collection"), "{err}");
        assert!(
            locked
                .store("k", "l", "the-secret")
                .unwrap_err()
                .contains("store")
        );
    }

    #[test]
    fn a_hanging_secret_tool_is_killed_at_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        // Never exits (and holds its output open): the call ends at the timeout all the same.
        let service = fake(dir.path(), "exec sleep 600").with_timeout(Duration::from_millis(200));
        let start = std::time::Instant::now();
        let err = service.store("k", "l", "the-secret").unwrap_err();
        assert!(err.contains("did not answer"), "{err}");
        assert!(!err.contains("the-secret"), "{err}");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn the_probe_fails_when_the_value_does_not_come_back() {
        let dir = tempfile::tempdir().unwrap();
        let liar = fake(
            dir.path(),
            "[ \"$1\" = lookup ] && printf 'something else'; exit 0",
        );
        assert!(liar.probe().unwrap_err().contains("another value"));
        let missing = fake(dir.path(), "[ \"$1\" = lookup ] && exit 1; exit 0");
        assert!(missing.probe().unwrap_err().contains("lost"));
        // Echoes back what it was given: the round trip works.
        let store = dir.path().join("kept");
        let echo = fake(
            dir.path(),
            &format!(
                "case \"$1\" in store) cp '{0}/stdin' '{1}';; lookup) cat '{1}';; esac",
                dir.path().display(),
                store.display()
            ),
        );
        echo.probe().unwrap();
    }

    #[test]
    fn a_missing_program_is_an_error_naming_it() {
        let err = SecretService::with_program("/nonexistent/secret-tool".into())
            .lookup("k")
            .unwrap_err();
        assert!(err.contains("/nonexistent/secret-tool"), "{err}");
    }
}
