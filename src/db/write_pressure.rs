//! Whether a write would wait now ([`crate::Db::write_pressure`]): read from the read view
//! and one flag, with no lock, so a caller can ask before every write (a server deciding
//! whether a write may block a shared thread).

use std::sync::atomic::Ordering;

use super::core::DbInner;
use super::write_delay::delayed_write_rate;

/// Whether writes are being held back now, and why ([`crate::Db::write_pressure`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum WritePressure {
    /// Writes run free.
    None,
    /// Writes are delayed: each is paced (see `Options::level0_slowdown_writes`) so that
    /// flushes and compactions catch up. A write takes longer than usual, by up to the time
    /// the pressure lasts.
    Delayed(StallCause),
    /// A write would wait until a flush or compaction has made room.
    Stopped(StallCause),
    /// Writes are refused after a failure (a full disk, an I/O error) until
    /// [`crate::Db::resume`] succeeds: a write returns [`crate::Error::WritesStopped`] at once.
    Failed,
}

/// What holds writes back ([`WritePressure`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StallCause {
    /// Level 0 holds `Options::level0_slowdown_writes` tables or more (delayed), or
    /// `Options::level0_stop_writes` (stopped): compactions are behind.
    Level0,
    /// A frozen memtable is still being flushed while the active one fills (delayed) or is
    /// full (stopped): the flush is behind.
    Memtable,
}

impl WritePressure {
    /// Whether a write may wait now (delayed or stopped) rather than return at once.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::{StallCause, WritePressure};
    ///
    /// assert!(!WritePressure::None.may_wait());
    /// assert!(WritePressure::Stopped(StallCause::Level0).may_wait());
    /// assert!(!WritePressure::Failed.may_wait()); // it fails at once
    /// ```
    pub fn may_wait(self) -> bool {
        matches!(self, WritePressure::Delayed(_) | WritePressure::Stopped(_))
    }
}

impl DbInner {
    /// See [`crate::Db::write_pressure`].
    pub(crate) fn write_pressure(&self) -> WritePressure {
        if self.writes_stopped.load(Ordering::Acquire) {
            return WritePressure::Failed;
        }
        if self.read_only {
            return WritePressure::None;
        }
        let view = self.view.load();
        let l0_files = view.version.levels()[0].len();
        let frozen = view.imm.is_some();
        let fill = view.mem.approximate_bytes() as f64 / self.opts.memtable_bytes as f64;
        if l0_files >= self.opts.level0_stop_writes {
            return WritePressure::Stopped(StallCause::Level0);
        }
        if frozen && fill >= 1.0 {
            return WritePressure::Stopped(StallCause::Memtable);
        }
        match delayed_write_rate(&self.opts, l0_files, frozen, fill) {
            Some(_) if l0_files >= self.opts.effective_level0_slowdown() => {
                WritePressure::Delayed(StallCause::Level0)
            }
            Some(_) => WritePressure::Delayed(StallCause::Memtable),
            None => WritePressure::None,
        }
    }
}
