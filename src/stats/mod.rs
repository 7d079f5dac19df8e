//! Counters a database exposes through [`crate::Db::stats`].
//!
//! [`metrics`] holds the live counters the engine bumps as it works (shared by every table
//! of a database); `Db::stats` adds them up into a [`Stats`], a plain copy, which `display`
//! prints for people.

mod display;
pub(crate) mod metrics;

use crate::options::NUM_LEVELS;

/// A point-in-time copy of a database's counters and shape.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct Stats {
    /// Filter consultations (one per table whose key range held the key and that had a filter).
    pub filter_checks: u64,
    /// Consultations where the filter said "absent", so no data block was read.
    pub filter_useful: u64,
    /// Consultations where the filter said "maybe" but the table did not hold the key.
    pub filter_false_positives: u64,
    /// Tables opened whose filter was damaged or of an unknown policy, read without a filter.
    pub filter_unavailable: u64,
    /// Data blocks read from files (block-cache misses).
    pub data_blocks_read: u64,
    /// Data blocks served from the block cache.
    pub block_cache_hits: u64,
    /// Bytes read from table files by lookups and scans (not by compaction).
    pub bytes_read: u64,
    /// Point lookups served.
    pub gets: u64,
    /// Memtable flushes completed since open.
    pub flushes: u64,
    /// Compactions completed since open.
    pub compactions: u64,
    /// Bytes read from input tables by compaction.
    pub compaction_bytes_read: u64,
    /// Bytes written to tables by flushes, compactions and re-filters: `flush_bytes_written`
    /// plus every level's [`LevelStats::compaction_bytes_written`] plus
    /// `refilter_bytes_written`.
    pub compaction_bytes_written: u64,
    /// Bytes written by users (the encoded write batches: keys, values and a few bytes of
    /// framing each), for write amplification.
    pub user_bytes_written: u64,
    /// Bytes appended to WAL files by writes (the batches plus the log's record headers and
    /// block padding): every user byte is written here once before any table holds it.
    pub wal_bytes_written: u64,
    /// Bytes of level-0 tables written by memtable flushes.
    pub flush_bytes_written: u64,
    /// Bytes of tables rewritten on their own level for a new filter (re-filters, under
    /// `FilterAllocation::Monkey`).
    pub refilter_bytes_written: u64,
    /// Tables moved down a level unchanged by a compaction (a trivial move): nothing is read
    /// or written for them, and they count in no byte figure here.
    pub trivial_moves: u64,
    /// Bytes of the tables moved by trivial moves.
    pub trivial_move_bytes: u64,
    /// Microseconds writers spent waiting for flushes or compactions to catch up: delayed
    /// (`write_delay_micros`) plus stopped (`write_stop_micros`).
    pub stall_micros: u64,
    /// Microseconds writes were delayed (paced) under `level0_slowdown_writes` or a waiting
    /// frozen memtable.
    pub write_delay_micros: u64,
    /// Microseconds writers were stopped dead: level 0 at `level0_stop_writes`, or a full
    /// memtable while the frozen one was still being flushed.
    pub write_stop_micros: u64,
    /// The longest a single write waited, delayed and stopped together, in microseconds.
    pub longest_stall_micros: u64,
    /// Writes paced under `level0_slowdown_writes` or a waiting frozen memtable: each is
    /// charged to the pace, and sleeps once what it owes reaches a millisecond (a write's
    /// small share is carried into a later one's pause). A write group (a write and those
    /// queued behind it, which wait with it) counts once.
    pub writes_delayed: u64,
    /// Writes that were stopped dead for a while (see `write_stop_micros`); a write group
    /// counts once.
    pub writes_stopped: u64,
    /// Per-level shape and filter figures, index = level.
    pub levels: Vec<LevelStats>,
    /// Every live table, level by level (level 0 newest first, deeper levels in key order).
    pub tables: Vec<TableStats>,
}

