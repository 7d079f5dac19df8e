//! The write path: WAL first, then the memtable, then the new sequence number is published.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::core::{DbInner, WalTip, Writer};
use super::write_delay::{DELAY_SLICE, delayed_write_rate};
use super::write_queue::{Group, Turn};
use crate::db::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::util::filename;
use crate::db::memtable::MemTable;
use crate::stats::metrics::{Stall, bump};
use crate::db::wal::LogWriter;

impl DbInner {
    /// Applies `batch` atomically: one WAL record, so a crash keeps all of it or none.
    /// Concurrent writers are committed in groups (see [`super::write_queue`]).
    pub(crate) fn write(&self, batch: WriteBatch) -> Result<()> {
        self.refuse_if_read_only("write")?;
        batch.validate()?;
        self.write_valid(batch)
    }

    /// [`DbInner::write`] for a batch known to be within the limits `validate` checks.
    pub(crate) fn write_valid(&self, batch: WriteBatch) -> Result<()> {
        self.refuse_if_read_only("write")?;
        if batch.is_empty() {
            return Ok(());
        }
        let mut leader = match self.write_queue.join(batch) {
            Turn::Done(outcome) => return outcome,
            Turn::Lead(leader) => leader,
        };
        let mut w = self.writer.lock();
        // Gathered with the writer lock held: writers that queued while this one waited
        // for it join the group.
        let outcome = self.commit_group(&mut w, leader.gather());
        drop(w);
        leader.finish(outcome)
    }

    /// Commits a group of batches: room in the memtable for all of them, one WAL record per
    /// batch (consecutive, with consecutive sequence numbers), one flush and (with
    /// `sync_writes`) one fsync, then every batch into the memtable, and only then the
    /// group's last sequence number published, so readers never see part of a batch, nor a
    /// write before it is durable under `sync_writes`. Any failure fails the whole group.
    fn commit_group(&self, w: &mut Writer, batches: &mut Group) -> Result<()> {
        let bytes: u64 = batches.iter().map(|b| b.approximate_size() as u64).sum();
        self.make_room(w, false, bytes)?;
        let first = self.last_seq.load(Ordering::Relaxed) + 1;
        let mut next = first;
        for b in batches.iter_mut() {
            b.set_sequence(next);
            next += b.len() as u64;
        }
        let last = next - 1;
        let acked_len = w.log.len();
        let mut appended = 0;
        let mut flushed = false;
        let logged = (|| {
            for b in batches.iter() {
                w.log.add_record(b.payload())?;
                appended += 1;
            }
            w.log.flush()?;
            flushed = true;
            if self.opts.sync_writes {
                w.log.sync()?;
            }
            Ok(())
        })();
        if let Err(e) = logged {
            // A flushed record may be in the file, and so may a whole record of the group
            // that came before the failure (a full buffer goes to the OS on its own).
            let reached_os = flushed || (appended > 0 && batches.len() > 1);
            let e = self.abandon_log(w, acked_len, reached_os, e);
            // The failed batches keep their sequence numbers: where their outcome is
            // unknown, their records may still be replayed at the next open, and a write
            // acknowledged after `resume` must then be newer than each of their entries. No
            // entry carries them in memory, so publishing them shows readers nothing.
            self.last_seq.store(last, Ordering::Release);
            self.set_bg_error(&mut self.state.lock(), &e);
            return Err(e);
        }
        let len = w.log.len();
        bump(&self.work.wal_bytes_written, len - acked_len);
        if !self.opts.sync_writes {
            w.wal_sync.appended(len, || w.log.sync_handle());
        }
        w.log.acknowledged(len);
        for b in batches.iter() {
            b.insert_into(&w.mem);
            bump(&self.work.user_bytes_written, b.approximate_size() as u64);
        }
        // Published only after the memtable holds every entry of the group.
        self.last_seq.store(last, Ordering::Release);
        Ok(())
    }

