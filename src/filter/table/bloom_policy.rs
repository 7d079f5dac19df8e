//! [`BloomPolicy`]: the [`FilterPolicy`] SSTables use, blocked Bloom filters.

use crate::error::{Error, Result};

use crate::filter::layout::{BlockProbes, Layout, block_index, mix64};
use crate::filter::policy::FilterPolicy;
use crate::filter::sizing::params::{predicted_rate, size_for_bits_per_key};
use crate::filter::standalone::bloom::{BloomFilter, contains_hash_in};
use crate::filter::standalone::encoding::{self, Kind};

/// Smallest bits per key a policy uses.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, FilterPolicy, MIN_BITS_PER_KEY};
/// assert_eq!(BloomPolicy::new(0.1).bits_per_key(), MIN_BITS_PER_KEY);
/// ```
pub const MIN_BITS_PER_KEY: f64 = 1.0;
/// Largest bits per key a policy uses (beyond ~50 the probe cap of 64 makes more bits useless).
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, MAX_BITS_PER_KEY};
/// assert!(BloomPolicy::try_new(MAX_BITS_PER_KEY + 1.0).is_err());
/// ```
pub const MAX_BITS_PER_KEY: f64 = 1000.0;

/// Builds [`Layout::Blocked`] Bloom filters for SSTables, serialized in filter format
/// version 1 (no capacity or rate fields), which [`BloomFilter::from_bytes`] reads too.
///
/// Lookups ([`FilterPolicy::may_contain_hash`]) read the 24-byte header and probe one 64-byte
/// block of the table's filter bytes in place: no copy, no checksum. The checksum is verified
/// once by [`FilterPolicy::check_filter`] when a table opens.
///
/// "No filter" is expressed by not having a policy (`Option<Arc<dyn FilterPolicy>>` in the
/// options), not by a policy with zero bits.
///
/// # Examples
/// ```
/// use bloomkv::filter::{BloomPolicy, FilterPolicy};
/// let policy = BloomPolicy::new(10);
/// let filter = policy.create_filter(&[b"apple", b"pear"]);
/// policy.check_filter(&filter).unwrap();
/// assert!(policy.may_contain(&filter, b"apple"));
/// assert_eq!(policy.name(), BloomPolicy::NAME);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BloomPolicy {
    bits_per_key: f64,
}

impl BloomPolicy {
    /// The stable name stored beside each filter built by this policy.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{BloomPolicy, FilterPolicy};
    /// assert_eq!(BloomPolicy::default().name(), "bloomkv.BloomFilter");
    /// ```
    pub const NAME: &'static str = "bloomkv.BloomFilter";

    /// A policy building filters with `bits_per_key` bits per key (10 gives about 1%
    /// false positives). Values are clamped to
    /// [`MIN_BITS_PER_KEY`]`..=`[`MAX_BITS_PER_KEY`] (NaN becomes the minimum); use
    /// [`BloomPolicy::try_new`] to have them rejected instead.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{BloomPolicy, FilterPolicy};
    /// assert_eq!(BloomPolicy::new(12).bits_per_key(), 12.0);
    /// assert_eq!(BloomPolicy::new(f64::NAN).bits_per_key(), 1.0); // clamped
    /// ```
    pub fn new(bits_per_key: impl Into<f64>) -> Self {
        let b: f64 = bits_per_key.into();
        let bits_per_key = if b.is_nan() {
            MIN_BITS_PER_KEY
        } else {
            b.clamp(MIN_BITS_PER_KEY, MAX_BITS_PER_KEY)
        };
        BloomPolicy { bits_per_key }
    }

    /// A policy with `bits_per_key` bits per key.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] unless `bits_per_key` is within
    /// [`MIN_BITS_PER_KEY`]`..=`[`MAX_BITS_PER_KEY`].
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::BloomPolicy;
    /// assert!(BloomPolicy::try_new(10).is_ok());
    /// assert!(BloomPolicy::try_new(0.5).is_err());
    /// ```
    pub fn try_new(bits_per_key: impl Into<f64>) -> Result<Self> {
        let b: f64 = bits_per_key.into();
        if (MIN_BITS_PER_KEY..=MAX_BITS_PER_KEY).contains(&b) {
            Ok(BloomPolicy { bits_per_key: b })
        } else {
            Err(Error::InvalidArgument(format!(
                "bits_per_key must be within {MIN_BITS_PER_KEY}..={MAX_BITS_PER_KEY}, not {b}"
            )))
        }
    }

