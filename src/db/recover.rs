//! Opening a database: lock, read CURRENT and the MANIFEST, replay the WALs, start clean.
//!
//! Recovery never appends to an old WAL or MANIFEST. Whatever the logs hold is written to
//! fresh level-0 tables, a fresh MANIFEST describing the whole state is written and made
//! current, and only then are the old logs and manifest deleted. A crash at any point of this
//! leaves either the old state (still complete) or the new one.

use arc_swap::ArcSwap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use parking_lot::{Condvar, Mutex};

use super::RecoveryReport;
use super::build::OutputTable;
use super::core::{DbInner, ReadView, State, Writer};
use crate::batch::WriteBatch;
use crate::cache::BlockCache;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::iter::InternalIterator;
use crate::key::SeqNo;
use crate::manifest::{self, FileMeta, ManifestWriter, VersionEdit};
use crate::memtable::MemTable;
use crate::options::Options;
use crate::sstable::ReadCounters;
use crate::table_cache::TableCache;
use crate::version::{TableFile, Version};
use crate::wal::{LogReader, LogWriter, RecoveryMode};

pub(crate) fn open(dir: &Path, opts: Options) -> Result<DbInner> {
    let env = Arc::clone(&opts.env);
    if env.exists(dir) && !env.is_dir(dir) {
        return Err(Error::InvalidArgument(format!(
            "{} exists and is not a directory",
            dir.display()
        )));
    }
    if !env.exists(dir) {
        if !opts.create_if_missing {
            return Err(Error::InvalidArgument(format!(
                "database {} does not exist (create_if_missing is off)",
                dir.display()
            )));
        }
        env.create_dir_all(dir)?;
    }
    let lock = env.lock_file(&filename::lock_path(dir))?;
    let exists = env.exists(&filename::current_path(dir));
    if !exists {
        // Tables without CURRENT are a database that lost its pointer, not a new one:
        // opening it as new would delete every table as an orphan.
        let names = env.list_dir(dir)?;
        if names
            .iter()
            .any(|n| matches!(filename::parse_file_name(n), Some((FileType::Table, _))))
        {
            return Err(Error::corruption(
                filename::current_path(dir),
                0,
                "CURRENT is missing but the directory holds tables (run bloomkv::repair)",
            ));
        }
    }
    if exists && opts.error_if_exists {
        return Err(Error::InvalidArgument(format!(
            "database {} already exists",
            dir.display()
        )));
    }

    let counters = Arc::new(ReadCounters::default());
    let block_cache =
        (opts.block_cache_bytes > 0).then(|| Arc::new(BlockCache::new(opts.block_cache_bytes)));
    let table_cache = Arc::new(TableCache::new(
        Arc::clone(&env),
        dir.to_path_buf(),
        opts.max_open_files,
        block_cache,
        Arc::clone(&counters),
    ));
    let wrap = |meta: FileMeta| {
        let path = filename::table_path(dir, meta.number);
        Arc::new(TableFile::new(
            meta,
            path,
            Arc::clone(&env),
            Arc::clone(&table_cache),
        ))
    };

    // 1. The last durable version.
    let mut version = Version::default();
    let mut next_file_number = 2;
    let mut last_seq: SeqNo = 0;
    let mut log_number = 0;
    let mut report = RecoveryReport::default();
    // Where each level's next compaction starts, so round-robin survives a reopen.
    let mut compact_pointers: [Option<Vec<u8>>; crate::options::NUM_LEVELS] = Default::default();
    if exists {
        let number = manifest::read_current(env.as_ref(), dir)?;
        let path = filename::manifest_path(dir, number);
        if !env.exists(&path) {
            return Err(Error::corruption(
                filename::current_path(dir),
                0,
                format!("CURRENT names {}, which does not exist", path.display()),
            ));
        }
        let edits = manifest::read_manifest(env.as_ref(), &path)?;
        if edits.is_empty() {
            // Every manifest gets a whole-state edit, synced, before CURRENT names it; its
            // absence is damage, and reading on would open an empty database and delete
            // every table as an orphan.
            return Err(Error::corruption(
                &path,
                0,
                "manifest holds no version edit (its first record is missing or damaged)",
            ));
        }
        for edit in edits {
            version = version
                .apply(&edit, wrap)
                .map_err(|e| e.located(&path, 0))?;
            if let Some(n) = edit.log_number {
                log_number = n;
            }
            if let Some(n) = edit.next_file_number {
                next_file_number = next_file_number.max(n);
            }
            if let Some(s) = edit.last_sequence {
                last_seq = last_seq.max(s);
            }
            for (level, key) in &edit.compact_pointers {
                if let Some(p) = compact_pointers.get_mut(*level) {
                    *p = Some(key.clone());
                }
            }
        }
        for f in version.all_files() {
            let path = filename::table_path(dir, f.meta.number);
            if !env.exists(&path) {
                return Err(Error::corruption(
                    path,
                    0,
                    "table listed in the MANIFEST is missing",
                ));
            }
        }
    }
    // Numbers seen on disk are never reused, even if no edit recorded them.
    let names = env.list_dir(dir)?;
    let parsed: Vec<(FileType, u64)> = names
        .iter()
        .filter_map(|n| filename::parse_file_name(n))
        .collect();
    if let Some(max) = parsed.iter().map(|(_, n)| *n).max() {
        next_file_number = next_file_number.max(max + 1);
    }

    // 2. Replay every WAL the manifest still needs, oldest first, into level-0 tables.
    let mut logs: Vec<u64> = parsed
        .iter()
        .filter(|(t, n)| *t == FileType::Log && *n >= log_number)
        .map(|(_, n)| *n)
        .collect();
    logs.sort_unstable();
    let mut edit = VersionEdit::default();
    let mut mem = Arc::new(MemTable::new());
    // The records behind `mem` since its last flush: if it ends up small, they are copied to
    // the new WAL and `mem` stays the active memtable, instead of becoming a tiny table.
    let mut pending: Vec<Vec<u8>> = Vec::new();
    let mode = if opts.best_effort_recovery {
        RecoveryMode::BestEffort
    } else {
        RecoveryMode::Strict
    };
    for &number in &logs {
        let path = filename::log_path(dir, number);
        let mut reader = LogReader::new(env.read_all(&path)?, path.clone(), mode);
        while let Some(record) = reader.next_record()? {
            // A record that passed its checksum but is not a batch: name the record's offset
            // in the log, and the position inside the batch in the message.
            let batch = match WriteBatch::from_payload(&record).map_err(|e| match e {
                Error::Corruption { offset, why, .. } => Error::corruption(
                    &path,
                    reader.last_record_offset(),
                    format!("write batch record: {why} (at byte {offset} of the batch)"),
                ),
                other => other,
            }) {
                Ok(b) => b,
                Err(e) if opts.best_effort_recovery => {
                    report
                        .dropped
                        .push(format!("undecodable batch dropped: {e}"));
                    continue;
                }
                Err(e) => return Err(e),
            };
            batch.insert_into(&mem);
            pending.push(record);
            report.records += 1;
            if !batch.is_empty() {
                last_seq = last_seq.max(batch.sequence() + batch.len() as u64 - 1);
            }
            if mem.approximate_bytes() >= opts.memtable_bytes {
                let number = next_file_number;
                next_file_number += 1;
                flush_recovered(
                    env.as_ref(),
                    dir,
                    &opts,
                    &table_cache,
                    &mem,
                    number,
                    &mut edit,
                )?;
                mem = Arc::new(MemTable::new());
                pending.clear();
            }
        }
        if let Some((offset, why)) = reader.tail_dropped() {
            report.dropped.push(format!(
                "{}: torn tail at byte {offset} dropped: {why}",
                path.display()
            ));
        }
        for (offset, bytes, why) in reader.dropped() {
            report.dropped.push(format!(
                "{}: {bytes} bytes at byte {offset} skipped: {why}",
                path.display()
            ));
        }
        report.logs_replayed += 1;
    }
    version = version.apply(&edit, wrap)?;
    report.tables_written = edit.new_files.len();

    // 3. A fresh WAL and a fresh MANIFEST describing everything, then the CURRENT swap.
    let new_log = next_file_number;
    let manifest_number = next_file_number + 1;
    next_file_number += 2;
    let log_file = env.create_writable(&filename::log_path(dir, new_log))?;
    let mut log = LogWriter::new(log_file);
    // What the old WALs hold beyond the tables just written goes to the new WAL, so the
    // recovered memtable stays in memory and the old WALs can be deleted.
    for record in &pending {
        log.add_record(record)?;
    }
    report.records_carried = pending.len() as u64;
    drop(pending);
    log.sync()?;
    let mut snapshot = version.snapshot_edit();
    snapshot.log_number = Some(new_log);
    snapshot.next_file_number = Some(next_file_number);
    snapshot.last_sequence = Some(last_seq);
    for (level, key) in compact_pointers.iter().enumerate() {
        if let Some(k) = key {
            snapshot.compact_pointers.push((level, k.clone()));
        }
    }
    let mut manifest = ManifestWriter::create(env.as_ref(), dir, manifest_number)?;
    manifest.append(&snapshot)?;
    // The new tables, WAL and MANIFEST are durable; make their directory entries durable
    // before CURRENT points at them (set_current syncs the directory again after the rename).
    env.sync_dir(dir)?;
    manifest::set_current(env.as_ref(), dir, manifest_number)?;

    // 4. Everything not referenced by the new state is garbage now.
    let live: std::collections::HashSet<u64> = version.all_files().map(|f| f.meta.number).collect();
    for name in &names {
        let Some((kind, number)) = filename::parse_file_name(name) else {
            continue;
        };
        let obsolete = match kind {
            FileType::Table => !live.contains(&number),
            FileType::Log => number < new_log,
            FileType::Manifest => number != manifest_number,
            FileType::Temp => true,
            FileType::Current | FileType::Lock => false,
        };
        if obsolete {
            let _ = env.remove_file(&dir.join(name));
        }
    }

    let version = Arc::new(version);
    Ok(DbInner {
        dir: dir.to_path_buf(),
        env,
        _lock: lock,
        table_cache,
        counters,
        level_counters: Default::default(),
        work: Default::default(),
        last_seq: AtomicU64::new(last_seq),
        writer: Mutex::new(Writer {
            log,
            log_number: new_log,
            mem: Arc::clone(&mem),
        }),
        state: Mutex::new(State {
            imm: None,
            next_file_number,
            log_number: new_log,
            bg_error: None,
            shutting_down: false,
            manual_requested: 0,
            manual_completed: 0,
            busy: false,
            jobs_done: 0,
            compact_pointers,
            refilter_given_up: Vec::new(),
        }),
        work_cv: Condvar::new(),
        done_cv: Condvar::new(),
        view: ArcSwap::from_pointee(ReadView {
            mem,
            imm: None,
            version,
        }),
        manifest: Mutex::new(manifest),
        snapshots: Mutex::new(Default::default()),
        recovery: report,
        opts,
    })
}

/// Writes a memtable recovered from the WAL to a level-0 table and records it in `edit`.
fn flush_recovered(
    env: &dyn Env,
    dir: &Path,
    opts: &Options,
    cache: &TableCache,
    mem: &Arc<MemTable>,
    number: u64,
    edit: &mut VersionEdit,
) -> Result<()> {
    let mut out = OutputTable::create(env, dir, opts, number, 0)?;
    let mut it = mem.iter();
    it.seek_to_first()?;
    while it.valid() {
        out.add(it.key(), it.value())?;
        it.next()?;
    }
    let meta = out.finish(env, cache)?;
    edit.new_files.push((0, meta));
    Ok(())
}
