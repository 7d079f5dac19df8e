//! A cuckoo filter's slots kept in engine chunks: the library's [`CuckooSlots`] over the
//! transaction, so the filter's logic (kicks, growth) is the library's own.
//!
//! Sub-filter `n`'s buckets are packed into chunks of [`chunk_buckets`] buckets (about 512
//! bytes: an insert that kicks rewrites a few small chunks, not the filter), each chunk under
//! `cuckoo_chunk_key(key, version, n, index)`. A chunk never written is all empty slots, so a
//! large reservation costs nothing until used. Chunks read are kept for the command; only
//! chunks changed are written back, by [`ChunkSlots::flush`].

use std::collections::BTreeMap;

use bloomkv::filter::{CuckooRead, CuckooSlots};

use crate::resp::Reply;
use crate::store::{Txn, cuckoo_chunk_key};

/// Target bytes of a chunk.
const CHUNK_BYTES: u64 = 512;

/// The largest sub-filter, in slot bytes (256 GiB): a larger one is refused, which keeps a
/// sub-filter under 2^30 chunks.
pub const MAX_FILTER_BYTES: u64 = 1 << 38;

/// Buckets per chunk for buckets of `bucket_size` slots.
pub fn chunk_buckets(bucket_size: u16) -> u64 {
    (CHUNK_BYTES / u64::from(bucket_size.max(1))).max(1)
}

/// Bytes of chunk `idx` of a sub-filter of `buckets` buckets (the last may be shorter).
pub fn chunk_len(buckets: u64, bucket_size: u16, idx: u64) -> u64 {
    let per = chunk_buckets(bucket_size);
    let first = idx.saturating_mul(per);
    buckets.saturating_sub(first).min(per) * u64::from(bucket_size)
}

/// Chunks of a sub-filter of `buckets` buckets.
pub fn chunks(buckets: u64, bucket_size: u16) -> u64 {
    buckets.div_ceil(chunk_buckets(bucket_size))
}

struct Chunk {
    bytes: Vec<u8>,
    dirty: bool,
}

/// The slots of the filter at `key` (`version`) for one command.
pub struct ChunkSlots<'a, 't> {
    txn: &'a mut Txn<'t>,
    key: &'a [u8],
    version: u64,
    bucket_size: u16,
    /// Buckets of each sub-filter, as the state knows them (growth adds to it).
    filters: Vec<u64>,
    chunks: BTreeMap<(u32, u64), Chunk>,
}

impl<'a, 't> ChunkSlots<'a, 't> {
    /// The slots of a filter whose sub-filters have `filters` buckets each.
    pub fn new(
        txn: &'a mut Txn<'t>,
        key: &'a [u8],
        version: u64,
        bucket_size: u16,
        filters: &[u64],
    ) -> Self {
        ChunkSlots {
            txn,
            key,
            version,
            bucket_size,
            filters: filters.to_vec(),
            chunks: BTreeMap::new(),
        }
    }

    /// Where `bucket` of sub-filter `filter` is: its chunk (loaded) and byte offset.
    fn locate(&mut self, filter: usize, bucket: u64) -> Result<(&mut Chunk, usize), Reply> {
        let per = chunk_buckets(self.bucket_size);
        let (idx, at) = (bucket / per, (bucket % per) * u64::from(self.bucket_size));
        let n = u32::try_from(filter).map_err(|_| Reply::err("cuckoo sub-filter out of range"))?;
        let buckets = *self
            .filters
            .get(filter)
            .ok_or_else(|| Reply::err("cuckoo sub-filter out of range"))?;
        let chunk = match self.chunks.entry((n, idx)) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => {
                let len = chunk_len(buckets, self.bucket_size, idx) as usize;
                let k = cuckoo_chunk_key(self.key, self.version, n, idx);
                let bytes = match self.txn.get(&k)? {
                    Some(v) if v.len() == len => v,
                    Some(v) => {
                        return Err(Reply::err(format!(
                            "corrupt cuckoo filter: chunk {idx} of sub-filter {n} holds {} bytes, {len} expected",
                            v.len()
                        )));
                    }
                    None => vec![0; len],
                };
                e.insert(Chunk {
                    bytes,
                    dirty: false,
                })
            }
        };
        Ok((chunk, at as usize))
    }

    /// Writes the chunks changed back to the transaction.
    pub fn flush(self) {
        for ((n, idx), c) in self.chunks {
            if c.dirty {
                self.txn
                    .put(cuckoo_chunk_key(self.key, self.version, n, idx), c.bytes);
            }
        }
    }
}

impl CuckooRead for ChunkSlots<'_, '_> {
    type Error = Reply;

    fn bucket(&mut self, filter: usize, bucket: u64) -> Result<&[u8], Reply> {
        let size = usize::from(self.bucket_size);
        let (chunk, at) = self.locate(filter, bucket)?;
        chunk
            .bytes
            .get(at..at + size)
            .ok_or_else(|| Reply::err("cuckoo bucket out of range"))
    }
}

impl CuckooSlots for ChunkSlots<'_, '_> {
    fn bucket_mut(&mut self, filter: usize, bucket: u64) -> Result<&mut [u8], Reply> {
        let size = usize::from(self.bucket_size);
        let (chunk, at) = self.locate(filter, bucket)?;
        chunk.dirty = true;
        chunk
            .bytes
            .get_mut(at..at + size)
            .ok_or_else(|| Reply::err("cuckoo bucket out of range"))
    }

    fn remove_filter(&mut self) -> Result<(), Reply> {
        let Some(n) = self.filters.len().checked_sub(1) else {
            return Ok(());
        };
        self.filters.pop();
        let n = u32::try_from(n).map_err(|_| Reply::err("cuckoo sub-filter out of range"))?;
        self.chunks.retain(|&(f, _), _| f != n);
        self.txn.delete_range(
            cuckoo_chunk_key(self.key, self.version, n, 0),
            cuckoo_chunk_key(self.key, self.version, n + 1, 0),
        );
        Ok(())
    }

    fn add_filter(&mut self, buckets: u64) -> Result<bool, Reply> {
        let fits = buckets
            .checked_mul(u64::from(self.bucket_size))
            .is_some_and(|b| b <= MAX_FILTER_BYTES);
        if fits {
            self.filters.push(buckets);
        }
        Ok(fits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_whole_buckets_and_cover_the_filter() {
        for size in [1u16, 2, 3, 4, 7, 255] {
            let per = chunk_buckets(size);
            assert!(per * u64::from(size) <= CHUNK_BYTES.max(u64::from(size)));
            for buckets in [1u64, 2, 64, 1024, 4096] {
                let total: u64 = (0..chunks(buckets, size))
                    .map(|i| chunk_len(buckets, size, i))
                    .sum();
                assert_eq!(total, buckets * u64::from(size), "{size} {buckets}");
                assert_eq!(chunk_len(buckets, size, chunks(buckets, size)), 0);
            }
        }
        assert!(chunks(MAX_FILTER_BYTES, 1) < 1 << 30);
    }
}
