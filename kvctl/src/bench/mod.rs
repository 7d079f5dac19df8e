//! The W1 and W2 workloads (`docs/WORKLOAD.md`, `docs/BENCH.md`): fill a fresh database with
//! N random-order keys, settle it, reopen it cold, then time point lookups of present and
//! absent keys, a range scan and overwrites, recording per phase the throughput, latency
//! percentiles, the engine's read counters and the process's I/O counters.
//!
//! [`run_w1`] runs either ([`W1Config::new`] or [`W1Config::w2`]); it is what `kvctl bench`,
//! the `w1` example and the peer comparison run.

mod driver;
mod evict;
mod keys;
mod latency;
mod procio;
mod report;
mod run;
mod svg;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use driver::{SWEEP_BITS, print_trio, run_sweep, run_trio, sweep_csv};
pub use evict::evict_dir;
pub use keys::{KeySpace, SplitMix64, distinct_indices, mix};
pub use latency::Latencies;
pub use procio::{Memory, ProcIo};
pub use report::{compare_table, fmt_duration, headline, json_string};
pub use run::run_w1;
pub use svg::{runs_chart, sweep_chart};

use bloomkv::Db;
use bloomkv::Stats;
use bloomkv::filter::monkey::{self, LevelShape};
use bloomkv::filter::{BinaryFusePolicy, BloomPolicy, FilterPolicy, RibbonPolicy};
use bloomkv::sstable::FilterVerdict;
use bloomkv::{Compression, Result};
use bloomkv::{FilterAllocation, NUM_LEVELS, Options};

/// Key length of W1: 16 hex digits.
pub const KEY_BYTES: usize = 16;

/// Which standard workload a run is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Workload {
    /// W1: 1M keys, random values, everything fits in the page cache.
    #[default]
    W1,
    /// W2: 50M keys, values that compress about 2:1, page cache evicted before the reopen,
    /// 64 MiB block cache, 1M-key scan and 1M overwrites.
    W2,
}

impl Workload {
    /// "W1" or "W2".
    pub fn name(self) -> &'static str {
        match self {
            Workload::W1 => "W1",
            Workload::W2 => "W2",
        }
    }
}

/// A kind of filter for the tables of a level.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FilterKind {
    /// Cache-line blocked Bloom filters ([`bloomkv::filter::BloomPolicy`]).
    #[default]
    Bloom,
    /// Standard Ribbon filters ([`bloomkv::filter::RibbonPolicy`]).
    Ribbon,
    /// Binary fuse filters, 8-bit fingerprints ([`bloomkv::filter::BinaryFusePolicy`]).
    Fuse,
}

impl FilterKind {
    /// "bloom", "ribbon" or "fuse".
    pub fn name(self) -> &'static str {
        match self {
            FilterKind::Bloom => "bloom",
            FilterKind::Ribbon => "ribbon",
            FilterKind::Fuse => "fuse",
        }
    }

    /// The kind named `s` ("bloom", "ribbon" or "fuse").
    pub fn parse(s: &str) -> Option<FilterKind> {
        match s {
            "bloom" => Some(FilterKind::Bloom),
            "ribbon" => Some(FilterKind::Ribbon),
            "fuse" => Some(FilterKind::Fuse),
            _ => None,
        }
    }

    /// The engine's policy for this kind, sized for `bits_per_key` where the kind has sizes.
    pub fn policy(self, bits_per_key: f64) -> Arc<dyn FilterPolicy> {
        match self {
            FilterKind::Bloom => Arc::new(BloomPolicy::new(bits_per_key.max(1.0))),
            FilterKind::Ribbon => Arc::new(RibbonPolicy::new(bits_per_key)),
            FilterKind::Fuse => Arc::new(BinaryFusePolicy::new()),
        }
    }
}

/// The function behind [`Progress`]: `(phase, done, total)`.
pub type ProgressFn = dyn Fn(&str, u64, u64) + Send + Sync;

