//! A cuckoo filter's logic apart from where its slots live: [`CuckooState`] holds the
//! parameters, the sub-filters' sizes and the counts, and runs inserts, lookups and deletes
//! over any [`CuckooSlots`]: the in-memory filter's vectors, or a server's chunks in the
//! engine.

use crate::error::{Error, Result};
use crate::filter::layout::hash_key;

/// An empty slot: fingerprints are never 0.
pub(super) const EMPTY: u8 = 0;

/// The multiplier spreading a fingerprint over the bucket indexes for the alternate bucket:
/// without it, alternates of small fingerprints would stay next to their first bucket.
const ALT_SPREAD: u64 = 0x5bd1_e995;

/// The largest bucket size: a bucket is scanned linearly on every probe.
const MAX_BUCKET_SIZE: u16 = 255;

/// The largest growth factor between consecutive sub-filters.
const MAX_EXPANSION: u16 = 32768;

/// How a cuckoo filter is built and grows.
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

/// The fingerprint slots of a cuckoo filter, wherever they are kept, for reading. Sub-filter
/// `filter` has `buckets` buckets (a power of two) of `bucket_size` slots; a slot holds a
/// fingerprint (1..=255) or 0 for an empty slot. Reading takes `&mut self` so that an implementation
/// may load and cache what it reads.
pub trait CuckooRead {
    /// What reading or writing slots can fail with.
    type Error;
    /// The slots of one bucket, to read.
    fn bucket(&mut self, filter: usize, bucket: u64) -> std::result::Result<&[u8], Self::Error>;
}

/// The fingerprint slots of a cuckoo filter, for reading and writing.
pub trait CuckooSlots: CuckooRead {
    /// The slots of one bucket, to change.
    fn bucket_mut(
        &mut self,
        filter: usize,
        bucket: u64,
    ) -> std::result::Result<&mut [u8], Self::Error>;
    /// Readies the next sub-filter, of `buckets` buckets, all empty; `Ok(false)` if it cannot
    /// be held (the filter then stays as it is).
    fn add_filter(&mut self, buckets: u64) -> std::result::Result<bool, Self::Error>;
    /// Drops the newest sub-filter, which holds no fingerprint ([`CuckooState::compact`]).
    fn remove_filter(&mut self) -> std::result::Result<(), Self::Error>;
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

    fn first(self, buckets: u64) -> u64 {
        self.hash & (buckets - 1)
    }
}

fn alternate(bucket: u64, fingerprint: u8, buckets: u64) -> u64 {
    (bucket ^ u64::from(fingerprint).wrapping_mul(ALT_SPREAD)) & (buckets - 1)
}

/// Both buckets of an item in a sub-filter of `buckets` buckets, the second only if it
/// differs from the first.
fn buckets_of(probe: Probe, buckets: u64) -> (u64, Option<u64>) {
    let first = probe.first(buckets);
    let second = alternate(first, probe.fingerprint, buckets);
    (first, (second != first).then_some(second))
}

/// Splitmix64: a tiny generator turning the caller's seed into a victim sequence.
fn next_random(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Replaces the first slot of a bucket that holds `from` with `to`; `Ok(false)` if none does.
fn replace<S: CuckooSlots>(
    slots: &mut S,
    filter: usize,
    bucket: u64,
    from: u8,
    to: u8,
) -> std::result::Result<bool, S::Error> {
    let Some(at) = slots
        .bucket(filter, bucket)?
        .iter()
        .position(|&f| f == from)
    else {
        return Ok(false);
    };
    slots.bucket_mut(filter, bucket)?[at] = to;
    Ok(true)
}

fn place<S: CuckooSlots>(
    slots: &mut S,
    filter: usize,
    bucket: u64,
    fingerprint: u8,
) -> std::result::Result<bool, S::Error> {
    replace(slots, filter, bucket, EMPTY, fingerprint)
}

fn remove<S: CuckooSlots>(
    slots: &mut S,
    filter: usize,
    bucket: u64,
    fingerprint: u8,
) -> std::result::Result<bool, S::Error> {
    replace(slots, filter, bucket, fingerprint, EMPTY)
}

fn count_in<S: CuckooRead>(
    slots: &mut S,
    filter: usize,
    bucket: u64,
    fingerprint: u8,
) -> std::result::Result<u64, S::Error> {
    let hits = slots
        .bucket(filter, bucket)?
        .iter()
        .filter(|&&f| f == fingerprint)
        .count();
    Ok(u64::try_from(hits).unwrap_or(u64::MAX))
}

/// The state of a cuckoo filter apart from its slots: parameters, the sub-filters' bucket
/// counts and the insert and delete counts. An item is one fingerprint in one of its two
/// buckets. There are no false negatives for items added and not deleted; deleting removes
/// one copy of a fingerprint, so the caller must delete only items it added (else another
/// item sharing the fingerprint and bucket loses its copy — inherent to cuckoo filters).
///
/// Randomness (which fingerprint to kick out of a full bucket) comes from the caller's seed,
/// so that two replicas applying the same inserts with the same seeds hold the same filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuckooState {
    params: CuckooParams,
    filters: Vec<u64>,
    inserted: u64,
    deleted: u64,
}

