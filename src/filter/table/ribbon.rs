//! [`RibbonPolicy`]: standard Ribbon filters (Dillinger and Walzer, "Ribbon filter: practically
//! smaller than Bloom and Xor", 2021) for SSTables: a static set in `r (1 + ε)` bits per key at a
//! `2^-r` false-positive rate, with `ε` 5-7% (width-64 coefficient rows).
//!
//! Written from the paper's description. Each key's hash (mixed with the filter's seed) gives a
//! start slot `s` in `0..=m-64`, a 64-bit coefficient row `c` (lowest bit set) and an `r`-bit
//! result `b`. The filter is a solution `Z` (one `r`-bit value per slot) of the linear system
//! over GF(2) `XOR_{j: bit j of c} Z[s + j] = b` for every key, so a key of the set always
//! matches and any other key matches with probability `2^-r`. Building is on-the-fly Gaussian
//! elimination into a banded matrix ("banding": each row lands in the first free slot at or
//! after its start, XOR-ed with the rows it meets), then back substitution. A key whose row
//! reduces to zero with a non-zero result makes the system unsolvable: the build retries with
//! another seed, and after a few seeds with more slots. Identical keys reduce to zero with a
//! zero result and are simply redundant.
//!
//! `Z` is stored in the interleaved column-major layout of the paper: for each block of 64
//! slots, `r` u64 words, word `k` holding bit `k` of the 64 slots' values; a lookup reads two
//! adjacent blocks and does `2r` ANDs and parities.
//!
//! Byte layout in `docs/FILTERS.md` ("Static filters").

use crate::error::{Error, Result};

use super::partition;
use super::static_header::{Framing, Header};
use crate::filter::layout::{mix64, reduce};
use crate::filter::policy::FilterPolicy;

/// Magic `"BRIB"` and format version (DO NOT CHANGE the meaning of version 1); the
/// parameter byte holds `r`, so header bytes 6..8 are reserved.
const FRAMING: Framing = Framing {
    magic: *b"BRIB",
    version: 1,
    reserved: 6,
    what: "ribbon",
    fields_at: 5,
    fields_wrong: "result bits, slot count and filter length disagree",
};
/// Width of a coefficient row.
const W: u64 = 64;
/// Most result bits: 2^-32 is far below anything a table needs.
///
/// # Examples
/// ```
/// use bloomkv::filter::{MAX_RESULT_BITS, RibbonPolicy};
/// assert_eq!(RibbonPolicy::with_result_bits(99).result_bits(), MAX_RESULT_BITS);
/// ```
pub const MAX_RESULT_BITS: u32 = 32;
/// Nominal slot overhead `ε` (`m = n (1 + ε)`): what a million keys take. The build starts
/// lower for small sets ([`start_overhead`]) and adds 1% per failed size.
const OVERHEAD: f64 = 0.07;
/// Seeds tried at one size before more slots are added.
const SEEDS_PER_SIZE: u32 = 2;
/// Sizes tried (each adding 1% of `n` in slots) before giving up.
const SIZES: u32 = 40;

/// The [`FilterPolicy`] that builds standard Ribbon filters with `r` result bits
/// ([`RibbonPolicy::new`] derives `r` from a bits-per-key budget).
///
/// ```
/// use bloomkv::filter::{FilterPolicy, RibbonPolicy};
/// let policy = RibbonPolicy::with_result_bits(7); // ~0.78% at ~7.5 bits/key
/// let keys: Vec<Vec<u8>> = (0..1000u32).map(|i| i.to_le_bytes().to_vec()).collect();
/// let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
/// let filter = policy.create_filter(&refs);
/// policy.check_filter(&filter).unwrap();
/// assert!(refs.iter().all(|k| policy.may_contain(&filter, k)));
/// assert_eq!(RibbonPolicy::predicted_fpr(7.5), 1.0 / 128.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RibbonPolicy {
    r: u32,
}

impl RibbonPolicy {
    /// The stable name stored beside each filter built by this policy.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::{FilterPolicy, RibbonPolicy};
    /// assert_eq!(RibbonPolicy::new(10.0).name(), RibbonPolicy::NAME);
    /// ```
    pub const NAME: &'static str = "bloomkv.Ribbon";

