//! Monkey allocation with re-filtering: after a load with overwrites, deletes and a live
//! snapshot, every answer is unchanged by the rewrites (current view and snapshot view), and
//! once the tree settles the tables of each level carry filters within the re-filter
//! tolerance of one figure, within the configured memory. Once with Bloom filters on every
//! level, once with Ribbon filters on the deepest levels (Monkey across filter kinds).

use std::sync::Arc;

use bloomkv::filter::{BloomPolicy, FilterPolicy, RibbonPolicy};
use bloomkv::{Db, FilterAllocation, Options};

use crate::common::{NoSyncEnv, w1_key, w1_value};

const KEYS: u64 = 150_000;

fn options() -> Options {
    Options {
        filter_allocation: FilterAllocation::Monkey { bits_per_key: 10.0 },
        memtable_bytes: 1 << 20,
        target_file_bytes: 1 << 20,
        max_bytes_for_level_base: 2 << 20,
        level_size_multiplier: 4,
        env: NoSyncEnv::shared(),
        ..Default::default()
    }
}

fn value_now(i: u64) -> Option<Vec<u8>> {
    match i % 10 {
        3 => None,
        1 | 7 => Some(w1_value(i, 1)),
        _ => Some(w1_value(i, 0)),
    }
}

#[test]
fn refiltered_tree_keeps_every_answer_and_one_figure_per_level() {
    check_refiltered_tree(options());
}

#[test]
fn refiltered_tree_with_ribbon_below_bloom_keeps_every_answer() {
    let bloom: Arc<dyn FilterPolicy> = Arc::new(BloomPolicy::default());
    check_refiltered_tree(Options {
        filter_policy_per_level: Some(vec![
            Arc::clone(&bloom),
            bloom,
            Arc::new(RibbonPolicy::default()),
        ]),
        ..options()
    });
}

fn check_refiltered_tree(options: Options) {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options.clone()).unwrap();
    for i in 0..KEYS {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
    }
    let snap = db.snapshot();
    for i in 0..KEYS {
        match i % 10 {
            3 => db.delete(w1_key(i)).unwrap(),
            1 | 7 => db.put(w1_key(i), w1_value(i, 1)).unwrap(),
            _ => {}
        }
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();

    let stats = db.stats();
    let deep: Vec<_> = stats
        .levels
        .iter()
        .skip(1)
        .filter(|l| l.files > 0)
        .collect();
    assert!(deep.len() >= 2, "{:?}", stats.levels);
    // Each level's big tables (the ones re-filtering looks at) share one figure, give or
    // take the tolerance on either side.
    for level in 1..stats.levels.len() {
        let bits: Vec<f64> = stats
            .tables
            .iter()
            .filter(|t| t.level == level && t.entries >= 4096)
            .map(|t| t.filter_bits_per_key)
            .collect();
        if let (Some(lo), Some(hi)) = (
            bits.iter().copied().reduce(f64::min),
            bits.iter().copied().reduce(f64::max),
        ) {
            assert!(hi - lo <= 1.0 + 1e-9, "level {level}: {bits:?}");
        }
    }
    let entries: u64 = stats.levels.iter().map(|l| l.entries).sum();
    let filter_bits: u64 = stats.levels.iter().map(|l| l.filter_bytes * 8).sum();
    // Filters are sized per distinct key, entries count every version the snapshot keeps
    // (a third of the keys have two): per entry, memory sits below the budget, never above.
    let realized = filter_bits as f64 / entries as f64;
    assert!((6.0..10.5).contains(&realized), "{realized} bits/key");

    for i in 0..KEYS {
        assert_eq!(db.get(w1_key(i)).unwrap(), value_now(i), "key {i}");
        assert_eq!(
            snap.get(w1_key(i)).unwrap(),
            Some(w1_value(i, 0)),
            "snapshot, key {i}"
        );
    }
    drop(snap);
    drop(db);
    // Reopen: the rewritten tables are what the manifest names.
    let db = Db::open(dir.path(), options).unwrap();
    for i in (0..KEYS).step_by(7) {
        assert_eq!(
            db.get(w1_key(i)).unwrap(),
            value_now(i),
            "after reopen, key {i}"
        );
    }
}
