//! MemTable against a model: arbitrary byte keys (shared prefixes, zero bytes, lengths around
//! the 16-byte inline prefix and its two 8-byte halves), iteration order, seeks and snapshot
//! gets.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::iter::InternalIterator;
use crate::util::key::{self, KIND_SEEK, Kind};
use crate::db::memtable::MemTable;
use proptest::prelude::*;

fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    let short = proptest::collection::vec(
        prop_oneof![Just(0u8), Just(1u8), Just(b'a'), Just(0xffu8)],
        0..12,
    );
    // Keys that share their first 6 bytes (a tag and a name, as the server writes), so that
    // they differ around byte 8, inside the second half of the prefix, at byte 16 and beyond.
    let shared = proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), Just(0xffu8)], 0..16)
        .prop_map(|tail| [b"\x01key:0".as_slice(), &tail].concat());
    prop_oneof![short, shared]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn order_seek_and_get_match_model(
        writes in proptest::collection::vec((key_strategy(), any::<bool>(), any::<u8>()), 0..60),
        probes in proptest::collection::vec((key_strategy(), 0..70u64), 1..20),
    ) {
        // Half the cases with a key filter (a tiny one: most answers are false positives, some
        // are "absent"), half without.
        let mem = Arc::new(if writes.len() % 2 == 0 { MemTable::with_budget(512) } else { MemTable::new() });
        let mut model: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (i, (k, put, v)) in writes.iter().enumerate() {
            let seq = i as u64 + 1;
            let kind = if *put { Kind::Put } else { Kind::Delete };
            let value = if *put { vec![*v; (*v % 4) as usize] } else { Vec::new() };
            mem.add(seq, kind, k, &value);
            model.push((key::encode(k, seq, kind), value));
        }
        model.sort_by(|a, b| key::compare(&a.0, &b.0));

        let mut it = mem.iter();
        it.seek_to_first().unwrap();
        for (k, v) in &model {
            prop_assert!(it.valid());
            prop_assert_eq!(it.key(), k.as_slice());
            prop_assert_eq!(it.value(), v.as_slice());
            it.next().unwrap();
        }
        prop_assert!(!it.valid());

        for (k, snap) in probes {
            let target = key::encode(&k, snap, KIND_SEEK);
            let at = model.partition_point(|e| key::compare(&e.0, &target) == Ordering::Less);
            it.seek(&target).unwrap();
            match model.get(at) {
                Some((mk, mv)) => {
                    prop_assert!(it.valid());
                    prop_assert_eq!(it.key(), mk.as_slice());
                    prop_assert_eq!(it.value(), mv.as_slice());
                }
                None => prop_assert!(!it.valid()),
            }
            let want = model.get(at).and_then(|(mk, mv)| {
                let p = key::parse(mk).unwrap();
                (p.user_key == k.as_slice()).then(|| (p.kind, mv.clone()))
            });
            prop_assert_eq!(mem.get(&k, snap), want);
        }
    }
}
