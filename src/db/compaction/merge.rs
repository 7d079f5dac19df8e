//! Merging a compaction's inputs: which versions of each user key survive, written into new
//! tables of the output level split at `target_file_bytes` (never inside one user key's
//! versions), each with a freshly built filter over exactly its own keys, sized by the
//! output level's share of filter memory.

use std::sync::Arc;

use super::filter_budget::{expected_probes, filter_bits_for_write, filter_fits, level_shape};
use super::pick::Plan;
use super::{Context, JobKind, Outcome};
use crate::compaction_filter::{CompactionDecision, CompactionFilter, CompactionFilterContext};
use crate::error::Result;
use crate::iter::InternalIterator;
use crate::iter::merge::MergingIterator;
use crate::util::key::{self, Kind, SeqNo};
use crate::db::manifest::VersionEdit;
use crate::options::NUM_LEVELS;
use crate::range_del::{Fragments, RangeTombstone};
use crate::sstable::ReadCounters;
use crate::db::table_writer::TableWriter;
use crate::db::version::level_iter::LevelIter;
use crate::db::version::{TableFile, Version};

/// Runs `plan` on `version`: merges its inputs into new tables of the output level (or moves
/// a lone table down unchanged) and returns the edit that installs the result.
pub(crate) fn run(ctx: &Context<'_>, version: &Version, plan: Plan) -> Result<Outcome> {
    let out_level = plan.out_level;
    let mut edit = VersionEdit::default();
    for (level, files) in [plan.level, out_level].into_iter().zip(&plan.inputs) {
        for f in files {
            edit.deleted_files.push((level, f.meta.number));
        }
    }
    if let Some(last) = plan.inputs[0]
        .iter()
        .map(|f| &f.meta.largest)
        .max_by(|a, b| key::compare(a, b))
    {
        edit.compact_pointers.push((plan.level, last.clone()));
    }

    // Filters of the outputs are sized for the tree as it will be once this is installed.
    let filter_bits = {
        let (mut entries, mut probes) = level_shape(version);
        let moving: u64 = plan.inputs[0].iter().map(|f| f.meta.entries).sum();
        entries[plan.level] -= moving.min(entries[plan.level]);
        entries[out_level] += moving;
        probes[plan.level] = if plan.level == 0 {
            let moving_probes = expected_probes(version, 0, &plan.inputs[0]);
            (probes[0] - moving_probes).max(0.0)
        } else {
            // What stays behind in a deeper level still spans its part of the key space.
            let staying: Vec<Arc<TableFile>> = version.levels()[plan.level]
                .iter()
                .filter(|f| {
                    !plan.inputs[0]
                        .iter()
                        .any(|i| i.meta.number == f.meta.number)
                })
                .cloned()
                .collect();
            expected_probes(version, plan.level, &staying)
        };
        // The output level gains the inputs' key ranges (its tables never overlap).
        let out_probes = expected_probes(version, out_level, &plan.inputs[1]);
        probes[out_level] = (probes[out_level] - out_probes
            + expected_probes(
                version,
                out_level,
                &plan.all_inputs().cloned().collect::<Vec<_>>(),
            ))
        .clamp(0.0, 1.0);
        if entries[out_level] > 0 && probes[out_level] <= 0.0 {
            probes[out_level] = 1.0;
        }
        filter_bits_for_write(ctx.opts, &(entries, probes), out_level)
    };

    let grandparents: &[Arc<TableFile>] = version
        .levels()
        .get(out_level + 1)
        .map_or(&[], |l| l.as_slice());
    let limit = ctx.opts.grandparent_overlap_limit();
    // A single table with nothing below it, a filter already sized for the target level, the
    // target level's compression and not too much overlap with the level below moves down
    // unchanged.
    if !plan.no_trivial_move && plan.inputs[1].is_empty() && plan.inputs[0].len() == 1 {
        let f = &plan.inputs[0][0];
        let overlap: u64 = grandparents
            .iter()
            .filter(|g| {
                g.largest_user_key() >= f.smallest_user_key()
                    && g.smallest_user_key() <= f.largest_user_key()
            })
            .map(|g| g.meta.size)
            .sum();
        let fits = filter_fits(ctx.opts, out_level, f.meta.filter_bits_per_key, filter_bits);
        // A level that compresses differently gets its tables rewritten, or tables moved
        // from an uncompressed level would stay uncompressed for good (RocksDB's rule too).
        let same_codec =
            ctx.opts.compression_for_level(plan.level) == ctx.opts.compression_for_level(out_level);
        if overlap <= limit && fits && same_codec {
            edit.new_files.push((out_level, f.meta.clone()));
            return Ok(Outcome {
                edit,
                level: plan.level,
                out_level,
                kind: JobKind::TrivialMove,
                bytes_read: 0,
                bytes_written: 0,
            });
        }
    }

    // Level-0 inputs overlap: one iterator each. A deeper level's inputs are one sorted run
    // read a table at a time, so a compaction holds a few files open, not all its inputs
    // (a full compaction of a big database would otherwise run out of file handles).
    let counters = Arc::new(ReadCounters::default());
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    let mut bytes_read = 0;
    for (level, files) in [plan.level, out_level].into_iter().zip(&plan.inputs) {
        bytes_read += files.iter().map(|f| f.meta.size).sum::<u64>();
        if level == 0 {
            for f in files {
                children.push(Box::new(LevelIter::uncached(vec![Arc::clone(f)], &counters)));
            }
        } else if !files.is_empty() {
            children.push(Box::new(LevelIter::uncached(files.clone(), &counters)));
        }
    }
    let mut input = MergingIterator::new(children);
    input.seek_to_first()?;

    let (range_dels, kept_range_dels) = range_tombstones(ctx, version, &plan, out_level)?;
    let mut next_number = || ctx.host.new_file_number();
    let mut writer = ctx
        .writer(
            out_level,
            ctx.opts.filter_with_bits(out_level, filter_bits),
            &mut next_number,
        )
        .with_range_tombstones(kept_range_dels.clone());
    // The filter's reads, at the snapshot the database holds for this job.
    let read = |key: &[u8]| ctx.host.get_at(key, ctx.read_seq);
    let mut merger = KeyMerger {
        filter: ctx
            .opts
            .compaction_filter
            .as_deref()
            .map(|f| (f, CompactionFilterContext::new(out_level, &read))),
        range_dels,
        kept_range_dels,
        zeroed: Vec::new(),
        snapshots: ctx.snapshots,
        version,
        out_level,
        grandparents: Grandparents {
            files: grandparents,
            next: 0,
            started: false,
            overlapped: 0,
            limit,
        },
        user_key: Vec::new(),
        started: false,
        newer_seq: None,
        base_level: false,
        held_tombstones: Vec::new(),
    };
    while input.valid() {
        merger.add(&mut writer, input.key(), input.value())?;
        input.next()?;
    }
    let mut bytes_written = 0;
    for meta in writer.finish()? {
        bytes_written += meta.size;
        edit.new_files.push((out_level, meta));
    }
    Ok(Outcome {
        edit,
        level: plan.level,
        out_level,
        kind: JobKind::Merge,
        bytes_read,
        bytes_written,
    })
}

