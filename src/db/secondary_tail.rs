//! How a secondary reads the writer's state while the writer changes it: the MANIFEST from
//! where the last read stopped, the tables it names (held open, see `secondary_files.rs`),
//! the WALs from where the last read stopped, then a check that nothing it relied on moved
//! meanwhile. The writer takes no notice of secondaries, so every step tolerates the writer
//! being halfway through something:
//!
//! * A MANIFEST or WAL record being appended is seen cut short (a torn tail): it ends the read
//!   there, and the next catch-up reads it whole from that offset.
//! * A table or WAL the writer deleted after the MANIFEST read named it is met as `NotFound`;
//!   a needed WAL deleted before the directory was listed is not met at all. Both happen only
//!   after the writer made an edit durable that moved past them: a new MANIFEST (a reopen), a
//!   table removed, or the oldest needed WAL raised by a flush. The attempt then starts over
//!   from the newer MANIFEST, a bounded number of times.
//! * A WAL record whose sequence numbers were read already is a copy (a reopening writer
//!   carries its memtable's records into a fresh WAL before CURRENT names the new MANIFEST):
//!   it is skipped, never applied twice.
//!
//! Nothing is changed until an attempt has succeeded; then the new memtable (or the old one
//! with the new records), the version and the sequence number are installed together.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use super::core::DbInner;
use super::recover::{self, Durable};
use super::secondary_files::HeldFiles;
use crate::db::batch::WriteBatch;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::util::filename::{self, FileType};
use crate::util::key::SeqNo;
use crate::db::manifest::{self, FileMeta, VersionEdit};
use crate::db::memtable::MemTable;
use crate::options::Options;
use crate::db::table_cache::TableCache;
use crate::db::version::{TableFile, Version};
use crate::db::wal::{LogReader, RecoveryMode};

/// Attempts of one catch-up before it gives up with an error: each failed attempt means the
/// writer made a flush, a reopen or a compaction durable during it.
const ATTEMPTS: u32 = 24;

/// How far a secondary has read the MANIFEST: the state it describes up to `offset`.
#[derive(Clone)]
struct ManifestPos {
    number: u64,
    /// The end of the last complete record read.
    offset: u64,
    durable: Durable,
}

impl ManifestPos {
    fn fresh() -> ManifestPos {
        ManifestPos {
            number: 0,
            offset: 0,
            durable: Durable::default(),
        }
    }
}

/// How far a secondary has read the WALs.
#[derive(Clone, Default)]
struct WalPos {
    /// The WALs whose records the memtable holds, ascending.
    logs: Vec<u64>,
    /// Where the newest of them was read to (the end of its last complete record).
    offset: u64,
    /// The newest sequence number read from a WAL record.
    seq: SeqNo,
    /// Replay stopped at a torn WAL that is not the newest (a writer that crashed): no newer
    /// WAL is read until a new MANIFEST moves past it.
    stopped: bool,
}

/// What one successful attempt read, to install.
pub(super) struct Plan {
    manifest: ManifestPos,
    wal: WalPos,
    /// The memtable is built afresh from `batches` (else they go into the current one).
    rebuild: bool,
    batches: Vec<WriteBatch>,
    /// The sequence number the new view reads at.
    pub seq: SeqNo,
    /// Torn WALs that ended the replay early, for the open's recovery report.
    pub dropped: Vec<String>,
}

impl Plan {
    /// The records the plan read, in a fresh memtable, or added to `current`.
    fn memtable(&self, current: Option<&Arc<MemTable>>) -> Arc<MemTable> {
        let mem = match current {
            Some(mem) if !self.rebuild => Arc::clone(mem),
            _ => Arc::new(MemTable::new()),
        };
        for batch in &self.batches {
            batch.insert_into(&mem);
        }
        mem
    }

    /// WALs read and records read, for a recovery report.
    pub fn counts(&self) -> (usize, u64) {
        (self.wal.logs.len(), self.batches.len() as u64)
    }
}

/// What reading the WALs found.
struct WalRead {
    wal: WalPos,
    batches: Vec<WriteBatch>,
    /// `batches` start from the oldest needed WAL (else from where the last read stopped).
    rebuild: bool,
    dropped: Vec<String>,
}

