//! A Bloom filter's parameters from what its caller asks for (keys at a rate, or bits per
//! key), validated with a typed error, and the rate parameters predict.

use crate::error::{Error, Result};
use crate::filter::layout::{Layout, MAX_HASHES};

use super::math;

/// Bits and probes of a standard-layout filter that keeps rate `p` at `n` keys
/// ([`math::standard_sizing`]), validated.
pub(crate) fn standard_size(n: usize, p: f64) -> Result<(u64, u32)> {
    check_rate_args(n, p)?;
    math::standard_sizing(n, p).ok_or_else(|| {
        Error::InvalidArgument(format!(
            "{n} keys at false-positive rate {p} need more bits than a filter can have, or more \
             than 64 times the textbook size with the standard layout (a few keys at a very \
             low rate: ask for a higher rate or a larger capacity)"
        ))
    })
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
    Ok(match layout {
        Layout::Standard => standard_size(n, p)?.0 as f64 / n as f64,
        Layout::Blocked => {
            check_rate_args(n, p)?;
            math::blocked_bits_per_key(p)
        }
    })
}

/// `InvalidArgument` unless `n` is positive and `p` strictly between 0 and 1.
fn check_rate_args(n: usize, p: f64) -> Result<()> {
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
    Ok(())
}

/// The rate a filter's parameters predict for `items` keys.
pub(crate) fn predicted_rate(layout: Layout, bits: u64, items: u64, k: u32) -> f64 {
    match layout {
        Layout::Standard => math::standard_false_positive_rate(bits, items, k),
        Layout::Blocked => math::blocked_false_positive_rate(bits, items, k),
    }
}

/// Keeps a rate strictly inside (0, 1), as the format requires.
pub(crate) fn clamp_rate(p: f64) -> f64 {
    if p.is_nan() {
        0.5
    } else {
        p.clamp(f64::MIN_POSITIVE, 1.0 - f64::EPSILON)
    }
}