/// One live table's shape and filter figures.
///
/// Bits per key, filter bytes and expected FPR come from the manifest (recorded when the
/// table was written, so they stay true across trivial moves and reopen). The counters are
/// the table reader's own, since that reader was opened: a table not currently open in the
/// table cache (never read since open, or evicted by `max_open_files`) shows `open: false`
/// and zero counters, and an evicted table's counters start again from zero when reopened.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct TableStats {
    /// The level holding the table.
    pub level: usize,
    /// Its file number (`NNNNNN.sst`).
    pub file_number: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The smallest user key in it.
    pub smallest_key: Vec<u8>,
    /// The largest user key in it.
    pub largest_key: Vec<u8>,
    /// Entries (all versions and tombstones) in it.
    pub entries: u64,
    /// Bits per key its filter was built with; 0.0 without a filter.
    pub filter_bits_per_key: f64,
    /// Bytes of its filter block.
    pub filter_bytes: u64,
    /// The false-positive rate its filter's parameters predict; 1.0 without a filter.
    pub expected_fpr: f64,
    /// Whether its reader is open in the table cache (else the counters below are zero).
    pub open: bool,
    /// Filter checks on this table since its reader was opened.
    pub filter_checks: u64,
    /// Of those, checks where the filter said "maybe" and the table did not hold the key.
    pub filter_false_positives: u64,
}

impl TableStats {
    /// The measured false-positive rate: false positives over filter checks; `None` before
    /// any check. Checks include keys the table did hold, so with many present-key lookups
    /// this understates the rate; absent-key workloads measure it exactly.
    pub fn measured_fpr(&self) -> Option<f64> {
        (self.filter_checks > 0)
            .then(|| self.filter_false_positives as f64 / self.filter_checks as f64)
    }
}

/// One level's shape and filter figures.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct LevelStats {
    /// Tables in the level.
    pub files: u64,
    /// Bytes of those tables.
    pub bytes: u64,
    /// Entries (all versions and tombstones) in those tables.
    pub entries: u64,
    /// Bytes of filter held for the level's tables.
    pub filter_bytes: u64,
    /// Filter bits per entry actually used (filter bits / entries), 0 without filters.
    pub filter_bits_per_key: f64,
    /// False-positive rate the level's filters predict (entry-weighted mean over tables).
    pub expected_fpr: f64,
    /// Filter checks on the level's tables since open.
    pub filter_checks: u64,
    /// Checks where the filter said "absent".
    pub filter_useful: u64,
    /// Checks where the filter said "maybe" and the table did not hold the key.
    pub filter_false_positives: u64,
    /// Compactions that merged tables into this level since open (not trivial moves, not
    /// re-filters, not flushes).
    pub compactions: u64,
    /// Bytes those compactions read (their inputs, from the level above and this one).
    pub compaction_bytes_read: u64,
    /// Bytes of tables those compactions wrote into this level: with the flushes' and the
    /// re-filters' bytes and the WAL's, where every byte written to disk comes from.
    pub compaction_bytes_written: u64,
}

impl LevelStats {
    /// The measured false-positive rate since open: false positives over all checks of keys
    /// the table did not hold (said "absent" + false positives); `None` before any such check.
    pub fn measured_fpr(&self) -> Option<f64> {
        let negatives = self.filter_useful + self.filter_false_positives;
        (negatives > 0).then(|| self.filter_false_positives as f64 / negatives as f64)
    }
}

impl Stats {
    /// Total tables over all levels.
    pub fn total_files(&self) -> u64 {
        self.levels.iter().map(|l| l.files).sum()
    }

    /// Write amplification: bytes written to tables per user byte written (the WAL not
    /// counted; add `wal_bytes_written` for what reaches the disk).
    pub fn write_amplification(&self) -> f64 {
        if self.user_bytes_written == 0 {
            0.0
        } else {
            self.compaction_bytes_written as f64 / self.user_bytes_written as f64
        }
    }

    pub(crate) fn empty_levels() -> Vec<LevelStats> {
        vec![LevelStats::default(); NUM_LEVELS]
    }
}