/// A progress callback: `(phase, done, total)`, called when a phase starts (`done` 0), every
/// few thousand operations, and when it ends.
#[derive(Clone)]
pub struct Progress(pub Arc<ProgressFn>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Operations between progress callbacks.
const PROGRESS_EVERY: u64 = 4096;

/// What to run.
#[derive(Clone, Debug)]
pub struct W1Config {
    /// W1 or W2 (default W1): names the run; [`W1Config::w2`] sets W2's sizes.
    pub workload: Workload,
    /// Values half pseudo-random, half a repeat of the first half (W2), instead of all
    /// pseudo-random (default false).
    pub compressible_values: bool,
    /// Block compression of every level (default none; [`W1Config::w2`]: the engine's
    /// default).
    pub compression: Compression,
    /// Called as the phases progress (default none).
    pub progress: Option<Progress>,
    /// N: keys written by the fill (default 1,000,000).
    pub keys: u64,
    /// Bytes per value (default 100).
    pub value_bytes: usize,
    /// Lookups of distinct present keys (default 200,000).
    pub get_present: u64,
    /// Lookups of absent keys `f(i)`, `i >= N` (default 200,000).
    pub get_absent: u64,
    /// Keys read by the one range scan (default 100,000).
    pub scan: u64,
    /// Overwrites of distinct existing keys (default 200,000).
    pub overwrite: u64,
    /// Filter bits per key, 0 for no filters (default 10).
    pub bits_per_key: f64,
    /// Filter allocation: `false` (default) the same `bits_per_key` on every level, `true`
    /// Monkey with `bits_per_key` on average.
    pub monkey: bool,
    /// The kind of filter per level: entry `i` for level `i`, the last entry for deeper
    /// levels (default empty: Bloom everywhere).
    pub filter_kinds: Vec<FilterKind>,
    /// Block cache capacity (default 32 MiB).
    pub block_cache_bytes: usize,
    /// Read table files through memory maps (`Options::mmap_reads`; default false).
    pub mmap_reads: bool,
    /// Level sizes from the bottom up (`Options::level_compaction_dynamic_level_bytes`;
    /// default: the engine's default).
    pub dynamic_levels: bool,
    /// Seed of the key bijection and of the phases' random choices (default 42).
    pub seed: u64,
    /// The database directory; must not exist yet or be empty.
    pub dir: PathBuf,
    /// Drop the database's files from the OS page cache before reopening (default false).
    pub evict_page_cache: bool,
    /// Absent-key lookups traced with `get_explained` after the timed phase, for tables
    /// probed per level (default 2,000; 0 skips the trace).
    pub explain_sample: u64,
}

impl W1Config {
    /// The W1 defaults, in `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        W1Config {
            workload: Workload::W1,
            compressible_values: false,
            compression: Compression::None,
            progress: None,
            keys: 1_000_000,
            value_bytes: 100,
            get_present: 200_000,
            get_absent: 200_000,
            scan: 100_000,
            overwrite: 200_000,
            bits_per_key: 10.0,
            monkey: false,
            filter_kinds: Vec::new(),
            block_cache_bytes: 32 << 20,
            mmap_reads: false,
            dynamic_levels: Options::default().level_compaction_dynamic_level_bytes,
            seed: 42,
            dir: dir.into(),
            evict_page_cache: false,
            explain_sample: 2_000,
        }
    }

    /// The W2 defaults, in `dir`: 50M keys with half-repeated values, 200k gets of each
    /// kind, a 1M-key scan, 1M overwrites, a 64 MiB block cache and the page cache evicted
    /// before the reopen.
    pub fn w2(dir: impl Into<PathBuf>) -> Self {
        W1Config {
            workload: Workload::W2,
            compressible_values: true,
            keys: 50_000_000,
            scan: 1_000_000,
            overwrite: 1_000_000,
            block_cache_bytes: 64 << 20,
            evict_page_cache: true,
            compression: Options::default().compression,
            ..W1Config::new(dir)
        }
    }

    fn tick(&self, phase: &str, done: u64, total: u64) {
        if let Some(p) = &self.progress
            && (done.is_multiple_of(PROGRESS_EVERY) || done == total)
        {
            (p.0)(phase, done, total);
        }
    }

    fn fill_value(&self, ks: &KeySpace, i: u64, version: u64, out: &mut [u8]) {
        if self.compressible_values {
            ks.half_repeated_value(i, version, out);
        } else {
            ks.value(i, version, out);
        }
    }

    /// The engine options the run opens the database with. W1 keeps LevelDB's sizes
    /// (4 MiB memtable, 2 MiB tables, 10 MiB level 1) so that its 1M keys still make a tree
    /// of several levels to study read amplification in; W2 uses the engine's defaults.
    pub fn options(&self) -> Options {
        let base = match self.workload {
            Workload::W1 => Options {
                memtable_bytes: 4 << 20,
                target_file_bytes: 2 << 20,
                max_bytes_for_level_base: 10 << 20,
                ..Options::default()
            },
            Workload::W2 => Options::default(),
        };
        Options {
            filter_bits_per_key: self.bits_per_key.max(0.0),
            filter_allocation: if self.monkey && self.bits_per_key > 0.0 {
                FilterAllocation::Monkey {
                    bits_per_key: self.bits_per_key,
                }
            } else {
                FilterAllocation::Uniform
            },
            block_cache_bytes: self.block_cache_bytes,
            mmap_reads: self.mmap_reads,
            level_compaction_dynamic_level_bytes: self.dynamic_levels,
            compression: self.compression,
            filter_policy_per_level: (!self.filter_kinds.is_empty()).then(|| {
                self.filter_kinds
                    .iter()
                    .map(|k| k.policy(self.bits_per_key))
                    .collect()
            }),
            ..base
        }
    }

    /// The filter kinds per level as given to `--filter` ("bloom,bloom,ribbon");
    /// "default" when none were given (the engine's default, `LeveledPolicy`: Bloom on level
    /// 0, Ribbon below).
    pub fn filter_kinds_label(&self) -> String {
        if self.filter_kinds.is_empty() {
            return "default".into();
        }
        let names: Vec<&str> = self.filter_kinds.iter().map(|k| k.name()).collect();
        names.join(",")
    }

    /// A short label: "10 bits/key", "10 bits/key Monkey", "no filters", with the filter
    /// kinds when they are not the default ("10 bits/key Monkey bloom,bloom,ribbon").
    pub fn label(&self) -> String {
        let kinds = if self.filter_kinds.is_empty() {
            String::new()
        } else {
            format!(" {}", self.filter_kinds_label())
        };
        if self.bits_per_key <= 0.0 {
            "no filters".into()
        } else if self.monkey {
            format!("{} bits/key Monkey{kinds}", self.bits_per_key)
        } else {
            format!("{} bits/key{kinds}", self.bits_per_key)
        }
    }
}

