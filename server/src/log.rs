//! The server's log lines on stderr, in Redis's format
//! (`pid:M 25 Nov 2026 14:34:14.123 # text`): `*` for notices, `#` for warnings.
//!
//! Warnings that could repeat many times a second (refused clients) go through
//! [`RateLimited`], which prints at most one line per interval with a count of the rest.

use std::sync::atomic::{AtomicU64, Ordering};

/// How serious a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Something worth knowing (`*`).
    Notice,
    /// Something went wrong (`#`).
    Warning,
}

/// Writes one log line.
pub fn log(level: Level, text: &str) {
    let sym = match level {
        Level::Notice => '*',
        Level::Warning => '#',
    };
    eprintln!(
        "{}:M {} {sym} {text}",
        std::process::id(),
        timestamp(crate::store::txn::unix_ms())
    );
}

/// A notice.
pub fn notice(text: &str) {
    log(Level::Notice, text);
}

/// A warning.
pub fn warn(text: &str) {
    log(Level::Warning, text);
}

/// `25 Nov 2026 14:34:14.123` (UTC) for `ms` since the Unix epoch.
pub fn timestamp(ms: u64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = ms / 1000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Days to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{day:02} {} {year} {:02}:{:02}:{:02}.{:03}",
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

/// A warning printed at most once per `interval_ms`, counting what it held back.
#[derive(Debug, Default)]
pub struct RateLimited {
    last_ms: AtomicU64,
    held: AtomicU64,
}

impl RateLimited {
    /// Logs `text` unless a line went out less than `interval_ms` ago (then counts it).
    pub fn warn(&self, interval_ms: u64, text: &str) {
        let now = crate::store::txn::unix_ms();
        let last = self.last_ms.load(Ordering::Relaxed);
        if now.saturating_sub(last) < interval_ms
            || self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.held.fetch_add(1, Ordering::Relaxed);
            return;
        }
        match self.held.swap(0, Ordering::Relaxed) {
            0 => warn(text),
            n => warn(&format!("{text} ({n} more like it since the last report)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_civil_dates() {
        assert_eq!(timestamp(0), "01 Jan 1970 00:00:00.000");
        // 2026-11-25 14:34:14.123 UTC.
        assert_eq!(timestamp(1_795_617_254_123), "25 Nov 2026 14:34:14.123");
        // 2024-02-29 (a leap day).
        assert_eq!(timestamp(1_709_164_800_000), "29 Feb 2024 00:00:00.000");
    }
}
