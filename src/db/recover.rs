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

use super::recovery_report::RecoveryReport;
use super::manifest_switch::{current_names_another, snapshot_edit, switch_manifest};
use super::core::{DbInner, ReadView, State, WalTip, Writer};
use crate::db::batch::WriteBatch;
use crate::env::{Env, FileLock};
use crate::error::{Error, Result};
use crate::util::filename::{self, FileType};
use crate::util::key::SeqNo;
use crate::db::manifest::{self, FileMeta, ManifestWriter, VersionEdit};
use crate::db::memtable::MemTable;
use crate::options::{NUM_LEVELS, Options};
use crate::util::rate::RateLimiter;
use crate::sstable::ReadCounters;
use crate::sstable::cache::BlockCache;
use crate::db::table_cache::TableCache;
use crate::db::table_writer::TableWriter;
use crate::db::version::{TableFile, Version};
use crate::db::wal::{LogReader, LogWriter, RecoveryMode};

pub(crate) fn open(dir: &Path, opts: Options) -> Result<DbInner> {
    opts.validate()?;
    check_open_file_limit(opts.max_open_files)?;
    let env = Arc::clone(&opts.env);
    let (lock, exists) = lock_dir(env.as_ref(), dir, &opts)?;
    let (counters, table_cache) = table_cache(&env, dir, &opts);
    let wrap = wrapper(&env, dir, &table_cache);

    let mut durable = if exists {
        read_durable_state(env.as_ref(), dir, wrap)?
    } else {
        Durable::default()
    };
    // Numbers seen on disk are never reused, even if no edit recorded them.
    let names = env.list_dir(dir)?;
    let on_disk = parse_names(&names);
    if let Some(max) = on_disk.iter().map(|(_, n)| *n).max() {
        durable.next_file_number = durable.next_file_number.max(max + 1);
    }

    let replayed = replay_logs(
        env.as_ref(),
        dir,
        &opts,
        Some(&table_cache),
        &on_disk,
        &mut durable,
    )?;
    let mut report = replayed.report;
    report.tables_written = replayed.edit.new_files.len();

    let current_before = if exists {
        manifest::read_current(env.as_ref(), dir).ok()
    } else {
        None
    };
    let fresh = durable
        .version
        .apply(&replayed.edit, wrap)
        .and_then(|version| {
            durable.version = version;
            write_new_state(env.as_ref(), dir, &mut durable, &replayed.carried)
        });
    let fresh = match fresh {
        Ok(fresh) => fresh,
        Err(e) => {
            // The tables replay wrote are named by no MANIFEST unless CURRENT already names
            // the new one (its rename happened and only the directory sync after it failed):
            // then they are the database's state and stay. A CURRENT that cannot be read now
            // might name it: then they stay too (the next open removes them if they are
            // orphans).
            let unchanged =
                manifest::read_current(env.as_ref(), dir).is_ok_and(|n| Some(n) == current_before);
            if unchanged {
                discard_tables(env.as_ref(), dir, Some(&table_cache), &replayed.edit);
            }
            return Err(e);
        }
    };
    report.records_carried = replayed.carried.len() as u64;
    report.orphan_tables_removed =
        remove_obsolete(env.as_ref(), dir, &names, &durable.version, &fresh);

    Ok(assemble(Parts {
        dir,
        opts,
        env,
        lock: Some(lock),
        table_cache,
        counters,
        durable,
        mem: replayed.mem,
        log: fresh.log,
        log_number: fresh.log_number,
        manifest: Some(fresh.manifest),
        report,
        view_seq: None,
    }))
}

