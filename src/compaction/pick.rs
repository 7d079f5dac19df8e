//! What to compact: the level most in need of it, and which of its tables.
//!
//! Level 0 is compacted when it holds `level0_compaction_trigger` tables; level `n >= 1` when
//! its bytes exceed `max_bytes_for_level_base * level_size_multiplier^(n-1)`. The level with
//! the highest score goes first. Level 0 goes whole (its tables overlap); a deeper level gives
//! one table at a time, the one overlapping the least of the next level for its size, or
//! round-robin after its compaction pointer (`Options::compaction_pri`). Either way the tables
//! of the next level that overlap the inputs join them.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use crate::key;
use crate::options::{CompactionPri, NUM_LEVELS, Options};
use crate::version::{TableFile, Version};

/// The size level `level` (>= 1) may reach before it is compacted.
pub(crate) fn max_bytes_for_level(opts: &Options, level: usize) -> u64 {
    let mut bytes = opts.max_bytes_for_level_base;
    for _ in 1..level {
        bytes = bytes.saturating_mul(opts.level_size_multiplier.max(2));
    }
    bytes
}

/// The levels due for compaction (score at least 1) with their scores, highest first.
pub(crate) fn scores(version: &Version, opts: &Options) -> Vec<(usize, f64)> {
    let mut due: Vec<(usize, f64)> = (0..NUM_LEVELS - 1)
        .map(|level| {
            let score = if level == 0 {
                // Never wait for more files than writers may create before they stall.
                let trigger = opts
                    .level0_compaction_trigger
                    .min(opts.level0_stop_writes)
                    .max(1);
                version.levels()[0].len() as f64 / trigger as f64
            } else {
                version.level_bytes(level) as f64 / max_bytes_for_level(opts, level) as f64
            };
            (level, score)
        })
        .filter(|&(_, score)| score >= 1.0)
        .collect();
    // Stable: of equal scores, the upper level goes first.
    due.sort_by(|a, b| b.1.total_cmp(&a.1));
    due
}

/// The inputs of the jobs running now, so that a job picked beside them takes none of their
/// tables. At most one compaction per pair of levels runs at a time: two compactions into the
/// same level could write overlapping tables there, and the tombstones a compaction drops are
/// judged by what the levels below its output hold, which only a compaction out of the output
/// level or deeper changes (and such a compaction shares no key with this one, since its
/// inputs are disjoint from this one's).
#[derive(Debug, Default)]
pub(crate) struct Busy {
    tables: BTreeSet<u64>,
    /// `out_of[l]`: a compaction from level `l` into `l + 1` runs.
    out_of: [bool; NUM_LEVELS],
}

impl Busy {
    /// File numbers of the tables running jobs read.
    pub fn tables(&self) -> impl Iterator<Item = u64> + '_ {
        self.tables.iter().copied()
    }

    /// Records a job that starts.
    pub fn take(&mut self, claim: &Claim) {
        if let Some(l) = claim.out_of {
            self.out_of[l] = true;
        }
        self.tables.extend(&claim.tables);
    }

    /// Records that a job taken with `claim` has ended.
    pub fn release(&mut self, claim: &Claim) {
        if let Some(l) = claim.out_of {
            self.out_of[l] = false;
        }
        for n in &claim.tables {
            self.tables.remove(n);
        }
    }

    fn conflicts(&self, plan: &Plan) -> bool {
        self.out_of[plan.level]
            || plan
                .all_inputs()
                .any(|f| self.tables.contains(&f.meta.number))
    }
}

/// What one running job holds: the level it compacts out of (`None` for a re-filter, which
/// stays on its level) and the file numbers of its inputs.
#[derive(Debug)]
pub(crate) struct Claim {
    pub out_of: Option<usize>,
    pub tables: Vec<u64>,
}

/// A plan for compacting `level` that takes no table of the running jobs in `busy`: all of
/// level 0, or on a deeper level the first table in `pri`'s order whose plan is free. The
/// order starts after the level's compaction `pointer` (round-robin), and under
/// [`CompactionPri::MinOverlappingRatio`] is then sorted by how many bytes of the next level
/// each table overlaps per byte of its own (stable, so equal ratios keep the round-robin
/// order).
pub(crate) fn plan_avoiding(
    version: &Version,
    level: usize,
    pointer: Option<&[u8]>,
    pri: CompactionPri,
    busy: &Busy,
) -> Option<Plan> {
    if busy.out_of[level] {
        return None;
    }
    if level == 0 {
        return plan_for(version, 0, None, false).filter(|p| !busy.conflicts(p));
    }
    let files = &version.levels()[level];
    let start = pointer
        .and_then(|p| {
            files
                .iter()
                .position(|f| key::compare(&f.meta.largest, p).is_gt())
        })
        .unwrap_or(0);
    let mut order: Vec<&Arc<TableFile>> = (0..files.len())
        .map(|i| &files[(start + i) % files.len()])
        .filter(|f| !busy.tables.contains(&f.meta.number))
        .collect();
    if pri == CompactionPri::MinOverlappingRatio {
        let below = &version.levels()[level + 1];
        let mut ratios: Vec<(f64, &Arc<TableFile>)> = order
            .into_iter()
            .map(|f| {
                (
                    overlap_bytes(below, f) as f64 / f.meta.size.max(1) as f64,
                    f,
                )
            })
            .collect();
        ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
        order = ratios.into_iter().map(|(_, f)| f).collect();
    }
    order
        .into_iter()
        .filter_map(|f| plan_with_first(version, level, vec![Arc::clone(f)]))
        .find(|p| !busy.conflicts(p))
}

