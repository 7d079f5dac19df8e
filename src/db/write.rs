//! The write path: WAL first, then the memtable, then the new sequence number is published.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::core::{DbInner, Writer};
use crate::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::filename;
use crate::memtable::MemTable;
use crate::metrics::bump;
use crate::wal::LogWriter;

impl DbInner {
    /// Applies `batch` atomically: one WAL record, so a crash keeps all of it or none.
    pub(crate) fn write(&self, mut batch: WriteBatch) -> Result<()> {
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        let mut w = self.writer.lock();
        self.make_room(&mut w, false)?;
        let first = self.last_seq.load(Ordering::Relaxed) + 1;
        batch.set_sequence(first);
        let logged = w.log.add_record(batch.payload()).and_then(|()| {
            if self.opts.sync_writes {
                w.log.sync()
            } else {
                w.log.flush()
            }
        });
        if let Err(e) = logged {
            // The record may be partly in the file; nothing after it may be acknowledged.
            self.set_bg_error(&mut self.state.lock(), &e);
            return Err(e);
        }
        batch.insert_into(&w.mem);
        bump(
            &self.work.user_bytes_written,
            batch.approximate_size() as u64,
        );
        // Publish only after the memtable holds every entry, so readers never see half a batch.
        self.last_seq
            .store(first + batch.len() as u64 - 1, Ordering::Release);
        Ok(())
    }

    /// Makes sure the active memtable has room, freezing it (and starting a new WAL) when it is
    /// full, or when `force` and it holds anything. Waits while a frozen memtable is still being
    /// flushed or level 0 is at `level0_stop_writes`.
    pub(crate) fn make_room(&self, w: &mut Writer, force: bool) -> Result<()> {
        let mut st = self.state.lock();
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
                self.work_cv.notify_one();
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
            // The old WAL stays on disk until its memtable is flushed; push what it buffered
            // to the OS so that a crash cannot lose writes that were acknowledged. With
            // `sync_writes`, the new WAL's directory entry is made durable before any write
            // lands in it, or a power cut could drop the whole file along with writes that
            // were fsynced into it.
            let synced_entry = || {
                if self.opts.sync_writes {
                    self.env.sync_dir(&self.dir)
                } else {
                    Ok(())
                }
            };
            if let Err(e) = w.log.flush().and_then(|()| synced_entry()) {
                self.set_bg_error(&mut st, &e);
                break Err(e);
            }
            w.log = LogWriter::new(file);
            w.log_number = number;
            let frozen = std::mem::replace(&mut w.mem, Arc::new(MemTable::new()));
            st.imm = Some((Arc::clone(&frozen), number));
            let mem = Arc::clone(&w.mem);
            self.update_view(&mut st, |v| {
                v.imm = Some(frozen);
                v.mem = mem;
            });
            self.work_cv.notify_one();
            break Ok(());
        };
        if let Some(t) = stalled {
            bump(&self.work.stall_micros, t.elapsed().as_micros() as u64);
        }
        result
    }

    /// Freezes the active memtable (if it holds anything) and waits until it is a durable
    /// level-0 table.
    pub(crate) fn flush(&self) -> Result<()> {
        {
            let mut w = self.writer.lock();
            self.make_room(&mut w, true)?;
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
