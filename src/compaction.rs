//! Leveled compaction: choosing what to merge, merging it, and rebuilding filters.
//!
//! Level 0 is compacted when it holds `level0_compaction_trigger` tables; level `n >= 1` when
//! its bytes exceed `max_bytes_for_level_base * level_size_multiplier^(n-1)`. The level with
//! the highest score goes first. Inputs are merged with the overlapping tables of the next
//! level into new tables split at `target_file_bytes` (never inside one user key's versions),
//! each with a freshly built filter over exactly its own keys, sized by the output level's
//! bits per key.

use std::sync::Arc;

use crate::db::{
    Inner, OutputTable, expected_probes, filter_bits_for_write, filter_fits, level_shape,
};
use crate::error::Result;
use crate::filename;
use crate::iter::InternalIterator;
use crate::iter::merge::MergingIterator;
use crate::key::{self, Kind, SeqNo};
use crate::manifest::VersionEdit;
use crate::options::{NUM_LEVELS, Options};
use crate::sstable::{ReadCounters, Table, TableReadOptions};
use crate::version::{TableFile, Version};

/// Entries a compaction merges between checks for a frozen memtable to flush.
pub(crate) const FLUSH_CHECK_INTERVAL: u32 = 1024;

/// The size level `level` (>= 1) may reach before it is compacted.
pub fn max_bytes_for_level(opts: &Options, level: usize) -> u64 {
    let mut bytes = opts.max_bytes_for_level_base;
    for _ in 1..level {
        bytes = bytes.saturating_mul(opts.level_size_multiplier.max(2));
    }
    bytes
}

