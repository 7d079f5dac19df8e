//! What to compact: the level most in need of it, and which of its tables.
//!
//! Level 0 is compacted when it holds `level0_compaction_trigger` tables; level `n >= 1` when
//! its bytes exceed `max_bytes_for_level_base * level_size_multiplier^(n-1)`. The level with
//! the highest score goes first. Level 0 goes whole (its tables overlap); a deeper level gives
//! one table at a time, round-robin after its compaction pointer. Either way the tables of the
//! next level that overlap the inputs join them.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use crate::key;
use crate::options::{NUM_LEVELS, Options};
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
/// level 0, or the first table of a deeper level after its compaction `pointer` (round-robin)
/// whose plan is free.
pub(crate) fn plan_avoiding(
    version: &Version,
    level: usize,
    pointer: Option<&[u8]>,
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
    (0..files.len())
        .map(|i| &files[(start + i) % files.len()])
        .filter(|f| !busy.tables.contains(&f.meta.number))
        .filter_map(|f| plan_with_first(version, level, vec![Arc::clone(f)]))
        .find(|p| !busy.conflicts(p))
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
