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
use super::core::{DbInner, ReadView, State, Writer};
use crate::batch::WriteBatch;
use crate::cache::BlockCache;
use crate::env::{Env, FileLock};
use crate::error::{Error, Result};
use crate::filename::{self, FileType};
use crate::key::SeqNo;
use crate::manifest::{self, FileMeta, ManifestWriter, VersionEdit};
use crate::memtable::MemTable;
use crate::options::{NUM_LEVELS, Options};
use crate::sstable::ReadCounters;
use crate::table_cache::TableCache;
use crate::table_writer::TableWriter;
use crate::version::{TableFile, Version};
use crate::wal::{LogReader, LogWriter, RecoveryMode};

pub(crate) fn open(dir: &Path, opts: Options) -> Result<DbInner> {
    let env = Arc::clone(&opts.env);
    let (lock, exists) = lock_dir(env.as_ref(), dir, &opts)?;
    let counters = Arc::new(ReadCounters::default());
    let block_cache =
        (opts.block_cache_bytes > 0).then(|| Arc::new(BlockCache::new(opts.block_cache_bytes)));
    let table_cache = Arc::new(
        TableCache::new(
            Arc::clone(&env),
            dir.to_path_buf(),
            opts.max_open_files,
            block_cache,
            Arc::clone(&counters),
        )
        .with_filter_policy(Arc::clone(&opts.filter_policy)),
    );
    let wrap = |meta: FileMeta| {
        let path = filename::table_path(dir, meta.number);
        Arc::new(TableFile::new(
            meta,
            path,
            Arc::clone(&env),
            Arc::clone(&table_cache),
        ))
    };

    let mut durable = if exists {
        read_durable_state(env.as_ref(), dir, wrap)?
    } else {
        Durable::default()
    };
    // Numbers seen on disk are never reused, even if no edit recorded them.
    let names = env.list_dir(dir)?;
    let on_disk: Vec<(FileType, u64)> = names
        .iter()
        .filter_map(|n| filename::parse_file_name(n))
        .collect();
    if let Some(max) = on_disk.iter().map(|(_, n)| *n).max() {
        durable.next_file_number = durable.next_file_number.max(max + 1);
    }

    let replayed = replay_logs(
        env.as_ref(),
        dir,
        &opts,
        &table_cache,
        &on_disk,
        &mut durable,
    )?;
    let mut report = replayed.report;
    durable.version = durable.version.apply(&replayed.edit, wrap)?;
    report.tables_written = replayed.edit.new_files.len();

    let fresh = write_new_state(env.as_ref(), dir, &mut durable, &replayed.carried)?;
    report.records_carried = replayed.carried.len() as u64;
    remove_obsolete(env.as_ref(), dir, &names, &durable.version, &fresh);

    let Durable {
        version,
        next_file_number,
        last_seq,
        compact_pointers,
        ..
    } = durable;
    let mem = replayed.mem;
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
            log: fresh.log,
            log_number: fresh.log_number,
            mem: Arc::clone(&mem),
        }),
        state: Mutex::new(State {
            imm: None,
            next_file_number,
            log_number: fresh.log_number,
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
            version: Arc::new(version),
        }),
        manifest: Mutex::new(fresh.manifest),
        snapshots: Mutex::new(Default::default()),
        recovery: report,
        opts,
    })
}

/// Step 1: creates the directory if asked to, takes the LOCK file, and tells whether a
/// database exists there (CURRENT is present).
fn lock_dir(env: &dyn Env, dir: &Path, opts: &Options) -> Result<(FileLock, bool)> {
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
    Ok((lock, exists))
}

/// What the MANIFEST (and then the WALs) say the database holds.
struct Durable {
    version: Version,
    next_file_number: u64,
    last_seq: SeqNo,
    /// The oldest WAL still needed.
    log_number: u64,
    /// Where each level's next compaction starts, so round-robin survives a reopen.
    compact_pointers: [Option<Vec<u8>>; NUM_LEVELS],
}

impl Default for Durable {
    fn default() -> Self {
        Durable {
            version: Version::default(),
            next_file_number: 2,
            last_seq: 0,
            log_number: 0,
            compact_pointers: Default::default(),
        }
    }
}

/// Step 2: the last durable version, from the MANIFEST that CURRENT names; every table it
/// lists must exist.
fn read_durable_state(
    env: &dyn Env,
    dir: &Path,
    wrap: impl Fn(FileMeta) -> Arc<TableFile> + Copy,
) -> Result<Durable> {
    let mut d = Durable::default();
    let number = manifest::read_current(env, dir)?;
    let path = filename::manifest_path(dir, number);
    if !env.exists(&path) {
        return Err(Error::corruption(
            filename::current_path(dir),
            0,
            format!("CURRENT names {}, which does not exist", path.display()),
        ));
    }
    let edits = manifest::read_manifest(env, &path)?;
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
        d.version = d
            .version
            .apply(&edit, wrap)
            .map_err(|e| e.located(&path, 0))?;
        if let Some(n) = edit.log_number {
            d.log_number = n;
        }
        if let Some(n) = edit.next_file_number {
            d.next_file_number = d.next_file_number.max(n);
        }
        if let Some(s) = edit.last_sequence {
            d.last_seq = d.last_seq.max(s);
        }
        for (level, key) in &edit.compact_pointers {
            if let Some(p) = d.compact_pointers.get_mut(*level) {
                *p = Some(key.clone());
            }
        }
    }
    for f in d.version.all_files() {
        let path = filename::table_path(dir, f.meta.number);
        if !env.exists(&path) {
            return Err(Error::corruption(
                path,
                0,
                "table listed in the MANIFEST is missing",
            ));
        }
    }
    Ok(d)
}

