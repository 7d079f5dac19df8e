//! The background thread: flushes frozen memtables and runs compactions.
//!
//! It is the only thread that changes the table set after `open`, so it can prepare a version
//! edit without holding a lock, write it to the MANIFEST (fsynced), and only then take the
//! locks to install the new version.

use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::core::{DbInner, State};
use crate::compaction::filter_budget::{self, Shape};
use crate::compaction::pick::UserRange;
use crate::compaction::refilter::Refiltered;
use crate::compaction::{self, Context, Host, Job, Outcome, pick};
use crate::error::Result;
use crate::filename;
use crate::manifest::VersionEdit;
use crate::memtable::MemTable;
use crate::metrics::bump;
use crate::table_writer::TableWriter;
use crate::version::{TableFile, Version};

/// What the background thread found to do.
enum Work {
    Flush(Arc<MemTable>, u64),
    Compact,
}

pub(crate) fn run(db: Arc<DbInner>) {
    loop {
        let job = {
            let mut st = db.state.lock();
            loop {
                if st.shutting_down {
                    return;
                }
                if st.bg_error.is_none() {
                    if let Some((imm, log)) = st.imm.clone() {
                        st.busy = true;
                        break Work::Flush(imm, log);
                    }
                    if db.wants_compaction(&st) {
                        st.busy = true;
                        break Work::Compact;
                    }
                }
                db.work_cv.wait(&mut st);
            }
        };
        // A panic here (a bug) must not leave writers and `flush()` callers waiting forever
        // for a thread that is gone: it becomes the background error that stops writes.
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match job {
            Work::Flush(imm, log) => db.flush_memtable(&imm, log),
            Work::Compact => db.compact_once(),
        }))
        .unwrap_or_else(|panic| {
            let why = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            Err(crate::Error::WritesStopped(format!(
                "background job panicked: {why}"
            )))
        });
        let mut st = db.state.lock();
        if let Err(e) = result {
            db.set_bg_error(&mut st, &e);
        }
        st.jobs_done += 1;
        st.busy = false;
        db.done_cv.notify_all();
    }
}

impl DbInner {
    /// Writes the frozen memtable to a new level-0 table and retires its WAL.
    fn flush_memtable(&self, imm: &Arc<MemTable>, new_log: u64) -> Result<()> {
        self.flush_memtable_sized(imm, new_log, None)
    }

