//! Open table readers, bounded by `Options::max_open_files`.
//!
//! Opening a table reads and verifies its footer, index, properties and filter; the cache makes
//! that a once-per-file cost instead of a per-lookup one. Up to three quarters of the bound
//! are *pinned*: such a reader is held by its [`crate::db::version::TableFile`] itself (like
//! RocksDB with `max_open_files = -1`), so a lookup reaches it without a hash lookup, lock or
//! reference count. The rest of the bound is an LRU of readers for tables beyond that.
//!
//! When the LRU closes a reader, it keeps what opening the table read (index, filter,
//! properties: [`TableParts`], no file handle), in up to as many bytes as the block cache
//! holds (its least recently closed tables dropped first), so a table reopened later costs
//! an `open` call and no reads: under a database of more tables
//! than `max_open_files`, a cold get stays at about one read (its data block) instead of
//! reading footer, index and filter again. Data blocks never push these out: they are not in
//! the block cache.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::env::{Env, RandomAccessFile};
use crate::error::{Error, Result};
use crate::util::filename;
use crate::filter::{self, BloomPolicy, FilterPolicy};
use crate::sstable::cache::{BlockCache, IntHasher};
use crate::sstable::{ReadCounters, Table, TableParts, TableReadOptions};

/// Shards of the map; a lookup that hits takes only its shard's read lock.
const SHARDS: usize = 16;

type FileMap = HashMap<u64, Entry, BuildHasherDefault<IntHasher>>;

/// A bounded map from file number to open [`Table`].
#[derive(Debug)]
pub struct TableCache {
    env: Arc<dyn Env>,
    dir: PathBuf,
    /// Tables each shard may keep open (the LRU's part of the bound split evenly, at least one).
    shard_capacity: usize,
    /// How many readers may be pinned to their table files, and how many are.
    pin_capacity: usize,
    pinned: AtomicUsize,
    filter: Arc<dyn FilterPolicy>,
    /// Other policies the database builds tables with (per level), by name.
    other_filters: Vec<Arc<dyn FilterPolicy>>,
    block_cache: Option<Arc<BlockCache>>,
    counters: Arc<ReadCounters>,
    /// Open table files through a memory map ([`crate::Options::mmap_reads`]).
    mmap_reads: bool,
    /// Global use clock: a hit stamps its entry with the next tick (an atomic store under the
    /// read lock), and eviction drops the entry with the oldest stamp.
    clock: AtomicU64,
    shards: Vec<RwLock<FileMap>>,
    closed: Mutex<Closed>,
}

/// What the readers the LRU closed had read, by file number, with the tick of their closing:
/// at most `capacity` bytes of it, the least recently closed dropped first.
#[derive(Debug, Default)]
struct Closed {
    parts: HashMap<u64, (TableParts, u64), BuildHasherDefault<IntHasher>>,
    bytes: usize,
    capacity: usize,
}

impl Closed {
    fn take(&mut self, number: u64) -> Option<TableParts> {
        let (parts, _) = self.parts.remove(&number)?;
        self.bytes -= parts.bytes();
        Some(parts)
    }

    fn keep(&mut self, number: u64, parts: TableParts, tick: u64) {
        self.take(number);
        self.bytes += parts.bytes();
        self.parts.insert(number, (parts, tick));
        while self.bytes > self.capacity {
            let oldest = self
                .parts
                .iter()
                .min_by_key(|(_, (_, t))| *t)
                .map(|(n, _)| *n);
            match oldest {
                Some(n) => drop(self.take(n)),
                None => break,
            }
        }
    }
}

#[derive(Debug)]
struct Entry {
    table: Arc<Table>,
    used: AtomicU64,
}

impl TableCache {
    /// A cache for the tables of `dir`, keeping at most about `capacity` tables open.
    pub fn new(
        env: Arc<dyn Env>,
        dir: PathBuf,
        capacity: usize,
        block_cache: Option<Arc<BlockCache>>,
        counters: Arc<ReadCounters>,
    ) -> TableCache {
        // Closed tables' index and filter get as much memory again as the block cache.
        let kept_bytes = block_cache.as_ref().map_or(0, |c| c.capacity());
        TableCache {
            env,
            dir,
            shard_capacity: (capacity - capacity / 4 * 3).max(1).div_ceil(SHARDS),
            pin_capacity: capacity / 4 * 3,
            pinned: AtomicUsize::new(0),
            // Reading only needs the policy's name and probe logic; the bits per key of each
            // filter are recorded inside the filter itself.
            filter: Arc::new(BloomPolicy::default()),
            other_filters: Vec::new(),
            block_cache,
            counters,
            mmap_reads: false,
            clock: AtomicU64::new(0),
            shards: (0..SHARDS)
                .map(|_| RwLock::new(FileMap::default()))
                .collect(),
            closed: Mutex::new(Closed {
                capacity: kept_bytes,
                ..Closed::default()
            }),
        }
    }

