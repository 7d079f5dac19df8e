//! Range deletes, scenario by scenario: bounds, snapshots and later puts, a filter that must
//! not skip a table holding a covering tombstone, WAL replay, tombstones dropped at the
//! bottom (and kept for a snapshot), and a damaged range-deletion block.

use std::path::Path;
use std::sync::Arc;

use bloomkv::env::Env;
use bloomkv::sstable::{ReadCounters, Table, TableReadOptions};
use bloomkv::{Db, Error, Options};

fn k(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn options() -> Options {
    Options {
        memtable_bytes: 64 * 1024,
        target_file_bytes: 16 * 1024,
        block_bytes: 512,
        ..Default::default()
    }
}

/// `(file number, range tombstones)` of every table in `dir`.
fn tombstones_per_table(dir: &Path) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_none_or(|x| x != "sst") {
            continue;
        }
        let number: u64 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let file = bloomkv::env::StdEnv.open_random_access(&path).unwrap();
        let t = Table::open(
            file,
            TableReadOptions {
                file_number: number,
                filter: None,
                cache: None,
                counters: Arc::new(ReadCounters::default()),
            },
        )
        .unwrap();
        out.push((number, t.properties().range_deletions));
    }
    out
}

#[test]
fn bounds_are_half_open_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..10 {
        db.put(k(i), b"v").unwrap();
    }
    db.delete_range(k(3), k(6)).unwrap();
    let live: Vec<Vec<u8>> = db.iter().map(|kv| kv.unwrap().0).collect();
    assert_eq!(live, [0, 1, 2, 6, 7, 8, 9].map(k));
    assert!(matches!(
        db.delete_range(k(6), k(3)),
        Err(Error::InvalidArgument(_))
    ));
    // An empty range is no write at all.
    db.delete_range(k(7), k(7)).unwrap();
    assert_eq!(db.get(k(7)).unwrap(), Some(b"v".to_vec()));
    let mut b = bloomkv::WriteBatch::new();
    b.put(k(1), b"x");
    b.delete_range(k(9), k(0));
    assert!(matches!(db.write(b), Err(Error::InvalidArgument(_))));
    assert_eq!(db.get(k(1)).unwrap(), Some(b"v".to_vec()), "no half batch");
}

#[test]
fn snapshots_and_later_puts_in_memtable_tables_and_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..2000 {
        db.put(k(i), format!("v{i}")).unwrap();
    }
    db.flush().unwrap();
    let before = db.snapshot();
    db.delete_range(k(100), k(1900)).unwrap();
    let after = db.snapshot();
    db.put(k(500), b"again").unwrap();
    for stage in ["memtable", "flushed", "compacted"] {
        match stage {
            "flushed" => db.flush().unwrap(),
            "compacted" => db.compact().unwrap(),
            _ => {}
        }
        assert_eq!(db.get(k(99)).unwrap(), Some(b"v99".to_vec()), "{stage}");
        assert_eq!(db.get(k(100)).unwrap(), None, "{stage}");
        assert_eq!(db.get(k(1899)).unwrap(), None, "{stage}");
        assert_eq!(db.get(k(1900)).unwrap(), Some(b"v1900".to_vec()), "{stage}");
        assert_eq!(db.get(k(500)).unwrap(), Some(b"again".to_vec()), "{stage}");
        assert_eq!(
            before.get(k(700)).unwrap(),
            Some(b"v700".to_vec()),
            "{stage}"
        );
        assert_eq!(after.get(k(700)).unwrap(), None, "{stage}");
        assert_eq!(after.get(k(500)).unwrap(), None, "{stage}");
        assert_eq!(db.iter().count(), 200 + 1, "{stage}");
        assert_eq!(db.iter().rev().count(), 200 + 1, "{stage}");
        assert_eq!(before.iter().count(), 2000, "{stage}");
        let got = db.multi_get(&[k(99), k(100), k(500), k(1900)]).unwrap();
        assert_eq!(
            got,
            [
                Some(b"v99".to_vec()),
                None,
                Some(b"again".to_vec()),
                Some(b"v1900".to_vec())
            ],
            "{stage}"
        );
        if stage == "memtable" {
            assert!(
                !db.key_may_exist(k(1000)),
                "the memtable's tombstone hides it"
            );
        }
    }
}

