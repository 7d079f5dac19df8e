//! Tuning knobs for a database. Every field is public and documented with its default.

use std::sync::Arc;

use crate::env::{Env, StdEnv};
use crate::filter::{BloomPolicy, FilterPolicy};
pub use crate::sstable::compression::Compression;

/// Number of levels in the LSM tree (L0..L6).
pub const NUM_LEVELS: usize = 7;

/// The largest user key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 64 * 1024;

/// The largest value accepted, in bytes.
pub const MAX_VALUE_BYTES: usize = 256 * 1024 * 1024;

/// How filter memory is spread over the levels of the tree.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum FilterAllocation {
    /// `filter_bits_per_key` (or `filter_bits_per_level`) bits per key, as given.
    #[default]
    Uniform,
    /// Monkey (Dayan et al., SIGMOD 2017): `bits_per_key` times the tree's entries of filter
    /// memory in total, spread so that the sum of the levels' false-positive rates is
    /// smallest — each level's rate proportional to its share of the entries, so small upper
    /// levels get more bits per key and the big last level fewer. Recomputed from the current
    /// level sizes whenever a table is written (see [`crate::filter::monkey`]).
    Monkey {
        /// Average filter bits per key over the whole tree.
        bits_per_key: f64,
    },
}

/// Options for [`crate::Db::open`].
///
/// ```
/// let opts = bloomkv::Options { filter_bits_per_key: 12.0, ..Default::default() };
/// assert_eq!(opts.block_bytes, 4096);
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    /// Bloom filter bits per key for every table (default 10.0, about 1% false positives).
    /// `0.0` disables filters: every lookup that reaches a table reads a data block.
    pub filter_bits_per_key: f64,
    /// Per-level overrides of `filter_bits_per_key`: entry `i` applies to level `i`; levels past
    /// the end use the last entry. `None` (default) uses `filter_bits_per_key` everywhere.
    pub filter_bits_per_level: Option<Vec<f64>>,
    /// How filter memory is spread over levels (default [`FilterAllocation::Uniform`]).
    pub filter_allocation: FilterAllocation,
    /// Size at which the active memtable is frozen and flushed to a level-0 table
    /// (default 4 MiB).
    pub memtable_bytes: usize,
    /// Target uncompressed size of a data block (default 4096).
    pub block_bytes: usize,
    /// Entries between restart points inside a data block (default 16).
    pub block_restart_interval: usize,
    /// Capacity of the shared data-block cache in bytes; 0 disables it (default 8 MiB).
    pub block_cache_bytes: usize,
    /// Maximum number of table readers kept open (default 1000). Up to three quarters of them
    /// stay pinned to their tables (a lookup reaches them without a cache lookup); the rest
    /// are an LRU for tables beyond that.
    pub max_open_files: usize,
    /// `false` (default): a write returns once the OS has the WAL record, like LevelDB; a
    /// process crash loses nothing, a power cut may lose the last writes. `true`: the WAL is
    /// fsynced before a write returns.
    pub sync_writes: bool,
    /// Create the database directory if it does not exist (default true).
    pub create_if_missing: bool,
    /// Fail if the database already exists (default false).
    pub error_if_exists: bool,
    /// `false` (default): a corrupt WAL record in the middle of a log fails `open`. `true`:
    /// recovery keeps every readable record, skips damaged ones and reports what it dropped.
    pub best_effort_recovery: bool,
    /// Number of level-0 files that triggers a compaction into level 1 (default 4).
    pub level0_compaction_trigger: usize,
    /// Number of level-0 files at which writes pause until compaction catches up (default 12).
    pub level0_stop_writes: usize,
    /// Each level is this many times larger than the one above it (default 10).
    pub level_size_multiplier: u64,
    /// Target total size of level 1 (default 10 MiB).
    pub max_bytes_for_level_base: u64,
    /// Size at which compaction starts a new output table (default 2 MiB).
    pub target_file_bytes: u64,
    /// The file system to use (default: the real one).
    pub env: Arc<dyn Env>,
    /// The kind of filter tables are built with (default [`BloomPolicy`], cache-line blocked
    /// Bloom filters). Its size per table comes from `filter_bits_per_key` /
    /// `filter_bits_per_level` / `filter_allocation` through
    /// [`FilterPolicy::with_bits_per_key`]. Each table records the name of the policy that
    /// built it and is read with a policy of that name: this one or a built-in one; a table
    /// whose policy is neither fails to open with [`crate::Error::InvalidArgument`].
    pub filter_policy: Arc<dyn FilterPolicy>,
    /// How tables compress their data blocks and index block (default
    /// [`Compression::None`]). The block cache holds blocks uncompressed, so compression
    /// costs CPU once per block read from the file and saves disk space and reads.
    ///
    /// ```
    /// use bloomkv::{Compression, Options};
    ///
    /// let opts = Options { compression: Compression::Lz4, ..Default::default() };
    /// assert_eq!(opts.compression_for_level(3), Compression::Lz4);
    /// ```
    pub compression: Compression,
    /// Per-level overrides of `compression`: entry `i` applies to tables written to level
    /// `i`; levels past the end use the last entry (so the last entry is the setting for the
    /// bottom of the tree). `None` (default) or an empty list uses `compression` everywhere.
    ///
    /// ```
    /// use bloomkv::{Compression, Options};
    ///
    /// // Flushes stay fast; deeper levels, which hold most of the data, are smaller.
    /// let opts = Options {
    ///     compression_per_level: Some(vec![
    ///         Compression::None,
    ///         Compression::Lz4,
    ///         Compression::Lz4,
    ///         Compression::Zstd { level: 3 },
    ///     ]),
    ///     ..Default::default()
    /// };
    /// assert_eq!(opts.compression_for_level(0), Compression::None);
    /// assert_eq!(opts.compression_for_level(1), Compression::Lz4);
    /// assert_eq!(opts.compression_for_level(6), Compression::Zstd { level: 3 });
    /// ```
    pub compression_per_level: Option<Vec<Compression>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            filter_bits_per_key: 10.0,
            filter_bits_per_level: None,
            filter_allocation: FilterAllocation::Uniform,
            memtable_bytes: 4 << 20,
            block_bytes: 4096,
            block_restart_interval: 16,
            block_cache_bytes: 8 << 20,
            max_open_files: 1000,
            sync_writes: false,
            create_if_missing: true,
            error_if_exists: false,
            best_effort_recovery: false,
            level0_compaction_trigger: 4,
            level0_stop_writes: 12,
            level_size_multiplier: 10,
            max_bytes_for_level_base: 10 << 20,
            target_file_bytes: 2 << 20,
            env: Arc::new(StdEnv),
            filter_policy: Arc::new(BloomPolicy::default()),
            compression: Compression::None,
            compression_per_level: None,
        }
    }
}

