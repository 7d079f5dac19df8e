//! [`CountingBloomFilter`]: a Bloom filter whose positions are 4-bit counters, so that keys
//! can be removed.

use std::path::Path;

use crate::error::{Error, Result};

use super::BloomFilter;
use super::encoding::{self, Kind, Sizing};
use super::file;
use super::size::{FilterSize, Spec};
use crate::filter::layout::{Layout, positions};
use crate::filter::layout::{MAX_HASHES, hash_key};
use crate::filter::sizing::estimate::{
    blocked_fpr_from_ones, blocked_len_from_ones, standard_fpr_from_ones, standard_len_from_ones,
};
use crate::filter::sizing::math;
use crate::filter::sizing::params::{
    bits_per_key_for_rate, clamp_rate, predicted_rate, size_for_bits_per_key, standard_size,
};

/// The value at which a counter sticks.
const SATURATED: u8 = 15;

/// A counting Bloom filter: each of the `m` positions is a 4-bit saturating counter (two per
/// byte), incremented by [`CountingBloomFilter::insert`] and decremented by
/// [`CountingBloomFilter::remove`]. Probes are exactly those of a [`BloomFilter`] of the same
/// layout and size.
///
/// Guarantees: a key inserted more times than it was removed is always reported present.
/// A counter that reached 15 is never decremented again (its true count is unknown), so
/// saturation can only cause false positives, never false negatives: a key inserted 16 or more
/// times (or sharing its counters with enough other keys) may stay "present" after all its
/// removals. Removing a key the filter reports absent returns `false` and changes nothing
/// (not even [`CountingBloomFilter::len`]).
///
/// The caller's side of the contract: only remove keys that were inserted. Removing a key
/// that was never inserted but happens to be a false positive decrements counters that other
/// keys rely on — inherent to counting filters, which cannot tell the two cases apart.
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{CountingBloomFilter, FilterSize};
/// let mut live = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01))?;
/// live.insert(b"session-42");
/// assert!(live.contains(b"session-42"));
/// assert!(live.remove(b"session-42"));
/// assert!(!live.contains(b"session-42"));
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CountingBloomFilter {
    layout: Layout,
    k: u32,
    positions: u64,
    items: u64,
    capacity: u64,
    /// `f64::to_bits` of the error rate.
    error_rate: u64,
    /// Counter `p` is the low nibble of byte `p / 2` for even `p`, the high nibble for odd.
    cells: Vec<u8>,
}

impl CountingBloomFilter {
    /// A counting filter of `size` ([`FilterSize`]): the same positions and probes as a
    /// [`BloomFilter`] of that size, each a 4-bit counter (4 times the memory).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let c = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// assert_eq!((c.capacity(), c.error_rate()), (1000, 0.01));
    /// let err = CountingBloomFilter::new(FilterSize::bits(0, 3)).unwrap_err();
    /// assert!(err.to_string().contains("bits must be at least 1"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As [`BloomFilter::new`].
    pub fn new(size: FilterSize) -> Result<Self> {
        size.check()?;
        let layout = size.layout();
        match size.spec() {
            Spec::Items {
                capacity,
                error_rate,
            } => Self::for_rate(layout, capacity, error_rate),
            Spec::BitsPerKey {
                capacity,
                bits_per_key,
            } => Self::for_bits_per_key(layout, capacity, bits_per_key),
            Spec::Bits { bits, k } => Self::exactly(layout, bits, k),
        }
    }

    /// A counting filter of `layout` with `bits_per_key` counters per expected item.
    fn for_bits_per_key(layout: Layout, expected_items: usize, bits_per_key: f64) -> Result<Self> {
        let (m, k) = size_for_bits_per_key(layout, expected_items, bits_per_key)?;
        let mut c = Self::exactly(layout, m, k)?;
        c.set_sizing(expected_items as u64, None);
        Ok(c)
    }

    /// A counting filter of `layout` sized for `expected_items` keys at `fp_rate`.
    fn for_rate(layout: Layout, expected_items: usize, fp_rate: f64) -> Result<Self> {
        let mut c = match layout {
            // The same sizing as a plain filter's: the probes, and so the rate, are the same.
            Layout::Standard => {
                let (m, k) = standard_size(expected_items, fp_rate)?;
                Self::exactly(layout, m, k)?
            }
            Layout::Blocked => Self::for_bits_per_key(
                layout,
                expected_items,
                bits_per_key_for_rate(layout, expected_items, fp_rate)?,
            )?,
        };
        c.set_sizing(expected_items as u64, Some(fp_rate));
        Ok(c)
    }

