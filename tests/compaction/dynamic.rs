//! `Options::level_compaction_dynamic_level_bytes`: level 0 compacts straight into a deep base
//! level with the levels above it empty, and a tree built with static sizes, reopened with
//! the option, drains its upper levels into deeper ones with every key intact.

use std::collections::BTreeSet;

use bloomkv::{Db, Options, Stats};

use crate::common::{small_options, sst_files, w1_key, w1_value};

const LAST: usize = 6;

fn deleted(i: u64) -> bool {
    i % 10 == 3
}

fn expected(i: u64, generations: u32) -> Option<Vec<u8>> {
    if deleted(i) {
        None
    } else {
        Some(w1_value(i, generations - 1))
    }
}

/// `n` keys written `generations` times over (later ones overwrite), then every tenth key
/// deleted: ~120 bytes per key and generation.
fn fill(db: &Db, n: u64, generations: u32) {
    for g in 0..generations {
        for i in 0..n {
            db.put(w1_key(i), w1_value(i, g)).unwrap();
        }
    }
    for i in (0..n).filter(|&i| deleted(i)) {
        db.delete(w1_key(i)).unwrap();
    }
}

fn check(db: &Db, n: u64, generations: u32) {
    check_answers(db, n, generations);
    // Only with no compaction running (after `wait_for_compactions`): a running one has
    // output files on disk that the manifest does not list yet.
    let live: BTreeSet<u64> = db.stats().tables.iter().map(|t| t.file_number).collect();
    assert_eq!(
        sst_files(db.path()),
        live,
        "table files on disk vs manifest"
    );
}

fn check_answers(db: &Db, n: u64, generations: u32) {
    for i in 0..n {
        assert_eq!(
            db.get(w1_key(i)).unwrap(),
            expected(i, generations),
            "key {i}"
        );
    }
}

fn dynamic() -> Options {
    Options {
        level_compaction_dynamic_level_bytes: true,
        ..small_options()
    }
}

/// Level 1 `max_bytes_for_level_base`, each level below `level_size_multiplier` times more
/// (set explicitly: these tests compare the two sizings whatever the default).
fn static_sizes() -> Options {
    Options {
        level_compaction_dynamic_level_bytes: false,
        ..small_options()
    }
}

fn bytes(stats: &Stats) -> Vec<u64> {
    stats.levels.iter().map(|l| l.bytes).collect()
}

/// Levels 1.. are sorted runs: no two tables of one level overlap.
fn check_disjoint(stats: &Stats) {
    for level in 1..stats.levels.len() {
        let tables: Vec<_> = stats.tables.iter().filter(|t| t.level == level).collect();
        for pair in tables.windows(2) {
            assert!(
                pair[0].largest_key < pair[1].smallest_key,
                "L{level}: tables {} and {} overlap",
                pair[0].file_number,
                pair[1].file_number
            );
        }
    }
}

#[test]
fn a_small_fill_goes_from_level_0_into_a_deep_base_level() {
    // ~3 MB of tables with a 1 MiB level base and multiplier 4: the last level reaches
    // 1-4 MiB, so level 5 is the base level and levels 1-4 never hold a table.
    let n = 25_000;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), dynamic()).unwrap();
    fill(&db, n, 1);
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    let b = bytes(&stats);
    assert!(stats.compactions > 0, "{b:?}");
    assert!(b[LAST] > 1 << 20, "the data is in the last level: {b:?}");
    assert_eq!(
        b[1..5],
        [0, 0, 0, 0],
        "levels above the base level stay empty"
    );
    assert!(b[5] <= 1 << 20, "the base level within its target: {b:?}");
    check_disjoint(&stats);
    check(&db, n, 1);

    // The same fill with static sizes keeps level 1 (this is what the option changes).
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), static_sizes()).unwrap();
    fill(&db, n, 1);
    db.wait_for_compactions().unwrap();
    let b = bytes(&db.stats());
    assert!(b[1] > 0 && b[LAST] == 0, "static sizes: {b:?}");
}

#[test]
fn a_tree_built_with_static_sizes_drains_into_the_deeper_levels_when_reopened_with_them() {
    let n = 25_000;
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), static_sizes()).unwrap();
        fill(&db, n, 2);
        db.wait_for_compactions().unwrap();
        let b = bytes(&db.stats());
        assert!(
            b[1] > 0 && b[2] > 0,
            "static sizes fill from level 1: {b:?}"
        );
    }
    let db = Db::open(dir.path(), dynamic()).unwrap();
    // Readable at once, while the drain's compactions run: the open rewrote nothing.
    check_answers(&db, n, 2);
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    let b = bytes(&stats);
    assert_eq!(b[1..5], [0, 0, 0, 0], "upper levels drained: {b:?}");
    assert!(b[LAST] > b[5], "most data in the last level: {b:?}");
    check_disjoint(&stats);
    check(&db, n, 2);

    // Writes after the migration go from level 0 into the base level, not level 1.
    fill(&db, n, 3);
    db.wait_for_compactions().unwrap();
    let b = bytes(&db.stats());
    assert_eq!(b[1..4], [0, 0, 0], "{b:?}");
    check(&db, n, 3);

    // And back: reopened with static sizes, level 0 goes into level 1 again, above the data.
    drop(db);
    let db = Db::open(dir.path(), static_sizes()).unwrap();
    fill(&db, n / 2, 4);
    db.wait_for_compactions().unwrap();
    let b = bytes(&db.stats());
    assert!(b[1] > 0, "{b:?}");
    for i in 0..n {
        let want = if deleted(i) {
            None
        } else if i < n / 2 {
            Some(w1_value(i, 3))
        } else {
            Some(w1_value(i, 2))
        };
        assert_eq!(db.get(w1_key(i)).unwrap(), want, "key {i}");
    }
}

#[test]
fn compact_keeps_the_levels_above_the_data_empty() {
    let n = 25_000;
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), dynamic()).unwrap();
    fill(&db, n, 2);
    db.compact().unwrap();
    let stats = db.stats();
    let b = bytes(&stats);
    // Everything in the last level, once: one entry per live key, no tombstones left.
    assert_eq!(b[..LAST].iter().sum::<u64>(), 0, "{b:?}");
    let live = (0..n).filter(|&i| !deleted(i)).count() as u64;
    assert_eq!(stats.levels[LAST].entries, live);
    check(&db, n, 2);

    // A database holding only level-0 tables compacts into the last level, not level 1.
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        Options {
            level0_compaction_trigger: 100,
            level0_slowdown_writes: 100,
            level0_stop_writes: 101,
            ..dynamic()
        },
    )
    .unwrap();
    fill(&db, 2_000, 1);
    db.flush().unwrap();
    assert!(db.stats().levels[0].files > 0);
    db.compact().unwrap();
    let b = bytes(&db.stats());
    assert_eq!(b[..LAST].iter().sum::<u64>(), 0, "{b:?}");
    check(&db, 2_000, 1);
}
