//! Open table readers, kept in an LRU bounded by `Options::max_open_files`.
//!
//! Opening a table reads and verifies its footer, index, properties and filter; the cache makes
//! that a once-per-file cost instead of a per-lookup one.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::cache::BlockCache;
use crate::env::Env;
use crate::error::Result;
use crate::filename;
use crate::filter::{BloomPolicy, FilterPolicy};
use crate::sstable::{ReadCounters, Table, TableReadOptions};

/// A bounded map from file number to open [`Table`].
#[derive(Debug)]
pub struct TableCache {
    env: Arc<dyn Env>,
    dir: PathBuf,
    capacity: usize,
    filter: Arc<dyn FilterPolicy>,
    block_cache: Option<Arc<BlockCache>>,
    counters: Arc<ReadCounters>,
    entries: Mutex<Lru>,
}

#[derive(Debug, Default)]
struct Lru {
    tick: u64,
    map: HashMap<u64, (Arc<Table>, u64)>,
}

impl TableCache {
    /// A cache for the tables of `dir`.
    pub fn new(
        env: Arc<dyn Env>,
        dir: PathBuf,
        capacity: usize,
        block_cache: Option<Arc<BlockCache>>,
        counters: Arc<ReadCounters>,
    ) -> TableCache {
        TableCache {
            env,
            dir,
            capacity: capacity.max(1),
            // Reading only needs the policy's name and probe logic; the bits per key of each
            // filter are recorded inside the filter itself.
            filter: Arc::new(BloomPolicy::new(10.0)),
            block_cache,
            counters,
            entries: Mutex::new(Lru::default()),
        }
    }

    /// The open table for `number`, opening it if needed.
    ///
    /// # Errors
    /// I/O errors and corruption found while opening the file.
    pub fn get(&self, number: u64) -> Result<Arc<Table>> {
        {
            let mut lru = self.entries.lock();
            lru.tick += 1;
            let tick = lru.tick;
            if let Some((table, used)) = lru.map.get_mut(&number) {
                *used = tick;
                return Ok(Arc::clone(table));
            }
        }
        // Open outside the lock: it reads the file. Two threads may race to open the same
        // table; both results are valid and one simply replaces the other.
        let path = filename::table_path(&self.dir, number);
        let file = self.env.open_random_access(&path)?;
        let table = Arc::new(Table::open(
            file,
            TableReadOptions {
                file_number: number,
                filter: Some(Arc::clone(&self.filter)),
                cache: self.block_cache.clone(),
                counters: Arc::clone(&self.counters),
            },
        )?);
        let mut lru = self.entries.lock();
        lru.tick += 1;
        let tick = lru.tick;
        lru.map.insert(number, (Arc::clone(&table), tick));
        if lru.map.len() > self.capacity {
            let oldest = lru
                .map
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(n, _)| *n);
            if let Some(n) = oldest {
                lru.map.remove(&n);
            }
        }
        Ok(table)
    }

    /// The table for `number` if it is open right now, without opening it or changing its
    /// place in the LRU (for stats, which must not cause I/O).
    pub fn peek(&self, number: u64) -> Option<Arc<Table>> {
        self.entries
            .lock()
            .map
            .get(&number)
            .map(|(t, _)| Arc::clone(t))
    }

    /// Forgets `number` (its file is being deleted).
    pub fn evict(&self, number: u64) {
        self.entries.lock().map.remove(&number);
    }

    /// Open tables right now.
    pub fn len(&self) -> usize {
        self.entries.lock().map.len()
    }

    /// True when no table is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