    fn set_sizing(&mut self, capacity: u64, error_rate: Option<f64>) {
        self.capacity = capacity.clamp(1, usize::MAX as u64);
        let rate = error_rate
            .unwrap_or_else(|| predicted_rate(self.layout, self.positions, self.capacity, self.k));
        self.error_rate = clamp_rate(rate).to_bits();
    }

    /// A counting filter with exactly `positions` counters (rounded up to whole 512-counter
    /// blocks for [`Layout::Blocked`]) and `k` probes per key.
    fn exactly(layout: Layout, positions: u64, k: u32) -> Result<Self> {
        if positions == 0 {
            return Err(Error::InvalidArgument(
                "a filter needs at least 1 position".into(),
            ));
        }
        if k == 0 || k > MAX_HASHES {
            return Err(Error::InvalidArgument(format!(
                "probe count {k} outside 1..={MAX_HASHES}"
            )));
        }
        let positions = layout
            .round_bits(positions)
            .ok_or_else(|| Error::InvalidArgument(format!("{positions} counters is too large")))?;
        let too_big =
            || Error::InvalidArgument(format!("{positions} counters do not fit in memory"));
        let len = usize::try_from(positions.div_ceil(2)).map_err(|_| too_big())?;
        let mut cells = Vec::new();
        cells.try_reserve_exact(len).map_err(|_| too_big())?;
        cells.resize(len, 0);
        let mut c = CountingBloomFilter {
            layout,
            k,
            positions,
            items: 0,
            capacity: 1,
            error_rate: 0.5f64.to_bits(),
            cells,
        };
        let capacity =
            math::float_to_u64((positions as f64 * std::f64::consts::LN_2 / f64::from(k)).floor());
        c.set_sizing(capacity, None);
        Ok(c)
    }

    #[inline]
    fn counter(&self, p: u64) -> u8 {
        (self.cells[(p >> 1) as usize] >> ((p & 1) * 4)) & 0xf
    }

    #[inline]
    fn set_counter(&mut self, p: u64, value: u8) {
        let shift = (p & 1) * 4;
        let cell = &mut self.cells[(p >> 1) as usize];
        *cell = (*cell & !(0xf << shift)) | ((value & 0xf) << shift);
    }

