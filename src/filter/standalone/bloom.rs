//! [`BloomFilter`]: a set membership sketch with no false negatives.

use std::path::Path;

use crate::error::{Error, Result};

use super::encoding::{self, Kind, Sizing};
use super::file;
use super::size::{FilterSize, Spec};
use crate::filter::layout::{BlockProbes, Layout, StandardProbes, block_index};
use crate::filter::layout::{MAX_HASHES, hash_key};
use crate::filter::sizing::estimate::{
    blocked_fpr_from_ones, blocked_len_from_ones, standard_fpr_from_ones, standard_len_from_ones,
};
use crate::filter::sizing::math::{self, BLOCK_BITS};
use crate::filter::sizing::params::{
    bits_per_key_for_rate, clamp_rate, predicted_rate, size_for_bits_per_key, standard_size,
};

/// 64-bit words per 512-bit block.
const BLOCK_WORDS: u64 = BLOCK_BITS / 64;

/// A Bloom filter over byte-string keys.
///
/// Keys are hashed once with xxh3 ([`hash_key`]); the `k` probe positions are derived from that
/// hash. [`BloomFilter::contains`] never answers `false` for an inserted key, and answers
/// `true` for an absent key with probability about [`BloomFilter::expected_fp_rate`].
///
/// [`BloomFilter::new`] builds one of a [`FilterSize`]: for a capacity at an error rate, by
/// bits per key, or by exact bits and probes; in the [`Layout::Standard`] (textbook) layout,
/// or with [`FilterSize::blocked`] the cache-friendlier [`Layout::Blocked`] one, which
/// SSTables use.
///
/// Every filter knows what it was built for: a [`BloomFilter::capacity`] and the
/// [`BloomFilter::error_rate`] it keeps up to that many items. [`BloomFilter::insert`] says
/// whether the item was new (some bit changed) and [`BloomFilter::len`] counts the new ones,
/// as pybloom's `add` and RedisBloom's `BF.ADD` do; [`BloomFilter::try_insert`] refuses new
/// items past the capacity, while `insert` keeps going and [`BloomFilter::estimated_fpr`]
/// (measured from the bits set) tells what that costs.
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, FilterSize};
/// let mut seen = BloomFilter::new(FilterSize::for_items(10_000, 0.01))?;
/// assert!(seen.insert("https://example.com/"));
/// assert!(!seen.insert("https://example.com/")); // already there: nothing changed
/// assert!(seen.contains("https://example.com/"));
/// assert_eq!(seen.len(), 1);
/// let copy = BloomFilter::from_bytes(&seen.to_bytes())?;
/// assert_eq!(copy, seen);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BloomFilter {
    layout: Layout,
    k: u32,
    bits: u64,
    items: u64,
    capacity: u64,
    /// `f64::to_bits` of the error rate (kept as bits so the type stays `Eq`).
    error_rate: u64,
    words: Vec<u64>,
}

