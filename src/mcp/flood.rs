//! Flood control for what a server sends unasked (log notifications, stderr lines): a one-second
//! window per source lets the first [`PER_SECOND`] through and counts the rest, which are then
//! reported as one summary line when the window ends.

use std::time::{Duration, Instant};

/// How many messages of one kind a server gets through per second.
pub const PER_SECOND: u32 = 100;
/// The length of one window.
pub const WINDOW: Duration = Duration::from_secs(1);

/// One source's current window.
#[derive(Debug)]
pub struct Window {
    start: Instant,
    passed: u32,
    dropped: u64,
}

/// What to do with one message.
#[derive(Debug, PartialEq, Eq)]
pub struct Admit {
    /// Forward this message.
    pub pass: bool,
    /// The previous window dropped this many: report them (before this message).
    pub summary: Option<u64>,
    /// This is the first message dropped in the window: arrange for the summary at `end`.
    pub first_drop: bool,
}

impl Default for Window {
    fn default() -> Self {
        Self::new(Instant::now())
    }
}

impl Window {
    pub fn new(now: Instant) -> Self {
        Self {
            start: now,
            passed: 0,
            dropped: 0,
        }
    }

    /// When the current window ends.
    pub fn end(&self) -> Instant {
        self.start + WINDOW
    }

    /// Records one message arriving at `now`.
    pub fn admit(&mut self, now: Instant) -> Admit {
        let summary = if now >= self.end() {
            self.take(now)
        } else {
            None
        };
        if self.passed < PER_SECOND {
            self.passed += 1;
            return Admit {
                pass: true,
                summary,
                first_drop: false,
            };
        }
        self.dropped += 1;
        Admit {
            pass: false,
            summary,
            first_drop: self.dropped == 1,
        }
    }

    /// Ends the window if it is over: the number dropped in it, if any, and a fresh window.
    pub fn flush(&mut self, now: Instant) -> Option<u64> {
        if now >= self.end() {
            self.take(now)
        } else {
            None
        }
    }

    fn take(&mut self, now: Instant) -> Option<u64> {
        let dropped = self.dropped;
        *self = Window::new(now);
        (dropped > 0).then_some(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_passes_the_first_hundred_and_counts_the_rest_once() {
        let t0 = Instant::now();
        let mut w = Window::new(t0);
        let admits: Vec<Admit> = (0..250).map(|_| w.admit(t0)).collect();
        assert_eq!(
            admits.iter().filter(|a| a.pass).count(),
            PER_SECOND as usize
        );
        assert!(admits[..100].iter().all(|a| a.pass && !a.first_drop));
        assert!(admits[100].first_drop && !admits[100].pass);
        assert_eq!(admits.iter().filter(|a| a.first_drop).count(), 1);
        assert!(admits.iter().all(|a| a.summary.is_none()));
        // Not over yet: nothing to report.
        assert_eq!(w.flush(t0 + Duration::from_millis(999)), None);
        // The window's end reports the 150 dropped, once, and starts afresh.
        assert_eq!(w.flush(t0 + WINDOW), Some(150));
        assert_eq!(w.flush(t0 + 3 * WINDOW), None);
        assert!(w.admit(t0 + 3 * WINDOW).pass);
    }

    #[test]
    fn a_message_after_the_window_reports_what_it_dropped() {
        let t0 = Instant::now();
        let mut w = Window::new(t0);
        for _ in 0..(PER_SECOND + 7) {
            w.admit(t0);
        }
        let next = w.admit(t0 + WINDOW + Duration::from_millis(1));
        assert_eq!(
            next,
            Admit {
                pass: true,
                summary: Some(7),
                first_drop: false
            }
        );
    }
}
