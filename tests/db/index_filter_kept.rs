//! Index and filter blocks stay in memory under data-block pressure: they live in the open
//! table's reader, not in the block cache, so once a table is open a get of a key whose data
//! block was evicted costs one read of the file (the data block), not three; and when the
//! table cache closes a reader (more tables than `max_open_files`), it keeps what the reader
//! had read, so reopening the table reads nothing but the data block a get needs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::Result;
use bloomkv::env::{Env, FileLock, RandomAccessFile, WritableFile};
use bloomkv::{Compression, Db, Options};

use crate::common;

/// The real file system (without fsyncs) counting positional reads of table files.
#[derive(Debug, Default)]
struct CountingEnv {
    table_reads: Arc<AtomicU64>,
}

#[derive(Debug)]
struct Counted {
    inner: Arc<dyn RandomAccessFile>,
    reads: Arc<AtomicU64>,
}

impl RandomAccessFile for Counted {
    fn read_at(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.read_at(offset, len)
    }
    fn read_at_reusing(&self, offset: u64, len: usize, spare: Vec<u8>) -> Result<Vec<u8>> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.read_at_reusing(offset, len, spare)
    }
    fn size(&self) -> u64 {
        self.inner.size()
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
}

fn env() -> Arc<dyn Env> {
    common::NoSyncEnv::shared()
}

impl Env for CountingEnv {
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        env().create_writable(path)
    }
    fn open_appendable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        env().open_appendable(path)
    }
    fn open_random_access(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        let inner = env().open_random_access(path)?;
        if path.extension().is_some_and(|e| e == "sst") {
            return Ok(Arc::new(Counted {
                inner,
                reads: Arc::clone(&self.table_reads),
            }));
        }
        Ok(inner)
    }
    fn read_all(&self, path: &Path) -> Result<Vec<u8>> {
        env().read_all(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        env().rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        env().remove_file(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        env().truncate(path, len)
    }
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        env().create_dir_all(path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        env().list_dir(path)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        env().sync_dir(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        env().file_size(path)
    }
    fn exists(&self, path: &Path) -> bool {
        env().exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        env().is_dir(path)
    }
    fn lock_file(&self, path: &Path) -> Result<FileLock> {
        env().lock_file(path)
    }
}

fn key(i: u32) -> String {
    format!("key{i:06}")
}

#[test]
fn a_get_after_data_block_pressure_reads_only_its_data_block() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().into();
    let counting = Arc::new(CountingEnv::default());
    let opts = Options {
        // Sixteen 4 KiB blocks: the sweep below evicts every block many times over.
        block_cache_bytes: 64 << 10,
        target_file_bytes: 512 << 10,
        // Raw blocks, so the repeated values still fill many 4 KiB blocks and tables.
        compression: Compression::None,
        env: counting.clone(),
        ..Options::default()
    };
    {
        let db = Db::open(&path, opts.clone()).unwrap();
        for i in 0..30_000 {
            db.put(key(i), [5u8; 100]).unwrap();
        }
        db.compact().unwrap();
        assert!(
            db.stats().tables.len() >= 4,
            "{:?}",
            db.stats().tables.len()
        );
    }
    let db = Db::open(&path, opts).unwrap();
    // Opens key 0's table (footer, index, properties, filter) and reads its data block.
    assert!(db.get(key(0)).unwrap().is_some());
    // Data blocks of other tables push key 0's block out of the cache.
    for i in (10_000..30_000).step_by(10) {
        assert!(db.get(key(i)).unwrap().is_some());
    }
    let before = counting.table_reads.load(Ordering::Relaxed);
    assert_eq!(db.get(key(0)).unwrap(), Some(vec![5u8; 100]));
    let reads = counting.table_reads.load(Ordering::Relaxed) - before;
    assert_eq!(
        reads, 1,
        "the data block only, not the index or filter again"
    );
    // A key the table does not hold: its filter answers from memory, no read at all (bar a
    // false positive, under 1% at 10 bits per key; none for this key and seed).
    let before = counting.table_reads.load(Ordering::Relaxed);
    assert_eq!(db.get("key000000x").unwrap(), None);
    assert_eq!(counting.table_reads.load(Ordering::Relaxed) - before, 0);
}

#[test]
fn a_table_whose_reader_was_closed_reopens_without_reading_its_index_or_filter() {
    let dir = tempfile::tempdir().unwrap();
    let path: PathBuf = dir.path().into();
    let counting = Arc::new(CountingEnv::default());
    let opts = Options {
        block_cache_bytes: 64 << 10,
        target_file_bytes: 64 << 10,
        // Three readers pinned, one per shard of the LRU: most of the tables get closed.
        max_open_files: 4,
        // Raw blocks, so the repeated values still fill many tables.
        compression: Compression::None,
        env: counting.clone(),
        ..Options::default()
    };
    {
        let db = Db::open(&path, opts.clone()).unwrap();
        for i in 0..30_000 {
            db.put(key(i), [5u8; 100]).unwrap();
        }
        db.compact().unwrap();
    }
    let db = Db::open(&path, opts).unwrap();
    let tables = db.stats().tables;
    assert!(tables.len() >= 40, "{} tables", tables.len());
    // Opens every table once, in key order; the LRU closes most of the readers again, and
    // the later data blocks push the earlier ones out of the 64 KiB block cache.
    for t in &tables {
        assert!(db.get(&t.smallest_key).unwrap().is_some());
    }
    let closed = db
        .stats()
        .tables
        .into_iter()
        .find(|t| !t.open)
        .expect("some reader was closed");
    let before = counting.table_reads.load(Ordering::Relaxed);
    assert_eq!(db.get(&closed.smallest_key).unwrap(), Some(vec![5u8; 100]));
    let reads = counting.table_reads.load(Ordering::Relaxed) - before;
    assert_eq!(
        reads, 1,
        "table {}: the data block only, not footer, index and filter again",
        closed.file_number
    );
}
