//! MergingIterator against a sorted-vector model: random children, random seek/next sequences.

use std::cmp::Ordering;

use crate::iter::InternalIterator;
use crate::iter::merge::MergingIterator;
use crate::util::key::{self, Kind};
use crate::test_util::iter::{VecIter, drain};
use proptest::prelude::*;

type Entry = (Vec<u8>, Vec<u8>);

fn ikey(uk: u8, seq: u64, put: bool) -> Vec<u8> {
    let kind = if put { Kind::Put } else { Kind::Delete };
    key::encode(&[b'a' + uk], seq, kind)
}

/// Children with internal keys unique within a child; values name the child.
fn children_strategy() -> impl Strategy<Value = Vec<Vec<Entry>>> {
    proptest::collection::vec(
        proptest::collection::btree_set((0..6u8, 0..12u64, any::<bool>()), 0..15),
        0..8,
    )
    .prop_map(|children| {
        children
            .into_iter()
            .enumerate()
            .map(|(c, set)| {
                set.into_iter()
                    .map(|(uk, seq, put)| (ikey(uk, seq, put), format!("child{c}").into_bytes()))
                    .collect()
            })
            .collect()
    })
}

#[derive(Debug, Clone)]
enum Op {
    SeekToFirst,
    Seek(u8, u64, bool),
    Next(usize),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::SeekToFirst),
        (0..7u8, 0..13u64, any::<bool>()).prop_map(|(u, s, p)| Op::Seek(u, s, p)),
        (1..6usize).prop_map(Op::Next),
    ]
}

/// Every entry, ordered by internal key and then child index.
fn model(children: &[Vec<Entry>]) -> Vec<Entry> {
    let mut all: Vec<(usize, Entry)> = children
        .iter()
        .enumerate()
        .flat_map(|(c, v)| v.iter().cloned().map(move |e| (c, e)))
        .collect();
    all.sort_by(|(ca, a), (cb, b)| key::compare(&a.0, &b.0).then(ca.cmp(cb)));
    all.into_iter().map(|(_, e)| e).collect()
}

