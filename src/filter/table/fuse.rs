//! [`BinaryFusePolicy`]: binary fuse filters with 8-bit fingerprints (Graf and Lemire, "Binary
//! Fuse Filters: Fast and Smaller Than Xor Filters", JEA 2022) for SSTables: a static set in
//! ~9 bits per key at a 1/256 false-positive rate.
//!
//! Written from the paper's description. A key's hash `h` (after mixing with the filter's
//! seed) picks three positions in three consecutive segments of a fingerprint array:
//! `p0 = reduce(h, segments * L)`, `p1 = (p0 + L) ^ ((h >> 18) & (L - 1))`,
//! `p2 = (p0 + 2L) ^ (h & (L - 1))`, with `L` the segment length (a power of two). The key
//! is in the set when `F[p0] ^ F[p1] ^ F[p2]` equals its fingerprint `(h ^ (h >> 32)) as u8`.
//! Building solves that system by peeling: a position that only one key uses can be set last,
//! after that key is removed from its other positions; if peeling stalls (rare: a few percent
//! of attempts for small sets, practically never for large ones), the build retries with
//! another seed, and after a few failed seeds with a larger array.
//!
//! Byte layout in `docs/FILTERS.md` ("Static filters").

use crate::error::{Error, Result};

use super::partition;
use super::static_header::{Framing, Header};
use crate::filter::layout::{mix64, reduce};
use crate::filter::policy::FilterPolicy;

/// Magic `"BFU8"` and format version (DO NOT CHANGE the meaning of version 1); no parameter
/// byte, so header bytes 5..8 are reserved.
const FRAMING: Framing = Framing {
    magic: *b"BFU8",
    version: 1,
    reserved: 5,
    what: "binary fuse",
    fields_at: 16,
    fields_wrong: "segment length, count and filter length disagree",
};
/// Largest segment length (as in the paper's implementation; longer segments stop helping).
const MAX_SEGMENT_LEN: u64 = 1 << 18;
/// Seeds tried at one array size before the array is made larger.
const SEEDS_PER_SIZE: u32 = 8;
/// Array sizes tried (each 10% above the last) before giving up.
const SIZES: u32 = 8;

/// The [`FilterPolicy`] that builds binary fuse filters with 8-bit fingerprints.
///
/// The false-positive rate is fixed at about 2^-8 = 0.39% whatever the set size, at about
/// 9.0 bits per key for large sets (1.125 x 8 bits; more for small ones: the array is at least
/// three segments). Lookups read three bytes of the filter in place, no copy, no checksum.
///
/// ```
/// use bloomkv::filter::{BinaryFusePolicy, FilterPolicy};
/// let policy = BinaryFusePolicy::new();
/// let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_le_bytes().to_vec()).collect();
/// let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
/// let filter = policy.create_filter(&refs);
/// policy.check_filter(&filter).unwrap();
/// assert!(refs.iter().all(|k| policy.may_contain(&filter, k)));
/// assert_eq!(BinaryFusePolicy::predicted_fpr(9.0), 1.0 / 256.0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BinaryFusePolicy;

impl BinaryFusePolicy {
    /// The stable name stored beside each filter built by this policy.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{BinaryFusePolicy, FilterPolicy};
    /// assert_eq!(BinaryFusePolicy::new().name(), BinaryFusePolicy::NAME);
    /// ```
    pub const NAME: &'static str = "bloomkv.BinaryFuse8";

    /// The policy (it has no parameters: 8-bit fingerprints).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{BinaryFusePolicy, FilterPolicy};
    /// let policy = BinaryFusePolicy::new();
    /// assert_eq!(policy.expected_fp_rate(&policy.create_filter(&[b"k"])), Some(1.0 / 256.0));
    /// ```
    pub fn new() -> Self {
        BinaryFusePolicy
    }

    /// The false-positive rate of a filter of this kind: 2^-8, whatever the bits per key
    /// (the size is fixed by the key count, ~9.0 bits/key; fewer bits cannot be had, more
    /// buy nothing). For Monkey-style allocation across filter kinds.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::BinaryFusePolicy;
    /// assert_eq!(BinaryFusePolicy::predicted_fpr(4.0), BinaryFusePolicy::predicted_fpr(20.0));
    /// ```
    pub fn predicted_fpr(_bits_per_key: f64) -> f64 {
        1.0 / 256.0
    }

