//! The skip list and its arena: entries across chunk boundaries and bigger than a chunk,
//! empty keys and values, keys that differ only in length or deep inside a shared prefix,
//! heights, and the list against a `BTreeMap` model.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;

use crate::db::memtable::MemTable;
use crate::db::memtable::arena::NULL;
use crate::db::memtable::skiplist::{MAX_HEIGHT, Probe, SkipList};
use crate::iter::InternalIterator;
use crate::util::key::{self, KIND_SEEK, Kind};

/// Every node in order: (user key, trailer, value).
fn contents(list: &SkipList) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = list.first();
    while at != NULL {
        let node = list.node(at);
        let (mut k, mut v) = (Vec::new(), Vec::new());
        node.user_key_into(&mut k);
        node.value_into(&mut v);
        out.push((k, node.trailer(), v));
        at = list.next(at);
    }
    out
}

/// Ordered as the list orders: user key ascending, trailer descending.
type Model = BTreeMap<(Vec<u8>, Reverse<u64>), Vec<u8>>;

fn model_contents(model: &Model) -> Vec<(Vec<u8>, u64, Vec<u8>)> {
    model
        .iter()
        .map(|((k, Reverse(t)), v)| (k.clone(), *t, v.clone()))
        .collect()
}

#[test]
fn entries_across_many_chunks_and_bigger_than_a_chunk() {
    let list = SkipList::new();
    let mut model = Model::new();
    // Values from empty to 2 MiB (the first chunks hold 4 KiB); keys up to 70 KiB.
    for i in 0..4000u64 {
        let key_len = match i % 500 {
            0 => 70_000,
            n => (n % 40) as usize,
        };
        let value_len = match i % 997 {
            0 => 2 << 20,
            5 => 5000,
            n => (n % 300) as usize,
        };
        let key: Vec<u8> = (0..key_len).map(|j| (j as u64 * 31 + i) as u8).collect();
        let value: Vec<u8> = (0..value_len).map(|j| (j as u64 * 7 + i) as u8).collect();
        let trailer = key::pack_trailer(i + 1, Kind::Put);
        assert!(list.insert(&key, trailer, &value));
        model.insert((key, Reverse(trailer)), value);
    }
    assert!(list.chunks() > 10, "{} chunks", list.chunks());
    assert_eq!(contents(&list), model_contents(&model));
}

#[test]
fn arena_memory_stays_close_to_what_the_nodes_take() {
    let list = SkipList::new();
    let mut node_bytes = 0u64;
    for i in 0..100_000u64 {
        let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
        list.insert(&key, key::pack_trailer(i + 1, Kind::Put), &[1u8; 16]);
        // Header, about 4/3 links, key, trailer, value.
        node_bytes += 8 + 8 + 8 + 16;
    }
    let links = 100_000.0 * 8.0 * 4.0 / 3.0;
    let expect = node_bytes as f64 + links;
    let allocated = list.allocated_bytes() as f64;
    assert!(
        allocated > expect * 0.97 && allocated < expect * 1.1,
        "allocated {allocated}, nodes about {expect}"
    );
}

#[test]
fn empty_keys_and_values_and_keys_differing_only_in_length() {
    let list = SkipList::new();
    let keys: Vec<&[u8]> = vec![
        b"",
        b"\0",
        b"a",
        b"a\0",
        b"a\0\0\0\0\0\0",
        b"a\0\0\0\0\0\0\0",
        b"a\0\0\0\0\0\0\0\0",
        b"a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
        b"a\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0",
        b"a\x01",
        b"\xff",
        b"\xff\xff\xff\xff\xff\xff\xff\xff",
        b"\xff\xff\xff\xff\xff\xff\xff\xff\0",
    ];
    let mut model = Model::new();
    // Inserted backwards and with empty and non-empty values.
    for (i, k) in keys.iter().enumerate().rev() {
        let value = if i % 2 == 0 { Vec::new() } else { vec![i as u8; i] };
        let trailer = key::pack_trailer(i as u64, Kind::Put);
        list.insert(k, trailer, &value);
        model.insert((k.to_vec(), Reverse(trailer)), value);
    }
    let got = contents(&list);
    assert_eq!(got, model_contents(&model));
    // The order is the bytewise one.
    let mut sorted = keys.clone();
    sorted.sort();
    let got_keys: Vec<&[u8]> = got.iter().map(|(k, _, _)| k.as_slice()).collect();
    assert_eq!(got_keys, sorted);
    // Each key finds itself, and only itself.
    for k in &keys {
        Probe::with(k, key::pack_trailer(key::MAX_SEQ, KIND_SEEK), |p| {
            let at = list.seek_ge(p);
            assert_ne!(at, NULL);
            assert!(list.node(at).user_key_is(p), "{k:?}");
            let mut found = Vec::new();
            list.node(at).user_key_into(&mut found);
            assert_eq!(found, *k);
        });
    }
}

#[test]
fn keys_sharing_a_long_prefix_order_by_their_first_difference() {
    let list = SkipList::new();
    let mut model = Model::new();
    let base = vec![b'p'; 40];
    let mut seq = 0;
    // Differences at every byte around the word boundaries, up or down, and length-only.
    for at in 0..40 {
        for delta in [0u8, 1, b'p', b'q', 0xff] {
            let mut k = base.clone();
            k[at] = delta;
            for len in [at + 1, 40, 41] {
                let mut k = k.clone();
                k.resize(len, 0);
                seq += 1;
                let trailer = key::pack_trailer(seq, Kind::Put);
                list.insert(&k, trailer, &k);
                model.insert((k, Reverse(trailer)), Vec::new());
            }
        }
    }
    let got: Vec<(Vec<u8>, u64)> = contents(&list)
        .into_iter()
        .map(|(k, t, v)| {
            assert_eq!(k, v);
            (k, t)
        })
        .collect();
    let want: Vec<(Vec<u8>, u64)> = model.into_keys().map(|(k, Reverse(t))| (k, t)).collect();
    assert_eq!(got, want);
}