/// Bytes of the tables of `below` (one sorted, disjoint level) whose user keys overlap `f`'s.
fn overlap_bytes(below: &[Arc<TableFile>], f: &TableFile) -> u64 {
    let (lo, hi) = (f.smallest_user_key(), f.largest_user_key());
    let first = below.partition_point(|b| b.largest_user_key() < lo);
    below[first..]
        .iter()
        .take_while(|b| b.smallest_user_key() <= hi)
        .map(|b| b.meta.size)
        .sum()
}

/// One planned compaction: `inputs[0]` from `level`, `inputs[1]` from `level + 1`.
#[derive(Debug)]
pub(crate) struct Plan {
    pub level: usize,
    pub inputs: [Vec<Arc<TableFile>>; 2],
    /// Merge even a lone table with nothing below it (a manual compaction's last step must
    /// drop overwritten versions and tombstones, which a trivial move would keep).
    pub no_trivial_move: bool,
}

impl Plan {
    pub fn all_inputs(&self) -> impl Iterator<Item = &Arc<TableFile>> {
        self.inputs.iter().flatten()
    }
}

fn user_range(files: &[Arc<TableFile>]) -> Option<(Vec<u8>, Vec<u8>)> {
    let lo = files.iter().map(|f| f.smallest_user_key()).min()?;
    let hi = files.iter().map(|f| f.largest_user_key()).max()?;
    Some((lo.to_vec(), hi.to_vec()))
}

fn overlapping(files: &[Arc<TableFile>], lo: &[u8], hi: &[u8]) -> Vec<Arc<TableFile>> {
    files
        .iter()
        .filter(|f| f.largest_user_key() >= lo && f.smallest_user_key() <= hi)
        .cloned()
        .collect()
}

/// Chooses the inputs for compacting `level`: all of level 0 (its tables overlap), or the
/// next table of a deeper level after its compaction pointer, round-robin.
pub(crate) fn plan_for(
    version: &Version,
    level: usize,
    pointer: Option<&[u8]>,
    whole_level: bool,
) -> Option<Plan> {
    let files = &version.levels()[level];
    let first: Vec<Arc<TableFile>> = if level == 0 || whole_level {
        files.clone()
    } else {
        let pick = pointer
            .and_then(|p| {
                files
                    .iter()
                    .find(|f| key::compare(&f.meta.largest, p).is_gt())
            })
            .or_else(|| files.first())?;
        vec![Arc::clone(pick)]
    };
    plan_with_first(version, level, first)
}

/// The plan compacting `first` (tables of `level`) with the tables of `level + 1` they
/// overlap; on level 0, with every table overlapping them.
fn plan_with_first(
    version: &Version,
    level: usize,
    mut first: Vec<Arc<TableFile>>,
) -> Option<Plan> {
    let files = &version.levels()[level];
    let (lo, hi) = user_range(&first)?;
    if level == 0 {
        // Level-0 tables overlapping the chosen range must go together, or an older version
        // could end up below a newer one.
        first = overlapping(files, &lo, &hi);
    }
    let (lo, hi) = user_range(&first)?;
    let next = overlapping(&version.levels()[level + 1], &lo, &hi);
    Some(Plan {
        level,
        inputs: [first, next],
        no_trivial_move: false,
    })
}

/// A manual compaction's key range (user keys), as `Db::compact_range` takes it.
pub(crate) type UserRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// Whether `f`'s user keys reach into `range`.
fn touches(f: &TableFile, range: &UserRange) -> bool {
    let above_start = match &range.0 {
        Bound::Included(lo) => f.largest_user_key() >= lo.as_slice(),
        Bound::Excluded(lo) => f.largest_user_key() > lo.as_slice(),
        Bound::Unbounded => true,
    };
    let below_end = match &range.1 {
        Bound::Included(hi) => f.smallest_user_key() <= hi.as_slice(),
        Bound::Excluded(hi) => f.smallest_user_key() < hi.as_slice(),
        Bound::Unbounded => true,
    };
    above_start && below_end
}

/// The deepest level (at least 1) holding a table that reaches into `range`: a manual
/// compaction of `range` pushes it down to there. Each step must be planned on the version
/// the previous one left, so this gives the target, and [`manual_step`] each step's plan.
pub(crate) fn manual_target(version: &Version, range: &UserRange) -> usize {
    (1..NUM_LEVELS)
        .rev()
        .find(|&l| version.levels()[l].iter().any(|f| touches(f, range)))
        .unwrap_or(1)
}

