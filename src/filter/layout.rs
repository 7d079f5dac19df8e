//! Where a key's probes land: the key's one hash, the two layouts, and the index math they
//! share. The bottom of `filter`: everything else in it builds on this file, which uses none
//! of it.
//!
//! Every probe position is derived from the key's one 64-bit xxh3 hash; the key itself is
//! never read again. Positions are `u64` throughout, and ranges are reduced with a
//! multiply-shift (`(x * n) >> 64` in 128 bits) rather than `%`, so arrays beyond 2^32 bits
//! work and no division sits on the lookup path.
//!
//! Public (re-exported as `filter::*`, [`BLOCK_BITS`] as `filter::math::BLOCK_BITS`):
//! [`hash_key`], [`MAX_HASHES`], [`Layout`], and for a program that keeps a blocked filter's
//! bits itself (the server stores one block per value), [`BlockedProbe`] and [`stage_hash`].
//! The probe iterators and the mixing and reduction helpers are the crate's own.

/// Bits in one block of the blocked layout: one 64-byte cache line.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, FilterSize, math::BLOCK_BITS};
/// assert_eq!(BloomFilter::new(FilterSize::bits(1, 1).blocked())?.bit_len(), BLOCK_BITS);
/// # Ok(())
/// # }
/// ```
pub const BLOCK_BITS: u64 = 512;

/// Most probes per key a filter uses. More would cost lookup time for rates already far below
/// anything measurable (64 probes is the optimum near 92 bits per key).
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, FilterSize, MAX_HASHES};
/// assert!(BloomFilter::new(FilterSize::bits(1024, MAX_HASHES)).is_ok());
/// assert!(BloomFilter::new(FilterSize::bits(1024, MAX_HASHES + 1)).is_err());
/// # Ok(())
/// # }
/// ```
pub const MAX_HASHES: u32 = 64;

/// The one hash bloomkv uses for filter keys: xxh3, 64 bits, seed 0.
///
/// A key is hashed once; all probes (and, in the engine, all tables consulted by one lookup)
/// reuse this value.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, FilterSize, hash_key};
/// let mut f = BloomFilter::new(FilterSize::for_items(10, 0.01))?;
/// f.insert_hash(hash_key(b"k"));
/// assert!(f.contains(b"k")); // `insert` hashes the same way
/// # Ok(())
/// # }
/// ```
#[inline]
pub fn hash_key(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}

/// How a filter spreads a key's probes over its bit array.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::filter::{BloomFilter, FilterSize, Layout};
/// let standard = BloomFilter::new(FilterSize::bits_per_key(1000, 10))?;
/// let blocked = BloomFilter::new(FilterSize::bits_per_key(1000, 10).blocked())?;
/// assert_eq!((standard.layout(), blocked.layout()), (Layout::Standard, Layout::Blocked));
/// assert_eq!(blocked.bit_len() % 512, 0); // whole 512-bit blocks
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Textbook layout: probes spread over the whole array, so the false-positive rate follows
    /// [`math::false_positive_rate`](super::math::false_positive_rate). A lookup may touch
    /// `k` cache lines.
    Standard,
    /// All probes of a key fall in one 512-bit (64-byte) block chosen by the hash, so a lookup
    /// touches one cache line. Costs a little false-positive rate (see
    /// [`math::blocked_false_positive_rate`](super::math::blocked_false_positive_rate)); the
    /// layout of SSTable filters.
    Blocked,
}

impl Layout {
    /// The byte that stands for this layout in the serialized form.
    pub(crate) fn tag(self) -> u8 {
        match self {
            Layout::Standard => 0,
            Layout::Blocked => 1,
        }
    }

    /// The layout a serialized tag stands for.
    pub(crate) fn from_tag(tag: u8) -> Option<Layout> {
        match tag {
            0 => Some(Layout::Standard),
            1 => Some(Layout::Blocked),
            _ => None,
        }
    }

    /// Rounds a requested number of bits to one this layout can use: at least 1 bit for
    /// [`Layout::Standard`], a positive multiple of 512 for [`Layout::Blocked`]. `None` on
    /// overflow.
    pub(crate) fn round_bits(self, bits: u64) -> Option<u64> {
        match self {
            Layout::Standard => Some(bits.max(1)),
            Layout::Blocked => bits.max(1).checked_next_multiple_of(BLOCK_BITS),
        }
    }
}

