//! Reading records back from a log, telling a torn tail from real damage.
//!
//! A log is read one 32 KiB block at a time (a physical record never crosses a block
//! boundary, so a block parses on its own), from a file through positional reads or from an
//! image in memory. Deciding whether damage is a torn tail means looking for a good record
//! after it, which also goes block by block: the reader never holds more than one block, a
//! block being scanned, and the record being assembled (at most [`MAX_RECORD_BYTES`]).

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::env::{Env, RandomAccessFile};
use crate::error::{Error, Result};

use super::format::{
    BLOCK_SIZE, Physical, RecordType, next_good_record, parse_at, records_hide_in_cut_record,
    resync_point,
};

/// The largest logical record a reader assembles (`Options`' `MAX_BATCH_BYTES`: the
/// database refuses bigger write batches, and MANIFEST edits are far smaller): a chain of
/// fragments claiming more is `Corruption` in strict mode, a dropped record in best-effort
/// mode, never an allocation that grows until memory runs out.
pub const MAX_RECORD_BYTES: usize = 1 << 30;

/// Where a log's bytes come from.
#[derive(Debug)]
enum Source {
    /// An image in memory (tests and fuzzing).
    #[cfg(any(test, feature = "internals"))]
    Memory(Vec<u8>),
    File(Arc<dyn RandomAccessFile>),
}

impl Source {
    fn len(&self) -> u64 {
        match self {
            #[cfg(any(test, feature = "internals"))]
            Source::Memory(data) => data.len() as u64,
            Source::File(file) => file.size(),
        }
    }

    /// The block starting at `start` (a multiple of the block size): up to a block's bytes,
    /// fewer at the end of the log; `spare`'s allocation may be reused.
    fn block(&self, start: u64, spare: Vec<u8>) -> Result<Vec<u8>> {
        let len = self.len().saturating_sub(start).min(BLOCK_SIZE as u64) as usize;
        match self {
            #[cfg(any(test, feature = "internals"))]
            Source::Memory(data) => {
                let mut out = spare;
                out.clear();
                let from = start as usize;
                out.extend_from_slice(&data[from..from + len]);
                Ok(out)
            }
            Source::File(file) => file.read_at_reusing(start, len, spare),
        }
    }
}

/// How a [`LogReader`] treats damage that is *not* at the tail of the log.
///
/// Either way a damaged or incomplete tail — bytes after which no good record follows, which
/// is what a crash in the middle of a write leaves — ends the log quietly: the records
/// before it are returned and [`LogReader::tail_dropped`] says what was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryMode {
    /// Damage followed by good records (bit rot, a bad sector, a misdirected write) is an
    /// [`Error::Corruption`]: records that were acknowledged may have been lost.
    #[default]
    Strict,
    /// Skip damaged stretches, keep every record that can still be read whole, and list what
    /// was skipped in [`LogReader::dropped`].
    BestEffort,
}

/// A logical record whose later fragments have not been read yet.
#[derive(Debug)]
struct Pending {
    start: u64,
    buf: Vec<u8>,
    /// Grew past the record limit and was dropped (best effort): its remaining fragments
    /// are passed over.
    oversize: bool,
}

/// One parse result, detached from the borrow of the image.
enum Step {
    Record {
        kind: RecordType,
        payload: Range<usize>,
        end: u64,
    },
    Skip(u64),
    End,
    Bad(String, bool),
}

#[derive(Debug)]
enum State {
    Reading,
    Done,
    /// Strict mode met middle damage; repeated on every later call.
    Failed {
        offset: u64,
        why: String,
    },
}

/// Reads the logical records of a log, block by block.
#[derive(Debug)]
pub struct LogReader {
    source: Source,
    path: PathBuf,
    mode: RecoveryMode,
    /// The block holding `pos` (once loaded), starting at `block_start`.
    block: Vec<u8>,
    block_start: u64,
    block_loaded: bool,
    pos: u64,
    pending: Option<Pending>,
    state: State,
    valid_len: u64,
    last_record_offset: u64,
    tail: Option<(u64, String)>,
    dropped: Vec<(u64, u64, String)>,
    /// The most bytes held at once (blocks and the record being assembled), for tests.
    peak_buffered: usize,
    /// [`MAX_RECORD_BYTES`], smaller in tests.
    max_record: usize,
}

