//! After a load with small options, the tree has a leveled shape: L1+ disjoint by user key,
//! levels within their size targets, every key found, deleted keys stay deleted after their
//! tombstones move down, and no table file on disk that the manifest does not list.

use bloomkv::{Db, Options, Stats};

use crate::common::{self, small_options, w1_key, w1_value};

fn deleted(i: u64) -> bool {
    i % 10 == 3
}

fn overwritten(i: u64) -> bool {
    i % 7 == 1
}

fn expected(i: u64) -> Option<Vec<u8>> {
    if deleted(i) {
        None
    } else if overwritten(i) {
        Some(w1_value(i, 1))
    } else {
        Some(w1_value(i, 0))
    }
}

fn max_bytes_for_level(opts: &Options, level: usize) -> u64 {
    opts.max_bytes_for_level_base * opts.level_size_multiplier.pow(level as u32 - 1)
}

/// L0 below its trigger, each level above the deepest within its target size, L1+ disjoint
/// and sorted by user key, output tables near `target_file_bytes`.
fn check_shape(stats: &Stats, opts: &Options) {
    assert!(
        (stats.levels[0].files as usize) < opts.level0_compaction_trigger,
        "L0 settled with {} files",
        stats.levels[0].files
    );
    let deepest = (1..stats.levels.len())
        .rev()
        .find(|&l| stats.levels[l].files > 0)
        .expect("data below L0");
    assert!(
        deepest >= 3,
        "expected several levels, deepest is L{deepest}"
    );
    for level in 1..deepest {
        let bytes = stats.levels[level].bytes;
        assert!(
            bytes <= max_bytes_for_level(opts, level),
            "L{level} holds {bytes} bytes, over its target"
        );
    }
    for level in 1..stats.levels.len() {
        let tables: Vec<_> = stats.tables.iter().filter(|t| t.level == level).collect();
        assert_eq!(tables.len() as u64, stats.levels[level].files);
        for pair in tables.windows(2) {
            assert!(
                pair[0].largest_key < pair[1].smallest_key,
                "L{level}: tables {} and {} overlap",
                pair[0].file_number,
                pair[1].file_number
            );
        }
        for t in &tables {
            assert!(t.smallest_key <= t.largest_key);
            // Split at the target, plus at most one key's versions and one block.
            assert!(
                t.bytes <= opts.target_file_bytes + 2 * opts.block_bytes as u64 + 1024,
                "table {} of {} bytes",
                t.file_number,
                t.bytes
            );
        }
    }
}

fn check_contents(db: &Db, n: u64) {
    for i in 0..n {
        assert_eq!(db.get(w1_key(i)).unwrap(), expected(i), "key {i}");
    }
}

fn load(n: u64) {
    let dir = tempfile::tempdir().unwrap();
    let opts = small_options();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..n {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
    }
    for i in 0..n {
        if deleted(i) {
            db.delete(w1_key(i)).unwrap();
        } else if overwritten(i) {
            db.put(w1_key(i), w1_value(i, 1)).unwrap();
        }
    }
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    assert!(stats.compactions > 0);
    check_shape(&stats, &opts);
    common::check_no_orphans(&db);
    check_contents(&db, n);

    // A full compaction moves every tombstone to the bottom, where it and what it hid are
    // dropped: only live keys remain, each once.
    db.compact().unwrap();
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    let live = (0..n).filter(|&i| !deleted(i)).count() as u64;
    let entries: u64 = stats.levels.iter().map(|l| l.entries).sum();
    assert_eq!(
        entries, live,
        "after a full compaction, one entry per live key"
    );
    common::check_no_orphans(&db);
    check_contents(&db, n);
    let scanned = db.scan(..).count() as u64;
    assert_eq!(scanned, live);

    // And it all survives a reopen.
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    common::check_no_orphans(&db);
    check_contents(&db, n);
}

#[test]
fn load_200k_has_leveled_shape_and_no_orphans() {
    load(200_000);
}

#[test]
#[ignore = "1M keys: about a minute"]
fn load_1m_has_leveled_shape_and_no_orphans() {
    load(1_000_000);
}
