//! A table alone in its key range moves down a level unchanged when its filter already suits
//! the level below, whatever the filter kind. With the default policy (Bloom on level 0,
//! Ribbon below) a Ribbon table records the bits per key it built (~9.6 when asked for 10),
//! and that used to count as a mismatch: every such table was rewritten instead of moved.
//! A level that compresses differently from the one above gets the table rewritten instead.

use bloomkv::{Compression, Db, Options};

use crate::common::small_options;

fn options(level1_bytes: u64) -> Options {
    Options {
        memtable_bytes: 1 << 20,
        target_file_bytes: 4 << 20,
        level0_compaction_trigger: 1,
        max_bytes_for_level_base: level1_bytes,
        idle_compaction_delay: None,
        ..small_options()
    }
}

/// Writes the same 2,000 keys twice, flushing each time: the second compaction into level 1
/// merges, so level 1 holds one table written there, with the level's filter and
/// compression. Returns the tables (one).
fn one_table_written_on_level_1(db: &Db) -> Vec<bloomkv::TableStats> {
    for value in [1u8, 2] {
        for i in 0..2_000u32 {
            db.put(format!("a{i:05}"), [value; 100]).unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
    }
    let tables = db.stats().tables;
    assert_eq!(tables.len(), 1, "precondition: one table ({tables:?})");
    tables
}

#[test]
fn ribbon_table_moves_down_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        options(0).filter_policy_for_level(1).name(),
        Options::default().filter_policy_for_level(1).name(),
        "precondition: the default filter kinds"
    );
    let db = Db::open(dir.path(), options(64 << 20)).unwrap();
    let tables = one_table_written_on_level_1(&db);
    let (level, number, bits) = (
        tables[0].level,
        tables[0].file_number,
        tables[0].filter_bits_per_key,
    );
    assert_eq!(level, 1, "precondition: the table is on level 1");
    assert!(
        bits > 0.0 && bits < 10.0,
        "precondition: a Ribbon filter records what it built, not the 10 asked ({bits})"
    );
    drop(db);

    // Level 1 is now far over its target with nothing below: the table moves down (level 2's
    // small target sends it on further).
    let db = Db::open(dir.path(), options(16 << 10)).unwrap();
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    let placed: Vec<_> = stats
        .tables
        .iter()
        .map(|t| (t.level, t.file_number))
        .collect();
    assert_eq!(placed.len(), 1, "{placed:?}");
    assert!(placed[0].0 >= 2, "moved down: {placed:?}");
    assert_eq!(placed[0].1, number, "moved unchanged, not rewritten");
    assert!(stats.trivial_moves >= 1);
    assert_eq!(stats.compaction_bytes_written, 0);
    for i in (0..2_000u32).step_by(97) {
        assert_eq!(
            db.get(format!("a{i:05}")).unwrap().as_deref(),
            Some(&[2u8; 100][..])
        );
    }
}

/// With `compression_per_level` raw on levels 0-1 and LZ4 below, a table leaving level 1 is
/// rewritten (compressed), not moved: a move would leave it raw for good.
#[test]
fn table_is_rewritten_into_a_level_that_compresses() {
    let dir = tempfile::tempdir().unwrap();
    let per_level = |level1_bytes| Options {
        compression_per_level: Some(vec![Compression::None, Compression::None, Compression::Lz4]),
        ..options(level1_bytes)
    };
    let db = Db::open(dir.path(), per_level(64 << 20)).unwrap();
    let tables = one_table_written_on_level_1(&db);
    assert_eq!(tables[0].level, 1, "precondition: the table is on level 1");
    let (raw_number, raw_bytes) = (tables[0].file_number, tables[0].bytes);
    drop(db);

    let db = Db::open(dir.path(), per_level(16 << 10)).unwrap();
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    assert_eq!(stats.tables.len(), 1, "{:?}", stats.tables);
    let t = &stats.tables[0];
    assert!(t.level >= 2, "moved down: level {}", t.level);
    assert_ne!(t.file_number, raw_number, "rewritten, not moved");
    assert!(stats.compaction_bytes_written > 0);
    // 100-byte runs of one byte: LZ4 shrinks the data blocks several times over.
    assert!(
        t.bytes * 2 < raw_bytes,
        "compressed on the way down: {} bytes, {raw_bytes} raw",
        t.bytes
    );
    for i in (0..2_000u32).step_by(97) {
        assert_eq!(
            db.get(format!("a{i:05}")).unwrap().as_deref(),
            Some(&[2u8; 100][..])
        );
    }
}