/// Opens `dir` for reading only: the state the MANIFEST and the WALs hold at this moment,
/// the WALs replayed into one memtable that is never flushed. Nothing is created, written,
/// renamed or deleted, so it works on a read-only file system and a full disk.
///
/// The LOCK file is locked shared: other read-only openers may hold it too, a writer
/// (exclusive) may not. A directory without a LOCK file (a copy, a read-only medium) is
/// opened without a lock, since creating one would be a write; a writer that opens it later
/// cannot see such a reader.
pub(crate) fn open_read_only(dir: &Path, opts: Options) -> Result<DbInner> {
    opts.validate()?;
    if opts.error_if_exists {
        return Err(Error::InvalidArgument(
            "Options::error_if_exists cannot hold for a read-only open, which needs an \
             existing database"
                .into(),
        ));
    }
    check_open_file_limit(opts.max_open_files)?;
    let env = Arc::clone(&opts.env);
    if !env.is_dir(dir) {
        return Err(Error::InvalidArgument(format!(
            "database {} does not exist (a read-only open creates nothing)",
            dir.display()
        )));
    }
    let lock_path = filename::lock_path(dir);
    let lock = if env.exists(&lock_path) {
        Some(env.lock_file_shared(&lock_path)?)
    } else {
        None
    };
    if !env.exists(&filename::current_path(dir)) {
        return Err(Error::InvalidArgument(format!(
            "{} holds no database (no CURRENT file)",
            dir.display()
        )));
    }
    let (counters, table_cache) = table_cache(&env, dir, &opts);
    let wrap = wrapper(&env, dir, &table_cache);
    let mut durable = read_durable_state(env.as_ref(), dir, wrap)?;
    let names = env.list_dir(dir)?;
    let on_disk = parse_names(&names);
    let replayed = replay_logs(env.as_ref(), dir, &opts, None, &on_disk, &mut durable)?;
    Ok(assemble(Parts {
        dir,
        opts,
        env,
        lock,
        table_cache,
        counters,
        durable,
        mem: replayed.mem,
        log: LogWriter::closed(),
        log_number: 0,
        manifest: None,
        report: replayed.report,
        view_seq: None,
    }))
}

pub(super) fn parse_names(names: &[String]) -> Vec<(FileType, u64)> {
    names
        .iter()
        .filter_map(|n| filename::parse_file_name(n))
        .collect()
}

/// The table cache (and the read counters it feeds) for a database in `dir`.
pub(super) fn table_cache(
    env: &Arc<dyn Env>,
    dir: &Path,
    opts: &Options,
) -> (Arc<ReadCounters>, Arc<TableCache>) {
    let counters = Arc::new(ReadCounters::default());
    let block_cache =
        (opts.block_cache_bytes > 0).then(|| Arc::new(BlockCache::new(opts.block_cache_bytes)));
    let table_cache = Arc::new(
        TableCache::new(
            Arc::clone(env),
            dir.to_path_buf(),
            opts.max_open_files,
            block_cache,
            Arc::clone(&counters),
        )
        .with_filter_policy(
            Arc::clone(&opts.filter_policy),
            // Every level's policy: a table records the name of the one that built it.
            (0..crate::options::NUM_LEVELS)
                .map(|level| Arc::clone(opts.filter_policy_for_level(level)))
                .collect(),
        )
        .with_mmap_reads(opts.mmap_reads),
    );
    (counters, table_cache)
}

/// Turns a MANIFEST record into a live table of `dir`.
fn wrapper<'a>(
    env: &'a Arc<dyn Env>,
    dir: &'a Path,
    table_cache: &'a Arc<TableCache>,
) -> impl Fn(FileMeta) -> Arc<TableFile> + Copy + 'a {
    move |meta: FileMeta| {
        let path = filename::table_path(dir, meta.number);
        Arc::new(TableFile::new(
            meta,
            path,
            Arc::clone(env),
            Arc::clone(table_cache),
        ))
    }
}

/// Everything an opened database is made of.
pub(super) struct Parts<'a> {
    pub dir: &'a Path,
    pub opts: Options,
    pub env: Arc<dyn Env>,
    pub lock: Option<FileLock>,
    pub table_cache: Arc<TableCache>,
    pub counters: Arc<ReadCounters>,
    pub durable: Durable,
    pub mem: Arc<MemTable>,
    pub log: LogWriter,
    pub log_number: u64,
    pub manifest: Option<ManifestWriter>,
    pub report: RecoveryReport,
    /// For a secondary: the sequence number its view is read at (see [`ReadView::seq`]).
    pub view_seq: Option<SeqNo>,
}