impl LogReader {
    /// Reads `data`, the whole content of the log at `path` held in memory (`path` only
    /// names the file in errors).
    #[cfg(any(test, feature = "internals"))]
    pub fn new(data: Vec<u8>, path: PathBuf, mode: RecoveryMode) -> LogReader {
        LogReader::over(Source::Memory(data), path, mode)
    }

    /// Reads the log at `path` from the file, a block at a time.
    ///
    /// # Errors
    /// I/O errors opening it; `Corruption` if it is not a regular file.
    pub fn open(env: &dyn Env, path: &Path, mode: RecoveryMode) -> Result<LogReader> {
        let file = env.open_random_access(path)?;
        Ok(LogReader::over(
            Source::File(file),
            path.to_path_buf(),
            mode,
        ))
    }

    /// Reads the log at `path` from `offset` on, which must be where a record starts (the
    /// [`LogReader::valid_len`] of an earlier reader of the same log): how a log that is
    /// still being appended to is read a piece at a time (a secondary's catch-up). Records
    /// before `offset` are neither read nor checked.
    ///
    /// # Errors
    /// As for [`LogReader::open`].
    pub(crate) fn open_at(
        env: &dyn Env,
        path: &Path,
        mode: RecoveryMode,
        offset: u64,
    ) -> Result<LogReader> {
        let mut reader = LogReader::open(env, path, mode)?;
        reader.pos = offset;
        reader.valid_len = offset;
        reader.last_record_offset = offset;
        Ok(reader)
    }

    fn over(source: Source, path: PathBuf, mode: RecoveryMode) -> LogReader {
        LogReader {
            source,
            path,
            mode,
            block: Vec::new(),
            block_start: 0,
            block_loaded: false,
            pos: 0,
            pending: None,
            state: State::Reading,
            valid_len: 0,
            last_record_offset: 0,
            tail: None,
            dropped: Vec::new(),
            peak_buffered: 0,
            max_record: MAX_RECORD_BYTES,
        }
    }

    /// Sets a smaller record limit than [`MAX_RECORD_BYTES`] (tests of the limit).
    #[cfg(test)]
    pub(crate) fn with_max_record(mut self, bytes: usize) -> LogReader {
        self.max_record = bytes;
        self
    }

    /// Makes `block` the one holding `at`.
    fn load_block_for(&mut self, at: u64) -> Result<()> {
        let start = at - at % BLOCK_SIZE as u64;
        if !self.block_loaded || self.block_start != start {
            let spare = std::mem::take(&mut self.block);
            self.block = self
                .source
                .block(start, spare)
                .map_err(|e| e.located(&self.path, 0))?;
            self.block_start = start;
            self.block_loaded = true;
            self.note_buffered(0);
        }
        Ok(())
    }

    fn note_buffered(&mut self, extra: usize) {
        let held = self.block.len() + self.pending.as_ref().map_or(0, |p| p.buf.len()) + extra;
        self.peak_buffered = self.peak_buffered.max(held);
    }