impl BloomFilter {
    /// A filter of `size`: `capacity` items at an error rate, bits per key, or exact bits and
    /// probes ([`FilterSize`]), in the standard layout unless the size says blocked.
    ///
    /// Sized for items at a rate, the standard layout gets the bits and probes of
    /// [`math::standard_sizing`], which for large filters are the textbook
    /// `m = -n ln p / (ln 2)^2` (a fraction of a percent more, `k` being a whole number) and
    /// for small filters or very low rates more bits, since the standard layout's repeated
    /// probes (keys that probe fewer than `k` distinct bits) add a rate the textbook formula
    /// does not see; the blocked layout gets the bits per key the blocked model
    /// ([`math::blocked_false_positive_rate`]) needs, a few percent more.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize, math};
    /// let big = BloomFilter::new(FilterSize::for_items(1_000_000, 0.01))?;
    /// assert!(big.bit_len() < math::optimal_bits(1_000_000, 0.01) * 1001 / 1000);
    /// let small = BloomFilter::new(FilterSize::for_items(10, 0.01))?;
    /// assert_eq!((small.bit_len(), small.num_hashes()), (107, 6)); // textbook: 96 and 7
    /// let err = BloomFilter::new(FilterSize::bits_per_key(100, -1.0)).unwrap_err();
    /// assert!(err.to_string().contains("bits_per_key"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the argument of the [`FilterSize`] constructor that
    /// is out of range (a capacity or bit count of 0, a rate not strictly between 0 and 1,
    /// bits per key that are not a positive number, `k` outside `1..=64`), or when the
    /// filter would not fit in memory.
    pub fn new(size: FilterSize) -> Result<BloomFilter> {
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

    /// A filter of `layout` with `bits_per_key` bits per expected item.
    pub(crate) fn for_bits_per_key(
        layout: Layout,
        expected_items: usize,
        bits_per_key: f64,
    ) -> Result<BloomFilter> {
        let (bits, k) = size_for_bits_per_key(layout, expected_items, bits_per_key)?;
        let mut f = Self::exactly(layout, bits, k)?;
        f.set_sizing(expected_items as u64, None);
        Ok(f)
    }

    /// A filter of `layout` sized for `expected_items` keys at `fp_rate`.
    pub(crate) fn for_rate(
        layout: Layout,
        expected_items: usize,
        fp_rate: f64,
    ) -> Result<BloomFilter> {
        let mut f = match layout {
            Layout::Standard => {
                let (bits, k) = standard_size(expected_items, fp_rate)?;
                Self::exactly(layout, bits, k)?
            }
            Layout::Blocked => Self::for_bits_per_key(
                layout,
                expected_items,
                bits_per_key_for_rate(layout, expected_items, fp_rate)?,
            )?,
        };
        f.set_sizing(expected_items as u64, Some(fp_rate));
        Ok(f)
    }

    /// A filter with exactly `bits` bits (rounded up to whole blocks for [`Layout::Blocked`])
    /// and `k` probes per key. Its capacity is the load for which `k` is the optimal probe
    /// count, `floor(bits ln 2 / k)` (at least 1), and its error rate the rate predicted at
    /// that load.
    pub(crate) fn exactly(layout: Layout, bits: u64, k: u32) -> Result<BloomFilter> {
        if bits == 0 {
            return Err(Error::InvalidArgument(
                "a filter needs at least 1 bit".into(),
            ));
        }
        if k == 0 || k > MAX_HASHES {
            return Err(Error::InvalidArgument(format!(
                "probe count {k} outside 1..={MAX_HASHES}"
            )));
        }
        let bits = layout
            .round_bits(bits)
            .ok_or_else(|| Error::InvalidArgument(format!("{bits} bits is too large")))?;
        let words = zeroed_words(bits.div_ceil(64))?;
        let mut f = BloomFilter {
            layout,
            k,
            bits,
            items: 0,
            capacity: 1,
            error_rate: 0.5f64.to_bits(),
            words,
        };
        let capacity =
            math::float_to_u64((bits as f64 * std::f64::consts::LN_2 / f64::from(k)).floor());
        f.set_sizing(capacity, None);
        Ok(f)
    }

    /// Records what the filter is built for; `None` takes the rate predicted at `capacity`.
    fn set_sizing(&mut self, capacity: u64, error_rate: Option<f64>) {
        self.capacity = capacity.clamp(1, usize::MAX as u64);
        let rate = error_rate
            .unwrap_or_else(|| predicted_rate(self.layout, self.bits, self.capacity, self.k));
        self.error_rate = clamp_rate(rate).to_bits();
    }

    /// Adds a key. Returns `true` if it was new — some bit changed, so the filter did not
    /// contain it before — and `false` if every bit was already set (the key was inserted
    /// before, or is a false positive). Only new keys count towards [`BloomFilter::len`].
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// assert!(f.insert("a"));
    /// assert!(!f.insert("a"));
    /// assert_eq!(f.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn insert(&mut self, key: impl AsRef<[u8]>) -> bool {
        self.insert_hash(hash_key(key.as_ref()))
    }