    /// As [`Self::flush_memtable`]; `shape`, when given, is the tree's (entries, probes) per
    /// level to size the filter for instead of the current version's (a running compaction
    /// passes the shape the tree will have once it is installed), and is updated with the
    /// new level-0 table.
    fn flush_memtable_sized(
        &self,
        imm: &Arc<MemTable>,
        new_log: u64,
        shape: Option<&mut Shape>,
    ) -> Result<()> {
        let number = self.state.lock().new_file_number();
        let mut edit = VersionEdit::default();
        if !imm.is_empty() {
            // The filter is sized for the tree as it will be with this table in level 0.
            let (mut entries, mut probes) = match &shape {
                Some(s) => **s,
                None => filter_budget::level_shape(&self.current_version()),
            };
            entries[0] += imm.len() as u64;
            // A memtable's keys usually span the whole key space.
            probes[0] += 1.0;
            if let Some(s) = shape {
                *s = (entries, probes);
            }
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
            );
            out.copy_all(&mut imm.iter(), || Ok(()))?;
            let written = out.finish()?;
            for meta in written {
                bump(&self.work.compaction_bytes_written, meta.size);
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

    /// Flushes the frozen memtable now, if there is one (called by a running compaction, on
    /// the background thread, so that writers waiting for room are not held up by it), with
    /// its filter sized for `shape`, the tree as it will be after that compaction.
    pub(crate) fn flush_pending_memtable(&self, shape: &mut Shape) -> Result<()> {
        let pending = self.state.lock().imm.clone();
        if let Some((imm, log)) = pending {
            self.flush_memtable_sized(&imm, log, Some(shape))?;
            let _st = self.state.lock();
            self.done_cv.notify_all();
        }
        Ok(())
    }

    /// Makes `edit` durable in the MANIFEST, then installs the resulting version for readers
    /// and marks the tables it removed as obsolete. `also` runs under the state lock at the
    /// moment of installation.
    pub(crate) fn log_and_apply(
        &self,
        mut edit: VersionEdit,
        also: impl FnOnce(&mut State),
    ) -> Result<()> {
        let current = Arc::clone(&self.view.load().version);
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
        self.manifest
            .lock()
            .as_mut()
            .ok_or_else(|| crate::Error::WritesStopped("no MANIFEST is open".into()))?
            .append(&edit)?;
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
        // Durable and installed: the old files may go once the last reader lets go of them.
        for f in removed {
            f.mark_obsolete();
        }
        Ok(())
    }

    /// Whether a compaction should run now.
    fn wants_compaction(&self, st: &State) -> bool {
        let version = self.view.load();
        st.manual_requested > st.manual_completed
            || compaction::is_due(&version.version, &self.opts, &st.refilter_given_up)
    }

    /// Runs one job: the manual full compaction if one was asked for, else the level with
    /// the highest score, else (under Monkey) one table's re-filter.
    fn compact_once(&self) -> Result<()> {
        let manual = {
            let mut st = self.state.lock();
            (st.manual_requested > st.manual_completed)
                .then(|| (st.manual_requested, st.manual_range.take()))
        };
        if let Some((request, range)) = manual {
            // Every request made before this point is served by this run (it compacts the
            // smallest range holding all of theirs); later ones get a run of their own.
            let range = range.unwrap_or((Bound::Unbounded, Bound::Unbounded));
            let result = self.compact_manually(&range);
            self.state.lock().manual_completed = request;
            return result;
        }
        let version = self.current_version();
        let (pointers, given_up) = {
            let st = self.state.lock();
            (st.compact_pointers.clone(), st.refilter_given_up.clone())
        };
        let snapshots = self.snapshot_list();
        let ctx = self.job_context(&version, &snapshots);
        match compaction::pick_job(&version, &self.opts, &pointers, &given_up) {
            None => Ok(()),
            Some(Job::Compact(plan)) => {
                let outcome = compaction::merge::run(&ctx, &version, plan)?;
                self.install_compaction(outcome)
            }
            Some(Job::Refilter(r)) => match compaction::refilter::run(&ctx, r)? {
                Refiltered::Done(outcome) => self.install_compaction(outcome),
                Refiltered::GaveUp(number) => {
                    let mut st = self.state.lock();
                    // Forget given-up tables that are gone, so the list does not only grow.
                    st.refilter_given_up
                        .retain(|n| version.all_files().any(|t| t.meta.number == *n));
                    st.refilter_given_up.push(number);
                    Ok(())
                }
            },
        }
    }

    /// A manual compaction of `range`: every step planned on the version the previous one
    /// left.
    fn compact_manually(&self, range: &UserRange) -> Result<()> {
        let target = pick::manual_target(&self.current_version(), range);
        for level in 0..target {
            let version = self.current_version();
            let snapshots = self.snapshot_list();
            if let Some(plan) = pick::manual_step(&version, level, target, range) {
                let ctx = self.job_context(&version, &snapshots);
                let outcome = compaction::merge::run(&ctx, &version, plan)?;
                self.install_compaction(outcome)?;
            }
        }
        Ok(())
    }

    fn job_context<'a>(&'a self, version: &'a Version, snapshots: &'a [u64]) -> Context<'a> {
        Context {
            env: &self.env,
            dir: &self.dir,
            opts: &self.opts,
            cache: &self.table_cache,
            version,
            snapshots,
            host: self,
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
            bytes_read,
            bytes_written,
        } = outcome;
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
        bump(&self.work.compactions, 1);
        bump(&self.work.compaction_bytes_read, bytes_read);
        bump(&self.work.compaction_bytes_written, bytes_written);
        Ok(())
    }

    /// Asks the background thread for a manual compaction of `range` and waits for it.
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
        self.work_cv.notify_one();
        loop {
            if let Some(why) = &st.bg_error {
                return Err(crate::Error::WritesStopped(why.clone()));
            }
            if st.manual_completed >= mine {
                return Ok(());
            }
            if st.shutting_down {
                return Err(crate::Error::WritesStopped(
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
        loop {
            if let Some(why) = &st.bg_error {
                return Err(crate::Error::WritesStopped(why.clone()));
            }
            // Not busy: a job that has just installed its version may still be dropping
            // (and so deleting) the files it replaced.
            if st.imm.is_none() && !st.busy && !self.wants_compaction(&st) {
                return Ok(());
            }
            self.work_cv.notify_one();
            self.done_cv.wait(&mut st);
        }
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

    fn between_entries(&self, shape_after: &mut Shape) -> Result<()> {
        self.flush_pending_memtable(shape_after)
    }
}
