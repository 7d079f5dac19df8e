//! [`CuckooFilter`]: a membership filter that stores one 8-bit fingerprint per item in
//! buckets, so that items can be deleted and counted, and that grows by sub-filters.

use crate::error::{Error, Result};
use crate::filter::layout::hash_key;

/// An empty slot: fingerprints are never 0.
const EMPTY: u8 = 0;

/// The multiplier spreading a fingerprint over the bucket indexes for the alternate bucket:
/// without it, alternates of small fingerprints would stay next to their first bucket.
const ALT_SPREAD: u64 = 0x5bd1_e995;

/// The largest bucket size: a bucket is scanned linearly on every probe.
pub const MAX_BUCKET_SIZE: u16 = 255;

/// The largest growth factor between consecutive sub-filters.
pub const MAX_EXPANSION: u16 = 32768;

/// How a [`CuckooFilter`] is built and grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CuckooParams {
    /// Items the first sub-filter is sized for.
    pub capacity: u64,
    /// Fingerprints per bucket.
    pub bucket_size: u16,
    /// Kick-outs tried before an insert gives up on the newest sub-filter.
    pub max_iterations: u16,
    /// Each new sub-filter has this many times the buckets of the previous one (rounded up to
    /// a power of two); 0 means the filter never grows.
    pub expansion: u16,
}

impl Default for CuckooParams {
    fn default() -> Self {
        Self {
            capacity: 1024,
            bucket_size: 2,
            max_iterations: 20,
            expansion: 1,
        }
    }
}

/// One sub-filter: `buckets * bucket_size` fingerprint slots, `buckets` a power of two so that
/// `i xor spread(fp)` masked is an involution between an item's two buckets.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SubFilter {
    buckets: u64,
    slots: Vec<u8>,
}

/// A cuckoo filter: an item is one fingerprint in one of its two buckets. Reports no false
/// negatives for items added and not deleted; deleting removes one copy of a fingerprint, so
/// the caller must delete only items it added (else another item sharing the fingerprint and
/// bucket loses its copy — inherent to cuckoo filters).
///
/// Randomness (which fingerprint to kick out of a full bucket) comes from the caller's seed,
/// so that two replicas applying the same inserts with the same seeds hold the same filter.
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{CuckooFilter, CuckooParams};
/// let mut live = CuckooFilter::new(CuckooParams { capacity: 1000, ..CuckooParams::default() })?;
/// assert!(live.insert(b"session-42", 7));
/// assert!(live.contains(b"session-42"));
/// assert_eq!(live.count(b"session-42"), 1);
/// assert!(live.delete(b"session-42"));
/// assert!(!live.contains(b"session-42"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuckooFilter {
    params: CuckooParams,
    filters: Vec<SubFilter>,
    inserted: u64,
    deleted: u64,
}

/// An item's fingerprint and first bucket hash.
#[derive(Debug, Clone, Copy)]
struct Probe {
    fingerprint: u8,
    hash: u64,
}

impl Probe {
    fn of(key: &[u8]) -> Self {
        let hash = hash_key(key);
        // 1..=255: 0 marks an empty slot.
        let fingerprint = u8::try_from(hash % 255 + 1).unwrap_or(u8::MAX);
        Self { fingerprint, hash }
    }
}

