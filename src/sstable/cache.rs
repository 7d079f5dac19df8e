//! The block cache: decoded data blocks shared by every table of a database.
//!
//! Keyed by `(file number, block offset)` — file numbers are never reused, so entries of a
//! deleted table are simply never hit again and age out. Charged by block size in bytes and
//! split into shards, each an LRU under its own mutex, so concurrent readers rarely contend.
//! Besides its capacity, each shard keeps up to `SPARE_BUFFERS` allocations of evicted
//! blocks of at most 64 KiB that the next reads fill instead of allocating (a read takes one
//! only if it is at most twice the block's size, so a block never sits in a much larger
//! allocation than it is charged for).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::sstable::Block;

/// Below this capacity the cache is one shard (tiny caches would otherwise be split into
/// shards too small to hold a block).
const MIN_BYTES_FOR_SHARDING: usize = 4 << 20;
const SHARDS: usize = 16;

/// Buffers of evicted blocks each shard keeps for reads to reuse: a cache that is full
/// evicts one block per block it reads, so a few spares spare the allocator a 4 KiB free
/// and malloc per read.
const SPARE_BUFFERS: usize = 4;

/// Larger evicted blocks are freed, not kept as spares (reads reuse a spare only for a block
/// of about its size anyway).
const MAX_SPARE_BYTES: usize = 64 << 10;

type CacheKey = (u64, u64);

/// Hasher for keys the engine makes itself from integers (file numbers, block offsets), never
/// an adversary: a multiplicative mix per integer is all the hashing they need (SipHash was a
/// visible cost per block and per table lookup). Used by this cache and the table cache.
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(23) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// "No slot" in the recency list.
const NIL: usize = usize::MAX;

/// One cached block, a node of the shard's recency list (most recent at `head`).
#[derive(Debug)]
struct Slot {
    key: CacheKey,
    block: Option<Arc<Block>>,
    prev: usize,
    next: usize,
}

/// One LRU: a map from key to slot, and the slots threaded on a doubly linked recency list
/// by index, so a hit or an eviction is O(1) with no allocation (freed slots are reused).
#[derive(Debug)]
struct Shard {
    capacity: usize,
    usage: usize,
    map: HashMap<CacheKey, usize, BuildHasherDefault<IntHasher>>,
    slots: Vec<Slot>,
    free: Vec<usize>,
    head: usize,
    tail: usize,
    /// Allocations of evicted blocks nobody else held, for [`BlockCache::spare_buffer`].
    spare: Vec<Vec<u8>>,
}

impl Shard {
    fn new(capacity: usize) -> Shard {
        Shard {
            capacity,
            usage: 0,
            map: HashMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            spare: Vec::new(),
        }
    }

    fn unlink(&mut self, i: usize) {
        let (prev, next) = (self.slots[i].prev, self.slots[i].next);
        match prev {
            NIL => self.head = next,
            p => self.slots[p].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n].prev = prev,
        }
    }

    fn push_front(&mut self, i: usize) {
        self.slots[i].prev = NIL;
        self.slots[i].next = self.head;
        match self.head {
            NIL => self.tail = i,
            h => self.slots[h].prev = i,
        }
        self.head = i;
    }

    fn touch(&mut self, key: CacheKey) -> Option<Arc<Block>> {
        let i = *self.map.get(&key)?;
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
        self.slots[i].block.clone()
    }

    /// Takes slot `i` out of the cache, returning its block (dropped by the caller, after
    /// the shard's lock is released when it can be).
    fn evict(&mut self, i: usize) -> Option<Arc<Block>> {
        self.unlink(i);
        self.map.remove(&self.slots[i].key);
        self.free.push(i);
        let block = self.slots[i].block.take();
        if let Some(b) = &block {
            self.usage -= b.size();
        }
        block
    }

    /// Inserts `block`; returns the blocks it displaced.
    fn insert(&mut self, key: CacheKey, block: Arc<Block>) -> Vec<Arc<Block>> {
        let charge = block.size();
        let mut displaced = Vec::new();
        if charge > self.capacity {
            return displaced;
        }
        displaced.extend(self.remove(key));
        while self.usage + charge > self.capacity && self.tail != NIL {
            if let Some(b) = self.evict(self.tail) {
                match Arc::try_unwrap(b) {
                    Ok(b) if self.spare.len() < SPARE_BUFFERS && b.size() <= MAX_SPARE_BYTES => {
                        self.spare.extend(b.into_data())
                    }
                    Ok(b) => displaced.push(Arc::new(b)),
                    Err(shared) => displaced.push(shared),
                }
            }
        }
        let slot = Slot {
            key,
            block: Some(block),
            prev: NIL,
            next: NIL,
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                self.slots.len() - 1
            }
        };
        self.push_front(i);
        self.map.insert(key, i);
        self.usage += charge;
        displaced
    }

    fn remove(&mut self, key: CacheKey) -> Option<Arc<Block>> {
        let i = *self.map.get(&key)?;
        self.evict(i)
    }
}

/// A sharded LRU cache of decoded blocks, bounded by a capacity in bytes.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use std::sync::Arc;
/// use bloomkv::sstable::BlockCache;
/// use bloomkv::sstable::block::{Block, BlockBuilder};
/// let cache = BlockCache::new(1 << 20);
/// let block = Arc::new(Block::new(BlockBuilder::new(16).finish())?);
/// cache.insert(7, 0, Arc::clone(&block));
/// assert!(cache.get(7, 0).is_some() && cache.get(7, 4096).is_none());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct BlockCache {
    shards: Vec<Mutex<Shard>>,
    capacity: usize,
}

