//! Private state files: where they live (`$XDG_STATE_HOME/mcp-sidecar/`, default
//! `~/.local/state/mcp-sidecar/`), a `0700` directory, `0600` files, whole-file writes that are
//! atomic (a temporary file in the same directory, then a rename), appends, and an advisory lock
//! (`flock`) so that two sidecars updating the same file lose nothing.
//!
//! Knows nothing of what the files hold.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Permissions of the state directory.
pub const DIR_MODE: u32 = 0o700;
/// Permissions of every file in it.
pub const FILE_MODE: u32 = 0o600;

pub use crate::paths::state_dir;

/// A file in the state directory.
pub fn state_file(name: &str) -> Option<PathBuf> {
    state_dir().map(|d| d.join(name))
}

/// Creates `dir` (and missing parents) as `0700`. An existing `dir` that we own and that others
/// may read is narrowed to `0700`; one owned by someone else is left alone.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    narrow(dir, DIR_MODE)
}

/// Takes group and other permissions away from a file or directory we own.
fn narrow(path: &Path, mode: u32) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() == me && meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))?;
    }
    Ok(())
}

fn private_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => private_dir(dir),
        _ => Ok(()),
    }
}

/// Opens `path` for appending, creating it `0600` in a `0700` directory (an existing file of
/// ours that others may read is narrowed to `0600`).
pub fn open_append(path: &Path) -> io::Result<File> {
    private_parent(path)?;
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)?;
    narrow(path, FILE_MODE)?;
    Ok(file)
}

/// Replaces `path` with `bytes` atomically: readers see the old or the new content, never a
/// part. The file is `0600`, written through a temporary file in the same directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    private_parent(path)?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no file name"))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(
        ".{}.{}.tmp",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let temp = path.with_file_name(temp_name);
    let result = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// An exclusive advisory lock on `{path}.lock`, held until dropped. Every writer of `path` takes
/// it around read-modify-write, in this process or another.
pub struct Lock {
    file: File,
}

impl Lock {
    /// Waits for the lock (the holders only ever read and write a small file).
    pub fn exclusive(path: &Path) -> io::Result<Lock> {
        private_parent(path)?;
        let mut name = path.as_os_str().to_owned();
        name.push(".lock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(FILE_MODE)
            .open(PathBuf::from(name))?;
        loop {
            // SAFETY: a valid open descriptor, owned by `file` for as long as the lock lives.
            let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
            if rc == 0 {
                return Ok(Lock { file });
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        // SAFETY: as above; closing the file would release the lock as well.
        unsafe { libc::flock(self.file.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn files_are_0600_in_a_0700_directory_and_loose_ones_are_narrowed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("state/mcp-sidecar");
        let log = dir.join("log.jsonl");
        open_append(&log).unwrap().write_all(b"x\n").unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&log), 0o600);
        let whole = dir.join("whole.json");
        write_atomic(&whole, b"{}").unwrap();
        assert_eq!(mode(&whole), 0o600);
        assert_eq!(std::fs::read(&whole).unwrap(), b"{}");

        // What an older version (or a umask) left readable by others is narrowed.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
        open_append(&log).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&log), 0o600);
        // No temporary file is left behind.
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn an_atomic_write_replaces_the_whole_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("f");
        write_atomic(&path, b"a long first version").unwrap();
        write_atomic(&path, b"short").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"short");
    }

    #[test]
    fn the_lock_is_exclusive_across_open_files() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("counter");
        std::fs::write(&path, "0").unwrap();
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        let _lock = Lock::exclusive(&path).unwrap();
                        let n: u32 = std::fs::read_to_string(&path).unwrap().parse().unwrap();
                        std::thread::yield_now();
                        write_atomic(&path, (n + 1).to_string().as_bytes()).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "200");
    }
}
