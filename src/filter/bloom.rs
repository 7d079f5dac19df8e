//! [`BloomFilter`]: a set membership sketch with no false negatives.

use crate::error::{Error, Result};

use super::encoding::{self, Kind};
use super::layout::{BlockProbes, Layout, StandardProbes, block_index};
use super::math::{self, BLOCK_BITS};
use super::{MAX_HASHES, hash_key};

/// 64-bit words per 512-bit block.
const BLOCK_WORDS: u64 = BLOCK_BITS / 64;

/// A Bloom filter over byte-string keys.
///
/// Keys are hashed once with xxh3 ([`hash_key`]); the `k` probe positions are derived from that
/// hash. [`BloomFilter::contains`] never answers `false` for an inserted key, and answers
/// `true` for an absent key with probability about [`BloomFilter::expected_fp_rate`].
///
/// [`BloomFilter::with_rate`] and [`BloomFilter::with_bits_per_key`] build the
/// [`Layout::Standard`] (textbook) layout; [`BloomFilter::with_rate_blocked`],
/// [`BloomFilter::with_bits_per_key_blocked`] and [`BloomFilter::with_layout`] give the
/// cache-friendlier [`Layout::Blocked`] one, which SSTables use.
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::BloomFilter;
/// let mut seen = BloomFilter::with_rate(10_000, 0.01)?;
/// seen.insert("https://example.com/");
/// assert!(seen.contains("https://example.com/"));
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
    words: Vec<u64>,
}

impl BloomFilter {
    /// A standard-layout filter sized for `expected_items` keys at false-positive rate
    /// `fp_rate`: `m = ceil(-n ln p / (ln 2)^2)` bits and `k = round((m/n) ln 2)` probes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `expected_items` is 0, `fp_rate` is not strictly
    /// between 0 and 1, or the filter would not fit in memory.
    pub fn with_rate(expected_items: usize, fp_rate: f64) -> Result<BloomFilter> {
        Self::with_layout_rate(Layout::Standard, expected_items, fp_rate)
    }

    /// A standard-layout filter with `ceil(expected_items * bits_per_key)` bits and the
    /// best `k` for that many bits per key.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `expected_items` is 0, `bits_per_key` is not a positive
    /// finite number, or the filter would not fit in memory.
    pub fn with_bits_per_key(
        expected_items: usize,
        bits_per_key: impl Into<f64>,
    ) -> Result<BloomFilter> {
        Self::with_layout(Layout::Standard, expected_items, bits_per_key)
    }

    /// A blocked-layout filter sized so that the blocked model
    /// ([`math::blocked_false_positive_rate`]) predicts `fp_rate` at `expected_items` keys;
    /// it has a few percent more bits than [`BloomFilter::with_rate`] would give.
    ///
    /// # Errors
    /// As [`BloomFilter::with_rate`].
    pub fn with_rate_blocked(expected_items: usize, fp_rate: f64) -> Result<BloomFilter> {
        Self::with_layout_rate(Layout::Blocked, expected_items, fp_rate)
    }

    /// A blocked-layout filter with `expected_items * bits_per_key` bits (rounded up to whole
    /// 512-bit blocks) and [`math::optimal_blocked_hashes`] probes.
    ///
    /// # Errors
    /// As [`BloomFilter::with_bits_per_key`].
    pub fn with_bits_per_key_blocked(
        expected_items: usize,
        bits_per_key: impl Into<f64>,
    ) -> Result<BloomFilter> {
        Self::with_layout(Layout::Blocked, expected_items, bits_per_key)
    }

    /// A filter of the given layout with `bits_per_key` bits per expected item.
    ///
    /// # Errors
    /// As [`BloomFilter::with_bits_per_key`].
    pub fn with_layout(
        layout: Layout,
        expected_items: usize,
        bits_per_key: impl Into<f64>,
    ) -> Result<BloomFilter> {
        let (bits, k) = size_for_bits_per_key(layout, expected_items, bits_per_key.into())?;
        Self::with_params(layout, bits, k)
    }

    /// A filter of the given layout sized for `expected_items` keys at `fp_rate`.
    ///
    /// # Errors
    /// As [`BloomFilter::with_rate`].
    pub fn with_layout_rate(
        layout: Layout,
        expected_items: usize,
        fp_rate: f64,
    ) -> Result<BloomFilter> {
        let bpk = bits_per_key_for_rate(layout, expected_items, fp_rate)?;
        match layout {
            // Exactly the textbook m and k, without a round trip through bits per key.
            Layout::Standard => {
                let bits = math::optimal_bits(expected_items, fp_rate);
                let k = math::optimal_hashes(bits, expected_items);
                Self::with_params(layout, bits, k.clamp(1, MAX_HASHES))
            }
            Layout::Blocked => Self::with_layout(layout, expected_items, bpk),
        }
    }

    /// A filter with exactly `bits` bits (rounded up to whole blocks for [`Layout::Blocked`])
    /// and `k` probes per key.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `bits` is 0, `k` is outside `1..=64`, or the filter
    /// would not fit in memory.
    pub fn with_params(layout: Layout, bits: u64, k: u32) -> Result<BloomFilter> {
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
        Ok(BloomFilter {
            layout,
            k,
            bits,
            items: 0,
            words,
        })
    }