/// A table whose filter says "absent" for a key may still hold a tombstone covering it:
/// the lookup must not skip to the older table below that holds the key.
#[test]
fn a_filter_never_hides_a_covering_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..100 {
        db.put(k(i), b"old").unwrap();
    }
    db.flush().unwrap();
    // A level-0 table holding one key far away and the tombstone: its filter knows only
    // that key, so it rules out every key the tombstone covers.
    db.put(b"zzz", b"x").unwrap();
    db.delete_range(k(10), k(90)).unwrap();
    db.flush().unwrap();
    let explained = db.get_explained(k(50)).unwrap();
    assert_eq!(explained.value, None, "{explained:?}");
    assert_eq!(db.get(k(50)).unwrap(), None);
    assert_eq!(
        db.multi_get(&[k(50), k(5)]).unwrap(),
        [None, Some(b"old".to_vec())]
    );
    assert!(!db.key_may_exist(k(50)));
    assert_eq!(db.get(k(5)).unwrap(), Some(b"old".to_vec()));
}

#[test]
fn wal_replay_keeps_range_deletes() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        for i in 0..300 {
            db.put(k(i), b"v").unwrap();
        }
        db.flush().unwrap();
        db.delete_range(k(0), k(200)).unwrap();
        db.put(k(100), b"after").unwrap();
        // Dropped without a flush: only the WAL holds the range delete.
    }
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get(k(5)).unwrap(), None);
    assert_eq!(db.get(k(100)).unwrap(), Some(b"after".to_vec()));
    assert_eq!(db.get(k(250)).unwrap(), Some(b"v".to_vec()));
    assert_eq!(db.iter().count(), 101);
    drop(db);
    // And again, now that recovery has written it to a table.
    let db = Db::open(dir.path(), options()).unwrap();
    db.flush().unwrap();
    drop(db);
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.iter().count(), 101);
    assert_eq!(db.get(k(199)).unwrap(), None);
}

#[test]
fn tombstones_leave_at_the_bottom_unless_a_snapshot_needs_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    for i in 0..3000 {
        db.put(k(i), [7u8; 40]).unwrap();
    }
    db.compact().unwrap();
    let snap = db.snapshot();
    db.delete_range(k(1000), k(2000)).unwrap();
    db.compact().unwrap();
    let held: u64 = tombstones_per_table(dir.path()).iter().map(|t| t.1).sum();
    assert!(
        held > 0,
        "a snapshot older than the tombstone still reads the keys"
    );
    assert_eq!(snap.iter().count(), 3000);
    assert_eq!(db.iter().count(), 2000);
    drop(snap);
    db.compact().unwrap();
    let tables = tombstones_per_table(dir.path());
    assert!(tables.iter().all(|t| t.1 == 0), "{tables:?}");
    assert_eq!(db.iter().count(), 2000);
    assert_eq!(db.get(k(1500)).unwrap(), None);
    let entries: u64 = db.stats().tables.iter().map(|t| t.entries).sum();
    assert_eq!(entries, 2000, "the covered versions are gone too");
}

/// A flipped byte inside a table's range-deletion block: a `Corruption` naming the table and
/// the block's offset, never a read that ignores the tombstone.
#[test]
fn a_damaged_range_deletion_block_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        db.put(k(1), b"v").unwrap();
        db.delete_range(b"rd-start", b"rd-stop").unwrap();
        db.flush().unwrap();
    }
    let (number, _) = tombstones_per_table(dir.path())
        .into_iter()
        .find(|t| t.1 == 1)
        .unwrap();
    let path = dir.path().join(format!("{number:06}.sst"));
    let mut bytes = std::fs::read(&path).unwrap();
    // The block: count 1, "rd-start", "rd-stop", sequence.
    let needle = [&[1u8, 8][..], b"rd-start", &[7], b"rd-stop"].concat();
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle.as_slice())
        .unwrap();
    bytes[at + 3] ^= 0x20;
    std::fs::write(&path, bytes).unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    match db.get(b"rd-stb") {
        Err(Error::Corruption { file, offset, .. }) => {
            assert_eq!(file, path);
            assert_eq!(offset, at as u64);
        }
        other => panic!("expected corruption, got {other:?}"),
    }
}

/// `repair` rebuilds the tables from the WALs and the old tables: range tombstones of both
/// survive it.
#[test]
fn repair_keeps_range_deletes_from_tables_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        for i in 0..400 {
            db.put(k(i), b"v").unwrap();
        }
        db.flush().unwrap();
        db.delete_range(k(0), k(100)).unwrap();
        db.flush().unwrap();
        // This one only in the WAL.
        db.delete_range(k(300), k(350)).unwrap();
    }
    bloomkv::repair(dir.path()).unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get(k(50)).unwrap(), None);
    assert_eq!(db.get(k(320)).unwrap(), None);
    assert_eq!(db.get(k(200)).unwrap(), Some(b"v".to_vec()));
    assert_eq!(db.iter().count(), 400 - 100 - 50);
}