    /// Builds a filter over `hashes` ([`crate::filter::hash_key`] values; duplicates allowed, they are
    /// removed first since identical keys can never be peeled apart).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if no seed and size in the retry budget peeled (not seen in
    /// practice) or the filter would not fit in memory.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{BinaryFusePolicy, FilterPolicy, hash_key};
    /// let policy = BinaryFusePolicy::new();
    /// let filter = policy.build(&[hash_key(b"x"), hash_key(b"y"), hash_key(b"x")])?;
    /// assert!(policy.may_contain_hash(&filter, hash_key(b"y")));
    /// # Ok(())
    /// # }
    /// ```
    pub fn build(&self, hashes: &[u64]) -> Result<Vec<u8>> {
        let keys = partition::sorted_dedup(hashes);
        let n = keys.len() as u64;
        let (mut segment_len, mut segments) = sizing(n, 1.0);
        let mut seed = 0x7f4a_7c15_9e37_79b9u64;
        for size in 0..SIZES {
            if size > 0 {
                (segment_len, segments) = sizing(n, 1.1f64.powi(size as i32));
            }
            for _ in 0..SEEDS_PER_SIZE {
                seed = mix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
                if let Some(fingerprints) = try_build(&keys, seed, segment_len, segments)? {
                    return Ok(encode(seed, segment_len, segments, n, &fingerprints));
                }
            }
        }
        Err(Error::InvalidArgument(format!(
            "binary fuse construction failed for {n} keys"
        )))
    }
}

/// Segment length and count for `n` keys, with the array scaled by `grow` (1.0 normally).
fn sizing(n: u64, grow: f64) -> (u64, u64) {
    let nf = n.max(2) as f64;
    let segment_len = if n == 0 {
        4
    } else {
        let exp = (nf.ln() / 3.33f64.ln() + 2.25).floor().max(0.0) as u32;
        (1u64 << exp.min(18)).min(MAX_SEGMENT_LEN)
    };
    // 1.125 for large sets, more for small ones, where peeling needs more room.
    let factor = (0.875 + 0.25 * 1e6f64.ln() / nf.ln()).max(1.125) * grow;
    let capacity = (nf * factor).round() as u64;
    let segments = capacity.div_ceil(segment_len).saturating_sub(2).max(1);
    (segment_len, segments)
}

/// The three positions and the fingerprint of a mixed hash.
#[inline]
fn probe(h: u64, segment_len: u64, segments: u64) -> ([u64; 3], u8) {
    let mask = segment_len - 1;
    let p0 = reduce(h, segments * segment_len);
    let p1 = (p0 + segment_len) ^ ((h >> 18) & mask);
    let p2 = (p0 + 2 * segment_len) ^ (h & mask);
    ([p0, p1, p2], (h ^ (h >> 32)) as u8)
}

#[inline]
fn mixed(hash: u64, seed: u64) -> u64 {
    mix64(hash ^ seed)
}

/// One construction attempt; `None` if peeling stalled.
fn try_build(keys: &[u64], seed: u64, segment_len: u64, segments: u64) -> Result<Option<Vec<u8>>> {
    let len = usize::try_from((segments + 2) * segment_len)
        .map_err(|_| Error::InvalidArgument("binary fuse filter too large".into()))?;
    let too_big = || Error::InvalidArgument("binary fuse filter does not fit in memory".into());
    // Mixed hashes in (roughly) increasing order: p0 is monotone in the hash, so the counting
    // pass below walks the array (and its two later segments) roughly in order.
    let mut mixed_keys: Vec<u64> = Vec::new();
    mixed_keys
        .try_reserve_exact(keys.len())
        .map_err(|_| too_big())?;
    mixed_keys.extend(keys.iter().map(|&k| mixed(k, seed)));
    // A partial order (by leading bits) gives the locality; a full sort would cost more than
    // the rest of the build.
    let buckets = partition::buckets_for(mixed_keys.len());
    let shift = 64 - buckets.trailing_zeros();
    let mixed_keys = partition::by_bucket(&mixed_keys, buckets, |&h| {
        if shift >= 64 {
            0
        } else {
            (h >> shift) as usize
        }
    });
    // Per position: the XOR of the hashes using it and how many do, side by side.
    let mut cells: Vec<(u64, u32)> = Vec::new();
    cells.try_reserve_exact(len).map_err(|_| too_big())?;
    cells.resize(len, (0, 0));
    for &h in &mixed_keys {
        for p in probe(h, segment_len, segments).0 {
            let c = &mut cells[p as usize];
            c.0 ^= h;
            c.1 += 1;
        }
    }
    drop(mixed_keys);
    // Peel: positions used by exactly one key, found by a scan in array order (sequential
    // memory access); a position behind the scan that becomes a singleton goes on a stack and
    // is peeled at once (it is within two segments of the scan), one ahead of the scan will
    // be met by it.
    let mut order: Vec<(u64, usize)> = Vec::with_capacity(keys.len());
    let mut stack: Vec<usize> = Vec::new();
    for scan in 0..len {
        if cells[scan].1 == 1 {
            stack.push(scan);
        }
        while let Some(i) = stack.pop() {
            if cells[i].1 != 1 {
                continue;
            }
            let h = cells[i].0;
            order.push((h, i));
            for p in probe(h, segment_len, segments).0 {
                let p = p as usize;
                let c = &mut cells[p];
                c.0 ^= h;
                c.1 -= 1;
                if c.1 == 1 && p < scan {
                    stack.push(p);
                }
            }
        }
    }
    if order.len() != keys.len() {
        return Ok(None);
    }
    drop(cells);
    let mut f = vec![0u8; len];
    // Reverse peeling order: each key's own position is set after the others it uses, which
    // later keys in this order never touch again.
    for &(h, i) in order.iter().rev() {
        let ([p0, p1, p2], fp) = probe(h, segment_len, segments);
        f[i] = 0;
        f[i] = fp ^ f[p0 as usize] ^ f[p1 as usize] ^ f[p2 as usize];
    }
    Ok(Some(f))
}

