//! The background threads: one flushes frozen memtables, the others run compactions.
//!
//! Flushes have a thread of their own so that a long compaction never keeps a frozen
//! memtable (and so the writers waiting for room) waiting. Jobs prepare their version edit
//! without a lock; [`DbInner::log_and_apply`] then writes it to the MANIFEST (fsynced) and
//! installs the new version, one edit at a time.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::core::{DbInner, State};
use crate::db::compaction::filter_budget;
use crate::db::compaction::pick::UserRange;
use crate::db::compaction::refilter::Refiltered;
use crate::db::compaction::{self, Context, Host, Job, JobKind, Outcome, pick};
use crate::error::Result;
use crate::util::filename;
use crate::util::key::SeqNo;
use crate::db::manifest::VersionEdit;
use crate::db::memtable::MemTable;
use crate::stats::metrics::bump;
use crate::db::table_writer::TableWriter;
use crate::db::version::{TableFile, Version};

/// The flush thread: writes each frozen memtable to a level-0 table.
pub(crate) fn run_flushes(db: Arc<DbInner>) {
    loop {
        let (imm, log) = {
            let mut st = db.state.lock();
            loop {
                if st.shutting_down {
                    return;
                }
                if st.bg_error.is_none()
                    && let Some(pending) = st.imm.clone()
                {
                    st.flushing = true;
                    break pending;
                }
                db.work_cv.wait(&mut st);
            }
        };
        let result = guarded(|| db.flush_memtable(&imm, log));
        let mut st = db.state.lock();
        if let Err(e) = result {
            db.set_bg_error(&mut st, &e);
        }
        st.flushing = false;
        st.jobs_done += 1;
        // A new level-0 table may make a compaction due.
        db.work_cv.notify_all();
        db.done_cv.notify_all();
    }
}

/// What a compaction thread took on.
enum CompactionWork {
    /// A manual compaction serving every request up to `request`, of `range`.
    Manual { request: u64, range: UserRange },
    /// A job picked on `version`; `claim` is what it holds in [`State::busy`].
    Job {
        job: Job,
        version: Arc<Version>,
        claim: pick::Claim,
    },
}

/// A compaction thread: runs compactions (and re-filters) while one is due that no other
/// thread's job stands in the way of.
pub(crate) fn run_compactions(db: Arc<DbInner>) {
    loop {
        let work = {
            let mut st = db.state.lock();
            loop {
                if st.shutting_down {
                    return;
                }
                match db.take_compaction(&mut st) {
                    Ok(work) => {
                        st.compactions_running += 1;
                        break work;
                    }
                    // Level-0 leftovers become due once the tree has been idle long enough.
                    Err(Some(wait)) => {
                        db.work_cv.wait_for(&mut st, wait);
                    }
                    Err(None) => db.work_cv.wait(&mut st),
                }
            }
        };
        let (result, claim, manual) = match work {
            CompactionWork::Manual { request, range } => {
                (guarded(|| db.compact_manually(&range)), None, Some(request))
            }
            CompactionWork::Job {
                job,
                version,
                claim,
            } => (guarded(|| db.run_job(job, &version)), Some(claim), None),
        };
        // Under one lock: a caller of `compact_range` that sees its request completed also
        // sees the error it ended with.
        let mut st = db.state.lock();
        if let Some(claim) = claim {
            st.busy.release(&claim);
        }
        if let Err(e) = result {
            db.set_bg_error(&mut st, &e);
        }
        if let Some(request) = manual {
            st.manual_completed = request;
            st.manual_running = false;
        }
        st.compactions_running -= 1;
        st.jobs_done += 1;
        db.work_cv.notify_all();
        db.done_cv.notify_all();
    }
}

/// Runs a background job. A panic in it (a bug) must not leave writers and `flush()` callers
/// waiting forever for a job that is gone: it becomes the background error that stops writes.
fn guarded(job: impl FnOnce() -> Result<()>) -> Result<()> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(crate::error::Error::WritesStopped(format!(
            "background job panicked: {why}"
        )))
    })
}