    /// Reads tables with `policy` (the database's own); tables built by another policy are
    /// read with the one of `others` (the per-level policies) or the built-in of its name.
    pub fn with_filter_policy(
        mut self,
        policy: Arc<dyn FilterPolicy>,
        others: Vec<Arc<dyn FilterPolicy>>,
    ) -> TableCache {
        self.filter = policy;
        self.other_filters = others;
        self
    }

    /// Reads table files through memory maps ([`crate::Options::mmap_reads`]).
    pub fn with_mmap_reads(mut self, mmap_reads: bool) -> TableCache {
        self.mmap_reads = mmap_reads;
        self
    }

    fn open_file(&self, path: &Path) -> Result<Arc<dyn RandomAccessFile>> {
        if self.mmap_reads {
            self.env.open_mapped(path)
        } else {
            self.env.open_random_access(path)
        }
    }

    fn shard(&self, number: u64) -> &RwLock<FileMap> {
        &self.shards[(number % SHARDS as u64) as usize]
    }

    fn open(&self, number: u64) -> Result<Arc<Table>> {
        let kept = self.closed.lock().take(number);
        if let Some(parts) = kept {
            let path = filename::table_path(&self.dir, number);
            let file = self.open_file(&path)?;
            let opts = TableReadOptions {
                file_number: number,
                filter: None,
                cache: self.block_cache.clone(),
                counters: Arc::clone(&self.counters),
            };
            if let Some(table) = Table::from_parts(file, parts, opts) {
                return Ok(Arc::new(table));
            }
        }
        let table = self.open_with(number, Arc::clone(&self.filter))?;
        let built_by = &table.properties().filter_policy;
        if built_by.is_empty() || built_by == self.filter.name() {
            return Ok(table);
        }
        // Built by another policy than the database's: read it with that one, or refuse
        // rather than lose the filter silently.
        let known = self
            .other_filters
            .iter()
            .find(|p| p.name() == built_by)
            .cloned()
            .or_else(|| filter::builtin_policy(built_by));
        match known {
            Some(policy) => self.open_with(number, policy),
            None => Err(Error::InvalidArgument(format!(
                "{}: its filter was built by policy {built_by:?}, which is neither this \
                 database's ({:?}) nor a built-in one; open with Options::filter_policy set to it",
                table.path().display(),
                self.filter.name()
            ))),
        }
    }

    fn open_with(&self, number: u64, policy: Arc<dyn FilterPolicy>) -> Result<Arc<Table>> {
        let path = filename::table_path(&self.dir, number);
        let file = self.open_file(&path)?;
        Ok(Arc::new(Table::open(
            file,
            TableReadOptions {
                file_number: number,
                filter: Some(policy),
                cache: self.block_cache.clone(),
                counters: Arc::clone(&self.counters),
            },
        )?))
    }

