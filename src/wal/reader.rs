//! Reading records back from a log image, telling a torn tail from real damage.

use std::ops::Range;
use std::path::PathBuf;

use crate::error::{Error, Result};

use super::format::{
    Physical, RecordType, next_good_record, parse_at, records_hide_in_cut_record, resync_point,
};

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
    start: usize,
    buf: Vec<u8>,
}

/// One parse result, detached from the borrow of the image.
enum Step {
    Record {
        kind: RecordType,
        payload: Range<usize>,
        end: usize,
    },
    Skip(usize),
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

/// Reads the logical records of a whole log image held in memory.
#[derive(Debug)]
pub struct LogReader {
    data: Vec<u8>,
    path: PathBuf,
    mode: RecoveryMode,
    pos: usize,
    pending: Option<Pending>,
    state: State,
    valid_len: u64,
    last_record_offset: u64,
    tail: Option<(u64, String)>,
    dropped: Vec<(u64, u64, String)>,
}

impl LogReader {
    /// Reads `data`, the whole content of the log at `path` (`path` only names the file in
    /// errors).
    pub fn new(data: Vec<u8>, path: PathBuf, mode: RecoveryMode) -> LogReader {
        LogReader {
            data,
            path,
            mode,
            pos: 0,
            pending: None,
            state: State::Reading,
            valid_len: 0,
            last_record_offset: 0,
            tail: None,
            dropped: Vec::new(),
        }
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
            // Copy what is needed out of the parse so `self` can be mutated below.
            let step = match parse_at(&self.data, at) {
                Physical::Record { kind, payload, end } => Step::Record {
                    kind,
                    payload: end - payload.len()..end,
                    end,
                },
                Physical::BlockTrailer { next } => Step::Skip(next),
                Physical::End => Step::End,
                Physical::Bad {
                    problem,
                    cut_by_end,
                } => Step::Bad(problem.describe(), cut_by_end),
            };
            match step {
                Step::End => {
                    if let Some(p) = self.pending.take() {
                        self.tail = Some((
                            p.start as u64,
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
                                let record = self.data[payload].to_vec();
                                return Ok(Some(self.complete(at, end, record)));
                            }
                            self.pending = Some(Pending {
                                start: at,
                                buf: self.data[payload].to_vec(),
                            });
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
                                p.buf.extend_from_slice(&self.data[payload]);
                                if kind == RecordType::Last {
                                    return Ok(Some(self.complete(p.start, end, p.buf)));
                                }
                                self.pending = Some(p);
                            }
                        },
                    }
                }
            }
        }
    }

    fn complete(&mut self, start: usize, end: usize, record: Vec<u8>) -> Vec<u8> {
        self.valid_len = end as u64;
        self.last_record_offset = start as u64;
        record
    }

    /// Bad bytes at `at`: a torn tail if no good record follows, else middle damage.
    fn damaged(&mut self, at: usize, why: String, cut_by_end: bool) -> Result<()> {
        let resume = resync_point(&self.data, at, cut_by_end);
        let mut next = next_good_record(&self.data, resume);
        if next.is_none()
            && cut_by_end
            && self.mode == RecoveryMode::Strict
            && records_hide_in_cut_record(&self.data, at)
        {
            // Not a torn write but a damaged length: report it, resuming nowhere.
            next = Some(self.data.len());
        }
        let Some(next) = next else {
            // Nothing good after the damage: it is the tail a crash mid-write leaves. A record
            // whose earlier fragments were read is cut with it.
            let start = self.pending.take().map_or(at, |p| p.start);
            self.tail = Some((start as u64, why));
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
    fn inconsistent(&mut self, start: usize, end: usize, why: String) -> Result<()> {
        match self.mode {
            RecoveryMode::Strict => {
                let err = Error::corruption(&self.path, start as u64, why.clone());
                self.state = State::Failed {
                    offset: start as u64,
                    why,
                };
                Err(err)
            }
            RecoveryMode::BestEffort => {
                self.dropped
                    .push((start as u64, end.saturating_sub(start) as u64, why));
                Ok(())
            }
        }
    }

    /// The length of the prefix of the log that ends with the last complete record returned
    /// so far. After `next_record` returned `Ok(None)`, truncating the file to this length
    /// removes a torn tail so new records can be appended after good ones.
    #[cfg(any(test, feature = "internals"))]
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


    /// The size of the log image.
    pub fn image_len(&self) -> u64 {
        self.data.len() as u64
    }

    /// The whole log image being read.
    pub fn image(&self) -> &[u8] {
        &self.data
    }
}