/// The filter's bytes: the static header (dimensions: `log2 L` in the low u32, `S` in the
/// high one, so the two u32 LE fields of `docs/FORMAT.md`), then the fingerprints.
fn encode(seed: u64, segment_len: u64, segments: u64, keys: u64, f: &[u8]) -> Vec<u8> {
    let header = Header {
        param: 0,
        seed,
        dims: u64::from(segment_len.trailing_zeros()) | segments << 32,
        keys,
    };
    FRAMING.encode(&header, f.len(), |out| out.extend_from_slice(f))
}

/// The decoded header of a serialized filter.
struct FuseHeader<'a> {
    seed: u64,
    segment_len: u64,
    segments: u64,
    keys: u64,
    fingerprints: &'a [u8],
}

/// Header checks only (the lookup path): `None` when anything is off.
#[inline]
fn peek(bytes: &[u8]) -> Option<FuseHeader<'_>> {
    let (h, payload) = FRAMING.peek(bytes)?;
    let (shift, segments) = (h.dims as u32, h.dims >> 32);
    if shift > 18 || segments == 0 {
        return None;
    }
    let segment_len = 1u64 << shift;
    let len = usize::try_from((segments + 2) * segment_len).ok()?;
    if payload.len() != len {
        return None;
    }
    Some(FuseHeader {
        seed: h.seed,
        segment_len,
        segments,
        keys: h.keys,
        fingerprints: payload,
    })
}

impl FilterPolicy for BinaryFusePolicy {
    fn uses_default_hash(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        Self::NAME
    }

    /// Nominal: 9.0 (1.125 x 8); small sets take more.
    fn bits_per_key(&self) -> f64 {
        9.0
    }

    /// Fixed: 8-bit fingerprints whatever the bits per key asked for (`None`).
    fn predicted_fp_rate(&self, bits_per_key: f64) -> f64 {
        Self::predicted_fpr(bits_per_key)
    }

    /// The filter over `hashes`; should construction fail (never seen) or the filter not fit
    /// in memory, an empty vector, which every reader treats as "may contain".
    fn create_filter_from_hashes(&self, hashes: &[u64]) -> Vec<u8> {
        self.build(hashes).unwrap_or_default()
    }

    fn check_filter(&self, filter: &[u8]) -> Result<()> {
        FRAMING.check(filter, |f| peek(f).is_some())
    }

    #[inline]
    fn may_contain_hash(&self, filter: &[u8], hash: u64) -> bool {
        let Some(h) = peek(filter) else {
            return true;
        };
        if h.keys == 0 {
            return false;
        }
        let x = mixed(hash, h.seed);
        let ([p0, p1, p2], fp) = probe(x, h.segment_len, h.segments);
        let f = h.fingerprints;
        match (f.get(p0 as usize), f.get(p1 as usize), f.get(p2 as usize)) {
            (Some(a), Some(b), Some(c)) => a ^ b ^ c == fp,
            _ => true,
        }
    }

    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64> {
        peek(filter).map(|h| if h.keys == 0 { 0.0 } else { 1.0 / 256.0 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_and_duplicates_build() {
        let p = BinaryFusePolicy::new();
        for n in [0u64, 1, 2, 3, 5, 10, 100, 1000] {
            let mut hashes: Vec<u64> = (0..n)
                .map(|i| crate::filter::layout::hash_key(&i.to_le_bytes()))
                .collect();
            hashes.extend_from_slice(&hashes.clone()); // every key twice
            let f = p.build(&hashes).unwrap();
            p.check_filter(&f).unwrap();
            assert!(hashes.iter().all(|&h| p.may_contain_hash(&f, h)), "{n}");
        }
        let empty = p.build(&[]).unwrap();
        assert!(!p.may_contain_hash(&empty, 42));
    }
}