    /// [`BloomFilter::insert`] for a key given by its [`hash_key`] hash.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize, hash_key};
    /// let mut f = BloomFilter::new(FilterSize::bits_per_key(100, 10).blocked())?;
    /// assert!(f.insert_hash(hash_key(b"k")));
    /// assert!(f.contains(b"k"));
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) -> bool {
        let mut changed = 0u64;
        match self.layout {
            Layout::Standard => {
                for pos in StandardProbes::new(hash, self.bits, self.k) {
                    let w = &mut self.words[(pos >> 6) as usize];
                    let bit = 1 << (pos & 63);
                    changed |= !*w & bit;
                    *w |= bit;
                }
            }
            Layout::Blocked => {
                let first = (block_index(hash, self.bits / BLOCK_BITS) * BLOCK_WORDS) as usize;
                let block = &mut self.words[first..first + BLOCK_WORDS as usize];
                for off in BlockProbes::new(hash, self.k) {
                    let w = &mut block[(off >> 6) as usize & 7];
                    let bit = 1 << (off & 63);
                    changed |= !*w & bit;
                    *w |= bit;
                }
            }
        }
        let new = changed != 0;
        self.items = self.items.saturating_add(u64::from(new));
        new
    }

    /// [`BloomFilter::insert`] that refuses to go past the capacity: a key the filter already
    /// reports present is `Ok(false)` (nothing to add); a new key is added (`Ok(true)`)
    /// unless [`BloomFilter::len`] has reached [`BloomFilter::capacity`].
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::FilterSize;
    /// use bloomkv::{Error, filter::BloomFilter};
    /// let mut f = BloomFilter::new(FilterSize::for_items(2, 0.01))?;
    /// assert!(f.try_insert("a")?);
    /// assert!(f.try_insert("b")?);
    /// assert!(!f.try_insert("a")?); // present: fine even when full
    /// assert!(matches!(f.try_insert("c"), Err(Error::CapacityExceeded { capacity: 2, .. })));
    /// assert!(!f.contains("c"));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::CapacityExceeded`] for a new key when the filter is full; the filter is left
    /// unchanged.
    pub fn try_insert(&mut self, key: impl AsRef<[u8]>) -> Result<bool> {
        self.try_insert_hash(hash_key(key.as_ref()))
    }

    /// [`BloomFilter::try_insert`] for a key given by its [`hash_key`] hash.
    ///
    /// # Errors
    /// As [`BloomFilter::try_insert`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize, hash_key};
    /// let mut f = BloomFilter::new(FilterSize::for_items(1, 0.01))?;
    /// assert!(f.try_insert_hash(hash_key(b"a"))?);
    /// assert!(f.try_insert_hash(hash_key(b"b")).is_err()); // past its capacity of 1
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_insert_hash(&mut self, hash: u64) -> Result<bool> {
        if self.contains_hash(hash) {
            return Ok(false);
        }
        if self.items >= self.capacity {
            return Err(Error::CapacityExceeded {
                capacity: self.capacity,
                error_rate: self.error_rate(),
            });
        }
        Ok(self.insert_hash(hash))
    }

    /// May `key` have been inserted? Never `false` for an inserted key.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// f.insert("k");
    /// assert!(f.contains("k"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.contains_hash(hash_key(key.as_ref()))
    }

    /// [`BloomFilter::contains`] for a key given by its [`hash_key`] hash.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize, hash_key};
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// f.insert("k");
    /// assert!(f.contains_hash(hash_key(b"k")));
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        match self.layout {
            Layout::Standard => StandardProbes::new(hash, self.bits, self.k)
                .all(|pos| self.words[(pos >> 6) as usize] & (1 << (pos & 63)) != 0),
            Layout::Blocked => {
                let first = (block_index(hash, self.bits / BLOCK_BITS) * BLOCK_WORDS) as usize;
                let block = &self.words[first..first + BLOCK_WORDS as usize];
                BlockProbes::new(hash, self.k)
                    .all(|off| block[(off >> 6) as usize & 7] & (1 << (off & 63)) != 0)
            }
        }
    }

    /// The false-positive rate predicted for the keys inserted so far ([`BloomFilter::len`]):
    /// [`math::standard_false_positive_rate`] for [`Layout::Standard`] (the textbook
    /// formula corrected for probes that repeat a bit), the block model for
    /// [`Layout::Blocked`]. 0 for an empty filter.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// assert_eq!(f.expected_fp_rate(), 0.0);
    /// for i in 0..1000u32 {
    ///     f.insert(i.to_le_bytes());
    /// }
    /// assert!(f.expected_fp_rate() <= 0.011);
    /// # Ok(())
    /// # }
    /// ```
    pub fn expected_fp_rate(&self) -> f64 {
        predicted_rate(self.layout, self.bits, self.items, self.k)
    }

    /// Number of bits `m` in the filter.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// assert_eq!(BloomFilter::new(FilterSize::bits(1000, 3).blocked())?.bit_len(), 1024);
    /// # Ok(())
    /// # }
    /// ```
    pub fn bit_len(&self) -> u64 {
        self.bits
    }

    /// Number of probes `k` per key.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// assert_eq!(BloomFilter::new(FilterSize::bits(1000, 3))?.num_hashes(), 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn num_hashes(&self) -> u32 {
        self.k
    }

    /// Number of items added: the [`BloomFilter::insert`] calls that returned `true`. A
    /// repeated key is not counted again; neither is a new key that happened to be a false
    /// positive, so `len` can fall short of the distinct keys inserted by about
    /// the false-positive rate. (A filter from an SSTable counts its distinct keys; after
    /// [`BloomFilter::union`] or [`BloomFilter::intersect`] it is
    /// [`BloomFilter::estimated_len`].)
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// f.insert("a");
    /// f.insert("a");
    /// assert_eq!(f.len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn len(&self) -> usize {
        usize::try_from(self.items).unwrap_or(usize::MAX)
    }

    /// True if nothing was inserted.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// assert!(BloomFilter::new(FilterSize::for_items(100, 0.01))?.is_empty());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// The layout of the bit array.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize, Layout};
    /// assert_eq!(BloomFilter::new(FilterSize::for_items(100, 0.01))?.layout(), Layout::Standard);
    /// # Ok(())
    /// # }
    /// ```
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Fraction of bits set, a direct measure of how full the filter is (the false-positive
    /// rate of the standard layout is about this fraction to the power `k`).
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// assert_eq!(f.fill_ratio(), 0.0);
    /// for i in 0..1000u32 { f.insert(i.to_le_bytes()); }
    /// let fill = f.fill_ratio(); // an optimally sized filter at capacity is about half full
    /// assert!(fill > 0.45 && fill < 0.55, "{fill}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn fill_ratio(&self) -> f64 {
        self.ones() as f64 / self.bits as f64
    }

    fn ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The number of items the filter was built for (see the constructors).
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// assert_eq!(BloomFilter::new(FilterSize::for_items(5000, 0.01))?.capacity(), 5000);
    /// assert_eq!(BloomFilter::new(FilterSize::bits_per_key(5000, 10).blocked())?.capacity(), 5000);
    /// # Ok(())
    /// # }
    /// ```
    pub fn capacity(&self) -> usize {
        usize::try_from(self.capacity).unwrap_or(usize::MAX)
    }

    /// The false-positive rate the filter was built to keep up to [`BloomFilter::capacity`]
    /// items: the rate asked for, or (for constructors given bits per key or bits) the rate
    /// the layout's model predicts at capacity.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// assert_eq!(BloomFilter::new(FilterSize::for_items(5000, 0.02))?.error_rate(), 0.02);
    /// # Ok(())
    /// # }
    /// ```
    pub fn error_rate(&self) -> f64 {
        f64::from_bits(self.error_rate)
    }

    /// True once [`BloomFilter::len`] has reached [`BloomFilter::capacity`]
    /// ([`BloomFilter::try_insert`] then refuses new items).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(2, 0.01))?;
    /// f.insert("a");
    /// assert!(!f.is_full());
    /// f.insert("b");
    /// assert!(f.is_full());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_full(&self) -> bool {
        self.items >= self.capacity
    }

    /// The false-positive rate measured from the bits actually set, whatever was inserted:
    /// `fill^k` for [`Layout::Standard`]; for [`Layout::Blocked`], the mean over blocks of
    /// `(block fill)^k` (a key probes one block). Unlike [`BloomFilter::expected_fp_rate`] it
    /// needs no item count, so it stays truthful past capacity, after a union, or when the
    /// same keys were inserted many times.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// for i in 0..1000u32 { f.insert(i.to_le_bytes()); }
    /// assert!((f.estimated_fpr() - 0.01).abs() < 0.003);
    /// for i in 1000..2000u32 { f.insert(i.to_le_bytes()); } // twice the capacity
    /// assert!(f.estimated_fpr() > 0.1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_fpr(&self) -> f64 {
        match self.layout {
            Layout::Standard => standard_fpr_from_ones(self.bits, self.k, self.ones()),
            Layout::Blocked => blocked_fpr_from_ones(
                self.k,
                self.words
                    .chunks_exact(BLOCK_WORDS as usize)
                    .map(|b| b.iter().map(|w| w.count_ones()).sum()),
            ),
        }
    }

    /// How many distinct items the bits set suggest were inserted (Swamidass and Baldi
    /// 2007): `-(m/k) ln(1 - X/m)` with `X` bits set out of `m`; for [`Layout::Blocked`] the
    /// same per 512-bit block, summed. Within a few percent of the truth up to well past
    /// capacity; a full block (every bit set) counts as if one bit were still clear.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(10_000, 0.01))?;
    /// for i in 0..5000u32 { f.insert(i.to_le_bytes()); f.insert(i.to_le_bytes()); }
    /// let est = f.estimated_len() as f64;
    /// assert!((est - 5000.0).abs() < 150.0, "{est}");
    /// # Ok(())
    /// # }
    /// ```
    pub fn estimated_len(&self) -> usize {
        match self.layout {
            Layout::Standard => standard_len_from_ones(self.bits, self.k, self.ones()),
            Layout::Blocked => blocked_len_from_ones(
                self.k,
                self.words
                    .chunks_exact(BLOCK_WORDS as usize)
                    .map(|b| b.iter().map(|w| w.count_ones()).sum()),
            ),
        }
    }

    fn check_same_shape(&self, other: &BloomFilter, op: &str) -> Result<()> {
        if self.layout != other.layout || self.bits != other.bits || self.k != other.k {
            return Err(Error::InvalidArgument(format!(
                "{op} needs filters of the same shape: {:?} layout, {} bits, k = {} vs {:?} \
                 layout, {} bits, k = {}",
                self.layout, self.bits, self.k, other.layout, other.bits, other.k
            )));
        }
        Ok(())
    }

    /// Adds every key of `other` to this filter (bitwise OR): afterwards it answers `true`
    /// for every key either filter held, exactly as a filter built from both key sets would.
    /// [`BloomFilter::len`] becomes [`BloomFilter::estimated_len`]; capacity and error rate
    /// stay this filter's.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut a = BloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// let mut b = BloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// a.insert("x");
    /// b.insert("y");
    /// a.union(&b)?;
    /// assert!(a.contains("x") && a.contains("y"));
    /// assert!(a.union(&BloomFilter::new(FilterSize::for_items(10, 0.01))?).is_err());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless both filters have the same layout, bit count and
    /// `k` (then nothing is changed).
    pub fn union(&mut self, other: &BloomFilter) -> Result<()> {
        self.check_same_shape(other, "union")?;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
        self.items = self.estimated_len() as u64;
        Ok(())
    }

    /// Keeps only the bits set in both filters (bitwise AND): afterwards it answers `true`
    /// for every key both filters held (and, as a Bloom filter's intersection does, for
    /// somewhat more absent keys than a filter built from the common keys alone).
    /// [`BloomFilter::len`] becomes [`BloomFilter::estimated_len`].
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut a = BloomFilter::new(FilterSize::for_items(1000, 0.01))?;
    /// let mut b = BloomFilter::new(FilterSize::for_items(1000, 0.01))?;
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
    /// As [`BloomFilter::union`].
    pub fn intersect(&mut self, other: &BloomFilter) -> Result<()> {
        self.check_same_shape(other, "intersect")?;
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
        self.items = self.estimated_len() as u64;
        Ok(())
    }

    /// Empties the filter (every bit clear, [`BloomFilter::len`] 0); shape, capacity and
    /// error rate stay.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// f.insert("x");
    /// f.clear();
    /// assert!(f.is_empty() && !f.contains("x"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn clear(&mut self) {
        self.words.fill(0);
        self.items = 0;
    }

    /// Serializes the filter (format version 2, `docs/FORMAT.md`, "Standalone filter files"):
    /// 40-byte header with the capacity and error rate, the bit array as little-endian u64
    /// words, CRC-32.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// f.insert("x");
    /// let bytes = f.to_bytes();
    /// assert_eq!(&bytes[..5], b"BKVF\x02");
    /// assert_eq!(BloomFilter::from_bytes(&bytes)?, f);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        self.encode(Some(self.sizing()))
    }

    /// The version-1 encoding (24-byte header, no capacity or rate) that SSTable filter
    /// blocks use.
    pub(crate) fn to_table_bytes(&self) -> Vec<u8> {
        self.encode(None)
    }

    fn sizing(&self) -> Sizing {
        Sizing {
            capacity: self.capacity,
            error_rate: self.error_rate(),
        }
    }

    fn encode(&self, sizing: Option<Sizing>) -> Vec<u8> {
        encoding::encode(
            Kind::Bloom,
            self.layout,
            self.k,
            self.bits,
            self.items,
            sizing,
            |out| {
                for w in &self.words {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            },
        )
    }

    /// Sets the item count (SSTable filters count distinct keys, not new-bit inserts).
    pub(crate) fn set_len(&mut self, items: u64) {
        self.items = items;
    }

    /// Reads a filter written by [`BloomFilter::to_bytes`] (format version 2) or by an
    /// earlier version (version 1, as SSTable filter blocks are: its capacity is taken to be
    /// its item count, at least 1, and its error rate the rate predicted there). Allocates no
    /// more than the input's length.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// let mut bytes = f.to_bytes();
    /// bytes[50] ^= 1;
    /// assert!(BloomFilter::from_bytes(&bytes).unwrap_err().is_corruption());
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Corruption`] (with the offset of the problem within `bytes`) for truncated,
    /// damaged or inconsistent input; [`Error::WrongFilterKind`] for another kind's intact
    /// bytes; [`Error::UnsupportedVersion`] for an intact filter of a newer format.
    pub fn from_bytes(bytes: &[u8]) -> Result<BloomFilter> {
        let view = encoding::validate_expecting(bytes, Some(Kind::Bloom))?;
        let words = view
            .payload
            .chunks_exact(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        let mut f = BloomFilter {
            layout: view.layout,
            k: view.k,
            bits: view.positions,
            items: view.items,
            capacity: 1,
            error_rate: 0.5f64.to_bits(),
            words,
        };
        match view.sizing {
            Some(s) => {
                f.capacity = s.capacity;
                f.error_rate = s.error_rate.to_bits();
            }
            None => f.set_sizing(view.items, None),
        }
        Ok(f)
    }

    /// Writes [`BloomFilter::to_bytes`] to `path`, atomically: a temporary file beside it is
    /// written and synced, then renamed over `path`.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomFilter, FilterSize};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("seen.bloom");
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// f.insert("x");
    /// f.save(&path)?;
    /// assert_eq!(BloomFilter::load(&path)?, f);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that could not be written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        file::save_atomic(path.as_ref(), &self.to_bytes())
    }

    /// Reads a filter saved by [`BloomFilter::save`].
    ///
    /// # Errors
    /// [`Error::Io`] naming the file if it cannot be read; [`Error::Corruption`] naming the
    /// file and the byte offset if it is damaged; [`Error::WrongFilterKind`] naming the file
    /// if it holds another kind of filter; [`Error::UnsupportedVersion`] naming the file for a
    /// newer format.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::Error;
    /// use bloomkv::filter::{BloomFilter, CountingBloomFilter, FilterSize};
    /// let dir = tempfile::tempdir()?;
    /// let mut f = BloomFilter::new(FilterSize::for_items(100, 0.01))?;
    /// f.insert("k");
    /// f.save(dir.path().join("f"))?;
    /// assert_eq!(BloomFilter::load(dir.path().join("f"))?, f);
    /// CountingBloomFilter::new(FilterSize::for_items(100, 0.01))?.save(dir.path().join("c"))?;
    /// let err = BloomFilter::load(dir.path().join("c")).unwrap_err();
    /// assert!(matches!(err, Error::WrongFilterKind { found: "counting", .. }));
    /// # Ok(())
    /// # }
    /// ```
    pub fn load(path: impl AsRef<Path>) -> Result<BloomFilter> {
        let path = path.as_ref();
        let bytes = file::read(path)?;
        Self::from_bytes(&bytes).map_err(|e| file::locate(e, path))
    }
}

