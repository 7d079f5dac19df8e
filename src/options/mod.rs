//! Tuning knobs for a database. Every field is public and documented with its default.

pub(crate) mod compression;

use std::sync::Arc;

use crate::compaction_filter::CompactionFilter;
use crate::env::{Env, StdEnv};
use crate::filter::{FilterPolicy, LeveledPolicy, PrefixExtractor};
pub use compression::Compression;

/// Number of levels in the LSM tree (L0..L6).
pub const NUM_LEVELS: usize = 7;

/// The largest user key accepted, in bytes.
pub const MAX_KEY_BYTES: usize = 64 * 1024;

/// The largest value accepted, in bytes.
pub const MAX_VALUE_BYTES: usize = 256 * 1024 * 1024;

/// The largest write batch accepted, in bytes of its encoding: one batch is one WAL record,
/// and a log reader refuses to assemble a bigger one (see `docs/FORMAT.md`).
pub const MAX_BATCH_BYTES: usize = 1 << 30;

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
    /// (default 64 MiB, as RocksDB; LevelDB's 4 MiB makes many small level-0 tables and
    /// roughly doubles write amplification at tens of millions of keys).
    pub memtable_bytes: usize,
    /// Target uncompressed size of a data block (default 4096).
    pub block_bytes: usize,
    /// Entries between restart points inside a data block (default 16).
    pub block_restart_interval: usize,
    /// Capacity of the shared data-block cache in bytes; 0 disables it (default 8 MiB).
    pub block_cache_bytes: usize,
    /// Maximum number of table readers kept open (default 1000). Up to three quarters of them
    /// stay pinned to their tables (a lookup reaches them without a cache lookup); the rest
    /// are an LRU for tables beyond that. When the LRU closes a reader, the table's index and
    /// filter stay in memory (up to as many bytes as `block_cache_bytes`, least recently
    /// closed dropped first), so reopening it costs no reads.
    pub max_open_files: usize,
    /// Read table files through a memory map instead of `pread` (default false; RocksDB's
    /// `allow_mmap_reads`). Uncompressed data blocks are then read in place: no system call,
    /// no copy, and no room in the block cache (the OS page cache already holds them), which
    /// makes present gets on tables in the page cache markedly faster (docs/BENCH.md). Each
    /// read still checks the block's checksum. Compressed blocks are read from the mapping,
    /// decompressed and cached as without it.
    ///
    /// Trade-offs: the mappings take address space (not memory: the page cache holds the
    /// pages either way) for every open table; a cold read takes a page fault per 4 KiB page
    /// where `pread` takes one call per block; and if another process truncates a table file
    /// while it is open, touching the lost pages kills this process with `SIGBUS` instead of
    /// returning an error. The engine itself never modifies a finished table.
    pub mmap_reads: bool,
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
    /// Number of level-0 files that triggers a compaction into level 1 (default 8). Every
    /// compaction out of level 0 rewrites the part of level 1 its tables overlap (with
    /// random keys, all of it), so the more it brings at once, the fewer bytes are written
    /// per byte that arrives. The memtable's skip list costs ~110 bytes per entry beside the
    /// key and value, so a flush gives smaller tables than RocksDB's for the same
    /// `memtable_bytes`: 8 of them bring about what RocksDB's 4 do (measurements in
    /// docs/BENCH.md, "The write path").
    pub level0_compaction_trigger: usize,
    /// Number of level-0 files from which writes are slowed down (default 16): each write is
    /// paced to a rate that starts at 16 MiB/s and halves with every level-0 file beyond
    /// this, so writers slow gradually instead of stopping dead at `level0_stop_writes`
    /// (RocksDB's delayed writes). Writes are also slowed while a frozen memtable waits for
    /// its flush and the active one is more than half full. A value outside
    /// `level0_compaction_trigger..level0_stop_writes` is taken as the nearest value inside
    /// (as RocksDB sanitizes its triggers), so options that lower only `level0_stop_writes`
    /// or raise only `level0_compaction_trigger` stay valid: with `level0_stop_writes: 12`
    /// and this field at its default, writes are slowed from 11 level-0 tables on.
    ///
    /// ```
    /// let opts = bloomkv::Options {
    ///     level0_compaction_trigger: 4,
    ///     level0_slowdown_writes: 20,
    ///     level0_stop_writes: 36,
    ///     ..Default::default()
    /// };
    /// assert!(opts.validate().is_ok());
    /// ```
    pub level0_slowdown_writes: usize,
    /// Number of level-0 files at which writes pause until compaction catches up (default 24).
    pub level0_stop_writes: usize,
    /// Each level is this many times larger than the one above it (default 10).
    pub level_size_multiplier: u64,
    /// Target total size of level 1 (default 256 MiB, as RocksDB); with
    /// `level_compaction_dynamic_level_bytes`, the size at which level 0's output (the base
    /// level) moves up a level, and the least any level's target may be.
    pub max_bytes_for_level_base: u64,
    /// Size the levels from the bottom up, as RocksDB's option of this name does: the
    /// largest level's size is the last level's target, each level above it gets
    /// 1/`level_size_multiplier` of the one below (never less than
    /// `max_bytes_for_level_base`), and level 0 compacts straight into the *base level*, the
    /// deepest level (no deeper than the first one holding data) whose share is at most
    /// `max_bytes_for_level_base`; the levels above the base level stay empty. Data is
    /// written to fewer levels on its way down, most of it once to the last one. A tree
    /// built without the option reopens with it and is brought to that shape gradually, by
    /// compactions that drain the levels it no longer needs into deeper ones (default
    /// `false`: level `n`'s target is `max_bytes_for_level_base *
    /// level_size_multiplier^(n-1)`). See docs/DESIGN.md, "Dynamic level sizes".
    ///
    /// ```
    /// let opts = bloomkv::Options {
    ///     level_compaction_dynamic_level_bytes: true,
    ///     ..Default::default()
    /// };
    /// assert!(opts.validate().is_ok());
    /// ```
    pub level_compaction_dynamic_level_bytes: bool,
    /// Size at which compaction starts a new output table (default 64 MiB, as RocksDB:
    /// fewer, larger tables mean fewer open readers and less compaction work per byte).
    pub target_file_bytes: u64,
    /// A compaction output into level L+1 is cut once its key range overlaps this many bytes
    /// of level L+2, and a table moves down unchanged only if it overlaps no more than this
    /// of L+2, so that no later compaction of one table rewrites a large part of the level
    /// below it (LevelDB's rule). `0` (default) means 10 x `target_file_bytes`.
    pub max_grandparent_overlap_bytes: u64,
    /// Which table of a level (1 and deeper) a compaction takes (RocksDB's
    /// `compaction_pri`; default [`CompactionPri::MinOverlappingRatio`], as RocksDB's).
    ///
    /// ```
    /// use bloomkv::{CompactionPri, Options};
    ///
    /// // LevelDB's choice: each level's tables in turn, round the key space.
    /// let opts = Options { compaction_pri: CompactionPri::RoundRobin, ..Default::default() };
    /// assert!(opts.validate().is_ok());
    /// ```
    pub compaction_pri: CompactionPri,
    /// Threads that run compactions (default 2), besides the one thread that flushes
    /// memtables. With more than one, compactions of different pairs of levels run in
    /// parallel (e.g. level 0 into 1 while a long compaction of level 3 into 4 runs), each
    /// taking tables no other running compaction holds. Within `1..=64`.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// let opts = bloomkv::Options { background_threads: 4, ..Default::default() };
    /// let db = bloomkv::Db::open(dir.path(), opts)?;
    /// # drop(db);
    /// # Ok(())
    /// # }
    /// ```
    pub background_threads: usize,
    /// A limit on the bytes per second compactions and re-filters write (all compaction
    /// threads together; default `None`: no limit), so that their bursts leave the device to
    /// foreground reads and writes. Flushes are never limited: writers wait on them. A limit
    /// below what the write load needs makes level 0 grow until writes are delayed.
    ///
    /// ```
    /// let opts = bloomkv::Options { compaction_bytes_per_sec: Some(64 << 20), ..Default::default() };
    /// assert!(opts.validate().is_ok());
    /// ```
    pub compaction_bytes_per_sec: Option<u64>,
    /// Once no write has arrived for this long (default 5 s), the level-0 tables left over
    /// after the last writes (fewer than `level0_compaction_trigger`, so never due on their
    /// own) are compacted into the base level by a compaction thread that has nothing else to
    /// do: each costs every point lookup one more filter probe until then. One job at a time,
    /// only when no flush or other compaction runs, and at most one per flushed memtable.
    /// [`crate::Db::wait_for_compactions`] compacts them without waiting for the delay.
    /// `None`: level 0 is compacted only when due.
    ///
    /// ```
    /// use std::time::Duration;
    /// let opts = bloomkv::Options {
    ///     idle_compaction_delay: Some(Duration::from_secs(30)),
    ///     ..Default::default()
    /// };
    /// assert!(opts.validate().is_ok());
    /// ```
    pub idle_compaction_delay: Option<std::time::Duration>,
    /// The file system to use (default: the real one).
    pub env: Arc<dyn Env>,
    /// The kind of filter tables are built with (default [`LeveledPolicy`]: cache-line
    /// blocked Bloom filters on level 0, Ribbon filters from level 1 down, where nearly all
    /// keys live and a lookup probes one table per level; see `docs/FILTERS.md`). A policy
    /// that differs by level gives each level's kind through [`FilterPolicy::for_level`];
    /// any other policy builds every level's tables. Its size per table comes from
    /// `filter_bits_per_key` /
    /// `filter_bits_per_level` / `filter_allocation` through
    /// [`FilterPolicy::with_bits_per_key`]. Each table records the name of the policy that
    /// built it and is read with a policy of that name: this one or a built-in one; a table
    /// whose policy is neither fails to open with [`crate::Error::InvalidArgument`].
    pub filter_policy: Arc<dyn FilterPolicy>,
    /// How tables compress their data blocks and index block (default
    /// [`Compression::Lz4`], as RocksDB and LevelDB compress by default: cheap to decode, and
    /// a block that saves less than 1/8 is kept raw anyway). The block cache holds blocks uncompressed, so compression
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
    /// Per-level overrides of `filter_policy`: entry `i` is the kind of filter for tables
    /// written to level `i`; levels past the end use the last entry. `None` (default) uses
    /// `filter_policy` everywhere. For example a Ribbon filter
    /// ([`crate::filter::RibbonPolicy`]: the rate of a Bloom filter in about 30% less memory,
    /// slower to build) for the big, rarely rewritten bottom levels and Bloom above. A table
    /// moved down a level unchanged keeps its filter.
    pub filter_policy_per_level: Option<Vec<Arc<dyn FilterPolicy>>>,
    /// Cuts keys into prefixes for prefix filters (default `None`: no prefix filters).
    /// With an extractor, every table written also carries a filter over its keys'
    /// prefixes, built by the table's filter policy, and [`crate::Db::prefix`] with a prefix
    /// the extractor produces skips, without reading a data block, every table whose prefix
    /// filter rules it out (RocksDB's `prefix_extractor`). Tables written under another
    /// extractor (or none) are never skipped.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use std::sync::Arc;
    /// use bloomkv::filter::DelimiterPrefix;
    ///
    /// let opts = bloomkv::Options {
    ///     prefix_extractor: Some(Arc::new(DelimiterPrefix::new(b'/'))),
    ///     ..Default::default()
    /// };
    /// let db = bloomkv::Db::open(dir.path(), opts)?;
    /// db.put("tenant1/a", "1")?;
    /// db.flush()?;
    /// assert_eq!(db.prefix("tenant2/").count(), 0); // the table is skipped
    /// assert_eq!(db.prefix("tenant1/").count(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub prefix_extractor: Option<Arc<dyn PrefixExtractor>>,
    /// A hook compactions consult to drop or rewrite entries nobody needs any more (default
    /// `None`; RocksDB's `compaction_filter`): expired keys, members of deleted collections.
    /// It is asked only about entries every reader sees alike (the newest version of a key,
    /// a put, older than every live snapshot, not range-deleted), so it never changes an
    /// answer a reader is entitled to; its reads see the database as of the compaction's
    /// start. Flushes do not consult it (see [`CompactionFilter`] for why, and for what
    /// else is not filtered). While it is set, each compaction holds a snapshot of its own
    /// for those reads.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use std::sync::Arc;
    /// use bloomkv::{CompactionDecision, CompactionFilter, CompactionFilterContext, Options};
    ///
    /// /// Drops every key under "tmp/".
    /// #[derive(Debug)]
    /// struct DropTemporary;
    ///
    /// impl CompactionFilter for DropTemporary {
    ///     fn name(&self) -> &str {
    ///         "drop-temporary"
    ///     }
    ///     fn filter(&self, _: &mut CompactionFilterContext<'_>, key: &[u8], _: &[u8]) -> CompactionDecision {
    ///         if key.starts_with(b"tmp/") {
    ///             CompactionDecision::Remove
    ///         } else {
    ///             CompactionDecision::Keep
    ///         }
    ///     }
    /// }
    ///
    /// let opts = Options { compaction_filter: Some(Arc::new(DropTemporary)), ..Options::default() };
    /// let db = bloomkv::Db::open(dir.path(), opts)?;
    /// db.put("tmp/scratch", "x")?;
    /// db.put("kept", "y")?;
    /// db.compact()?;
    /// assert_eq!(db.get("tmp/scratch")?, None);
    /// assert_eq!(db.get("kept")?, Some(b"y".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
}

