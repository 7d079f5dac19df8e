//! Every counter the engine keeps, in one place: table reads and filter answers
//! ([`ReadCounters`], shared by every table of a database), filter answers per level, and
//! background work. `Db::stats` adds them up into a [`crate::Stats`].

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::options::NUM_LEVELS;

/// Running totals of table reads. Updated with relaxed atomics: each counter is exact, but a
/// [`ReadCounters::snapshot`] taken during reads may mix counts from slightly different moments.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use std::sync::Arc;
/// use bloomkv::sstable::ReadCounters;
/// let counters = Arc::new(ReadCounters::default()); // share one per database's tables
/// assert_eq!(counters.snapshot().data_blocks_read, 0);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Default)]
pub struct ReadCounters {
    filter_checks: AtomicU64,
    /// Checks that said "may be present"; "useful" is `checks - maybe`, so the common answer
    /// ("absent") costs one atomic increment, not two.
    filter_maybe: AtomicU64,
    filter_false_positives: AtomicU64,
    filter_unavailable: AtomicU64,
    data_blocks_read: AtomicU64,
    block_cache_hits: AtomicU64,
    bytes_read: AtomicU64,
}

/// A copy of [`ReadCounters`] at one moment.
///
/// # Examples
/// ```
/// use bloomkv::sstable::{ReadCounters, ReadCountersSnapshot};
/// let snap: ReadCountersSnapshot = ReadCounters::default().snapshot();
/// assert_eq!(snap, ReadCountersSnapshot::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadCountersSnapshot {
    /// Point lookups that consulted a table's filter.
    pub filter_checks: u64,
    /// Filter checks that answered "not present" (each saved a data-block read).
    pub filter_useful: u64,
    /// Filter checks that answered "may be present" for a key the table does not hold.
    pub filter_false_positives: u64,
    /// Tables opened whose filter was corrupt or rejected by the policy, read without it.
    pub filter_unavailable: u64,
    /// Data blocks read from a file (block-cache misses).
    pub data_blocks_read: u64,
    /// Data blocks served by the block cache.
    pub block_cache_hits: u64,
    /// Bytes of data blocks read from files (trailers included).
    pub bytes_read: u64,
}

impl ReadCounters {
    /// Current totals.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::ReadCounters;
    /// let c = ReadCounters::default();
    /// assert_eq!(c.snapshot().filter_checks, 0);
    /// ```
    pub fn snapshot(&self) -> ReadCountersSnapshot {
        // `maybe` before `checks`: a check is counted before its "maybe", so this order never
        // sees more maybes than checks.
        let maybe = self.filter_maybe.load(Relaxed);
        let checks = self.filter_checks.load(Relaxed);
        ReadCountersSnapshot {
            filter_checks: checks,
            filter_useful: checks.saturating_sub(maybe),
            filter_false_positives: self.filter_false_positives.load(Relaxed),
            filter_unavailable: self.filter_unavailable.load(Relaxed),
            data_blocks_read: self.data_blocks_read.load(Relaxed),
            block_cache_hits: self.block_cache_hits.load(Relaxed),
            bytes_read: self.bytes_read.load(Relaxed),
        }
    }

    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn filter_checked(&self, said_no: bool) {
        self.filter_checks.fetch_add(1, Relaxed);
        if !said_no {
            self.filter_maybe.fetch_add(1, Relaxed);
        }
    }

    #[cfg(any(test, feature = "internals"))]
    pub(crate) fn filter_false_positive(&self) {
        self.filter_false_positives.fetch_add(1, Relaxed);
    }

    pub(crate) fn filter_was_unavailable(&self) {
        self.filter_unavailable.fetch_add(1, Relaxed);
    }

    pub(crate) fn block_read(&self, bytes: u64) {
        self.data_blocks_read.fetch_add(1, Relaxed);
        self.bytes_read.fetch_add(bytes, Relaxed);
    }

    pub(crate) fn cache_hit(&self) {
        self.block_cache_hits.fetch_add(1, Relaxed);
    }
}

/// Per-level filter counters (the table-level ones live in `ReadCounters`).
#[derive(Debug, Default)]
pub(crate) struct LevelCounters {
    pub checks: AtomicU64,
    /// Checks that said "may be present" (useful = checks - maybe: one increment per "absent").
    pub maybe: AtomicU64,
    pub false_positives: AtomicU64,
}

/// Counters of background work.
#[derive(Debug, Default)]
pub(crate) struct WorkCounters {
    pub gets: AtomicU64,
    pub flushes: AtomicU64,
    pub compactions: AtomicU64,
    pub compaction_bytes_read: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub user_bytes_written: AtomicU64,
    /// Bytes appended to WALs by writes (record framing included).
    pub wal_bytes_written: AtomicU64,
    /// Table bytes written by flushes.
    pub flush_bytes_written: AtomicU64,
    /// Table bytes written by re-filters.
    pub refilter_bytes_written: AtomicU64,
    /// Tables moved down a level unchanged, and their bytes (none written).
    pub trivial_moves: AtomicU64,
    pub trivial_move_bytes: AtomicU64,
    /// Per output level: merging compactions into it, the bytes they read and wrote.
    pub level_compactions: [AtomicU64; NUM_LEVELS],
    pub level_compaction_bytes_read: [AtomicU64; NUM_LEVELS],
    pub level_compaction_bytes_written: [AtomicU64; NUM_LEVELS],
    /// Writers' time delayed plus stopped.
    pub stall_micros: AtomicU64,
    pub delay_micros: AtomicU64,
    pub stop_micros: AtomicU64,
    /// The longest a single write waited (delayed and stopped together).
    pub longest_stall_micros: AtomicU64,
    /// Write groups paced under write pressure, and those that waited stopped.
    pub writes_delayed: AtomicU64,
    pub writes_stopped: AtomicU64,
}

/// How pressure held one write group back (see [`WorkCounters::count_stall`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Stall {
    /// It was paced at a delayed rate (whether or not its share of the pace made it sleep).
    pub paced: bool,
    /// How long it slept for the pace.
    pub delayed: std::time::Duration,
    /// How long it waited stopped, if it did (`None`: it never waited).
    pub stopped: Option<std::time::Duration>,
}

impl WorkCounters {
    /// Accounts for one write group held back as `stall` says.
    pub(crate) fn count_stall(&self, stall: Stall) {
        if stall.paced {
            bump(&self.writes_delayed, 1);
        }
        if stall.stopped.is_some() {
            bump(&self.writes_stopped, 1);
        }
        let (delayed, stopped) = (stall.delayed, stall.stopped.unwrap_or_default());
        if delayed.is_zero() && stopped.is_zero() {
            return;
        }
        let (d, s) = (delayed.as_micros() as u64, stopped.as_micros() as u64);
        bump(&self.delay_micros, d);
        bump(&self.stop_micros, s);
        bump(&self.stall_micros, d + s);
        self.longest_stall_micros.fetch_max(d + s, Relaxed);
    }
}

/// Adds `by` to a counter.
pub(crate) fn bump(c: &AtomicU64, by: u64) {
    c.fetch_add(by, Relaxed);
}