#[test]
fn re_adding_a_key_replaces_its_node_in_place() {
    let list = SkipList::new();
    for i in 0..200u64 {
        list.insert(&i.to_be_bytes(), 1 << 8 | 1, b"old");
    }
    for i in (0..200u64).step_by(3) {
        assert!(!list.insert(&i.to_be_bytes(), 1 << 8 | 1, format!("new{i}").as_bytes()));
    }
    let got = contents(&list);
    assert_eq!(got.len(), 200);
    for (i, (k, _, v)) in got.iter().enumerate() {
        assert_eq!(k, &(i as u64).to_be_bytes());
        let want = if i % 3 == 0 { format!("new{i}").into_bytes() } else { b"old".to_vec() };
        assert_eq!(v, &want);
    }
}

#[test]
fn heights_are_a_quarter_each_level_up_and_capped() {
    let list = SkipList::new();
    let n = 40_000u64;
    for i in 0..n {
        list.insert(&i.to_be_bytes(), 1 << 8, b"");
    }
    // Count the nodes at each level by walking the towers' bottom level and reading heights.
    let mut per_height = [0u64; MAX_HEIGHT + 1];
    let mut at = list.first();
    while at != NULL {
        per_height[list.node(at).height()] += 1;
        at = list.next(at);
    }
    assert_eq!(per_height[0], 0);
    assert_eq!(per_height.iter().sum::<u64>(), n);
    let at_least = |h: usize| per_height[h..].iter().sum::<u64>() as f64;
    for h in 2..=4 {
        let ratio = at_least(h) / at_least(h - 1);
        assert!((0.22..0.28).contains(&ratio), "level {h}: {ratio}");
    }
}

#[test]
fn adds_from_several_threads_all_land_in_order() {
    // The Db never adds concurrently, but MemTable is public.
    let mem = Arc::new(MemTable::new());
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let mem = mem.clone();
            std::thread::spawn(move || {
                for i in 0..5000u64 {
                    let k = (i * 4 + t).to_be_bytes();
                    mem.add(i * 4 + t + 1, Kind::Put, &k, &k);
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(mem.len(), 20_000);
    let mut it = mem.iter();
    it.seek_to_first().unwrap();
    let mut n = 0u64;
    while it.valid() {
        assert_eq!(key::user_key(it.key()), n.to_be_bytes());
        assert_eq!(it.value(), n.to_be_bytes());
        n += 1;
        it.next().unwrap();
    }
    assert_eq!(n, 20_000);
}

fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    // Few distinct bytes and lengths around the word boundaries, so keys often share
    // prefixes, are prefixes of each other, or differ only in trailing zero bytes.
    let bytes = prop_oneof![Just(0u8), Just(1u8), Just(b'k'), Just(0xffu8)];
    let short = proptest::collection::vec(bytes.clone(), 0..4);
    let long = proptest::collection::vec(bytes, 6..26);
    prop_oneof![short, long]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn list_matches_a_btreemap(
        adds in proptest::collection::vec(
            (key_strategy(), 0..6u64, proptest::collection::vec(any::<u8>(), 0..20)),
            0..150,
        ),
        probes in proptest::collection::vec((key_strategy(), 0..7u64), 1..30),
    ) {
        let list = SkipList::new();
        let mut model = Model::new();
        for (k, seq, v) in &adds {
            // Few sequence numbers: the same internal key is often added again.
            let trailer = key::pack_trailer(*seq, Kind::Put);
            let fresh = list.insert(k, trailer, v);
            let was = model.insert((k.clone(), Reverse(trailer)), v.clone());
            prop_assert_eq!(fresh, was.is_none());
        }
        prop_assert_eq!(contents(&list), model_contents(&model));
        let entries = model_contents(&model);
        let last = list.last();
        match entries.last() {
            None => prop_assert_eq!(last, NULL),
            Some((k, t, _)) => {
                let mut got = Vec::new();
                list.node(last).user_key_into(&mut got);
                prop_assert_eq!((&got, list.node(last).trailer()), (k, *t));
            }
        }
        let key_of = |at| {
            if at == NULL {
                return None;
            }
            let mut k = Vec::new();
            list.node(at).user_key_into(&mut k);
            Some((k, list.node(at).trailer()))
        };
        for (k, seq) in probes {
            let trailer = key::pack_trailer(seq, KIND_SEEK);
            let target = (k.clone(), Reverse(trailer));
            let ge = model.range(&target..).next().map(|((k, Reverse(t)), _)| (k.clone(), *t));
            let lt = model.range(..&target).next_back().map(|((k, Reverse(t)), _)| (k.clone(), *t));
            let le = model.range(..=&target).next_back().map(|((k, Reverse(t)), _)| (k.clone(), *t));
            Probe::with(&k, trailer, |p| {
                prop_assert_eq!(key_of(list.seek_ge(p)), ge);
                prop_assert_eq!(key_of(list.seek_lt(p)), lt);
                prop_assert_eq!(key_of(list.seek_le(p)), le);
                Ok(())
            })?;
        }
    }
}