/// Why an attempt did not finish.
enum Retry {
    /// The writer moved on past something the attempt relied on: start again.
    Again,
    /// A real failure.
    Fail(Error),
}

impl From<Error> for Retry {
    fn from(e: Error) -> Self {
        Retry::Fail(e)
    }
}

/// `Retry::Again` for a file the writer deleted, anything else as it is.
fn gone_is_retry(e: Error) -> Retry {
    match &e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => Retry::Again,
        _ => Retry::Fail(e),
    }
}

/// A secondary's reading position and what it reads through.
pub(super) struct Tail {
    dir: PathBuf,
    /// The real env: MANIFEST, WALs and the directory are read through it.
    env: Arc<dyn Env>,
    files: Arc<HeldFiles>,
    table_cache: Arc<TableCache>,
    mode: RecoveryMode,
    max_open_files: usize,
    manifest: ManifestPos,
    wal: WalPos,
    /// The sequence number the installed view reads at.
    seq: SeqNo,
}

impl Tail {
    pub fn new(
        dir: &Path,
        opts: &Options,
        files: Arc<HeldFiles>,
        table_cache: Arc<TableCache>,
    ) -> Tail {
        Tail {
            dir: dir.to_path_buf(),
            env: Arc::clone(&opts.env),
            files,
            table_cache,
            mode: if opts.best_effort_recovery {
                RecoveryMode::BestEffort
            } else {
                RecoveryMode::Strict
            },
            max_open_files: opts.max_open_files,
            manifest: ManifestPos::fresh(),
            wal: WalPos::default(),
            seq: 0,
        }
    }

