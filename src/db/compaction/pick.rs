//! What to compact: the level most in need of it, and which of its tables.
//!
//! Level 0 is compacted when it holds `level0_compaction_trigger` tables; level `n >= 1` when
//! its bytes exceed its target ([`LevelTargets`]: fixed sizes from level 1 down, or sized
//! from the bottom up under `Options::level_compaction_dynamic_level_bytes`). The level with
//! the highest score goes first. Level 0 goes whole (its tables overlap) into the base level
//! (level 1, or under dynamic sizes the level below the empty ones); a deeper level gives
//! one table at a time, the one overlapping the least of the next level for its size, or
//! round-robin after its compaction pointer (`Options::compaction_pri`). Either way the tables
//! of the output level that overlap the inputs join them.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use crate::util::key;
use crate::options::{CompactionPri, NUM_LEVELS, Options};
use crate::db::version::{TableFile, Version};

/// The size level `level` (>= 1) may reach before it is compacted, with static sizes.
pub(crate) fn max_bytes_for_level(opts: &Options, level: usize) -> u64 {
    let mut bytes = opts.max_bytes_for_level_base;
    for _ in 1..level {
        bytes = bytes.saturating_mul(opts.level_size_multiplier.max(2));
    }
    bytes
}

/// What each level may hold in one version, and where level 0 compacts into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LevelTargets {
    /// The level level 0 compacts into: 1 with static sizes; under dynamic sizes the levels
    /// between 0 and it are empty.
    pub base_level: usize,
    /// `max_bytes[l]`: the size level `l` (>= 1) may reach before it is compacted (index 0
    /// unused: level 0 is scored by its table count).
    pub max_bytes: [u64; NUM_LEVELS],
    /// Under dynamic sizes, levels `1..=drain_through` are more than the data needs (they
    /// are left over from a smaller tree or from one built with static sizes): any of them
    /// holding tables is due for compaction until it is empty. 0: none.
    pub drain_through: usize,
}

impl LevelTargets {
    /// The level a compaction out of `level` writes to.
    pub fn output_of(&self, level: usize) -> usize {
        if level == 0 {
            self.base_level
        } else {
            level + 1
        }
    }
}

/// The level targets of `version` under `opts`.
///
/// Dynamic sizes (RocksDB's `level_compaction_dynamic_level_bytes`), with `m` the multiplier
/// and `B` `max_bytes_for_level_base`:
/// * No table below level 0: the base level is the last one (level 0 compacts into it).
/// * Otherwise the size `S` of the largest level below 0 is taken as the last level's and
///   projected up: `t(l) = S / m^(last - l)` (divided a level at a time, rounding down). The
///   base level is the deepest level `b` no deeper than the first non-empty level `f` with
///   `t(b) <= B`, or level 1 if there is none (then `t(1)` counts as `B`). Not deeper than
///   `f`, because a key compacted out of level 0 must land above every older version of it.
/// * The base level's target is `max(t(b), 1)` (or `B / m + 1` when `t(f) <= B / m`), each
///   level below it `m` times the one above, and no level's below `B`: level 0 would
///   otherwise be starved by small levels that always score high.
/// * The deepest level `u` (from `last - 1` up to `f`) with `t(u) <= B / m`, if any, marks
///   levels `1..=u` as not needed: while they hold tables they are compacted down, so a tree
///   with more levels than its data needs (built with static sizes, or shrunk by deletes)
///   drains into the deeper ones, and the base level moves down behind it.
pub(crate) fn level_targets(version: &Version, opts: &Options) -> LevelTargets {
    let mut max_bytes = [0; NUM_LEVELS];
    if !opts.level_compaction_dynamic_level_bytes {
        for (level, bytes) in max_bytes.iter_mut().enumerate().skip(1) {
            *bytes = max_bytes_for_level(opts, level);
        }
        return LevelTargets {
            base_level: 1,
            max_bytes,
            drain_through: 0,
        };
    }
    let last = NUM_LEVELS - 1;
    let m = opts.level_size_multiplier.max(2);
    let base_max = opts.max_bytes_for_level_base;
    let base_min = base_max / m;
    let first = (1..NUM_LEVELS).find(|&l| !version.levels()[l].is_empty());
    let Some(first) = first else {
        max_bytes[1..].fill(base_max);
        return LevelTargets {
            base_level: last,
            max_bytes,
            drain_through: 0,
        };
    };
    let largest = (1..NUM_LEVELS)
        .map(|l| version.level_bytes(l))
        .max()
        .unwrap_or(0);
    let mut size = largest;
    let mut drain_through = 0;
    for l in (first..last).rev() {
        size /= m;
        if drain_through == 0 && size <= base_min {
            drain_through = l;
        }
    }
    // `size` is now t(first).
    let (base_level, base_size) = if size <= base_min {
        (first, base_min + 1)
    } else {
        let mut base = first;
        while base > 1 && size > base_max {
            base -= 1;
            size /= m;
        }
        (
            base,
            if size > base_max {
                base_max
            } else {
                size.max(1)
            },
        )
    };
    let mut level_size = base_size;
    for (level, bytes) in max_bytes.iter_mut().enumerate() {
        if level < base_level {
            // Empty, or draining: a level above the base that holds tables is due whatever
            // its size (see `scores`); this only keeps the figure meaningful.
            *bytes = base_max;
            continue;
        }
        if level > base_level {
            level_size = level_size.saturating_mul(m);
        }
        *bytes = level_size.max(base_max);
    }
    LevelTargets {
        base_level,
        max_bytes,
        drain_through,
    }
}

