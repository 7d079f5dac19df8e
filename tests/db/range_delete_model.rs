//! Map test for range deletes: random puts, deletes and `delete_range`s mixed with
//! snapshots, flushes, compactions (whole and by range) and reopens, read back with `get`,
//! `multi_get`, forward and reverse iteration and cursor walks (seeks, `next`, `prev`), at the
//! latest state and at snapshots, all checked against a `BTreeMap`.

use bloomkv::{Db, Options, ReadOptions, Snapshot};
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
    DeleteRange(u8, u8),
    /// One batch: `delete_range(a, b)` then `put(k, v)` (the put wins, being later).
    Batch(u8, u8, u8, u8),
    Snapshot,
    Flush,
    Compact,
    CompactRange(u8, u8),
    Reopen,
    /// Reads every key with `get` and `multi_get`, at the latest state or a snapshot.
    Gets(Option<u8>),
    /// A cursor walk at the latest state or a snapshot.
    Walk(Option<u8>, Vec<Step>),
    /// The whole view, forward and backward.
    Scan(Option<u8>),
}

const KEYS: u8 = 40;

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn value(k: u8, v: u8) -> Vec<u8> {
    vec![v; 1 + (k as usize * 7 + v as usize) % 150]
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
        10 => (0..KEYS, any::<u8>()).prop_map(|(k, v)| Op::Put(k, v)),
        2 => (0..KEYS).prop_map(Op::Delete),
        3 => (0..KEYS + 1, 0..KEYS + 1).prop_map(|(a, b)| Op::DeleteRange(a.min(b), a.max(b))),
        1 => (0..KEYS + 1, 0..KEYS + 1, 0..KEYS, any::<u8>())
            .prop_map(|(a, b, k, v)| Op::Batch(a.min(b), a.max(b), k, v)),
        1 => Just(Op::Snapshot),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => (0..KEYS, 0..KEYS).prop_map(|(a, b)| Op::CompactRange(a.min(b), a.max(b))),
        1 => Just(Op::Reopen),
        2 => prop::option::of(any::<u8>()).prop_map(Op::Gets),
        2 => (prop::option::of(any::<u8>()), prop::collection::vec(step(), 1..25))
            .prop_map(|(s, steps)| Op::Walk(s, steps)),
        1 => prop::option::of(any::<u8>()).prop_map(Op::Scan),
    ]
}

fn options() -> Options {
    Options {
        memtable_bytes: 3 * 1024,
        block_bytes: 256,
        target_file_bytes: 2 * 1024,
        max_bytes_for_level_base: 6 * 1024,
        level0_compaction_trigger: 3,
        block_cache_bytes: 64 * 1024,
        ..Default::default()
    }
}

fn walk(c: &mut bloomkv::Cursor, view: &[(Vec<u8>, Vec<u8>)], steps: &[Step]) {
    let mut pos: Option<usize> = None;
    for (n, s) in steps.iter().enumerate() {
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
                pos = view.partition_point(|(x, _)| *x <= key(*k)).checked_sub(1);
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
        c.status().unwrap();
        match pos {
            Some(i) => {
                assert!(c.valid(), "step {n} {s:?}: expected {:?}", view[i].0);
                assert_eq!((c.key(), c.value()), (&view[i].0[..], &view[i].1[..]));
            }
            None => assert!(
                !c.valid(),
                "step {n} {s:?}: expected invalid at {:?}",
                c.key()
            ),
        }
    }
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Some(Db::open(dir.path(), options()).unwrap());
    let mut model = Map::new();
    let mut snaps: Vec<(Snapshot, Map)> = Vec::new();
    for op in ops {
        let d = db.as_ref().unwrap();
        // The state a read checks against: a snapshot's, or the latest.
        let pick = |n: Option<u8>, snaps: &[(Snapshot, Map)]| -> Option<usize> {
            n.filter(|_| !snaps.is_empty())
                .map(|n| n as usize % snaps.len())
        };
        match op {
            Op::Put(k, v) => {
                d.put(key(k), value(k, v)).unwrap();
                model.insert(key(k), value(k, v));
            }
            Op::Delete(k) => {
                d.delete(key(k)).unwrap();
                model.remove(&key(k));
            }
            Op::DeleteRange(a, b) => {
                d.delete_range(key(a), key(b)).unwrap();
                model.retain(|k, _| !(key(a) <= *k && *k < key(b)));
            }
            Op::Batch(a, b, k, v) => {
                let mut batch = bloomkv::WriteBatch::new();
                batch.delete_range(key(a), key(b));
                batch.put(key(k), value(k, v));
                d.write(batch).unwrap();
                model.retain(|x, _| !(key(a) <= *x && *x < key(b)));
                model.insert(key(k), value(k, v));
            }
            Op::Snapshot => {
                if snaps.len() == 3 {
                    snaps.remove(0);
                }
                snaps.push((d.snapshot(), model.clone()));
            }
            Op::Flush => d.flush().unwrap(),
            Op::Compact => d.compact().unwrap(),
            Op::CompactRange(a, b) => d.compact_range(key(a)..=key(b)).unwrap(),
            Op::Reopen => {
                snaps.clear();
                drop(db.take());
                db = Some(Db::open(dir.path(), options()).unwrap());
            }
            Op::Gets(n) => {
                let keys: Vec<Vec<u8>> = (0..KEYS).map(key).collect();
                let (got, m): (Vec<_>, &Map) = match pick(n, &snaps) {
                    Some(i) => (
                        keys.iter().map(|k| snaps[i].0.get(k).unwrap()).collect(),
                        &snaps[i].1,
                    ),
                    None => (keys.iter().map(|k| d.get(k).unwrap()).collect(), &model),
                };
                let want: Vec<_> = keys.iter().map(|k| m.get(k).cloned()).collect();
                assert_eq!(got, want, "get");
                if n.is_none() || snaps.is_empty() {
                    assert_eq!(d.multi_get(&keys).unwrap(), want, "multi_get");
                    for (k, w) in keys.iter().zip(&want) {
                        if w.is_some() {
                            assert!(d.key_may_exist(k), "key_may_exist said no to a live key");
                        }
                    }
                }
            }
            Op::Walk(n, steps) => {
                let i = pick(n, &snaps);
                let opts = ReadOptions {
                    snapshot: i.map(|i| &snaps[i].0),
                    ..ReadOptions::default()
                };
                let m = i.map_or(&model, |i| &snaps[i].1);
                let view: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                walk(&mut d.cursor(&opts), &view, &steps);
            }
            Op::Scan(n) => {
                let i = pick(n, &snaps);
                let m = i.map_or(&model, |i| &snaps[i].1);
                let want: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                let fwd: Vec<_> = match i {
                    Some(i) => snaps[i].0.iter().map(|kv| kv.unwrap()).collect(),
                    None => d.iter().map(|kv| kv.unwrap()).collect(),
                };
                assert_eq!(fwd, want, "forward scan");
                let mut back: Vec<_> = match i {
                    Some(i) => snaps[i].0.iter().rev().map(|kv| kv.unwrap()).collect(),
                    None => d.iter().rev().map(|kv| kv.unwrap()).collect(),
                };
                back.reverse();
                assert_eq!(back, want, "reverse scan");
            }
        }
    }
    let d = db.as_ref().unwrap();
    let got: Vec<_> = d.iter().rev().map(|kv| kv.unwrap()).collect();
    let want: Vec<_> = model
        .iter()
        .rev()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, want);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn range_deletes_match_btreemap(ops in prop::collection::vec(op(), 1..200)) {
        run(ops);
    }
}