impl BlockCache {
    /// A cache holding at most `capacity_bytes` of block data (16 shards from 4 MiB up,
    /// one shard below). A block larger than its shard's share is never cached.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::BlockCache;
    /// let cache = BlockCache::new(64 << 20);
    /// assert_eq!(cache.capacity(), 64 << 20);
    /// ```
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
                Mutex::new(Shard::new(capacity))
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
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::BlockCache;
    /// use bloomkv::sstable::block::{Block, BlockBuilder};
    /// let cache = BlockCache::new(1 << 20);
    /// cache.insert(1, 100, Arc::new(Block::new(BlockBuilder::new(16).finish())?));
    /// assert!(cache.get(1, 100).is_some());
    /// assert!(cache.get(2, 100).is_none());
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, file_number: u64, offset: u64) -> Option<Arc<Block>> {
        let key = (file_number, offset);
        self.shard(key).lock().touch(key)
    }

    /// Caches a block, evicting least recently used blocks of its shard as needed.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::BlockCache;
    /// use bloomkv::sstable::block::{Block, BlockBuilder};
    /// let cache = BlockCache::new(1 << 20);
    /// let block = Arc::new(Block::new(BlockBuilder::new(16).finish())?);
    /// cache.insert(1, 0, Arc::clone(&block));
    /// assert_eq!((cache.len(), cache.usage()), (1, block.size()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert(&self, file_number: u64, offset: u64, block: Arc<Block>) {
        let key = (file_number, offset);
        let displaced = self.shard(key).lock().insert(key, block);
        // Freeing the displaced blocks (4 KiB each) happens here, outside the shard's lock.
        drop(displaced);
    }

    /// An allocation of an evicted block from the shard that `(file_number, offset)` will be
    /// cached in, to read that block into; empty when there is none.
    pub(crate) fn spare_buffer(&self, file_number: u64, offset: u64) -> Vec<u8> {
        let key = (file_number, offset);
        self.shard(key).lock().spare.pop().unwrap_or_default()
    }

    /// Drops one block if cached.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use std::sync::Arc;
    /// use bloomkv::sstable::BlockCache;
    /// use bloomkv::sstable::block::{Block, BlockBuilder};
    /// let cache = BlockCache::new(1 << 20);
    /// cache.insert(1, 0, Arc::new(Block::new(BlockBuilder::new(16).finish())?));
    /// cache.remove(1, 0);
    /// assert!(cache.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn remove(&self, file_number: u64, offset: u64) {
        let key = (file_number, offset);
        let removed = self.shard(key).lock().remove(key);
        drop(removed);
    }

    /// Bytes of blocks currently held.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::BlockCache;
    /// assert_eq!(BlockCache::new(1 << 20).usage(), 0);
    /// ```
    pub fn usage(&self) -> usize {
        self.shards.iter().map(|s| s.lock().usage).sum()
    }

    /// The capacity in bytes.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::BlockCache;
    /// assert_eq!(BlockCache::new(1 << 20).capacity(), 1 << 20);
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of blocks currently held.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::BlockCache;
    /// assert_eq!(BlockCache::new(1 << 20).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().map.len()).sum()
    }

    /// True when nothing is cached.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::sstable::BlockCache;
    /// assert!(BlockCache::new(1 << 20).is_empty());
    /// ```
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

    /// The slab LRU against a plain list kept in recency order, over a long random mix of
    /// inserts (some re-inserts), hits, misses and removals in one shard.
    #[test]
    fn matches_a_simple_lru_model() {
        let unit = block(100).size();
        let cache = BlockCache::new(10 * unit); // below the sharding threshold: one shard
        let mut model: Vec<u64> = Vec::new(); // most recent last
        let mut rng = crate::test_util::Rng::new(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let x = rng.next_u64();
            let key = x % 25;
            match (x >> 32) % 4 {
                0 | 1 => {
                    cache.insert(1, key, block(100));
                    model.retain(|&k| k != key);
                    if model.len() == 10 {
                        model.remove(0);
                    }
                    model.push(key);
                }
                2 => {
                    let hit = cache.get(1, key).is_some();
                    let pos = model.iter().position(|&k| k == key);
                    assert_eq!(hit, pos.is_some(), "key {key}");
                    if let Some(p) = pos {
                        model.remove(p);
                        model.push(key);
                    }
                }
                _ => {
                    cache.remove(1, key);
                    model.retain(|&k| k != key);
                }
            }
            assert_eq!(cache.len(), model.len());
            assert_eq!(cache.usage(), model.len() * unit);
        }
    }

    #[test]
    fn evicted_unshared_blocks_leave_spare_buffers_for_reads() {
        let one = block(1000).size();
        let cache = BlockCache::new(2 * one);
        assert!(
            cache.spare_buffer(1, 0).capacity() == 0,
            "nothing evicted yet"
        );
        cache.insert(1, 0, block(1000));
        let held = cache.get(1, 0).unwrap(); // shared: its buffer cannot be reused
        cache.insert(1, 1, block(1000));
        cache.insert(1, 2, block(1000)); // evicts 0 (held elsewhere)
        assert_eq!(cache.spare_buffer(1, 3).capacity(), 0);
        drop(held);
        cache.insert(1, 3, block(1000)); // evicts 1 (held by nobody)
        let spare = cache.spare_buffer(1, 4);
        assert!(spare.capacity() >= one, "{}", spare.capacity());
        assert_eq!(
            cache.spare_buffer(1, 4).capacity(),
            0,
            "each spare is handed out once"
        );
        assert_eq!(
            cache.usage(),
            2 * one,
            "spares are not charged as cached blocks"
        );
    }
}
