//! Rebuilding a database that no longer opens, from whatever can still be read.
//!
//! [`repair`] is for a damaged MANIFEST or CURRENT, damaged tables or damaged WALs. It reads
//! every table block by block (a block whose checksum or structure is bad is skipped, the
//! rest of the table is kept; a table whose footer or index is unreadable is dropped whole),
//! replays every WAL in best-effort mode, and merges all of it, every version of every key, in
//! internal-key order into fresh level-1 tables cut at user-key boundaries. Rewriting instead
//! of re-listing the old tables is what makes the result right whatever levels they came
//! from: any table layout would need the old per-level order, which lived in the lost
//! MANIFEST. A fresh MANIFEST naming only the new tables is made current; then intact old
//! files are deleted and damaged ones are moved to `lost/` for inspection.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::db::open_handles;
use crate::db::batch::WriteBatch;
use crate::env::{Env, RandomAccessFile};
use crate::error::{Error, Result};
use crate::util::filename::{self, FileType};
use crate::iter::InternalIterator;
use crate::iter::merge::MergingIterator;
use crate::util::key::{self, SeqNo};
use crate::db::manifest::{self, ManifestWriter, VersionEdit};
use crate::db::memtable::MemTable;
use crate::options::Options;
use crate::sstable::ReadCounters;
use crate::sstable::block::{Block, BlockIter};
use crate::sstable::format::{BlockHandle, FOOTER_LEN, Footer, read_block};
use crate::db::table_cache::TableCache;
use crate::db::table_writer::TableWriter;
use crate::db::wal::{LogReader, RecoveryMode};

/// What [`repair`] found, kept and lost.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RepairReport {
    /// Table files read.
    pub tables_scanned: usize,
    /// Tables of which nothing could be read (unreadable footer or index), with why.
    pub tables_dropped: Vec<String>,
    /// Tables of which some blocks were skipped, with what was skipped.
    pub tables_damaged: Vec<String>,
    /// WAL files replayed.
    pub logs_replayed: usize,
    /// WAL records (write batches) recovered.
    pub wal_records: u64,
    /// What the WAL replay skipped (damaged records, torn tails).
    pub wal_dropped: Vec<String>,
    /// Entries (every version of every key, tombstones included) in the repaired database.
    pub entries_salvaged: u64,
    /// Bytes of tables and WALs that could not be read and were skipped.
    pub bytes_skipped: u64,
    /// Tables written for the repaired database.
    pub tables_written: usize,
    /// The newest sequence number found.
    pub last_sequence: SeqNo,
}

/// Repairs the database in `path` with default options (the real file system).
///
/// Use it when [`crate::Db::open`] fails with a corruption; the database must not be open.
///
/// # Errors
/// [`Error::Locked`] if it is open; I/O errors reading or writing files. Damage is not an
/// error: it is skipped and reported.
pub fn repair(path: impl AsRef<Path>) -> Result<RepairReport> {
    repair_with_options(path, &Options::default())
}