/// Splitmix64: a tiny generator turning the caller's seed into a victim sequence.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl SubFilter {
    fn new(buckets: u64, bucket_size: u16) -> Result<Self> {
        let len = buckets
            .checked_mul(u64::from(bucket_size))
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "cuckoo sub-filter of {buckets} buckets of {bucket_size} is too large"
                ))
            })?;
        let mut slots = Vec::new();
        slots.try_reserve_exact(len).map_err(|_| {
            Error::InvalidArgument(format!(
                "cuckoo sub-filter of {len} slots does not fit in memory"
            ))
        })?;
        slots.resize(len, EMPTY);
        Ok(Self { buckets, slots })
    }

    fn first(&self, probe: Probe) -> u64 {
        probe.hash & (self.buckets - 1)
    }

    fn alternate(&self, bucket: u64, fingerprint: u8) -> u64 {
        (bucket ^ u64::from(fingerprint).wrapping_mul(ALT_SPREAD)) & (self.buckets - 1)
    }

    fn bucket(&self, bucket: u64, size: u16) -> std::ops::Range<usize> {
        // bucket < buckets and buckets * size fits in usize (checked in `new`).
        let start = usize::try_from(bucket).unwrap_or(usize::MAX) * usize::from(size);
        start..start + usize::from(size)
    }

    /// Both buckets of an item, the second only if it differs from the first.
    fn buckets_of(&self, probe: Probe) -> (u64, Option<u64>) {
        let first = self.first(probe);
        let second = self.alternate(first, probe.fingerprint);
        (first, (second != first).then_some(second))
    }

    fn count_in(&self, bucket: u64, size: u16, fingerprint: u8) -> u64 {
        let hits = self.slots[self.bucket(bucket, size)]
            .iter()
            .filter(|&&f| f == fingerprint);
        u64::try_from(hits.count()).unwrap_or(u64::MAX)
    }

    fn place(&mut self, bucket: u64, size: u16, fingerprint: u8) -> bool {
        let range = self.bucket(bucket, size);
        match self.slots[range].iter_mut().find(|slot| **slot == EMPTY) {
            Some(slot) => {
                *slot = fingerprint;
                true
            }
            None => false,
        }
    }

    fn remove(&mut self, bucket: u64, size: u16, fingerprint: u8) -> bool {
        let range = self.bucket(bucket, size);
        match self.slots[range]
            .iter_mut()
            .find(|slot| **slot == fingerprint)
        {
            Some(slot) => {
                *slot = EMPTY;
                true
            }
            None => false,
        }
    }

    /// Places `fingerprint` by kicking fingerprints to their alternate buckets, at most
    /// `max_iterations` times; on failure every swap is undone so no item is lost.
    fn kick_insert(
        &mut self,
        probe: Probe,
        size: u16,
        max_iterations: u16,
        random: &mut u64,
    ) -> bool {
        let mut path: Vec<usize> = Vec::with_capacity(usize::from(max_iterations));
        let mut homeless = probe.fingerprint;
        let mut bucket = self.first(probe);
        for _ in 0..max_iterations {
            let victim_offset = usize::try_from(next_random(random) % u64::from(size)).unwrap_or(0);
            let victim_slot = self.bucket(bucket, size).start + victim_offset;
            std::mem::swap(&mut homeless, &mut self.slots[victim_slot]);
            path.push(victim_slot);
            bucket = self.alternate(bucket, homeless);
            if self.place(bucket, size, homeless) {
                return true;
            }
        }
        // Walk back: each slot on the path gets back the fingerprint it held.
        for slot in path.into_iter().rev() {
            std::mem::swap(&mut homeless, &mut self.slots[slot]);
        }
        false
    }
}

impl CuckooFilter {
    /// An empty filter; `params.capacity` and `params.bucket_size` must be at least 1,
    /// `bucket_size` at most 255, `max_iterations` at least 1 and
    /// `expansion` at most 32,768.
    pub fn new(params: CuckooParams) -> Result<Self> {
        let bad = |why: String| Err(Error::InvalidArgument(why));
        if params.capacity == 0 {
            return bad("cuckoo filter capacity must be at least 1".into());
        }
        if params.bucket_size == 0 || params.bucket_size > MAX_BUCKET_SIZE {
            return bad(format!(
                "cuckoo bucket size {} is outside 1..={MAX_BUCKET_SIZE}",
                params.bucket_size
            ));
        }
        if params.max_iterations == 0 {
            return bad("cuckoo max iterations must be at least 1".into());
        }
        if params.expansion > MAX_EXPANSION {
            return bad(format!(
                "cuckoo expansion {} is above {MAX_EXPANSION}",
                params.expansion
            ));
        }
        let buckets = params
            .capacity
            .div_ceil(u64::from(params.bucket_size))
            .checked_next_power_of_two()
            .ok_or_else(|| {
                Error::InvalidArgument(format!("cuckoo capacity {} is too large", params.capacity))
            })?;
        let first = SubFilter::new(buckets, params.bucket_size)?;
        Ok(Self {
            params,
            filters: vec![first],
            inserted: 0,
            deleted: 0,
        })
    }

    /// The parameters the filter was built with.
    pub fn params(&self) -> CuckooParams {
        self.params
    }