    /// Adds a key.
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        self.insert_hash(hash_key(key.as_ref()));
    }

    /// Adds a key by its [`hash_key`] hash.
    #[inline]
    pub fn insert_hash(&mut self, hash: u64) {
        self.items = self.items.saturating_add(1);
        match self.layout {
            Layout::Standard => {
                for pos in StandardProbes::new(hash, self.bits, self.k) {
                    self.words[(pos >> 6) as usize] |= 1 << (pos & 63);
                }
            }
            Layout::Blocked => {
                let first = (block_index(hash, self.bits / BLOCK_BITS) * BLOCK_WORDS) as usize;
                let block = &mut self.words[first..first + BLOCK_WORDS as usize];
                for off in BlockProbes::new(hash, self.k) {
                    block[(off >> 6) as usize & 7] |= 1 << (off & 63);
                }
            }
        }
    }

    /// May `key` have been inserted? Never `false` for an inserted key.
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.contains_hash(hash_key(key.as_ref()))
    }

    /// [`BloomFilter::contains`] for a key given by its [`hash_key`] hash.
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
    /// the textbook formula for [`Layout::Standard`], the block model for
    /// [`Layout::Blocked`]. 0 for an empty filter.
    pub fn expected_fp_rate(&self) -> f64 {
        predicted_rate(self.layout, self.bits, self.items, self.k)
    }

    /// Number of bits `m` in the filter.
    pub fn bit_len(&self) -> u64 {
        self.bits
    }

    /// Number of probes `k` per key.
    pub fn num_hashes(&self) -> u32 {
        self.k
    }

    /// Number of [`BloomFilter::insert`] calls so far (a key inserted twice counts twice;
    /// the filter cannot tell).
    pub fn len(&self) -> usize {
        usize::try_from(self.items).unwrap_or(usize::MAX)
    }

    /// True if nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.items == 0
    }

    /// The layout of the bit array.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Fraction of bits set, a direct measure of how full the filter is (the false-positive
    /// rate of the standard layout is about this fraction to the power `k`).
    pub fn fill_ratio(&self) -> f64 {
        let ones: u64 = self.words.iter().map(|w| u64::from(w.count_ones())).sum();
        ones as f64 / self.bits as f64
    }

    /// Serializes the filter (format in `docs/FILTERS.md`): 24-byte header, the bit array as
    /// little-endian u64 words, CRC-32.
    pub fn to_bytes(&self) -> Vec<u8> {
        encoding::encode(
            Kind::Bloom,
            self.layout,
            self.k,
            self.bits,
            self.items,
            |out| {
                for w in &self.words {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            },
        )
    }

    /// Reads a filter written by [`BloomFilter::to_bytes`]. Allocates no more than the
    /// input's length.
    ///
    /// # Errors
    /// [`Error::Corruption`] (with the offset of the problem within `bytes`) for truncated,
    /// damaged or inconsistent input, including a counting filter's bytes;
    /// [`Error::UnsupportedVersion`] for an intact filter of a newer format.
    pub fn from_bytes(bytes: &[u8]) -> Result<BloomFilter> {
        let view = encoding::validate(bytes)?;
        if view.kind != Kind::Bloom {
            return Err(Error::corrupt_bytes(
                5,
                "a counting filter, not a Bloom filter",
            ));
        }
        let words = view
            .payload
            .chunks_exact(8)
            .map(|c| {
                let mut w = [0u8; 8];
                w.copy_from_slice(c);
                u64::from_le_bytes(w)
            })
            .collect();
        Ok(BloomFilter {
            layout: view.layout,
            k: view.k,
            bits: view.positions,
            items: view.items,
            words,
        })
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

/// The rate a filter's parameters predict for `items` keys.
pub(crate) fn predicted_rate(layout: Layout, bits: u64, items: u64, k: u32) -> f64 {
    match layout {
        Layout::Standard => math::false_positive_rate(bits, items, k),
        Layout::Blocked => math::blocked_false_positive_rate(bits, items, k),
    }
}

/// Bits and probes for `n` keys at `bits_per_key`, validated.
pub(crate) fn size_for_bits_per_key(
    layout: Layout,
    n: usize,
    bits_per_key: f64,
) -> Result<(u64, u32)> {
    if n == 0 {
        return Err(Error::InvalidArgument(
            "expected_items must be at least 1".into(),
        ));
    }
    if !(bits_per_key.is_finite() && bits_per_key > 0.0) {
        return Err(Error::InvalidArgument(format!(
            "bits_per_key must be a positive number, not {bits_per_key}"
        )));
    }
    let bits = (n as f64 * bits_per_key).ceil();
    if bits >= u64::MAX as f64 {
        return Err(Error::InvalidArgument(format!(
            "{n} keys at {bits_per_key} bits/key is too large"
        )));
    }
    let bits = math::float_to_u64(bits).max(1);
    let k = match layout {
        Layout::Standard => math::optimal_hashes(bits_per_key, 1u32),
        Layout::Blocked => math::optimal_blocked_hashes(bits_per_key),
    };
    Ok((bits, k.clamp(1, MAX_HASHES)))
}

/// Bits per key for `n` keys at rate `p` in `layout`, validated.
pub(crate) fn bits_per_key_for_rate(layout: Layout, n: usize, p: f64) -> Result<f64> {
    if n == 0 {
        return Err(Error::InvalidArgument(
            "expected_items must be at least 1".into(),
        ));
    }
    if !(p > 0.0 && p < 1.0) {
        return Err(Error::InvalidArgument(format!(
            "fp_rate must be strictly between 0 and 1, not {p}"
        )));
    }
    Ok(match layout {
        // Same m as optimal_bits(n, p), expressed per key.
        Layout::Standard => math::optimal_bits(n, p) as f64 / n as f64,
        Layout::Blocked => math::blocked_bits_per_key(p),
    })
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
