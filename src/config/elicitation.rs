//! The `elicitation` settings as the person writes them: the per-server `elicitation.policy` and
//! the sidecar-wide `rateLimit` / `idleLimit`, with the rate and duration syntax they use.

use std::time::Duration;

use serde::Deserialize;

/// Per-server `elicitation.policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Policy {
    #[default]
    Ask,
    Decline,
    /// Answer with the defaults, without asking, when every required field has one.
    AcceptDefaults,
}

/// The sidecar-wide `elicitation` settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub rate_limit: RateLimit,
    /// A prompt nobody answers for this long is closed (and the question cancelled).
    pub idle_limit: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            rate_limit: RateLimit {
                count: 10,
                per: Duration::from_secs(60),
            },
            idle_limit: Duration::from_secs(30 * 60),
        }
    }
}

/// `elicitation: {"rateLimit": "10/min", "idleLimit": "30m"}`.
impl<'de> Deserialize<'de> for Settings {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", default)]
        struct Raw {
            rate_limit: Option<String>,
            idle_limit: Option<String>,
        }
        let raw = Raw::deserialize(d)?;
        let mut settings = Settings::default();
        if let Some(rate) = raw.rate_limit {
            settings.rate_limit = rate.parse().map_err(serde::de::Error::custom)?;
        }
        if let Some(idle) = raw.idle_limit {
            settings.idle_limit = parse_duration(&idle).map_err(serde::de::Error::custom)?;
        }
        Ok(settings)
    }
}

/// At most `count` in each `per` (`"10/min"`).
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
