//! Model test: random operation sequences against a `BTreeMap`, including flushes,
//! compactions, snapshots and reopen.

use std::collections::BTreeMap;

use bloomkv::{Db, Options, WriteBatch};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8),
    Delete(u8),
    Batch(Vec<(u8, Option<u8>)>),
    Get(u8),
    Scan(u8, u8),
    Snapshot,
    CheckSnapshots,
    Flush,
    Compact,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<u8>(), any::<u8>()).prop_map(|(k, v)| Op::Put(k % 64, v)),
        2 => any::<u8>().prop_map(|k| Op::Delete(k % 64)),
        2 => prop::collection::vec((any::<u8>(), prop::option::of(any::<u8>())), 0..6)
            .prop_map(|v| Op::Batch(v.into_iter().map(|(k, x)| (k % 64, x)).collect())),
        3 => any::<u8>().prop_map(|k| Op::Get(k % 64)),
        1 => (any::<u8>(), any::<u8>()).prop_map(|(a, b)| Op::Scan(a % 64, b % 64)),
        1 => Just(Op::Snapshot),
        1 => Just(Op::CheckSnapshots),
        1 => Just(Op::Flush),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
    ]
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn value(k: u8, v: u8) -> Vec<u8> {
    // Values of varied length so blocks split at different places.
    vec![v; 1 + (k as usize * 7 + v as usize) % 300]
}

fn options() -> Options {
    Options {
        memtable_bytes: 4 * 1024,
        block_bytes: 256,
        target_file_bytes: 8 * 1024,
        max_bytes_for_level_base: 16 * 1024,
        level0_compaction_trigger: 2,
        block_cache_bytes: 64 * 1024,
        ..Default::default()
    }
}

fn run(ops: Vec<Op>) {
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(dir.path(), options()).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut snaps: Vec<(bloomkv::Snapshot, Model)> = Vec::new();
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
            Op::Batch(ops) => {
                let mut b = WriteBatch::new();
                for (k, v) in ops {
                    match v {
                        Some(v) => {
                            b.put(key(k), value(k, v));
                            model.insert(key(k), value(k, v));
                        }
                        None => {
                            b.delete(key(k));
                            model.remove(&key(k));
                        }
                    }
                }
                db.write(b).unwrap();
            }
            Op::Get(k) => assert_eq!(db.get(key(k)).unwrap(), model.get(&key(k)).cloned()),
            Op::Scan(a, b) => {
                let (a, b) = (key(a.min(b)), key(a.max(b)));
                let got: Vec<_> = db
                    .scan(a.clone()..b.clone())
                    .map(|kv| kv.unwrap())
                    .collect();
                let want: Vec<_> = model
                    .range(a..b)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(got, want);
            }
            Op::Snapshot => {
                if snaps.len() < 4 {
                    snaps.push((db.snapshot(), model.clone()));
                }
            }
            Op::CheckSnapshots => {
                for (snap, m) in &snaps {
                    let got: Vec<_> = snap.scan(..).map(|kv| kv.unwrap()).collect();
                    let want: Vec<_> = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                    assert_eq!(got, want);
                }
                snaps.clear();
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact().unwrap(),
            Op::Reopen => {
                snaps.clear();
                drop(db);
                db = Db::open(dir.path(), options()).unwrap();
            }
        }
    }
    let got: Vec<_> = db.scan(..).map(|kv| kv.unwrap()).collect();
    let want: Vec<_> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(got, want);
    for k in 0..64 {
        assert_eq!(db.get(key(k)).unwrap(), model.get(&key(k)).cloned());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn db_matches_btreemap(ops in prop::collection::vec(op(), 1..400)) {
        run(ops);
    }
}