/// A set of range tombstones, if there are any.
type Tombstones = Option<Arc<Fragments>>;

/// The inputs' range tombstones: all of them (they decide which versions are hidden), and
/// those the outputs keep. A tombstone is dropped once no level below the output holds a
/// table overlapping its range and every live snapshot sees it: every version it covers is
/// dropped here, and there is nothing left for it to hide.
fn range_tombstones(
    ctx: &Context<'_>,
    version: &Version,
    plan: &Plan,
    out_level: usize,
) -> Result<(Tombstones, Tombstones)> {
    let mut all: Vec<RangeTombstone> = Vec::new();
    for f in plan.all_inputs().filter(|f| f.meta.range_deletions > 0) {
        if let Some(frags) = f.reader()?.range_fragments() {
            all.extend(frags.tombstones());
        }
    }
    if all.is_empty() {
        return Ok((None, None));
    }
    let below_overlaps = |t: &RangeTombstone| {
        version.levels()[out_level + 1..].iter().flatten().any(|f| {
            f.smallest_user_key() < t.end.as_slice() && f.largest_user_key() >= t.start.as_slice()
        })
    };
    let kept: Vec<RangeTombstone> = all
        .iter()
        .filter(|t| ctx.snapshots.first().is_some_and(|&s| s < t.seq) || below_overlaps(t))
        .cloned()
        .collect();
    Ok((
        Some(Arc::new(Fragments::build(&all))),
        Some(Arc::new(Fragments::build(&kept))),
    ))
}

