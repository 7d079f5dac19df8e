//! Map test for the seekable, bidirectional reads: random writes, flushes, compactions and
//! snapshots (so entries span both memtables, level 0 and deeper levels), then cursor walks
//! mixing seeks, `seek_for_prev`, `next`, `prev`, `seek_to_first` and `seek_to_last`, and
//! double-ended scans mixing `next` and `next_back`, all checked against a `BTreeMap`.

use std::ops::Bound;

use bloomkv::{Cursor, Db, Options, ReadOptions};
use proptest::prelude::*;

use crate::common::Map;

#[derive(Debug, Clone)]
enum Step {
    First,
    Last,
    Seek(u8),
    SeekForPrev(u8),
    Next,
    Prev,
}

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8),
    Delete(u8),
    Flush,
    Compact,
    Snapshot,
    /// A cursor at the latest state or at snapshot `n % snapshots`, with optional
    /// `[lower, upper)` bounds; a write lands halfway through the walk (invisible to it).
    Walk(Option<u8>, Option<(u8, u8)>, Vec<Step>),
    /// A double-ended scan of `[a, b]`: `true` takes from the front, `false` from the back.
    Range(u8, u8, Vec<bool>),
    MultiGet(Vec<u8>),
}

const KEYS: u8 = 48;

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn value(k: u8, v: u8) -> Vec<u8> {
    vec![v; 1 + (k as usize * 7 + v as usize) % 200]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        1 => Just(Step::First),
        1 => Just(Step::Last),
        2 => (0..KEYS + 2).prop_map(Step::Seek),
        2 => (0..KEYS + 2).prop_map(Step::SeekForPrev),
        4 => Just(Step::Next),
        4 => Just(Step::Prev),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (0..KEYS, any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        3 => (0..KEYS).prop_map(Op::Delete),
        1 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Snapshot),
        2 => (
            prop::option::of(any::<u8>()),
            prop::option::of((0..KEYS, 0..KEYS)),
            prop::collection::vec(step(), 1..30)
        )
            .prop_map(|(s, b, steps)| Op::Walk(s, b, steps)),
        1 => (0..KEYS, 0..KEYS, prop::collection::vec(any::<bool>(), 0..40))
            .prop_map(|(a, b, p)| Op::Range(a.min(b), a.max(b), p)),
        1 => prop::collection::vec(0..KEYS + 2, 0..12).prop_map(Op::MultiGet),
    ]
}

fn options() -> Options {
    Options {
        memtable_bytes: 4 * 1024,
        block_bytes: 256,
        target_file_bytes: 4 * 1024,
        max_bytes_for_level_base: 8 * 1024,
        level0_compaction_trigger: 3,
        block_cache_bytes: 64 * 1024,
        ..Default::default()
    }
}

/// Where the model cursor is: an index into the sorted view, or invalid.
fn check(c: &Cursor, view: &[(Vec<u8>, Vec<u8>)], pos: Option<usize>, what: &str) {
    c.status().unwrap();
    match pos {
        Some(i) => {
            assert!(
                c.valid(),
                "{what}: expected {:?}",
                String::from_utf8_lossy(&view[i].0)
            );
            assert_eq!(c.key(), view[i].0.as_slice(), "{what}");
            assert_eq!(c.value(), view[i].1.as_slice(), "{what}");
        }
        None => assert!(!c.valid(), "{what}: expected invalid, at {:?}", c.key()),
    }
}

