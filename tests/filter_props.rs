//! Property tests: no false negatives in either layout, the counting filter against a
//! multiset model, and serialization round trips.

use std::collections::HashMap;

use bloomkv::filter::FilterSize;
use bloomkv::filter::{BloomFilter, BloomPolicy, CountingBloomFilter, FilterPolicy, Layout};
use proptest::prelude::*;

fn layout() -> impl Strategy<Value = Layout> {
    prop_oneof![Just(Layout::Standard), Just(Layout::Blocked)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn no_false_negatives(
        keys in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..24), 1..400),
        bits_per_key in 0.5f64..24.0,
        layout in layout(),
    ) {
        let mut f = BloomFilter::new(FilterSize::bits_per_key(keys.len(), bits_per_key).with_layout(layout)).unwrap();
        for k in &keys {
            f.insert(k);
        }
        for k in &keys {
            prop_assert!(f.contains(k));
        }
        let back = BloomFilter::from_bytes(&f.to_bytes()).unwrap();
        prop_assert_eq!(&back, &f);
        // The same keys through the policy's in-place path.
        let policy = BloomPolicy::new(bits_per_key);
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let bytes = policy.create_filter(&refs);
        policy.check_filter(&bytes).unwrap();
        for k in &keys {
            prop_assert!(policy.may_contain(&bytes, k));
        }
    }

    #[test]
    fn no_false_negatives_with_overfilled_filters(
        n in 1usize..3000,
        capacity in 1usize..200,
        layout in layout(),
    ) {
        // Far more keys than the filter was sized for: rates degrade, membership must not.
        let mut f = BloomFilter::new(FilterSize::bits_per_key(capacity, 4.0).with_layout(layout)).unwrap();
        for i in 0..n {
            f.insert(i.to_le_bytes());
        }
        prop_assert!((0..n).all(|i| f.contains(i.to_le_bytes())));
    }

    #[test]
    fn counting_filter_follows_a_multiset_model(
        ops in prop::collection::vec((any::<bool>(), 0u8..40), 1..600),
        bits_per_key in 1.0f64..8.0,
        layout in layout(),
    ) {
        // Small filters over few keys, so that counters collide and saturate.
        let mut c = CountingBloomFilter::new(FilterSize::bits_per_key(20, bits_per_key).with_layout(layout)).unwrap();
        let mut model: HashMap<u8, u32> = HashMap::new();
        for (insert, key) in ops {
            let k = [key];
            let count = model.entry(key).or_insert(0);
            if insert {
                c.insert(k);
                *count += 1;
            } else if *count > 0 {
                prop_assert!(c.remove(k), "remove of a present key failed");
                *count -= 1;
            } else if !c.contains(k) {
                let before = c.clone();
                prop_assert!(!c.remove(k));
                prop_assert_eq!(&before, &c);
            }
            // (Removing a never-inserted key that is a false positive breaks every counting
            // filter; it is outside the contract, so the model never does it.)
            for (&key, &count) in &model {
                if count > 0 {
                    prop_assert!(c.contains([key]), "false negative for {}", key);
                }
            }
            let live: u32 = model.values().sum();
            prop_assert_eq!(c.len(), live as usize);
        }
        let back = CountingBloomFilter::from_bytes(&c.to_bytes()).unwrap();
        prop_assert_eq!(&back, &c);
        // The plain filter derived from the counters answers identically.
        let plain = c.to_bloom_filter().unwrap();
        for key in 0u8..=255 {
            prop_assert_eq!(plain.contains([key]), c.contains([key]));
        }
    }
}

#[test]
fn saturated_counters_never_come_back_down() {
    let mut c =
        CountingBloomFilter::new(FilterSize::bits(64, 3).with_layout(Layout::Standard)).unwrap();
    for _ in 0..40 {
        c.insert(b"hot");
    }
    assert!(c.saturated_counters() >= 1);
    for _ in 0..40 {
        assert!(c.remove(b"hot"));
    }
    // Counters stuck at 15 keep answering "maybe": a false positive, never a false negative.
    assert!(c.contains(b"hot"));
}

#[test]
fn removing_restores_an_empty_filter() {
    for layout in [Layout::Standard, Layout::Blocked] {
        let mut c =
            CountingBloomFilter::new(FilterSize::bits_per_key(1000, 10).with_layout(layout))
                .unwrap();
        let empty = c.to_bytes();
        for i in 0..1000u32 {
            c.insert(i.to_le_bytes());
        }
        for i in 0..1000u32 {
            assert!(c.remove(i.to_le_bytes()));
        }
        assert!(c.is_empty());
        assert_eq!(c.to_bytes(), empty);
    }
}