/// Decides, entry by entry, which versions of each user key survive, and writes them.
///
/// Entries arrive in internal-key order: per user key, newest first. A version is kept when
/// it is the newest, or when some live snapshot reads it (its sequence number is at most the
/// snapshot's, and the next newer version's is above). Tombstones at the old end of a key's
/// kept versions are dropped when no deeper level can hold the key: there is nothing left for
/// them to hide. Kept puts are written straight from the input (no copy); only kept
/// tombstones in a base level are held back until it is known whether an older kept put
/// follows them.
///
/// A put written where no deeper level holds its key, older than every live snapshot and
/// under no range tombstone the output keeps, is written with sequence number 0 (as RocksDB
/// does at its bottom level): every reader, now and later, sees it, so its number says
/// nothing, and eight bytes that repeat from entry to entry compress to almost nothing (W2's
/// tables are ~5% smaller for it). Newer versions and tombstones of the key, if any, keep
/// their numbers, which are higher, so the key's versions stay in order.
///
/// With a compaction filter, the newest version of a user key that is a put, older than every
/// live snapshot and not under a newer range tombstone — the one version every reader sees
/// alike — is shown to the filter, which may keep it, change its value, or remove it:
/// dropped where no deeper level can hold the key, replaced by a tombstone of the same
/// sequence number otherwise (so no older version below reappears). Either way every older
/// version of the key in the inputs is dropped as before: no snapshot reads them.
struct KeyMerger<'a> {
    /// `Options::compaction_filter` and its context for this compaction.
    filter: Option<(&'a dyn CompactionFilter, CompactionFilterContext<'a>)>,
    /// The inputs' range tombstones: a version is hidden from readers at or above the first
    /// newer tombstone covering it, like by a newer version of its key.
    range_dels: Option<Arc<Fragments>>,
    /// The range tombstones the outputs keep.
    kept_range_dels: Option<Arc<Fragments>>,
    /// A reused buffer for a key written with sequence number 0.
    zeroed: Vec<u8>,
    snapshots: &'a [SeqNo],
    version: &'a Version,
    /// The level the merged tables go to.
    out_level: usize,
    grandparents: Grandparents<'a>,
    /// The user key being merged (a reused buffer).
    user_key: Vec<u8>,
    started: bool,
    /// Sequence number of the previous (newer) version of the current user key.
    newer_seq: Option<SeqNo>,
    /// No level below the output can hold the current user key.
    base_level: bool,
    /// Kept tombstones of the current key not yet written (base level only).
    held_tombstones: Vec<(Vec<u8>, Vec<u8>)>,
}