    /// Adds one occurrence of a key (counters stop at 15). Returns `true` if the key was
    /// new — some counter went from 0 to 1, so the filter did not contain it before. Unlike
    /// [`BloomFilter::len`], every insertion counts towards [`CountingBloomFilter::len`]
    /// (the filter is a multiset: each insertion can be removed); the distinct items are
    /// [`CountingBloomFilter::estimated_len`].
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// assert!(c.insert("a"));
    /// assert!(!c.insert("a"));
    /// assert_eq!(c.len(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert(&mut self, key: impl AsRef<[u8]>) -> bool {
        self.insert_hash(hash_key(key.as_ref()))
    }

    /// [`CountingBloomFilter::insert`] for a key given by its [`hash_key`] hash.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize, hash_key};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// assert!(c.insert_hash(hash_key(b"k")));
    /// assert!(c.contains(b"k"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        self.items = self.items.saturating_add(1);
        let mut new = false;
        for p in positions(self.layout, hash, self.positions, self.k) {
            let c = self.counter(p);
            new |= c == 0;
            if c < SATURATED {
                self.set_counter(p, c + 1);
            }
        }
        new
    }

    /// The number of items the filter was built for.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// assert_eq!(CountingBloomFilter::new(FilterSize::for_items(250, 0.01))?.capacity(), 250);
    /// # Ok(())
    /// # }
    /// ```
    pub fn capacity(&self) -> usize {
        usize::try_from(self.capacity).unwrap_or(usize::MAX)
    }

    /// The false-positive rate the filter was built to keep up to
    /// [`CountingBloomFilter::capacity`] items.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// assert_eq!(CountingBloomFilter::new(FilterSize::for_items(250, 0.02))?.error_rate(), 0.02);
    /// # Ok(())
    /// # }
    /// ```
    pub fn error_rate(&self) -> f64 {
        f64::from_bits(self.error_rate)
    }

    /// Fraction of counters that are non-zero.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::bits(100, 2))?;
    /// c.insert("k");
    /// assert!(c.fill_ratio() > 0.0 && c.fill_ratio() <= 0.02);
    /// c.remove("k");
    /// assert_eq!(c.fill_ratio(), 0.0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        self.nonzero() as f64 / self.positions as f64
    }

    /// Non-zero counters in `cells` (two per byte; a padding nibble past the last position is
    /// always zero).
    fn nonzero_in(cells: &[u8]) -> u32 {
        cells
            .iter()
            .map(|&b| u32::from(b & 0x0f != 0) + u32::from(b & 0xf0 != 0))
            .sum()
    }

    fn nonzero(&self) -> u64 {
        self.cells
            .chunks(1 << 16)
            .map(|c| u64::from(Self::nonzero_in(c)))
            .sum()
    }

    /// Non-zero counters of each 512-counter block (256 bytes), for the blocked layout.
    fn nonzero_per_block(&self) -> impl Iterator<Item = u32> + '_ {
        self.cells.chunks_exact(256).map(Self::nonzero_in)
    }

    /// The false-positive rate measured from the non-zero counters, exactly as
    /// [`BloomFilter::estimated_fpr`] measures it from bits (a non-zero counter is a set
    /// bit).
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// for i in 0..1000u32 { c.insert(i.to_le_bytes()); }
    /// assert!((c.estimated_fpr() - 0.01).abs() < 0.003);
    /// assert_eq!(c.estimated_fpr(), c.to_bloom_filter()?.estimated_fpr());
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_fpr(&self) -> f64 {
        match self.layout {
            Layout::Standard => standard_fpr_from_ones(self.positions, self.k, self.nonzero()),
            Layout::Blocked => blocked_fpr_from_ones(self.k, self.nonzero_per_block()),
        }
    }

    /// How many *distinct* items the non-zero counters suggest the filter holds, by the
    /// estimate [`BloomFilter::estimated_len`] makes from bits. Unlike
    /// [`CountingBloomFilter::len`] it does not grow when an item already present is
    /// inserted again, so it is the load to compare with [`CountingBloomFilter::capacity`].
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(10, 0.01))?;
    /// for _ in 0..11 { c.insert("same"); }
    /// assert_eq!((c.len(), c.estimated_len()), (11, 1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_len(&self) -> usize {
        match self.layout {
            Layout::Standard => standard_len_from_ones(self.positions, self.k, self.nonzero()),
            Layout::Blocked => blocked_len_from_ones(self.k, self.nonzero_per_block()),
        }
    }

    /// Empties the filter; shape, capacity and error rate stay.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// c.clear();
    /// assert!(c.is_empty() && !c.contains("k"));
    /// assert_eq!(c.capacity(), 100);
    /// # Ok(())
    /// # }
    /// ```
    pub fn clear(&mut self) {
        self.cells.fill(0);
        self.items = 0;
    }

    fn check_same_shape(&self, other: &CountingBloomFilter, op: &str) -> Result<()> {
        if self.layout != other.layout || self.positions != other.positions || self.k != other.k {
            return Err(Error::InvalidArgument(format!(
                "{op} needs counting filters of the same shape: {:?} layout, {} counters, \
                 k = {} vs {:?} layout, {} counters, k = {}",
                self.layout, self.positions, self.k, other.layout, other.positions, other.k
            )));
        }
        Ok(())
    }

    /// Adds every insertion of `other` to this filter (the multiset sum): each counter
    /// becomes the sum of the two, stopping at 15 (a saturated counter stays saturated, as
    /// always). Afterwards every key either filter held is present, and may be removed as
    /// many times as the two held it together; [`CountingBloomFilter::len`] is the sum.
    /// Capacity and error rate stay this filter's.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut a = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// let mut b = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// a.insert("x");
    /// b.insert("x");
    /// b.insert("y");
    /// a.union(&b)?;
    /// assert!(a.contains("y") && a.remove("x") && a.contains("x"));
    /// assert!(a.union(&CountingBloomFilter::new(FilterSize::for_items(10, 0.01))?).is_err());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the filters differ in layout, counters or probes.
    pub fn union(&mut self, other: &CountingBloomFilter) -> Result<()> {
        self.check_same_shape(other, "union")?;
        for p in 0..self.positions {
            let sum = self.counter(p).saturating_add(other.counter(p));
            self.set_counter(p, sum.min(SATURATED));
        }
        self.items = self.items.saturating_add(other.items);
        Ok(())
    }

    /// Keeps, per counter, the smaller of the two (the multiset intersection): afterwards
    /// every key both filters held is present, and may be removed as many times as the
    /// filter that held it fewer times did. A counter saturated in one filter takes the
    /// other's value (the true count behind a saturated counter is at least 15). Since how
    /// many insertions the two have in common is unknown, [`CountingBloomFilter::len`]
    /// becomes the smaller of the two lengths, an upper bound.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut a = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// let mut b = CountingBloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// a.insert("both"); a.insert("only a");
    /// b.insert("both"); b.insert("only b");
    /// a.intersect(&b)?;
    /// assert!(a.contains("both"));
    /// assert!(!a.contains("only a") && !a.contains("only b"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the filters differ in layout, counters or probes.
    pub fn intersect(&mut self, other: &CountingBloomFilter) -> Result<()> {
        self.check_same_shape(other, "intersect")?;
        for p in 0..self.positions {
            let min = self.counter(p).min(other.counter(p));
            self.set_counter(p, min);
        }
        self.items = self.items.min(other.items);
        Ok(())
    }

    /// Removes one occurrence of a key. Returns `false`, changing nothing, if the filter says
    /// the key is absent; otherwise decrements the key's counters (saturated ones stay at 15)
    /// and returns `true`. Only remove keys you inserted (see the type's documentation).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// assert!(c.remove("k"));
    /// assert!(!c.remove("k")); // absent now: nothing changes
    /// # Ok(())
    /// # }
    /// ```
    pub fn remove(&mut self, key: impl AsRef<[u8]>) -> bool {
        self.remove_hash(hash_key(key.as_ref()))
    }

    /// [`CountingBloomFilter::remove`] for a key given by its [`hash_key`] hash.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize, hash_key};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// assert!(c.remove_hash(hash_key(b"k")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn remove_hash(&mut self, hash: u64) -> bool {
        if !self.contains_hash(hash) {
            return false;
        }
        self.items = self.items.saturating_sub(1);
        for p in positions(self.layout, hash, self.positions, self.k) {
            let c = self.counter(p);
            // A key whose probes repeat a position can meet a counter it already brought to
            // zero only if it was never inserted; the guard keeps the counter from wrapping.
            if c != SATURATED && c > 0 {
                self.set_counter(p, c - 1);
            }
        }
        true
    }

    /// May `key` be present (inserted more times than removed)? Never `false` for such a key.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// assert!(c.contains("k"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.contains_hash(hash_key(key.as_ref()))
    }

    /// [`CountingBloomFilter::contains`] for a key given by its [`hash_key`] hash.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize, hash_key};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// assert!(c.contains_hash(hash_key(b"k")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn contains_hash(&self, hash: u64) -> bool {
        positions(self.layout, hash, self.positions, self.k).all(|p| self.counter(p) > 0)
    }

    /// The false-positive rate predicted for [`CountingBloomFilter::len`] keys.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// for i in 0..100u32 {
    ///     c.insert(i.to_le_bytes());
    /// }
    /// assert!(c.expected_fp_rate() <= 0.011);
    /// # Ok(())
    /// # }
    /// ```
    pub fn expected_fp_rate(&self) -> f64 {
        predicted_rate(self.layout, self.positions, self.items, self.k)
    }

    /// Number of positions `m` (counters; the equivalent Bloom filter's bit length). The
    /// filter occupies `m / 2` bytes.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// assert_eq!(CountingBloomFilter::new(FilterSize::bits(300, 3))?.bit_len(), 300);
    /// # Ok(())
    /// # }
    /// ```
    pub fn bit_len(&self) -> u64 {
        self.positions
    }

    /// Number of probes `k` per key.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// assert_eq!(CountingBloomFilter::new(FilterSize::bits(300, 3))?.num_hashes(), 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn num_hashes(&self) -> u32 {
        self.k
    }

    /// Insertions minus successful removals: the size of the multiset the filter holds,
    /// counting an item once per insertion (each can be removed). It is not the number of
    /// distinct items: inserting one item 11 times gives 11. For the distinct load, the one
    /// that fills the filter and that [`CountingBloomFilter::capacity`] is about, see
    /// [`CountingBloomFilter::estimated_len`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// c.insert("k");
    /// c.remove("k");
    /// assert_eq!(c.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        usize::try_from(self.items).unwrap_or(usize::MAX)
    }

    /// True if [`CountingBloomFilter::len`] is 0.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// assert!(CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// The layout of the counter array.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize, Layout};
    /// let c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01).blocked())?;
    /// assert_eq!(c.layout(), Layout::Blocked);
    /// # Ok(())
    /// # }
    /// ```
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Number of counters stuck at 15.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::bits(64, 1))?;
    /// for _ in 0..20 {
    ///     c.insert("k");
    /// }
    /// assert_eq!(c.saturated_counters(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn saturated_counters(&self) -> u64 {
        (0..self.positions)
            .filter(|&p| self.counter(p) == SATURATED)
            .count() as u64
    }

    /// The plain [`BloomFilter`] with a bit set wherever a counter is non-zero: answers
    /// exactly as this filter does, in a quarter of the space.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the bit array cannot be allocated.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// let plain = c.to_bloom_filter()?;
    /// assert!(plain.contains("k") && plain.bit_len() == c.bit_len());
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_bloom_filter(&self) -> Result<BloomFilter> {
        let mut words = vec![0u8; 0];
        words
            .try_reserve_exact(self.positions.div_ceil(64) as usize * 8)
            .map_err(|_| Error::InvalidArgument("bit array does not fit in memory".into()))?;
        words.resize(self.positions.div_ceil(64) as usize * 8, 0);
        for p in 0..self.positions {
            if self.counter(p) > 0 {
                words[(p >> 3) as usize] |= 1 << (p & 7);
            }
        }
        let bytes = encoding::encode(
            Kind::Bloom,
            self.layout,
            self.k,
            self.positions,
            self.items,
            Some(self.sizing()),
            |out| out.extend_from_slice(&words),
        );
        BloomFilter::from_bytes(&bytes)
    }

    fn sizing(&self) -> Sizing {
        Sizing {
            capacity: self.capacity,
            error_rate: self.error_rate(),
        }
    }

    /// Serializes the filter (format version 2, kind 1, in `docs/FORMAT.md`): header,
    /// counters two per byte, CRC-32.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("x");
    /// assert_eq!(CountingBloomFilter::from_bytes(&c.to_bytes())?, c);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        encoding::encode(
            Kind::Counting,
            self.layout,
            self.k,
            self.positions,
            self.items,
            Some(self.sizing()),
            |out| out.extend_from_slice(&self.cells),
        )
    }

    /// Writes [`CountingBloomFilter::to_bytes`] to `path` atomically (temporary file, sync,
    /// rename).
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let dir = tempfile::tempdir()?;
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("x");
    /// c.save(dir.path().join("live.cbf"))?;
    /// assert_eq!(CountingBloomFilter::load(dir.path().join("live.cbf"))?, c);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        file::save_atomic(path.as_ref(), &self.to_bytes())
    }

    /// Reads a filter saved by [`CountingBloomFilter::save`].
    ///
    /// # Errors
    /// As [`BloomFilter::load`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{CountingBloomFilter, FilterSize};
    /// let dir = tempfile::tempdir()?;
    /// let mut c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// c.insert("k");
    /// c.save(dir.path().join("c"))?;
    /// assert_eq!(CountingBloomFilter::load(dir.path().join("c"))?, c);
    /// # Ok(())
    /// # }
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let bytes = file::read(path)?;
        Self::from_bytes(&bytes).map_err(|e| file::locate(e, path))
    }

    /// Reads a filter written by [`CountingBloomFilter::to_bytes`]. Allocates no more than
    /// the input's length.
    ///
    /// # Errors
    /// [`Error::Corruption`] (with the offset of the problem within `bytes`) for truncated,
    /// damaged or inconsistent input; [`Error::WrongFilterKind`] for another kind's intact
    /// bytes (a plain Bloom filter's, say); [`Error::UnsupportedVersion`] for an intact filter
    /// of a newer format.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, CountingBloomFilter, FilterSize};
    /// let c = CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// assert_eq!(CountingBloomFilter::from_bytes(&c.to_bytes())?, c);
    /// let plain = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// assert!(CountingBloomFilter::from_bytes(&plain.to_bytes()).is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let view = encoding::validate_expecting(bytes, Some(Kind::Counting))?;
        let mut c = CountingBloomFilter {
            layout: view.layout,
            k: view.k,
            positions: view.positions,
            items: view.items,
            capacity: 1,
            error_rate: 0.5f64.to_bits(),
            cells: view.payload.to_vec(),
        };
        match view.sizing {
            Some(s) => {
                c.capacity = s.capacity;
                c.error_rate = s.error_rate.to_bits();
            }
            None => c.set_sizing(view.items, None),
        }
        Ok(c)
    }
}