    /// After a failed append, flush or sync of the WAL: the log is not written again (which
    /// of its bytes reached the disk is unknown), and it is cut back to `acked_len`, the end
    /// of the last acknowledged record, so no byte of the failed record can be replayed. If
    /// that cut fails and the record had reached the OS, the outcome is unknown.
    fn abandon_log(&self, w: &mut Writer, acked_len: u64, reached_os: bool, e: Error) -> Error {
        // Dropping the writer may push out buffered bytes of the failed record; the cut
        // below removes them.
        drop(std::mem::replace(&mut w.log, LogWriter::closed()));
        let path = filename::log_path(&self.dir, w.log_number);
        match self.env.truncate(&path, acked_len) {
            Ok(()) => e,
            Err(cut) if reached_os => Error::OutcomeUnknown(format!(
                "{e}; the record reached the OS and cutting {} back to {acked_len} bytes \
                 failed: {cut}",
                path.display()
            )),
            // Nothing of it reached the OS, and the writer that buffered it is gone.
            Err(_) => e,
        }
    }

    /// Starts a fresh WAL (and, if a MANIFEST append failed, a fresh MANIFEST) after a
    /// failure and lets writes and background work go on, if the database stopped writes
    /// after an error; does nothing otherwise. The memtable keeps every acknowledged write;
    /// the old WAL, cut back to its last acknowledged record, stays until that memtable is
    /// flushed.
    pub(crate) fn resume(&self) -> Result<()> {
        self.refuse_if_read_only("resume")?;
        let mut w = self.writer.lock();
        let failures_seen = {
            let st = self.state.lock();
            if st.bg_error.is_none() {
                return Ok(());
            }
            st.bg_failures
        };
        // A log the failure did not touch (it came from a flush or compaction) may hold
        // acknowledged writes that were never synced: they must be durable before writes
        // go to a new log, or a power cut could lose them and keep later ones (a hole). A
        // log a failed write abandoned was cut back to its last acknowledged record and
        // synced then; so is this one if its sync fails here (the cut syncs what it keeps).
        if !w.log.has_failed() {
            let acked_len = w.log.len();
            if let Err(e) = w.log.sync() {
                return Err(self.abandon_log(&mut w, acked_len, true, e));
            }
        }
        self.restart_manifest_if_failed()?;
        let mut st = self.state.lock();
        let number = st.new_file_number();
        let path = filename::log_path(&self.dir, number);
        let mut log = LogWriter::new(self.env.create_writable(&path)?);
        // The new log is synced, with its directory entry, before anything relies on it.
        let started = log.sync().and_then(|()| self.env.sync_dir(&self.dir));
        if let Err(e) = started {
            drop(log);
            let _ = self.env.remove_file(&path);
            return Err(e);
        }
        w.log = log;
        w.log_number = number;
        w.wal_sync.new_log();
        self.new_wal_tip(&mut w, true);
        // The state lock was let go while the logs and the MANIFEST were dealt with: a job
        // that failed meanwhile must not have its failure cleared unseen. The fresh WAL
        // stays; a later resume clears the error once that cause is gone too.
        if st.bg_failures != failures_seen {
            let why = st.bg_error.clone().unwrap_or_default();
            return Err(crate::error::Error::WritesStopped(format!(
                "{why}; another background job failed while resuming"
            )));
        }
        st.bg_error = None;
        self.writes_stopped.store(false, Ordering::Release);
        self.work_cv.notify_all();
        self.done_cv.notify_all();
        Ok(())
    }

    /// Makes every write acknowledged so far durable: fsyncs the WAL up to the last
    /// acknowledged record, without the writer lock, so writers keep appending meanwhile;
    /// concurrent calls share one fsync. A failed fsync stops writes, as a failed WAL write
    /// does.
    pub(crate) fn sync_wal(&self) -> Result<()> {
        self.refuse_if_read_only("sync_wal")?;
        if let Some(why) = &self.state.lock().bg_error {
            return Err(Error::WritesStopped(why.clone()));
        }
        let (number, handle, entry_synced) = {
            let t = self.wal_tip.lock();
            (t.log_number, t.sync.clone(), t.entry_synced)
        };
        let Some(handle) = handle else {
            // The env cannot sync a file another thread appends to.
            let mut w = self.writer.lock();
            return self.sync_wal_locked(&mut w);
        };
        if let Err(e) = handle.sync_to(handle.acknowledged_len()) {
            return Err(self.stop_after_failed_sync(number, e));
        }
        // Without `sync_writes` a new WAL's directory entry is not synced when it is created:
        // a synced log a power cut could unlink would lose what this call promised. Once per
        // WAL is enough.
        if !entry_synced {
            self.env.sync_dir(&self.dir)?;
            let mut t = self.wal_tip.lock();
            if t.log_number == number {
                t.entry_synced = true;
            }
        }
        Ok(())
    }

