//! What to compact: the level most in need of it, and which of its tables.
//!
//! Level 0 is compacted when it holds `level0_compaction_trigger` tables; level `n >= 1` when
//! its bytes exceed `max_bytes_for_level_base * level_size_multiplier^(n-1)`. The level with
//! the highest score goes first. Level 0 goes whole (its tables overlap); a deeper level gives
//! one table at a time, round-robin after its compaction pointer. Either way the tables of the
//! next level that overlap the inputs join them.

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

/// The level most in need of compaction and its score, if any score is at least 1.
pub(crate) fn pick_score(version: &Version, opts: &Options) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for level in 0..NUM_LEVELS - 1 {
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
        if score >= 1.0 && best.is_none_or(|(_, s)| score > s) {
            best = Some((level, score));
        }
    }
    best
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
    let (lo, hi) = user_range(&first)?;
    let mut first = first;
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

/// The plans of a manual compaction of everything, as of `version`: every table is pushed
/// down to the deepest level that holds data (at least level 1), then the whole level above
/// it is merged with the whole deepest level, so that every table is rewritten once and
/// overwritten versions no snapshot reads and tombstones are gone, even when everything
/// already sat in the deepest level. Each step must be planned on the version the previous
/// one left, so this gives the target level, and [`manual_step`] the plan of each step.
pub(crate) fn manual_target(version: &Version) -> usize {
    (1..NUM_LEVELS)
        .rev()
        .find(|&l| !version.levels()[l].is_empty())
        .unwrap_or(1)
}

/// Step `level` (`0..target`) of a manual compaction down to `target`: all of `level` into
/// `level + 1`; the last step also merges a lone table.
pub(crate) fn manual_step(version: &Version, level: usize, target: usize) -> Option<Plan> {
    if level + 1 < target {
        return plan_for(version, level, None, true);
    }
    let plan = Plan {
        level,
        inputs: [
            version.levels()[level].clone(),
            version.levels()[level + 1].clone(),
        ],
        no_trivial_move: true,
    };
    let any = plan.all_inputs().next().is_some();
    any.then_some(plan)
}