/// Probes a serialized Bloom filter's payload in place (the bytes of the little-endian words,
/// so bit `p` is bit `p % 8` of byte `p / 8`). `true` if a position cannot be read.
#[inline]
pub(crate) fn contains_hash_in(
    layout: Layout,
    k: u32,
    bits: u64,
    payload: &[u8],
    hash: u64,
) -> bool {
    match layout {
        Layout::Standard => StandardProbes::new(hash, bits, k).all(|pos| {
            payload
                .get((pos >> 3) as usize)
                .is_none_or(|b| b & (1 << (pos & 7)) != 0)
        }),
        Layout::Blocked => {
            let first = (block_index(hash, bits / BLOCK_BITS) * (BLOCK_BITS / 8)) as usize;
            let Some(block) = payload
                .get(first..first + 64)
                .and_then(|b| <&[u8; 64]>::try_from(b).ok())
            else {
                return true;
            };
            BlockProbes::new(hash, k)
                .all(|off| block[(off >> 3) as usize & 63] & (1 << (off & 7)) != 0)
        }
    }
}

/// `len` zeroed words, or `InvalidArgument` if the allocation fails (a huge filter must be
/// an error, not an abort).
pub(crate) fn zeroed_words(len: u64) -> Result<Vec<u64>> {
    let too_big =
        || Error::InvalidArgument(format!("a filter of {len} words does not fit in memory"));
    let len = usize::try_from(len).map_err(|_| too_big())?;
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| too_big())?;
    v.resize(len, 0);
    Ok(v)
}