fn check_params(params: CuckooParams) -> Result<()> {
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
    Ok(())
}

impl CuckooState {
    /// The state of an empty filter of one sub-filter; `params.capacity` and
    /// `params.bucket_size` must be at least 1, `bucket_size` at most 255, `max_iterations`
    /// at least 1 and `expansion` at most 32,768. The caller readies the first sub-filter's
    /// slots (of [`CuckooState::buckets`] buckets).
    pub fn new(params: CuckooParams) -> Result<Self> {
        check_params(params)?;
        let buckets = params
            .capacity
            .div_ceil(u64::from(params.bucket_size))
            .checked_next_power_of_two()
            .filter(|b| b.checked_mul(u64::from(params.bucket_size)).is_some())
            .ok_or_else(|| {
                Error::InvalidArgument(format!("cuckoo capacity {} is too large", params.capacity))
            })?;
        Ok(Self {
            params,
            filters: vec![buckets],
            inserted: 0,
            deleted: 0,
        })
    }

    /// A state saved from [`CuckooState::params`], [`CuckooState::filter_buckets`],
    /// [`CuckooState::inserted`] and [`CuckooState::deleted`], checked: valid parameters,
    /// at least one sub-filter, every bucket count a power of two whose slots fit in a u64,
    /// no more deletes than inserts.
    pub fn from_parts(
        params: CuckooParams,
        filter_buckets: Vec<u64>,
        inserted: u64,
        deleted: u64,
    ) -> Result<Self> {
        check_params(params)?;
        let bad = |why: &str| Err(Error::InvalidArgument(format!("cuckoo state: {why}")));
        if filter_buckets.is_empty() {
            return bad("no sub-filter");
        }
        if filter_buckets.iter().any(|&b| {
            !b.is_power_of_two() || b.checked_mul(u64::from(params.bucket_size)).is_none()
        }) {
            return bad("a sub-filter's bucket count is not a power of two that fits");
        }
        if deleted > inserted {
            return bad("more deletes than inserts");
        }
        Ok(Self {
            params,
            filters: filter_buckets,
            inserted,
            deleted,
        })
    }

    /// The parameters the filter was built with.
    pub fn params(&self) -> CuckooParams {
        self.params
    }

    /// Buckets of each sub-filter, oldest first.
    pub fn filter_buckets(&self) -> &[u64] {
        &self.filters
    }

    /// Adds one copy of `key`, kicking out fingerprints chosen from `seed` if both its buckets
    /// are full, and adding a sub-filter if that fails. `Ok(false)` (filter unchanged) when
    /// the filter is full: it does not grow (expansion 0) or the next sub-filter cannot be
    /// held.
    pub fn insert<S: CuckooSlots>(
        &mut self,
        slots: &mut S,
        key: &[u8],
        seed: u64,
    ) -> std::result::Result<bool, S::Error> {
        let probe = Probe::of(key);
        let placed = self.place_anywhere(slots, probe)?
            || self.kick_insert(slots, probe, seed)?
            || self.grow_and_place(slots, probe)?;
        if placed {
            self.inserted += 1;
        }
        Ok(placed)
    }

    /// Adds `key` only if the filter does not report it present. `Some(true)`: added;
    /// `Some(false)`: (possibly falsely) present already; `None`: the filter is full.
    pub fn insert_unique<S: CuckooSlots>(
        &mut self,
        slots: &mut S,
        key: &[u8],
        seed: u64,
    ) -> std::result::Result<Option<bool>, S::Error> {
        if self.contains(slots, key)? {
            return Ok(Some(false));
        }
        Ok(self.insert(slots, key, seed)?.then_some(true))
    }