    /// After a failed fsync of WAL `number` made outside the writer lock: the log is
    /// abandoned as after a failed write (cut back to its last acknowledged record, which,
    /// with the writer lock held, is its end) unless a failed write already abandoned it,
    /// and writes stop. The log's sync record already refuses every later sync of it.
    fn stop_after_failed_sync(&self, number: u64, e: Error) -> Error {
        let mut w = self.writer.lock();
        let e = if w.log_number == number && !w.log.is_closed() {
            let acked_len = w.log.len();
            self.abandon_log(&mut w, acked_len, true, e)
        } else {
            e
        };
        self.set_bg_error(&mut self.state.lock(), &e);
        e
    }

    /// [`DbInner::sync_wal`] for a caller holding the writer lock.
    pub(crate) fn sync_wal_locked(&self, w: &mut Writer) -> Result<()> {
        if let Some(why) = &self.state.lock().bg_error {
            return Err(Error::WritesStopped(why.clone()));
        }
        let acked_len = w.log.len();
        if let Err(e) = w.log.sync() {
            let e = self.abandon_log(w, acked_len, true, e);
            self.set_bg_error(&mut self.state.lock(), &e);
            return Err(e);
        }
        let number = w.log_number;
        let entry_synced = self.wal_tip.lock().entry_synced;
        if !entry_synced {
            self.env.sync_dir(&self.dir)?;
            let mut t = self.wal_tip.lock();
            if t.log_number == number {
                t.entry_synced = true;
            }
        }
        Ok(())
    }

    /// Points `sync_wal` at the writer's new WAL (`entry_synced`: its directory entry is
    /// already durable).
    fn new_wal_tip(&self, w: &mut Writer, entry_synced: bool) {
        *self.wal_tip.lock() = WalTip {
            log_number: w.log_number,
            sync: w.log.sync_handle(),
            entry_synced,
        };
    }