/// Engine counters of one level over one phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LevelDelta {
    /// Filter consultations.
    pub filter_checks: u64,
    /// Consultations that said "absent".
    pub filter_useful: u64,
    /// Consultations that said "maybe" for a key the table did not hold.
    pub filter_false_positives: u64,
}

/// Engine counters over one phase.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EngineDelta {
    /// Data blocks read from files.
    pub data_blocks_read: u64,
    /// Data blocks found in the block cache.
    pub block_cache_hits: u64,
    /// Bytes read from table files by lookups and scans.
    pub bytes_read: u64,
    /// Filter consultations.
    pub filter_checks: u64,
    /// Consultations that said "absent".
    pub filter_useful: u64,
    /// Filter false positives.
    pub filter_false_positives: u64,
    /// The same per level.
    pub levels: Vec<LevelDelta>,
}

impl EngineDelta {
    fn between(a: &Stats, b: &Stats) -> Self {
        let d = |x: u64, y: u64| y.saturating_sub(x);
        EngineDelta {
            data_blocks_read: d(a.data_blocks_read, b.data_blocks_read),
            block_cache_hits: d(a.block_cache_hits, b.block_cache_hits),
            bytes_read: d(a.bytes_read, b.bytes_read),
            filter_checks: d(a.filter_checks, b.filter_checks),
            filter_useful: d(a.filter_useful, b.filter_useful),
            filter_false_positives: d(a.filter_false_positives, b.filter_false_positives),
            levels: a
                .levels
                .iter()
                .zip(&b.levels)
                .map(|(x, y)| LevelDelta {
                    filter_checks: d(x.filter_checks, y.filter_checks),
                    filter_useful: d(x.filter_useful, y.filter_useful),
                    filter_false_positives: d(x.filter_false_positives, y.filter_false_positives),
                })
                .collect(),
        }
    }
}