/// Maps `x` uniformly onto `0..n` with a multiply-shift: `floor(x * n / 2^64)`.
///
/// Uses the high bits of `x`, needs no division, and is exact for every `n` up to `u64::MAX`
/// (so filters beyond 2^32 bits or blocks index correctly).
#[inline]
pub(crate) fn reduce(x: u64, n: u64) -> u64 {
    ((u128::from(x) * u128::from(n)) >> 64) as u64
}

/// A bijective 64-bit mixer (the SplitMix64 finaliser): every output bit depends on every
/// input bit. Turns the key hash into a second, practically independent value for probes.
#[inline]
pub(crate) fn mix64(mut x: u64) -> u64 {
    x ^= x >> 30;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 27;
    x = x.wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The block of the blocked layout that a hash selects, among `num_blocks` blocks.
#[inline]
pub(crate) fn block_index(hash: u64, num_blocks: u64) -> u64 {
    reduce(hash, num_blocks)
}

/// Standard-layout probe positions in `0..bits`, by enhanced double hashing: position `i` is
/// `reduce(h1 + i*h2 + (i^3 - i)/6, bits)` with `h1` the hash and `h2 = mix64(hash)`. The cubic
/// term keeps two keys whose `(h1, h2)` nearly agree from sharing all their probes.
#[derive(Debug, Clone)]
pub(crate) struct StandardProbes {
    x: u64,
    delta: u64,
    step: u64,
    bits: u64,
    left: u32,
}

impl StandardProbes {
    /// The `k` probe positions of `hash` in an array of `bits` bits.
    #[inline]
    pub(crate) fn new(hash: u64, bits: u64, k: u32) -> Self {
        StandardProbes {
            x: hash,
            delta: mix64(hash),
            step: 0,
            bits,
            left: k,
        }
    }
}

impl Iterator for StandardProbes {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let pos = reduce(self.x, self.bits);
        self.x = self.x.wrapping_add(self.delta);
        self.step = self.step.wrapping_add(1);
        self.delta = self.delta.wrapping_add(self.step);
        Some(pos)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

/// Blocked-layout probe offsets within a key's 512-bit block: consecutive 9-bit fields of
/// `mix64(hash)` (seven per mixed word; the word is re-mixed when they run out). The block
/// itself comes from the raw hash via [`block_index`], the offsets from its mix, so the two
/// are practically independent.
#[derive(Debug, Clone)]
pub(crate) struct BlockProbes {
    /// The current mixed word, whole; `fields` is what is left of it.
    word: u64,
    fields: u64,
    fields_left: u32,
    left: u32,
}

/// 9-bit fields per 64-bit word.
const FIELDS_PER_WORD: u32 = 7;

impl BlockProbes {
    /// The `k` in-block bit offsets (`0..512`) of `hash`.
    #[inline]
    pub(crate) fn new(hash: u64, k: u32) -> Self {
        let word = mix64(hash);
        BlockProbes {
            word,
            fields: word,
            fields_left: FIELDS_PER_WORD,
            left: k,
        }
    }
}

impl Iterator for BlockProbes {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        if self.fields_left == 0 {
            // Re-mix the whole previous word (not its consumed remainder, which is down to
            // one bit) so that every group of seven probes gets 63 fresh bits.
            self.word = mix64(self.word.wrapping_add(0x9e37_79b9_7f4a_7c15));
            self.fields = self.word;
            self.fields_left = FIELDS_PER_WORD;
        }
        self.fields_left -= 1;
        let offset = (self.fields & 511) as u32;
        self.fields >>= 9;
        Some(offset)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left as usize, Some(self.left as usize))
    }
}