impl DbInner {
    /// Writes the frozen memtable to a new level-0 table and retires its WAL.
    fn flush_memtable(&self, imm: &Arc<MemTable>, new_log: u64) -> Result<()> {
        let number = self.state.lock().new_file_number();
        let mut edit = VersionEdit::default();
        if !imm.is_empty() {
            // The filter is sized for the tree as it will be with this table in level 0.
            let (mut entries, mut probes) = filter_budget::level_shape(&self.current_version());
            entries[0] += imm.len() as u64;
            // A memtable's keys usually span the whole key space.
            probes[0] += 1.0;
            let bits = filter_budget::filter_bits_for_write(&self.opts, &(entries, probes), 0);
            let mut next_number = Some(number);
            let mut numbers = || next_number.take().unwrap_or_else(|| self.new_file_number());
            let mut out = TableWriter::new(
                self.env.as_ref(),
                &self.dir,
                &self.table_cache,
                &self.opts,
                0,
                self.opts.filter_with_bits(0, bits),
                u64::MAX,
                &mut numbers,
            )
            .with_range_tombstones(imm.range_fragments());
            out.copy_all(&mut imm.iter())?;
            let written = out.finish()?;
            for meta in written {
                bump(&self.work.compaction_bytes_written, meta.size);
                bump(&self.work.flush_bytes_written, meta.size);
                edit.new_files.push((0, meta));
            }
        }
        edit.log_number = Some(new_log);
        // The frozen memtable leaves the view under the state lock, right after the version
        // holding its table is installed: once the lock is released a writer may freeze the
        // next memtable, and clearing `imm` after that would hide it from readers.
        self.log_and_apply(edit, |st| {
            st.imm = None;
            st.log_number = new_log;
            self.update_view(st, |v| v.imm = None);
        })?;
        bump(&self.work.flushes, 1);
        // Every WAL older than the one the frozen memtable's successor writes to is now
        // covered by durable tables.
        if let Ok(names) = self.env.list_dir(&self.dir) {
            for name in names {
                if let Some((filename::FileType::Log, n)) = filename::parse_file_name(&name)
                    && n < new_log
                {
                    let _ = self.env.remove_file(&self.dir.join(name));
                }
            }
        }
        Ok(())
    }

    /// Makes `edit` durable in the MANIFEST, then installs the resulting version for readers
    /// and marks the tables it removed as obsolete. `also` runs under the state lock at the
    /// moment of installation. Edits from different threads are applied one at a time, each
    /// to the version the previous one installed.
    ///
    /// On failure nothing is installed, and the tables the edit adds (the flush's or
    /// compaction's outputs, not a table moved between levels) are not left behind: removed
    /// at once if the edit cannot have reached the MANIFEST, else (the append failed, and the
    /// record may be in the file whole) kept until [`DbInner::resume`] has made a MANIFEST
    /// that does not name them current (see [`State::unsettled_tables`]).
    pub(crate) fn log_and_apply(
        &self,
        mut edit: VersionEdit,
        also: impl FnOnce(&mut State),
    ) -> Result<()> {
        let mut manifest = self.manifest.lock();
        let current = Arc::clone(&self.view.load().version);
        // The edit's outputs: the tables it adds that no installed version names yet.
        let outputs: Vec<u64> = edit
            .new_files
            .iter()
            .map(|(_, m)| m.number)
            .filter(|n| !current.all_files().any(|f| f.meta.number == *n))
            .collect();
        let prepared = (|| {
            let next = current.apply(&edit, |meta| {
                let path = filename::table_path(&self.dir, meta.number);
                Arc::new(TableFile::new(
                    meta,
                    path,
                    Arc::clone(&self.env),
                    Arc::clone(&self.table_cache),
                ))
            })?;
            {
                let st = self.state.lock();
                edit.next_file_number = Some(st.next_file_number);
            }
            edit.last_sequence = Some(self.last_seq.load(Ordering::Acquire));
            // New tables were fsynced, but their directory entries were not: without this, a
            // power cut could keep the manifest edit and lose the file it names.
            if !edit.new_files.is_empty() {
                self.env.sync_dir(&self.dir)?;
            }
            if manifest.is_none() {
                return Err(crate::error::Error::WritesStopped("no MANIFEST is open".into()));
            }
            Ok(next)
        })();
        let next = match prepared {
            Ok(next) => next,
            Err(e) => {
                // Nothing was appended: no MANIFEST names these tables.
                self.remove_tables(&outputs);
                return Err(e);
            }
        };
        if let Some(writer) = manifest.as_mut()
            && let Err(e) = writer.append(&edit)
        {
            // The record may be in the MANIFEST (all of it, if only its fsync failed), and a
            // reopen would then need these tables: they go only once a MANIFEST that does not
            // name them is current.
            self.state.lock().unsettled_tables.extend(outputs);
            return Err(e);
        }
        let removed: Vec<Arc<TableFile>> = edit
            .deleted_files
            .iter()
            // A table moved to another level (trivial move) is deleted and re-added: keep it.
            .filter(|(_, n)| !edit.new_files.iter().any(|(_, m)| m.number == *n))
            .filter_map(|&(level, n)| {
                current.levels()[level]
                    .iter()
                    .find(|f| f.meta.number == n)
                    .cloned()
            })
            .collect();
        let mut st = self.state.lock();
        let next = Arc::new(next);
        self.update_view(&mut st, |v| v.version = next);
        also(&mut st);
        drop(st);
        drop(manifest);
        // Durable and installed: the old files may go once the last reader lets go of them.
        for f in removed {
            f.mark_obsolete();
        }
        Ok(())
    }

