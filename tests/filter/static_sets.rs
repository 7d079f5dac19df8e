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

/// Headers that lie, with valid checksums: rejected by `check_filter`, "may contain" on
/// lookup, and nothing large allocated.
#[test]
fn lying_headers_with_valid_checksums() {
    let keys: Vec<u64> = (0..100u64).map(|i| hash_key(&i.to_le_bytes())).collect();
    let reseal = |b: &mut Vec<u8>| {
        let body = b.len() - 4;
        let crc = crc32fast::hash(&b[..body]);
        b[body..].copy_from_slice(&crc.to_le_bytes());
    };
    let fuse = BinaryFusePolicy::new();
    let good = fuse.create_filter_from_hashes(&keys);
    for (at, patch) in [
        (16usize, 19u32.to_le_bytes().to_vec()), // segment length 2^19: too long
        (16, 30u32.to_le_bytes().to_vec()),
        (20, 0u32.to_le_bytes().to_vec()),     // no segments
        (20, u32::MAX.to_le_bytes().to_vec()), // length disagrees
        (4, vec![2]),                          // unknown version
    ] {
        let mut bad = good.clone();
        bad[at..at + patch.len()].copy_from_slice(&patch);
        reseal(&mut bad);
        assert!(fuse.check_filter(&bad).is_err(), "patch at {at}");
        assert!(fuse.may_contain_hash(&bad, 99), "patch at {at}");
    }
    // Non-zero reserved bytes fail the full check (lookups ignore them: room for later use).
    let mut bad = good.clone();
    bad[5] = 1;
    reseal(&mut bad);
    assert!(fuse.check_filter(&bad).is_err());
    let ribbon = RibbonPolicy::with_result_bits(6);
    let good = ribbon.create_filter_from_hashes(&keys);
    for (at, patch) in [
        (5usize, vec![0u8]),                   // r = 0
        (5, vec![33]),                         // r above 32
        (16, u64::MAX.to_le_bytes().to_vec()), // absurd slot count
        (16, 100u64.to_le_bytes().to_vec()),   // not a multiple of 64
        (16, 64u64.to_le_bytes().to_vec()),    // fewer than two blocks
        (4, vec![9]),
    ] {
        let mut bad = good.clone();
        bad[at..at + patch.len()].copy_from_slice(&patch);
        reseal(&mut bad);
        assert!(ribbon.check_filter(&bad).is_err(), "patch at {at}");
        assert!(ribbon.may_contain_hash(&bad, 99), "patch at {at}");
    }
    let mut bad = good.clone();
    bad[6] = 1;
    reseal(&mut bad);
    assert!(ribbon.check_filter(&bad).is_err());
}

mod props {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Any key set (with repeats) builds, and every key of it is reported present.
        #[test]
        fn no_false_negatives(keys in prop::collection::vec(any::<u64>(), 0..2000), r in 1u32..=16) {
            let mut hashes = keys.clone();
            hashes.extend(keys.iter().take(10));
            let fuse = BinaryFusePolicy::new();
            let f = fuse.create_filter_from_hashes(&hashes);
            fuse.check_filter(&f).unwrap();
            prop_assert!(hashes.iter().all(|&h| fuse.may_contain_hash(&f, h)));
            let ribbon = RibbonPolicy::with_result_bits(r);
            let f = ribbon.create_filter_from_hashes(&hashes);
            ribbon.check_filter(&f).unwrap();
            prop_assert!(hashes.iter().all(|&h| ribbon.may_contain_hash(&f, h)));
        }
    }
}
