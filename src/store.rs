//! Private state files: where they live (`$XDG_STATE_HOME/mcp-sidecar/`, default
//! `~/.local/state/mcp-sidecar/`), a `0700` directory, `0600` files, whole-file writes that are
//! atomic (a temporary file in the same directory, then a rename), appends, and an advisory lock
//! (`flock`) so that two sidecars updating the same file lose nothing. Where another user could
//! have been first (a folder under the shared temporary directory), a folder must be ours
//! ([`owned_dir`]), a file is read only when it is ours and private ([`read_private`]), and
//! nothing is created through a link.
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

/// Creates `dir` as [`private_dir`] does, then requires that it is ours: a directory itself (not
/// a symbolic link), owned by this user, `0700` (narrowed when ours and looser). For a folder in
/// a place others can write (the shared temporary directory), where another user could have
/// made it first: their folder, or a link to one, is refused, never used.
pub fn owned_dir(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    check_owned_dir(dir)?;
    narrow(dir, DIR_MODE)
}

/// `Ok` when `dir` is a directory (not a link) owned by this user; its mode is not looked at.
pub fn check_owned_dir(dir: &Path) -> io::Result<()> {
    judge_dir(&std::fs::symlink_metadata(dir)?, effective_user()).map_err(|why| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} {why}: refused", dir.display()),
        )
    })
}

fn judge_dir(meta: &std::fs::Metadata, me: u32) -> Result<(), String> {
    if meta.file_type().is_symlink() {
        return Err("is a symbolic link".into());
    }
    if !meta.is_dir() {
        return Err("is not a directory".into());
    }
    if meta.uid() != me {
        return Err(format!("belongs to another user (uid {})", meta.uid()));
    }
    Ok(())
}

fn effective_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Reads a private file of this user: a regular file (a symbolic link is not followed), owned by
/// this user, that no one else may read or write (`0600` or narrower), of at most `max` bytes.
/// Anything else is an error saying why: what someone else could have written is never read.
pub fn read_private(path: &Path, max: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let refused = |why: String| {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} {why}: not read", path.display()),
        )
    };
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused("is a symbolic link".into()),
            _ => e,
        })?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(refused("is not a regular file".into()));
    }
    if meta.uid() != effective_user() {
        return Err(refused(format!(
            "belongs to another user (uid {})",
            meta.uid()
        )));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(refused(format!(
            "may be written or read by others (mode {:o})",
            meta.permissions().mode() & 0o777
        )));
    }
    if meta.len() > max {
        return Err(refused(format!("is over {max} bytes")));
    }
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Takes group and other permissions away from a file or directory we own.
fn narrow(path: &Path, mode: u32) -> io::Result<()> {
    let meta = std::fs::metadata(path)?;
    if meta.uid() == effective_user() && meta.permissions().mode() & 0o077 != 0 {
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
        // O_EXCL (create_new) and O_NOFOLLOW: a name taken by a file or a link is an error,
        // never followed.
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW)
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
    fn a_folder_or_file_another_user_could_have_made_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let me = effective_user();
        // Another user's folder (their uid), a link to a folder, a file.
        let theirs = tmp.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        let meta = std::fs::symlink_metadata(&theirs).unwrap();
        assert!(judge_dir(&meta, me).is_ok());
        assert!(
            judge_dir(&meta, me + 1)
                .unwrap_err()
                .contains("another user")
        );
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&theirs, &link).unwrap();
        let e = owned_dir(&link).unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(check_owned_dir(&file).is_err());
        // Ours but loose: narrowed.
        std::fs::set_permissions(&theirs, std::fs::Permissions::from_mode(0o777)).unwrap();
        owned_dir(&theirs).unwrap();
        assert_eq!(mode(&theirs), 0o700);

        // Files: ours and 0600 only, never through a link, up to the size given.
        let good = theirs.join("good");
        write_atomic(&good, b"{}").unwrap();
        assert_eq!(read_private(&good, 16).unwrap(), b"{}");
        assert!(read_private(&good, 1).is_err());
        let loose = theirs.join("loose");
        std::fs::write(&loose, "{}").unwrap();
        std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = read_private(&loose, 16).unwrap_err().to_string();
        assert!(e.contains("mode 644"), "{e}");
        let linked = theirs.join("linked");
        std::os::unix::fs::symlink(&good, &linked).unwrap();
        assert!(read_private(&linked, 16).is_err());
        assert!(read_private(&theirs, 16).is_err());
        if me == 0 {
            // As root, a file of another user can be made for real.
            std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::os::unix::fs::chown(&loose, Some(65534), None).unwrap();
            let e = read_private(&loose, 16).unwrap_err().to_string();
            assert!(e.contains("another user"), "{e}");
        }
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