    /// Builds the filter as a [`BloomFilter`] (what [`FilterPolicy::create_filter_from_hashes`]
    /// serializes).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if the filter would not fit in memory.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BloomPolicy, Layout, hash_key};
    /// let hashes = [hash_key(b"a"), hash_key(b"a"), hash_key(b"b")];
    /// let f = BloomPolicy::new(10).build(&hashes)?;
    /// assert_eq!((f.layout(), f.len()), (Layout::Blocked, 2)); // repeats count once
    /// assert!(f.contains(b"a") && f.contains(b"b"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn build(&self, hashes: &[u64]) -> Result<BloomFilter> {
        // Consecutive equal hashes are versions of one user key in a sorted table: size the
        // filter for distinct keys, not entries.
        let distinct = hashes.len() - hashes.windows(2).filter(|w| w[0] == w[1]).count();
        let (bits, k) = size_for_bits_per_key(Layout::Blocked, distinct.max(1), self.bits_per_key)?;
        let mut filter = BloomFilter::exactly(Layout::Blocked, bits, k)?;
        let mut previous = None;
        for &h in hashes {
            if previous != Some(h) {
                filter.insert_hash(h);
            }
            previous = Some(h);
        }
        // A table filter counts its distinct keys, including those that found all their
        // bits already set (FORMAT.md: "distinct adjacent hashes").
        filter.set_len(distinct as u64);
        Ok(filter)
    }
}

impl Default for BloomPolicy {
    /// 10 bits per key, about 1% false positives.
    fn default() -> Self {
        BloomPolicy::new(10.0)
    }
}

impl FilterPolicy for BloomPolicy {
    fn uses_default_hash(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        Self::NAME
    }

    fn bits_per_key(&self) -> f64 {
        self.bits_per_key
    }

    fn with_bits_per_key(&self, bits_per_key: f64) -> Option<std::sync::Arc<dyn FilterPolicy>> {
        Some(std::sync::Arc::new(BloomPolicy::new(bits_per_key)))
    }

    fn predicted_fp_rate(&self, bits_per_key: f64) -> f64 {
        let b = BloomPolicy::new(bits_per_key).bits_per_key;
        // A large reference set: the blocked layout's rate per key barely depends on it.
        const N: u64 = 1 << 20;
        match size_for_bits_per_key(Layout::Blocked, N as usize, b) {
            Ok((bits, k)) => predicted_rate(Layout::Blocked, bits, N, k),
            Err(_) => 1.0,
        }
    }

    /// A blocked filter over `hashes` in the version-1 encoding (`docs/FORMAT.md`, "Filter
    /// block"), which [`BloomFilter::from_bytes`] reads. Should the filter not fit in memory,
    /// returns an empty vector, which every reader treats as "may contain".
    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        self.build(hashes)
            .map(|f| f.to_table_bytes())
            .unwrap_or_default()
    }

    fn check_filter(&self, filter: &[u8]) -> Result<()> {
        let view = encoding::validate(filter)?;
        if view.kind != Kind::Bloom {
            return Err(Error::corrupt_bytes(
                5,
                format!("{}, not a Bloom filter", view.kind.describe()),
            ));
        }
        Ok(())
    }

    #[inline]
    fn may_contain_hash(&self, filter: &[u8], hash: u64) -> bool {
        match probe_table_filter(filter, hash) {
            Some(maybe) => maybe,
            None => may_contain_any(filter, hash),
        }
    }

    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64> {
        let v = encoding::peek(filter)?;
        (v.kind == Kind::Bloom).then(|| predicted_rate(v.layout, v.positions, v.items, v.k))
    }
}

/// Any filter bytes a table might hold that [`probe_table_filter`] does not take (a standard
/// layout, version-2 bytes): the general decoder. `true` when the bytes do not decode.
#[cold]
#[inline(never)]
fn may_contain_any(filter: &[u8], hash: u64) -> bool {
    match encoding::peek(filter) {
        Some(v) if v.kind == Kind::Bloom => {
            contains_hash_in(v.layout, v.k, v.positions, v.payload, hash)
        }
        _ => true,
    }
}

/// The first eight header bytes of what [`BloomPolicy`] writes, `k` (byte 7) masked out:
/// magic `BKVF`, format version 1, kind 0 (Bloom), layout 1 (blocked).
const TABLE_HEADER_TAG: u64 = u64::from_le_bytes([b'B', b'K', b'V', b'F', 1, 0, 1, 0]);

