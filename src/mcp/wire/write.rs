//! The server's stdin, shared by rmcp's writes, the calls made past rmcp and the refusals: each
//! line written whole and in order.

use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::Mutex;

/// The server's stdin.
pub type Writer = Arc<Mutex<Option<ChildStdin>>>;

/// Writes `line` to the server's stdin in order with every other line. It is written at once
/// when no earlier line holds or waits for the lock and the pipe takes it whole: then there is
/// nothing more to do (`None`, and no task to spawn: most small lines). Else the rest is written
/// by the returned future, which holds the lock until the line is written whole (so it must run
/// to its end: a caller spawns it, as rmcp does).
pub fn write_line(
    writer: &Writer,
    line: Vec<u8>,
) -> Option<impl Future<Output = std::io::Result<()>> + Send + 'static> {
    let written = match writer.clone().try_lock_owned() {
        Ok(mut guard) => match guard.as_mut() {
            Some(stdin) => match write_now(stdin, &line) {
                Some(n) if n == line.len() => return None,
                Some(n) => Some((n, guard)),
                None => None,
            },
            None => None,
        },
        Err(_) => None,
    };
    let writer = writer.clone();
    Some(async move {
        let (done, mut guard) = match written {
            Some((done, guard)) => (done, guard),
            None => (0, writer.lock_owned().await),
        };
        let stdin = guard.as_mut().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotConnected, "server stdin is closed")
        })?;
        if done < line.len() {
            stdin.write_all(&line[done..]).await?;
        }
        stdin.flush().await
    })
}

/// Runs what is left of a [`write_line`] as a task of its own (a caller that does not wait for
/// it); `then` gets its error.
pub fn finish_line(
    rest: impl Future<Output = std::io::Result<()>> + Send + 'static,
    then: impl FnOnce(std::io::Error) + Send + 'static,
) {
    tokio::spawn(async move {
        if let Err(e) = rest.await {
            then(e);
        }
    });
}

/// Writes what the pipe takes of `bytes` without waiting: how much (`None` on an error, left
/// for the awaited write to report).
fn write_now(stdin: &mut ChildStdin, bytes: &[u8]) -> Option<usize> {
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match tokio::io::AsyncWrite::poll_write(std::pin::Pin::new(stdin), &mut cx, bytes) {
        std::task::Poll::Ready(Ok(n)) => Some(n),
        std::task::Poll::Ready(Err(_)) => None,
        std::task::Poll::Pending => Some(0),
    }
}
