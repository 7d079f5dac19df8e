//! What the positions set in a filled filter say: its false-positive rate now, and how many
//! keys it holds. Shared by Bloom filters (bits) and counting filters (non-zero counters).

use super::math::{self, BLOCK_BITS};

/// What the bits set say about the false-positive rate of a standard-layout array of `bits`
/// positions with `ones` of them set: `fill^k`, the rate of a query whose `k` probes hit
/// distinct random positions, plus the excess from queries whose probes repeat positions
/// ([`math::standard_stride_excess`]). Shared by Bloom filters (bits) and counting filters
/// (non-zero counters).
pub(crate) fn standard_fpr_from_ones(bits: u64, k: u32, ones: u64) -> f64 {
    let fill = ones as f64 / bits.max(1) as f64;
    (fill.powi(k as i32) + math::standard_stride_excess(bits, k, fill)).min(1.0)
}

/// The blocked layout's rate from the positions set in each 512-position block: the mean
/// over blocks of `(block fill)^k`, since a key probes one block, at offsets drawn
/// independently (so `fill^k` is exact for a given block).
pub(crate) fn blocked_fpr_from_ones(k: u32, block_ones: impl Iterator<Item = u32>) -> f64 {
    let (mut sum, mut blocks) = (0.0, 0u64);
    for ones in block_ones {
        sum += (f64::from(ones) / BLOCK_BITS as f64).powi(k as i32);
        blocks += 1;
    }
    sum / blocks.max(1) as f64
}

/// Swamidass and Baldi's estimate of the keys behind `ones` positions set out of `m`, with
/// `k` probes per key: `-(m/k) ln(1 - ones/m)`; a full array counts as if one position were
/// still clear.
fn len_estimate(k: u32, ones: f64, m: f64) -> f64 {
    let ones = ones.min(m - 1.0);
    -(m / f64::from(k)) * (1.0 - ones / m).ln()
}

fn round_len(n: f64) -> usize {
    math::float_to_u64(n.round())
        .try_into()
        .unwrap_or(usize::MAX)
}

/// [`len_estimate`] over a standard-layout array.
pub(crate) fn standard_len_from_ones(bits: u64, k: u32, ones: u64) -> usize {
    round_len(len_estimate(k, ones as f64, bits as f64))
}

/// [`len_estimate`] per 512-position block, summed (blocks differ in load, and the estimate
/// is not linear).
pub(crate) fn blocked_len_from_ones(k: u32, block_ones: impl Iterator<Item = u32>) -> usize {
    round_len(
        block_ones
            .map(|ones| len_estimate(k, f64::from(ones), BLOCK_BITS as f64))
            .sum(),
    )
}