/// Step `level` (`0..target`) of a manual compaction of `range` down to `target`: the tables
/// of `level` that reach into the range (on level 0, with every table overlapping them) and
/// the tables of `level + 1` they overlap. The last step merges even a lone table, and takes
/// the target level's tables in the range even when the level above has none there: its
/// overwritten versions and tombstones must go, which a trivial move would keep. Nothing
/// outside the range is compacted beyond the tables that overlap it.
pub(crate) fn manual_step(
    version: &Version,
    level: usize,
    target: usize,
    range: &UserRange,
) -> Option<Plan> {
    let files = &version.levels()[level];
    let mut first: Vec<Arc<TableFile>> = files
        .iter()
        .filter(|f| touches(f, range))
        .cloned()
        .collect();
    if level == 0
        && let Some((lo, hi)) = user_range(&first)
    {
        // Level-0 tables overlapping the chosen ones must go together, or an older version
        // could end up below a newer one.
        first = overlapping(files, &lo, &hi);
    }
    let last = level + 1 == target;
    let below = &version.levels()[level + 1];
    let mut next = match user_range(&first) {
        Some((lo, hi)) => overlapping(below, &lo, &hi),
        None if last => Vec::new(),
        None => return None,
    };
    if last {
        // Both runs reach into the range, so together they are still one run of the level.
        for f in below.iter().filter(|f| touches(f, range)) {
            if !next.iter().any(|n| n.meta.number == f.meta.number) {
                next.push(Arc::clone(f));
            }
        }
        next.sort_by(|a, b| key::compare(&a.meta.smallest, &b.meta.smallest));
    }
    let plan = Plan {
        level,
        inputs: [first, next],
        no_trivial_move: last,
    };
    let any = plan.all_inputs().next().is_some();
    any.then_some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::test_version::version;

    fn first_input(v: &Version, pointer: Option<&[u8]>, pri: CompactionPri) -> u64 {
        let plan = plan_avoiding(v, 1, pointer, pri, &Busy::default()).unwrap();
        plan.inputs[0][0].meta.number
    }

    /// Level 1: table 1 (a-c) over a dense stretch of level 2, table 2 (d-f) over nothing,
    /// table 3 (g-i) over a little.
    fn shape() -> Version {
        version(&[
            (1, 1, "a", "c", 100, 10.0),
            (1, 2, "d", "f", 100, 10.0),
            (1, 3, "g", "i", 100, 10.0),
            (2, 10, "a", "b", 1000, 10.0),
            (2, 11, "b1", "c", 1000, 10.0),
            (2, 12, "h", "h1", 50, 10.0),
            (2, 13, "x", "z", 5000, 10.0),
        ])
    }

    #[test]
    fn min_overlapping_ratio_takes_the_table_over_the_least_of_the_next_level() {
        let v = shape();
        assert_eq!(first_input(&v, None, CompactionPri::MinOverlappingRatio), 2);
        // The pointer only breaks ties: table 2 still wins from after table 2.
        let past_d = key::encode(b"f", 1, key::Kind::Put);
        assert_eq!(
            first_input(&v, Some(&past_d), CompactionPri::MinOverlappingRatio),
            2
        );
    }

    #[test]
    fn round_robin_takes_the_table_after_the_pointer() {
        let v = shape();
        assert_eq!(first_input(&v, None, CompactionPri::RoundRobin), 1);
        let past_c = key::encode(b"c", 1, key::Kind::Put);
        assert_eq!(first_input(&v, Some(&past_c), CompactionPri::RoundRobin), 2);
        let past_f = key::encode(b"f", 1, key::Kind::Put);
        assert_eq!(first_input(&v, Some(&past_f), CompactionPri::RoundRobin), 3);
    }

    #[test]
    fn a_busy_table_gives_way_to_the_next_best() {
        let v = shape();
        let mut busy = Busy::default();
        busy.take(&Claim {
            out_of: None,
            tables: vec![2],
        });
        let plan = plan_avoiding(&v, 1, None, CompactionPri::MinOverlappingRatio, &busy).unwrap();
        assert_eq!(plan.inputs[0][0].meta.number, 3);
        assert_eq!(
            plan.inputs[1]
                .iter()
                .map(|f| f.meta.number)
                .collect::<Vec<_>>(),
            vec![12]
        );
    }

    #[test]
    fn overlap_counts_only_the_tables_in_range() {
        let v = shape();
        let below = &v.levels()[2];
        let l1 = &v.levels()[1];
        assert_eq!(overlap_bytes(below, &l1[0]), 200_000);
        assert_eq!(overlap_bytes(below, &l1[1]), 0);
        assert_eq!(overlap_bytes(below, &l1[2]), 5_000);
    }
}
