//! Flood control for what a server sends unasked (log notifications, stderr lines): a one-second
//! window per source lets the first [`PER_SECOND`] through and counts the rest, which are then
//! reported as one summary line when the window ends. Also [`ToolsRefresh`], which turns a burst
//! of `tools/list_changed` into one refresh.

use std::time::{Duration, Instant};

/// How many messages of one kind a server gets through per second.
pub const PER_SECOND: u32 = 100;
/// The length of one window.
pub const WINDOW: Duration = Duration::from_secs(1);
/// How many distinct resources' updates a window holds back for the end of a flood; updates of
/// further resources in that window are dropped.
pub const MAX_HELD_UPDATES: usize = 1000;

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

/// How long a tool list must stay unchanged before it is fetched again.
pub const REFRESH_QUIET: Duration = Duration::from_millis(100);
/// The longest a refresh waits for a burst of `list_changed` notifications to end.
pub const REFRESH_MAX_WAIT: Duration = Duration::from_secs(1);

/// Coalesces `notifications/tools/list_changed`: one refresh per burst.
#[derive(Debug, Default)]
pub struct ToolsRefresh {
    /// (notifications so far, when the last one came, whether a refresh is scheduled)
    state: parking_lot::Mutex<(u64, Option<Instant>, bool)>,
}

impl ToolsRefresh {
    /// Records one notification; true when the caller must schedule the refresh.
    pub fn changed(&self) -> bool {
        let mut s = self.state.lock();
        s.0 += 1;
        s.1 = Some(Instant::now());
        !std::mem::replace(&mut s.2, true)
    }

    pub fn generation(&self) -> u64 {
        self.state.lock().0
    }

    /// Waits until the burst is over (or has lasted too long), then hands the next
    /// notification its own refresh; returns the generation being fetched.
    pub async fn settle(&self) -> u64 {
        let first = Instant::now();
        loop {
            let due = {
                let mut s = self.state.lock();
                let last = s.1.unwrap_or(first);
                let due = (last + REFRESH_QUIET).min(first + REFRESH_MAX_WAIT);
                if Instant::now() >= due {
                    s.2 = false;
                    return s.0;
                }
                due
            };
            tokio::time::sleep_until(due.into()).await;
        }
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

#[cfg(test)]
mod host_tests {
    use super::*;
    use crate::mcp::host::{Event, Host, LogLevel};

    #[tokio::test]
    async fn a_server_log_flood_reaches_the_editor_as_a_hundred_and_one_summary() {
        let (host, mut events) = Host::new();
        for i in 0..250 {
            host.server_log("s", LogLevel::Info, format!("[s] line {i}"));
        }
        host.server_log("quiet", LogLevel::Info, "[quiet] still heard".into());
        let mut got = Vec::new();
        while let Ok(e) = events.try_recv() {
            got.push(e);
        }
        assert_eq!(
            got.len(),
            PER_SECOND as usize + 1,
            "the other server has its own window"
        );
        // The summary comes when the window ends, with the flood over.
        let summary = tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .expect("no summary");
        assert_eq!(
            summary,
            Some(Event::Log {
                level: LogLevel::Warning,
                message: "[s] 150 messages from s dropped (more than 100 a second)".into()
            })
        );
        assert!(events.try_recv().is_err(), "one summary line");
    }

    #[tokio::test]
    async fn a_resource_update_flood_passes_each_resource_on_once_when_the_second_ends() {
        let (host, mut events) = Host::new();
        let mut agents = host.observe();
        let first: Vec<String> = (0..PER_SECOND).map(|i| format!("res://{i}")).collect();
        for uri in &first {
            host.resource_updated("s", uri.clone());
        }
        // The flood: 3000 more, over three resources.
        for i in 0..3000 {
            host.resource_updated("s", format!("res://x{}", i % 3));
        }
        host.resource_updated("quiet", "res://q".into());
        let updated = |e: Event| match e {
            Event::ResourceUpdated { server, uri } => format!("{server} {uri}"),
            other => panic!("not an update: {other:?}"),
        };
        let mut got = Vec::new();
        while let Ok(e) = events.try_recv() {
            got.push(updated(e));
        }
        let mut expected: Vec<String> = first.iter().map(|u| format!("s {u}")).collect();
        expected.push("quiet res://q".into());
        assert_eq!(
            got, expected,
            "the first hundred at once; the other server has its own"
        );
        // When the window ends: each flooded resource once.
        let mut late = Vec::new();
        for _ in 0..3 {
            let e = tokio::time::timeout(Duration::from_secs(5), events.recv())
                .await
                .expect("the held updates")
                .unwrap();
            late.push(updated(e));
        }
        assert_eq!(late, ["s res://x0", "s res://x1", "s res://x2"]);
        assert!(events.try_recv().is_err(), "nothing more");
        // The agents' side heard the same: 100 + 1 + 3.
        let mut observed = 0;
        while let Ok(o) = agents.try_recv() {
            assert!(matches!(
                o,
                crate::mcp::host::Observed::ResourceUpdated { .. }
            ));
            observed += 1;
        }
        assert_eq!(observed, PER_SECOND as usize + 4);
    }

    #[test]
    fn an_elicitation_completes_once() {
        let (host, _events) = Host::new();
        let _waiter = host.completion("s", "id-1");
        assert!(host.complete("s", "id-1"));
        assert!(!host.complete("s", "id-1"), "repeats are ignored");
        assert!(!host.complete("s", "unknown"));
    }

    #[tokio::test]
    async fn a_burst_of_list_changed_is_one_refresh() {
        let refresh = ToolsRefresh::default();
        assert!(refresh.changed(), "the first schedules the refresh");
        for _ in 0..1000 {
            assert!(!refresh.changed(), "the rest join it");
        }
        assert_eq!(refresh.settle().await, 1001);
        assert!(
            refresh.changed(),
            "after it settled, the next one schedules again"
        );
    }
}
