//! Compaction stays within bounds: a compaction output is cut before it overlaps too much of
//! the level below its own (LevelDB's grandparent rule), and `compact_range` compacts only
//! the tables holding keys of its range.

use bloomkv::{Compression, Db, Options, TableStats};

fn value(i: u32) -> Vec<u8> {
    let mut v = format!("{i:08}").into_bytes();
    v.resize(100, b'.');
    v
}

/// Bytes of level `level + 1` that table `t` (on `level`) overlaps.
fn overlap_below(tables: &[TableStats], t: &TableStats) -> u64 {
    tables
        .iter()
        .filter(|g| g.level == t.level + 1)
        .filter(|g| g.largest_key >= t.smallest_key && g.smallest_key <= t.largest_key)
        .map(|g| g.bytes)
        .sum()
}

/// LevelDB's SparseMerge: a small table spanning the whole key range of a big level below
/// must not end up in the level above it whole, or its next compaction rewrites all of it.
#[test]
fn a_sparse_table_is_cut_where_it_would_overlap_too_much_of_the_level_below() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 64 << 10,
        target_file_bytes: 16 << 10,
        max_bytes_for_level_base: 64 << 10,
        level_size_multiplier: 1000,
        level0_compaction_trigger: 1,
        level0_slowdown_writes: 4,
        level0_stop_writes: 8,
        // The limits below are in stored bytes: keep the (compressible) values raw.
        compression: Compression::None,
        ..Options::default()
    };
    let limit = 10 * opts.target_file_bytes;
    let db = Db::open(dir.path(), opts).unwrap();
    // About 2 MB of "b" keys, settled in level 2.
    for i in 0..20_000u32 {
        db.put(format!("b{i:06}"), value(i)).unwrap();
    }
    db.compact().unwrap();
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    assert_eq!(s.levels[1].files, 0, "{:?}", s.levels);
    assert!(s.levels[2].bytes > 20 * limit / 10, "{:?}", s.levels);
    // Two keys on either side of all of it: one level-0 table spanning the whole level.
    db.put("a", b"first").unwrap();
    db.put("z", b"last").unwrap();
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    let tables = db.stats().tables;
    let l1: Vec<&TableStats> = tables.iter().filter(|t| t.level == 1).collect();
    assert!(!l1.is_empty(), "the two keys went to level 1: {tables:?}");
    for t in &l1 {
        let overlap = overlap_below(&tables, t);
        assert!(
            overlap <= limit,
            "L1 table {} overlaps {overlap} bytes of L2 (limit {limit})",
            t.file_number
        );
    }
    assert_eq!(db.get("a").unwrap(), Some(b"first".to_vec()));
    assert_eq!(db.get("z").unwrap(), Some(b"last".to_vec()));
    assert_eq!(db.get("b000777").unwrap(), Some(value(777)));
}

#[test]
fn compact_range_rewrites_only_the_tables_holding_its_keys() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 32 << 10,
        target_file_bytes: 16 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for round in 0..2u32 {
        for i in 0..3000u32 {
            db.put(format!("a{i:05}"), value(i + round)).unwrap();
            db.put(format!("m{i:05}"), value(i + round)).unwrap();
        }
    }
    for i in (0..3000u32).step_by(3) {
        db.delete(format!("a{i:05}")).unwrap();
    }
    db.compact().unwrap();
    // New overwrites of both halves, then a compaction of the "a" half only. Each half is
    // flushed on its own: a level-0 table holding both would reach into the range and (by
    // design) take every "m" table below it along, and whether one is still in level 0
    // when the compaction starts depends on how far level-0 compactions have got.
    for prefix in ["a", "m"] {
        for i in 0..3000u32 {
            db.put(format!("{prefix}{i:05}"), value(i + 7)).unwrap();
        }
        db.flush().unwrap();
    }
    db.wait_for_compactions().unwrap();
    let before = db.stats().tables;
    let m_only = |t: &&TableStats| t.smallest_key.as_slice() >= b"m".as_slice();
    let untouched: Vec<u64> = before
        .iter()
        .filter(m_only)
        .map(|t| t.file_number)
        .collect();
    assert!(!untouched.is_empty());
    db.compact_range(b"a".as_slice()..b"b".as_slice()).unwrap();
    let after = db.stats().tables;
    let live: Vec<u64> = after.iter().map(|t| t.file_number).collect();
    // Tables holding only "m" keys stayed as they were.
    for n in &untouched {
        assert!(
            live.contains(n),
            "table {n} outside the range was rewritten"
        );
    }
    // The "a" keys now sit in one level, each version once.
    let a_levels: std::collections::BTreeSet<usize> = after
        .iter()
        .filter(|t| t.smallest_key.as_slice() < b"b".as_slice())
        .map(|t| t.level)
        .collect();
    assert_eq!(a_levels.len(), 1, "{after:?}");
    // Each "a" key once (tables reaching from "a" into "m" also hold "m" keys).
    let reaching_a = after
        .iter()
        .filter(|t| t.smallest_key.as_slice() < b"b".as_slice());
    let (all, straddling): (u64, u64) = reaching_a.fold((0, 0), |(all, st), t| {
        let s = if t.largest_key.as_slice() >= b"m".as_slice() {
            t.entries
        } else {
            0
        };
        (all + t.entries, st + s)
    });
    assert!(
        all - straddling <= 3000 && 3000 <= all,
        "{all} {straddling}"
    );
    for i in (0..3000u32).step_by(97) {
        assert_eq!(db.get(format!("a{i:05}")).unwrap(), Some(value(i + 7)));
        assert_eq!(db.get(format!("m{i:05}")).unwrap(), Some(value(i + 7)));
    }
}