/// The lookup of a blocked version-1 filter, the only kind [`BloomPolicy`] writes, in the
/// fewest instructions: one compare for magic, version, kind and layout, the size checked
/// against the slice, then all `k` bits of the key's 64-byte block tested without an early
/// exit (an exit at a random probe mispredicts about once per absent key, which cost more
/// than the probes it saved). Answers exactly as [`contains_hash_in`] does for these bytes.
/// `None` for anything else (the caller then decodes the bytes in full).
#[inline]
fn probe_table_filter(filter: &[u8], hash: u64) -> Option<bool> {
    let (header, rest) = filter.split_first_chunk::<{ encoding::HEADER_LEN_V1 }>()?;
    let (tag, fields) = header.split_first_chunk::<8>()?;
    let tag = u64::from_le_bytes(*tag);
    let bits = u64::from_le_bytes(*fields.first_chunk::<8>()?);
    let k = (tag >> 56) as u32;
    let payload_len = rest.len().checked_sub(encoding::TRAILER_LEN)? as u64;
    // Whole 64-byte blocks exactly filling the payload, as `bits` says: then every block
    // `reduce` can pick lies inside it. `k` within 1..=64.
    if tag & !(0xff << 56) != TABLE_HEADER_TAG
        || k.wrapping_sub(1) >= crate::filter::layout::MAX_HASHES
        || !payload_len.is_multiple_of(64)
        || payload_len == 0
        || bits != payload_len * 8
    {
        return None;
    }
    let first = (block_index(hash, payload_len / 64) * 64) as usize;
    let block: &[u8; 64] = rest.get(first..)?.first_chunk::<64>()?;
    Some(match k {
        6 => probe_block::<6>(block, hash),
        7 => probe_block::<7>(block, hash),
        5 => probe_block::<5>(block, hash),
        8 => probe_block::<8>(block, hash),
        9 => probe_block::<9>(block, hash),
        4 => probe_block::<4>(block, hash),
        10 => probe_block::<10>(block, hash),
        11 => probe_block::<11>(block, hash),
        _ => probe_block_k(block, hash, k),
    })
}

/// Tests the `K` in-block bits of `hash` ([`BlockProbes`]: 9-bit fields of `mix64(hash)`,
/// seven per word, the word re-mixed after seven) without branching.
#[inline(always)]
fn probe_block<const K: u32>(block: &[u8; 64], hash: u64) -> bool {
    let mut word = mix64(hash);
    let mut fields = word;
    let mut all = 1u8;
    for i in 0..K {
        if i > 0 && i % 7 == 0 {
            word = mix64(word.wrapping_add(0x9e37_79b9_7f4a_7c15));
            fields = word;
        }
        let off = (fields & 511) as usize;
        all &= block[off >> 3] >> (off & 7);
        fields >>= 9;
    }
    all & 1 != 0
}

/// [`probe_block`] for a `k` known only at run time (beyond the common sizes).
fn probe_block_k(block: &[u8; 64], hash: u64, k: u32) -> bool {
    BlockProbes::new(hash, k).all(|off| block[(off >> 3) as usize & 63] & (1 << (off & 7)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::{BloomFilter, FilterSize, hash_key};

    /// The fast lookup must answer exactly as the general decoder for every `k` a table
    /// filter can carry (the unrolled sizes, the re-mix after seven probes, the fallback),
    /// present and absent keys alike.
    #[test]
    fn fast_probe_agrees_with_the_general_decoder_for_every_k() {
        for k in 1..=crate::filter::layout::MAX_HASHES {
            let bits: u64 = 512 * 40;
            let mut f =
                BloomFilter::new(FilterSize::bits(bits, k).with_layout(Layout::Blocked)).unwrap();
            for i in 0..(bits / 12) {
                f.insert_hash(hash_key(&i.to_le_bytes()));
            }
            let bytes = f.to_table_bytes();
            let mut maybes = 0;
            for i in 0..20_000u64 {
                let h = hash_key(&(i * 7).to_le_bytes());
                let general = may_contain_any(&bytes, h);
                assert_eq!(
                    probe_table_filter(&bytes, h),
                    Some(general),
                    "k {k} key {i}"
                );
                maybes += u32::from(general);
            }
            // Neither all nor none: the comparison saw both answers.
            assert!(maybes > 20 && maybes < 20_000, "k {k}: {maybes}");
        }
    }

    /// Bytes the fast path does not take go to the general decoder, and bytes neither can
    /// read answer "may contain".
    #[test]
    fn other_bytes_fall_back_to_the_general_decoder() {
        let mut f =
            BloomFilter::new(FilterSize::bits(4096, 5).with_layout(Layout::Standard)).unwrap();
        f.insert_hash(42);
        let standard = f.to_table_bytes();
        assert_eq!(probe_table_filter(&standard, 42), None);
        assert!(BloomPolicy::default().may_contain_hash(&standard, 42));

        let mut g =
            BloomFilter::new(FilterSize::bits(1024, 6).with_layout(Layout::Blocked)).unwrap();
        g.insert_hash(7);
        let mut bytes = g.to_table_bytes();
        let policy = BloomPolicy::default();
        assert!(policy.may_contain_hash(&bytes, 7));
        // A size that does not fill the payload, k of 0, a truncation: "may contain".
        for damage in [
            |b: &mut Vec<u8>| b[8] ^= 0x02,
            |b: &mut Vec<u8>| b[7] = 0,
            |b: &mut Vec<u8>| b.truncate(b.len() - 5),
            |b: &mut Vec<u8>| b.truncate(10),
        ] {
            let mut d = bytes.clone();
            damage(&mut d);
            assert_eq!(probe_table_filter(&d, 1), None);
            assert!(policy.may_contain_hash(&d, 1));
        }
        bytes[0] = b'X';
        assert!(policy.may_contain_hash(&bytes, 1));
    }
}
