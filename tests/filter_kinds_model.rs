//! Model test: filters never change an answer, whichever kind each level's tables carry.
//! Random puts, deletes, flushes and compactions against a `BTreeMap`; reopens switch the
//! per-level filter kinds (blocked Bloom, binary fuse, Ribbon, the default `LeveledPolicy`,
//! Monkey across kinds, few bits per key so that false positives are common), so the tree
//! holds tables of every kind on every level at once. After every step every key, present
//! and absent, is read with `get`, and a full scan is compared.

mod common;

use std::sync::Arc;

use bloomkv::filter::{BinaryFusePolicy, BloomPolicy, FilterPolicy, LeveledPolicy, RibbonPolicy};
use bloomkv::{FilterAllocation, Options};
use common::Model;
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Put(u8, u8),
    Delete(u8),
    Flush,
    Compact,
    /// Reopen with filter configuration `n % CONFIGS`.
    Reopen(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => (any::<u8>(), any::<u8>()).prop_map(|(k, v)| Op::Put(k % 96, v)),
        2 => any::<u8>().prop_map(|k| Op::Delete(k % 96)),
        2 => Just(Op::Flush),
        1 => Just(Op::Compact),
        2 => any::<u8>().prop_map(Op::Reopen),
    ]
}

/// Even keys only are ever written; odd ones stay absent (filters must rule them out or
/// cost a read, never find them).
fn key(k: u8) -> Vec<u8> {
    format!("key{:04}", u32::from(k) * 2).into_bytes()
}

fn absent(k: u8) -> Vec<u8> {
    format!("key{:04}", u32::from(k) * 2 + 1).into_bytes()
}

fn value(k: u8, v: u8) -> Vec<u8> {
    vec![v; 1 + (k as usize * 5 + v as usize) % 200]
}

const CONFIGS: u8 = 6;

fn config(n: u8) -> Options {
    let bloom = |b: f64| -> Arc<dyn FilterPolicy> { Arc::new(BloomPolicy::new(b)) };
    let fuse = || -> Arc<dyn FilterPolicy> { Arc::new(BinaryFusePolicy::new()) };
    let ribbon = |b: f64| -> Arc<dyn FilterPolicy> { Arc::new(RibbonPolicy::new(b)) };
    let base = Options {
        memtable_bytes: 2 * 1024,
        block_bytes: 256,
        target_file_bytes: 4 * 1024,
        max_bytes_for_level_base: 8 * 1024,
        level_size_multiplier: 2,
        level0_compaction_trigger: 2,
        block_cache_bytes: 32 * 1024,
        ..Default::default()
    };
    match n % CONFIGS {
        // The default: Bloom on level 0, Ribbon below.
        0 => base,
        1 => Options {
            filter_policy_per_level: Some(vec![fuse(), bloom(10.0), ribbon(10.0)]),
            ..base
        },
        2 => Options {
            filter_policy_per_level: Some(vec![ribbon(6.0), fuse()]),
            ..base
        },
        // Few bits: many false positives.
        3 => Options {
            filter_bits_per_key: 2.0,
            filter_policy: bloom(2.0),
            ..base
        },
        4 => Options {
            filter_allocation: FilterAllocation::Monkey { bits_per_key: 8.0 },
            filter_policy: Arc::new(LeveledPolicy::new(bloom(8.0), fuse(), 2)),
            ..base
        },
        _ => Options {
            filter_bits_per_key: 3.0,
            filter_policy_per_level: Some(vec![bloom(3.0), ribbon(3.0), fuse()]),
            ..base
        },
    }
}

fn check_every_key(m: &Model) {
    for k in 0..96u8 {
        m.check_get(&key(k));
        assert_eq!(m.db().get(absent(k)).unwrap(), None, "absent {k}");
    }
    m.check_scan(..);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn filters_of_mixed_kinds_never_change_an_answer(
        first in 0..CONFIGS,
        ops in prop::collection::vec(op(), 1..160),
    ) {
        let mut m = Model::open(config(first));
        for op in ops {
            match op {
                Op::Put(k, v) => m.put(key(k), value(k, v)),
                Op::Delete(k) => m.delete(key(k)),
                Op::Flush => m.db().flush().unwrap(),
                Op::Compact => m.db().compact().unwrap(),
                Op::Reopen(n) => m.reopen_with(config(n)),
            }
            check_every_key(&m);
        }
        m.db().wait_for_compactions().unwrap();
        check_every_key(&m);
    }
}

/// The filter policy each table of `dir` records.
fn table_policies(dir: &std::path::Path) -> std::collections::BTreeSet<String> {
    use bloomkv::env::Env;
    use bloomkv::sstable::{ReadCounters, Table, TableReadOptions};
    common::sst_paths(dir)
        .iter()
        .map(|path| {
            let number: u64 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
            let file = bloomkv::env::StdEnv.open_random_access(path).unwrap();
            let opts = TableReadOptions {
                file_number: number,
                filter: None,
                cache: None,
                counters: Arc::new(ReadCounters::default()),
            };
            Table::open(file, opts)
                .unwrap()
                .properties()
                .filter_policy
                .clone()
        })
        .collect()
}

/// The kinds really are mixed: the configurations build tables of each of the three kinds,
/// tables of different kinds sit in one tree at once, and every answer is right meanwhile.
#[test]
fn the_configurations_leave_tables_of_every_kind() {
    // Every round rewrites every key: compactions under the round's configuration leave
    // tables of its kinds only, and over the rounds each kind is built.
    let seen = rounds(|_| 0..96);
    for kind in [
        BloomPolicy::NAME,
        BinaryFusePolicy::NAME,
        RibbonPolicy::NAME,
    ] {
        assert!(
            seen.iter().any(|now| now.contains(kind)),
            "no {kind} table in {seen:?}"
        );
    }
    // Every round writes a key range of its own: later rounds' compactions do not overlap
    // (and so do not rewrite) the tables earlier configurations wrote.
    let seen = rounds(|round| round * 8..round * 8 + 8);
    assert!(
        seen.iter().any(|now| now.len() >= 2),
        "never two kinds at once: {seen:?}"
    );
}

/// Opens a database under each configuration in turn (twice round), writes the keys
/// `keys(round)` gives, flushes, checks every key, and returns the filter kinds the tables
/// held after each round.
fn rounds(keys: impl Fn(u8) -> std::ops::Range<u8>) -> Vec<std::collections::BTreeSet<String>> {
    let dir = tempfile::tempdir().unwrap();
    let mut map = std::collections::BTreeMap::new();
    let mut v = 0u8;
    let mut seen = Vec::new();
    for round in 0..CONFIGS * 2 {
        let db = bloomkv::Db::open(dir.path(), config(round)).unwrap();
        for k in keys(round) {
            v = v.wrapping_add(1);
            db.put(key(k), value(k, v)).unwrap();
            map.insert(key(k), value(k, v));
        }
        db.flush().unwrap();
        for k in 0..96u8 {
            assert_eq!(db.get(key(k)).unwrap().as_ref(), map.get(&key(k)));
            assert_eq!(db.get(absent(k)).unwrap(), None);
        }
        // Closed first: a compaction could remove a table between the listing and its open.
        drop(db);
        seen.push(table_policies(dir.path()));
    }
    seen
}
