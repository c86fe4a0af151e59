//! How `mcp-sidecar gateway` finds the gateway of the sidecar serving its workspace: the
//! environment the editors put into their terminals (`MCP_SIDECAR_GATEWAY`,
//! `MCP_SIDECAR_GATEWAY_TOKEN`), else a discovery file per workspace folder,
//! `$XDG_RUNTIME_DIR/mcp-sidecar/gateway/<key>.json` (mode 0600, in a 0700 folder; `<key>`: 16
//! hex digits of SHA-256 over the folder's path), looked up for the current directory and each
//! folder above it.
//!
//! The folder may be under the shared temporary directory, where another user could have made
//! it first: it must be ours (`store::owned_dir`), files are created there only with `O_EXCL |
//! O_NOFOLLOW` (`store::write_atomic`), and a file is read only when it is ours and `0600`
//! (`store::read_private`). A file counts only while its process runs: ours (signal 0 allowed;
//! `EPERM` is another user's process), started when the file says (`/proc/<pid>/stat`), so a
//! pid used again is not taken for the sidecar. `mcp-sidecar gateway` connects only to a
//! loopback address ([`endpoint`]).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store;

/// The variable with the endpoint's URL.
pub const ENV_URL: &str = "MCP_SIDECAR_GATEWAY";
/// The variable with the secret.
pub const ENV_TOKEN: &str = "MCP_SIDECAR_GATEWAY_TOKEN";

/// The most a discovery file may hold.
const MAX_FILE: u64 = 64 * 1024;

/// What a discovery file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub url: String,
    pub token: String,
    /// The sidecar's process (a file whose process is gone is stale).
    #[serde(default)]
    pub pid: u32,
    /// When that process started ([`start_time`]; 0: unknown, stale on Linux).
    #[serde(default)]
    pub started: u64,
    #[serde(default)]
    pub folder: String,
}

/// `$XDG_RUNTIME_DIR/mcp-sidecar/gateway`; without that variable, the same folder under
/// `/run/user/<uid>` when that exists (the usual runtime directory: many agents start their
/// servers with only `PATH`, `HOME` and a few more, so `mcp-sidecar gateway` often runs without
/// the variable the editor's sidecar had), else a per-user folder under the temporary directory.
pub fn dir() -> PathBuf {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            let usual = PathBuf::from(format!("/run/user/{}", user_id()));
            (cfg!(unix) && usual.is_dir()).then_some(usual)
        });
    let base = runtime
        .map(|dir| dir.join("mcp-sidecar"))
        .unwrap_or_else(|| std::env::temp_dir().join(format!("mcp-sidecar-{}", user_id())));
    base.join("gateway")
}

#[cfg(unix)]
fn user_id() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

#[cfg(not(unix))]
fn user_id() -> u32 {
    0
}

/// The discovery file of a workspace folder.
pub fn file_for(folder: &Path) -> PathBuf {
    dir().join(name_for(folder))
}

fn name_for(folder: &Path) -> String {
    let digest = Sha256::digest(folder.to_string_lossy().as_bytes());
    let key: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("{key}.json")
}

/// Writes the discovery files of `folders` (0600, replaced atomically); returns those written.
pub fn write(folders: &[PathBuf], target: &Target) -> Vec<PathBuf> {
    write_in(&dir(), folders, target)
}

fn write_in(dir: &Path, folders: &[PathBuf], target: &Target) -> Vec<PathBuf> {
    if let Err(e) = private_dir(dir) {
        tracing::warn!(
            "gateway: no discovery files, so agents find the gateway only through {ENV_URL} and \
             {ENV_TOKEN}: {e}"
        );
        return Vec::new();
    }
    let mut written = Vec::new();
    for folder in folders {
        let path = dir.join(name_for(folder));
        let target = Target {
            folder: folder.display().to_string(),
            ..target.clone()
        };
        let text = serde_json::to_string_pretty(&target).unwrap_or_default();
        match store::write_atomic(&path, text.as_bytes()) {
            Ok(()) => written.push(path),
            Err(e) => tracing::warn!("gateway: cannot write {}: {e}", path.display()),
        }
    }
    written
}

