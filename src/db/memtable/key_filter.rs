//! A Bloom filter over the user keys of one memtable, so that a point lookup of a key the
//! memtable lacks (most lookups: the memtable holds the newest sliver of the data) costs one
//! word read instead of a skip-list search, whose comparisons miss the caches at every level.
//! RocksDB's `memtable_whole_key_filtering` does the same.
//!
//! Register-blocked: all of a key's probe bits fall in one 64-bit word, so an add is one
//! atomic OR and a check one load. It is sized from the memtable's byte budget: every entry
//! is counted at [`super::ENTRY_OVERHEAD_BYTES`] at least, so a full memtable holds at most
//! `memtable_bytes / 112` entries, and [`BITS_PER_BUDGET_BYTE`] gives each ~10 bits (about 1%
//! false positives). A memtable that outgrows its budget (one large batch) only sees more
//! false positives; the filter never hides a key it was given.
//!
//! Ordering: a writer adds a key's bits before the entry goes into the skip list, and the
//! write's sequence number is published (Release) after both; a reader loads the published
//! sequence (Acquire) before it looks, so every key visible to it has its bits visible too.

use std::sync::atomic::{AtomicU64, Ordering};

/// Filter bits per byte of the memtable's budget: 10.7 bits for each 120 bytes (the least
/// an entry counts, with a short key and value).
const BITS_PER_BUDGET_BYTE: f64 = 10.7 / 120.0;

/// Bits set per key (4 of 64 in one word: ~1% false positives at 10 bits per key).
const PROBES: u32 = 4;

/// A memtable's key filter.
pub(super) struct KeyFilter {
    words: Box<[AtomicU64]>,
}

impl KeyFilter {
    /// A filter for a memtable whose budget is `memtable_bytes`; `None` when the budget is 0
    /// (a memtable with no budget, which only tests and tools make).
    pub(super) fn for_budget(memtable_bytes: usize) -> Option<KeyFilter> {
        if memtable_bytes == 0 {
            return None;
        }
        let bits = (memtable_bytes as f64 * BITS_PER_BUDGET_BYTE).ceil() as usize;
        // The word is picked from 32 hash bits: at most 2^32 words (32 GiB of filter).
        let most = usize::try_from(1u64 << 32).unwrap_or(usize::MAX);
        let n = bits.div_ceil(64).clamp(1, most);
        Some(KeyFilter {
            words: (0..n).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// The word of hash `h` and the bits it sets there.
    fn probe(&self, h: u64) -> (usize, u64) {
        // Lemire's multiply-shift maps the low 32 bits onto the words without a division.
        let word = ((h & 0xffff_ffff) * self.words.len() as u64) >> 32;
        let mut mask = 0u64;
        for i in 0..PROBES {
            mask |= 1 << ((h >> (32 + 6 * i)) & 63);
        }
        (word as usize, mask)
    }

    /// Adds the key whose [`crate::filter::hash_key`] is `h`.
    pub(super) fn add(&self, h: u64) {
        let (word, mask) = self.probe(h);
        self.words[word].fetch_or(mask, Ordering::Relaxed);
    }

    /// False only when no key with hash `h` was added.
    pub(super) fn may_contain(&self, h: u64) -> bool {
        let (word, mask) = self.probe(h);
        self.words[word].load(Ordering::Relaxed) & mask == mask
    }

    /// Bytes the filter takes.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.words.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::hash_key;

    #[test]
    fn never_hides_an_added_key_and_rarely_admits_others() {
        // A 1 MiB budget: room for ~8.7k entries of the smallest size.
        let f = KeyFilter::for_budget(1 << 20).unwrap();
        let n = (1 << 20) / 120;
        for i in 0..n {
            f.add(hash_key(format!("key{i}").as_bytes()));
        }
        for i in 0..n {
            assert!(f.may_contain(hash_key(format!("key{i}").as_bytes())), "{i}");
        }
        let tries = 100_000;
        let false_positives = (0..tries)
            .filter(|i| f.may_contain(hash_key(format!("other{i}").as_bytes())))
            .count();
        // About 1-2% expected for a register-blocked filter at 10.7 bits per key.
        assert!(
            false_positives < tries * 3 / 100,
            "{false_positives} of {tries}"
        );
        assert!(false_positives > 0, "a full filter admits some strangers");
    }

    #[test]
    fn sized_from_the_budget() {
        assert!(KeyFilter::for_budget(0).is_none());
        assert_eq!(KeyFilter::for_budget(1).unwrap().bytes(), 8);
        // 64 MiB: ~700 KiB, about 1% of the memtable.
        let b = KeyFilter::for_budget(64 << 20).unwrap().bytes();
        assert!((600 << 10..800 << 10).contains(&b), "{b}");
        // An empty filter admits nothing.
        let f = KeyFilter::for_budget(64 << 10).unwrap();
        assert!((0..1000u32).all(|i| !f.may_contain(hash_key(&i.to_le_bytes()))));
    }
}
