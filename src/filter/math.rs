//! The Bloom filter formulas: sizing, number of probes, and predicted false-positive rates.
//!
//! The textbook formulas (for `n` keys, `m` bits, `k` probes spread over the whole array):
//!
//! * bits for a target rate `p`: `m = -n ln p / (ln 2)^2`
//! * best number of probes: `k = (m / n) ln 2`
//! * false-positive rate: `p = (1 - e^(-k n / m))^k`
//!
//! The blocked layout (all probes of a key in one 512-bit block) is modelled by
//! [`blocked_false_positive_rate`]: block loads are Poisson distributed, and a query is a
//! false positive when all its probes hit set bits of its one block.
//!
//! All functions take counts as any primitive number ([`Count`]), so `optimal_bits(1_000_000,
//! 0.01)`, `optimal_bits(n_usize, p)` and `false_positive_rate(f.bit_len(), n, f.num_hashes())`
//! all compile.

use std::f64::consts::LN_2;

/// Bits in one block of the blocked layout: one 64-byte cache line.
pub const BLOCK_BITS: u64 = 512;

/// A primitive number used as a count (keys, bits, probes) by the formulas of this module.
pub trait Count: Copy {
    /// The count as a float.
    fn as_f64(self) -> f64;
}

macro_rules! impl_count {
    ($($t:ty),*) => {$(
        impl Count for $t {
            #[inline]
            #[allow(clippy::cast_precision_loss, clippy::cast_lossless)]
            fn as_f64(self) -> f64 {
                self as f64
            }
        }
    )*};
}
impl_count!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64);

/// Bits needed for `n` keys at false-positive rate `p`: `ceil(-n ln p / (ln 2)^2)`.
///
/// Returns 0 when `n` is 0, and saturates at `u64::MAX`. `p` outside (0, 1) is meaningless
/// here; callers that take `p` from users validate it first (see
/// [`BloomFilter::with_rate`](super::BloomFilter::with_rate)); for such `p` the result is 0
/// (`p >= 1`) or `u64::MAX` (`p <= 0`).
pub fn optimal_bits(n: impl Count, p: f64) -> u64 {
    let n = n.as_f64();
    if n <= 0.0 || p >= 1.0 || p.is_nan() {
        return 0;
    }
    if p <= 0.0 {
        return u64::MAX;
    }
    let m = (-n * p.ln() / (LN_2 * LN_2)).ceil();
    float_to_u64(m)
}

/// Best number of probes for `bits` bits holding `n` keys: `round((m / n) ln 2)`, at least 1.
pub fn optimal_hashes(bits: impl Count, n: impl Count) -> u32 {
    let (m, n) = (bits.as_f64(), n.as_f64());
    if n <= 0.0 || m <= 0.0 {
        return 1;
    }
    let k = (m / n * LN_2).round();
    if k >= f64::from(u32::MAX) {
        u32::MAX
    } else if k < 1.0 || k.is_nan() {
        1
    } else {
        float_to_u64(k) as u32
    }
}

/// Textbook false-positive rate of `bits` bits holding `n` keys with `k` probes each:
/// `(1 - e^(-k n / m))^k`. An empty filter (`n == 0`) has rate 0; a filter without bits
/// has rate 1.
pub fn false_positive_rate(bits: impl Count, n: impl Count, k: impl Count) -> f64 {
    let (m, n, k) = (bits.as_f64(), n.as_f64(), k.as_f64());
    if n <= 0.0 {
        return 0.0;
    }
    if m <= 0.0 || k <= 0.0 {
        return 1.0;
    }
    (1.0 - (-k * n / m).exp()).powf(k)
}

/// False-positive rate of the blocked layout: `bits` bits in 512-bit blocks holding `n` keys,
/// each key setting `k` bits (chosen independently, repeats allowed) in one block.
///
/// A block's load `j` is Poisson with mean `λ = n / blocks`; a block holding `j` keys has a
/// given bit set with probability `q_j = 1 - (1 - 1/512)^(j k)`, so a query mapped to it is a
/// false positive with probability `q_j^k`. The rate is `Σ_j Pois(j; λ) q_j^k`. The mixture
/// is worse than the textbook formula because the rate is convex in the load: overfull
/// blocks cost more than underfull blocks save.
pub fn blocked_false_positive_rate(bits: impl Count, n: impl Count, k: impl Count) -> f64 {
    let (m, n, k) = (bits.as_f64(), n.as_f64(), k.as_f64());
    if n <= 0.0 {
        return 0.0;
    }
    let block = BLOCK_BITS as f64;
    let blocks = (m / block).floor();
    if blocks < 1.0 || k <= 0.0 {
        return 1.0;
    }
    let lambda = n / blocks;
    let miss_per_probe = (1.0 - 1.0 / block).ln();
    // Sum the Poisson terms from the mode outwards in both directions until they no longer
    // matter; starting at the mode avoids underflow of e^-λ for large λ.
    let mode = lambda.floor();
    let log_pmf_mode = mode * lambda.ln() - lambda - ln_factorial(mode);
    let fp_given = |j: f64| (1.0 - (miss_per_probe * j * k).exp()).powf(k);
    let mut total = 0.0;
    let mut log_pmf = log_pmf_mode;
    let mut j = mode;
    loop {
        let term = log_pmf.exp() * fp_given(j);
        total += term;
        if (j > lambda + 10.0 && log_pmf < -40.0) || j > lambda + 1.0e7 {
            break;
        }
        j += 1.0;
        log_pmf += lambda.ln() - j.ln();
    }
    let mut log_pmf = log_pmf_mode;
    let mut j = mode;
    while j > 0.0 {
        log_pmf += j.ln() - lambda.ln();
        j -= 1.0;
        total += log_pmf.exp() * fp_given(j);
        if log_pmf < -40.0 {
            break;
        }
    }
    total.min(1.0)
}

