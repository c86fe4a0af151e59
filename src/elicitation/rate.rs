//! Per-server rate limit on questions: a server that floods requests gets `cancel`s without a
//! prompt storm, and one log line per window.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::time::Instant;

use crate::config::elicitation::RateLimit;

#[derive(Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<String, Window>>,
}

#[derive(Default)]
struct Window {
    times: VecDeque<Instant>,
    reported: bool,
}

impl RateLimiter {
    /// Records one question from `server`; false when it is over the limit.
    pub fn admit(&self, server: &str, limit: &RateLimit) -> bool {
        let now = Instant::now();
        let mut windows = self.windows.lock();
        let w = windows.entry(server.to_string()).or_default();
        while w
            .times
            .front()
            .is_some_and(|t| now.duration_since(*t) >= limit.per)
        {
            w.times.pop_front();
        }
        if w.times.len() < limit.count as usize {
            w.times.push_back(now);
            w.reported = false;
            return true;
        }
        if !w.reported {
            w.reported = true;
            tracing::warn!(
                server,
                "more than {} questions in {:?}: cancelling the rest without asking",
                limit.count,
                limit.per
            );
        }
        false
    }
}