/// Repairs the database in `path`, writing tables with `opts` (block size, filters, target
/// file size) through `opts.env`.
///
/// # Errors
/// As for [`repair`].
pub fn repair_with_options(path: impl AsRef<Path>, opts: &Options) -> Result<RepairReport> {
    let dir = path.as_ref();
    let env = Arc::clone(&opts.env);
    // Dropped after the lock (declared before it), so an open meanwhile is told why.
    let repairing = open_handles::busy(dir, open_handles::Activity::Repairing);
    let _lock = match env.lock_file(&filename::lock_path(dir)) {
        Ok(lock) => lock,
        Err(e) => {
            drop(repairing);
            return Err(open_handles::explain(dir, e));
        }
    };
    let names = env.list_dir(dir)?;
    let parsed: Vec<(FileType, u64, &String)> = names
        .iter()
        .filter_map(|n| filename::parse_file_name(n).map(|(t, num)| (t, num, n)))
        .collect();
    let mut next_number = parsed
        .iter()
        .map(|(_, n, _)| n + 1)
        .max()
        .unwrap_or(1)
        .max(2);
    let mut report = RepairReport::default();
    let mut damaged: BTreeSet<String> = BTreeSet::new();

    // 1. Every WAL, oldest first, best effort, into one memtable: the newest data.
    let mem = Arc::new(MemTable::new());
    let mut logs: Vec<u64> = parsed
        .iter()
        .filter(|(t, _, _)| *t == FileType::Log)
        .map(|(_, n, _)| *n)
        .collect();
    logs.sort_unstable();
    for number in logs {
        let path = filename::log_path(dir, number);
        let mut reader = LogReader::open(env.as_ref(), &path, RecoveryMode::BestEffort)?;
        loop {
            match reader.next_record() {
                Ok(Some(record)) => match WriteBatch::from_payload(&record) {
                    Ok(batch) => {
                        batch.insert_into(&mem);
                        report.wal_records += 1;
                    }
                    Err(e) => {
                        report.bytes_skipped += record.len() as u64;
                        report.wal_dropped.push(format!("{}: {e}", path.display()));
                        damaged.insert(filename::file_name(FileType::Log, number));
                    }
                },
                Ok(None) => break,
                Err(e) => {
                    report.wal_dropped.push(format!("{}: {e}", path.display()));
                    damaged.insert(filename::file_name(FileType::Log, number));
                    break;
                }
            }
        }
        if let Some((offset, why)) = reader.tail_dropped() {
            report.bytes_skipped += reader.image_len().saturating_sub(offset);
            report
                .wal_dropped
                .push(format!("{}: tail at byte {offset}: {why}", path.display()));
        }
        for (offset, bytes, why) in reader.dropped() {
            report.bytes_skipped += bytes;
            report.wal_dropped.push(format!(
                "{}: {bytes} bytes at byte {offset}: {why}",
                path.display()
            ));
            damaged.insert(filename::file_name(FileType::Log, number));
        }
        report.logs_replayed += 1;
    }

    // 2. Every table, block by block.
    let mut children: Vec<Box<dyn InternalIterator>> = vec![Box::new(mem.iter())];
    let mut tables: Vec<u64> = parsed
        .iter()
        .filter(|(t, _, _)| *t == FileType::Table)
        .map(|(_, n, _)| *n)
        .collect();
    tables.sort_unstable();
    let skipped = Arc::new(parking_lot::Mutex::new(Vec::<(u64, u64, String)>::new()));
    // Range tombstones: the WALs' and those of every table whose range-deletion block reads
    // back (a table that does not open keeps only what its blocks salvage).
    let mut range_dels = mem
        .range_fragments()
        .map(|f| f.tombstones())
        .unwrap_or_default();
    for &number in &tables {
        report.tables_scanned += 1;
        let path = filename::table_path(dir, number);
        if let Ok(file) = env.open_random_access(&path)
            && let Ok(table) = crate::sstable::Table::open(
                file,
                crate::sstable::TableReadOptions {
                    file_number: number,
                    filter: None,
                    cache: None,
                    counters: Arc::new(ReadCounters::default()),
                },
            )
            && let Some(f) = table.range_fragments()
        {
            range_dels.extend(f.tombstones());
        }
        match SalvageIter::open(env.as_ref(), &path, number, Arc::clone(&skipped)) {
            Ok(it) => children.push(Box::new(it)),
            Err(e) => {
                report.bytes_skipped += env.file_size(&path).unwrap_or(0);
                report
                    .tables_dropped
                    .push(format!("{}: {e}", path.display()));
                damaged.insert(filename::file_name(FileType::Table, number));
            }
        }
    }

    // 3. Merge everything into new level-1 tables.
    let counters = Arc::new(ReadCounters::default());
    let cache = TableCache::new(Arc::clone(&env), dir.to_path_buf(), 16, None, counters);
    let mut edit = VersionEdit::default();
    let mut numbers = || {
        next_number += 1;
        next_number - 1
    };
    // Every table it wrote is removed if this fails.
    let mut out = TableWriter::new(
        env.as_ref(),
        dir,
        &cache,
        opts,
        1,
        opts.filter_with_bits(1, opts.bits_per_key_for_level(1)),
        opts.target_file_bytes,
        &mut numbers,
    )
    .with_range_tombstones(Some(Arc::new(crate::range_del::Fragments::build(
        &range_dels,
    ))));
    copy_salvaged(MergingIterator::new(children), &mut out, &mut report)?;
    if let Some(seq) = range_dels.iter().map(|t| t.seq).max() {
        report.last_sequence = report.last_sequence.max(seq);
    }
    for meta in out.finish()? {
        edit.new_files.push((1, meta));
    }
    let written: Vec<u64> = edit.new_files.iter().map(|(_, m)| m.number).collect();
    for (number, bytes, why) in skipped.lock().iter() {
        report.bytes_skipped += bytes;
        report.tables_damaged.push(format!(
            "{}: {why}",
            filename::file_name(FileType::Table, *number)
        ));
        damaged.insert(filename::file_name(FileType::Table, *number));
    }
    report.tables_written = edit.new_files.len();

    // 4. A fresh MANIFEST naming only the new tables, made current.
    let manifest_number = next_number;
    next_number += 1;
    edit.log_number = Some(next_number);
    edit.next_file_number = Some(next_number + 1);
    edit.last_sequence = Some(report.last_sequence);
    let mut writer = ManifestWriter::create(env.as_ref(), dir, manifest_number)?;
    writer.append(&edit)?;
    drop(writer);
    env.sync_dir(dir)?;
    manifest::set_current(env.as_ref(), dir, manifest_number)?;

    // 5. The old files are now garbage; keep the damaged ones aside.
    let lost = dir.join("lost");
    for (kind, number, name) in &parsed {
        let old = match kind {
            FileType::Table => !written.contains(number),
            FileType::Log => true,
            FileType::Manifest => *number != manifest_number,
            FileType::Temp => true,
            FileType::Current | FileType::Lock => false,
        };
        if !old {
            continue;
        }
        let path = dir.join(name.as_str());
        if damaged.contains(name.as_str()) {
            env.create_dir_all(&lost)?;
            env.rename(&path, &lost.join(name.as_str()))?;
        } else {
            let _ = env.remove_file(&path);
        }
    }
    env.sync_dir(dir)?;
    Ok(report)
}