    /// The result bits that fit a budget of `bits_per_key`: `floor(bits_per_key / 1.07)`,
    /// clamped to `1..=32` (7% is the slot overhead a million keys need; fewer keys need
    /// less, more keys a little more).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::RibbonPolicy;
    /// assert_eq!(RibbonPolicy::result_bits_for(7.49), 7);
    /// assert_eq!(RibbonPolicy::result_bits_for(0.0), 1);
    /// ```
    pub fn result_bits_for(bits_per_key: f64) -> u32 {
        if bits_per_key.is_nan() {
            return 1;
        }
        // The epsilon keeps 7.49 (= 7 x 1.07) from rounding down to 6.
        (bits_per_key / (1.0 + OVERHEAD) + 1e-9)
            .floor()
            .clamp(1.0, f64::from(MAX_RESULT_BITS)) as u32
    }

    /// A policy spending about `bits_per_key` bits per key
    /// ([`RibbonPolicy::result_bits_for`]).
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::RibbonPolicy;
    /// assert_eq!(RibbonPolicy::new(10.0).result_bits(), 9);
    /// ```
    pub fn new(bits_per_key: f64) -> Self {
        RibbonPolicy {
            r: Self::result_bits_for(bits_per_key),
        }
    }

    /// A policy with `r` result bits (clamped to `1..=32`): false-positive rate `2^-r`.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::RibbonPolicy;
    /// assert_eq!(RibbonPolicy::with_result_bits(0).result_bits(), 1);
    /// ```
    pub fn with_result_bits(r: u32) -> Self {
        RibbonPolicy {
            r: r.clamp(1, MAX_RESULT_BITS),
        }
    }

    /// Result bits per key.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::RibbonPolicy;
    /// assert_eq!(RibbonPolicy::with_result_bits(12).result_bits(), 12);
    /// ```
    pub fn result_bits(&self) -> u32 {
        self.r
    }

    /// The false-positive rate a Ribbon filter reaches with `bits_per_key` bits per key:
    /// `2^-r` with `r = `[`RibbonPolicy::result_bits_for`]`(bits_per_key)`. For Monkey-style
    /// allocation across filter kinds.
    ///
    /// # Examples
    /// ```
    /// use bloomkv::filter::RibbonPolicy;
    /// assert_eq!(RibbonPolicy::predicted_fpr(10.0), 0.5f64.powi(9));
    /// ```
    pub fn predicted_fpr(bits_per_key: f64) -> f64 {
        0.5f64.powi(Self::result_bits_for(bits_per_key) as i32)
    }

    /// Builds a filter over `hashes` ([`crate::filter::hash_key`] values, duplicates allowed).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if no seed and size in the retry budget solved (not seen in
    /// practice) or the filter would not fit in memory.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::filter::{FilterPolicy, RibbonPolicy, hash_key};
    /// let policy = RibbonPolicy::with_result_bits(8);
    /// let hashes: Vec<u64> = (0..100u32).map(|i| hash_key(&i.to_le_bytes())).collect();
    /// let filter = policy.build(&hashes)?;
    /// assert!(hashes.iter().all(|&h| policy.may_contain_hash(&filter, h)));
    /// # Ok(())
    /// # }
    /// ```
    pub fn build(&self, hashes: &[u64]) -> Result<Vec<u8>> {
        let n = hashes.len() as u64;
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for size in 0..SIZES {
            let slots = n as f64 * (1.0 + start_overhead(n) + 0.01 * f64::from(size));
            // At least two blocks, so that every start has a full 64-slot window.
            let blocks = ((slots / W as f64).ceil() as u64).max(2);
            let m = blocks * W;
            for _ in 0..SEEDS_PER_SIZE {
                seed = mix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15));
                if let Some(words) = try_build(hashes, seed, m, self.r)? {
                    return Ok(encode(seed, self.r, m, n, &words));
                }
            }
        }
        Err(Error::InvalidArgument(format!(
            "ribbon construction failed for {n} keys"
        )))
    }
}

impl Default for RibbonPolicy {
    /// 7 result bits: ~0.78% false positives at ~7.5 bits per key.
    fn default() -> Self {
        RibbonPolicy::with_result_bits(7)
    }
}