/// What replaying the WALs produced.
struct Replayed {
    /// Level-0 tables written from full memtables.
    edit: VersionEdit,
    /// The last, not full, memtable: it stays in memory as the active one.
    mem: Arc<MemTable>,
    /// The records behind `mem`, to copy into the new WAL.
    carried: Vec<Vec<u8>>,
    report: RecoveryReport,
}

/// Step 3: replays every WAL the manifest still needs, oldest first; each memtable's worth
/// becomes a level-0 table.
fn replay_logs(
    env: &dyn Env,
    dir: &Path,
    opts: &Options,
    cache: &TableCache,
    on_disk: &[(FileType, u64)],
    d: &mut Durable,
) -> Result<Replayed> {
    let mut logs: Vec<u64> = on_disk
        .iter()
        .filter(|(t, n)| *t == FileType::Log && *n >= d.log_number)
        .map(|(_, n)| *n)
        .collect();
    logs.sort_unstable();
    let mut out = Replayed {
        edit: VersionEdit::default(),
        mem: Arc::new(MemTable::new()),
        carried: Vec::new(),
        report: RecoveryReport::default(),
    };
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
                    out.report
                        .dropped
                        .push(format!("undecodable batch dropped: {e}"));
                    continue;
                }
                Err(e) => return Err(e),
            };
            batch.insert_into(&out.mem);
            out.carried.push(record);
            out.report.records += 1;
            if !batch.is_empty() {
                d.last_seq = d.last_seq.max(batch.sequence() + batch.len() as u64 - 1);
            }
            if out.mem.approximate_bytes() >= opts.memtable_bytes {
                let mut numbers = || {
                    d.next_file_number += 1;
                    d.next_file_number - 1
                };
                let mut table = TableWriter::new(
                    env,
                    dir,
                    cache,
                    opts,
                    0,
                    opts.filter_with_bits(opts.bits_per_key_for_level(0)),
                    u64::MAX,
                    &mut numbers,
                );
                table.copy_all(&mut out.mem.iter(), || Ok(()))?;
                for meta in table.finish()? {
                    out.edit.new_files.push((0, meta));
                }
                out.mem = Arc::new(MemTable::new());
                out.carried.clear();
            }
        }
        if let Some((offset, why)) = reader.tail_dropped() {
            out.report.dropped.push(format!(
                "{}: torn tail at byte {offset} dropped: {why}",
                path.display()
            ));
        }
        for (offset, bytes, why) in reader.dropped() {
            out.report.dropped.push(format!(
                "{}: {bytes} bytes at byte {offset} skipped: {why}",
                path.display()
            ));
        }
        out.report.logs_replayed += 1;
    }
    Ok(out)
}

/// The new WAL and MANIFEST written by step 4.
struct Fresh {
    log: LogWriter,
    log_number: u64,
    manifest: ManifestWriter,
    manifest_number: u64,
}

/// Step 4: a fresh WAL holding the `carried` records (so the recovered memtable stays in
/// memory and the old WALs can go), a fresh MANIFEST describing everything, then the CURRENT
/// swap.
fn write_new_state(
    env: &dyn Env,
    dir: &Path,
    d: &mut Durable,
    carried: &[Vec<u8>],
) -> Result<Fresh> {
    let log_number = d.next_file_number;
    let manifest_number = d.next_file_number + 1;
    d.next_file_number += 2;
    let log_file = env.create_writable(&filename::log_path(dir, log_number))?;
    let mut log = LogWriter::new(log_file);
    for record in carried {
        log.add_record(record)?;
    }
    log.sync()?;
    let mut snapshot = d.version.snapshot_edit();
    snapshot.log_number = Some(log_number);
    snapshot.next_file_number = Some(d.next_file_number);
    snapshot.last_sequence = Some(d.last_seq);
    for (level, key) in d.compact_pointers.iter().enumerate() {
        if let Some(k) = key {
            snapshot.compact_pointers.push((level, k.clone()));
        }
    }
    let mut manifest = ManifestWriter::create(env, dir, manifest_number)?;
    manifest.append(&snapshot)?;
    // The new tables, WAL and MANIFEST are durable; make their directory entries durable
    // before CURRENT points at them (set_current syncs the directory again after the rename).
    env.sync_dir(dir)?;
    manifest::set_current(env, dir, manifest_number)?;
    Ok(Fresh {
        log,
        log_number,
        manifest,
        manifest_number,
    })
}

/// Step 5: everything the new state does not reference is garbage now.
fn remove_obsolete(env: &dyn Env, dir: &Path, names: &[String], version: &Version, fresh: &Fresh) {
    let live: std::collections::HashSet<u64> = version.all_files().map(|f| f.meta.number).collect();
    for name in names {
        let Some((kind, number)) = filename::parse_file_name(name) else {
            continue;
        };
        let obsolete = match kind {
            FileType::Table => !live.contains(&number),
            FileType::Log => number < fresh.log_number,
            FileType::Manifest => number != fresh.manifest_number,
            FileType::Temp => true,
            FileType::Current | FileType::Lock => false,
        };
        if obsolete {
            let _ = env.remove_file(&dir.join(name));
        }
    }
}