/// Which table of a level a compaction out of that level takes ([`Options::compaction_pri`]).
/// Level 0 always goes whole, since its tables overlap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionPri {
    /// The table whose key range overlaps the fewest bytes of the next level per byte of its
    /// own, so each compaction rewrites as little of the next level as it can for what it
    /// moves down (RocksDB's `kMinOverlappingRatio`). Of equal ratios, the first after the
    /// level's compaction pointer goes.
    #[default]
    MinOverlappingRatio,
    /// The next table after where the level's last compaction ended, round the key space
    /// (LevelDB's compaction pointer).
    RoundRobin,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            filter_bits_per_key: 10.0,
            filter_bits_per_level: None,
            filter_allocation: FilterAllocation::Uniform,
            memtable_bytes: 64 << 20,
            block_bytes: 4096,
            block_restart_interval: 16,
            block_cache_bytes: 8 << 20,
            max_open_files: 1000,
            mmap_reads: false,
            sync_writes: false,
            create_if_missing: true,
            error_if_exists: false,
            best_effort_recovery: false,
            level0_compaction_trigger: 8,
            level0_slowdown_writes: 16,
            level0_stop_writes: 24,
            level_size_multiplier: 10,
            max_bytes_for_level_base: 256 << 20,
            level_compaction_dynamic_level_bytes: false,
            target_file_bytes: 64 << 20,
            max_grandparent_overlap_bytes: 0,
            compaction_pri: CompactionPri::MinOverlappingRatio,
            background_threads: 2,
            compaction_bytes_per_sec: None,
            idle_compaction_delay: Some(std::time::Duration::from_secs(5)),
            env: Arc::new(StdEnv),
            filter_policy: Arc::new(LeveledPolicy::default()),
            compression: Compression::Lz4,
            compression_per_level: None,
            filter_policy_per_level: None,
            prefix_extractor: None,
            compaction_filter: None,
        }
    }
}

