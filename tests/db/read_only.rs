//! `Db::open_read_only`: it serves every read from the state at open, WAL contents
//! included, refuses every change with `Error::ReadOnly`, leaves the directory exactly as it
//! was, and shares the LOCK file with other readers while excluding writers.

use std::collections::BTreeMap;

use bloomkv::{Db, Error, LockHolder, Options, ReadOptions, WriteBatch};

use crate::common::{Map, dir_state, small_options, w1_key, w1_value};

fn options() -> Options {
    Options {
        memtable_bytes: 32 << 10,
        target_file_bytes: 32 << 10,
        max_bytes_for_level_base: 128 << 10,
        ..small_options()
    }
}

/// A database with tables on several levels, a deletion, and writes that only its WAL holds.
/// Returns what it should hold and the keys only the WAL has.
fn build(dir: &std::path::Path) -> (Map, Vec<Vec<u8>>) {
    let db = Db::open(dir, options()).unwrap();
    let mut model = BTreeMap::new();
    for i in 0..3000 {
        db.put(w1_key(i), w1_value(i, 0)).unwrap();
        model.insert(w1_key(i), w1_value(i, 0));
    }
    db.delete(w1_key(7)).unwrap();
    model.remove(&w1_key(7));
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert!(db.stats().levels[1..].iter().any(|l| l.files > 0));
    // These stay in the WAL: no flush after them.
    let mut wal_only = Vec::new();
    for i in 5000..5050 {
        db.put(w1_key(i), w1_value(i, 1)).unwrap();
        model.insert(w1_key(i), w1_value(i, 1));
        wal_only.push(w1_key(i));
    }
    db.put(w1_key(1), w1_value(1, 1)).unwrap();
    model.insert(w1_key(1), w1_value(1, 1));
    (model, wal_only)
}

#[test]
fn serves_every_read_including_the_wal_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (model, wal_only) = build(dir.path());
    let before = dir_state(dir.path());

    let db = Db::open_read_only(dir.path(), options()).unwrap();
    assert!(db.is_read_only());
    let report = db.recovery_report();
    assert_eq!(report.records, 51, "{report:?}");
    assert_eq!(report.tables_written, 0);
    // The WAL-only writes are visible, and no table holds them.
    for k in &wal_only {
        assert_eq!(db.get(k).unwrap(), model.get(k).cloned());
    }
    for i in 0..3100 {
        assert_eq!(
            db.get(w1_key(i)).unwrap(),
            model.get(&w1_key(i)).cloned(),
            "{i}"
        );
    }
    let keys: Vec<Vec<u8>> = model.keys().cloned().collect();
    let got = db.multi_get(&keys).unwrap();
    assert!(
        got.iter()
            .zip(model.values())
            .all(|(g, v)| g.as_ref() == Some(v))
    );
    let scanned: BTreeMap<Vec<u8>, Vec<u8>> = db.scan(..).map(|kv| kv.unwrap()).collect();
    assert_eq!(scanned, model);
    let backward: Vec<Vec<u8>> = db.iter().rev().map(|kv| kv.unwrap().0).collect();
    assert!(backward.iter().rev().eq(model.keys()));
    assert_eq!(
        db.range(w1_key(100)..w1_key(200)).count(),
        model.range(w1_key(100)..w1_key(200)).count()
    );
    let mut c = db.cursor(&ReadOptions::default());
    c.seek(w1_key(5000)).unwrap();
    assert_eq!(c.key(), w1_key(5000));
    let snap = db.snapshot();
    assert_eq!(snap.get(w1_key(1)).unwrap(), Some(w1_value(1, 1)));
    assert!(db.stats().gets > 0);
    db.wait_for_compactions().unwrap();

    // Every change is refused, with the typed error.
    let refused = [
        db.put("k", "v"),
        db.delete(w1_key(1)),
        db.write({
            let mut b = WriteBatch::new();
            b.put("a", "b");
            b
        }),
        db.flush(),
        db.compact(),
        db.compact_range(w1_key(0)..w1_key(10)),
        db.sync_wal(),
        db.resume(),
    ];
    for r in refused {
        let e = r.unwrap_err();
        assert!(matches!(e, Error::ReadOnly(_)), "{e}");
        assert!(e.to_string().contains("read-only"), "{e}");
    }
    drop(snap);
    drop(c);
    drop(db);
    assert_eq!(
        dir_state(dir.path()),
        before,
        "a read-only session changed the directory"
    );

    // The writer still finds everything, WAL included.
    let db = Db::open(dir.path(), options()).unwrap();
    assert_eq!(db.get(w1_key(5049)).unwrap(), Some(w1_value(5049, 1)));
}

#[test]
fn readers_share_the_lock_and_exclude_writers_both_ways() {
    let dir = tempfile::tempdir().unwrap();
    let writer = Db::open(dir.path(), options()).unwrap();
    writer.put("k", "v").unwrap();
    let e = Db::open_read_only(dir.path(), options()).unwrap_err();
    assert!(
        matches!(&e, Error::Locked(c) if c.holder == LockHolder::Writer),
        "{e}"
    );
    assert!(e.to_string().contains("held by a writer"), "{e}");
    drop(writer);

    let a = Db::open_read_only(dir.path(), options()).unwrap();
    let b = Db::open_read_only(dir.path(), options()).unwrap();
    assert_eq!(a.get("k").unwrap(), Some(b"v".to_vec()));
    assert_eq!(b.get("k").unwrap(), Some(b"v".to_vec()));
    let e = Db::open(dir.path(), options()).unwrap_err();
    assert!(
        matches!(&e, Error::Locked(c) if c.holder == LockHolder::ReadOnly),
        "{e}"
    );
    assert!(e.to_string().contains("held by read-only openers"), "{e}");
    drop(a);
    // One reader is enough to keep a writer out.
    let e = Db::open(dir.path(), options()).unwrap_err();
    assert!(e.to_string().contains("read-only"), "{e}");
    drop(b);
    Db::open(dir.path(), options())
        .unwrap()
        .put("k", "w")
        .unwrap();
}

#[test]
fn no_lock_file_is_created_and_a_missing_database_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), options()).unwrap();
        db.put("k", "v").unwrap();
    }
    // A copy without a LOCK file opens, unlocked, and stays without one.
    std::fs::remove_file(dir.path().join("LOCK")).unwrap();
    let before = dir_state(dir.path());
    let db = Db::open_read_only(dir.path(), options()).unwrap();
    assert_eq!(db.get("k").unwrap(), Some(b"v".to_vec()));
    drop(db);
    assert_eq!(dir_state(dir.path()), before);

    let empty = tempfile::tempdir().unwrap();
    let e = Db::open_read_only(empty.path(), options()).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    assert!(dir_state(empty.path()).is_empty(), "created something");
    let missing = empty.path().join("nope");
    assert!(Db::open_read_only(&missing, options()).is_err());
    assert!(!missing.exists());
}