pub(super) fn assemble(parts: Parts<'_>) -> DbInner {
    let Parts {
        dir,
        opts,
        env,
        lock,
        table_cache,
        counters,
        durable,
        mem,
        mut log,
        log_number,
        manifest,
        report,
        view_seq,
    } = parts;
    let wal_tip = WalTip {
        log_number,
        sync: log.sync_handle(),
        // Open synced the directory after creating the new WAL.
        entry_synced: true,
    };
    let Durable {
        version,
        next_file_number,
        last_seq,
        compact_pointers,
        ..
    } = durable;
    DbInner {
        dir: dir.to_path_buf(),
        env,
        read_only: manifest.is_none(),
        _lock: lock,
        table_cache,
        counters,
        level_counters: Default::default(),
        work: Default::default(),
        last_seq: AtomicU64::new(last_seq),
        writer: Mutex::new(Writer {
            log,
            log_number,
            mem: Arc::clone(&mem),
            pacing: Default::default(),
            // Read-only: nothing is appended, so no syncing thread.
            wal_sync: if manifest.is_none() {
                super::wal_sync::WalSyncer::disabled()
            } else {
                super::wal_sync::WalSyncer::start()
            },
        }),
        wal_tip: Mutex::new(wal_tip),
        writes_stopped: Default::default(),
        write_queue: Default::default(),
        state: Mutex::new(State {
            imm: None,
            next_file_number,
            log_number,
            bg_error: None,
            bg_failures: 0,
            shutting_down: false,
            manual_requested: 0,
            manual_completed: 0,
            manual_range: None,
            flushing: false,
            compactions_running: 0,
            manual_running: false,
            busy: Default::default(),
            jobs_done: 0,
            compact_pointers,
            refilter_given_up: Vec::new(),
            unsettled_tables: Vec::new(),
            idle: super::idle::IdleWatch::new(last_seq),
            settling: 0,
        }),
        work_cv: Condvar::new(),
        done_cv: Condvar::new(),
        view: ArcSwap::from_pointee(ReadView {
            mem,
            imm: None,
            version: Arc::new(version),
            seq: view_seq,
        }),
        manifest: Mutex::new(manifest),
        snapshots: Mutex::new(Default::default()),
        recovery: report,
        compaction_limiter: opts.compaction_bytes_per_sec.map(RateLimiter::new),
        closing: Mutex::new(None),
        opts,
    }
}

/// File handles the engine needs beside its table readers: WALs, the MANIFEST, the LOCK
/// file, a compaction's inputs and outputs, and some for the program itself.
const SPARE_FILE_HANDLES: u64 = 64;

/// Makes sure the process may keep `max_open_files` table readers open besides the handles
/// the engine needs otherwise: the soft RLIMIT_NOFILE is raised (up to the hard limit) if it
/// is lower, and if even the hard limit is too low, open fails with a clear error rather than
/// lookups and compactions failing with EMFILE once the database has grown.
#[cfg(unix)]
pub(super) fn check_open_file_limit(max_open_files: usize) -> Result<()> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let wanted = (max_open_files as u64).saturating_add(SPARE_FILE_HANDLES);
    let Rlimit { current, maximum } = getrlimit(Resource::Nofile);
    if current.is_none_or(|soft| soft >= wanted) {
        return Ok(());
    }
    if maximum.is_none_or(|hard| hard >= wanted) {
        let raised = Rlimit {
            current: Some(wanted),
            maximum,
        };
        if setrlimit(Resource::Nofile, raised).is_ok() {
            return Ok(());
        }
    }
    Err(Error::InvalidArgument(format!(
        "Options::max_open_files ({max_open_files}) plus {SPARE_FILE_HANDLES} handles the engine \
         needs besides exceeds this process's open-file limit (soft {}, hard {}), which could \
         not be raised; lower max_open_files or raise the limit (ulimit -n)",
        current.map_or("unlimited".into(), |n| n.to_string()),
        maximum.map_or("unlimited".into(), |n| n.to_string()),
    )))
}

