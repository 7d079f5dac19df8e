//! Filters beyond 2^32 bits: the index math is 64-bit throughout.

use bloomkv::filter::FilterSize;
use bloomkv::filter::layout::{BlockProbes, StandardProbes, block_index, reduce};
use bloomkv::filter::{BloomFilter, Layout, hash_key};

const BIG: u64 = (1 << 36) + 1234; // 64 Gbit: never allocated here

#[test]
fn standard_probes_reach_beyond_2_pow_32() {
    let mut max = 0;
    let mut high = 0usize;
    let mut total = 0usize;
    for i in 0..20_000u64 {
        for p in StandardProbes::new(hash_key(&i.to_le_bytes()), BIG, 7) {
            assert!(p < BIG);
            max = max.max(p);
            high += usize::from(p >= 1 << 32);
            total += 1;
        }
    }
    // Uniform over 0..BIG: all but 1/16 of the probes land above 2^32.
    let share = high as f64 / total as f64;
    assert!((0.92..0.955).contains(&share), "{share}");
    assert!(max > BIG - BIG / 1000);
}

#[test]
fn blocks_reach_beyond_2_pow_32() {
    let blocks = (1u64 << 33) + 7; // 2^33 blocks = 2^42 bits
    let mut seen_high = 0;
    for i in 0..10_000u64 {
        let b = block_index(hash_key(&i.to_le_bytes()), blocks);
        assert!(b < blocks);
        seen_high += u32::from(b >= 1 << 32);
        assert!(BlockProbes::new(i, 8).all(|o| o < 512));
    }
    assert!(seen_high > 4_500, "{seen_high}");
    assert_eq!(reduce(u64::MAX, blocks), blocks - 1);
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
