//! One sizing type and one constructor for `BloomFilter` and `CountingBloomFilter`
//! (`FilterSize`): it builds exactly what the eight old constructors built (kept as
//! deprecated aliases), and its errors name the argument the caller passed.

#![allow(
    deprecated,
    reason = "the old constructors are compared with the new one"
)]

use bloomkv::Error;
use bloomkv::filter::{BloomFilter, CountingBloomFilter, FilterSize, Layout};

#[test]
fn the_one_constructor_builds_what_the_eight_old_ones_did() {
    let pairs: Vec<(BloomFilter, BloomFilter)> = vec![
        (
            BloomFilter::with_rate(1000, 0.01).unwrap(),
            BloomFilter::new(FilterSize::for_items(1000, 0.01)).unwrap(),
        ),
        (
            BloomFilter::with_capacity(1000, 0.001).unwrap(),
            BloomFilter::new(FilterSize::for_items(1000, 0.001)).unwrap(),
        ),
        (
            BloomFilter::with_bits_per_key(500, 12).unwrap(),
            BloomFilter::new(FilterSize::bits_per_key(500, 12)).unwrap(),
        ),
        (
            BloomFilter::with_rate_blocked(1000, 0.01).unwrap(),
            BloomFilter::new(FilterSize::for_items(1000, 0.01).blocked()).unwrap(),
        ),
        (
            BloomFilter::with_bits_per_key_blocked(500, 9.5).unwrap(),
            BloomFilter::new(FilterSize::bits_per_key(500, 9.5).blocked()).unwrap(),
        ),
        (
            BloomFilter::with_layout(Layout::Blocked, 300, 10).unwrap(),
            BloomFilter::new(FilterSize::bits_per_key(300, 10).with_layout(Layout::Blocked))
                .unwrap(),
        ),
        (
            BloomFilter::with_layout_rate(Layout::Standard, 300, 0.05).unwrap(),
            BloomFilter::new(FilterSize::for_items(300, 0.05)).unwrap(),
        ),
        (
            BloomFilter::with_params(Layout::Blocked, 4096, 6).unwrap(),
            BloomFilter::new(FilterSize::bits(4096, 6).blocked()).unwrap(),
        ),
    ];
    for (old, new) in pairs {
        assert_eq!(old, new);
    }
    assert_eq!(
        CountingBloomFilter::with_capacity(100, 0.02).unwrap(),
        CountingBloomFilter::new(FilterSize::for_items(100, 0.02)).unwrap()
    );
    assert_eq!(
        CountingBloomFilter::with_params(Layout::Standard, 999, 4).unwrap(),
        CountingBloomFilter::new(FilterSize::bits(999, 4)).unwrap()
    );
    assert_eq!(
        CountingBloomFilter::with_bits_per_key_blocked(64, 16).unwrap(),
        CountingBloomFilter::new(FilterSize::bits_per_key(64, 16).blocked()).unwrap()
    );
}

fn message(r: Result<BloomFilter, Error>) -> String {
    match r {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("{other:?}"),
    }
}

#[test]
fn errors_name_the_argument_the_caller_used() {
    let cases = [
        (FilterSize::for_items(0, 0.01), "capacity"),
        (FilterSize::for_items(10, 1.5), "error_rate"),
        (FilterSize::for_items(10, f64::NAN), "error_rate"),
        (FilterSize::bits_per_key(0, 10), "capacity"),
        (FilterSize::bits_per_key(10, -2.0), "bits_per_key"),
        (FilterSize::bits(0, 3), "bits"),
        (FilterSize::bits(64, 0), "k"),
        (FilterSize::bits(64, 65), "k"),
    ];
    for (size, arg) in cases {
        let m = message(BloomFilter::new(size));
        assert!(m.contains(&format!("{arg} must")), "{size:?}: {m}");
        let c = CountingBloomFilter::new(size).unwrap_err().to_string();
        assert!(c.contains(&format!("{arg} must")), "{size:?}: {c}");
    }
    // The capacity-and-rate alias names its own arguments, not another constructor's.
    let m = message(BloomFilter::with_capacity(0, 0.01));
    assert!(
        m.contains("capacity") && !m.contains("expected_items"),
        "{m}"
    );
    let m = message(BloomFilter::with_capacity(10, 2.0));
    assert!(m.contains("error_rate") && !m.contains("fp_rate"), "{m}");
}