/// Largest `target_file_bytes`, `memtable_bytes` and `max_bytes_for_level_base` accepted
/// (beyond this, sizes stop meaning anything on real machines and arithmetic nears overflow).
const MAX_SIZE_BYTES: u64 = 1 << 40;

impl Options {
    /// Checks every field for a value that would break the engine, naming the field and the
    /// allowed range. [`crate::Db::open`] calls it.
    ///
    /// ```
    /// let bad = bloomkv::Options { level0_stop_writes: 2, ..Default::default() };
    /// let err = bad.validate().unwrap_err();
    /// assert!(err.to_string().contains("level0_stop_writes"));
    /// assert!(bloomkv::Options::default().validate().is_ok());
    /// ```
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] for the first field out of range.
    pub fn validate(&self) -> crate::error::Result<()> {
        fn bad(
            field: &str,
            allowed: &str,
            got: impl std::fmt::Display,
        ) -> crate::error::Result<()> {
            Err(crate::error::Error::InvalidArgument(format!(
                "Options::{field} must be {allowed}, not {got}"
            )))
        }
        let bits_ok = |b: f64| b == 0.0 || (1.0..=crate::filter::MAX_BITS_PER_KEY).contains(&b);
        let bits_range = "0 (no filter) or a finite number within 1..=1000";
        if !bits_ok(self.filter_bits_per_key) {
            return bad("filter_bits_per_key", bits_range, self.filter_bits_per_key);
        }
        if let Some(levels) = &self.filter_bits_per_level
            && let Some(b) = levels.iter().find(|b| !bits_ok(**b))
        {
            return bad("filter_bits_per_level", bits_range, b);
        }
        if let FilterAllocation::Monkey { bits_per_key } = self.filter_allocation
            && !(1.0..=crate::filter::MAX_BITS_PER_KEY).contains(&bits_per_key)
        {
            return bad(
                "filter_allocation (Monkey bits_per_key)",
                "a finite number within 1..=1000",
                bits_per_key,
            );
        }
        if !(1024..=MAX_SIZE_BYTES as usize).contains(&self.memtable_bytes) {
            return bad(
                "memtable_bytes",
                "within 1 KiB..=1 TiB",
                self.memtable_bytes,
            );
        }
        if !(64..=(64 << 20)).contains(&self.block_bytes) {
            return bad("block_bytes", "within 64..=64 MiB", self.block_bytes);
        }
        if !(1..=65_536).contains(&self.block_restart_interval) {
            return bad(
                "block_restart_interval",
                "within 1..=65536",
                self.block_restart_interval,
            );
        }
        if self.block_cache_bytes != 0 && self.block_cache_bytes < 4096 {
            return bad(
                "block_cache_bytes",
                "0 (no cache) or at least 4 KiB",
                self.block_cache_bytes,
            );
        }
        if self.max_open_files < 4 {
            return bad("max_open_files", "at least 4", self.max_open_files);
        }
        if self.level0_compaction_trigger == 0 {
            return bad("level0_compaction_trigger", "at least 1", 0);
        }
        if self.level0_stop_writes <= self.level0_compaction_trigger {
            return bad(
                "level0_stop_writes",
                &format!(
                    "above level0_compaction_trigger ({})",
                    self.level0_compaction_trigger
                ),
                self.level0_stop_writes,
            );
        }
        if !(1..=64).contains(&self.background_threads) {
            return bad(
                "background_threads",
                "within 1..=64",
                self.background_threads,
            );
        }
        if self.compaction_bytes_per_sec == Some(0) {
            return bad(
                "compaction_bytes_per_sec",
                "None (no limit) or at least 1",
                0,
            );
        }
        if !(2..=1000).contains(&self.level_size_multiplier) {
            return bad(
                "level_size_multiplier",
                "within 2..=1000",
                self.level_size_multiplier,
            );
        }
        if !(1024..=MAX_SIZE_BYTES).contains(&self.max_bytes_for_level_base) {
            return bad(
                "max_bytes_for_level_base",
                "within 1 KiB..=1 TiB",
                self.max_bytes_for_level_base,
            );
        }
        if !(1024..=MAX_SIZE_BYTES).contains(&self.target_file_bytes) {
            return bad(
                "target_file_bytes",
                "within 1 KiB..=1 TiB",
                self.target_file_bytes,
            );
        }
        Ok(())
    }

    /// The grandparent-overlap limit in bytes (see `max_grandparent_overlap_bytes`).
    pub(crate) fn grandparent_overlap_limit(&self) -> u64 {
        match self.max_grandparent_overlap_bytes {
            0 => self.target_file_bytes.saturating_mul(10),
            n => n,
        }
    }

    /// The kind of filter for tables written to `level`: `filter_policy_per_level`'s entry
    /// if there is a list, else what `filter_policy` gives for the level
    /// ([`FilterPolicy::for_level`]), else `filter_policy`.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use bloomkv::filter::{BloomPolicy, FilterPolicy, RibbonPolicy};
    /// // The default: Bloom on level 0, Ribbon below.
    /// let default = bloomkv::Options::default();
    /// assert_eq!(default.filter_policy_for_level(0).name(), BloomPolicy::NAME);
    /// assert_eq!(default.filter_policy_for_level(1).name(), RibbonPolicy::NAME);
    /// // One kind everywhere.
    /// let bloom = bloomkv::Options {
    ///     filter_policy: Arc::new(BloomPolicy::new(10)),
    ///     ..Default::default()
    /// };
    /// assert_eq!(bloom.filter_policy_for_level(3).name(), BloomPolicy::NAME);
    /// let opts = bloomkv::Options {
    ///     filter_policy_per_level: Some(vec![
    ///         Arc::new(BloomPolicy::default()),
    ///         Arc::new(RibbonPolicy::default()),
    ///     ]),
    ///     ..Default::default()
    /// };
    /// assert_eq!(opts.filter_policy_for_level(0).name(), BloomPolicy::NAME);
    /// assert_eq!(opts.filter_policy_for_level(5).name(), RibbonPolicy::NAME);
    /// ```
    pub fn filter_policy_for_level(&self, level: usize) -> &Arc<dyn FilterPolicy> {
        match &self.filter_policy_per_level {
            Some(v) if !v.is_empty() => &v[level.min(v.len() - 1)],
            _ => self
                .filter_policy
                .for_level(level)
                .unwrap_or(&self.filter_policy),
        }
    }

    /// The level-0 table count from which writes are slowed: `level0_slowdown_writes`
    /// brought within `level0_compaction_trigger..level0_stop_writes` (see its doc).
    pub(crate) fn effective_level0_slowdown(&self) -> usize {
        let stop = self.level0_stop_writes.max(1);
        self.level0_slowdown_writes
            .clamp(self.level0_compaction_trigger.min(stop - 1), stop - 1)
    }

    /// The filter to build tables of `level` with at `bits_per_key` (`None` for 0: no
    /// filter).
    pub(crate) fn filter_with_bits(
        &self,
        level: usize,
        bits_per_key: f64,
    ) -> Option<Arc<dyn FilterPolicy>> {
        let policy = self.filter_policy_for_level(level);
        (bits_per_key > 0.0).then(|| {
            policy
                .with_bits_per_key(bits_per_key)
                .unwrap_or_else(|| Arc::clone(policy))
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
    ///
    /// # Examples
    /// ```
    /// use bloomkv::{FilterAllocation, Options};
    ///
    /// let opts = Options { filter_bits_per_level: Some(vec![14.0, 12.0, 10.0]), ..Options::default() };
    /// assert_eq!(opts.bits_per_key_for_level(1), 12.0);
    /// assert_eq!(opts.bits_per_key_for_level(5), 10.0); // the last entry covers deeper levels
    /// let monkey = Options {
    ///     filter_allocation: FilterAllocation::Monkey { bits_per_key: 8.0 },
    ///     ..Options::default()
    /// };
    /// assert_eq!(monkey.bits_per_key_for_level(3), 8.0);
    /// ```
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

    /// Each bad value is refused, naming its field.
    #[test]
    fn validate_names_the_field_out_of_range() {
        let cases: Vec<(&str, Options)> = vec![
            (
                "filter_bits_per_key",
                Options {
                    filter_bits_per_key: f64::NAN,
                    ..Default::default()
                },
            ),
            (
                "filter_bits_per_key",
                Options {
                    filter_bits_per_key: -1.0,
                    ..Default::default()
                },
            ),
            (
                "filter_bits_per_key",
                Options {
                    filter_bits_per_key: f64::INFINITY,
                    ..Default::default()
                },
            ),
            (
                "filter_bits_per_level",
                Options {
                    filter_bits_per_level: Some(vec![10.0, f64::NAN]),
                    ..Default::default()
                },
            ),
            (
                "filter_allocation",
                Options {
                    filter_allocation: FilterAllocation::Monkey { bits_per_key: 0.0 },
                    ..Default::default()
                },
            ),
            (
                "target_file_bytes",
                Options {
                    target_file_bytes: 0,
                    ..Default::default()
                },
            ),
            (
                "target_file_bytes",
                Options {
                    target_file_bytes: u64::MAX,
                    ..Default::default()
                },
            ),
            (
                "memtable_bytes",
                Options {
                    memtable_bytes: 0,
                    ..Default::default()
                },
            ),
            (
                "block_bytes",
                Options {
                    block_bytes: 0,
                    ..Default::default()
                },
            ),
            (
                "block_restart_interval",
                Options {
                    block_restart_interval: 0,
                    ..Default::default()
                },
            ),
            (
                "block_cache_bytes",
                Options {
                    block_cache_bytes: 1,
                    ..Default::default()
                },
            ),
            (
                "max_open_files",
                Options {
                    max_open_files: 0,
                    ..Default::default()
                },
            ),
            (
                "level0_compaction_trigger",
                Options {
                    level0_compaction_trigger: 0,
                    ..Default::default()
                },
            ),
            (
                "level0_stop_writes",
                Options {
                    level0_stop_writes: 0,
                    ..Default::default()
                },
            ),
            (
                "level0_stop_writes",
                Options {
                    level0_stop_writes: 4,
                    ..Default::default()
                },
            ),
            (
                "background_threads",
                Options {
                    background_threads: 0,
                    ..Default::default()
                },
            ),
            (
                "compaction_bytes_per_sec",
                Options {
                    compaction_bytes_per_sec: Some(0),
                    ..Default::default()
                },
            ),
            (
                "level_size_multiplier",
                Options {
                    level_size_multiplier: 1,
                    ..Default::default()
                },
            ),
            (
                "max_bytes_for_level_base",
                Options {
                    max_bytes_for_level_base: 0,
                    ..Default::default()
                },
            ),
        ];
        for (field, opts) in cases {
            let err = opts.validate().unwrap_err();
            assert!(
                matches!(err, crate::error::Error::InvalidArgument(_)),
                "{err}"
            );
            assert!(err.to_string().contains(field), "{field}: {err}");
        }
        assert!(Options::default().validate().is_ok());
        assert!(
            Options {
                filter_bits_per_key: 0.0,
                ..Default::default()
            }
            .validate()
            .is_ok()
        );
    }

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

    /// A slowdown outside `trigger..stop` is brought inside it rather than refused, so that
    /// options written against other defaults (lowering only the stop, say) stay valid.
    #[test]
    fn slowdown_outside_trigger_and_stop_is_brought_inside() {
        let with = |trigger, slowdown, stop| Options {
            level0_compaction_trigger: trigger,
            level0_slowdown_writes: slowdown,
            level0_stop_writes: stop,
            ..Options::default()
        };
        let d = Options::default();
        assert_eq!(
            (
                d.level0_compaction_trigger,
                d.effective_level0_slowdown(),
                d.level0_stop_writes
            ),
            (8, 16, 24)
        );
        let stop_only = Options {
            level0_stop_writes: 12,
            ..Options::default()
        };
        assert!(stop_only.validate().is_ok());
        assert_eq!(stop_only.effective_level0_slowdown(), 11);
        assert_eq!(with(4, 3, 12).effective_level0_slowdown(), 4);
        assert_eq!(with(4, 12, 12).effective_level0_slowdown(), 11);
        assert_eq!(with(2, 3, 6).effective_level0_slowdown(), 3);
        assert_eq!(with(2, 2, 3).effective_level0_slowdown(), 2);
        for o in [with(4, 3, 12), with(4, 12, 12), with(4, 100, 12)] {
            assert!(o.validate().is_ok(), "{o:?}");
        }
        // The stop must still lie above the trigger.
        assert!(with(8, 16, 8).validate().is_err());
    }
}
