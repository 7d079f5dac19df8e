//! Model test under background compaction pressure: random operations against a `BTreeMap`
//! with tiny tables and levels, so that flushes and compactions (background and manual, on
//! one compaction thread or several in parallel, with re-filters under Monkey) run between
//! nearly every operation; snapshots held across them; reopen mid-way. At the end
//! (and after every settle) no table file is on disk that the manifest does not list.

use bloomkv::Options;
use proptest::prelude::*;

use crate::common::{self, Model};

#[derive(Debug, Clone)]
enum Op {
    Put(u16, u8),
    Delete(u16),
    /// Puts `count` keys from `start` (wrapping), pushing memtables out.
    Bulk(u16, u16, u8),
    /// Deletes `count` keys from `start`.
    DeleteRange(u16, u16),
    Get(u16),
    Scan(u16, u16),
    Snapshot,
    CheckSnapshots,
    Settle,
    Compact,
    Reopen,
    /// Reopens with `level_compaction_dynamic_level_bytes` flipped: a tree shaped by one
    /// sizing is then compacted by the other (upper levels drained, or refilled).
    ReopenFlipped,
}

const KEYS: u16 = 600;

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (any::<u16>(), any::<u8>()).prop_map(|(k, v)| Op::Put(k % KEYS, v)),
        2 => any::<u16>().prop_map(|k| Op::Delete(k % KEYS)),
        3 => (any::<u16>(), 1..200u16, any::<u8>()).prop_map(|(k, n, v)| Op::Bulk(k % KEYS, n, v)),
        1 => (any::<u16>(), 1..100u16).prop_map(|(k, n)| Op::DeleteRange(k % KEYS, n)),
        3 => any::<u16>().prop_map(|k| Op::Get(k % KEYS)),
        1 => (any::<u16>(), any::<u16>()).prop_map(|(a, b)| Op::Scan(a % KEYS, b % KEYS)),
        1 => Just(Op::Snapshot),
        1 => Just(Op::CheckSnapshots),
        1 => Just(Op::Settle),
        1 => Just(Op::Compact),
        1 => Just(Op::Reopen),
        1 => Just(Op::ReopenFlipped),
    ]
}

fn key(k: u16) -> Vec<u8> {
    format!("key{k:04}").into_bytes()
}

fn value(k: u16, v: u8) -> Vec<u8> {
    vec![v; 1 + (k as usize * 13 + v as usize) % 90]
}

/// `threads` compaction threads; `monkey`: Monkey allocation, so re-filters run too;
/// `dynamic`: level sizes from the bottom up (level 0 into a deeper base level).
fn options(threads: usize, monkey: bool, dynamic: bool) -> Options {
    Options {
        level_compaction_dynamic_level_bytes: dynamic,
        background_threads: threads,
        filter_allocation: if monkey {
            bloomkv::FilterAllocation::Monkey { bits_per_key: 10.0 }
        } else {
            bloomkv::FilterAllocation::Uniform
        },
        memtable_bytes: 2 << 10,
        block_bytes: 256,
        target_file_bytes: 2 << 10,
        max_bytes_for_level_base: 4 << 10,
        level_size_multiplier: 2,
        level0_compaction_trigger: 2,
        level0_slowdown_writes: 3,
        level0_stop_writes: 4,
        block_cache_bytes: 16 << 10,
        max_open_files: 8,
        env: common::NoSyncEnv::shared(),
        ..Default::default()
    }
}

fn check_all(m: &Model) {
    m.check_all((0..KEYS).map(key));
}

fn run(ops: Vec<Op>, threads: usize, monkey: bool, dynamic: bool) {
    let mut m = Model::open(options(threads, monkey, dynamic));
    for op in ops {
        match op {
            Op::Put(k, v) => m.put(key(k), value(k, v)),
            Op::Delete(k) => m.delete(key(k)),
            Op::Bulk(start, n, v) => {
                for k in (0..n).map(|i| (start + i) % KEYS) {
                    m.put(key(k), value(k, v));
                }
            }
            Op::DeleteRange(start, n) => {
                for k in (0..n).map(|i| (start + i) % KEYS) {
                    m.delete(key(k));
                }
            }
            Op::Get(k) => m.check_get(&key(k)),
            Op::Scan(a, b) => m.check_scan(key(a.min(b))..=key(a.max(b))),
            Op::Snapshot => m.snapshot(4),
            Op::CheckSnapshots => m.check_snapshots(),
            Op::Settle => {
                common::check_no_orphans(m.db());
                check_all(&m);
            }
            Op::Compact => m.db().compact().unwrap(),
            Op::Reopen => m.reopen(),
            Op::ReopenFlipped => {
                let mut o = m.options().clone();
                o.level_compaction_dynamic_level_bytes = !o.level_compaction_dynamic_level_bytes;
                m.reopen_with(o);
            }
        }
    }
    // Snapshots still held at the end read what they saw, after all the compactions.
    m.check_snapshot_gets();
    check_all(&m);
    common::check_no_orphans(m.db());
    m.reopen();
    check_all(&m);
    common::check_no_orphans(m.db());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]
    #[test]
    fn db_with_compaction_pressure_matches_btreemap(
        ops in prop::collection::vec(op(), 1..200),
        threads in prop_oneof![Just(1usize), Just(3usize)],
        monkey in any::<bool>(),
    ) {
        run(ops, threads, monkey, false);
    }

    /// The same with level sizes from the bottom up: level 0 compacts past empty levels into
    /// the base level, and unneeded levels drain.
    #[test]
    fn db_with_dynamic_level_sizes_matches_btreemap(
        ops in prop::collection::vec(op(), 1..200),
        threads in prop_oneof![Just(1usize), Just(3usize)],
        monkey in any::<bool>(),
    ) {
        run(ops, threads, monkey, true);
    }
}