/// One timed phase.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// "fillrandom", "flush", "reopen", "get_present", "get_absent", "scan", "overwrite".
    pub name: &'static str,
    /// Operations (keys for the scan, 1 for flush and reopen).
    pub ops: u64,
    /// Wall-clock time of the phase.
    pub elapsed: Duration,
    /// Median latency per operation in ns (phases timed per operation).
    pub p50_ns: Option<u64>,
    /// 99th-percentile latency per operation in ns.
    pub p99_ns: Option<u64>,
    /// 99.9th-percentile latency per operation in ns.
    pub p999_ns: Option<u64>,
    /// The slowest operation in ns.
    pub max_ns: Option<u64>,
    /// Engine counters over the phase.
    pub engine: EngineDelta,
    /// `/proc/self/io` over the phase (`None` off Linux).
    pub io: Option<ProcIo>,
    /// Resident memory at the phase's end and the phase's peak (`None` off Linux); the whole
    /// process's, the latency record included (4 bytes per timed operation).
    pub memory: Option<Memory>,
}

impl Phase {
    /// Operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }

    /// `count` per operation.
    pub fn per_op(&self, count: u64) -> f64 {
        count as f64 / self.ops.max(1) as f64
    }
}

/// One level of the settled tree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LevelReport {
    /// Level number.
    pub level: usize,
    /// Tables.
    pub files: u64,
    /// Entries.
    pub entries: u64,
    /// Bytes of tables.
    pub bytes: u64,
    /// Bytes of filters.
    pub filter_bytes: u64,
    /// Filter bits per entry.
    pub bits_per_key: f64,
    /// False-positive rate the level's filters predict (1 without filters).
    pub expected_fpr: f64,
    /// Tables of the level consulted per absent lookup (from the traced sample).
    pub probes_per_absent_get: f64,
    /// Filter false positives over "absent"-or-false-positive checks in the get_absent
    /// phase, `None` without checks.
    pub measured_fpr: Option<f64>,
}

/// Bytes written per cause, as the engine counts them ([`Stats`]): where the write
/// amplification comes from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WriteBreakdown {
    /// User data written: keys and values (the denominator of every ratio here, and of the
    /// report's device write amplification).
    pub user_bytes: u64,
    /// The encoded write batches (the user data with each batch's header and lengths).
    pub batch_bytes: u64,
    /// Bytes appended to WALs.
    pub wal_bytes: u64,
    /// Bytes of level-0 tables written by flushes.
    pub flush_bytes: u64,
    /// Per level (index = level): bytes of tables compactions wrote into it.
    pub compaction_bytes: Vec<u64>,
    /// Per level: compactions that wrote into it.
    pub compactions: Vec<u64>,
    /// Bytes of tables rewritten by re-filters.
    pub refilter_bytes: u64,
    /// Tables moved down unchanged (nothing written for them).
    pub trivial_moves: u64,
    /// Bytes of those tables.
    pub trivial_move_bytes: u64,
}

impl WriteBreakdown {
    /// The split of `s`'s counters, for `user_bytes` of keys and values written.
    pub fn of(s: &Stats, user_bytes: u64) -> WriteBreakdown {
        WriteBreakdown {
            user_bytes,
            batch_bytes: s.user_bytes_written,
            wal_bytes: s.wal_bytes_written,
            flush_bytes: s.flush_bytes_written,
            compaction_bytes: s
                .levels
                .iter()
                .map(|l| l.compaction_bytes_written)
                .collect(),
            compactions: s.levels.iter().map(|l| l.compactions).collect(),
            refilter_bytes: s.refilter_bytes_written,
            trivial_moves: s.trivial_moves,
            trivial_move_bytes: s.trivial_move_bytes,
        }
    }