/// The overhead a first attempt uses for `n` keys: 5% up to a thousand keys, then half a
/// percent more per factor of ten (a standard Ribbon of width 64 needs a little more room as
/// the set grows; measured: 6% at 10^4 and 10^5 keys, 7% at 10^6).
fn start_overhead(n: u64) -> f64 {
    0.05 + 0.005 * ((n.max(1) as f64).log10() - 3.0).max(0.0)
}

/// Start, coefficients and result of a key.
#[inline]
fn row(hash: u64, seed: u64, m: u64, r: u32) -> (u64, u64, u64) {
    let h = mix64(hash ^ seed);
    let start = reduce(h, m - W + 1);
    let c = mix64(h.wrapping_add(0x9e37_79b9_7f4a_7c15)) | 1;
    let b = mix64(h ^ 0xd6e8_feb8_6659_fd93) & result_mask(r);
    (start, c, b)
}

#[inline]
fn result_mask(r: u32) -> u64 {
    (1u64 << r) - 1
}

/// One attempt: banding then back substitution; `None` if the system was unsolvable.
fn try_build(hashes: &[u64], seed: u64, m: u64, r: u32) -> Result<Option<Vec<u64>>> {
    let len = usize::try_from(m).map_err(|_| Error::InvalidArgument("ribbon too large".into()))?;
    let too_big = || Error::InvalidArgument("ribbon filter does not fit in memory".into());
    // Rows ordered by start slot: banding then walks the slots in order (cache-friendly), as
    // the paper recommends. Roughly sorted (by buckets of ~64 rows) is enough for locality, at
    // a fraction of a sort. The hashes are what is reordered (8 bytes a key, not a row's 24,
    // and no second copy of the rows: a build of a 64 MiB table's million keys peaked at
    // ~65 MB, two compaction threads at once twice that): a key's bucket is `reduce` of the
    // same mixed hash its start is, so bucket order is start order.
    let buckets = partition::buckets_for(hashes.len());
    let ordered = partition::by_bucket(hashes, buckets, |&h| {
        reduce(mix64(h ^ seed), buckets as u64) as usize
    });
    // Coefficients and results side by side: one cache line per probe.
    let mut band: Vec<(u64, u64)> = Vec::new();
    band.try_reserve_exact(len).map_err(|_| too_big())?;
    band.resize(len, (0, 0));
    for &h in &ordered {
        let (mut s, mut c, mut b) = row(h, seed, m, r);
        loop {
            let slot = &mut band[s as usize];
            if slot.0 == 0 {
                *slot = (c, b);
                break;
            }
            c ^= slot.0;
            b ^= slot.1;
            if c == 0 {
                if b == 0 {
                    break; // the same equation again: redundant
                }
                return Ok(None);
            }
            let tz = c.trailing_zeros();
            s += u64::from(tz);
            c >>= tz;
        }
    }
    drop(ordered);
    // Back substitution from the last slot down. `window[k]` bit j holds bit k of Z[i + j]
    // (j >= 1 after the shift below).
    let blocks = len / W as usize;
    let mut words = vec![0u64; blocks * r as usize];
    let mut window = vec![0u64; r as usize];
    for i in (0..len).rev() {
        let (c, b) = band[i];
        let (block, bit) = (i / 64, i % 64);
        for (k, w) in window.iter_mut().enumerate() {
            let shifted = *w << 1;
            let z = if c == 0 {
                0 // a free slot: any value works
            } else {
                ((b >> k) & 1) ^ u64::from((c & shifted).count_ones() & 1)
            };
            *w = shifted | z;
            words[block * r as usize + k] |= z << bit;
        }
    }
    Ok(Some(words))
}

/// The filter's bytes: the static header (parameter `r`, dimensions `m`), then the words.
fn encode(seed: u64, r: u32, m: u64, keys: u64, words: &[u64]) -> Vec<u8> {
    let header = Header {
        param: r as u8,
        seed,
        dims: m,
        keys,
    };
    FRAMING.encode(&header, words.len() * 8, |out| {
        for w in words {
            out.extend_from_slice(&w.to_le_bytes());
        }
    })
}

/// The decoded header of a serialized filter.
struct RibbonHeader<'a> {
    r: u32,
    seed: u64,
    m: u64,
    keys: u64,
    words: &'a [u8],
}