#[cfg(not(unix))]
pub(super) fn check_open_file_limit(_max_open_files: usize) -> Result<()> {
    Ok(())
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
#[derive(Clone)]
pub(super) struct Durable {
    pub version: Version,
    pub next_file_number: u64,
    pub last_seq: SeqNo,
    /// The oldest WAL still needed.
    pub log_number: u64,
    /// Where each level's next compaction starts, so round-robin survives a reopen.
    pub compact_pointers: [Option<Vec<u8>>; NUM_LEVELS],
}

impl Durable {
    /// Applies one edit read from the MANIFEST at `path` (named in errors).
    pub(super) fn apply(
        &mut self,
        edit: &VersionEdit,
        path: &Path,
        wrap: impl FnMut(FileMeta) -> Arc<TableFile>,
    ) -> Result<()> {
        self.version = self
            .version
            .apply(edit, wrap)
            .map_err(|e| e.located(path, 0))?;
        if let Some(n) = edit.log_number {
            self.log_number = n;
        }
        if let Some(n) = edit.next_file_number {
            self.next_file_number = self.next_file_number.max(n);
        }
        if let Some(s) = edit.last_sequence {
            self.last_seq = self.last_seq.max(s);
        }
        for (level, key) in &edit.compact_pointers {
            if let Some(p) = self.compact_pointers.get_mut(*level) {
                *p = Some(key.clone());
            }
        }
        Ok(())
    }
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
        d.apply(&edit, &path, wrap)?;
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
/// becomes a level-0 table, unless `cache` is `None` (a read-only open): then everything
/// stays in the one memtable. On failure the tables written so far are removed.
fn replay_logs(
    env: &dyn Env,
    dir: &Path,
    opts: &Options,
    cache: Option<&TableCache>,
    on_disk: &[(FileType, u64)],
    d: &mut Durable,
) -> Result<Replayed> {
    let mut out = Replayed {
        edit: VersionEdit::default(),
        mem: Arc::new(MemTable::with_budget(opts.memtable_bytes)),
        carried: Vec::new(),
        report: RecoveryReport::default(),
    };
    match replay_into(env, dir, opts, cache, on_disk, d, &mut out) {
        Ok(()) => Ok(out),
        Err(e) => {
            discard_tables(env, dir, cache, &out.edit);
            Err(e)
        }
    }
}

/// Removes the tables `edit` adds, which no MANIFEST names: what a failed open wrote.
fn discard_tables(env: &dyn Env, dir: &Path, cache: Option<&TableCache>, edit: &VersionEdit) {
    for (_, meta) in &edit.new_files {
        if let Some(cache) = cache {
            cache.evict(meta.number);
        }
        // A file that cannot be removed is an orphan the next open removes.
        let _ = env.remove_file(&filename::table_path(dir, meta.number));
    }
}

/// The body of [`replay_logs`], adding to `out` as it goes.
fn replay_into(
    env: &dyn Env,
    dir: &Path,
    opts: &Options,
    cache: Option<&TableCache>,
    on_disk: &[(FileType, u64)],
    d: &mut Durable,
    out: &mut Replayed,
) -> Result<()> {
    let mut logs: Vec<u64> = on_disk
        .iter()
        .filter(|(t, n)| *t == FileType::Log && *n >= d.log_number)
        .map(|(_, n)| *n)
        .collect();
    logs.sort_unstable();
    let mode = if opts.best_effort_recovery {
        RecoveryMode::BestEffort
    } else {
        RecoveryMode::Strict
    };
    for (i, &number) in logs.iter().enumerate() {
        let path = filename::log_path(dir, number);
        let mut reader = LogReader::open(env, &path, mode)?;
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
            if let Some(cache) = cache
                && out.mem.approximate_bytes() >= opts.memtable_bytes
            {
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
                    opts.filter_with_bits(0, opts.bits_per_key_for_level(0)),
                    u64::MAX,
                    &mut numbers,
                )
                .with_range_tombstones(out.mem.range_fragments());
                table.copy_all(&mut out.mem.iter())?;
                for meta in table.finish()? {
                    out.edit.new_files.push((0, meta));
                }
                out.mem = Arc::new(MemTable::with_budget(opts.memtable_bytes));
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
        let torn = reader.tail_dropped().is_some();
        if torn && i + 1 < logs.len() && !opts.best_effort_recovery {
            // A log is synced before its successor takes writes, so a torn older log means
            // its end was lost: replaying the newer logs would leave a hole in the history.
            // Stop here and keep a prefix (point-in-time recovery).
            out.report.dropped.push(format!(
                "{}: torn before its end, so the {} newer log(s) were not replayed",
                path.display(),
                logs.len() - i - 1
            ));
            break;
        }
    }
    Ok(())
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
    let log_path = filename::log_path(dir, log_number);
    let log = (|| {
        let mut log = LogWriter::new(env.create_writable(&log_path)?);
        for record in carried {
            log.add_record(record)?;
        }
        log.sync()?;
        Ok(log)
    })();
    let started = log.and_then(|log| {
        let snapshot = snapshot_edit(
            &d.version,
            log_number,
            d.next_file_number,
            d.last_seq,
            &d.compact_pointers,
        );
        let manifest = switch_manifest(env, dir, manifest_number, &snapshot)?;
        Ok((log, manifest))
    });
    let (log, manifest) = match started {
        Ok(started) => started,
        Err(e) => {
            // Unless CURRENT names the new MANIFEST (which names this WAL), the WAL is a copy
            // of records the old WALs still hold: nothing may replay it as well.
            if current_names_another(env, dir, manifest_number) {
                let _ = env.remove_file(&log_path);
            }
            return Err(e);
        }
    };
    Ok(Fresh {
        log,
        log_number,
        manifest,
        manifest_number,
    })
}

/// Step 5: everything the new state does not reference is garbage now. Returns the table
/// files removed (a crashed flush or compaction leaves such orphans).
fn remove_obsolete(
    env: &dyn Env,
    dir: &Path,
    names: &[String],
    version: &Version,
    fresh: &Fresh,
) -> Vec<String> {
    let mut orphans = Vec::new();
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
            if kind == FileType::Table {
                orphans.push(name.clone());
            }
        }
    }
    orphans
}

