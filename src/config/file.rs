//! Reading a small regular file that someone else may have written (a workspace's `mcp.json`, an
//! `envFile`): files are read before anyone trusts them, so a FIFO, a device, a symlink to
//! `/dev/zero` or a huge file must fail at once, never block or fill memory.

use std::io::Read;
use std::path::Path;

/// The largest file read (config files and `envFile`s alike).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Reads `path` if it is a regular file of at most [`MAX_FILE_BYTES`] holding UTF-8. A missing
/// file keeps `ErrorKind::NotFound`; everything else is an error phrased for the person.
pub fn read_small_file(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    // Non-blocking, so opening a FIFO that nobody writes returns at once.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB",
            MAX_FILE_BYTES / 1024
        )));
    }
    let mut bytes = Vec::new();
    // The cap holds even for a file that grows while it is read.
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(std::io::Error::other(format!(
            "larger than {} KiB",
            MAX_FILE_BYTES / 1024
        )));
    }
    String::from_utf8(bytes).map_err(|_| std::io::Error::other("not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_small_regular_files_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok");
        std::fs::write(&ok, "text").unwrap();
        assert_eq!(read_small_file(&ok).unwrap(), "text");
        let missing = read_small_file(&dir.path().join("missing")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(
            read_small_file(&zero)
                .unwrap_err()
                .to_string()
                .contains("not a regular file")
        );
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(
            read_small_file(&fifo)
                .unwrap_err()
                .to_string()
                .contains("not a regular file")
        );
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; MAX_FILE_BYTES as usize + 1]).unwrap();
        assert!(
            read_small_file(&big)
                .unwrap_err()
                .to_string()
                .contains("larger than")
        );
        assert!(read_small_file(dir.path()).is_err());
    }
}