impl Options {
    /// The filter to build tables with at `bits_per_key` (`None` for 0: no filter).
    pub(crate) fn filter_with_bits(&self, bits_per_key: f64) -> Option<Arc<dyn FilterPolicy>> {
        (bits_per_key > 0.0).then(|| {
            self.filter_policy
                .with_bits_per_key(bits_per_key)
                .unwrap_or_else(|| Arc::clone(&self.filter_policy))
        })
    }

    /// The compression for tables written to `level`: `compression_per_level[level]` (the
    /// last entry for levels past its end), else `compression`.
    pub fn compression_for_level(&self, level: usize) -> Compression {
        match &self.compression_per_level {
            Some(v) if !v.is_empty() => v[level.min(v.len() - 1)],
            _ => self.compression,
        }
    }

    /// Filter bits per key to use for tables written to `level`.
    /// Under [`FilterAllocation::Monkey`] this is its average bits per key; the engine
    /// computes the per-level figure from the tree's shape when it writes a table.
    pub fn bits_per_key_for_level(&self, level: usize) -> f64 {
        if let FilterAllocation::Monkey { bits_per_key } = self.filter_allocation {
            return bits_per_key;
        }
        match &self.filter_bits_per_level {
            Some(v) if !v.is_empty() => v[level.min(v.len() - 1)],
            _ => self.filter_bits_per_key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_level_bits_fall_back_to_last_entry() {
        let o = Options {
            filter_bits_per_level: Some(vec![12.0, 10.0, 6.0]),
            ..Default::default()
        };
        assert_eq!(o.bits_per_key_for_level(0), 12.0);
        assert_eq!(o.bits_per_key_for_level(2), 6.0);
        assert_eq!(o.bits_per_key_for_level(6), 6.0);
        assert_eq!(Options::default().bits_per_key_for_level(3), 10.0);
    }
}