/// The levels due for compaction (score at least 1) with their scores, highest first.
pub(crate) fn scores(
    version: &Version,
    opts: &Options,
    targets: &LevelTargets,
) -> Vec<(usize, f64)> {
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
                let bytes = version.level_bytes(level);
                let score = bytes as f64 / targets.max_bytes[level] as f64;
                if bytes > 0 && level <= targets.drain_through {
                    // A level the tree no longer needs: due until it is empty, ahead of a
                    // level just at its target.
                    score.max(1.0) + 0.01
                } else {
                    score
                }
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
/// tables. At most one compaction out of a level and one into a level run at a time: two
/// compactions into the same level could write overlapping tables there, and the tombstones a
/// compaction drops are judged by what the levels below its output hold, which only a
/// compaction out of the output level or deeper changes (and such a compaction shares no key
/// with this one, since its inputs are disjoint from this one's). With static sizes every
/// compaction goes from `l` into `l + 1`, so this is one compaction per pair of levels; under
/// dynamic sizes level 0 goes into the base level, which a compaction from the level above
/// it (a level being drained) could also be writing into.
#[derive(Debug, Default)]
pub(crate) struct Busy {
    tables: BTreeSet<u64>,
    /// `out_of[l]`: a compaction from level `l` runs.
    out_of: [bool; NUM_LEVELS],
    /// `into[l]`: a compaction into level `l` runs.
    into: [bool; NUM_LEVELS],
}

impl Busy {
    /// File numbers of the tables running jobs read.
    pub fn tables(&self) -> impl Iterator<Item = u64> + '_ {
        self.tables.iter().copied()
    }

    /// Records a job that starts.
    pub fn take(&mut self, claim: &Claim) {
        if let Some((from, to)) = claim.levels {
            self.out_of[from] = true;
            self.into[to] = true;
        }
        self.tables.extend(&claim.tables);
    }

    /// Records that a job taken with `claim` has ended.
    pub fn release(&mut self, claim: &Claim) {
        if let Some((from, to)) = claim.levels {
            self.out_of[from] = false;
            self.into[to] = false;
        }
        for n in &claim.tables {
            self.tables.remove(n);
        }
    }

    fn conflicts(&self, plan: &Plan) -> bool {
        self.out_of[plan.level]
            || self.into[plan.out_level]
            || plan
                .all_inputs()
                .any(|f| self.tables.contains(&f.meta.number))
    }
}

/// What one running job holds: the levels it compacts out of and into (`None` for a
/// re-filter, which stays on its level) and the file numbers of its inputs.
#[derive(Debug)]
pub(crate) struct Claim {
    pub levels: Option<(usize, usize)>,
    pub tables: Vec<u64>,
}

