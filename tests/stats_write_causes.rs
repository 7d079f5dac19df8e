//! `Stats` accounts for every byte written per cause: the WAL, flushes, compactions per
//! output level, re-filters, and trivial moves (which write nothing). The table causes add
//! up to `compaction_bytes_written` exactly.

mod common;

use bloomkv::{Db, FilterAllocation, Options, Stats};
use common::{small_options, w1_key, w1_value};

fn check_sums(s: &Stats) {
    let by_level: u64 = s.levels.iter().map(|l| l.compaction_bytes_written).sum();
    assert_eq!(
        s.flush_bytes_written + by_level + s.refilter_bytes_written,
        s.compaction_bytes_written,
        "{s:?}"
    );
    assert_eq!(
        s.levels[0].compaction_bytes_written, 0,
        "no compaction writes level 0"
    );
    let merges: u64 = s.levels.iter().map(|l| l.compactions).sum();
    assert!(merges + s.trivial_moves <= s.compactions, "{s:?}");
}

#[test]
fn bytes_written_add_up_per_cause() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        level0_compaction_trigger: 1,
        level0_slowdown_writes: 8,
        ..small_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // Ascending keys: each flushed table overlaps nothing below it and moves down whole.
    for i in 0..20_000u64 {
        db.put(format!("seq{i:08}"), w1_value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    check_sums(&s);
    assert!(s.trivial_moves > 0, "{s:?}");
    assert!(s.trivial_move_bytes > 0);
    // Every user byte went through the WAL once, with a little framing.
    assert!(s.wal_bytes_written >= s.user_bytes_written, "{s:?}");
    assert!(
        s.wal_bytes_written < s.user_bytes_written * 11 / 10,
        "{s:?}"
    );
    assert!(s.flush_bytes_written > 0 && s.flushes > 0);

    // Random keys over the same space: compactions merge into deeper levels.
    for i in 0..60_000u64 {
        db.put(w1_key(i % 30_000), w1_value(i, 1)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    check_sums(&s);
    let merged: Vec<usize> = (1..s.levels.len())
        .filter(|&l| s.levels[l].compaction_bytes_written > 0)
        .collect();
    assert!(!merged.is_empty(), "{:?}", s.levels);
    for &l in &merged {
        let level = &s.levels[l];
        assert!(
            level.compactions > 0 && level.compaction_bytes_read > 0,
            "L{l}: {level:?}"
        );
    }
    assert_eq!(
        s.refilter_bytes_written, 0,
        "uniform filters are never rewritten"
    );
}

#[test]
fn refilter_writes_are_counted_apart() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        filter_allocation: FilterAllocation::Monkey { bits_per_key: 10.0 },
        memtable_bytes: 1 << 20,
        target_file_bytes: 1 << 20,
        max_bytes_for_level_base: 2 << 20,
        level_size_multiplier: 4,
        ..small_options()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..150_000u64 {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    check_sums(&s);
    assert!(s.refilter_bytes_written > 0, "{s:?}");
}