    /// Removes tables no MANIFEST names (the outputs of a job that failed), closing any
    /// reader the table cache holds first. A file that cannot be removed is an orphan the
    /// next open removes.
    pub(crate) fn remove_tables(&self, numbers: &[u64]) {
        for &n in numbers {
            self.table_cache.evict(n);
            let _ = self.env.remove_file(&filename::table_path(&self.dir, n));
        }
    }

    /// Whether a compaction should run now (for a caller of `wait_for_compactions`: level-0
    /// tables left over count, see [`super::idle`]).
    fn wants_compaction(&self, st: &mut State) -> bool {
        let version = self.current_version();
        st.manual_requested > st.manual_completed
            || compaction::is_due(&version, &self.opts, &st.refilter_given_up)
            || self.idle_plan(st, &version).is_ok()
    }

    /// The idle compaction of level 0 to start now ([`super::idle::plan`]).
    fn idle_plan(
        &self,
        st: &mut State,
        version: &Version,
    ) -> std::result::Result<pick::Plan, Option<std::time::Duration>> {
        let quiet = super::idle::Quiet {
            nothing_running: st.imm.is_none() && !st.flushing && st.compactions_running == 0,
            quiet_for: st.idle.quiet_for(self.visible_seq()),
            settling: st.settling > 0,
        };
        super::idle::plan(version, &self.opts, &quiet, &st.busy)
    }

    /// The compaction work to start now, taken under the state lock so that no two threads
    /// take the same: a manual compaction once no other job runs (it runs alone), else the
    /// most needed job that takes nothing a running job holds, else (the tree idle) the
    /// level-0 leftovers. `Err(Some(wait))`: nothing now, but the idle compaction may be due
    /// after `wait`; `Err(None)`: nothing until woken.
    fn take_compaction(
        &self,
        st: &mut State,
    ) -> std::result::Result<CompactionWork, Option<std::time::Duration>> {
        if st.bg_error.is_some() || st.manual_running {
            return Err(None);
        }
        if st.manual_requested > st.manual_completed {
            if st.compactions_running > 0 {
                return Err(None);
            }
            st.manual_running = true;
            // Every request made before this point is served by this run (it compacts the
            // smallest range holding all of theirs); later ones get a run of their own.
            let range = st
                .manual_range
                .take()
                .unwrap_or((Bound::Unbounded, Bound::Unbounded));
            return Ok(CompactionWork::Manual {
                request: st.manual_requested,
                range,
            });
        }
        let version = self.current_version();
        let State {
            compact_pointers,
            refilter_given_up,
            busy,
            ..
        } = st;
        let job = match compaction::pick_job(
            &version,
            &self.opts,
            compact_pointers,
            refilter_given_up,
            busy,
        ) {
            Some(job) => job,
            None => {
                let plan = self.idle_plan(st, &version)?;
                let job = Job::Compact(plan);
                st.busy.take(&job.claim());
                job
            }
        };
        let claim = job.claim();
        Ok(CompactionWork::Job {
            job,
            version,
            claim,
        })
    }