    /// Adds one copy of `key`, kicking out fingerprints chosen from `seed` if both its buckets
    /// are full, and adding a sub-filter if that fails. Returns `false` (filter unchanged) when
    /// the filter is full: it does not grow (expansion 0) or the next sub-filter would not fit.
    pub fn insert(&mut self, key: &[u8], seed: u64) -> bool {
        let probe = Probe::of(key);
        let size = self.params.bucket_size;
        let mut random = seed;
        let placed = self.filters.iter_mut().rev().any(|filter| {
            let (first, second) = filter.buckets_of(probe);
            filter.place(first, size, probe.fingerprint)
                || second.is_some_and(|b| filter.place(b, size, probe.fingerprint))
        }) || self.filters.last_mut().is_some_and(|newest| {
            newest.kick_insert(probe, size, self.params.max_iterations, &mut random)
        }) || self.grow().is_some_and(|newest| {
            let (first, _) = newest.buckets_of(probe);
            newest.place(first, size, probe.fingerprint)
        });
        if placed {
            self.inserted += 1;
        }
        placed
    }

    /// Adds `key` only if the filter does not report it present. `Some(true)`: added;
    /// `Some(false)`: (possibly falsely) present already; `None`: the filter is full.
    pub fn insert_unique(&mut self, key: &[u8], seed: u64) -> Option<bool> {
        if self.contains(key) {
            return Some(false);
        }
        self.insert(key, seed).then_some(true)
    }

    /// Appends a sub-filter `expansion` (rounded up to a power of two) times the size of the
    /// newest one; `None` if the filter does not grow or the new one would not fit.
    fn grow(&mut self) -> Option<&mut SubFilter> {
        if self.params.expansion == 0 {
            return None;
        }
        let factor = u64::from(self.params.expansion).next_power_of_two();
        let buckets = self.filters.last()?.buckets.checked_mul(factor)?;
        let filter = SubFilter::new(buckets, self.params.bucket_size).ok()?;
        self.filters.push(filter);
        self.filters.last_mut()
    }

    /// Whether `key` may have been added (and not deleted): never `false` for such a key.
    pub fn contains(&self, key: &[u8]) -> bool {
        self.count(key) > 0
    }

    /// How many copies of `key`'s fingerprint its buckets hold: at least the number of times it
    /// was added minus deleted, more when other items share fingerprint and bucket.
    pub fn count(&self, key: &[u8]) -> u64 {
        let probe = Probe::of(key);
        let size = self.params.bucket_size;
        self.filters
            .iter()
            .map(|filter| {
                let (first, second) = filter.buckets_of(probe);
                filter.count_in(first, size, probe.fingerprint)
                    + second.map_or(0, |b| filter.count_in(b, size, probe.fingerprint))
            })
            .sum()
    }

    /// Removes one copy of `key`'s fingerprint, newest sub-filter first; `false` (filter
    /// unchanged) if none is held.
    pub fn delete(&mut self, key: &[u8]) -> bool {
        let probe = Probe::of(key);
        let size = self.params.bucket_size;
        let removed = self.filters.iter_mut().rev().any(|filter| {
            let (first, second) = filter.buckets_of(probe);
            filter.remove(first, size, probe.fingerprint)
                || second.is_some_and(|b| filter.remove(b, size, probe.fingerprint))
        });
        if removed {
            self.deleted += 1;
        }
        removed
    }

    /// Items held: added minus deleted.
    pub fn len(&self) -> u64 {
        self.inserted - self.deleted
    }

    /// Whether the filter holds no item.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Successful inserts since the filter was built.
    pub fn inserted(&self) -> u64 {
        self.inserted
    }

    /// Successful deletes since the filter was built.
    pub fn deleted(&self) -> u64 {
        self.deleted
    }

    /// Buckets of the first sub-filter.
    pub fn buckets(&self) -> u64 {
        self.filters.first().map_or(0, |f| f.buckets)
    }

    /// Sub-filters, 1 until the first growth.
    pub fn sub_filters(&self) -> usize {
        self.filters.len()
    }

