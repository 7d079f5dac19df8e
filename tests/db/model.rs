//! Model test: random operation sequences against a `BTreeMap`, including flushes,
//! compactions, snapshots and reopen.

use bloomkv::Options;
use proptest::prelude::*;

use crate::common::Model;

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

fn key(k: u8) -> Vec<u8> {
    format!("key{k:03}").into_bytes()
}

fn value(k: u8, v: u8) -> Vec<u8> {
    // Values of varied length so blocks split at different places.
    vec![v; 1 + (k as usize * 7 + v as usize) % 300]
}

fn options(dynamic: bool) -> Options {
    Options {
        level_compaction_dynamic_level_bytes: dynamic,
        memtable_bytes: 4 * 1024,
        block_bytes: 256,
        target_file_bytes: 8 * 1024,
        max_bytes_for_level_base: 16 * 1024,
        level0_compaction_trigger: 2,
        block_cache_bytes: 64 * 1024,
        ..Default::default()
    }
}

fn run(ops: Vec<Op>, dynamic: bool) {
    let mut m = Model::open(options(dynamic));
    for op in ops {
        match op {
            Op::Put(k, v) => m.put(key(k), value(k, v)),
            Op::Delete(k) => m.delete(key(k)),
            Op::Batch(ops) => m.write(
                ops.into_iter()
                    .map(|(k, v)| (key(k), v.map(|v| value(k, v))))
                    .collect(),
            ),
            Op::Get(k) => m.check_get(&key(k)),
            Op::Scan(a, b) => m.check_scan(key(a.min(b))..key(a.max(b))),
            Op::Snapshot => m.snapshot(4),
            Op::CheckSnapshots => m.check_snapshots(),
            Op::Flush => m.db().flush().unwrap(),
            Op::Compact => m.db().compact().unwrap(),
            Op::Reopen => m.reopen(),
        }
    }
    m.check_all((0..64).map(key));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
    #[test]
    fn db_matches_btreemap(ops in prop::collection::vec(op(), 1..400)) {
        run(ops, false);
    }

    /// The same with level sizes from the bottom up (`level_compaction_dynamic_level_bytes`).
    #[test]
    fn db_with_dynamic_level_sizes_matches_btreemap(ops in prop::collection::vec(op(), 1..400)) {
        run(ops, true);
    }
}