    /// The next logical record, or `Ok(None)` at the end of the log (including the end
    /// made by a torn or damaged tail).
    ///
    /// # Errors
    /// In [`RecoveryMode::Strict`], [`Error::Corruption`] naming the file and the offset of
    /// the damage when a damaged record, a fragment without its start, or a record without
    /// its end is followed by a good record. Once returned, every later call returns it again.
    pub fn next_record(&mut self) -> Result<Option<Vec<u8>>> {
        loop {
            match &self.state {
                State::Reading => {}
                State::Done => return Ok(None),
                State::Failed { offset, why } => {
                    return Err(Error::corruption(&self.path, *offset, why.clone()));
                }
            }
            let at = self.pos;
            let len = self.source.len();
            let step = if at >= len {
                Step::End
            } else {
                self.load_block_for(at)?;
                let base = self.block_start;
                let rel = (at - base) as usize;
                // Copy what is needed out of the parse so `self` can be mutated below.
                match parse_at(&self.block, rel) {
                    Physical::Record { kind, payload, end } => Step::Record {
                        kind,
                        payload: end - payload.len()..end,
                        end: base + end as u64,
                    },
                    Physical::BlockTrailer { next } => Step::Skip(base + next as u64),
                    // The end of a block that is not the log's last: go on to the next.
                    Physical::End => Step::Skip(base + self.block.len() as u64),
                    Physical::Bad {
                        problem,
                        cut_by_end,
                    } => Step::Bad(problem.describe(), cut_by_end),
                }
            };
            match step {
                Step::End => {
                    if let Some(p) = self.pending.take() {
                        self.tail = Some((
                            p.start,
                            "the log ends inside a record (its last fragment was never written)"
                                .to_string(),
                        ));
                    }
                    self.state = State::Done;
                }
                Step::Skip(next) => self.pos = next,
                Step::Bad(why, cut_by_end) => self.damaged(at, why, cut_by_end)?,
                Step::Record { kind, payload, end } => {
                    self.pos = end;
                    match kind {
                        RecordType::Full | RecordType::First => {
                            if let Some(p) = self.pending.take() {
                                self.inconsistent(
                                    p.start,
                                    at,
                                    format!("record has no LAST fragment; a new record starts at byte {at}"),
                                )?;
                            }
                            if kind == RecordType::Full {
                                let record = self.block[payload].to_vec();
                                return Ok(Some(self.complete(at, end, record)));
                            }
                            self.pending = Some(Pending {
                                start: at,
                                buf: self.block[payload].to_vec(),
                                oversize: false,
                            });
                            self.note_buffered(0);
                        }
                        RecordType::Middle | RecordType::Last => match self.pending.take() {
                            None => self.inconsistent(
                                at,
                                end,
                                format!(
                                    "{kind:?} fragment without the FIRST fragment of its record"
                                ),
                            )?,
                            Some(mut p) => {
                                if p.oversize {
                                    if kind == RecordType::Middle {
                                        self.pending = Some(p);
                                    }
                                    continue;
                                }
                                if p.buf.len() + payload.len() > self.max_record {
                                    // Strict: an error; best effort: the record is dropped,
                                    // and its remaining fragments passed over.
                                    self.inconsistent(
                                        p.start,
                                        end,
                                        format!(
                                            "record grows past {} bytes (the most a log \
                                             record may hold) at the fragment at byte {at}",
                                            self.max_record
                                        ),
                                    )?;
                                    if kind == RecordType::Middle {
                                        self.pending = Some(Pending {
                                            start: p.start,
                                            buf: Vec::new(),
                                            oversize: true,
                                        });
                                    }
                                    continue;
                                }
                                p.buf.extend_from_slice(&self.block[payload]);
                                if kind == RecordType::Last {
                                    return Ok(Some(self.complete(p.start, end, p.buf)));
                                }
                                self.pending = Some(p);
                                self.note_buffered(0);
                            }
                        },
                    }
                }
            }
        }
    }

    /// Stops the reader with `Corruption` at `offset`, repeated on every later call.
    fn fail(&mut self, offset: u64, why: String) -> Error {
        let err = Error::corruption(&self.path, offset, why.clone());
        self.state = State::Failed { offset, why };
        err
    }

    fn complete(&mut self, start: u64, end: u64, record: Vec<u8>) -> Vec<u8> {
        self.valid_len = end;
        self.last_record_offset = start;
        record
    }

    /// The offset of the first good record at or after `from`, looking block by block to
    /// the end of the log if need be.
    fn next_good_from(&mut self, from: u64) -> Result<Option<u64>> {
        let len = self.source.len();
        let mut at = from;
        let mut scan = Vec::new();
        while at < len {
            let start = at - at % BLOCK_SIZE as u64;
            scan = self
                .source
                .block(start, scan)
                .map_err(|e| e.located(&self.path, 0))?;
            self.note_buffered(scan.len());
            if let Some(rel) = next_good_record(&scan, (at - start) as usize) {
                return Ok(Some(start + rel as u64));
            }
            at = start + scan.len() as u64;
        }
        Ok(None)
    }