/// The number of probes for the blocked layout at `bits_per_key`: the smallest `k` whose
/// [`blocked_false_positive_rate`] is within 1% of the best `k`'s.
///
/// Blocked filters want fewer probes than [`optimal_hashes`] suggests (8 bits/key: 5 rather
/// than 6; 10: 6 rather than 7; 16: 9 rather than 11; 32: 15 rather than 22), since every
/// probe also pays for the uneven block loads. Near the optimum the rate is flat (at 10
/// bits/key, k = 6 and k = 7 differ by 0.05%), so the smaller `k` buys a cheaper lookup for
/// nothing.
pub fn optimal_blocked_hashes(bits_per_key: f64) -> u32 {
    if bits_per_key.is_nan() || bits_per_key <= 0.0 {
        return 1;
    }
    // Evaluate the model for a notional 1M-key filter; the rate depends on bits/key only.
    let n = 1.0e6;
    let m = n * bits_per_key;
    let upper = optimal_hashes(bits_per_key, 1u32).saturating_add(2);
    let rates: Vec<(u32, f64)> = (1..=upper.min(super::MAX_HASHES))
        .map(|k| (k, blocked_false_positive_rate(m, n, k)))
        .collect();
    let best = rates.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    rates.iter().find(|r| r.1 <= best * 1.01).map_or(1, |r| r.0)
}

/// Bits per key the blocked layout needs to reach false-positive rate `p` (with
/// [`optimal_blocked_hashes`] probes), found by bisection on [`blocked_false_positive_rate`].
/// Slightly more than the textbook `-ln p / (ln 2)^2`; the gap grows as `p` shrinks.
pub fn blocked_bits_per_key(p: f64) -> f64 {
    let textbook = -p.ln() / (LN_2 * LN_2);
    if !(p > 0.0 && p < 1.0) {
        return textbook.max(0.0);
    }
    let n = 1.0e6;
    let rate = |bpk: f64| blocked_false_positive_rate(n * bpk, n, optimal_blocked_hashes(bpk));
    let (mut lo, mut hi) = (textbook, textbook * 2.0 + 4.0);
    // Beyond hi the block model cannot reach p within the probe cap; settle for hi.
    if rate(hi) > p {
        return hi;
    }
    for _ in 0..40 {
        let mid = 0.5 * (lo + hi);
        if rate(mid) > p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// `ln(x!)` for a non-negative integral `x`, exact summation for small `x`, Stirling's series
/// beyond.
fn ln_factorial(x: f64) -> f64 {
    if x < 32.0 {
        let mut acc = 0.0;
        let mut i = 2.0;
        while i <= x {
            acc += f64::ln(i);
            i += 1.0;
        }
        acc
    } else {
        let x1 = x + 1.0;
        (x1 - 0.5) * x1.ln() - x1 + 0.5 * (2.0 * std::f64::consts::PI).ln() + 1.0 / (12.0 * x1)
            - 1.0 / (360.0 * x1 * x1 * x1)
    }
}

/// Converts a non-negative float to `u64`, saturating (NaN becomes 0).
pub(crate) fn float_to_u64(x: f64) -> u64 {
    // `as` saturates at the type bounds and maps NaN to 0, which is what we want here.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let v = x as u64;
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn textbook_values() {
        assert_eq!(optimal_bits(1000, 0.01), 9586);
        assert_eq!(optimal_hashes(9586u64, 1000usize), 7);
        assert_eq!(optimal_hashes(10, 1), 7);
        let p = false_positive_rate(8_000_000u64, 1_000_000usize, 6u32);
        assert!((p - 0.0216).abs() < 0.0005, "{p}");
        let p = false_positive_rate(16.0, 1.0, 11);
        assert!((p - 0.000459).abs() < 0.00002, "{p}");
        assert_eq!(false_positive_rate(100, 0, 3), 0.0);
        assert_eq!(false_positive_rate(0, 10, 3), 1.0);
        assert_eq!(optimal_bits(0, 0.01), 0);
        assert_eq!(optimal_hashes(0, 0), 1);
    }

    #[test]
    fn ln_factorial_is_continuous_at_switch() {
        let exact: f64 = (2..=40).map(|i| f64::ln(i as f64)).sum();
        assert!((ln_factorial(40.0) - exact).abs() < 1e-9);
        assert!(
            (ln_factorial(31.0) - (2..=31).map(|i| f64::ln(i as f64)).sum::<f64>()).abs() < 1e-12
        );
    }

    #[test]
    fn blocked_model_is_above_textbook_and_close_to_it_at_10_bits() {
        for bpk in [4.0, 8.0, 10.0, 16.0] {
            let k = optimal_hashes(bpk, 1);
            let t = false_positive_rate(bpk * 1e6, 1e6, k);
            let b = blocked_false_positive_rate(bpk * 1e6, 1e6, k);
            assert!(b > t, "bpk {bpk}: blocked {b} textbook {t}");
        }
        let k = optimal_blocked_hashes(10.0);
        assert_eq!(k, 6);
        assert_eq!(optimal_blocked_hashes(8.0), 5);
        let b = blocked_false_positive_rate(10e6, 1e6, k);
        let t = false_positive_rate(10e6, 1e6, optimal_hashes(10, 1));
        assert!(b / t < 1.3, "{b} vs {t}");
    }
}