    /// Places the fingerprint in a free slot of either bucket, newest sub-filter first.
    fn place_anywhere<S: CuckooSlots>(
        &self,
        slots: &mut S,
        probe: Probe,
    ) -> std::result::Result<bool, S::Error> {
        for (filter, &buckets) in self.filters.iter().enumerate().rev() {
            let (first, second) = buckets_of(probe, buckets);
            if place(slots, filter, first, probe.fingerprint)? {
                return Ok(true);
            }
            if let Some(b) = second
                && place(slots, filter, b, probe.fingerprint)?
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Places the fingerprint in the newest sub-filter by kicking fingerprints to their
    /// alternate buckets, at most `max_iterations` times; on failure every swap is undone so
    /// no item is lost.
    fn kick_insert<S: CuckooSlots>(
        &self,
        slots: &mut S,
        probe: Probe,
        seed: u64,
    ) -> std::result::Result<bool, S::Error> {
        let filter = self.filters.len() - 1;
        let buckets = self.filters[filter];
        let size = u64::from(self.params.bucket_size);
        let mut random = seed;
        let mut path: Vec<(u64, usize)> = Vec::with_capacity(self.params.max_iterations.into());
        let mut homeless = probe.fingerprint;
        let mut bucket = probe.first(buckets);
        for _ in 0..self.params.max_iterations {
            let victim = usize::try_from(next_random(&mut random) % size).unwrap_or(0);
            std::mem::swap(
                &mut homeless,
                &mut slots.bucket_mut(filter, bucket)?[victim],
            );
            path.push((bucket, victim));
            bucket = alternate(bucket, homeless, buckets);
            if place(slots, filter, bucket, homeless)? {
                return Ok(true);
            }
        }
        // Walk back: each slot on the path gets back the fingerprint it held.
        for (bucket, victim) in path.into_iter().rev() {
            std::mem::swap(
                &mut homeless,
                &mut slots.bucket_mut(filter, bucket)?[victim],
            );
        }
        Ok(false)
    }

    /// Adds a sub-filter `expansion` (rounded up to a power of two) times the size of the
    /// newest one and places the fingerprint there; `Ok(false)` if the filter does not grow or
    /// the new one cannot be held.
    fn grow_and_place<S: CuckooSlots>(
        &mut self,
        slots: &mut S,
        probe: Probe,
    ) -> std::result::Result<bool, S::Error> {
        if self.params.expansion == 0 {
            return Ok(false);
        }
        let factor = u64::from(self.params.expansion).next_power_of_two();
        let newest = self.filters[self.filters.len() - 1];
        let Some(buckets) = newest
            .checked_mul(factor)
            .filter(|b| b.checked_mul(u64::from(self.params.bucket_size)).is_some())
        else {
            return Ok(false);
        };
        if !slots.add_filter(buckets)? {
            return Ok(false);
        }
        self.filters.push(buckets);
        place(
            slots,
            self.filters.len() - 1,
            probe.first(buckets),
            probe.fingerprint,
        )
    }

    /// Whether `key` may have been added (and not deleted): never `false` for such a key.
    pub fn contains<S: CuckooRead>(
        &self,
        slots: &mut S,
        key: &[u8],
    ) -> std::result::Result<bool, S::Error> {
        let probe = Probe::of(key);
        for (filter, &buckets) in self.filters.iter().enumerate().rev() {
            let (first, second) = buckets_of(probe, buckets);
            if count_in(slots, filter, first, probe.fingerprint)? > 0 {
                return Ok(true);
            }
            if let Some(b) = second
                && count_in(slots, filter, b, probe.fingerprint)? > 0
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// How many copies of `key`'s fingerprint its buckets hold: at least the number of times it
    /// was added minus deleted, more when other items share fingerprint and bucket.
    pub fn count<S: CuckooRead>(
        &self,
        slots: &mut S,
        key: &[u8],
    ) -> std::result::Result<u64, S::Error> {
        let probe = Probe::of(key);
        let mut total = 0;
        for (filter, &buckets) in self.filters.iter().enumerate() {
            let (first, second) = buckets_of(probe, buckets);
            total += count_in(slots, filter, first, probe.fingerprint)?;
            if let Some(b) = second {
                total += count_in(slots, filter, b, probe.fingerprint)?;
            }
        }
        Ok(total)
    }

    /// Removes one copy of `key`'s fingerprint, newest sub-filter first; `Ok(false)` (filter
    /// unchanged) if none is held.
    pub fn delete<S: CuckooSlots>(
        &mut self,
        slots: &mut S,
        key: &[u8],
    ) -> std::result::Result<bool, S::Error> {
        let probe = Probe::of(key);
        for (filter, &buckets) in self.filters.iter().enumerate().rev() {
            let (first, second) = buckets_of(probe, buckets);
            let removed = remove(slots, filter, first, probe.fingerprint)?
                || match second {
                    Some(b) => remove(slots, filter, b, probe.fingerprint)?,
                    None => false,
                };
            if removed {
                self.deleted += 1;
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Moves fingerprints of newer sub-filters into free slots of older ones, then drops the
    /// newest sub-filters left empty: after many deletes, lookups probe fewer sub-filters.
    /// An item's buckets in an older sub-filter (fewer buckets, a power of two) are its
    /// buckets in the newer one with the high bits masked off, so a fingerprint found in
    /// either of its buckets there can move to either of its buckets here.
    pub fn compact<S: CuckooSlots>(&mut self, slots: &mut S) -> std::result::Result<(), S::Error> {
        let mut left = vec![0u64; self.filters.len()];
        for newer in (1..self.filters.len()).rev() {
            for bucket in 0..self.filters[newer] {
                let held = slots.bucket(newer, bucket)?.to_vec();
                for (slot, &fingerprint) in held.iter().enumerate() {
                    if fingerprint == EMPTY {
                        continue;
                    }
                    if self.move_older(slots, newer, bucket, fingerprint)? {
                        slots.bucket_mut(newer, bucket)?[slot] = EMPTY;
                    } else {
                        left[newer] += 1;
                    }
                }
            }
        }
        while self.filters.len() > 1 && left[self.filters.len() - 1] == 0 {
            slots.remove_filter()?;
            self.filters.pop();
        }
        Ok(())
    }

    /// Places a fingerprint held in `bucket` of sub-filter `newer` in a free slot of an older
    /// sub-filter, oldest first.
    fn move_older<S: CuckooSlots>(
        &self,
        slots: &mut S,
        newer: usize,
        bucket: u64,
        fingerprint: u8,
    ) -> std::result::Result<bool, S::Error> {
        for (older, &buckets) in self.filters[..newer].iter().enumerate() {
            let here = bucket & (buckets - 1);
            if place(slots, older, here, fingerprint)?
                || place(
                    slots,
                    older,
                    alternate(here, fingerprint, buckets),
                    fingerprint,
                )?
            {
                return Ok(true);
            }
        }
        Ok(false)
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
        self.filters[0]
    }

    /// Sub-filters, 1 until the first growth.
    pub fn sub_filters(&self) -> usize {
        self.filters.len()
    }

    /// Fingerprint slots (one byte each) over all sub-filters.
    pub fn slot_bytes(&self) -> u64 {
        let size = u64::from(self.params.bucket_size);
        self.filters
            .iter()
            .map(|b| b.saturating_mul(size))
            .fold(0, u64::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Slots kept sparsely, as a store that creates buckets on first write would.
    #[derive(Default)]
    struct Sparse {
        size: usize,
        buckets: BTreeMap<(usize, u64), Vec<u8>>,
        filters: usize,
    }

    impl CuckooRead for Sparse {
        type Error = String;
        fn bucket(&mut self, filter: usize, bucket: u64) -> std::result::Result<&[u8], String> {
            if filter >= self.filters {
                return Err(format!("no sub-filter {filter}"));
            }
            let size = self.size;
            Ok(self
                .buckets
                .entry((filter, bucket))
                .or_insert_with(|| vec![EMPTY; size]))
        }
    }

    impl CuckooSlots for Sparse {
        fn bucket_mut(
            &mut self,
            filter: usize,
            bucket: u64,
        ) -> std::result::Result<&mut [u8], String> {
            self.bucket(filter, bucket)?;
            Ok(self.buckets.get_mut(&(filter, bucket)).ok_or("gone")?)
        }
        fn add_filter(&mut self, _buckets: u64) -> std::result::Result<bool, String> {
            self.filters += 1;
            Ok(self.filters <= 4)
        }
        fn remove_filter(&mut self) -> std::result::Result<(), String> {
            self.filters -= 1;
            let gone = self.filters;
            self.buckets.retain(|&(f, _), _| f < gone);
            Ok(())
        }
    }

    #[test]
    fn runs_over_slots_kept_elsewhere_as_in_memory() {
        let params = CuckooParams {
            capacity: 32,
            bucket_size: 2,
            max_iterations: 20,
            expansion: 2,
        };
        let mut memory = crate::filter::CuckooFilter::new(params).unwrap();
        let mut state = CuckooState::new(params).unwrap();
        let mut sparse = Sparse {
            size: 2,
            filters: 1,
            ..Sparse::default()
        };
        for i in 0..300u64 {
            let key = i.to_le_bytes();
            assert_eq!(
                state.insert(&mut sparse, &key, i).unwrap(),
                memory.insert(&key, i),
                "insert {i}"
            );
            if i % 3 == 0 {
                let gone = (i / 2).to_le_bytes();
                assert_eq!(
                    state.delete(&mut sparse, &gone).unwrap(),
                    memory.delete(&gone)
                );
            }
        }
        assert_eq!(state.sub_filters(), memory.sub_filters());
        assert_eq!(
            (state.inserted(), state.deleted()),
            (memory.inserted(), memory.deleted())
        );
        for i in 0..400u64 {
            let key = i.to_le_bytes();
            assert_eq!(
                state.count(&mut sparse, &key).unwrap(),
                memory.count(&key),
                "{i}"
            );
        }
    }

    #[test]
    fn compaction_moves_items_to_older_sub_filters_and_drops_empty_ones() {
        let params = CuckooParams {
            capacity: 16,
            bucket_size: 2,
            max_iterations: 20,
            expansion: 2,
        };
        let mut memory = crate::filter::CuckooFilter::new(params).unwrap();
        let keys: Vec<[u8; 8]> = (0..200u64).map(u64::to_le_bytes).collect();
        for (i, k) in keys.iter().enumerate() {
            assert!(memory.insert(k, i as u64));
        }
        let grown = memory.sub_filters();
        assert!(grown >= 3, "{grown}");
        // Delete most items: what is left fits in the oldest sub-filters.
        for k in &keys[10..] {
            assert!(memory.delete(k));
        }
        memory.compact();
        assert!(
            memory.sub_filters() < grown,
            "{} of {grown}",
            memory.sub_filters()
        );
        for k in &keys[..10] {
            assert!(memory.contains(k), "an item was lost by compaction");
        }
        assert_eq!(memory.len(), 10);
        // Nothing to move: compaction changes nothing.
        let before = memory.clone();
        memory.compact();
        assert_eq!(memory, before);
    }

    #[test]
    fn a_store_error_reaches_the_caller() {
        let mut state = CuckooState::new(CuckooParams::default()).unwrap();
        let mut none = Sparse {
            size: 2,
            ..Sparse::default()
        };
        assert_eq!(
            state.insert(&mut none, b"k", 1),
            Err("no sub-filter 0".to_string())
        );
        assert_eq!(state.inserted(), 0);
    }

    #[test]
    fn saved_parts_are_checked() {
        let params = CuckooParams::default();
        let ok = CuckooState::from_parts(params, vec![512, 1024], 10, 3).unwrap();
        assert_eq!((ok.len(), ok.sub_filters(), ok.buckets()), (7, 2, 512));
        assert_eq!(ok.slot_bytes(), 3072);
        for (buckets, inserted, deleted) in [
            (vec![], 0, 0),
            (vec![500], 0, 0),
            (vec![0], 0, 0),
            (vec![512], 1, 2),
            (vec![1 << 63], 0, 0),
        ] {
            assert!(
                CuckooState::from_parts(params, buckets.clone(), inserted, deleted).is_err(),
                "{buckets:?} {inserted} {deleted}"
            );
        }
        let bad_params = CuckooParams {
            bucket_size: 0,
            ..params
        };
        assert!(CuckooState::from_parts(bad_params, vec![512], 0, 0).is_err());
    }
}