/// Where a key's probes fall in a blocked-layout Bloom filter whose bits the caller keeps
/// itself (say one 512-bit block per stored value): the block, and the `k` bit offsets in it.
/// These are the positions a [`BloomFilter`](super::BloomFilter) of [`Layout::Blocked`] with
/// the same size and probe count sets for the key (`docs/FORMAT.md`, "Filter block"): offset
/// `o` of block `b` is bit `b * 512 + o` of the filter, bit `o % 8` of byte `o / 8` of the
/// block's 64 bytes.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BlockedProbe, hash_key, math::BLOCK_BITS};
/// let mut blocks = vec![[0u8; 64]; 8]; // a filter of 8 blocks, 3 probes per key
/// let bits = blocks.len() as u64 * BLOCK_BITS;
/// let probe = BlockedProbe::new(hash_key(b"apple"), bits, 3);
/// let block = &mut blocks[probe.block() as usize];
/// for o in probe {
///     block[o as usize / 8] |= 1 << (o % 8);
/// }
/// let probe = BlockedProbe::new(hash_key(b"apple"), bits, 3);
/// let block = &blocks[probe.block() as usize];
/// assert!(probe.into_iter().all(|o| block[o as usize / 8] & (1 << (o % 8)) != 0));
/// ```
#[derive(Debug, Clone)]
pub struct BlockedProbe {
    block: u64,
    offsets: BlockProbes,
}

impl BlockedProbe {
    /// The probes of the key whose [`hash_key`] is `hash`, in a filter of
    /// `bits` bits (whole 512-bit blocks: a remainder is ignored) with `k` probes per key.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::BlockedProbe;
    /// let probe = BlockedProbe::new(42, 4 * 512, 9);
    /// assert!(probe.block() < 4);
    /// assert_eq!(probe.count(), 9);
    /// ```
    #[inline]
    pub fn new(hash: u64, bits: u64, k: u32) -> Self {
        BlockedProbe {
            block: block_index(hash, bits / BLOCK_BITS),
            offsets: BlockProbes::new(hash, k),
        }
    }

    /// The block the key's probes fall in: `0..bits / 512` (0 for a filter smaller than a
    /// block).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::BlockedProbe;
    /// assert_eq!(BlockedProbe::new(u64::MAX, 10 * 512, 6).block(), 9);
    /// ```
    #[inline]
    pub fn block(&self) -> u64 {
        self.block
    }
}

/// The bit offsets (`0..512`) within [`BlockedProbe::block`], one per probe.
impl Iterator for BlockedProbe {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        self.offsets.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.offsets.size_hint()
    }
}

/// The hash a key has in member `n` of a group of filters that must not put it in the same
/// places (the stages of a filter that grows, say): `hash` itself for `n == 0`, for any other
/// `n` a remix of `hash` and `n` that is practically independent of both. Positions derived
/// from it may be stored: it will not change.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BlockedProbe, hash_key, stage_hash};
/// let h = hash_key(b"k");
/// assert_eq!(stage_hash(h, 0), h);
/// assert_ne!(stage_hash(h, 1), stage_hash(h, 2));
/// // Stage 1 of a chain: where the key goes in the second filter.
/// let second = BlockedProbe::new(stage_hash(h, 1), 1 << 20, 7);
/// assert!(second.block() < (1 << 20) / 512);
/// ```
#[inline]
pub fn stage_hash(hash: u64, n: u32) -> u64 {
    if n == 0 {
        hash
    } else {
        mix64(hash ^ u64::from(n).wrapping_mul(0x9e37_79b9_7f4a_7c15))
    }
}

/// All probe positions of `hash` as absolute positions in `0..bits`, for either layout. The
/// plain filters use the specialised loops; the counting filter uses this.
pub(crate) fn positions(layout: Layout, hash: u64, bits: u64, k: u32) -> Positions {
    match layout {
        Layout::Standard => Positions::Standard(StandardProbes::new(hash, bits, k)),
        Layout::Blocked => {
            let base = block_index(hash, bits / BLOCK_BITS) * BLOCK_BITS;
            Positions::Blocked(base, BlockProbes::new(hash, k))
        }
    }
}

/// Iterator returned by [`positions`].
#[derive(Debug, Clone)]
pub(crate) enum Positions {
    Standard(StandardProbes),
    Blocked(u64, BlockProbes),
}