    /// Runs a compaction or re-filter picked on `version` and installs its result.
    fn run_job(&self, job: Job, version: &Version) -> Result<()> {
        let held = self.hold_job_snapshot();
        let snapshots = self.snapshot_list();
        let ctx = self.job_context(&snapshots, held.seq);
        match job {
            Job::Compact(plan) => {
                let outcome = compaction::merge::run(&ctx, version, plan)?;
                self.install_compaction(outcome)
            }
            Job::Refilter(r) => match compaction::refilter::run(&ctx, r)? {
                Refiltered::Done(outcome) => self.install_compaction(outcome),
                Refiltered::GaveUp(number) => {
                    let mut st = self.state.lock();
                    // Forget given-up tables that are gone, so the list does not only grow.
                    let current = self.current_version();
                    st.refilter_given_up
                        .retain(|n| current.all_files().any(|t| t.meta.number == *n));
                    st.refilter_given_up.push(number);
                    Ok(())
                }
            },
        }
    }

    /// A manual compaction of `range`: every step planned on the version the previous one
    /// left, from each level holding tables into the next one that does (or the target).
    fn compact_manually(&self, range: &UserRange) -> Result<()> {
        let target = pick::manual_target(&self.current_version(), &self.opts, range);
        let mut level = 0;
        while level < target {
            let version = self.current_version();
            let held = self.hold_job_snapshot();
            let snapshots = self.snapshot_list();
            let out_level = pick::manual_output(&version, level, target);
            if let Some(plan) = pick::manual_step(&version, level, out_level, target, range) {
                let ctx = self.job_context(&snapshots, held.seq);
                let outcome = compaction::merge::run(&ctx, &version, plan)?;
                self.install_compaction(outcome)?;
            }
            // The levels skipped were empty and stay so (nothing else compacts meanwhile).
            level = out_level;
        }
        Ok(())
    }

    fn job_context<'a>(&'a self, snapshots: &'a [u64], read_seq: SeqNo) -> Context<'a> {
        Context {
            env: &self.env,
            dir: &self.dir,
            opts: &self.opts,
            cache: &self.table_cache,
            snapshots,
            read_seq,
            host: self,
            limiter: self.compaction_limiter.as_ref(),
        }
    }

