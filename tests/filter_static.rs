//! The static-set filters tables can carry (binary fuse 8, standard Ribbon) through the
//! `FilterPolicy` trait: no false negatives, false-positive rates measured on 1M keys and 1M
//! absent probes against the published figures, memory, and damaged bytes.

use bloomkv::filter::{BinaryFusePolicy, BloomPolicy, FilterPolicy, RibbonPolicy, hash_key};

const N: u64 = 1_000_000;

fn present() -> Vec<u64> {
    (0..N).map(|i| hash_key(&i.to_le_bytes())).collect()
}

fn absent_rate(policy: &dyn FilterPolicy, filter: &[u8]) -> f64 {
    let fp = (0..N)
        .filter(|&i| policy.may_contain_hash(filter, hash_key(&(i | 1 << 62).to_le_bytes())))
        .count();
    fp as f64 / N as f64
}

fn bits_per_key(filter: &[u8]) -> f64 {
    filter.len() as f64 * 8.0 / N as f64
}

#[test]
fn binary_fuse_8_matches_the_published_figures() {
    let p = BinaryFusePolicy::new();
    assert_eq!(p.name(), "bloomkv.BinaryFuse8");
    let keys = present();
    let f = p.create_filter_from_hashes(&keys);
    p.check_filter(&f).unwrap();
    assert!(
        keys.iter().all(|&h| p.may_contain_hash(&f, h)),
        "false negative"
    );
    let rate = absent_rate(&p, &f);
    let bpk = bits_per_key(&f);
    // Published: ~9.0 bits/key, ~0.39%.
    assert!(bpk < 9.1, "{bpk} bits/key");
    assert!((rate - 1.0 / 256.0).abs() < 0.0006, "measured {rate}");
    assert_eq!(p.expected_fp_rate(&f), Some(1.0 / 256.0));
    // Blocked Bloom at the same memory is ~4x worse.
    let bloom = BloomPolicy::new(bpk);
    let bf = bloom.create_filter_from_hashes(&keys);
    assert!(absent_rate(&bloom, &bf) > 3.0 * rate);
}

#[test]
fn ribbon_reaches_blooms_one_percent_with_a_quarter_less_memory() {
    let p = RibbonPolicy::with_result_bits(7);
    assert_eq!(p.name(), "bloomkv.Ribbon");
    let keys = present();
    let f = p.create_filter_from_hashes(&keys);
    p.check_filter(&f).unwrap();
    assert!(
        keys.iter().all(|&h| p.may_contain_hash(&f, h)),
        "false negative"
    );
    let rate = absent_rate(&p, &f);
    let bpk = bits_per_key(&f);
    assert!((rate - 1.0 / 128.0).abs() < 0.0008, "measured {rate}");
    assert!(bpk < 7.6, "{bpk} bits/key");
    // Blocked Bloom needs 10 bits/key for ~1% (and still does worse than 0.78%).
    let bloom = BloomPolicy::new(10);
    let bf = bloom.create_filter_from_hashes(&keys);
    let bloom_rate = absent_rate(&bloom, &bf);
    assert!(bloom_rate > rate, "{bloom_rate} vs {rate}");
    assert!(
        bpk < 0.77 * bits_per_key(&bf),
        "{bpk} vs {}",
        bits_per_key(&bf)
    );
    // At Bloom's 10 bits/key budget, Ribbon gives 2^-9.
    let p9 = RibbonPolicy::new(10.0);
    assert_eq!(p9.result_bits(), 9);
    let f9 = p9.create_filter_from_hashes(&keys);
    assert!(bits_per_key(&f9) <= 10.0);
    let r9 = absent_rate(&p9, &f9);
    assert!((r9 - 1.0 / 512.0).abs() < 0.0004, "measured {r9}");
}

#[test]
fn predicted_fpr_lets_allocation_compare_kinds() {
    assert_eq!(BinaryFusePolicy::predicted_fpr(9.0), 1.0 / 256.0);
    assert_eq!(RibbonPolicy::predicted_fpr(10.0), 1.0 / 512.0);
    assert_eq!(RibbonPolicy::predicted_fpr(7.5), 1.0 / 128.0);
    // Monotone in the budget.
    let mut last = 1.0;
    for b in 1..40 {
        let p = RibbonPolicy::predicted_fpr(f64::from(b));
        assert!(p <= last);
        last = p;
    }
}

/// Every bit flip and truncation of a small filter fails `check_filter` (tables then read
/// without it), and in-place lookups on damaged bytes never panic.
#[test]
fn damaged_static_filters_are_rejected() {
    let keys: Vec<u64> = (0..50u64).map(|i| hash_key(&i.to_le_bytes())).collect();
    let policies: Vec<Box<dyn FilterPolicy>> = vec![
        Box::new(BinaryFusePolicy::new()),
        Box::new(RibbonPolicy::with_result_bits(5)),
    ];
    for p in &policies {
        let good = p.create_filter_from_hashes(&keys);
        p.check_filter(&good).unwrap();
        for bit in 0..good.len() * 8 {
            let mut bad = good.clone();
            bad[bit / 8] ^= 1 << (bit % 8);
            let e = p.check_filter(&bad).unwrap_err();
            assert!(e.is_corruption(), "{}: bit {bit}: {e}", p.name());
            for &h in &keys[..5] {
                let _ = p.may_contain_hash(&bad, h);
            }
        }
        for len in 0..good.len() {
            assert!(p.check_filter(&good[..len]).is_err());
            // Truncated bytes decode to nothing: "may contain".
            assert!(p.may_contain_hash(&good[..len], keys[0]));
        }
        // Another kind's bytes: rejected by check_filter, "may contain" on lookup.
        let bloom = BloomPolicy::new(10).create_filter_from_hashes(&keys);
        assert!(p.check_filter(&bloom).is_err());
        assert!(p.may_contain_hash(&bloom, 12345));
    }
}