    /// A reader for `number` to be pinned by its table file, or `None` when the pin budget
    /// is spent. A reader already in the LRU moves out of it. Every `Some` must be paired
    /// with one [`TableCache::unpin`] when the pinned reader is dropped.
    ///
    /// # Errors
    /// I/O errors and corruption found while opening the file (no pin is then held).
    pub fn pin(&self, number: u64) -> Result<Option<Arc<Table>>> {
        let reserved = self
            .pinned
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |n| {
                (n < self.pin_capacity).then_some(n + 1)
            })
            .is_ok();
        if !reserved {
            return Ok(None);
        }
        if let Some(e) = self.shard(number).write().remove(&number) {
            return Ok(Some(e.table));
        }
        self.open(number).map(Some).inspect_err(|_| self.unpin())
    }

    /// Gives back a pin slot taken by [`TableCache::pin`].
    pub fn unpin(&self) {
        self.pinned.fetch_sub(1, Ordering::AcqRel);
    }

    /// Readers pinned to table files right now.
    pub fn pinned(&self) -> usize {
        self.pinned.load(Ordering::Relaxed)
    }

    /// The open table for `number` from the LRU, opening it if needed.
    ///
    /// # Errors
    /// I/O errors and corruption found while opening the file.
    pub fn get(&self, number: u64) -> Result<Arc<Table>> {
        let tick = self.clock.fetch_add(1, Ordering::Relaxed);
        if let Some(e) = self.shard(number).read().get(&number) {
            e.used.store(tick, Ordering::Relaxed);
            return Ok(Arc::clone(&e.table));
        }
        // Open outside the lock: it reads the file. Two threads may race to open the same
        // table; both results are valid and one simply replaces the other.
        let table = self.open(number)?;
        let mut map = self.shard(number).write();
        map.insert(
            number,
            Entry {
                table: Arc::clone(&table),
                used: AtomicU64::new(tick),
            },
        );
        if map.len() > self.shard_capacity {
            let oldest = map
                .iter()
                .filter(|(n, _)| **n != number)
                .min_by_key(|(_, e)| e.used.load(Ordering::Relaxed))
                .map(|(n, _)| *n);
            if let Some(n) = oldest
                && let Some(e) = map.remove(&n)
            {
                drop(map);
                self.keep_closed(n, e.table, tick);
                return Ok(table);
            }
        }
        Ok(table)
    }

    /// The table for `number` if the LRU holds it right now; never opens a file.
    pub fn peek(&self, number: u64) -> Option<Arc<Table>> {
        self.shard(number)
            .read()
            .get(&number)
            .map(|e| Arc::clone(&e.table))
    }

    /// Keeps what the closed reader of `number` read (moved out if nobody else holds it).
    fn keep_closed(&self, number: u64, table: Arc<Table>, tick: u64) {
        let parts = match Arc::try_unwrap(table) {
            Ok(t) => t.into_parts(),
            Err(shared) => shared.parts(),
        };
        self.closed.lock().keep(number, parts, tick);
    }

    /// Forgets `number` (its file is being deleted).
    pub fn evict(&self, number: u64) {
        self.shard(number).write().remove(&number);
        self.closed.lock().take(number);
    }

    /// Tables open in the LRU right now (pinned readers not included).
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.read().len()).sum()
    }

    /// True when the LRU holds no table.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::env::StdEnv;
    use crate::util::key::{self, Kind};
    use crate::sstable::{TableBuildOptions, TableBuilder};

    fn write_table(env: &dyn Env, dir: &std::path::Path, number: u64) {
        let path = filename::table_path(dir, number);
        let mut b = TableBuilder::new(
            env.create_writable(&path).unwrap(),
            path,
            TableBuildOptions::default(),
        );
        b.add(
            &key::encode(format!("k{number}").as_bytes(), 1, Kind::Put),
            b"v",
        )
        .unwrap();
        b.finish().unwrap();
    }

    #[test]
    fn keeps_at_most_its_capacity_open_and_evicts_the_least_recently_used() {
        let dir = tempfile::tempdir().unwrap();
        let env: Arc<dyn Env> = Arc::new(StdEnv);
        for n in 1..=100 {
            write_table(env.as_ref(), dir.path(), n);
        }
        let counters = Arc::new(ReadCounters::default());
        // A bound of 128: 96 may be pinned (none are here), the LRU keeps 32.
        let cache = TableCache::new(Arc::clone(&env), dir.path().into(), 128, None, counters);
        for n in 1..=100 {
            assert_eq!(cache.get(n).unwrap().file_number(), n);
            assert!(cache.len() <= 32, "{} open", cache.len());
        }
        // Table 100 was just used: it is still open; 1 is long gone.
        assert!(cache.peek(100).is_some());
        assert!(cache.peek(1).is_none());
        // A hot table survives a stream of others in its shard (two tables per shard here).
        for n in (4 + SHARDS as u64..=100).step_by(SHARDS) {
            cache.get(4).unwrap();
            cache.get(n).unwrap();
        }
        assert!(cache.peek(4).is_some());
        cache.evict(4);
        assert!(cache.peek(4).is_none());
        assert!(cache.get(999).is_err(), "a missing file is an error");
    }

    #[test]
    fn pins_up_to_three_quarters_of_the_bound_and_moves_lru_readers_into_pins() {
        let dir = tempfile::tempdir().unwrap();
        let env: Arc<dyn Env> = Arc::new(StdEnv);
        for n in 1..=10 {
            write_table(env.as_ref(), dir.path(), n);
        }
        let counters = Arc::new(ReadCounters::default());
        // A bound of 8: 6 pins, an LRU of 2.
        let cache = TableCache::new(Arc::clone(&env), dir.path().into(), 8, None, counters);
        cache.get(1).unwrap();
        assert!(cache.peek(1).is_some());
        let pinned: Vec<Arc<Table>> = (1..=6).map(|n| cache.pin(n).unwrap().unwrap()).collect();
        assert!(
            cache.peek(1).is_none(),
            "pinning takes the reader out of the LRU"
        );
        assert_eq!(cache.pinned(), 6);
        assert!(cache.pin(7).unwrap().is_none(), "the pin budget is spent");
        cache.unpin();
        assert!(cache.pin(99).is_err(), "a failed open gives its pin back");
        assert_eq!(cache.pinned(), 5);
        assert!(cache.pin(7).unwrap().is_some());
        assert_eq!(cache.pinned(), 6);
        drop(pinned);
    }

    #[test]
    fn an_unbounded_max_open_files_does_not_overflow() {
        let dir = tempfile::tempdir().unwrap();
        let env: Arc<dyn Env> = Arc::new(StdEnv);
        let counters = Arc::new(ReadCounters::default());
        let cache = TableCache::new(env, dir.path().into(), usize::MAX, None, counters);
        assert_eq!(cache.pinned(), 0);
    }
}