    /// With a compaction filter, a snapshot for one compaction to run its filter's reads at:
    /// the oldest live snapshot, or the latest sequence number if there is none. Held as a
    /// live snapshot until the job ends, so no other compaction drops what those reads see,
    /// and no reader ever reads an older state than the filter decided on (later snapshots
    /// are newer). Without a filter nothing is held.
    fn hold_job_snapshot(&self) -> JobSnapshot<'_> {
        if self.opts.compaction_filter.is_none() {
            return JobSnapshot {
                db: self,
                seq: self.visible_seq(),
                held: false,
            };
        }
        let mut snaps = self.snapshots.lock();
        let seq = snaps
            .keys()
            .next()
            .copied()
            .unwrap_or_else(|| self.visible_seq());
        *snaps.entry(seq).or_insert(0) += 1;
        JobSnapshot {
            db: self,
            seq,
            held: true,
        }
    }

    fn new_file_number(&self) -> u64 {
        self.state.lock().new_file_number()
    }

    /// Installs a compaction's edit and accounts for it.
    fn install_compaction(&self, outcome: Outcome) -> Result<()> {
        let Outcome {
            edit,
            level,
            out_level,
            kind,
            bytes_read,
            bytes_written,
        } = outcome;
        let moved: u64 = edit.new_files.iter().map(|(_, m)| m.size).sum();
        let pointer = edit
            .compact_pointers
            .iter()
            .find(|(l, _)| *l == level)
            .map(|(_, k)| k.clone());
        self.log_and_apply(edit, |st| {
            if let Some(p) = pointer {
                st.compact_pointers[level] = Some(p);
            }
        })?;
        let w = &self.work;
        bump(&w.compactions, 1);
        bump(&w.compaction_bytes_read, bytes_read);
        bump(&w.compaction_bytes_written, bytes_written);
        match kind {
            JobKind::Merge => {
                bump(&w.level_compactions[out_level], 1);
                bump(&w.level_compaction_bytes_read[out_level], bytes_read);
                bump(&w.level_compaction_bytes_written[out_level], bytes_written);
            }
            JobKind::TrivialMove => {
                bump(&w.trivial_moves, 1);
                bump(&w.trivial_move_bytes, moved);
            }
            JobKind::Refilter => bump(&w.refilter_bytes_written, bytes_written),
        }
        Ok(())
    }

    /// Asks the compaction threads for a manual compaction of `range` and waits for it.
    pub(crate) fn compact_range(&self, range: UserRange) -> Result<()> {
        self.refuse_if_read_only("compaction")?;
        self.flush()?;
        let mut st = self.state.lock();
        st.manual_range = Some(match st.manual_range.take() {
            None => range,
            Some(other) => hull(other, range),
        });
        st.manual_requested += 1;
        let mine = st.manual_requested;
        self.work_cv.notify_all();
        loop {
            if let Some(why) = &st.bg_error {
                return Err(crate::error::Error::WritesStopped(why.clone()));
            }
            if st.manual_completed >= mine {
                return Ok(());
            }
            if st.shutting_down {
                return Err(crate::error::Error::WritesStopped(
                    "the database is closing".into(),
                ));
            }
            self.done_cv.wait(&mut st);
        }
    }

    /// Waits until no flush or compaction is pending.
    pub(crate) fn wait_idle(&self) -> Result<()> {
        if self.read_only {
            // No background work ever runs: the shape is as settled as it will get.
            return Ok(());
        }
        let mut st = self.state.lock();
        // While this caller waits, level-0 leftovers are due (see `super::idle`).
        st.settling += 1;
        let result = loop {
            if let Some(why) = &st.bg_error {
                break Err(crate::error::Error::WritesStopped(why.clone()));
            }
            // Not busy: a job that has just installed its version may still be dropping
            // (and so deleting) the files it replaced.
            let idle = !st.flushing && st.compactions_running == 0;
            if st.imm.is_none() && idle && !self.wants_compaction(&mut st) {
                break Ok(());
            }
            self.work_cv.notify_all();
            self.done_cv.wait(&mut st);
        };
        st.settling -= 1;
        result
    }

    pub(crate) fn current_version(&self) -> Arc<Version> {
        Arc::clone(&self.view.load().version)
    }
}

/// The smallest range holding both `a` and `b`.
fn hull(a: UserRange, b: UserRange) -> UserRange {
    fn start_key(b: &Bound<Vec<u8>>) -> Option<&[u8]> {
        match b {
            Bound::Included(k) | Bound::Excluded(k) => Some(k),
            Bound::Unbounded => None,
        }
    }
    let start = match (start_key(&a.0), start_key(&b.0)) {
        (None, _) | (_, None) => Bound::Unbounded,
        // Included wins a tie: it holds one key more.
        (Some(x), Some(y)) if x < y || (x == y && matches!(a.0, Bound::Included(_))) => a.0,
        _ => b.0,
    };
    let end = match (start_key(&a.1), start_key(&b.1)) {
        (None, _) | (_, None) => Bound::Unbounded,
        (Some(x), Some(y)) if x > y || (x == y && matches!(a.1, Bound::Included(_))) => a.1,
        _ => b.1,
    };
    (start, end)
}

impl Host for DbInner {
    fn new_file_number(&self) -> u64 {
        DbInner::new_file_number(self)
    }

    fn get_at(&self, key: &[u8], seq: SeqNo) -> Result<Option<Vec<u8>>> {
        self.read_at(key, seq, None)
    }
}

/// The snapshot a compaction's filter reads at ([`DbInner::hold_job_snapshot`]), released
/// when the job ends.
struct JobSnapshot<'a> {
    db: &'a DbInner,
    seq: SeqNo,
    /// Registered among the live snapshots (only with a compaction filter).
    held: bool,
}

impl Drop for JobSnapshot<'_> {
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let mut snaps = self.db.snapshots.lock();
        if let Some(n) = snaps.get_mut(&self.seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.seq);
            }
        }
    }
}