    /// Every byte written: WAL, flushes, compactions and re-filters.
    pub fn total(&self) -> u64 {
        self.wal_bytes
            + self.flush_bytes
            + self.compaction_bytes.iter().sum::<u64>()
            + self.refilter_bytes
    }

    /// `bytes` per user byte (0 before any write).
    pub fn per_user_byte(&self, bytes: u64) -> f64 {
        if self.user_bytes == 0 {
            0.0
        } else {
            bytes as f64 / self.user_bytes as f64
        }
    }
}

/// Absent-key lookups in detail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AbsentReport {
    /// Lookups traced with `get_explained` (after the timed phase).
    pub traced: u64,
    /// Tables consulted per lookup (filtered or not), from the trace.
    pub tables_probed_per_get: f64,
    /// Data blocks the filters predict per lookup: the sum over the tables consulted of their
    /// level's expected FPR (1 for a table without filter).
    pub expected_blocks_per_get: f64,
    /// Data blocks consulted per lookup in the timed phase (read from files + cache hits).
    pub measured_blocks_per_get: f64,
    /// Data blocks read from files per lookup in the timed phase.
    pub blocks_read_per_get: f64,
    /// Overall measured FPR: false positives over negative filter answers.
    pub measured_fpr: Option<f64>,
    /// Textbook expected false positives per absent lookup for this tree shape at this
    /// filter memory with the same bits on every level ([`monkey::textbook_fpr`]), each level
    /// weighted by the tables of it that traced absent lookups consulted.
    pub theory_uniform: f64,
    /// The same with the Monkey allocation of the same memory.
    pub theory_monkey: f64,
}

/// Everything one W1 (or W2) run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct W1Report {
    /// "W1" or "W2".
    pub workload: &'static str,
    /// What ran (see [`W1Config::label`]).
    pub label: String,
    /// The block compression (`none`, `lz4`, `zstd:3`).
    pub compression: String,
    /// N.
    pub keys: u64,
    /// Configured bits per key.
    pub bits_per_key: f64,
    /// Monkey allocation.
    pub monkey: bool,
    /// Filter kinds per level ([`W1Config::filter_kinds_label`]).
    pub filter_kinds: String,
    /// Block cache bytes.
    pub block_cache_bytes: usize,
    /// Table files read through memory maps.
    pub mmap_reads: bool,
    /// Level sizes from the bottom up.
    pub dynamic_levels: bool,
    /// Seed.
    pub seed: u64,
    /// Phases in order.
    pub phases: Vec<Phase>,
    /// The tree after the fill settled.
    pub levels: Vec<LevelReport>,
    /// Filter bytes over all tables.
    pub filter_bytes: u64,
    /// Filter bits per entry over all tables.
    pub filter_bits_per_key: f64,
    /// Write amplification of the fill (table bytes written per user byte).
    pub write_amplification: f64,
    /// Bytes the engine wrote during fill, flush and settle, per cause.
    pub writes: WriteBreakdown,
    /// Bytes the process sent to the device during fill and flush (WAL and tables, after
    /// the page cache) per byte of user data (keys and values); 0 where not accounted.
    pub device_write_amplification: f64,
    /// Bytes of every file in the database directory after the fill settled.
    pub bytes_on_disk: u64,
    /// `bytes_on_disk` over the live user data (N keys and values).
    pub space_amplification: f64,
    /// Tables after the fill settled.
    pub tables: u64,
    /// Time writers were stalled by the engine during fill, flush and overwrite, in µs:
    /// delayed (paced) plus stopped.
    pub stall_micros: u64,
    /// Of `stall_micros`, the time writers were stopped dead (the rest they were delayed).
    pub stop_micros: u64,
    /// The longest single write's stall (delayed and stopped together), in µs.
    pub longest_stall_micros: u64,
    /// The slowest single put of the fill and the overwrites, in ns (latencies saturate at
    /// `u32::MAX` ns, about 4.3 s).
    pub longest_put_ns: u64,
    /// The absent-key detail.
    pub absent: AbsentReport,
}

impl W1Report {
    /// The phase named `name`.
    pub fn phase(&self, name: &str) -> Option<&Phase> {
        self.phases.iter().find(|p| p.name == name)
    }
}