impl Iterator for Positions {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        match self {
            Positions::Standard(p) => p.next(),
            Positions::Blocked(base, p) => p.next().map(|o| *base + u64::from(o)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduce_covers_the_full_range_beyond_32_bits() {
        let n = (1u64 << 36) + 12_345;
        assert_eq!(reduce(0, n), 0);
        assert_eq!(reduce(u64::MAX, n), n - 1);
        assert_eq!(reduce(1u64 << 63, n), n / 2);
        // Positions beyond 2^32 are actually produced for a > 2^32-bit array.
        let max = (0..10_000u64)
            .flat_map(|i| StandardProbes::new(hash_key(&i.to_le_bytes()), n, 7))
            .max()
            .unwrap();
        assert!(max > 1u64 << 35 && max < n);
    }

    #[test]
    fn probes_beyond_the_seventh_vary_with_the_hash() {
        // Regression: the 8th and later offsets once came from an exhausted word and took
        // only two values.
        let distinct: std::collections::HashSet<Vec<u32>> = (0..1000u64)
            .map(|i| BlockProbes::new(mix64(i), 14).skip(7).collect())
            .collect();
        assert!(distinct.len() > 990, "{}", distinct.len());
    }

    #[test]
    fn block_offsets_stay_in_block() {
        for i in 0..1000u64 {
            let h = mix64(i);
            assert!(BlockProbes::new(h, 30).all(|o| o < 512));
            assert_eq!(BlockProbes::new(h, 30).count(), 30);
        }
    }

    #[test]
    fn helpers_keep_their_documented_values() {
        assert_eq!(reduce(0, 10), 0);
        assert_eq!(reduce(u64::MAX, 10), 9);
        assert_eq!(reduce(1 << 63, 10), 5);
        assert_ne!(mix64(1), mix64(2));
        assert_eq!(mix64(0), 0); // a bijection fixing 0
        assert!(block_index(hash_key(b"k"), 8) < 8);
        let probes: Vec<u64> = StandardProbes::new(hash_key(b"k"), 1000, 7).collect();
        assert_eq!(probes.len(), 7);
        assert!(probes.iter().all(|&p| p < 1000));
        assert_eq!(StandardProbes::new(42, 64, 3).count(), 3);
        assert_eq!(BlockProbes::new(42, 9).count(), 9); // past seven fields the word is re-mixed
    }

    #[test]
    fn standard_probes_reach_beyond_2_pow_32() {
        const BIG: u64 = (1 << 36) + 1234; // 64 Gbit: never allocated here
        let mut max = 0;
        let mut high = 0usize;
        let mut total = 0usize;
        for i in 0..20_000u64 {
            for p in StandardProbes::new(hash_key(&i.to_le_bytes()), BIG, 7) {
                assert!(p < BIG);
                max = max.max(p);
                high += usize::from(p >= 1 << 32);
                total += 1;
            }
        }
        // Uniform over 0..BIG: all but 1/16 of the probes land above 2^32.
        let share = high as f64 / total as f64;
        assert!((0.92..0.955).contains(&share), "{share}");
        assert!(max > BIG - BIG / 1000);
    }

    #[test]
    fn blocked_probe_is_where_the_blocked_layout_puts_the_key() {
        for i in 0..1000u64 {
            let h = mix64(i);
            for (bits, k) in [(512u64, 1u32), (8 * 512, 6), (1000 * 512 + 100, 13)] {
                let probe = BlockedProbe::new(h, bits, k);
                let base = probe.block() * BLOCK_BITS;
                let public: Vec<u64> = probe.map(|o| base + u64::from(o)).collect();
                let internal: Vec<u64> = positions(Layout::Blocked, h, bits, k).collect();
                assert_eq!(public, internal);
            }
        }
        assert_eq!(BlockedProbe::new(7, 100, 3).block(), 0); // less than a block
    }

    #[test]
    fn stage_hash_is_pinned() {
        // Callers store positions derived from it (the server's BF.* filters): its values are
        // part of their data.
        assert_eq!(stage_hash(12_345, 0), 12_345);
        assert_eq!(
            stage_hash(12_345, 3),
            mix64(12_345 ^ 3u64.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        );
        let distinct: std::collections::HashSet<u64> = (0..100).map(|n| stage_hash(1, n)).collect();
        assert_eq!(distinct.len(), 100);
    }
}
