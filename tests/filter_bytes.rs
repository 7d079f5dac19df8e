//! Decoding hostile bytes: random, truncated, bit-flipped and inconsistent filters must give
//! typed errors, never a panic or a wrong filter.

use bloomkv::Error;
use bloomkv::filter::FilterSize;
use bloomkv::filter::{
    BloomFilter, BloomPolicy, CountingBloomFilter, FilterPolicy, Layout, hash_key,
};
use proptest::prelude::*;

fn sample(layout: Layout, n: u32) -> BloomFilter {
    let mut f =
        BloomFilter::new(FilterSize::bits_per_key(n.max(1) as usize, 10).with_layout(layout))
            .unwrap();
    for i in 0..n {
        f.insert(i.to_le_bytes());
    }
    f
}

/// Recomputes the trailing checksum, so that a test can reach the checks behind it.
fn reseal(bytes: &mut [u8]) {
    let body = bytes.len() - 4;
    let crc = crc32fast::hash(&bytes[..body]);
    bytes[body..].copy_from_slice(&crc.to_le_bytes());
}

fn corruption_offset(r: bloomkv::Result<BloomFilter>) -> u64 {
    match r {
        Err(Error::Corruption { offset, .. }) => offset,
        other => panic!("expected Corruption, got {other:?}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        prop_assert!(BloomFilter::from_bytes(&bytes).is_err());
        prop_assert!(CountingBloomFilter::from_bytes(&bytes).is_err());
        let policy = BloomPolicy::new(10);
        prop_assert!(policy.check_filter(&bytes).is_err());
        prop_assert!(policy.may_contain(&bytes, b"k"));
    }

    #[test]
    fn random_bytes_behind_a_valid_magic_never_panic(
        tail in prop::collection::vec(any::<u8>(), 0..512),
        reseal_it in any::<bool>(),
    ) {
        let mut bytes = b"BKVF\x01".to_vec();
        bytes.extend_from_slice(&tail);
        if reseal_it && bytes.len() >= 28 {
            reseal(&mut bytes);
        }
        let _ = BloomFilter::from_bytes(&bytes);
        let _ = CountingBloomFilter::from_bytes(&bytes);
        let policy = BloomPolicy::new(10);
        let _ = policy.may_contain_hash(&bytes, 7);
        let _ = policy.expected_fp_rate(&bytes);
    }

    #[test]
    fn truncation_is_corruption(n in 0u32..300, cut in any::<prop::sample::Index>(), blocked in any::<bool>()) {
        let layout = if blocked { Layout::Blocked } else { Layout::Standard };
        let bytes = sample(layout, n).to_bytes();
        let keep = cut.index(bytes.len());
        prop_assert!(BloomFilter::from_bytes(&bytes[..keep]).unwrap_err().is_corruption());
    }

    #[test]
    fn any_bit_flip_is_corruption(n in 0u32..300, at in any::<prop::sample::Index>(), bit in 0u8..8, blocked in any::<bool>()) {
        let layout = if blocked { Layout::Blocked } else { Layout::Standard };
        let mut bytes = sample(layout, n).to_bytes();
        let i = at.index(bytes.len());
        bytes[i] ^= 1 << bit;
        prop_assert!(BloomFilter::from_bytes(&bytes).unwrap_err().is_corruption());
        prop_assert!(BloomPolicy::new(10).check_filter(&bytes).is_err());
    }

    #[test]
    fn appended_bytes_are_corruption(extra in prop::collection::vec(any::<u8>(), 1..16)) {
        let mut bytes = sample(Layout::Blocked, 100).to_bytes();
        bytes.extend_from_slice(&extra);
        prop_assert!(BloomFilter::from_bytes(&bytes).unwrap_err().is_corruption());
    }
}

#[test]
fn round_trips_both_kinds_and_layouts() {
    for layout in [Layout::Standard, Layout::Blocked] {
        let f = sample(layout, 5000);
        let g = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(f, g);
        // len counts inserts that set a bit: 5000 distinct keys minus the few that were
        // already false positives when inserted.
        assert_eq!(g.len(), f.len());
        assert!(g.len() > 4950 && g.len() <= 5000, "{}", g.len());
        assert_eq!(
            (g.capacity(), g.error_rate()),
            (f.capacity(), f.error_rate())
        );
        assert!((0..5000u32).all(|i| g.contains(i.to_le_bytes())));
        let mut c =
            CountingBloomFilter::new(FilterSize::bits_per_key(100, 8).with_layout(layout)).unwrap();
        c.insert(b"x");
        assert_eq!(CountingBloomFilter::from_bytes(&c.to_bytes()).unwrap(), c);
        // Each kind refuses the other's bytes with a typed error, not as damage.
        assert!(matches!(
            BloomFilter::from_bytes(&c.to_bytes()).unwrap_err(),
            Error::WrongFilterKind {
                found: "counting",
                expected: "bloom",
                ..
            }
        ));
        assert!(matches!(
            CountingBloomFilter::from_bytes(&f.to_bytes()).unwrap_err(),
            Error::WrongFilterKind {
                found: "bloom",
                expected: "counting",
                ..
            }
        ));
    }
}

#[test]
fn header_layout_is_as_documented() {
    let mut f = BloomFilter::new(FilterSize::bits(100, 3).with_layout(Layout::Standard)).unwrap();
    f.insert_hash(hash_key(b"a"));
    let b = f.to_bytes();
    assert_eq!(&b[0..4], b"BKVF");
    assert_eq!(b[4], 2); // version
    assert_eq!(b[5], 0); // kind: Bloom
    assert_eq!(b[6], 0); // layout: standard
    assert_eq!(b[7], 3); // k
    assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 100);
    assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), 1);
    // Capacity: the load at which k = 3 is optimal for 100 bits, floor(100 ln 2 / 3) = 23.
    assert_eq!(u64::from_le_bytes(b[24..32].try_into().unwrap()), 23);
    assert_eq!(f.capacity(), 23);
    let rate = f64::from_le_bytes(b[32..40].try_into().unwrap());
    assert_eq!(rate, f.error_rate());
    // The rate the standard layout's model predicts at capacity (the textbook formula plus
    // the excess of keys whose probes repeat bits).
    assert_eq!(
        rate,
        bloomkv::filter::math::standard_false_positive_rate(100, 23, 3)
    );
    assert_eq!(b.len(), 40 + 16 + 4); // two words for 100 bits
    let crc = crc32fast::hash(&b[..56]);
    assert_eq!(u32::from_le_bytes(b[56..60].try_into().unwrap()), crc);
}