fn walk(db: &Db, c: &mut Cursor, view: &[(Vec<u8>, Vec<u8>)], steps: &[Step], mid_write: u8) {
    let mut pos: Option<usize> = None;
    for (n, s) in steps.iter().enumerate() {
        if n == steps.len() / 2 {
            // Invisible to the cursor: it reads the version current when it was made.
            db.put(key(mid_write % KEYS), b"late").unwrap();
        }
        match s {
            Step::First => {
                c.seek_to_first().unwrap();
                pos = (!view.is_empty()).then_some(0);
            }
            Step::Last => {
                c.seek_to_last().unwrap();
                pos = view.len().checked_sub(1);
            }
            Step::Seek(k) => {
                c.seek(key(*k)).unwrap();
                let i = view.partition_point(|(x, _)| *x < key(*k));
                pos = (i < view.len()).then_some(i);
            }
            Step::SeekForPrev(k) => {
                c.seek_for_prev(key(*k)).unwrap();
                let i = view.partition_point(|(x, _)| *x <= key(*k));
                pos = i.checked_sub(1);
            }
            Step::Next => {
                c.next().unwrap();
                pos = pos.and_then(|i| (i + 1 < view.len()).then_some(i + 1));
            }
            Step::Prev => {
                c.prev().unwrap();
                pos = pos.and_then(|i| i.checked_sub(1));
            }
        }
        check(c, view, pos, &format!("step {n} {s:?}"));
    }
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let mut model = Map::new();
    let mut snaps: Vec<(bloomkv::Snapshot, Map)> = Vec::new();
    for op in ops {
        match op {
            Op::Put(k, v) => {
                db.put(key(k), value(k, v)).unwrap();
                model.insert(key(k), value(k, v));
            }
            Op::Delete(k) => {
                db.delete(key(k)).unwrap();
                model.remove(&key(k));
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Snapshot => {
                if snaps.len() == 3 {
                    snaps.remove(0);
                }
                snaps.push((db.snapshot(), model.clone()));
            }
            Op::Walk(snap, bounds, steps) => {
                let (snap, m) = match snap {
                    Some(n) if !snaps.is_empty() => {
                        let (s, m) = &snaps[n as usize % snaps.len()];
                        (Some(s), m)
                    }
                    _ => (None, &model),
                };
                let mut opts = ReadOptions {
                    snapshot: snap,
                    ..ReadOptions::default()
                };
                let range = match bounds {
                    Some((a, b)) => {
                        opts.lower_bound = Some(key(a));
                        opts.upper_bound = Some(key(b));
                        (Bound::Included(key(a)), Bound::Excluded(key(b)))
                    }
                    None => (Bound::Unbounded, Bound::Unbounded),
                };
                let view: Vec<(Vec<u8>, Vec<u8>)> = if bounds.is_some_and(|(a, b)| a > b) {
                    Vec::new()
                } else {
                    m.range(range)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                };
                let mut c = db.cursor(&opts);
                let late = steps.len() as u8;
                walk(&db, &mut c, &view, &steps, late);
                model.insert(key(late % KEYS), b"late".to_vec());
            }
            Op::Range(a, b, pattern) => {
                let (it, m) = match snaps.last() {
                    Some((s, m)) if pattern.len() % 2 == 1 => (s.range(key(a)..=key(b)), m),
                    _ => (db.range(key(a)..=key(b)), &model),
                };
                let want: Vec<_> = m
                    .range(key(a)..=key(b))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let mut it = it;
                let (mut front, mut back) = (Vec::new(), Vec::new());
                for &from_front in pattern
                    .iter()
                    .chain(std::iter::repeat_n(&true, want.len() + 1))
                {
                    let got = if from_front {
                        it.next()
                    } else {
                        it.next_back()
                    };
                    match got {
                        Some(kv) if from_front => front.push(kv.unwrap()),
                        Some(kv) => back.push(kv.unwrap()),
                        None => break,
                    }
                }
                assert!(it.next().is_none() && it.next_back().is_none());
                back.reverse();
                front.extend(back);
                assert_eq!(front, want);
            }
            Op::MultiGet(ks) => {
                let keys: Vec<Vec<u8>> = ks.iter().map(|&k| key(k)).collect();
                let got = db.multi_get(&keys).unwrap();
                let want: Vec<_> = keys.iter().map(|k| model.get(k).cloned()).collect();
                assert_eq!(got, want);
                for k in &keys {
                    if model.contains_key(k) {
                        assert!(db.key_may_exist(k), "key_may_exist said no to a live key");
                    }
                }
            }
        }
    }
    // The whole view, backward.
    let got: Vec<_> = db.iter().rev().map(|kv| kv.unwrap()).collect();
    let want: Vec<_> = model
        .iter()
        .rev()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, want);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
    #[test]
    fn cursor_matches_btreemap(ops in prop::collection::vec(op(), 1..160)) {
        run(ops);
    }
}

/// Direction changes over versions spread across every source: the newest version of a key
/// in the memtable, older ones in level 0 and deeper, deleted keys in between.
#[test]
fn direction_changes_across_memtable_and_levels() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for round in 0..3u8 {
        for k in 0..KEYS {
            if (k + round) % 3 == 0 {
                db.delete(key(k)).unwrap();
            } else {
                db.put(key(k), value(k, round)).unwrap();
            }
        }
        if round == 0 {
            db.compact().unwrap();
        } else if round == 1 {
            db.flush().unwrap();
        }
    }
    let live: Vec<u8> = (0..KEYS).filter(|k| (k + 2) % 3 != 0).collect();
    let mut c = db.cursor(&ReadOptions::default());
    c.seek_to_first().unwrap();
    for (i, &k) in live.iter().enumerate() {
        assert_eq!(c.key(), key(k).as_slice());
        assert_eq!(c.value(), value(k, 2).as_slice());
        c.next().unwrap();
        if i + 1 < live.len() {
            c.prev().unwrap();
            assert_eq!(c.key(), key(k).as_slice());
            c.next().unwrap();
        }
    }
    assert!(!c.valid());
    c.seek_to_last().unwrap();
    for &k in live.iter().rev() {
        assert_eq!(c.key(), key(k).as_slice());
        c.prev().unwrap();
    }
    assert!(!c.valid());
}

#[test]
fn key_may_exist_answers_no_for_absent_keys_from_filters() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for k in 0..KEYS {
        db.put(key(k), value(k, 1)).unwrap();
    }
    db.flush().unwrap();
    let _ = db.get(key(0)).unwrap(); // opens the tables' readers
    let absent = (0..200u32)
        .filter(|i| !db.key_may_exist(format!("absent{i}")))
        .count();
    assert!(absent > 150, "only {absent} of 200 absent keys ruled out");
    for k in 0..KEYS {
        assert!(db.key_may_exist(key(k)));
    }
}