/// A plan for compacting `level` into `targets.output_of(level)` that takes no table of the
/// running jobs in `busy`: all of level 0, or on a deeper level the first table in `pri`'s order whose plan is free. The
/// order starts after the level's compaction `pointer` (round-robin), and under
/// [`CompactionPri::MinOverlappingRatio`] is then sorted by how many bytes of the next level
/// each table overlaps per byte of its own (stable, so equal ratios keep the round-robin
/// order).
pub(crate) fn plan_avoiding(
    version: &Version,
    level: usize,
    pointer: Option<&[u8]>,
    pri: CompactionPri,
    targets: &LevelTargets,
    busy: &Busy,
) -> Option<Plan> {
    let out_level = targets.output_of(level);
    if busy.out_of[level] || busy.into[out_level] {
        return None;
    }
    if level == 0 {
        let all = version.levels()[0].clone();
        return plan_with_first(version, 0, out_level, all).filter(|p| !busy.conflicts(p));
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
        .filter_map(|f| plan_with_first(version, level, out_level, vec![Arc::clone(f)]))
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

/// One planned compaction: `inputs[0]` from `level`, `inputs[1]` from `out_level`, where the
/// outputs go. Every level strictly between the two is empty.
#[derive(Debug)]
pub(crate) struct Plan {
    pub level: usize,
    pub out_level: usize,
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

/// The plan compacting `first` (tables of `level`) with the tables of `out_level` they
/// overlap; on level 0, with every table overlapping them.
fn plan_with_first(
    version: &Version,
    level: usize,
    out_level: usize,
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
    let next = overlapping(&version.levels()[out_level], &lo, &hi);
    Some(Plan {
        level,
        out_level,
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

/// The deepest level (at least 1) holding a table that reaches into `range`, or, when none
/// does, the base level (where level 0 goes: level 1 with static sizes): a manual compaction
/// of `range` pushes it down to there. Each step must be planned on the version the previous
/// one left, so this gives the target, [`manual_output`] each step's output level, and
/// [`manual_step`] its plan.
pub(crate) fn manual_target(version: &Version, opts: &Options, range: &UserRange) -> usize {
    (1..NUM_LEVELS)
        .rev()
        .find(|&l| version.levels()[l].iter().any(|f| touches(f, range)))
        .unwrap_or_else(|| level_targets(version, opts).base_level)
}

/// Where the step of a manual compaction out of `level` (below `target`) writes: the next
/// level holding any table, or `target`. Skipping empty levels rewrites nothing twice, and
/// keeps the levels above the base level empty under dynamic sizes; it is safe because an
/// empty level holds no older version of any key the step moves past it. (A manual
/// compaction runs alone: only flushes, into level 0, run beside it, so a level empty now
/// stays empty until it ends.)
pub(crate) fn manual_output(version: &Version, level: usize, target: usize) -> usize {
    (level + 1..target)
        .find(|&l| !version.levels()[l].is_empty())
        .unwrap_or(target)
}

/// The step out of `level` into `out_level` ([`manual_output`]) of a manual compaction of
/// `range` down to `target`: the tables of `level` that reach into the range (on level 0,
/// with every table overlapping them) and the tables of `out_level` they overlap. The last
/// step (into `target`) merges even a lone table, and takes the target level's tables in the
/// range even when the level above has none there: its overwritten versions and tombstones
/// must go, which a trivial move would keep. Nothing outside the range is compacted beyond
/// the tables that overlap it.
pub(crate) fn manual_step(
    version: &Version,
    level: usize,
    out_level: usize,
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
    let last = out_level == target;
    let below = &version.levels()[out_level];
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
        out_level,
        inputs: [first, next],
        no_trivial_move: last,
    };
    let any = plan.all_inputs().next().is_some();
    any.then_some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::compaction::test_version::version;

    fn first_input(v: &Version, pointer: Option<&[u8]>, pri: CompactionPri) -> u64 {
        let targets = level_targets(v, &Options::default());
        let plan = plan_avoiding(v, 1, pointer, pri, &targets, &Busy::default()).unwrap();
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
            levels: None,
            tables: vec![2],
        });
        let targets = level_targets(&v, &Options::default());
        let plan = plan_avoiding(
            &v,
            1,
            None,
            CompactionPri::MinOverlappingRatio,
            &targets,
            &busy,
        )
        .unwrap();
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

    /// Dynamic sizes with `B` = 10,000 bytes and multiplier 10 (so `B / m` = 1,000). Test
    /// tables count 100 bytes per entry.
    fn dynamic() -> Options {
        Options {
            level_compaction_dynamic_level_bytes: true,
            max_bytes_for_level_base: 10_000,
            level_size_multiplier: 10,
            ..Options::default()
        }
    }

    #[test]
    fn static_targets_grow_from_level_1() {
        let v = version(&[(3, 1, "a", "z", 1_000_000, 10.0)]);
        let opts = Options {
            level_compaction_dynamic_level_bytes: false,
            max_bytes_for_level_base: 10_000,
            level_size_multiplier: 10,
            ..Options::default()
        };
        let t = level_targets(&v, &opts);
        assert_eq!(t.base_level, 1);
        assert_eq!(t.drain_through, 0);
        assert_eq!(
            t.max_bytes[1..],
            [
                10_000,
                100_000,
                1_000_000,
                10_000_000,
                100_000_000,
                1_000_000_000
            ]
        );
    }

    #[test]
    fn an_empty_tree_compacts_level_0_into_the_last_level() {
        for v in [version(&[]), version(&[(0, 1, "a", "z", 100, 10.0)])] {
            let t = level_targets(&v, &dynamic());
            assert_eq!((t.base_level, t.drain_through), (NUM_LEVELS - 1, 0));
            assert_eq!(t.output_of(0), NUM_LEVELS - 1);
            assert_eq!(t.output_of(3), 4);
        }
    }

    #[test]
    fn a_last_level_up_to_the_base_size_is_the_base_level() {
        // 5,000 bytes at L6 (B / m < 5,000 <= B): level 0 still goes to L6.
        let v = version(&[(6, 1, "a", "z", 50, 10.0)]);
        let t = level_targets(&v, &dynamic());
        assert_eq!((t.base_level, t.drain_through), (6, 0));
        assert_eq!(t.max_bytes[6], 10_000, "never below B");
    }

    #[test]
    fn the_base_level_moves_up_as_the_last_level_grows() {
        // 50,000 bytes at L6: its share at L5 is 5,000 <= B, so L5 is the base level.
        let v = version(&[(6, 1, "a", "z", 500, 10.0)]);
        let t = level_targets(&v, &dynamic());
        assert_eq!((t.base_level, t.drain_through), (5, 0));
        assert_eq!(t.max_bytes[5..], [10_000, 50_000]);
        // 1,000,000 bytes at L6 and some at L5: 100,000 at L5 is over B, 10,000 at L4 is not.
        let v = version(&[(5, 1, "a", "m", 80, 10.0), (6, 2, "a", "z", 10_000, 10.0)]);
        let t = level_targets(&v, &dynamic());
        assert_eq!((t.base_level, t.drain_through), (4, 0));
        assert_eq!(t.max_bytes[4..], [10_000, 100_000, 1_000_000]);
        // Over B even at L1: level 1 is the base level at B, and the rest multiply from it.
        let v = version(&[(6, 1, "a", "z", 100_000_000, 10.0)]);
        let t = level_targets(&v, &dynamic());
        assert_eq!(t.base_level, 1);
        assert_eq!(t.max_bytes[1], 10_000);
        assert_eq!(t.max_bytes[2], 100_000);
    }

    #[test]
    fn the_base_level_is_never_below_the_first_level_holding_data() {
        // L6 is big enough for L4 to be the base level, but L2 holds older versions that
        // level 0's newer ones must land above.
        let v = version(&[(2, 1, "a", "z", 50, 10.0), (6, 2, "a", "z", 10_000, 10.0)]);
        let t = level_targets(&v, &dynamic());
        assert_eq!(t.base_level, 2);
        // L2 (a share of 100 bytes) and L3 (1,000 <= B / m) are more than the data needs.
        assert_eq!(t.drain_through, 3);
        let due: Vec<usize> = scores(&v, &dynamic(), &t).iter().map(|d| d.0).collect();
        assert_eq!(due, vec![2], "L2 drains; L3 is empty");
    }

    #[test]
    fn a_tree_built_with_static_sizes_drains_its_upper_levels() {
        // As static sizes leave it: L1 at B, L2 the largest at 100,000, L3 smaller.
        let v = version(&[
            (1, 1, "a", "z", 100, 10.0),
            (2, 2, "a", "z", 1_000, 10.0),
            (3, 3, "a", "z", 200, 10.0),
        ]);
        let t = level_targets(&v, &dynamic());
        // Projected onto L6: L5 10,000, L4 1,000 (<= B / m): levels 1-4 are not needed.
        assert_eq!((t.base_level, t.drain_through), (1, 4));
        let due: Vec<usize> = scores(&v, &dynamic(), &t).iter().map(|d| d.0).collect();
        assert_eq!(
            due,
            vec![2, 1, 3],
            "every populated level is due: the one over its target first, then top down"
        );
        assert_eq!(
            t.output_of(0),
            1,
            "level 0 stays above the older data in L1"
        );
    }

    #[test]
    fn a_shrunk_tree_drains_its_base_level_into_the_last() {
        // L6 down to 9,000 bytes (B / m of it is under B / m): L5 is not needed.
        let v = version(&[(5, 1, "a", "z", 50, 10.0), (6, 2, "a", "z", 90, 10.0)]);
        let t = level_targets(&v, &dynamic());
        assert_eq!((t.base_level, t.drain_through), (5, 5));
        let due: Vec<usize> = scores(&v, &dynamic(), &t).iter().map(|d| d.0).collect();
        assert_eq!(due, vec![5]);
    }

    #[test]
    fn level_0_plans_into_the_base_level_and_claims_it() {
        let v = version(&[
            (0, 1, "a", "k", 10, 10.0),
            (0, 2, "j", "z", 10, 10.0),
            (5, 3, "a", "c", 60, 10.0),
            (5, 4, "x", "z", 60, 10.0),
            (6, 5, "a", "z", 900, 10.0),
        ]);
        let t = level_targets(&v, &dynamic());
        // L6's share at L5 is 9,000 <= B.
        assert_eq!(t.base_level, 5);
        let busy = Busy::default();
        let plan =
            plan_avoiding(&v, 0, None, CompactionPri::MinOverlappingRatio, &t, &busy).unwrap();
        assert_eq!((plan.level, plan.out_level), (0, 5));
        let numbers = |fs: &[Arc<TableFile>]| {
            let mut n: Vec<u64> = fs.iter().map(|f| f.meta.number).collect();
            n.sort_unstable();
            n
        };
        assert_eq!(numbers(&plan.inputs[0]), vec![1, 2]);
        assert_eq!(numbers(&plan.inputs[1]), vec![3, 4]);
        // While it runs, nothing else may write into level 5 (a drain of level 4 would), and
        // level 5's own compaction into 6 takes a table it does not hold.
        let mut busy = Busy::default();
        busy.take(&Claim {
            levels: Some((0, 5)),
            tables: vec![1, 2, 3, 4],
        });
        assert!(busy.into[5] && !busy.into[1]);
        assert!(
            plan_avoiding(&v, 0, None, CompactionPri::MinOverlappingRatio, &t, &busy).is_none()
        );
        assert!(
            plan_avoiding(&v, 5, None, CompactionPri::MinOverlappingRatio, &t, &busy).is_none()
        );
    }

    #[test]
    fn manual_steps_skip_empty_levels() {
        let v = version(&[
            (0, 1, "a", "k", 10, 10.0),
            (3, 2, "a", "c", 60, 10.0),
            (6, 3, "a", "z", 5_000, 10.0),
        ]);
        let all: UserRange = (Bound::Unbounded, Bound::Unbounded);
        let static_sizes = Options {
            level_compaction_dynamic_level_bytes: false,
            ..Options::default()
        };
        let target = manual_target(&v, &static_sizes, &all);
        assert_eq!(target, 6);
        assert_eq!(manual_output(&v, 0, target), 3);
        assert_eq!(manual_output(&v, 3, target), 6);
        let step = manual_step(&v, 0, 3, target, &all).unwrap();
        assert!(!step.no_trivial_move);
        assert_eq!(step.inputs[1][0].meta.number, 2);
        let last = manual_step(&v, 3, 6, target, &all).unwrap();
        assert!(last.no_trivial_move);
        // Nothing below level 0 in the range: the target is the base level.
        let v = version(&[(0, 1, "a", "k", 10, 10.0)]);
        assert_eq!(manual_target(&v, &static_sizes, &all), 1);
        assert_eq!(manual_target(&v, &dynamic(), &all), NUM_LEVELS - 1);
    }
}
