//! Appending records to a log.

use std::sync::Arc;

use crate::env::{SyncHandle, WritableFile};
use crate::error::{Error, Result};

use super::format::{BLOCK_SIZE, HEADER_SIZE, RecordType, encode_physical};
use super::sync_tracker::{LogSyncHandle, SyncTracker};

/// Appends logical records to a log file, cutting them into physical records that never
/// cross a 32 KiB block boundary.
///
/// After any failed append, flush or sync the writer refuses further work: it no longer knows
/// which bytes reached the file (and after a failed fsync the kernel may have dropped dirty
/// pages), so the log must be recovered by reading it, not by writing more. That includes a
/// failed fsync made from another thread through [`LogWriter::sync_handle`].
pub struct LogWriter {
    file: Box<dyn WritableFile>,
    /// Position inside the current block where the next byte goes; always `< BLOCK_SIZE`.
    block_offset: usize,
    failed: bool,
    /// A stand-in for an abandoned log ([`LogWriter::closed`]).
    closed: bool,
    /// Reused to assemble a record's bytes so each record is one `append` call.
    scratch: Vec<u8>,
    /// How far the log is durable, shared with the handles that sync it from other threads.
    tracker: Arc<SyncTracker>,
    /// The file's sync handle, asked for once (`None` inside: the file has none).
    handle: Option<Option<SyncHandle>>,
}

impl std::fmt::Debug for LogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogWriter")
            .field("len", &self.file.len())
            .field("block_offset", &self.block_offset)
            .field("failed", &self.failed)
            .finish()
    }
}

/// A record larger than this does not keep its scratch buffer alive after it is written.
const SCRATCH_KEEP: usize = 4 * BLOCK_SIZE;

impl LogWriter {
    /// Writes records to `file`. A fresh file starts at a block boundary; a file opened for
    /// appending (after recovery truncated it to [`super::LogReader::valid_len`]) continues
    /// inside the block its length ends in, so block alignment holds for the whole file.
    pub fn new(file: Box<dyn WritableFile>) -> LogWriter {
        let block_offset = (file.len() % BLOCK_SIZE as u64) as usize;
        let tracker = Arc::new(SyncTracker::default());
        // What the file held when it was opened was written by an earlier writer.
        tracker.set_acknowledged(file.len());
        LogWriter {
            file,
            block_offset,
            failed: false,
            closed: false,
            scratch: Vec::new(),
            tracker,
            handle: None,
        }
    }

    /// Records that the first `len` bytes (all flushed) hold acknowledged records: what a
    /// [`LogWriter::sync_handle`] caller syncs up to ([`LogSyncHandle::acknowledged_len`]).
    pub(crate) fn acknowledged(&self, len: u64) {
        self.tracker.set_acknowledged(len);
    }

    /// A handle that makes bytes already flushed to the OS durable from another thread while
    /// this writer keeps appending (`None` if the file cannot do that; see
    /// [`WritableFile::sync_handle`]). It shares this log's sync record: fsyncs through it and
    /// through [`LogWriter::sync`] coalesce, and a failure of either fails both for good.
    pub(crate) fn sync_handle(&mut self) -> Option<LogSyncHandle> {
        let file = &self.file;
        let handle = self.handle.get_or_insert_with(|| file.sync_handle());
        handle.as_ref().map(|h| LogSyncHandle {
            tracker: Arc::clone(&self.tracker),
            handle: Arc::clone(h),
        })
    }

    /// A writer that refuses all work: what stands in for a log abandoned after a failure.
    pub(crate) fn closed() -> LogWriter {
        LogWriter {
            file: Box::new(crate::env::MemWritableFile::new()),
            block_offset: 0,
            failed: true,
            closed: true,
            scratch: Vec::new(),
            tracker: Arc::default(),
            handle: None,
        }
    }

    /// Whether this is the stand-in for an abandoned log ([`LogWriter::closed`]).
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Appends one logical record (of any length, including zero). The bytes are buffered:
    /// they reach the OS on [`LogWriter::flush`] and the disk on [`LogWriter::sync`].
    ///
    /// # Errors
    /// The file's write error; [`Error::WritesStopped`] if an earlier call failed.
    pub fn add_record(&mut self, payload: &[u8]) -> Result<()> {
        self.check_usable()?;
        let mut out = std::mem::take(&mut self.scratch);
        out.clear();
        let mut block_offset = self.block_offset;
        let mut rest = payload;
        let mut first = true;
        loop {
            let left = BLOCK_SIZE - block_offset;
            if left < HEADER_SIZE {
                // Too small for a header: zero-fill so the next record starts a block.
                out.resize(out.len() + left, 0);
                block_offset = 0;
            }
            let room = BLOCK_SIZE - block_offset - HEADER_SIZE;
            let n = room.min(rest.len());
            let last = n == rest.len();
            let kind = match (first, last) {
                (true, true) => RecordType::Full,
                (true, false) => RecordType::First,
                (false, false) => RecordType::Middle,
                (false, true) => RecordType::Last,
            };
            encode_physical(&mut out, kind, &rest[..n]);
            block_offset = (block_offset + HEADER_SIZE + n) % BLOCK_SIZE;
            rest = &rest[n..];
            first = false;
            if last {
                break;
            }
        }
        let result = self.file.append(&out);
        if out.capacity() <= SCRATCH_KEEP {
            self.scratch = out;
        }
        match result {
            Ok(()) => {
                self.block_offset = block_offset;
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// Hands every appended record to the operating system: it survives a crash of this
    /// process, not of the machine.
    ///
    /// # Errors
    /// The file's write error; [`Error::WritesStopped`] if an earlier call failed.
    pub fn flush(&mut self) -> Result<()> {
        self.check_usable()?;
        let r = self.file.flush();
        self.failed = r.is_err();
        r
    }

    /// Flushes, then forces every appended record to stable storage (no fsync if one made
    /// through a [`LogWriter::sync_handle`] already covered them).
    ///
    /// # Errors
    /// The file's write or sync error; [`Error::WritesStopped`] if an earlier call failed.
    pub fn sync(&mut self) -> Result<()> {
        self.check_usable()?;
        let file = &mut self.file;
        let r = file.flush().and_then(|()| {
            let len = file.len();
            self.tracker.sync_to(len, || file.sync())
        });
        self.failed = r.is_err();
        r
    }

    /// Whether an earlier append, flush or sync failed (here or through a sync handle), so
    /// the writer refuses all work.
    pub(crate) fn has_failed(&self) -> bool {
        self.failed || self.tracker.has_failed()
    }

    /// Bytes in the log so far (including anything still buffered).
    pub fn len(&self) -> u64 {
        self.file.len()
    }

    /// True when the log holds no bytes.
    #[cfg(feature = "internals")]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn check_usable(&self) -> Result<()> {
        if self.has_failed() {
            return Err(Error::WritesStopped(
                "an earlier write or sync of this log failed; which bytes reached the disk is unknown"
                    .to_string(),
            ));
        }
        Ok(())
    }
}
