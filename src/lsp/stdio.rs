//! This process's stdin/stdout, the LSP face's channel ([`process_stdio`]).
//!
//! When they are stream sockets: Node's `child_process` (VS Code's
//! extension host) and libuv's `uv_spawn` (Neovim) give a child socketpairs, not pipes, for its
//! standard streams; rmcp's `stdio_pipes` takes only FIFOs, so the sidecar fell back to tokio's
//! blocking-thread stdio there: every message crossed threads twice (a futex wake-up each way,
//! header and body written by a blocking thread). Here the sockets are polled on the runtime's
//! own event loop with `recv`/`send` and `MSG_DONTWAIT`, so the descriptors' flags (shared with
//! anything that inherited them) are never changed.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// This process's stdin/stdout on the event loop: polled directly when they are stream sockets
/// (as Node, i.e. VS Code, and libuv, i.e. Neovim, start a child), as non-blocking pipes when
/// they are pipes (as when a shell or a Rust editor starts the sidecar), else tokio's
/// blocking-thread stdio.
pub fn process_stdio() -> (
    Box<dyn AsyncRead + Unpin + Send>,
    Box<dyn AsyncWrite + Unpin + Send>,
) {
    if let Some((read, write)) = socket_stdio() {
        tracing::debug!("stdin/stdout are sockets: polled on the event loop");
        return (Box::new(read), Box::new(write));
    }
    // An editor that gives the sidecar pipes reads its replies through 64 KiB turns otherwise.
    crate::mcp::widen_pipe(1);
    if let Some((read, write)) = fifo_stdio() {
        tracing::debug!("stdin/stdout are pipes: polled on the event loop");
        return (Box::new(read), Box::new(write));
    }
    (Box::new(tokio::io::stdin()), Box::new(tokio::io::stdout()))
}

/// stdin and stdout reopened through `/proc/self/fd` with `O_NONBLOCK` when both are FIFOs: the
/// reopened descriptions are the sidecar's own, so the flag does not reach the descriptors the
/// process inherited (or its children).
fn fifo_stdio() -> Option<(
    tokio::net::unix::pipe::Receiver,
    tokio::net::unix::pipe::Sender,
)> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let reopen = |fd: RawFd, write: bool| {
        let file = std::fs::OpenOptions::new()
            .read(!write)
            .write(write)
            .custom_flags(libc::O_NONBLOCK)
            .open(format!("/proc/self/fd/{fd}"))
            .ok()?;
        file.metadata()
            .is_ok_and(|m| m.file_type().is_fifo())
            .then_some(file)
    };
    let read = reopen(0, false)?;
    let write = reopen(1, true)?;
    Some((
        tokio::net::unix::pipe::Receiver::from_file(read).ok()?,
        tokio::net::unix::pipe::Sender::from_file(write).ok()?,
    ))
}

/// A borrowed descriptor (0 or 1): never closed here.
struct Fd(RawFd);

impl AsRawFd for Fd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

pub struct SocketReader(AsyncFd<Fd>);

/// stdout is registered with the event loop only while a write would block. Registered for
/// writability all the time, the edge-triggered registration woke the sidecar every time the
/// editor read a reply (the socket's buffer drained): one wake-up of the process per message for
/// nothing.
pub struct SocketWriter {
    fd: RawFd,
    blocked: Option<AsyncFd<Fd>>,
}

/// Whether `fd` is a stream socket.
fn is_stream_socket(fd: RawFd) -> bool {
    // SAFETY: fstat and getsockopt only write into the locals they are given.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 || st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
            return false;
        }
        let mut kind: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut libc::c_int).cast(),
            &mut len,
        ) == 0
            && kind == libc::SOCK_STREAM
    }
}

/// stdin and stdout on the event loop, when both are stream sockets (inside a runtime).
pub fn socket_stdio() -> Option<(SocketReader, SocketWriter)> {
    if !(is_stream_socket(0) && is_stream_socket(1)) {
        return None;
    }
    // Deprecated for descriptors that may close under it; 0 and 1 live as long as the process.
    #[allow(deprecated)]
    let read = AsyncFd::with_interest(Fd(0), Interest::READABLE).ok()?;
    let write = SocketWriter {
        fd: 1,
        blocked: None,
    };
    Some((SocketReader(read), write))
}