    /// Bytes of fingerprint slots over all sub-filters.
    pub fn slot_bytes(&self) -> u64 {
        self.filters
            .iter()
            .map(|f| u64::try_from(f.slots.len()).unwrap_or(u64::MAX))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    fn params(capacity: u64, bucket_size: u16, expansion: u16) -> CuckooParams {
        CuckooParams {
            capacity,
            bucket_size,
            max_iterations: 20,
            expansion,
        }
    }

    #[test]
    fn bad_params_are_typed_errors() {
        for bad in [
            params(0, 2, 1),
            params(10, 0, 1),
            params(10, 256, 1),
            params(10, 2, 40000),
        ] {
            assert!(
                matches!(CuckooFilter::new(bad), Err(Error::InvalidArgument(_))),
                "{bad:?}"
            );
        }
        let no_kicks = CuckooParams {
            max_iterations: 0,
            ..params(10, 2, 1)
        };
        assert!(matches!(
            CuckooFilter::new(no_kicks),
            Err(Error::InvalidArgument(_))
        ));
        assert!(matches!(
            CuckooFilter::new(params(u64::MAX, 1, 1)),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn buckets_round_up_to_a_power_of_two() {
        let filter = CuckooFilter::new(params(1000, 2, 1)).unwrap();
        assert_eq!(filter.buckets(), 512);
        assert_eq!(filter.slot_bytes(), 1024);
        assert_eq!(filter.sub_filters(), 1);
    }

    #[test]
    fn grows_by_sub_filters_and_loses_nothing() {
        let mut filter = CuckooFilter::new(params(64, 2, 2)).unwrap();
        for i in 0..2000u64 {
            assert!(filter.insert(&i.to_le_bytes(), i), "insert {i}");
        }
        assert!(filter.sub_filters() > 1);
        for i in 0..2000u64 {
            assert!(filter.contains(&i.to_le_bytes()), "lost {i}");
        }
        assert_eq!(filter.len(), 2000);
    }

    #[test]
    fn without_expansion_a_full_filter_refuses_and_keeps_its_items() {
        let mut filter = CuckooFilter::new(params(8, 2, 0)).unwrap();
        let mut added = Vec::new();
        for i in 0..100u64 {
            if filter.insert(&i.to_le_bytes(), i) {
                added.push(i);
            }
        }
        assert!(added.len() < 100, "an 8-slot filter cannot take 100 items");
        assert_eq!(filter.sub_filters(), 1);
        assert_eq!(filter.len(), u64::try_from(added.len()).unwrap());
        for i in added {
            assert!(filter.contains(&i.to_le_bytes()), "lost {i}");
        }
    }

    #[test]
    fn same_seeds_build_the_same_filter() {
        let build = || {
            let mut filter = CuckooFilter::new(params(32, 2, 1)).unwrap();
            for i in 0..200u64 {
                filter.insert(&i.to_le_bytes(), i.wrapping_mul(31));
            }
            filter
        };
        assert_eq!(build(), build());
    }

    #[test]
    fn insert_unique_refuses_a_present_item() {
        let mut filter = CuckooFilter::new(params(100, 2, 1)).unwrap();
        assert_eq!(filter.insert_unique(b"a", 1), Some(true));
        assert_eq!(filter.insert_unique(b"a", 2), Some(false));
        assert_eq!(filter.count(b"a"), 1);
    }

    proptest! {
        /// Model: a multiset of keys. Never a false negative; delete removes one copy.
        #[test]
        fn matches_a_multiset_model(
            ops in proptest::collection::vec((0u8..3, 0u16..64, any::<u64>()), 1..400),
            bucket_size in 1u16..5,
        ) {
            let mut filter = CuckooFilter::new(params(16, bucket_size, 2)).unwrap();
            let mut model: HashMap<u16, u64> = HashMap::new();
            for (op, key, seed) in ops {
                let bytes = key.to_le_bytes();
                match op {
                    0 => {
                        prop_assert!(filter.insert(&bytes, seed));
                        *model.entry(key).or_default() += 1;
                    }
                    1 => {
                        let held = model.get(&key).copied().unwrap_or(0);
                        if held > 0 {
                            prop_assert!(filter.delete(&bytes));
                            model.insert(key, held - 1);
                        }
                    }
                    _ => {
                        let held = model.get(&key).copied().unwrap_or(0);
                        prop_assert!(filter.count(&bytes) >= held);
                    }
                }
                for (k, &n) in &model {
                    prop_assert!(filter.count(&k.to_le_bytes()) >= n, "key {} lost", k);
                }
                prop_assert_eq!(filter.len(), model.values().sum::<u64>());
            }
        }
    }
}