/// Header checks only (the lookup path): `None` when anything is off.
#[inline]
fn peek(bytes: &[u8]) -> Option<RibbonHeader<'_>> {
    let (h, payload) = FRAMING.peek(bytes)?;
    let (r, m) = (u32::from(h.param), h.dims);
    if r == 0 || r > MAX_RESULT_BITS || m < 2 * W || !m.is_multiple_of(W) {
        return None;
    }
    let len = usize::try_from((m / W).checked_mul(u64::from(r))?.checked_mul(8)?).ok()?;
    if payload.len() != len {
        return None;
    }
    Some(RibbonHeader {
        r,
        seed: h.seed,
        m,
        keys: h.keys,
        words: payload,
    })
}

impl FilterPolicy for RibbonPolicy {
    fn uses_default_hash(&self) -> bool {
        true
    }

    fn name(&self) -> &str {
        Self::NAME
    }

    /// `r (1 + ε)` with the nominal overhead `ε` = 7% (fewer keys take less).
    fn bits_per_key(&self) -> f64 {
        f64::from(self.r) * (1.0 + OVERHEAD)
    }

    fn with_bits_per_key(&self, bits_per_key: f64) -> Option<std::sync::Arc<dyn FilterPolicy>> {
        Some(std::sync::Arc::new(RibbonPolicy::new(bits_per_key)))
    }

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
        let (start, c, b) = row(hash, h.seed, h.m, h.r);
        let (block, offset) = ((start / W) as usize, (start % W) as u32);
        let r = h.r as usize;
        let lo_c = c << offset;
        let hi_c = if offset == 0 { 0 } else { c >> (64 - offset) };
        let base = block * r * 8;
        let Some(lo_words) = h.words.get(base..base + r * 8) else {
            return true;
        };
        // The next block's words, needed only when the row spills into it (never for a row
        // starting at a block boundary, so the last block needs no successor).
        let hi_words = if hi_c == 0 {
            None
        } else {
            match h.words.get(base + r * 8..base + 2 * r * 8) {
                Some(w) => Some(w),
                None => return true,
            }
        };
        let word = |chunk: &[u8]| {
            let mut w = [0u8; 8];
            w.copy_from_slice(chunk);
            u64::from_le_bytes(w)
        };
        let mut hi_chunks = hi_words.map(|w| w.chunks_exact(8));
        for (k, lo) in lo_words.chunks_exact(8).enumerate() {
            // parity(a) ^ parity(b) = parity(a ^ b): one population count per result bit
            // (a software one on baseline x86-64, which has no POPCNT).
            let mut x = word(lo) & lo_c;
            if let Some(chunks) = hi_chunks.as_mut()
                && let Some(hi) = chunks.next()
            {
                x ^= word(hi) & hi_c;
            }
            if u64::from(x.count_ones() & 1) != (b >> k) & 1 {
                return false;
            }
        }
        true
    }

    fn expected_fp_rate(&self, filter: &[u8]) -> Option<f64> {
        peek(filter).map(|h| {
            if h.keys == 0 {
                0.0
            } else {
                0.5f64.powi(h.r as i32)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_sets_duplicates_and_every_width() {
        for r in [1u32, 5, 7, 8, 16, 32] {
            let p = RibbonPolicy::with_result_bits(r);
            for n in [0u64, 1, 2, 63, 64, 65, 1000] {
                let mut hashes: Vec<u64> = (0..n)
                    .map(|i| crate::filter::layout::hash_key(&i.to_le_bytes()))
                    .collect();
                hashes.extend_from_slice(&hashes.clone());
                let f = p.build(&hashes).unwrap();
                p.check_filter(&f).unwrap();
                assert!(
                    hashes.iter().all(|&h| p.may_contain_hash(&f, h)),
                    "r {r}, n {n}"
                );
            }
        }
        let p = RibbonPolicy::default();
        assert!(!p.may_contain_hash(&p.build(&[]).unwrap(), 1));
        assert_eq!(RibbonPolicy::result_bits_for(10.0), 9);
        assert_eq!(RibbonPolicy::result_bits_for(7.49), 7);
        assert_eq!(RibbonPolicy::result_bits_for(7.4), 6);
    }
}
