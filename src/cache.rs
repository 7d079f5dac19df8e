//! The block cache: decoded data blocks shared by every table of a database.
//!
//! Keyed by `(file number, block offset)` — file numbers are never reused, so entries of a
//! deleted table are simply never hit again and age out. Charged by block size in bytes and
//! split into shards, each an LRU under its own mutex, so concurrent readers rarely contend.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::sstable::Block;

/// Caches below this size use a single shard, so that one large block still fits.
const MIN_BYTES_FOR_SHARDING: usize = 4 << 20;
const SHARDS: usize = 16;

type CacheKey = (u64, u64);

#[derive(Debug, Default)]
struct Shard {
    capacity: usize,
    usage: usize,
    /// Monotonic use counter; larger = more recently used.
    tick: u64,
    entries: HashMap<CacheKey, (Arc<Block>, u64)>,
    /// Recency order: tick -> key. The first entry is the least recently used.
    by_use: BTreeMap<u64, CacheKey>,
}

impl Shard {
    fn touch(&mut self, key: CacheKey) -> Option<Arc<Block>> {
        self.tick += 1;
        let tick = self.tick;
        let (block, used) = self.entries.get_mut(&key)?;
        self.by_use.remove(used);
        *used = tick;
        self.by_use.insert(tick, key);
        Some(block.clone())
    }

    fn insert(&mut self, key: CacheKey, block: Arc<Block>) {
        let charge = block.size();
        if charge > self.capacity {
            return;
        }
        self.remove(key);
        while self.usage + charge > self.capacity {
            let Some((_, victim)) = self.by_use.pop_first() else {
                break;
            };
            if let Some((b, _)) = self.entries.remove(&victim) {
                self.usage -= b.size();
            }
        }
        self.tick += 1;
        self.by_use.insert(self.tick, key);
        self.entries.insert(key, (block, self.tick));
        self.usage += charge;
    }

    fn remove(&mut self, key: CacheKey) {
        if let Some((b, used)) = self.entries.remove(&key) {
            self.by_use.remove(&used);
            self.usage -= b.size();
        }
    }
}

/// A sharded LRU cache of decoded blocks, bounded by a capacity in bytes.
#[derive(Debug)]
pub struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    capacity: usize,
}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of block data (16 shards from 4 MiB up,
    /// one shard below). A block larger than its shard's share is never cached.
    pub fn new(capacity_bytes: usize) -> BlockCache {
        let n = if capacity_bytes >= MIN_BYTES_FOR_SHARDING {
            SHARDS
        } else {
            1
        };
        let shards = (0..n)
            .map(|i| {
                // Spread the remainder so the shard capacities sum to exactly the total.
                let capacity = capacity_bytes / n + usize::from(i < capacity_bytes % n);
                Mutex::new(Shard {
                    capacity,
                    ..Shard::default()
                })
            })
            .collect();
        BlockCache {
            shards,
            capacity: capacity_bytes,
        }
    }

    fn shard(&self, key: CacheKey) -> &Mutex<Shard> {
        // Mix both parts so consecutive blocks of one file spread over the shards.
        let h =
            (key.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ key.1).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        &self.shards[(h >> 32) as usize % self.shards.len()]
    }

    /// The block at `offset` of table `file_number`, if cached (marks it recently used).
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let key = (file_number, offset);
        self.shard(key).lock().touch(key)
    }

    /// Caches a block, evicting least recently used blocks of its shard as needed.
    pub fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        let key = (file_number, offset);
        self.shard(key).lock().insert(key, block);
    }

    /// Drops one block if cached.
    pub fn remove(&self, file_number: u64, offset: u64) {
        let key = (file_number, offset);
        self.shard(key).lock().remove(key);
    }

    /// Bytes of blocks currently held.
    pub fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().usage).sum()
    }

    /// The capacity in bytes.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of blocks currently held.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().entries.len()).sum()
    }

    /// True when nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sstable::block::BlockBuilder;

    fn block(bytes: usize) -> Arc<Block> {
        let mut b = BlockBuilder::new(16);
        b.add(b"k", &vec![7u8; bytes.saturating_sub(16)]);
        let data = b.finish();
        Arc::new(Block::new(data).unwrap())
    }

    #[test]
    fn evicts_least_recently_used() {
        let one = block(100).size();
        let cache = BlockCache::new(3 * one);
        for off in 0..3 {
            cache.insert(1, off, block(100));
        }
        assert_eq!(cache.usage(), 3 * one);
        assert!(cache.get(1, 0).is_some()); // 0 is now the most recent
        cache.insert(1, 3, block(100)); // evicts 1
        assert!(cache.get(1, 1).is_none());
        assert!(cache.get(1, 0).is_some());
        assert!(cache.get(1, 2).is_some());
        assert!(cache.get(1, 3).is_some());
        assert_eq!(cache.len(), 3);
        cache.remove(1, 0);
        assert_eq!(cache.usage(), 2 * one);
    }

    #[test]
    fn never_exceeds_capacity() {
        for cap in [0usize, 1000, 5000, 8 << 20] {
            let cache = BlockCache::new(cap);
            for i in 0..2000u64 {
                cache.insert(i % 7, i, block(100 + (i as usize * 37) % 3000));
                assert!(cache.usage() <= cap, "cap {cap}: usage {}", cache.usage());
                if i % 5 == 0 {
                    cache.get(i % 7, i / 2);
                }
            }
            // Re-inserting an existing key does not double-charge.
            let cache = BlockCache::new(cap);
            cache.insert(1, 1, block(200));
            let u = cache.usage();
            cache.insert(1, 1, block(200));
            assert_eq!(cache.usage(), u);
        }
        let cache = BlockCache::new(1000);
        cache.insert(1, 1, block(5000)); // too large for the cache: not kept
        assert!(cache.is_empty());
        assert_eq!(cache.capacity(), 1000);
    }
}