/// Copies the merged entries, each once (the same entry can be in a WAL and in the table it
/// was flushed to), into `out`.
fn copy_salvaged(
    mut input: MergingIterator,
    out: &mut TableWriter<'_>,
    report: &mut RepairReport,
) -> Result<()> {
    let mut last: Vec<u8> = Vec::new();
    input.seek_to_first()?;
    while input.valid() {
        let ikey = input.key();
        if ikey != last.as_slice() {
            let parsed = key::parse(ikey)?;
            report.last_sequence = report.last_sequence.max(parsed.seq);
            out.add(ikey, input.value())?;
            report.entries_salvaged += 1;
            last.clear();
            last.extend_from_slice(ikey);
        }
        input.next()?;
    }
    Ok(())
}

/// Iterates a table's entries block by block, skipping blocks that fail their checksum or
/// structure check (and entries out of order), and recording what it skipped.
struct SalvageIter {
    file: Arc<dyn RandomAccessFile>,
    path: PathBuf,
    number: u64,
    blocks_end: u64,
    handles: Vec<BlockHandle>,
    next_block: usize,
    block: Option<BlockIter>,
    /// The key before the current one (entries must increase).
    prev: Vec<u8>,
    skipped: Arc<parking_lot::Mutex<Vec<(u64, u64, String)>>>,
}