fn merged(children: &[Vec<Entry>]) -> MergingIterator {
    MergingIterator::new(children.iter().cloned().map(VecIter::boxed).collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn full_scan_matches_model(children in children_strategy()) {
        let mut it = merged(&children);
        prop_assert!(!it.valid());
        it.seek_to_first().unwrap();
        prop_assert_eq!(drain(&mut it), model(&children));
    }

    #[test]
    fn seek_next_sequences_match_model(
        children in children_strategy(),
        ops in proptest::collection::vec(op_strategy(), 1..20),
    ) {
        let want = model(&children);
        let mut it = merged(&children);
        let mut pos: Option<usize> = None; // None: unpositioned
        for op in ops {
            match op {
                Op::SeekToFirst => {
                    it.seek_to_first().unwrap();
                    pos = Some(0);
                }
                Op::Seek(u, s, p) => {
                    let target = ikey(u, s, p);
                    it.seek(&target).unwrap();
                    pos = Some(want.partition_point(|e| key::compare(&e.0, &target) == Ordering::Less));
                }
                Op::Next(n) => {
                    for _ in 0..n {
                        match pos {
                            Some(p) if p < want.len() => {
                                it.next().unwrap();
                                pos = Some(p + 1);
                            }
                            _ => break,
                        }
                    }
                }
            }
            match pos {
                Some(p) if p < want.len() => {
                    prop_assert!(it.valid());
                    prop_assert_eq!(it.key(), want[p].0.as_slice());
                    prop_assert_eq!(it.value(), want[p].1.as_slice());
                }
                _ => prop_assert!(!it.valid()),
            }
        }
    }
}

#[test]
fn byte_equal_keys_come_lower_child_first() {
    let k = ikey(0, 5, true);
    let children = vec![
        vec![(ikey(1, 1, true), b"c0-b".to_vec())],
        vec![(k.clone(), b"c1".to_vec())],
        vec![(k.clone(), b"c2".to_vec())],
        vec![],
        vec![
            (k.clone(), b"c4".to_vec()),
            (ikey(1, 2, true), b"c4-b".to_vec()),
        ],
    ];
    let mut it = merged(&children);
    it.seek_to_first().unwrap();
    let values: Vec<Vec<u8>> = drain(&mut it).into_iter().map(|e| e.1).collect();
    assert_eq!(
        values,
        vec![
            b"c1".to_vec(),
            b"c2".to_vec(),
            b"c4".to_vec(),
            b"c4-b".to_vec(),
            b"c0-b".to_vec()
        ]
    );
}

#[test]
fn no_children_is_empty() {
    let mut it = MergingIterator::new(Vec::new());
    it.seek_to_first().unwrap();
    assert!(!it.valid());
    it.seek(&ikey(0, 0, true)).unwrap();
    assert!(!it.valid());
}

#[test]
fn child_error_is_returned_and_leaves_it_invalid() {
    let mut failing = VecIter::new(vec![
        (ikey(0, 1, true), b"x".to_vec()),
        (ikey(2, 1, true), b"y".to_vec()),
    ]);
    failing.fail_after = Some(1); // the seek succeeds, the first next fails
    let mut it = MergingIterator::new(vec![
        VecIter::boxed(vec![(ikey(1, 1, true), b"z".to_vec())]),
        Box::new(failing),
    ]);
    it.seek_to_first().unwrap();
    assert_eq!(key::user_key(it.key()), b"a");
    let err = it.next().unwrap_err();
    assert!(err.is_corruption());
    assert!(!it.valid());
    // A failing seek is returned too.
    assert!(it.seek_to_first().is_err());
    assert!(!it.valid());
}

#[test]
fn many_children_interleave() {
    // 50 children, child c holds user keys c, c+50, c+100, ...
    let children: Vec<Vec<Entry>> = (0..50u32)
        .map(|c| {
            (0..40u32)
                .map(|j| {
                    let uk = (c + 50 * j).to_be_bytes();
                    (key::encode(&uk, 1, Kind::Put), Vec::new())
                })
                .collect()
        })
        .collect();
    let mut it = merged(&children);
    it.seek_to_first().unwrap();
    let keys: Vec<u32> = drain(&mut it)
        .iter()
        .map(|e| u32::from_be_bytes(key::user_key(&e.0).try_into().unwrap()))
        .collect();
    assert_eq!(keys, (0..2000).collect::<Vec<u32>>());
}

/// Byte-equal entries in several children (values name the child): every walk, in any mix of
/// directions, visits the model sequence ordered by (key, child index), so a reverse walk is
/// exactly the forward one reversed and turning around never skips or repeats an entry.
#[test]
fn direction_changes_with_duplicates_across_children() {
    let keys: Vec<Vec<u8>> = (0..6u8).map(|k| ikey(k, 1, true)).collect();
    // Child c holds keys whose index is not a multiple of c + 2 (so overlaps vary).
    let children: Vec<Vec<Entry>> = (0..3u8)
        .map(|c| {
            keys.iter()
                .enumerate()
                .filter(|(i, _)| i % (c as usize + 2) != 0)
                .map(|(_, k)| (k.clone(), vec![c]))
                .collect()
        })
        .collect();
    let mut model: Vec<Entry> = Vec::new();
    for k in &keys {
        for (c, child) in children.iter().enumerate() {
            if child.iter().any(|(ck, _)| ck == k) {
                model.push((k.clone(), vec![c as u8]));
            }
        }
    }
    let mut it = MergingIterator::new(children.into_iter().map(VecIter::boxed).collect());
    it.seek_to_last().unwrap();
    let mut back = Vec::new();
    while it.valid() {
        back.push((it.key().to_vec(), it.value().to_vec()));
        it.prev().unwrap();
    }
    back.reverse();
    assert_eq!(back, model);
    // A zig-zag: two forward, one back, from every start.
    for start in 0..model.len() {
        it.seek_to_first().unwrap();
        for _ in 0..start {
            it.next().unwrap();
        }
        let mut pos = start;
        for step in 0..12 {
            if step % 3 == 2 {
                it.prev().unwrap();
                if pos == 0 {
                    assert!(!it.valid());
                    break;
                }
                pos -= 1;
            } else {
                it.next().unwrap();
                pos += 1;
                if pos == model.len() {
                    assert!(!it.valid());
                    break;
                }
            }
            assert_eq!(
                (it.key().to_vec(), it.value().to_vec()),
                model[pos],
                "start {start} step {step}"
            );
        }
    }
}