/// `Ok(n)` from a `recv`/`send` return value, else the OS error.
fn check(n: isize) -> io::Result<usize> {
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

impl AsyncRead for SocketReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.0.poll_read_ready(cx))?;
            // SAFETY: recv writes at most `len` bytes into the unfilled part; exactly the `n`
            // it reports are then marked initialized and filled.
            let unfilled = unsafe { buf.unfilled_mut() };
            let (ptr, len) = (unfilled.as_mut_ptr(), unfilled.len());
            let got = guard.try_io(|fd| {
                check(unsafe { libc::recv(fd.as_raw_fd(), ptr.cast(), len, libc::MSG_DONTWAIT) })
            });
            match got {
                Ok(Ok(n)) => {
                    unsafe { buf.assume_init(n) };
                    buf.advance(n);
                    // Less than asked for: the socket is drained (as tokio's own sockets
                    // reason), so the next read waits for the next edge instead of trying a
                    // `recv` that can only say EAGAIN.
                    if n > 0 && n < len {
                        guard.clear_ready();
                    }
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                Err(_would_block) => continue,
            }
        }
    }
}

/// `send` without waiting (nor a signal if the editor is gone).
fn send_now(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: send reads at most `buf.len()` bytes from `buf`.
    check(unsafe {
        libc::send(
            fd,
            buf.as_ptr().cast(),
            buf.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        )
    })
}

impl AsyncWrite for SocketWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let fd = self.fd;
        loop {
            let Some(blocked) = &self.blocked else {
                match send_now(fd, buf) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        // Registering reports the socket's state at once, so a drain between
                        // the EAGAIN and here is not missed.
                        #[allow(deprecated)]
                        let fd = AsyncFd::with_interest(Fd(fd), Interest::WRITABLE)?;
                        self.blocked = Some(fd);
                        continue;
                    }
                    result => return Poll::Ready(result),
                }
            };
            let mut guard = ready!(blocked.poll_write_ready(cx))?;
            match guard.try_io(|fd| send_now(fd.as_raw_fd(), buf)) {
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(result) => {
                    // All of it went: the editor keeps up again, so stop watching the socket.
                    if result.as_ref().is_ok_and(|n| *n == buf.len()) {
                        self.blocked = None;
                    }
                    return Poll::Ready(result);
                }
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn a_socketpair_is_read_and_written_on_the_event_loop() {
        let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
        assert!(is_stream_socket(ours.as_raw_fd()));
        let (r, w) = std::io::pipe().unwrap();
        assert!(!is_stream_socket(r.as_raw_fd()) && !is_stream_socket(w.as_raw_fd()));
        let fd = ours.as_raw_fd();
        #[allow(deprecated)]
        let mut reader = SocketReader(AsyncFd::with_interest(Fd(fd), Interest::READABLE).unwrap());
        let mut writer = SocketWriter {
            fd: libc_dup(fd),
            blocked: None,
        };
        let mut theirs = tokio::net::UnixStream::from_std({
            theirs.set_nonblocking(true).unwrap();
            theirs
        })
        .unwrap();
        let big = vec![7u8; 1 << 20];
        let send = tokio::spawn(async move {
            writer.write_all(&big).await.unwrap();
            writer
        });
        let mut got = vec![0u8; 1 << 20];
        theirs.read_exact(&mut got).await.unwrap();
        assert!(got.iter().all(|b| *b == 7));
        let writer = send.await.unwrap();
        theirs.write_all(b"hello").await.unwrap();
        let mut five = [0u8; 5];
        reader.read_exact(&mut five).await.unwrap();
        assert_eq!(&five, b"hello");
        drop(theirs);
        let mut rest = Vec::new();
        reader.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "end of stream when the other side closes");
        // SAFETY: the dup made for the writer is ours to close.
        unsafe { libc::close(writer.fd) };
        drop(ours);
    }

    fn libc_dup(fd: RawFd) -> RawFd {
        // SAFETY: dup has no memory effects; the new descriptor is closed by the test.
        unsafe { libc::dup(fd) }
    }
}