    /// Makes sure the active memtable has room for a write of `bytes`, freezing it (and
    /// starting a new WAL) when it is full, or when `force` and it holds anything. Delays the
    /// write under pressure (see [`super::write_delay`]; never a forced flush), and waits
    /// while a frozen memtable is still being flushed or level 0 is at `level0_stop_writes`.
    pub(crate) fn make_room(&self, w: &mut Writer, force: bool, bytes: u64) -> Result<()> {
        let mut st = self.state.lock();
        let mut stall = Stall::default();
        if !force && st.bg_error.is_none() && !st.shutting_down {
            match self.write_delay_rate(w, &st) {
                Some(rate) => {
                    stall.paced = true;
                    let now = Instant::now();
                    let pause = w.pacing.charge(now, bytes, rate);
                    if !pause.is_zero() {
                        // Other writers queue behind this one (it leads the write group and
                        // holds the writer lock), so the pace applies to all of them;
                        // background jobs go on. The pause is slept in slices, re-checking
                        // the pressure after each one and whenever a job finishes: the
                        // flush or compaction it was computed for may end long before the
                        // pause would (RocksDB's delayed-write loop).
                        let until = now + pause;
                        loop {
                            let left = until.saturating_duration_since(Instant::now());
                            if left.is_zero() {
                                break;
                            }
                            self.done_cv.wait_for(&mut st, left.min(DELAY_SLICE));
                            if st.bg_error.is_some()
                                || st.shutting_down
                                || self.write_delay_rate(w, &st).is_none()
                            {
                                w.pacing.reset();
                                break;
                            }
                        }
                        stall.delayed = now.elapsed();
                    }
                }
                None => w.pacing.reset(),
            }
        }
        let mut stalled: Option<Instant> = None;
        let result = loop {
            if let Some(why) = &st.bg_error {
                break Err(Error::WritesStopped(why.clone()));
            }
            if st.shutting_down {
                break Err(Error::WritesStopped("the database is closing".into()));
            }
            let full = w.mem.approximate_bytes() >= self.opts.memtable_bytes;
            let forced = force && !w.mem.is_empty();
            if !full && !forced {
                break Ok(());
            }
            let l0_files = self.view.load().version.levels()[0].len();
            if st.imm.is_some() || l0_files >= self.opts.level0_stop_writes {
                stalled.get_or_insert_with(Instant::now);
                self.work_cv.notify_all();
                self.done_cv.wait(&mut st);
                continue;
            }
            let number = st.new_file_number();
            let path = filename::log_path(&self.dir, number);
            let file = match self.env.create_writable(&path) {
                Ok(f) => f,
                Err(e) => {
                    self.set_bg_error(&mut st, &e);
                    break Err(e);
                }
            };
            // The old WAL stays on disk until its memtable is flushed. It is synced before
            // the new one takes writes: otherwise a power cut could keep later writes (synced
            // into the new WAL) and lose earlier ones, leaving a hole rather than a prefix.
            // With `sync_writes`, the new WAL's directory entry is made durable before any
            // write lands in it, or a power cut could drop the whole file along with writes
            // that were fsynced into it.
            let synced_entry = || {
                if self.opts.sync_writes {
                    self.env.sync_dir(&self.dir)
                } else {
                    Ok(())
                }
            };
            let acked_len = w.log.len();
            if let Err(e) = w.log.sync() {
                // As after a failed write: cut back to the last acknowledged record (all
                // of it, here) and synced by the cut, or the outcome is unknown.
                drop(file);
                let _ = self.env.remove_file(&path);
                let e = self.abandon_log(w, acked_len, true, e);
                self.set_bg_error(&mut st, &e);
                break Err(e);
            }
            if let Err(e) = synced_entry() {
                self.set_bg_error(&mut st, &e);
                break Err(e);
            }
            w.log = LogWriter::new(file);
            w.log_number = number;
            w.wal_sync.new_log();
            self.new_wal_tip(w, self.opts.sync_writes);
            let fresh = Arc::new(MemTable::with_budget(self.opts.memtable_bytes));
            let frozen = std::mem::replace(&mut w.mem, fresh);
            st.imm = Some((Arc::clone(&frozen), number));
            let mem = Arc::clone(&w.mem);
            self.update_view(&mut st, |v| {
                v.imm = Some(frozen);
                v.mem = mem;
            });
            self.work_cv.notify_all();
            break Ok(());
        };
        stall.stopped = stalled.map(|t| t.elapsed());
        self.work.count_stall(stall);
        result
    }

    /// The rate writes are paced to now (see [`super::write_delay`]), `None` when they run
    /// free.
    fn write_delay_rate(&self, w: &Writer, st: &super::core::State) -> Option<u64> {
        let l0_files = self.view.load().version.levels()[0].len();
        let fill = w.mem.approximate_bytes() as f64 / self.opts.memtable_bytes as f64;
        delayed_write_rate(&self.opts, l0_files, st.imm.is_some(), fill)
    }

    /// Freezes the active memtable (if it holds anything) and waits until it is a durable
    /// level-0 table.
    pub(crate) fn flush(&self) -> Result<()> {
        self.refuse_if_read_only("flush")?;
        {
            let mut w = self.writer.lock();
            self.make_room(&mut w, true, 0)?;
        }
        let mut st = self.state.lock();
        loop {
            if let Some(why) = &st.bg_error {
                return Err(Error::WritesStopped(why.clone()));
            }
            if st.imm.is_none() {
                return Ok(());
            }
            self.done_cv.wait(&mut st);
        }
    }
}