impl SalvageIter {
    fn open(
        env: &dyn Env,
        path: &Path,
        number: u64,
        skipped: Arc<parking_lot::Mutex<Vec<(u64, u64, String)>>>,
    ) -> Result<SalvageIter> {
        let file = env.open_random_access(path)?;
        let size = file.size();
        if size < FOOTER_LEN as u64 {
            return Err(Error::corruption(path, 0, "shorter than a table footer"));
        }
        let blocks_end = size - FOOTER_LEN as u64;
        let footer = Footer::decode(&file.read_at(blocks_end, FOOTER_LEN)?)
            .map_err(|e| e.located(path, blocks_end))?;
        let index = Block::new(read_block(&*file, path, footer.index, blocks_end)?)
            .map_err(|e| e.located(path, footer.index.offset))?;
        let mut it = BlockIter::new(Arc::new(index), key::compare);
        let mut handles = Vec::new();
        it.seek_to_first()
            .map_err(|e| e.located(path, footer.index.offset))?;
        while it.valid() {
            handles.push(
                BlockHandle::decode_exact(it.value())
                    .map_err(|e| e.located(path, footer.index.offset))?,
            );
            it.advance()
                .map_err(|e| e.located(path, footer.index.offset))?;
        }
        Ok(SalvageIter {
            file,
            path: path.to_path_buf(),
            number,
            blocks_end,
            handles,
            next_block: 0,
            block: None,
            prev: Vec::new(),
            skipped,
        })
    }

    fn skip(&self, bytes: u64, why: String) {
        self.skipped.lock().push((self.number, bytes, why));
    }

    /// Loads the next readable block that has an entry; `block` is `None` at the end.
    fn load_next_block(&mut self) {
        self.block = None;
        while self.next_block < self.handles.len() {
            let h = self.handles[self.next_block];
            self.next_block += 1;
            let loaded = read_block(&*self.file, &self.path, h, self.blocks_end)
                .and_then(Block::new)
                .and_then(|b| {
                    let b = Arc::new(b);
                    b.verify(key::compare)?;
                    let mut it = BlockIter::new(b, key::compare);
                    it.seek_to_first()?;
                    Ok(it)
                });
            match loaded {
                Ok(it) if it.valid() => {
                    self.block = Some(it);
                    return;
                }
                Ok(_) => {}
                Err(e) => self.skip(
                    h.size,
                    format!("block at byte {} ({} bytes) skipped: {e}", h.offset, h.size),
                ),
            }
        }
    }

    /// Moves past entries that are not valid internal keys or do not increase.
    fn settle(&mut self) -> Result<()> {
        loop {
            let Some(it) = self.block.as_mut() else {
                return Ok(());
            };
            if !it.valid() {
                self.load_next_block();
                continue;
            }
            let ok = it.key().len() >= key::TRAILER_LEN
                && (self.prev.is_empty() || key::compare(&self.prev, it.key()).is_lt());
            if ok {
                self.prev.clear();
                self.prev.extend_from_slice(it.key());
                return Ok(());
            }
            let why = format!(
                "out-of-order or malformed key skipped at byte {}",
                it.entry_offset()
            );
            let bytes = (it.key().len() + it.value().len()) as u64;
            if it.advance().is_err() {
                self.block = None;
            }
            self.skip(bytes, why);
        }
    }
}

impl InternalIterator for SalvageIter {
    fn seek_to_first(&mut self) -> Result<()> {
        self.next_block = 0;
        self.prev.clear();
        self.load_next_block();
        self.settle()
    }

    fn seek(&mut self, target: &[u8]) -> Result<()> {
        // Only used for whole-table merges; a seek is a scan from the start.
        self.seek_to_first()?;
        while self.valid() && key::compare(self.key(), target).is_lt() {
            self.next()?;
        }
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if let Some(it) = self.block.as_mut()
            && let Err(e) = it.advance()
        {
            self.skip(0, format!("rest of a block skipped: {e}"));
            self.load_next_block();
        }
        self.settle()
    }

    fn valid(&self) -> bool {
        self.block.as_ref().is_some_and(|b| b.valid())
    }

    fn key(&self) -> &[u8] {
        self.block.as_ref().map_or(&[], |b| b.key())
    }

    fn value(&self) -> &[u8] {
        self.block.as_ref().map_or(&[], |b| b.value())
    }
}
