//! A counting sort by the leading bits of a key: the cheap partial order the static-filter
//! builds want for cache locality (items with nearby positions together), in two linear passes
//! instead of a comparison sort.

/// `items` reordered so that `bucket(item)` (in `0..buckets`) is non-decreasing; the order
/// within a bucket is the input order.
pub(crate) fn by_bucket<T: Copy + Default>(
    items: &[T],
    buckets: usize,
    bucket: impl Fn(&T) -> usize,
) -> Vec<T> {
    let mut starts = vec![0usize; buckets + 1];
    for it in items {
        starts[bucket(it) + 1] += 1;
    }
    for b in 0..buckets {
        starts[b + 1] += starts[b];
    }
    let mut out = vec![T::default(); items.len()];
    for it in items {
        let slot = &mut starts[bucket(it)];
        out[*slot] = *it;
        *slot += 1;
    }
    out
}

/// A bucket count for `n` items: about 64 items per bucket, a power of two in `1..=2^16`.
pub(crate) fn buckets_for(n: usize) -> usize {
    (n / 64).next_power_of_two().clamp(1, 1 << 16)
}

/// `hashes` sorted and without duplicates: a partition by the leading bits (uniform for
/// hashes), then a small sort per bucket; the buckets' order is the leading bits' order, so
/// the result is fully sorted.
pub(crate) fn sorted_dedup(hashes: &[u64]) -> Vec<u64> {
    let buckets = buckets_for(hashes.len());
    let bits = buckets.trailing_zeros();
    let top = |h: &u64| {
        if bits == 0 {
            0
        } else {
            (h >> (64 - bits)) as usize
        }
    };
    let mut out = by_bucket(hashes, buckets, top);
    for run in out.chunk_by_mut(|a, b| top(a) == top(b)) {
        run.sort_unstable();
    }
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_bucket_and_keeps_everything() {
        let items: Vec<u64> = (0..10_000u64)
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
            .collect();
        let b = buckets_for(items.len());
        let key = |x: &u64| (x >> (64 - b.trailing_zeros())) as usize;
        let out = by_bucket(&items, b, key);
        assert!(out.windows(2).all(|w| key(&w[0]) <= key(&w[1])));
        let (mut a, mut c) = (items.clone(), out.clone());
        a.sort_unstable();
        c.sort_unstable();
        assert_eq!(a, c);
        assert_eq!(buckets_for(0), 1);
        let mut with_dups = items.clone();
        with_dups.extend_from_slice(&items[..500]);
        with_dups.push(0);
        with_dups.push(u64::MAX);
        let mut want = with_dups.clone();
        want.sort_unstable();
        want.dedup();
        assert_eq!(sorted_dedup(&with_dups), want);
        assert_eq!(sorted_dedup(&[5, 5, 1]), vec![1, 5]);
        assert!(sorted_dedup(&[]).is_empty());
        assert_eq!(buckets_for(1 << 30), 1 << 16);
    }
}