#[cfg(test)]
mod tests {
    /// Regression: a MANIFEST replaced by a link to /dev/zero made open allocate until the
    /// process died; it is now a corruption naming the file.
    #[cfg(unix)]
    #[test]
    fn a_manifest_that_is_a_device_is_corruption_not_an_endless_read() {
        let dir = tempfile::tempdir().unwrap();
        drop(Db::open(dir.path(), Options::default()).unwrap());
        let number = manifest::read_current(&StdEnv, dir.path()).unwrap();
        let path = filename::manifest_path(dir.path(), number);
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let err = Db::open(dir.path(), Options::default()).unwrap_err();
        assert!(matches!(err, Error::Corruption { .. }), "{err}");
        assert!(err.to_string().contains("MANIFEST"), "{err}");
    }

    /// Beyond the hard limit: a clear error naming the option. Within it: the soft limit is
    /// raised and open goes on.
    #[cfg(unix)]
    #[test]
    fn max_open_files_is_checked_against_the_open_file_limit() {
        use rustix::process::{Resource, getrlimit};
        let limit = getrlimit(Resource::Nofile);
        if let Some(hard) = limit.maximum {
            let err = check_open_file_limit(usize::try_from(hard).unwrap()).unwrap_err();
            assert!(err.to_string().contains("max_open_files"), "{err}");
        }
        check_open_file_limit(100).unwrap();
        let soft = getrlimit(Resource::Nofile).current;
        assert!(soft.is_none_or(|s| s >= 100 + SPARE_FILE_HANDLES));
    }

