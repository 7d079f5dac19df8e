//! Read amplification: absent-key gets read data blocks only for filter false positives.

use bloomkv::{Db, Options};

fn key(i: u32) -> String {
    format!("key{:08}", i)
}

#[test]
fn twenty_level0_tables_absent_gets_read_only_false_positive_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        block_cache_bytes: 0,
        level0_compaction_trigger: 1000,
        level0_slowdown_writes: 1000,
        level0_stop_writes: 1001,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // 20 tables, each spanning the whole key range (every 20th key), so every table's key
    // range covers every probe and only the filter can save the read.
    for t in 0..20u32 {
        for i in 0..2000u32 {
            db.put(key(i * 40 + t * 2), b"value").unwrap();
        }
        db.flush().unwrap();
    }
    let stats = db.stats();
    assert_eq!(stats.levels[0].files, 20);
    let before = db.stats();
    let probes = 10_000u32;
    for i in 0..probes {
        // Odd numbers were never written, and they lie inside every table's range.
        assert_eq!(
            db.get(key(((i * 8 + 1) % 78_000 + 1_000) | 1)).unwrap(),
            None
        );
    }
    let after = db.stats();
    let checks = after.filter_checks - before.filter_checks;
    let fps = after.filter_false_positives - before.filter_false_positives;
    let blocks = after.data_blocks_read - before.data_blocks_read;
    assert_eq!(
        checks,
        20 * probes as u64,
        "every table's filter is asked once per get"
    );
    assert_eq!(
        blocks, fps,
        "a data block is read exactly when a filter errs"
    );
    // 10 bits/key: about 1% per check (blocked layout a little more).
    let rate = fps as f64 / checks as f64;
    assert!(rate < 0.02, "false-positive rate {rate}");
    let expected = after.levels[0].expected_fpr;
    assert!(expected > 0.005 && expected < 0.02, "expected {expected}");

    // The same with filters off reads a block in every table.
    drop(db);
    let opts = Options {
        block_cache_bytes: 0,
        filter_bits_per_key: 0.0,
        level0_compaction_trigger: 1000,
        level0_slowdown_writes: 1000,
        level0_stop_writes: 1001,
        ..Default::default()
    };
    let dir2 = tempfile::tempdir().unwrap();
    let db = Db::open(dir2.path(), opts).unwrap();
    for t in 0..20u32 {
        for i in 0..2000u32 {
            db.put(key(i * 40 + t * 2), b"value").unwrap();
        }
        db.flush().unwrap();
    }
    let before = db.stats();
    for i in 0..1000u32 {
        assert_eq!(
            db.get(key(((i * 8 + 1) % 78_000 + 1_000) | 1)).unwrap(),
            None
        );
    }
    let after = db.stats();
    assert_eq!(after.data_blocks_read - before.data_blocks_read, 20 * 1000);
    assert_eq!(after.filter_checks, 0);
}
