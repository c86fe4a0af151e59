//! The cap on operations that wait on people or on long server calls. The serve loop
//! (`serve.rs`) runs a bounded number of handlers at once, and the editor's answers to our own requests travel
//! through the same queue, so long operations must never be able to take every slot: the cap is
//! kept far below the server's concurrency level, and past it a new operation is refused at once.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::contract::CallError;

/// Handlers the serve loop runs at once (it reads no more from the editor past them). Large, so that a burst of quick tool calls (an
/// agent fanning out a thousand) waits for servers instead of being refused; an idle slot costs
/// nothing.
pub const CONCURRENCY_LEVEL: usize = 2048;
/// Long operations allowed at once (half the concurrency level: the rest stays free for short
/// requests, cancellations, the editor's answers and `shutdown`).
pub const LONG_OPERATION_CAP: usize = 1024;

#[derive(Clone)]
pub struct Gate {
    permits: Arc<Semaphore>,
    cap: usize,
}

impl Gate {
    pub fn new(cap: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(cap)),
            cap,
        }
    }

    /// A permit for one long operation, or `Busy` at once when the cap is reached.
    pub fn enter(&self) -> Result<OwnedSemaphorePermit, CallError> {
        self.permits
            .clone()
            .try_acquire_owned()
            .map_err(|_| CallError::Busy(self.cap))
    }

    pub fn in_use(&self) -> usize {
        self.cap - self.permits.available_permits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_past_the_cap_and_frees_on_drop() {
        const _: () = assert!(LONG_OPERATION_CAP * 2 <= CONCURRENCY_LEVEL);
        let gate = Gate::new(2);
        let a = gate.enter().unwrap();
        let _b = gate.enter().unwrap();
        assert_eq!(gate.enter().unwrap_err(), CallError::Busy(2));
        drop(a);
        assert!(gate.enter().is_ok());
        assert_eq!(gate.in_use(), 1);
    }
}