    /// A table file no MANIFEST names (a crashed flush's output) is removed at open and
    /// reported.
    #[test]
    fn orphan_tables_are_removed_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = Db::open(dir.path(), Options::default()).unwrap();
            db.put("k", "v").unwrap();
            db.flush().unwrap();
        }
        let orphan = dir.path().join(crate::sstable::table_file_name(999));
        std::fs::write(&orphan, b"half a table").unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        assert!(!orphan.exists());
        let report = db.recovery_report();
        assert_eq!(
            report.orphan_tables_removed,
            vec![crate::sstable::table_file_name(999)]
        );
        assert_eq!(db.get("k").unwrap(), Some(b"v".to_vec()));
    }

    use super::*;
    use crate::Db;
    use crate::env::StdEnv;

    fn log_numbers(dir: &Path) -> Vec<u64> {
        let mut logs: Vec<u64> = StdEnv
            .list_dir(dir)
            .unwrap()
            .iter()
            .filter_map(|n| filename::parse_file_name(n))
            .filter(|(t, _)| *t == FileType::Log)
            .map(|(_, n)| n)
            .collect();
        logs.sort_unstable();
        logs
    }

    /// Writes batches `(seq, key)` as one log, each batch one record.
    fn write_log(dir: &Path, number: u64, batches: &[(u64, &str)]) -> u64 {
        let mut log = LogWriter::new(
            StdEnv
                .create_writable(&filename::log_path(dir, number))
                .unwrap(),
        );
        for &(seq, key) in batches {
            let mut b = WriteBatch::new();
            b.put(key, b"v");
            b.set_sequence(seq);
            log.add_record(b.payload()).unwrap();
        }
        log.sync().unwrap();
        log.len()
    }

    /// A torn older log ends the replay: the newer logs' records would come after a hole.
    #[test]
    fn replay_stops_at_a_torn_log_that_is_not_the_last() {
        let dir = tempfile::tempdir().unwrap();
        drop(Db::open(dir.path(), Options::default()).unwrap());
        let first = *log_numbers(dir.path()).last().unwrap();
        let len = write_log(dir.path(), first, &[(1, "a"), (2, "b")]);
        // The second record loses its last bytes: a torn tail.
        StdEnv
            .truncate(&filename::log_path(dir.path(), first), len - 3)
            .unwrap();
        write_log(dir.path(), first + 10, &[(3, "c")]);

        let db = Db::open(dir.path(), Options::default()).unwrap();
        assert_eq!(db.get("a").unwrap(), Some(b"v".to_vec()));
        assert_eq!(db.get("b").unwrap(), None);
        assert_eq!(db.get("c").unwrap(), None, "replayed past a hole");
        let dropped = &db.recovery_report().dropped;
        assert!(
            dropped.iter().any(|d| d.contains("not replayed")),
            "{dropped:?}"
        );
        drop(db);

        // With best-effort recovery every readable record is kept.
        let dir = tempfile::tempdir().unwrap();
        drop(Db::open(dir.path(), Options::default()).unwrap());
        let first = *log_numbers(dir.path()).last().unwrap();
        let len = write_log(dir.path(), first, &[(1, "a"), (2, "b")]);
        StdEnv
            .truncate(&filename::log_path(dir.path(), first), len - 3)
            .unwrap();
        write_log(dir.path(), first + 10, &[(3, "c")]);
        let opts = Options {
            best_effort_recovery: true,
            ..Options::default()
        };
        let db = Db::open(dir.path(), opts).unwrap();
        assert_eq!(db.get("c").unwrap(), Some(b"v".to_vec()));
    }
}
