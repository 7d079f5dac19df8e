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

use crate::filter::layout::MAX_HASHES;

pub use crate::filter::layout::BLOCK_BITS;

/// A primitive number used as a count (keys, bits, probes) by the formulas of this module.
///
/// # Examples
/// ```
/// use bloomkv::filter::math::{Count, optimal_bits};
/// assert_eq!(3u8.as_f64(), 3.0);
/// assert_eq!(optimal_bits(1000u32, 0.01), optimal_bits(1000usize, 0.01));
/// ```
pub trait Count: Copy {
    /// The count as a float.
    fn as_f64(self) -> f64;
}

macro_rules! impl_count {
    ($($t:ty),*) => {$(
        impl Count for $t {
            #[inline]
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
/// [`BloomFilter::new`](crate::filter::BloomFilter::new) for items at a rate); for such `p` the result is 0
/// (`p >= 1`) or `u64::MAX` (`p <= 0`).
///
/// # Examples
/// ```
/// use bloomkv::filter::math::optimal_bits;
/// assert_eq!(optimal_bits(1000, 0.01), 9586);
/// assert_eq!(optimal_bits(0, 0.01), 0);
/// ```
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
///
/// # Examples
/// ```
/// use bloomkv::filter::math::optimal_hashes;
/// assert_eq!(optimal_hashes(10_000, 1000), 7);
/// assert_eq!(optimal_hashes(1, 1000), 1);
/// ```
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
///
/// # Examples
/// ```
/// use bloomkv::filter::math::false_positive_rate;
/// assert!((false_positive_rate(9586, 1000, 7) - 0.01).abs() < 0.0005);
/// assert_eq!(false_positive_rate(100, 0, 3), 0.0);
/// ```
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
///
/// # Examples
/// ```
/// use bloomkv::filter::math::{blocked_false_positive_rate, false_positive_rate};
/// // Uneven block loads cost a little: blocked is above the textbook rate.
/// let (m, n) = (10 * 100_000u64, 100_000u64);
/// assert!(blocked_false_positive_rate(m, n, 6) > false_positive_rate(m, n, 7));
/// ```
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
///
/// # Examples
/// ```
/// use bloomkv::filter::math::{optimal_blocked_hashes, optimal_hashes};
/// assert_eq!(optimal_blocked_hashes(10.0), 6);
/// assert_eq!(optimal_hashes(10, 1), 7);
/// ```
pub fn optimal_blocked_hashes(bits_per_key: f64) -> u32 {
    if bits_per_key.is_nan() || bits_per_key <= 0.0 {
        return 1;
    }
    // Evaluate the model for a notional 1M-key filter; the rate depends on bits/key only.
    let n = 1.0e6;
    let m = n * bits_per_key;
    let upper = optimal_hashes(bits_per_key, 1u32).saturating_add(2);
    let rates: Vec<(u32, f64)> = (1..=upper.min(MAX_HASHES))
        .map(|k| (k, blocked_false_positive_rate(m, n, k)))
        .collect();
    let best = rates.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    rates.iter().find(|r| r.1 <= best * 1.01).map_or(1, |r| r.0)
}

/// Bits per key the blocked layout needs to reach false-positive rate `p` (with
/// [`optimal_blocked_hashes`] probes), found by bisection on [`blocked_false_positive_rate`].
/// Slightly more than the textbook `-ln p / (ln 2)^2`; the gap grows as `p` shrinks.
///
/// # Examples
/// ```
/// use bloomkv::filter::math::blocked_bits_per_key;
/// let textbook = -(0.01f64.ln()) / std::f64::consts::LN_2.powi(2); // 9.59
/// let blocked = blocked_bits_per_key(0.01);
/// assert!(blocked > textbook && blocked < textbook * 1.1);
/// ```
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

/// Extra false-positive rate of bloomkv's standard layout over `fill^k`, from the keys whose
/// probes land on fewer than `k` distinct bits: the excess, for a query, of `bits` bits of
/// which the fraction `fill` is set (at random), `k` probes per key.
///
/// Why there is one: the standard layout's probe `i` is at `reduce(h1 + i·h2 + (i³-i)/6, m)`
/// (`docs/FILTERS.md`, "The two layouts"). The multiply-shift reduction keeps the *high*
/// bits, where the cubic term (below 2^17 for any `k <= 64`) is far less than one bit's
/// width (`2^64 / m`), so in effect the probes are `u + i·d` on a circle of `m` cells, `u`
/// and `d` uniform. When `d` is within `1/δ` cells of `j·m/δ` (a fraction
/// `j/δ` in lowest terms, `δ < k`), the probes fall into `δ` interleaved chains, each
/// advancing by less than a cell per step: the key probes few distinct bits and is a false
/// positive with probability near `fill^δ` instead of `fill^k`. The chance of such a `d` is
/// `2·φ(δ)/(δ·m)` (Euler's `φ` counts the fractions `j/δ`), so the excess falls as `1/m`,
/// whatever the load: about `2.9 / (m k)` at half fill, less at lower fill. It matters for
/// small filters and for very low rates: a 10-item filter sized by the textbook for 1% (96
/// bits, 7 probes) measures 1.50% rather than 1.00%, and one of 1000 items for 1e-9 (43,133
/// bits, 30 probes) would sit near 2e-6.
///
/// The model: with `δ` the near period and `a = |δ·d mod m|` its drift (uniform in `0..1`
/// cells), a chain of `L` probes spans `(L - 1)·a` cells from a random start, so it covers
/// `1 + c` or `2 + c` distinct bits (`c` the whole part of the span, the second with
/// probability its fraction). The expectation of `fill^(distinct bits)` is integrated over
/// `a` exactly for the polynomial pieces between kinks (3-point Gauss-Legendre), summed over
/// `δ < k`. Against the real probe sequence (10M simulated keys each, `m` from 15 to 40,000,
/// `k` from 7 to 30, fill 0.4-0.6) it is within 3%.
///
/// Returns 0 for `k < 2` (one probe cannot repeat), an empty or full array, or `bits < 1`.
///
/// # Examples
/// ```
/// use bloomkv::filter::math::standard_stride_excess;
/// assert_eq!(standard_stride_excess(1000, 1, 0.5), 0.0); // one probe cannot repeat
/// assert!(standard_stride_excess(96, 7, 0.5) > 0.0); // small filters repeat probes
/// ```
pub fn standard_stride_excess(bits: impl Count, k: u32, fill: f64) -> f64 {
    let m = bits.as_f64();
    if k < 2 || m.is_nan() || m < 1.0 || fill.is_nan() || fill <= 0.0 || fill >= 1.0 {
        return 0.0;
    }
    let f = fill;
    let full = f.powi(pow_exp(k));
    // E[fill^(distinct bits)] of one chain of `len` probes with drift `a`.
    let chain = |len: u32, a: f64| -> f64 {
        let span = f64::from(len.saturating_sub(1)) * a;
        let whole = span.floor();
        let frac = span - whole;
        f.powi(1 + pow_exp(float_to_u64(whole) as u32)) * (1.0 - frac * (1.0 - f))
    };
    // 3-point Gauss-Legendre nodes and weights on [0, 1].
    const NODES: [(f64, f64); 3] = [
        (0.112_701_665_379_258_3, 5.0 / 18.0),
        (0.5, 8.0 / 18.0),
        (0.887_298_334_620_741_7, 5.0 / 18.0),
    ];
    let mut total = 0.0;
    let mut kinks: Vec<f64> = Vec::new();
    for delta in 1..k {
        // Every chain covers at least one bit, so near period `delta` and all longer ones
        // add at most `(2/m) f^delta / (1 - f)`: stop once that is negligible.
        if 2.0 * f.powi(pow_exp(delta)) / ((1.0 - f) * m) < 1e-6 * total {
            break;
        }
        // `delta` chains: `long` of `q + 1` probes, the others of `q`.
        let (q, long) = (k / delta, k % delta);
        let short = delta - long;
        let integrand = |a: f64| -> f64 {
            chain(q + 1, a).powi(pow_exp(long)) * chain(q, a).powi(pow_exp(short))
        };
        // Between kinks (where a chain's span crosses a whole cell) the integrand is a
        // polynomial in `a`; integrate piece by piece.
        kinks.clear();
        kinks.push(0.0);
        for len in [q, q + 1] {
            let steps = len.saturating_sub(1);
            kinks.extend((1..steps).map(|j| f64::from(j) / f64::from(steps)));
        }
        kinks.push(1.0);
        kinks.sort_by(f64::total_cmp);
        let mut integral = 0.0;
        for w in kinks.windows(2) {
            let (lo, hi) = (w[0], w[1]);
            if hi > lo {
                integral += (hi - lo)
                    * NODES
                        .iter()
                        .map(|&(x, wt)| wt * integrand(lo + x * (hi - lo)))
                        .sum::<f64>();
            }
        }
        let windows = 2.0 * f64::from(totient(delta)) / (f64::from(delta) * m);
        total += windows * (integral - full);
    }
    total.clamp(0.0, 1.0 - full)
}

/// False-positive rate of a bloomkv [`Layout::Standard`](crate::filter::layout::Layout::Standard) filter of
/// `bits` bits holding `n` keys with `k` probes each: the textbook
/// [`false_positive_rate`] plus [`standard_stride_excess`] at the textbook fill
/// `1 - e^(-kn/m)`. Within a few percent of the mean rate measured over many small filters
/// (10 to 1000 keys, 1% to 0.01%), and never below it there; for large filters it is the
/// textbook rate. An empty filter has rate 0.
///
/// # Examples
/// ```
/// use bloomkv::filter::math::{false_positive_rate, standard_false_positive_rate};
/// assert!(standard_false_positive_rate(96, 10, 7) > false_positive_rate(96, 10, 7));
/// assert_eq!(standard_false_positive_rate(96, 0, 7), 0.0);
/// ```
pub fn standard_false_positive_rate(bits: impl Count, n: impl Count, k: u32) -> f64 {
    let (m, keys) = (bits.as_f64(), n.as_f64());
    let textbook = false_positive_rate(m, keys, k);
    if keys <= 0.0 || m <= 0.0 {
        return textbook;
    }
    let base = if k <= EXACT_MAX_HASHES && m <= EXACT_MAX_BITS {
        distinct_probes_rate(m, keys, k)
    } else {
        textbook
    };
    let fill = 1.0 - (-f64::from(k) * keys / m).exp();
    (base + standard_stride_excess(m, k, fill)).min(1.0)
}

/// Up to this many probes [`distinct_probes_rate`] is accurate in `f64` (its alternating sum
/// loses about `3^k` ulps); beyond, the textbook formula stands in.
const EXACT_MAX_HASHES: u32 = 20;
/// Past this many bits the finite-array correction is below a millionth of the rate, and
/// the textbook formula is used.
const EXACT_MAX_BITS: f64 = (1u64 << 24) as f64;

/// The rate of a query whose `k` probes hit `k` distinct positions, when each of `n` keys set
/// `k` distinct positions chosen at random among `m`: the probability that `k` given
/// positions are all set, by inclusion-exclusion over those left clear,
/// `Σ_i (-1)^i C(k, i) (C(m-i, k) / C(m, k))^n`. The textbook formula is its limit for large
/// `m`; for small arrays it differs (distinct positions per key fill a little more, a query's
/// distinct positions are a little harder to all find set, and the number of bits set
/// varies): 1.8% more at 20 keys in 192 bits with 7 probes, 0.35% more at 100 keys.
fn distinct_probes_rate(m: f64, n: f64, k: u32) -> f64 {
    let mut sum = 0.0;
    let mut binomial = 1.0;
    for i in 0..=k {
        let i_f = f64::from(i);
        // ln(C(m-i, k) / C(m, k)) = Σ_j ln(1 - i / (m - j)); zero ways once m - i < k.
        let clear = if m - i_f < f64::from(k) {
            0.0
        } else {
            let ln_ratio: f64 = (0..k).map(|j| (-i_f / (m - f64::from(j))).ln_1p()).sum();
            (n * ln_ratio).exp()
        };
        let term = binomial * clear;
        sum += if i % 2 == 0 { term } else { -term };
        binomial = binomial * f64::from(k - i) / (i_f + 1.0);
    }
    sum.clamp(0.0, 1.0)
}

/// The probe count that minimises [`standard_false_positive_rate`] for `bits` bits and `n`
/// keys, and that rate. Starts from `start` (else the textbook [`optimal_hashes`]) and walks
/// while the rate falls: the stride excess grows with the fill, so small filters want a
/// probe or more fewer than the textbook. Ties go to fewer probes.
fn best_standard_hashes(bits: f64, n: f64, start: Option<u32>) -> (u32, f64) {
    let rate = |k: u32| standard_false_positive_rate(bits, n, k);
    let mut k = start
        .unwrap_or_else(|| optimal_hashes(bits, n))
        .clamp(1, MAX_HASHES);
    let mut best = rate(k);
    while k < MAX_HASHES {
        let r = rate(k + 1);
        if r >= best {
            break;
        }
        (k, best) = (k + 1, r);
    }
    while k > 1 {
        let r = rate(k - 1);
        if r > best {
            break;
        }
        (k, best) = (k - 1, r);
    }
    (k, best)
}

/// Bits and probes for a [`Layout::Standard`](crate::filter::layout::Layout::Standard) filter that keeps
/// false-positive rate `p` at `n` keys: the fewest bits, no fewer than the textbook
/// [`optimal_bits`] (to within 1/4096), for which [`standard_false_positive_rate`] with the
/// best probe count, plus an allowance of `n / m^2` for keys whose probe sequence partly
/// coincides with an inserted key's (which the model leaves out; measured at up to
/// `0.8 n / m^2`), is at most `p`.
///
/// For large filters that is the textbook `m` or a fraction of a percent more (the probe
/// count is a whole number: at 1% the textbook `m` with `k = 7` gives 1.003%). Small
/// filters and very low rates take more, and often a probe or more fewer than the
/// textbook `k`, since the excess from repeated probes falls only as `1/m` and grows with
/// the fill: 10 keys at 1% take 107 bits and 6 probes (textbook: 96 and 7), 1000 keys at 0.1%
/// 0.4% more bits than the textbook, 1000 keys at 1e-9 about 33 times the textbook's 43,133
/// bits. Measured over thousands of filters each, from 5 to 1000 keys at 1% and 0.1%, the
/// mean rate stays below `p`.
///
/// `None` when `n` is 0, `p` is not strictly between 0 and 1, the bits would overflow, or the
/// rate needs more than 64 times the textbook bits (a few keys at a very low rate).
///
/// # Examples
/// ```
/// use bloomkv::filter::math::standard_sizing;
/// assert_eq!(standard_sizing(10, 0.01), Some((107, 6)));
/// assert_eq!(standard_sizing(0, 0.01), None);
/// ```
pub fn standard_sizing(n: impl Count, p: f64) -> Option<(u64, u32)> {
    let keys = n.as_f64();
    if keys.is_nan() || keys <= 0.0 || p.is_nan() || p <= 0.0 || p >= 1.0 {
        return None;
    }
    // The best `k` moves little between the sizes tried, so each search starts at the last.
    let hint = std::cell::Cell::new(None);
    let meets = |m: u64| -> Option<u32> {
        let bits = m as f64;
        let (k, rate) = best_standard_hashes(bits, keys, hint.get());
        hint.set(Some(k));
        (rate + COINCIDENCE_ALLOWANCE * keys / (bits * bits) <= p).then_some(k)
    };
    let mut lo = optimal_bits(keys, p).max(1);
    if lo == u64::MAX {
        return None;
    }
    if let Some(k) = meets(lo) {
        return Some((lo, k));
    }
    // Double until the rate is met, then bisect: the best rate only falls as bits are added.
    // The excess from coinciding probes alone asks for `m >= sqrt(n / p)`: for a few keys at
    // a very low rate that is gigabytes (one key at 1e-20: 1e10 bits). Past `MAX_INFLATION`
    // times the textbook size the layout cannot reach the rate at a sane size: refused.
    let cap = lo
        .saturating_mul(MAX_INFLATION)
        .max(lo.saturating_add(4096));
    let mut hi = lo;
    let k_hi = loop {
        hi = hi.checked_mul(2)?;
        if hi > cap {
            return None;
        }
        if let Some(k) = meets(hi) {
            break k;
        }
        lo = hi;
    };
    let (mut hi, mut k_hi) = (hi, k_hi);
    // `lo` misses, `hi` meets; stop within 1/4096 of the answer (rounding up).
    while hi - lo > 1 && hi - lo > hi / 4096 {
        let mid = lo + (hi - lo) / 2;
        match meets(mid) {
            Some(k) => (hi, k_hi) = (mid, k),
            None => lo = mid,
        }
    }
    Some((hi, k_hi))
}

/// How many times the textbook bits [`standard_sizing`] may give a filter before it refuses
/// the rate (1000 keys at 1e-9 take 33 times).
const MAX_INFLATION: u64 = 64;

/// What [`standard_sizing`] adds to the model, per key and per bit squared, for the keys
/// whose probe sequence partly coincides with an inserted key's (a start and a stride close
/// to its, or to its reverse): an effect of order `n / m^2` that
/// [`standard_false_positive_rate`] leaves out. It is measured, not derived: the mean over
/// thousands of filters exceeds the model by 0.1 to 0.8 `n / m^2` for 5 to 1000 keys, rates 1% to
/// 0.001% and 6 to 15 probes; the sizing allows a little more than the largest. That is up
/// to 18% of the rate for 5 keys at 0.1%, 3% for 100 keys at 0.1%, and nothing for large
/// filters.
const COINCIDENCE_ALLOWANCE: f64 = 1.0;

/// Euler's totient of a small number (`n < 64` here): how many `j` in `1..=n` are coprime
/// to `n`.
fn totient(n: u32) -> u32 {
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 { a } else { gcd(b, a % b) }
    }
    (1..=n).filter(|&j| gcd(j, n) == 1).count() as u32
}

/// A probe count as a `powi` exponent (counts here never exceed 64).
fn pow_exp(k: u32) -> i32 {
    i32::try_from(k).unwrap_or(i32::MAX)
}

/// Converts a non-negative float to `u64`, saturating (NaN becomes 0).
pub(crate) fn float_to_u64(x: f64) -> u64 {
    // `as` saturates at the type bounds and maps NaN to 0, which is what we want here.
    x as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_sizing_refuses_rates_it_cannot_reach_at_a_sane_size() {
        // One key at 1e-20 would need ~1e10 bits for the coinciding-probe excess alone.
        assert_eq!(standard_sizing(1usize, 1e-20), None);
        assert_eq!(standard_sizing(10usize, 1e-15), None);
        // Within the bound: 1000 keys at 1e-9 take about 33 times the textbook bits.
        let (m, _) = standard_sizing(1000usize, 1e-9).unwrap();
        let textbook = optimal_bits(1000, 1e-9);
        assert!(
            m > 20 * textbook && m <= MAX_INFLATION * textbook,
            "{m} vs {textbook}"
        );
        // Large filters are the textbook size or a fraction of a percent more.
        let (m, _) = standard_sizing(1_000_000usize, 0.01).unwrap();
        assert!(
            m >= optimal_bits(1_000_000, 0.01) && m < optimal_bits(1_000_000, 0.01) * 101 / 100
        );
    }

    #[test]
    fn standard_sizing_of_a_huge_count_does_not_overflow() {
        // The bisection's stopping test once multiplied the gap by 4096 (overflow past 2^52).
        let got = standard_sizing(1e15 as u64, 0.01);
        assert!(got.is_none_or(|(m, k)| m >= optimal_bits(1e15 as u64, 0.01) && k > 0));
    }

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

    #[test]
    fn repeated_probe_model_matches_the_probe_sequence() {
        // standard_stride_excess against the real standard-layout probes: the distinct
        // positions D of 2M random hashes, and E[f^D] - f^k for a random array of fill f.
        use crate::filter::layout::{StandardProbes, mix64};
        for (m, k) in [(105u64, 6u32), (1000, 7), (2500, 10)] {
            let mut hist = vec![0u64; k as usize + 1];
            let mut pos = Vec::with_capacity(k as usize);
            let samples = 2_000_000u64;
            for i in 0..samples {
                pos.clear();
                pos.extend(StandardProbes::new(mix64(i ^ 0x5eed << 40), m, k));
                pos.sort_unstable();
                pos.dedup();
                hist[pos.len()] += 1;
            }
            for f in [0.3, 0.5] {
                let simulated: f64 = hist
                    .iter()
                    .enumerate()
                    .map(|(d, &c)| c as f64 / samples as f64 * f64::powi(f, d as i32))
                    .sum::<f64>()
                    - f64::powi(f, k as i32);
                let model = standard_stride_excess(m, k, f);
                assert!(
                    (model - simulated).abs() / simulated < 0.1,
                    "m {m}, k {k}, fill {f}: model {model} vs simulated {simulated}"
                );
            }
        }
        assert_eq!(standard_stride_excess(1000u64, 1, 0.5), 0.0);
        assert!(standard_stride_excess(1000u64, 7, 0.5) > standard_stride_excess(2000u64, 7, 0.5));
    }
}