#[test]
fn inconsistent_headers_with_valid_checksums_are_rejected_without_allocating() {
    let good = sample(Layout::Blocked, 100).to_bytes();
    let cases: Vec<(usize, Vec<u8>, u64)> = vec![
        (5, vec![9], 5),                         // unknown kind
        (6, vec![7], 6),                         // unknown layout
        (7, vec![0], 7),                         // k = 0
        (7, vec![65], 7),                        // k above the cap
        (8, u64::MAX.to_le_bytes().to_vec(), 8), // absurd size: no allocation attempted
        (8, 513u64.to_le_bytes().to_vec(), 8),   // blocked size not a multiple of 512
        (8, 0u64.to_le_bytes().to_vec(), 8),     // no bits at all
        (4, vec![0], 4),                         // version 0
    ];
    for (at, patch, offset) in cases {
        let mut bytes = good.clone();
        bytes[at..at + patch.len()].copy_from_slice(&patch);
        reseal(&mut bytes);
        assert_eq!(
            corruption_offset(BloomFilter::from_bytes(&bytes)),
            offset,
            "patch at {at}"
        );
    }
    // An intact filter from a newer format version is reported as such.
    let mut newer = good.clone();
    newer[4] = 3;
    reseal(&mut newer);
    assert!(matches!(
        BloomFilter::from_bytes(&newer),
        Err(Error::UnsupportedVersion { found: 3, .. })
    ));
    // The version-2 sizing fields.
    for (at, patch) in [
        (24, 0u64.to_le_bytes()),
        (32, 1.5f64.to_le_bytes()),
        (32, 0.0f64.to_le_bytes()),
        (32, f64::NAN.to_le_bytes()),
    ] {
        let mut bytes = good.clone();
        bytes[at..at + 8].copy_from_slice(&patch);
        reseal(&mut bytes);
        assert_eq!(
            corruption_offset(BloomFilter::from_bytes(&bytes)),
            at as u64
        );
    }
    // Non-zero padding after the last bit of a standard filter.
    let mut f = BloomFilter::new(FilterSize::bits(100, 3).with_layout(Layout::Standard)).unwrap();
    f.insert(b"a");
    let mut padded = f.to_bytes();
    padded[40 + 15] |= 0x80; // bit 127, beyond bit 99
    reseal(&mut padded);
    assert_eq!(corruption_offset(BloomFilter::from_bytes(&padded)), 40 + 15);
    // Truncation names the length problem at the end of the input.
    let cut = &good[..good.len() - 10];
    assert_eq!(
        corruption_offset(BloomFilter::from_bytes(cut)),
        cut.len() as u64
    );
}

#[test]
fn constructors_reject_bad_arguments() {
    let bad = |r: bloomkv::Result<BloomFilter>| matches!(r, Err(Error::InvalidArgument(_)));
    assert!(bad(BloomFilter::new(FilterSize::for_items(0, 0.01))));
    for p in [0.0, 1.0, -0.5, 1.5, f64::NAN, f64::INFINITY] {
        assert!(bad(BloomFilter::new(FilterSize::for_items(100, p))), "{p}");
        assert!(
            bad(BloomFilter::new(FilterSize::for_items(100, p).blocked())),
            "{p}"
        );
    }
    assert!(bad(BloomFilter::new(FilterSize::bits_per_key(0, 10))));
    for b in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(
            bad(BloomFilter::new(FilterSize::bits_per_key(100, b))),
            "{b}"
        );
    }
    assert!(bad(BloomFilter::new(FilterSize::bits_per_key(
        usize::MAX,
        1e300
    ))));
    // Too large to allocate: an error, not an abort.
    assert!(bad(BloomFilter::new(
        FilterSize::bits(u64::MAX, 7).with_layout(Layout::Standard)
    )));
    assert!(bad(BloomFilter::new(
        FilterSize::bits(u64::MAX - 10, 7).with_layout(Layout::Blocked)
    )));
    assert!(bad(BloomFilter::new(
        FilterSize::bits(100, 0).with_layout(Layout::Standard)
    )));
    assert!(bad(BloomFilter::new(
        FilterSize::bits(100, 65).with_layout(Layout::Standard)
    )));
    assert!(CountingBloomFilter::new(FilterSize::for_items(0, 0.1)).is_err());
    assert!(CountingBloomFilter::new(FilterSize::for_items(10, 1.0)).is_err());
}