/// The level most in need of compaction and its score, if any score is at least 1.
pub fn pick_score(version: &Version, opts: &Options) -> Option<(usize, f64)> {
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
struct Plan {
    level: usize,
    inputs: [Vec<Arc<TableFile>>; 2],
    /// Merge even a lone table with nothing below it (a manual compaction's last step must
    /// drop overwritten versions and tombstones, which a trivial move would keep).
    no_trivial_move: bool,
}

impl Plan {
    fn all_inputs(&self) -> impl Iterator<Item = &Arc<TableFile>> {
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
fn plan_for(
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

/// Runs one compaction: the manual full compaction if one was asked for, else the level with
/// the highest score.
pub(crate) fn run_one(db: &Inner) -> Result<()> {
    let manual = {
        let st = db.state.lock();
        (st.manual_requested > st.manual_completed).then_some(st.manual_requested)
    };
    if let Some(request) = manual {
        // Every request made before this point is served by this run (each asks for the
        // whole key space); later ones get a run of their own.
        let result = run_manual(db);
        db.state.lock().manual_completed = request;
        return result;
    }
    let version = db.current_version();
    let Some((level, _)) = pick_score(&version, &db.opts) else {
        // Nothing to merge: under Monkey, bring one table's filter back to its level's share.
        let given_up = db.state.lock().refilter_given_up.clone();
        return match crate::refilter::pick(&version, &db.opts, &given_up) {
            Some(r) => crate::refilter::run(db, r),
            None => Ok(()),
        };
    };
    let pointer = db.state.lock().compact_pointers[level].clone();
    match plan_for(&version, level, pointer.as_deref(), false) {
        Some(plan) => execute(db, &version, plan),
        None => Ok(()),
    }
}

/// Pushes every table down to the deepest level that holds data (at least level 1). The
/// last step merges the whole level above with the whole deepest level, so that every table
/// is rewritten once: overwritten versions no snapshot reads and tombstones are gone after
/// it, even when everything already sat in the deepest level.
fn run_manual(db: &Inner) -> Result<()> {
    let version = db.current_version();
    let target = (1..NUM_LEVELS)
        .rev()
        .find(|&l| !version.levels()[l].is_empty())
        .unwrap_or(1);
    for level in 0..target - 1 {
        let version = db.current_version();
        if let Some(plan) = plan_for(&version, level, None, true) {
            execute(db, &version, plan)?;
        }
    }
    let version = db.current_version();
    let plan = Plan {
        level: target - 1,
        inputs: [
            version.levels()[target - 1].clone(),
            version.levels()[target].clone(),
        ],
        no_trivial_move: true,
    };
    if plan.all_inputs().next().is_some() {
        execute(db, &version, plan)?;
    }
    Ok(())
}

fn execute(db: &Inner, version: &Version, plan: Plan) -> Result<()> {
    let out_level = plan.level + 1;
    let mut edit = VersionEdit::default();
    for (i, files) in plan.inputs.iter().enumerate() {
        for f in files {
            edit.deleted_files.push((plan.level + i, f.meta.number));
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
    let (filter_bits, mut shape_after) = {
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
        let shape = (entries, probes);
        (filter_bits_for_write(&db.opts, &shape, out_level), shape)
    };

    // A single table with nothing below it and a filter already sized for the target level
    // moves down unchanged.
    if !plan.no_trivial_move && plan.inputs[1].is_empty() && plan.inputs[0].len() == 1 {
        let f = &plan.inputs[0][0];
        if filter_fits(&db.opts, f.meta.filter_bits_per_key, filter_bits) {
            edit.new_files.push((out_level, f.meta.clone()));
            return db.install_compaction(edit, plan.level, 0, 0);
        }
    }

    let snapshots = db.snapshot_list();
    let counters = Arc::new(ReadCounters::default());
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    let mut bytes_read = 0;
    for f in plan.all_inputs() {
        let path = filename::table_path(&db.dir, f.meta.number);
        let file = db.env.open_random_access(&path)?;
        let table = Arc::new(Table::open(
            file,
            TableReadOptions {
                file_number: f.meta.number,
                filter: None,
                cache: None,
                counters: Arc::clone(&counters),
            },
        )?);
        bytes_read += f.meta.size;
        children.push(Box::new(table.iter()));
    }
    let mut input = MergingIterator::new(children);
    input.seek_to_first()?;

    let mut writer = Outputs {
        db,
        level: out_level,
        filter_bits,
        current: None,
        done: Vec::new(),
    };
    let mut merger = KeyMerger {
        snapshots: &snapshots,
        version,
        user_key: Vec::new(),
        started: false,
        newer_seq: None,
        base_level: false,
        held_tombstones: Vec::new(),
    };
    let result = (|| -> Result<()> {
        let mut since_check = 0u32;
        while input.valid() {
            merger.add(&mut writer, input.key(), input.value())?;
            input.next()?;
            since_check += 1;
            if since_check == FLUSH_CHECK_INTERVAL {
                since_check = 0;
                // Writers stall while a frozen memtable waits; a long compaction must not
                // make them wait for all of it. The flush sizes its filter for the tree as
                // it will be once this compaction is installed.
                db.flush_pending_memtable(&mut shape_after)?;
            }
        }
        writer.finish_current()
    })();
    if let Err(e) = result {
        writer.abandon();
        return Err(e);
    }
    let mut bytes_written = 0;
    for meta in writer.done.drain(..) {
        bytes_written += meta.size;
        edit.new_files.push((out_level, meta));
    }
    db.install_compaction(edit, plan.level, bytes_read, bytes_written)
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
struct KeyMerger<'a> {
    snapshots: &'a [SeqNo],
    version: &'a Version,
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
    fn add(&mut self, out: &mut Outputs<'_>, ikey: &[u8], value: &[u8]) -> Result<()> {
        let parsed = key::parse(ikey)?;
        if !self.started || parsed.user_key != self.user_key.as_slice() {
            // A new user key: tombstones still held for the previous one hide nothing.
            self.held_tombstones.clear();
            self.user_key.clear();
            self.user_key.extend_from_slice(parsed.user_key);
            self.started = true;
            self.newer_seq = None;
            self.base_level = ((out.level + 1)..NUM_LEVELS)
                .all(|l| !self.version.level_covers(l, parsed.user_key));
            // Split only between user keys, so one key's versions never straddle two tables
            // (a level's tables must be disjoint by user key).
            out.split_if_full()?;
        }
        let keep = match self.newer_seq {
            None => true,
            Some(newer) => {
                // The oldest snapshot at or above this version reads it unless the newer
                // version is visible to that snapshot too (`snapshots` is ascending).
                let i = self.snapshots.partition_point(|&t| t < parsed.seq);
                self.snapshots.get(i).is_some_and(|&t| t < newer)
            }
        };
        self.newer_seq = Some(parsed.seq);
        if !keep {
            return Ok(());
        }
        if parsed.kind == Kind::Delete && self.base_level {
            self.held_tombstones.push((ikey.to_vec(), value.to_vec()));
            return Ok(());
        }
        for (k, v) in self.held_tombstones.drain(..) {
            out.add(&k, &v)?;
        }
        out.add(ikey, value)
    }
}

/// The tables a compaction writes, cut at `target_file_bytes`.
struct Outputs<'a> {
    db: &'a Inner,
    level: usize,
    filter_bits: f64,
    current: Option<OutputTable>,
    done: Vec<crate::manifest::FileMeta>,
}

impl Outputs<'_> {
    fn split_if_full(&mut self) -> Result<()> {
        if self
            .current
            .as_ref()
            .is_some_and(|t| t.estimated_size() >= self.db.opts.target_file_bytes)
        {
            self.finish_current()?;
        }
        Ok(())
    }

    fn add(&mut self, ikey: &[u8], value: &[u8]) -> Result<()> {
        if self.current.is_none() {
            let number = self.db.state.lock().new_file_number();
            self.current = Some(OutputTable::create_with_bits(
                self.db.env.as_ref(),
                &self.db.dir,
                &self.db.opts,
                number,
                self.filter_bits,
            )?);
        }
        match self.current.as_mut() {
            Some(t) => t.add(ikey, value),
            None => Ok(()),
        }
    }

    fn finish_current(&mut self) -> Result<()> {
        if let Some(t) = self.current.take() {
            if t.is_empty() {
                t.abandon(self.db.env.as_ref());
            } else {
                self.done
                    .push(t.finish(self.db.env.as_ref(), &self.db.table_cache)?);
            }
        }
        Ok(())
    }

    fn abandon(&mut self) {
        if let Some(t) = self.current.take() {
            t.abandon(self.db.env.as_ref());
        }
        for meta in self.done.drain(..) {
            self.db.table_cache.evict(meta.number);
            let _ = self
                .db
                .env
                .remove_file(&filename::table_path(&self.db.dir, meta.number));
        }
    }
}