impl KeyMerger<'_> {
    fn add(&mut self, out: &mut TableWriter<'_>, ikey: &[u8], value: &[u8]) -> Result<()> {
        let parsed = key::parse(ikey)?;
        if !self.started || parsed.user_key != self.user_key.as_slice() {
            // A new user key: tombstones still held for the previous one hide nothing.
            self.held_tombstones.clear();
            self.user_key.clear();
            self.user_key.extend_from_slice(parsed.user_key);
            self.started = true;
            self.newer_seq = None;
            self.base_level = ((self.out_level + 1)..NUM_LEVELS)
                .all(|l| !self.version.level_covers(l, parsed.user_key));
            if self.grandparents.cut_before(parsed.user_key) {
                out.cut()?;
            }
        }
        let covered_at = self
            .range_dels
            .as_ref()
            .and_then(|f| f.next_covering_above(parsed.user_key, parsed.seq));
        let hidden_at = match (self.newer_seq, covered_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let newest = hidden_at.is_none();
        let keep = match hidden_at {
            None => true,
            Some(newer) => {
                // The oldest snapshot at or above this version reads it unless the newer
                // version (or range tombstone) is visible to that snapshot too (`snapshots`
                // is ascending).
                let i = self.snapshots.partition_point(|&t| t < parsed.seq);
                self.snapshots.get(i).is_some_and(|&t| t < newer)
            }
        };
        self.newer_seq = Some(parsed.seq);
        if !keep {
            return Ok(());
        }
        let mut changed = None;
        if newest
            && parsed.kind == Kind::Put
            && self.snapshots.first().is_none_or(|&s| parsed.seq <= s)
            && let Some((filter, fctx)) = self.filter.as_mut()
        {
            match filter.filter(fctx, parsed.user_key, value) {
                CompactionDecision::Keep => {}
                CompactionDecision::ChangeValue(v) => changed = Some(v),
                CompactionDecision::Remove if self.base_level => return Ok(()),
                CompactionDecision::Remove => {
                    // An older version may lie below: a tombstone in the entry's place
                    // hides it until both meet at the bottom.
                    self.zeroed.clear();
                    self.zeroed.extend_from_slice(parsed.user_key);
                    self.zeroed.extend_from_slice(
                        &key::pack_trailer(parsed.seq, Kind::Delete).to_le_bytes(),
                    );
                    return out.add(&self.zeroed, &[]);
                }
            }
        }
        let value = changed.as_deref().unwrap_or(value);
        if parsed.kind == Kind::Delete && self.base_level {
            self.held_tombstones.push((ikey.to_vec(), value.to_vec()));
            return Ok(());
        }
        for (k, v) in self.held_tombstones.drain(..) {
            out.add(&k, &v)?;
        }
        if self.may_zero(parsed.kind, parsed.seq, parsed.user_key) {
            self.zeroed.clear();
            self.zeroed.extend_from_slice(parsed.user_key);
            self.zeroed
                .extend_from_slice(&key::pack_trailer(0, Kind::Put).to_le_bytes());
            return out.add(&self.zeroed, value);
        }
        out.add(ikey, value)
    }

    /// Whether a kept version may be written with sequence number 0 (see the type's doc).
    fn may_zero(&self, kind: Kind, seq: SeqNo, user_key: &[u8]) -> bool {
        kind == Kind::Put
            && seq != 0
            && self.base_level
            && self.snapshots.first().is_none_or(|&oldest| seq <= oldest)
            && self
                .kept_range_dels
                .as_ref()
                .is_none_or(|f| f.next_covering_above(user_key, 0).is_none())
    }
}

/// Tracks how much of the level below the output (the grandparent level) the current output
/// table overlaps, to cut it before a later compaction of it would rewrite too much.
struct Grandparents<'a> {
    /// The grandparent level's tables, in key order.
    files: &'a [Arc<TableFile>],
    /// The first table not yet passed.
    next: usize,
    started: bool,
    /// Bytes of grandparent tables passed since the current output began.
    overlapped: u64,
    limit: u64,
}

impl Grandparents<'_> {
    /// Called with each new user key of the output: whether the output table should end
    /// before it.
    fn cut_before(&mut self, user_key: &[u8]) -> bool {
        while let Some(f) = self.files.get(self.next)
            && f.largest_user_key() < user_key
        {
            if self.started {
                self.overlapped += f.meta.size;
            }
            self.next += 1;
        }
        self.started = true;
        if self.overlapped > self.limit {
            self.overlapped = 0;
            return true;
        }
        false
    }
}
