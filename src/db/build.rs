//! Writing a new table (for a flush or a compaction) and describing it for the manifest.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::Env;
use crate::error::Result;
use crate::filename;
use crate::filter::monkey::{self, LevelShape};
use crate::filter::{BloomPolicy, FilterPolicy, MIN_BITS_PER_KEY};
use crate::manifest::FileMeta;
use crate::options::{FilterAllocation, NUM_LEVELS, Options};
use crate::sstable::{TableBuildOptions, TableBuilder};
use crate::table_cache::TableCache;
use crate::version::{TableFile, Version};

/// A filter policy with `bits` bits per key, or `None` for 0.
fn filter_with_bits(bits: f64) -> Option<Arc<dyn FilterPolicy>> {
    (bits > 0.0).then(|| Arc::new(BloomPolicy::new(bits)) as Arc<dyn FilterPolicy>)
}

/// Largest correction, in bits per key, that one write applies to steer the realized filter
/// memory back to the budget (so one small table never absorbs the whole tree's drift).
const MAX_BUDGET_CORRECTION: f64 = 1.0;

/// Filter bits per key for `new_entries` entries written to `level`, where `shape` is the
/// tree once they are installed and `staying` lists the tables (with their levels) that
/// remain as they are.
///
/// Uniform: the configured figure. Monkey: the level's share of the optimum for `shape`,
/// corrected by the gap between the memory the staying tables' filters really take and what
/// the optimum gives them. Bits are fixed when a table is written, for the shape of that
/// moment, so without this the realized memory drifts from the budget (runs of W1 ended
/// 6-8% over or under it); with it, every write brings the total back toward
/// `bits_per_key x entries`, within [`MAX_BUDGET_CORRECTION`] bits per key per write.
pub(crate) fn filter_bits_for_write<'a>(
    opts: &Options,
    shape: &Shape,
    staying: impl Iterator<Item = (usize, &'a FileMeta)>,
    new_entries: u64,
    level: usize,
) -> f64 {
    let FilterAllocation::Monkey { bits_per_key } = opts.filter_allocation else {
        return opts.bits_per_key_for_level(level);
    };
    let (entries, probes) = shape;
    let ideal = monkey::allocate(
        &monkey_shape(entries, probes),
        bits_per_key,
        MIN_BITS_PER_KEY,
    );
    let wanted = ideal.get(level).copied().unwrap_or(0.0);
    if new_entries == 0 || wanted <= 0.0 {
        return wanted;
    }
    let (mut real, mut target) = (0.0, 0.0);
    for (l, meta) in staying {
        real += (meta.filter_bytes * 8) as f64;
        target += meta.entries as f64 * ideal.get(l).copied().unwrap_or(0.0);
    }
    let correction =
        ((target - real) / new_entries as f64).clamp(-MAX_BUDGET_CORRECTION, MAX_BUDGET_CORRECTION);
    (wanted + correction).max(MIN_BITS_PER_KEY)
}

fn monkey_shape(entries: &[u64; NUM_LEVELS], probes: &[f64; NUM_LEVELS]) -> Vec<LevelShape> {
    entries
        .iter()
        .zip(probes)
        .map(|(&e, &r)| LevelShape {
            entries: e as f64,
            runs: if e > 0 { r.max(1e-3) } else { 0.0 },
        })
        .collect()
}

/// The share of the database's keys that lie in `[lo, hi]` (user keys), judged by the
/// reference level (the one holding most keys): the entries of its tables that overlap
/// the range over all its entries. Coarse (whole tables), capped at 1.
fn key_share(reference: &[Arc<TableFile>], total: u64, lo: &[u8], hi: &[u8]) -> f64 {
    if total == 0 {
        return 1.0;
    }
    let first = reference.partition_point(|f| f.largest_user_key() < lo);
    let covered: u64 = reference[first..]
        .iter()
        .take_while(|f| f.smallest_user_key() <= hi)
        .map(|f| f.meta.entries)
        .sum();
    (covered as f64 / total as f64).min(1.0)
}

