//! The server's log lines, in Redis's format (`pid:M 25 Nov 2026 14:34:14.123 * text`): the
//! role letter (`M` a standalone server or a cluster leader, `S` a cluster follower), then
//! `.` debug, `-` verbose, `*` notice, `#` warning, as Redis writes them.
//!
//! `--loglevel` sets the least serious level written (Redis's default, notice);
//! `--logfile` names a file to append to instead of stderr. The file is opened for every
//! line, as Redis does, so a log rotator can move it away at any time.
//!
//! Lines that could repeat many times a second (refused clients, an unreachable peer) go
//! through [`RateLimited`], which prints at most one line per interval with a count of the
//! rest.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use parking_lot::Mutex;

/// How serious a line is, least serious first (Redis's `loglevel` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Level {
    /// Much detail, for development (`.`).
    Debug,
    /// Detail an operator may want while chasing a problem (`-`).
    Verbose,
    /// Something worth knowing in production (`*`).
    Notice,
    /// Something went wrong (`#`).
    Warning,
}

impl Level {
    /// The symbol Redis writes for this level.
    pub fn symbol(self) -> char {
        match self {
            Level::Debug => '.',
            Level::Verbose => '-',
            Level::Notice => '*',
            Level::Warning => '#',
        }
    }

    /// The name `--loglevel` and `CONFIG GET loglevel` use.
    pub fn name(self) -> &'static str {
        match self {
            Level::Debug => "debug",
            Level::Verbose => "verbose",
            Level::Notice => "notice",
            Level::Warning => "warning",
        }
    }

    /// The level named `name` (case-insensitive), as `CONFIG SET loglevel` takes it.
    pub fn parse(name: &str) -> Option<Level> {
        [Level::Debug, Level::Verbose, Level::Notice, Level::Warning]
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name))
    }

    fn from_u8(v: u8) -> Level {
        match v {
            0 => Level::Debug,
            1 => Level::Verbose,
            2 => Level::Notice,
            _ => Level::Warning,
        }
    }
}

static THRESHOLD: AtomicU8 = AtomicU8::new(Level::Notice as u8);
static ROLE: AtomicU8 = AtomicU8::new(b'M');
static LOGFILE: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Sets the least serious level written and where lines go (`None`: stderr). A log file
/// is created if missing and must be writable now.
///
/// # Errors
/// The error opening `logfile` for appending; nothing is changed then.
pub fn configure(level: Level, logfile: Option<&Path>) -> std::io::Result<()> {
    if let Some(path) = logfile {
        open_append(path)?;
    }
    *LOGFILE.lock() = logfile.map(Path::to_path_buf);
    set_level(level);
    Ok(())
}

/// Sets the least serious level written (`CONFIG SET loglevel`).
pub fn set_level(level: Level) {
    THRESHOLD.store(level as u8, Ordering::Relaxed);
}

/// The least serious level written.
pub fn level() -> Level {
    Level::from_u8(THRESHOLD.load(Ordering::Relaxed))
}

/// The log file lines go to, if not stderr.
pub fn logfile() -> Option<PathBuf> {
    LOGFILE.lock().clone()
}

/// Sets the role letter of the lines that follow: `M` for a standalone server or a
/// cluster leader, `S` for a follower (Redis's master and replica).
pub fn set_role(role: char) {
    ROLE.store(u8::try_from(role).unwrap_or(b'M'), Ordering::Relaxed);
}

/// Whether lines of `level` are written: check before building an expensive line.
pub fn enabled(level: Level) -> bool {
    level as u8 >= THRESHOLD.load(Ordering::Relaxed)
}

fn open_append(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// One line as written, without the newline.
pub fn format_line(pid: u32, role: char, ms: u64, level: Level, text: &str) -> String {
    format!("{pid}:{role} {} {} {text}", timestamp(ms), level.symbol())
}

/// Writes one log line if `level` is enabled.
pub fn log(level: Level, text: &str) {
    if !enabled(level) {
        return;
    }
    let role = char::from(ROLE.load(Ordering::Relaxed));
    let mut line = format_line(std::process::id(), role, now_ms(), level, text);
    line.push('\n');
    let file = LOGFILE.lock().clone();
    if let Some(path) = file {
        // One write of the whole line: lines from threads never interleave. If the file
        // cannot be written (disk full, removed directory), the line goes to stderr.
        if open_append(&path)
            .and_then(|mut f| f.write_all(line.as_bytes()))
            .is_ok()
        {
            return;
        }
    }
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// A debug line.
pub fn debug(text: &str) {
    log(Level::Debug, text);
}

/// A verbose line.
pub fn verbose(text: &str) {
    log(Level::Verbose, text);
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
    /// Logs `text` as a warning unless a line went out less than `interval_ms` ago (then
    /// counts it).
    pub fn warn(&self, interval_ms: u64, text: &str) {
        self.log(Level::Warning, interval_ms, text);
    }

    /// Logs `text` at `level` unless a line went out less than `interval_ms` ago (then
    /// counts it).
    pub fn log(&self, level: Level, interval_ms: u64, text: &str) {
        let now = now_ms();
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
            0 => log(level, text),
            n => log(
                level,
                &format!("{text} ({n} more like it since the last report)"),
            ),
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

    #[test]
    fn lines_carry_redis_symbols() {
        let line = format_line(42, 'S', 1_795_617_254_123, Level::Verbose, "peer 2 back");
        assert_eq!(line, "42:S 25 Nov 2026 14:34:14.123 - peer 2 back");
        let symbols: String = [Level::Debug, Level::Verbose, Level::Notice, Level::Warning]
            .iter()
            .map(|l| l.symbol())
            .collect();
        assert_eq!(symbols, ".-*#");
        assert_eq!(Level::parse("WARNING"), Some(Level::Warning));
        assert_eq!(Level::parse("loud"), None);
        assert!(Level::Debug < Level::Warning);
    }
}