/// Makes the discovery folder and the folder it is in (`mcp-sidecar`, or `mcp-sidecar-<uid>`
/// in the temporary directory), each ours and 0700, or says why not.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(base) = dir.parent() {
        store::owned_dir(base)?;
    }
    store::owned_dir(dir)
}

/// Removes the files written for this process (another sidecar may have replaced one since).
pub fn remove(files: &[PathBuf]) {
    for path in files {
        let ours = matches!(read(path), Ok(Some(t)) if t.pid == std::process::id());
        if ours {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The file's target; `None` when there is no file; `Err` says why it is not read.
fn read(path: &Path) -> Result<Option<Target>, String> {
    match store::read_private(path, MAX_FILE) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| format!("{} is not a discovery file: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

/// When process `pid` started, in clock ticks after boot (`/proc/<pid>/stat`, field 22); `None`
/// where there is no such file.
pub fn start_time(pid: u32) -> Option<u64> {
    start_of(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn start_of(stat: &str) -> Option<u64> {
    // The command name (field 2) is in parentheses and may hold spaces and parentheses; field 3
    // follows the last `)`.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(22 - 3)?.parse().ok()
}

/// Whether `pid` is still the sidecar that wrote the file: a process this user may signal (not
/// another user's: `EPERM`), which on Linux started at `started`.
fn alive(pid: u32, started: u64) -> bool {
    #[cfg(unix)]
    {
        let Ok(id) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists and may be signalled by us.
        if id <= 0 || unsafe { libc::kill(id, 0) } != 0 {
            return false;
        }
    }
    if cfg!(target_os = "linux") {
        started != 0 && start_time(pid) == Some(started)
    } else {
        pid != 0
    }
}

/// The gateway URL's address, which must be this machine's loopback interface (`127.0.0.0/8`,
/// `::1` or `localhost`, which is taken as `127.0.0.1` without asking a resolver).
pub fn endpoint(url: &str) -> Result<(url::Url, SocketAddr), String> {
    let parsed =
        url::Url::parse(url).map_err(|e| format!("the gateway URL {url:?} is not a URL: {e}"))?;
    if parsed.scheme() != "http" {
        return Err(format!("the gateway URL {url} is not http://"));
    }
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(ip)) if ip.is_loopback() => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) if ip.is_loopback() => IpAddr::V6(ip),
        Some(url::Host::Domain(name)) if name.eq_ignore_ascii_case("localhost") => {
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        }
        _ => {
            return Err(format!(
                "the gateway URL {url} does not name this machine's loopback address; the \
                 gateway listens on 127.0.0.1 only"
            ));
        }
    };
    let port = parsed.port_or_known_default().unwrap_or(80);
    Ok((parsed, SocketAddr::new(ip, port)))
}

/// The gateway for `cwd`: the environment first, then the discovery files of `cwd` and each
/// folder above it. `Err` says what was looked at.
pub fn find(env: impl Fn(&str) -> Option<String>, cwd: &Path) -> Result<Target, String> {
    find_in(&dir(), env, cwd)
}

fn find_in(dir: &Path, env: impl Fn(&str) -> Option<String>, cwd: &Path) -> Result<Target, String> {
    if let Some(url) = env(ENV_URL).filter(|u| !u.is_empty()) {
        let token = env(ENV_TOKEN)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| format!("{ENV_URL} is set but {ENV_TOKEN} is not"))?;
        return Ok(Target {
            url,
            token,
            pid: 0,
            started: 0,
            folder: String::new(),
        });
    }
    // The first file passed over, and why.
    let mut skipped = None;
    let theirs = [dir.parent(), Some(dir)]
        .into_iter()
        .flatten()
        .find_map(|d| store::check_owned_dir(d).err())
        .filter(|e| e.kind() != std::io::ErrorKind::NotFound);
    match theirs {
        Some(e) => skipped = Some(e.to_string()),
        None => {
            for folder in cwd.ancestors() {
                let path = dir.join(name_for(folder));
                let why = match read(&path) {
                    Ok(None) => continue,
                    Ok(Some(target)) => match endpoint(&target.url) {
                        Ok(_) if alive(target.pid, target.started) => return Ok(target),
                        Ok(_) => {
                            format!("{} is left from a sidecar that has exited", path.display())
                        }
                        Err(e) => format!("{}: {e}", path.display()),
                    },
                    Err(e) => e,
                };
                skipped.get_or_insert(why);
            }
        }
    }
    let mut message = format!(
        "no mcp-sidecar is serving {} or a folder above it: open the folder in an editor with \
         mcp-sidecar (gateway.enabled on), or set {ENV_URL} and {ENV_TOKEN} (the env of \
         mcp-sidecar.gatewayInfo); looked in {}",
        cwd.display(),
        dir.display()
    );
    if let Some(why) = skipped {
        message.push_str(&format!(" ({why})"));
    }
    Err(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_comes_first_and_needs_both_variables() {
        let env = |name: &str| match name {
            ENV_URL => Some("http://127.0.0.1:1/mcp".to_string()),
            ENV_TOKEN => Some("t".to_string()),
            _ => None,
        };
        let found = find(env, Path::new("/")).unwrap();
        assert_eq!(found.url, "http://127.0.0.1:1/mcp");
        assert_eq!(found.token, "t");
        let half = |name: &str| (name == ENV_URL).then(|| "http://x".to_string());
        assert!(find(half, Path::new("/")).unwrap_err().contains(ENV_TOKEN));
    }

    fn target(url: &str, pid: u32, started: u64) -> Target {
        Target {
            url: url.into(),
            token: "t0ken".into(),
            pid,
            started,
            folder: String::new(),
        }
    }

    fn me() -> Target {
        let pid = std::process::id();
        target("http://127.0.0.1:9/mcp", pid, start_time(pid).unwrap_or(1))
    }

    fn as_root() -> bool {
        // SAFETY: geteuid has no preconditions and cannot fail.
        unsafe { libc::geteuid() == 0 }
    }

    fn mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_folder_someone_else_made_first_is_refused_and_nothing_is_written_through_a_link() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let folder = PathBuf::from("/work/project");
        let folders = vec![folder.clone()];
        // Another user's folder, 0777, made before the sidecar's, with links at the file's
        // names (the temporary name included).
        let theirs = tmp.path().join("theirs");
        std::fs::create_dir_all(theirs.join("gateway")).unwrap();
        let name = name_for(&folder);
        for planted in [
            name.clone(),
            format!("{name}.tmp{}", std::process::id()),
            format!(".{name}.{}.0.tmp", std::process::id()),
        ] {
            std::os::unix::fs::symlink(&victim, theirs.join("gateway").join(planted)).unwrap();
        }
        mode(&theirs, 0o777);
        mode(&theirs.join("gateway"), 0o777);
        // As root the folder can be another user's for real; a link to it is refused as well.
        if as_root() {
            for dir in [theirs.clone(), theirs.join("gateway")] {
                std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
            }
            let written = write_in(&theirs.join("gateway"), &folders, &me());
            assert!(written.is_empty(), "{written:?}");
        }
        let base = tmp.path().join("mcp-sidecar-1000");
        std::os::unix::fs::symlink(&theirs, &base).unwrap();
        let written = write_in(&base.join("gateway"), &folders, &me());
        assert!(written.is_empty(), "{written:?}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

        // A folder of our own (a fresh one, or one loosened since) is used, 0700 and 0600.
        let ours = tmp.path().join("ours/gateway");
        let written = write_in(&ours, &folders, &me());
        assert_eq!(written, vec![ours.join(&name)]);
        mode(&ours, 0o755);
        assert_eq!(write_in(&ours, &folders, &me()).len(), 1);
        use std::os::unix::fs::PermissionsExt;
        let mode_of = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode_of(&ours), 0o700);
        assert_eq!(mode_of(ours.parent().unwrap()), 0o700);
        assert_eq!(mode_of(&ours.join(&name)), 0o600);
    }

    #[test]
    fn only_our_own_private_files_of_a_running_sidecar_on_loopback_are_used() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("mcp-sidecar/gateway");
        private_dir(&dir).unwrap();
        let cwd = PathBuf::from("/work/project/src");
        let folder = Path::new("/work/project");
        let path = dir.join(name_for(folder));
        let none = |_: &str| None;
        let plant = |target: &Target, file_mode: u32| {
            let _ = std::fs::remove_file(&path);
            std::fs::write(&path, serde_json::to_string(target).unwrap()).unwrap();
            mode(&path, file_mode);
        };
        let refused = |needle: &str| {
            let e = find_in(&dir, none, &cwd).unwrap_err();
            assert!(e.contains(needle), "{needle}: {e}");
        };

        plant(&me(), 0o600);
        assert_eq!(find_in(&dir, none, &cwd).unwrap(), me());
        // Readable or writable by others.
        plant(&me(), 0o666);
        refused("mode 666");
        // A link to a file of ours elsewhere.
        let elsewhere = tmp.path().join("elsewhere.json");
        std::fs::write(&elsewhere, serde_json::to_string(&me()).unwrap()).unwrap();
        mode(&elsewhere, 0o600);
        let _ = std::fs::remove_file(&path);
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        refused("not read");
        // Our process, but not the one that wrote the file (a pid used again), or no start.
        let pid = std::process::id();
        plant(&target("http://127.0.0.1:9/mcp", pid, 1), 0o600);
        refused("left from a sidecar that has exited");
        plant(&target("http://127.0.0.1:9/mcp", pid, 0), 0o600);
        refused("left from a sidecar that has exited");
        // Another user's process: signal 0 says EPERM (only when not root).
        if !as_root() {
            plant(
                &target("http://127.0.0.1:9/mcp", 1, start_time(1).unwrap()),
                0o600,
            );
            refused("left from a sidecar that has exited");
        }
        // A host that is not this machine.
        let mut far = me();
        far.url = "http://192.0.2.7:9/mcp".into();
        plant(&far, 0o600);
        refused("loopback");
        if as_root() {
            // Another user's file, 0600, in our folder.
            plant(&me(), 0o600);
            std::os::unix::fs::chown(&path, Some(65534), None).unwrap();
            refused("another user");
            // Our file in a folder of another user, or in one of ours in theirs.
            plant(&me(), 0o600);
            std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
            refused("another user");
            std::os::unix::fs::chown(&dir, Some(0), None).unwrap();
            assert_eq!(find_in(&dir, none, &cwd).unwrap(), me());
            std::os::unix::fs::chown(dir.parent().unwrap(), Some(65534), None).unwrap();
            refused("another user");
        }
    }

    #[test]
    fn the_gateway_is_reached_on_loopback_only() {
        for (url, address) in [
            ("http://127.0.0.1:5/mcp", "127.0.0.1:5"),
            ("http://localhost:5/mcp", "127.0.0.1:5"),
            ("http://LOCALHOST:5/mcp", "127.0.0.1:5"),
            ("http://[::1]:5/mcp", "[::1]:5"),
        ] {
            assert_eq!(endpoint(url).unwrap().1.to_string(), address, "{url}");
        }
        for url in [
            "http://192.0.2.7:5/mcp",
            "http://example.com:5/mcp",
            "http://localhost.example.com:5/mcp",
            "http://0.0.0.0:5/mcp",
            "http://[::]:5/mcp",
            "https://127.0.0.1:5/mcp",
            "not a url",
        ] {
            assert!(endpoint(url).is_err(), "{url}");
        }
    }

    #[test]
    fn a_process_counts_only_with_the_start_time_the_file_recorded() {
        let stat = "77 (a) b (c) S 1 77 77 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 123456 1 2 3";
        assert_eq!(start_of(stat), Some(123456));
        assert_eq!(start_of("77 (x"), None);
        let pid = std::process::id();
        let started = start_time(pid).unwrap();
        assert!(started > 0);
        assert!(alive(pid, started));
        assert!(!alive(pid, started + 1));
        assert!(!alive(0, started));
    }

    #[test]
    fn keys_differ_per_folder() {
        assert_ne!(file_for(Path::new("/a")), file_for(Path::new("/b")));
        assert_eq!(file_for(Path::new("/a")), file_for(Path::new("/a")));
    }
}