/// The expected number of `files`' filters a lookup of an absent (uniformly placed) key
/// consults: the sum of their key shares, or one per table when `files` are themselves the
/// reference level's or only level 0 holds tables.
pub(crate) fn expected_probes(version: &Version, level: usize, files: &[Arc<TableFile>]) -> f64 {
    // The level holding the most entries stands for the key distribution (in a settled tree
    // the last level; while a new last level is being filled, the one above it).
    let reference = (1..NUM_LEVELS)
        .filter(|&l| !version.levels()[l].is_empty())
        .max_by_key(|&l| {
            version.levels()[l]
                .iter()
                .map(|f| f.meta.entries)
                .sum::<u64>()
        });
    match reference {
        Some(r) if r != level => {
            let refs = &version.levels()[r];
            let total = refs.iter().map(|f| f.meta.entries).sum();
            let share: f64 = files
                .iter()
                .map(|f| key_share(refs, total, f.smallest_user_key(), f.largest_user_key()))
                .sum();
            if level == 0 { share } else { share.min(1.0) }
        }
        _ if level == 0 => files.len() as f64,
        _ => f64::from(u8::from(!files.is_empty())),
    }
}

/// Per level: entries, and the expected number of tables an absent-key lookup probes.
pub(crate) type Shape = ([u64; NUM_LEVELS], [f64; NUM_LEVELS]);

/// The entries per level of `version`, and the filters per level a lookup of an absent key is
/// expected to consult. Monkey's optimum weighs each level by the second figure: a level that
/// covers only part of the key space is consulted by only part of the lookups, so its false
/// positives cost less and it gets fewer bits.
pub(crate) fn level_shape(version: &Version) -> Shape {
    let mut entries = [0; NUM_LEVELS];
    let mut probes = [0.0; NUM_LEVELS];
    for (level, files) in version.levels().iter().enumerate() {
        entries[level] = files.iter().map(|f| f.meta.entries).sum();
        probes[level] = expected_probes(version, level, files);
    }
    (entries, probes)
}

/// Whether a table whose filter has `has` bits per key may stay as it is at a level that
/// wants `wanted` (a trivial move). Monkey's figures move continuously with the tree's
/// shape, so under it a quarter of a bit (a rate within ~16%) counts as a match.
pub(crate) fn filter_fits(opts: &Options, has: f64, wanted: f64) -> bool {
    let tolerance = match opts.filter_allocation {
        FilterAllocation::Uniform => 1e-9,
        FilterAllocation::Monkey { .. } => 0.25,
    };
    (has - wanted).abs() < tolerance || (wanted <= 0.0 && has <= 0.0)
}

/// A table being written.
pub(crate) struct OutputTable {
    builder: TableBuilder,
    number: u64,
    path: PathBuf,
}

impl OutputTable {
    /// Creates table file `number` for `level`, with the level's configured filter.
    pub fn create(
        env: &dyn Env,
        dir: &Path,
        opts: &Options,
        number: u64,
        level: usize,
    ) -> Result<OutputTable> {
        Self::create_with_bits(env, dir, opts, number, opts.bits_per_key_for_level(level))
    }

    /// Creates table file `number` with a filter of `filter_bits` bits per key (0: none).
    pub fn create_with_bits(
        env: &dyn Env,
        dir: &Path,
        opts: &Options,
        number: u64,
        filter_bits: f64,
    ) -> Result<OutputTable> {
        let path = filename::table_path(dir, number);
        let file = env.create_writable(&path)?;
        let builder = TableBuilder::new(
            file,
            path.clone(),
            TableBuildOptions {
                block_bytes: opts.block_bytes,
                restart_interval: opts.block_restart_interval,
                filter: filter_with_bits(filter_bits),
            },
        );
        Ok(OutputTable {
            builder,
            number,
            path,
        })
    }

