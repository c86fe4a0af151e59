//! Per-server rate limit on questions: a server that floods requests gets `cancel`s without a
//! prompt storm, and one log line per window.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub count: u32,
    pub per: Duration,
}

impl std::str::FromStr for RateLimit {
    type Err = String;

    /// `"10/min"`, `"2/s"`, `"100/h"`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (count, unit) = s
            .split_once('/')
            .ok_or_else(|| format!("a rate looks like \"10/min\", not \"{s}\""))?;
        let count: u32 = count
            .trim()
            .parse()
            .map_err(|_| format!("\"{count}\" is not a whole number"))?;
        let per = match unit.trim() {
            "s" | "sec" | "second" => Duration::from_secs(1),
            "m" | "min" | "minute" => Duration::from_secs(60),
            "h" | "hour" => Duration::from_secs(3600),
            other => return Err(format!("unknown rate unit \"{other}\" (use s, min or h)")),
        };
        Ok(RateLimit { count, per })
    }
}

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

/// The longest duration a setting can ask for (about 136 years, "never" in practice). Longer ones
/// are capped to it, so turning one into a `Duration`, or adding it to now, cannot panic.
pub const MAX_DURATION: Duration = Duration::from_secs(u32::MAX as u64);

/// `seconds` as a `Duration`, at most [`MAX_DURATION`] (and zero for anything not positive).
pub fn capped_secs(seconds: f64) -> Duration {
    if seconds.is_nan() || seconds <= 0.0 {
        return Duration::ZERO;
    }
    Duration::try_from_secs_f64(seconds).map_or(MAX_DURATION, |d| d.min(MAX_DURATION))
}

/// `"30m"`, `"90s"`, `"1h"`, or a number of seconds; at most [`MAX_DURATION`].
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(
        s.find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(s.len()),
    );
    let n: f64 = num
        .parse()
        .map_err(|_| format!("\"{s}\" is not a duration like 30m"))?;
    let secs = match unit.trim() {
        "" | "s" => n,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        other => return Err(format!("unknown duration unit \"{other}\" (use s, m or h)")),
    };
    Ok(capped_secs(secs))
}