/// Traces `cfg.explain_sample` further absent lookups and combines them with the timed
/// phase's counters. Returns the report and the tables probed per lookup per level.
fn explain_absent(
    cfg: &W1Config,
    db: &Db,
    ks: &KeySpace,
    phase: &Phase,
) -> Result<(AbsentReport, Vec<f64>)> {
    let stats = db.stats();
    let mut probes = [0u64; NUM_LEVELS];
    let mut expected = 0.0;
    for j in 0..cfg.explain_sample {
        let trace = db.get_explained(ks.key(cfg.keys + cfg.get_absent + j))?;
        for t in &trace.tables {
            if t.verdict == FilterVerdict::OutOfRange {
                continue;
            }
            if let Some(p) = probes.get_mut(t.level) {
                *p += 1;
            }
            expected += match t.verdict {
                FilterVerdict::NoFilter => 1.0,
                _ => stats.levels.get(t.level).map_or(1.0, |l| l.expected_fpr),
            };
        }
    }
    let traced = cfg.explain_sample.max(1) as f64;
    let per_level: Vec<f64> = probes.iter().map(|&p| p as f64 / traced).collect();
    let e = &phase.engine;
    let negatives = e.filter_useful + e.filter_false_positives;

    // Theory for this shape and this memory: uniform vs Monkey (textbook rates), each level
    // weighted by the filters of it an absent lookup was traced to consult.
    let shape: Vec<LevelShape> = stats
        .levels
        .iter()
        .enumerate()
        .map(|(level, l)| LevelShape {
            entries: l.entries as f64,
            runs: if l.entries == 0 {
                0.0
            } else {
                per_level.get(level).copied().unwrap_or(0.0).max(1e-3)
            },
        })
        .collect();
    let entries: f64 = shape.iter().map(|s| s.entries).sum();
    let filter_bits: f64 = stats
        .levels
        .iter()
        .map(|l| (l.filter_bytes * 8) as f64)
        .sum();
    let bpk = if entries > 0.0 {
        filter_bits / entries
    } else {
        0.0
    };
    let uniform = vec![bpk; shape.len()];
    let monkey_bits = monkey::allocate(&shape, bpk, bloomkv::filter::MIN_BITS_PER_KEY);
    Ok((
        AbsentReport {
            traced: cfg.explain_sample,
            tables_probed_per_get: probes.iter().sum::<u64>() as f64 / traced,
            expected_blocks_per_get: expected / traced,
            measured_blocks_per_get: phase.per_op(e.data_blocks_read + e.block_cache_hits),
            blocks_read_per_get: phase.per_op(e.data_blocks_read),
            measured_fpr: (negatives > 0)
                .then(|| e.filter_false_positives as f64 / negatives as f64),
            theory_uniform: if bpk > 0.0 {
                monkey::expected_false_positives(&shape, &uniform)
            } else {
                0.0
            },
            theory_monkey: if bpk > 0.0 {
                monkey::expected_false_positives(&shape, &monkey_bits)
            } else {
                0.0
            },
        },
        per_level,
    ))
}

fn level_reports(settled: &Stats, probes: &[f64], phases: &[Phase]) -> Vec<LevelReport> {
    let absent = phases.iter().find(|p| p.name == "get_absent");
    settled
        .levels
        .iter()
        .enumerate()
        .filter(|(_, l)| l.files > 0)
        .map(|(level, l)| {
            let d = absent.and_then(|p| p.engine.levels.get(level));
            LevelReport {
                level,
                files: l.files,
                entries: l.entries,
                bytes: l.bytes,
                filter_bytes: l.filter_bytes,
                bits_per_key: l.filter_bits_per_key,
                expected_fpr: l.expected_fpr,
                probes_per_absent_get: probes.get(level).copied().unwrap_or(0.0),
                measured_fpr: d.and_then(|d| {
                    let neg = d.filter_useful + d.filter_false_positives;
                    (neg > 0).then(|| d.filter_false_positives as f64 / neg as f64)
                }),
            }
        })
        .collect()
}