    /// Reads the writer's latest state, retrying while the writer moves on underneath.
    ///
    /// # Errors
    /// Corruption, I/O errors, or an I/O error of kind `NotFound` when the writer kept
    /// deleting what the secondary was about to read for every attempt.
    pub fn plan(&self) -> Result<Plan> {
        let mut pos = self.manifest.clone();
        for attempt in 0..ATTEMPTS {
            match self.attempt(&mut pos) {
                Ok(plan) => return Ok(plan),
                Err(Retry::Fail(e)) => return Err(e),
                Err(Retry::Again) => {
                    // The writer is in the middle of a flush or reopen: let it finish.
                    std::thread::sleep(Duration::from_millis(u64::from(attempt.min(10))));
                }
            }
        }
        Err(Error::io(
            &self.dir,
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "a secondary could not read a consistent state in {ATTEMPTS} attempts: \
                     the writer deleted tables or logs it named faster than it could open \
                     them; try again"
                ),
            ),
        ))
    }

    /// One attempt: `pos` keeps the MANIFEST state read so far, also across attempts.
    fn attempt(&self, pos: &mut ManifestPos) -> Result<Plan, Retry> {
        self.read_manifest(pos)?;
        self.hold_tables(&pos.durable.version)?;
        // Listed before any WAL is read: a WAL that appears later was created after the
        // ones listed were complete, so a torn tail of the newest listed WAL is a record
        // being written, and of an older one a crash.
        let names = self.env.list_dir(&self.dir).map_err(Retry::Fail)?;
        let WalRead {
            wal,
            batches,
            rebuild,
            dropped,
        } = self.read_wals(pos, &names)?;
        // Nothing the WAL read relied on may have moved: a WAL at or past the oldest needed
        // one is deleted only after an edit raising that number is durable, and the writer
        // deletes the old WALs after a reopen only once CURRENT names the new MANIFEST.
        let mut check = pos.clone();
        self.read_manifest(&mut check)?;
        if check.number != pos.number || check.durable.log_number != pos.durable.log_number {
            *pos = check;
            return Err(Retry::Again);
        }
        // Never back: a view's number only grows from one catch-up to the next.
        let seq = pos.durable.last_seq.max(wal.seq).max(self.seq);
        Ok(Plan {
            manifest: pos.clone(),
            wal,
            rebuild,
            batches,
            seq,
            dropped,
        })
    }

    /// Brings `pos` up to the last complete edit of the MANIFEST CURRENT names, starting over
    /// from a new MANIFEST if CURRENT names another one.
    fn read_manifest(&self, pos: &mut ManifestPos) -> Result<(), Retry> {
        let env = self.env.as_ref();
        let number = manifest::read_current(env, &self.dir)?;
        if number != pos.number {
            *pos = ManifestPos::fresh();
            pos.number = number;
        }
        let path = filename::manifest_path(&self.dir, number);
        let mut reader = LogReader::open_at(env, &path, RecoveryMode::Strict, pos.offset)
            .map_err(gone_is_retry)?;
        if pos.offset == 0 {
            // CURRENT names a MANIFEST only once its header and first edit are durable.
            let Some(header) = reader.next_record()? else {
                return Err(Retry::Fail(Error::corruption(
                    &path,
                    0,
                    "manifest has no complete header record",
                )));
            };
            manifest::check_header(&path, &header)?;
        }
        let reuse = self.current_tables();
        let mut wrap = |meta: FileMeta| -> Arc<TableFile> {
            match reuse.get(&meta.number) {
                Some(f) if f.meta == meta => Arc::clone(f),
                _ => Arc::new(TableFile::new(
                    meta.clone(),
                    filename::table_path(&self.dir, meta.number),
                    Arc::clone(&self.files) as Arc<dyn Env>,
                    Arc::clone(&self.table_cache),
                )),
            }
        };
        let mut any = pos.offset > 0;
        while let Some(record) = reader.next_record()? {
            let edit = VersionEdit::decode(&record).map_err(|e| match e {
                Error::Corruption { offset, why, .. } => Error::corruption(
                    &path,
                    reader.last_record_offset(),
                    format!("version edit record: {why} (at byte {offset} of the edit)"),
                ),
                other => other,
            })?;
            pos.durable.apply(&edit, &path, &mut wrap)?;
            any = true;
        }
        if !any {
            return Err(Retry::Fail(Error::corruption(
                &path,
                0,
                "manifest holds no version edit (its first record is missing or damaged)",
            )));
        }
        // A cut-short record is one being appended: it is read whole next time.
        pos.offset = reader.valid_len();
        Ok(())
    }

    /// The table files of the installed version, by number, so that a version read anew
    /// (after the writer reopened) shares their readers and held descriptors.
    fn current_tables(&self) -> HashMap<u64, Arc<TableFile>> {
        self.manifest
            .durable
            .version
            .all_files()
            .map(|f| (f.meta.number, Arc::clone(f)))
            .collect()
    }

    /// Opens (and keeps open) every table of `version` not held yet.
    fn hold_tables(&self, version: &Version) -> Result<(), Retry> {
        let tables = version.all_files().count();
        if tables > self.files.len() {
            // One descriptor per table besides the table cache's bound.
            recover::check_open_file_limit(self.max_open_files.saturating_add(tables)).map_err(
                |e| {
                    Error::InvalidArgument(format!(
                        "a secondary keeps every table of the database open ({tables} now), \
                         and the open-file limit cannot be raised that far: {e}"
                    ))
                },
            )?;
        }
        for f in version.all_files() {
            self.files
                .hold(f, &filename::table_path(&self.dir, f.meta.number))
                .map_err(gone_is_retry)?;
        }
        Ok(())
    }

    /// Reads the WAL records `pos` does not hold in tables: from where the last catch-up
    /// stopped when the oldest needed WAL is the same, else every needed WAL from its start.
    fn read_wals(&self, pos: &ManifestPos, names: &[String]) -> Result<WalRead, Retry> {
        let oldest = pos.durable.log_number;
        let mut logs: Vec<u64> = recover::parse_names(names)
            .into_iter()
            .filter(|(t, n)| *t == FileType::Log && *n >= oldest)
            .map(|(_, n)| n)
            .collect();
        logs.sort_unstable();
        let same = pos.number == self.manifest.number
            && oldest == self.manifest.durable.log_number
            && !self.wal.logs.is_empty();
        let tail_from = same.then(|| *self.wal.logs.last().unwrap_or(&0));
        if let Some(last) = tail_from {
            let size = self
                .env
                .file_size(&filename::log_path(&self.dir, last))
                .map_err(gone_is_retry)?;
            if size < self.wal.offset {
                // The writer cut the log back after a failed write: read it all again.
                return self.read_from(logs, None);
            }
            if self.wal.stopped {
                return Ok(WalRead {
                    wal: self.wal.clone(),
                    batches: Vec::new(),
                    rebuild: false,
                    dropped: Vec::new(),
                });
            }
            logs.retain(|&n| n >= last);
        }
        self.read_from(logs, tail_from)
    }

    /// Reads `logs` in order, the first from `self.wal.offset` when it is `tail_from` (the
    /// newest WAL read before), the others whole.
    fn read_from(&self, logs: Vec<u64>, tail_from: Option<u64>) -> Result<WalRead, Retry> {
        let rebuild = tail_from.is_none();
        let mut wal = if rebuild {
            WalPos::default()
        } else {
            self.wal.clone()
        };
        let mut batches = Vec::new();
        let mut dropped = Vec::new();
        for (i, &number) in logs.iter().enumerate() {
            let path = filename::log_path(&self.dir, number);
            let start = if tail_from == Some(number) {
                wal.offset
            } else {
                0
            };
            let mut reader = LogReader::open_at(self.env.as_ref(), &path, self.mode, start)
                .map_err(gone_is_retry)?;
            while let Some(record) = reader.next_record()? {
                let batch = WriteBatch::from_payload(&record).map_err(|e| match e {
                    Error::Corruption { offset, why, .. } => Error::corruption(
                        &path,
                        reader.last_record_offset(),
                        format!("write batch record: {why} (at byte {offset} of the batch)"),
                    ),
                    other => other,
                });
                let batch = match batch {
                    Ok(b) => b,
                    Err(_) if self.mode == RecoveryMode::BestEffort => continue,
                    Err(e) => return Err(Retry::Fail(e)),
                };
                if batch.is_empty() || batch.sequence() <= wal.seq {
                    // Empty, or a copy of a record read already.
                    continue;
                }
                wal.seq = batch.sequence() + batch.len() as u64 - 1;
                batches.push(batch);
            }
            if !wal.logs.contains(&number) {
                wal.logs.push(number);
            }
            wal.offset = reader.valid_len();
            if let Some((offset, why)) = reader.tail_dropped()
                && i + 1 < logs.len()
                && self.mode == RecoveryMode::Strict
            {
                // A WAL is complete before its successor takes writes: this one lost its end
                // in a crash, and the newer ones would come after a hole (as at open).
                dropped.push(format!(
                    "{}: torn at byte {offset} ({why}), so the {} newer log(s) were not read",
                    path.display(),
                    logs.len() - i - 1
                ));
                wal.stopped = true;
                break;
            }
        }
        Ok(WalRead {
            wal,
            batches,
            rebuild,
            dropped,
        })
    }

    /// Makes `plan` what `inner` reads: its memtable, version and sequence number, together.
    pub fn install(&mut self, inner: &DbInner, plan: Plan) {
        let mut w = inner.writer.lock();
        let mem = plan.memtable(Some(&w.mem));
        let version = Arc::new(plan.manifest.durable.version.clone());
        {
            let mut st = inner.state.lock();
            st.next_file_number = st
                .next_file_number
                .max(plan.manifest.durable.next_file_number);
            inner.update_view(&mut st, |v| {
                v.mem = Arc::clone(&mem);
                v.imm = None;
                v.version = version;
                v.seq = Some(plan.seq);
            });
        }
        inner.last_seq.store(plan.seq, Ordering::Release);
        w.mem = mem;
        drop(w);
        self.commit(plan);
    }

    /// Records `plan` as read, for a database being opened with its memtable.
    pub fn open_with(&mut self, plan: Plan) -> (Durable, Arc<MemTable>, SeqNo) {
        let mem = plan.memtable(None);
        let mut durable = plan.manifest.durable.clone();
        durable.last_seq = plan.seq;
        let seq = plan.seq;
        self.commit(plan);
        (durable, mem, seq)
    }

    fn commit(&mut self, plan: Plan) {
        self.manifest = plan.manifest;
        self.wal = plan.wal;
        self.seq = plan.seq;
        self.files.release_unused(&self.table_cache);
    }

    /// Table files held open right now.
    #[cfg(test)]
    pub fn held_files(&self) -> usize {
        self.files.len()
    }
}