    pub fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        self.builder.add(ikey, value)
    }

    pub fn estimated_size(&self) -> u64 {
        self.builder.estimated_file_size()
    }

    pub fn is_empty(&self) -> bool {
        self.builder.num_entries() == 0
    }

    /// Finishes (and fsyncs) the file, then opens it through the table cache, which both
    /// verifies what was written and reads the filter's own expected false-positive rate.
    pub fn finish(self, env: &dyn Env, cache: &TableCache) -> Result<FileMeta> {
        let number = self.number;
        let path = self.path.clone();
        let result = self.builder.finish().and_then(|props| {
            let table = cache.get(number)?;
            Ok(FileMeta {
                number,
                size: props.file_size,
                smallest: props.smallest_key.clone(),
                largest: props.largest_key.clone(),
                entries: props.entries,
                deletions: props.deletions,
                filter_bits_per_key: if table.has_filter() {
                    props.filter_bits_per_key
                } else {
                    0.0
                },
                filter_bytes: props.filter_bytes,
                expected_fpr: table.expected_fp_rate().unwrap_or(1.0),
            })
        });
        if result.is_err() {
            cache.evict(number);
            let _ = env.remove_file(&path);
        }
        result
    }

    /// Gives up on the table and deletes its file.
    pub fn abandon(self, env: &dyn Env) {
        drop(self.builder);
        let _ = env.remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(entries: u64, bits_per_key: f64) -> FileMeta {
        FileMeta {
            number: 1,
            size: 0,
            smallest: Vec::new(),
            largest: Vec::new(),
            entries,
            deletions: 0,
            filter_bits_per_key: bits_per_key,
            filter_bytes: (entries as f64 * bits_per_key / 8.0) as u64,
            expected_fpr: 0.01,
        }
    }

    fn monkey(bits_per_key: f64) -> Options {
        Options {
            filter_allocation: FilterAllocation::Monkey { bits_per_key },
            ..Options::default()
        }
    }

    /// L1: 10k keys, L2: 100k, every lookup consults both.
    fn shape() -> Shape {
        let mut entries = [0; NUM_LEVELS];
        let mut probes = [0.0; NUM_LEVELS];
        entries[1] = 10_000;
        entries[2] = 100_000;
        probes[1] = 1.0;
        probes[2] = 1.0;
        (entries, probes)
    }

    #[test]
    fn uniform_ignores_the_shape_and_the_drift() {
        let opts = Options::default();
        let staying = [(2, meta(100_000, 30.0))];
        let bits = filter_bits_for_write(
            &opts,
            &shape(),
            staying.iter().map(|(l, m)| (*l, m)),
            10_000,
            1,
        );
        assert_eq!(bits, 10.0);
    }

    #[test]
    fn monkey_on_budget_gives_the_optimum_and_small_levels_more() {
        let opts = monkey(10.0);
        let (entries, probes) = shape();
        let ideal = monkey::allocate(&monkey_shape(&entries, &probes), 10.0, 1.0);
        assert!(ideal[1] > 10.0 && ideal[2] < 10.0, "{ideal:?}");
        // The staying L2 filters took exactly what the optimum gives them.
        let staying = [(2, meta(100_000, ideal[2]))];
        let bits = filter_bits_for_write(
            &opts,
            &(entries, probes),
            staying.iter().map(|(l, m)| (*l, m)),
            10_000,
            1,
        );
        assert!((bits - ideal[1]).abs() < 0.01, "{bits} vs {ideal:?}");
    }

    #[test]
    fn monkey_steers_memory_back_to_the_budget_within_the_cap() {
        let opts = monkey(10.0);
        let (entries, probes) = shape();
        let ideal = monkey::allocate(&monkey_shape(&entries, &probes), 10.0, 1.0);
        // L2 overspent by 0.05 bits/key over 100k keys: 5k bits, 0.5 bit/key of the new table.
        let staying = [(2, meta(100_000, ideal[2] + 0.05))];
        let bits = filter_bits_for_write(
            &opts,
            &(entries, probes),
            staying.iter().map(|(l, m)| (*l, m)),
            10_000,
            1,
        );
        assert!(
            (bits - (ideal[1] - 0.5)).abs() < 0.01,
            "{bits} vs {ideal:?}"
        );
        // A far larger drift is corrected by at most MAX_BUDGET_CORRECTION per write.
        let staying = [(2, meta(100_000, ideal[2] - 3.0))];
        let bits = filter_bits_for_write(
            &opts,
            &(entries, probes),
            staying.iter().map(|(l, m)| (*l, m)),
            10_000,
            1,
        );
        assert!(
            (bits - (ideal[1] + MAX_BUDGET_CORRECTION)).abs() < 0.01,
            "{bits}"
        );
    }
}
