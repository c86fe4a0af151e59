//! How `mcp-sidecar gateway` finds the gateway of the sidecar serving its workspace: the
//! environment the editors put into their terminals (`MCP_SIDECAR_GATEWAY`,
//! `MCP_SIDECAR_GATEWAY_TOKEN`), else a discovery file per workspace folder,
//! `$XDG_RUNTIME_DIR/mcp-sidecar/gateway/<key>.json` (mode 0600, in a 0700 folder; `<key>`: 16
//! hex digits of SHA-256 over the folder's path), looked up for the current directory and each
//! folder above it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The variable with the endpoint's URL.
pub const ENV_URL: &str = "MCP_SIDECAR_GATEWAY";
/// The variable with the secret.
pub const ENV_TOKEN: &str = "MCP_SIDECAR_GATEWAY_TOKEN";

/// What a discovery file holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub url: String,
    pub token: String,
    /// The sidecar's process (a file whose process is gone is stale).
    #[serde(default)]
    pub pid: u32,
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
    let digest = Sha256::digest(folder.to_string_lossy().as_bytes());
    let key: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    dir().join(format!("{key}.json"))
}

/// Writes the discovery files of `folders` (0600, replaced atomically); returns those written.
pub fn write(folders: &[PathBuf], target: &Target) -> Vec<PathBuf> {
    let dir = dir();
    if let Err(e) = create_private_dir(&dir) {
        tracing::warn!("gateway: cannot create {}: {e}", dir.display());
        return Vec::new();
    }
    let mut written = Vec::new();
    for folder in folders {
        let path = file_for(folder);
        let target = Target {
            folder: folder.display().to_string(),
            ..target.clone()
        };
        let text = serde_json::to_string_pretty(&target).unwrap_or_default();
        match write_private(&path, &text) {
            Ok(()) => written.push(path),
            Err(e) => tracing::warn!("gateway: cannot write {}: {e}", path.display()),
        }
    }
    written
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let temporary = path.with_extension(format!("tmp{}", std::process::id()));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// Removes the files written for this process (another sidecar may have replaced one since).
pub fn remove(files: &[PathBuf]) {
    for path in files {
        let ours = read(path).is_some_and(|t| t.pid == std::process::id());
        if ours {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn read(path: &Path) -> Option<Target> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists and may be signalled.
        pid > 0
            && (unsafe { libc::kill(pid, 0) } == 0
                || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM))
    }
    #[cfg(not(unix))]
    {
        pid != 0
    }
}

/// The gateway for `cwd`: the environment first, then the discovery files of `cwd` and each
/// folder above it. `Err` says what was looked at.
pub fn find(env: impl Fn(&str) -> Option<String>, cwd: &Path) -> Result<Target, String> {
    if let Some(url) = env(ENV_URL).filter(|u| !u.is_empty()) {
        let token = env(ENV_TOKEN)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| format!("{ENV_URL} is set but {ENV_TOKEN} is not"))?;
        return Ok(Target {
            url,
            token,
            pid: 0,
            folder: String::new(),
        });
    }
    let mut stale = None;
    for folder in cwd.ancestors() {
        let path = file_for(folder);
        if let Some(target) = read(&path) {
            if alive(target.pid) {
                return Ok(target);
            }
            stale.get_or_insert(path);
        }
    }
    let mut message = format!(
        "no mcp-sidecar is serving {} or a folder above it: open the folder in an editor with \
         mcp-sidecar (gateway.enabled on), or set {ENV_URL} and {ENV_TOKEN} (the env of \
         mcp-sidecar.gatewayInfo); looked in {}",
        cwd.display(),
        dir().display()
    );
    if let Some(path) = stale {
        message.push_str(&format!(
            " ({} is left from a sidecar that has exited)",
            path.display()
        ));
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

    #[test]
    fn keys_differ_per_folder() {
        assert_ne!(file_for(Path::new("/a")), file_for(Path::new("/b")));
        assert_eq!(file_for(Path::new("/a")), file_for(Path::new("/a")));
    }
}
