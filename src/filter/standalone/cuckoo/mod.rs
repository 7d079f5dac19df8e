//! [`CuckooFilter`]: a membership filter that stores one 8-bit fingerprint per item in
//! buckets, so that items can be deleted and counted, and that grows by sub-filters. Its
//! logic is [`CuckooState`] (`state.rs`), which also runs over slots kept elsewhere.

mod state;

pub use state::{CuckooParams, CuckooRead, CuckooSlots, CuckooState};

use state::EMPTY;

use std::convert::Infallible;

use crate::error::{Error, Result};

/// A cuckoo filter in memory: a [`CuckooState`] over one vector of slots per sub-filter.
/// Reports no false negatives for items added and not deleted; deleting removes one copy of
/// a fingerprint, so the caller must delete only items it added.
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
    state: CuckooState,
    slots: MemorySlots,
}

/// One vector of `buckets * bucket_size` slots per sub-filter.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MemorySlots {
    bucket_size: usize,
    filters: Vec<Vec<u8>>,
}

impl MemorySlots {
    fn range(&self, bucket: u64) -> std::ops::Range<usize> {
        // bucket < buckets and buckets * size fits in usize (checked when the vector was made).
        let start = usize::try_from(bucket).unwrap_or(usize::MAX) * self.bucket_size;
        start..start + self.bucket_size
    }

    fn slots(&self, filter: usize, bucket: u64) -> &[u8] {
        &self.filters[filter][self.range(bucket)]
    }

    fn vector(buckets: u64, bucket_size: usize) -> Option<Vec<u8>> {
        let len = usize::try_from(buckets).ok()?.checked_mul(bucket_size)?;
        let mut slots = Vec::new();
        slots.try_reserve_exact(len).ok()?;
        slots.resize(len, EMPTY);
        Some(slots)
    }
}

impl CuckooRead for MemorySlots {
    type Error = Infallible;

    fn bucket(&mut self, filter: usize, bucket: u64) -> std::result::Result<&[u8], Infallible> {
        Ok(self.slots(filter, bucket))
    }
}

/// Lookups read through a shared reference.
impl CuckooRead for &MemorySlots {
    type Error = Infallible;

    fn bucket(&mut self, filter: usize, bucket: u64) -> std::result::Result<&[u8], Infallible> {
        Ok(self.slots(filter, bucket))
    }
}

impl CuckooSlots for MemorySlots {
    fn bucket_mut(
        &mut self,
        filter: usize,
        bucket: u64,
    ) -> std::result::Result<&mut [u8], Infallible> {
        let range = self.range(bucket);
        Ok(&mut self.filters[filter][range])
    }

    fn remove_filter(&mut self) -> std::result::Result<(), Infallible> {
        self.filters.pop();
        Ok(())
    }

    fn add_filter(&mut self, buckets: u64) -> std::result::Result<bool, Infallible> {
        Ok(match MemorySlots::vector(buckets, self.bucket_size) {
            Some(v) => {
                self.filters.push(v);
                true
            }
            None => false,
        })
    }
}

/// The value of an operation on in-memory slots, which cannot fail.
fn sure<T>(r: std::result::Result<T, Infallible>) -> T {
    match r {
        Ok(v) => v,
        Err(never) => match never {},
    }
}

impl CuckooFilter {
    /// An empty filter; `params.capacity` and `params.bucket_size` must be at least 1,
    /// `bucket_size` at most 255, `max_iterations` at least 1 and
    /// `expansion` at most 32,768.
    pub fn new(params: CuckooParams) -> Result<Self> {
        let state = CuckooState::new(params)?;
        let bucket_size = usize::from(params.bucket_size);
        let buckets = state.buckets();
        let first = MemorySlots::vector(buckets, bucket_size).ok_or_else(|| {
            Error::InvalidArgument(format!(
                "cuckoo sub-filter of {buckets} buckets of {bucket_size} does not fit in memory"
            ))
        })?;
        Ok(Self {
            state,
            slots: MemorySlots {
                bucket_size,
                filters: vec![first],
            },
        })
    }

    /// The parameters the filter was built with.
    pub fn params(&self) -> CuckooParams {
        self.state.params()
    }

    /// Adds one copy of `key`, kicking out fingerprints chosen from `seed` if both its buckets
    /// are full, and adding a sub-filter if that fails. Returns `false` (filter unchanged) when
    /// the filter is full: it does not grow (expansion 0) or the next sub-filter would not fit.
    pub fn insert(&mut self, key: &[u8], seed: u64) -> bool {
        sure(self.state.insert(&mut self.slots, key, seed))
    }

    /// Adds `key` only if the filter does not report it present. `Some(true)`: added;
    /// `Some(false)`: (possibly falsely) present already; `None`: the filter is full.
    pub fn insert_unique(&mut self, key: &[u8], seed: u64) -> Option<bool> {
        sure(self.state.insert_unique(&mut self.slots, key, seed))
    }

    /// Whether `key` may have been added (and not deleted): never `false` for such a key.
    pub fn contains(&self, key: &[u8]) -> bool {
        sure(self.state.contains(&mut &self.slots, key))
    }

    /// How many copies of `key`'s fingerprint its buckets hold: at least the number of times it
    /// was added minus deleted, more when other items share fingerprint and bucket.
    pub fn count(&self, key: &[u8]) -> u64 {
        sure(self.state.count(&mut &self.slots, key))
    }

    /// Removes one copy of `key`'s fingerprint, newest sub-filter first; `false` (filter
    /// unchanged) if none is held.
    pub fn delete(&mut self, key: &[u8]) -> bool {
        sure(self.state.delete(&mut self.slots, key))
    }

    /// Moves items of newer sub-filters into room in older ones and drops the newest
    /// sub-filters left empty ([`CuckooState::compact`]).
    pub fn compact(&mut self) {
        sure(self.state.compact(&mut self.slots));
    }

    /// Items held: added minus deleted.
    pub fn len(&self) -> u64 {
        self.state.len()
    }

    /// Whether the filter holds no item.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// Successful inserts since the filter was built.
    pub fn inserted(&self) -> u64 {
        self.state.inserted()
    }

    /// Successful deletes since the filter was built.
    pub fn deleted(&self) -> u64 {
        self.state.deleted()
    }

    /// Buckets of the first sub-filter.
    pub fn buckets(&self) -> u64 {
        self.state.buckets()
    }

    /// Sub-filters, 1 until the first growth.
    pub fn sub_filters(&self) -> usize {
        self.state.sub_filters()
    }

    /// Bytes of fingerprint slots over all sub-filters.
    pub fn slot_bytes(&self) -> u64 {
        self.state.slot_bytes()
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
        /// Model: a multiset of keys. Never a false negative; delete removes one copy;
        /// compaction loses nothing.
        #[test]
        fn matches_a_multiset_model(
            ops in proptest::collection::vec((0u8..4, 0u16..64, any::<u64>()), 1..400),
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
                    2 => {
                        let held = model.get(&key).copied().unwrap_or(0);
                        prop_assert!(filter.count(&bytes) >= held);
                    }
                    _ => filter.compact(),
                }
                for (k, &n) in &model {
                    prop_assert!(filter.count(&k.to_le_bytes()) >= n, "key {} lost", k);
                }
                prop_assert_eq!(filter.len(), model.values().sum::<u64>());
            }
        }
    }
}