    /// Bad bytes at `at` (in the loaded block): a torn tail if no good record follows, else
    /// middle damage.
    fn damaged(&mut self, at: u64, why: String, cut_by_end: bool) -> Result<()> {
        let base = self.block_start;
        let rel = (at - base) as usize;
        let resume = base + resync_point(&self.block, rel, cut_by_end) as u64;
        let mut next = self.next_good_from(resume)?;
        if next.is_none()
            && cut_by_end
            && self.mode == RecoveryMode::Strict
            && records_hide_in_cut_record(&self.block, rel)
        {
            // Not a torn write but a damaged length: report it, resuming nowhere.
            next = Some(self.source.len());
        }
        let Some(next) = next else {
            // Nothing good after the damage: it is the tail a crash mid-write leaves. A record
            // whose earlier fragments were read is cut with it.
            let start = self.pending.take().map_or(at, |p| p.start);
            self.tail = Some((start, why));
            self.state = State::Done;
            return Ok(());
        };
        let mut why = why;
        if let Some(p) = self.pending.take() {
            if self.mode == RecoveryMode::Strict {
                // Report the damaged fragment itself; say whose fragment it was.
                why = format!(
                    "{why} (a fragment of the record starting at byte {})",
                    p.start
                );
            } else {
                self.inconsistent(
                    p.start,
                    at,
                    format!("record abandoned: a later fragment at byte {at} is damaged"),
                )?;
            }
        }
        self.inconsistent(at, next, why)?;
        self.pos = next;
        Ok(())
    }

    /// Bytes `start..end` cannot be returned although good records follow: an error in strict
    /// mode, a skipped region in best-effort mode.
    fn inconsistent(&mut self, start: u64, end: u64, why: String) -> Result<()> {
        match self.mode {
            RecoveryMode::Strict => Err(self.fail(start, why)),
            RecoveryMode::BestEffort => {
                self.dropped
                    .push((start, end.saturating_sub(start), why));
                Ok(())
            }
        }
    }

    /// The length of the prefix of the log that ends with the last complete record returned
    /// so far. After `next_record` returned `Ok(None)`, truncating the file to this length
    /// removes a torn tail so new records can be appended after good ones.
    pub fn valid_len(&self) -> u64 {
        self.valid_len
    }

    /// The offset of the first fragment of the record most recently returned.
    pub fn last_record_offset(&self) -> u64 {
        self.last_record_offset
    }

    /// The offset where a torn or damaged tail starts and what was wrong with it, once the
    /// reader has reached it.
    pub fn tail_dropped(&self) -> Option<(u64, String)> {
        self.tail.clone()
    }

    /// In [`RecoveryMode::BestEffort`]: every skipped region before the tail, as
    /// `(offset, length in bytes, why)`. Always empty in strict mode.
    pub fn dropped(&self) -> &[(u64, u64, String)] {
        &self.dropped
    }


    /// The size of the log.
    pub fn image_len(&self) -> u64 {
        self.source.len()
    }

    /// Calls `f` with each block of the log from the one holding `offset` on, with the
    /// block's offset, until `f` returns `Ok(false)` or the log ends.
    ///
    /// # Errors
    /// I/O errors reading the log; `f`'s errors.
    pub(crate) fn for_each_block_from(
        &self,
        offset: u64,
        mut f: impl FnMut(u64, &[u8]) -> Result<bool>,
    ) -> Result<()> {
        let len = self.source.len();
        let mut start = offset - offset % BLOCK_SIZE as u64;
        let mut buf = Vec::new();
        while start < len {
            buf = self
                .source
                .block(start, buf)
                .map_err(|e| e.located(&self.path, 0))?;
            if !f(start, &buf)? {
                return Ok(());
            }
            start += buf.len() as u64;
        }
        Ok(())
    }

    /// The most bytes the reader has held at once: the blocks it read or scanned and the
    /// record it was assembling.
    #[cfg(test)]
    pub(crate) fn peak_buffered(&self) -> usize {
        self.peak_buffered
    }
}
