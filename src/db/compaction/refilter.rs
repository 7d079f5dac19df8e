//! Re-filtering under Monkey allocation: rewriting a table whose filter no longer fits the
//! share of filter memory its level should have.
//!
//! Monkey's per-level figures follow the tree's shape, which keeps changing as it grows, but
//! a table's filter is fixed when the table is written. Left alone, one level ends up holding
//! tables written for different shapes (after a 1M-key W1 load, one level's tables sat at
//! 7.3 and 10.6 bits/key), and since the false-positive rate is convex in bits per key, such
//! a spread costs more false positives than the same memory spread evenly. When no flush or
//! compaction is due, a compaction thread therefore rewrites, one at a time, the tables of
//! levels 1 and deeper whose bits per key are more than [`REFILTER_TOLERANCE`] away from
//! what Monkey gives their level for the current shape. A rewrite copies every entry as it is
//! (all versions, all tombstones) into a new table on the same level with a new filter; it is
//! installed like a compaction (and counted as one).
//!
//! Known cost: there is no hysteresis beyond the tolerance, so a shape that moves back and
//! forth (a partly covering level whose coverage swings with compactions, under bursty
//! writes) rewrites the same tables each time it crosses the tolerance; a review measured
//! re-filter writes at 18% of all table writes in such a workload.

use std::sync::Arc;

use super::filter_budget::{level_shape, monkey_bits_per_level};
use super::{Context, JobKind, Outcome};
use crate::error::Result;
use crate::util::filename;
use crate::db::manifest::VersionEdit;
use crate::options::{FilterAllocation, Options};
use crate::sstable::ReadCounters;
use crate::db::version::{TableFile, Version};

/// How far (bits per key) a table's filter may sit from its level's Monkey figure before it
/// is rewritten. Rates within half a bit differ by at most ~25%, and a tighter bound would
/// rewrite tables for every small move of the shape.
pub(crate) const REFILTER_TOLERANCE: f64 = 0.5;

/// Tables with fewer entries than this are never rewritten for their filter: their filters
/// hold little memory, and a rewrite costs a table's worth of I/O whatever its size.
pub(crate) const REFILTER_MIN_ENTRIES: u64 = 1024;

/// A table to rewrite: its level, the table, and the bits per key its new filter gets.
#[derive(Debug)]
pub(crate) struct Refilter {
    pub level: usize,
    pub file: Arc<TableFile>,
    pub bits_per_key: f64,
}

/// The table of levels 1 and deeper whose filter is furthest from its level's Monkey figure,
/// if any is further than [`REFILTER_TOLERANCE`], leaving out the tables numbered in
/// `given_up`. `None` unless the allocation is Monkey.
pub(crate) fn pick(version: &Version, opts: &Options, given_up: &[u64]) -> Option<Refilter> {
    if !matches!(opts.filter_allocation, FilterAllocation::Monkey { .. }) {
        // Checked first: this runs on every background wake-up and `wait_for_compactions`
        // poll, and the shape costs a pass over every table's key range.
        return None;
    }
    let wanted = monkey_bits_per_level(opts, &level_shape(version))?;
    let mut best: Option<(f64, Refilter)> = None;
    for (level, files) in version.levels().iter().enumerate().skip(1) {
        let want = wanted.get(level).copied().unwrap_or(0.0);
        for f in files {
            if f.meta.entries < REFILTER_MIN_ENTRIES || given_up.contains(&f.meta.number) {
                continue;
            }
            let off = (f.meta.filter_bits_per_key - want).abs();
            if off > REFILTER_TOLERANCE && best.as_ref().is_none_or(|(o, _)| off > *o) {
                best = Some((
                    off,
                    Refilter {
                        level,
                        file: Arc::clone(f),
                        bits_per_key: want,
                    },
                ));
            }
        }
    }
    best.map(|(_, r)| r)
}

/// What a re-filter came to.
#[derive(Debug)]
pub(crate) enum Refiltered {
    /// The table was rewritten: install the edit.
    Done(Outcome),
    /// The rewrite did not come out with the filter asked for (its filter could not be built
    /// or read back): the old table stays and is never picked again. The new file is gone.
    GaveUp(u64),
}

/// Rewrites `r.file` on its level with a filter of `r.bits_per_key`.
pub(crate) fn run(ctx: &Context<'_>, r: Refilter) -> Result<Refiltered> {
    let f = &r.file;
    let table = Arc::new(f.open_uncached(&Arc::new(ReadCounters::default()))?);
    let mut next_number = || ctx.host.new_file_number();
    let mut out = ctx
        .writer(
            r.level,
            ctx.opts.filter_with_bits(r.level, r.bits_per_key),
            &mut next_number,
        )
        .with_range_tombstones(table.range_fragments().cloned());
    out.copy_all(&mut table.iter())?;
    let written = out.finish()?;
    let got = written.first().map_or(0.0, |m| m.filter_bits_per_key);
    if written.len() != 1 || (got - r.bits_per_key).abs() > REFILTER_TOLERANCE {
        for meta in &written {
            ctx.cache.evict(meta.number);
            let _ = ctx
                .env
                .remove_file(&filename::table_path(ctx.dir, meta.number));
        }
        return Ok(Refiltered::GaveUp(f.meta.number));
    }
    let bytes_written = written.iter().map(|m| m.size).sum();
    let mut edit = VersionEdit::default();
    edit.deleted_files.push((r.level, f.meta.number));
    for meta in written {
        edit.new_files.push((r.level, meta));
    }
    Ok(Refiltered::Done(Outcome {
        edit,
        level: r.level,
        out_level: r.level,
        kind: JobKind::Refilter,
        bytes_read: f.meta.size,
        bytes_written,
    }))
}
