//! BloomPolicy: what SSTables see.

use bloomkv::Error;
use bloomkv::filter::{BloomFilter, BloomPolicy, FilterPolicy, Layout, hash_key};

fn keys(n: u64) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("user{i:08}").into_bytes()).collect()
}

#[test]
fn policy_output_is_a_blocked_bloom_filter() {
    let policy = BloomPolicy::new(10);
    assert_eq!(policy.name(), "bloomkv.BloomFilter");
    assert_eq!(policy.bits_per_key(), 10.0);
    let keys = keys(10_000);
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    let bytes = policy.create_filter(&refs);
    policy.check_filter(&bytes).unwrap();
    let f = BloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(f.layout(), Layout::Blocked);
    assert_eq!(f.len(), 10_000);
    // Tables keep filter format version 1 (24-byte header); standalone filters write
    // version 2, and both decode to the same filter.
    assert_eq!(bytes[4], 1);
    assert_eq!(bytes.len(), 24 + (f.bit_len() / 8) as usize + 4);
    assert_eq!(f.capacity(), 10_000);
    assert_eq!(BloomFilter::from_bytes(&f.to_bytes()).unwrap(), f);
    assert!(policy.may_contain(&f.to_bytes(), &keys[0]));
    for k in &keys {
        assert!(policy.may_contain(&bytes, k));
        assert!(policy.may_contain_hash(&bytes, hash_key(k)));
        assert!(f.contains(k));
    }
    // In-place probing answers exactly as the decoded filter does.
    for i in 0..100_000u64 {
        let h = hash_key(format!("absent{i}").as_bytes());
        assert_eq!(policy.may_contain_hash(&bytes, h), f.contains_hash(h));
    }
    let fp = (0..100_000u64)
        .filter(|i| policy.may_contain(&bytes, format!("absent{i}").as_bytes()))
        .count();
    assert!(fp < 1_300, "{fp} false positives in 100k");
    let expected = policy.expected_fp_rate(&bytes).unwrap();
    assert!((0.005..0.012).contains(&expected), "{expected}");
}

#[test]
fn adjacent_duplicate_hashes_do_not_grow_the_filter() {
    let policy = BloomPolicy::new(10.0);
    let hashes: Vec<u64> = (0..1000u64).map(|i| hash_key(&i.to_le_bytes())).collect();
    let doubled: Vec<u64> = hashes.iter().flat_map(|&h| [h, h, h]).collect();
    assert_eq!(
        policy.create_filter_from_hashes(&hashes),
        policy.create_filter_from_hashes(&doubled)
    );
}

#[test]
fn empty_key_set_builds_a_valid_filter_rejecting_everything_it_can() {
    let policy = BloomPolicy::default();
    let bytes = policy.create_filter_from_hashes(&[]);
    policy.check_filter(&bytes).unwrap();
    let hits = (0..10_000u64)
        .filter(|i| policy.may_contain(&bytes, &i.to_le_bytes()))
        .count();
    assert_eq!(hits, 0);
    assert_eq!(policy.expected_fp_rate(&bytes), Some(0.0));
}

#[test]
fn undecodable_filters_answer_maybe_and_fail_the_check() {
    let policy = BloomPolicy::new(10);
    let hashes: Vec<u64> = (0..500u64).map(|i| hash_key(&i.to_le_bytes())).collect();
    let good = policy.create_filter_from_hashes(&hashes);
    let mut bad_inputs = vec![
        Vec::new(),
        good[..good.len() - 1].to_vec(),
        b"garbage".to_vec(),
    ];
    let mut wrong_magic = good.clone();
    wrong_magic[0] ^= 1;
    bad_inputs.push(wrong_magic);
    let mut bad_k = good.clone();
    bad_k[7] = 0;
    bad_inputs.push(bad_k);
    for bad in &bad_inputs {
        assert!(matches!(
            policy.check_filter(bad),
            Err(Error::Corruption { .. })
        ));
        assert!((0..1000u64).all(|i| policy.may_contain(bad, &i.to_le_bytes())));
    }
    // A flipped payload bit passes the cheap path but not the check.
    let mut flipped = good.clone();
    flipped[100] ^= 0x10;
    assert!(policy.check_filter(&flipped).unwrap_err().is_corruption());
}

#[test]
fn bits_per_key_is_clamped_or_rejected() {
    assert_eq!(BloomPolicy::new(0).bits_per_key(), 1.0);
    assert_eq!(BloomPolicy::new(-3.0).bits_per_key(), 1.0);
    assert_eq!(BloomPolicy::new(f64::NAN).bits_per_key(), 1.0);
    assert_eq!(BloomPolicy::new(1e9).bits_per_key(), 1000.0);
    assert!(matches!(
        BloomPolicy::try_new(0),
        Err(Error::InvalidArgument(_))
    ));
    assert!(BloomPolicy::try_new(f64::INFINITY).is_err());
    assert_eq!(BloomPolicy::try_new(16).unwrap().bits_per_key(), 16.0);
}
