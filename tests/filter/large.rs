//! Filters beyond 2^32 bits: the index math is 64-bit throughout.

use bloomkv::filter::FilterSize;
use bloomkv::filter::{BlockedProbe, BloomFilter, Layout, hash_key};

#[test]
fn blocks_reach_beyond_2_pow_32() {
    // The standard layout's probes beyond 2^32 are checked in the crate's own tests.
    let blocks = (1u64 << 33) + 7; // 2^33 blocks = 2^42 bits
    let mut seen_high = 0;
    for i in 0..10_000u64 {
        let mut probe = BlockedProbe::new(hash_key(&i.to_le_bytes()), blocks * 512, 8);
        let b = probe.block();
        assert!(b < blocks);
        seen_high += u32::from(b >= 1 << 32);
        assert!(probe.all(|o| o < 512));
    }
    assert!(seen_high > 4_500, "{seen_high}");
    assert_eq!(
        BlockedProbe::new(u64::MAX, blocks * 512, 8).block(),
        blocks - 1
    );
}

/// Really allocates 2^32 + 4096 bits (512 MiB); run with `--ignored`.
#[test]
#[ignore]
fn a_filter_larger_than_2_pow_32_bits_works() {
    for layout in [Layout::Standard, Layout::Blocked] {
        let mut f =
            BloomFilter::new(FilterSize::bits((1 << 32) + 4096, 7).with_layout(layout)).unwrap();
        assert!(f.bit_len() > 1 << 32);
        for i in 0..100_000u64 {
            f.insert(i.to_le_bytes());
        }
        assert!((0..100_000u64).all(|i| f.contains(i.to_le_bytes())));
        let fp = (0..100_000u64)
            .filter(|i| f.contains((i | 1 << 60).to_le_bytes()))
            .count();
        assert_eq!(fp, 0);
    }
}
