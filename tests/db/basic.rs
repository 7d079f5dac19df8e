//! The public Db API: writes, reads, deletes, batches, scans, snapshots, reopen, limits, lock.

use std::ops::Bound;

use bloomkv::{Db, Error, Options, WriteBatch};

fn keys_of(it: impl Iterator<Item = bloomkv::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<String> {
    it.map(|kv| String::from_utf8(kv.unwrap().0).unwrap())
        .collect()
}

#[test]
fn put_get_delete_batch() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get(b"missing").unwrap(), None);
    db.put(b"a", b"1").unwrap();
    db.put("b", "2").unwrap();
    db.put(b"", b"empty key").unwrap();
    db.put(b"c", b"").unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(db.get(b"").unwrap(), Some(b"empty key".to_vec()));
    assert_eq!(db.get(b"c").unwrap(), Some(Vec::new()));
    db.put(b"a", b"1b").unwrap();
    assert_eq!(db.get(b"a").unwrap(), Some(b"1b".to_vec()));
    db.delete(b"a").unwrap();
    assert_eq!(db.get(b"a").unwrap(), None);
    db.delete(b"never-there").unwrap();

    let mut batch = WriteBatch::new();
    batch.put(b"x", b"10");
    batch.put(b"y", b"20");
    batch.delete(b"b");
    batch.put(b"x", b"11"); // later op in the same batch wins
    db.write(batch).unwrap();
    assert_eq!(db.get(b"x").unwrap(), Some(b"11".to_vec()));
    assert_eq!(db.get(b"y").unwrap(), Some(b"20".to_vec()));
    assert_eq!(db.get(b"b").unwrap(), None);
    db.write(WriteBatch::new()).unwrap();
}

#[test]
fn scan_ranges_in_memtable_and_tables() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for k in ["a", "b", "c", "d", "e"] {
        db.put(k, k.to_uppercase()).unwrap();
    }
    db.flush().unwrap();
    db.put("c", "C2").unwrap();
    db.delete("d").unwrap();
    db.put("f", "F").unwrap();
    assert_eq!(keys_of(db.scan(..)), ["a", "b", "c", "e", "f"]);
    assert_eq!(keys_of(db.scan("b".."e")), ["b", "c"]);
    assert_eq!(keys_of(db.scan("b"..="e")), ["b", "c", "e"]);
    assert_eq!(keys_of(db.scan("c"..)), ["c", "e", "f"]);
    assert_eq!(keys_of(db.scan(.."c")), ["a", "b"]);
    assert_eq!(keys_of(db.scan(..="c")), ["a", "b", "c"]);
    assert_eq!(
        keys_of(db.scan((Bound::Excluded("a"), Bound::Excluded("f")))),
        ["b", "c", "e"]
    );
    let values: Vec<Vec<u8>> = db.scan("c"..="c").map(|kv| kv.unwrap().1).collect();
    assert_eq!(values, vec![b"C2".to_vec()]);
}

#[test]
fn snapshot_sees_the_past() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("k", "old").unwrap();
    db.put("gone", "here").unwrap();
    let snap = db.snapshot();
    db.put("k", "new").unwrap();
    db.delete("gone").unwrap();
    db.put("later", "x").unwrap();
    db.flush().unwrap();
    assert_eq!(snap.get("k").unwrap(), Some(b"old".to_vec()));
    assert_eq!(snap.get("gone").unwrap(), Some(b"here".to_vec()));
    assert_eq!(snap.get("later").unwrap(), None);
    assert_eq!(keys_of(snap.scan(..)), ["gone", "k"]);
    assert_eq!(db.get("k").unwrap(), Some(b"new".to_vec()));
    db.compact().unwrap();
    assert_eq!(snap.get("k").unwrap(), Some(b"old".to_vec()));
    assert_eq!(snap.get("gone").unwrap(), Some(b"here".to_vec()));
    assert_eq!(keys_of(db.scan(..)), ["k", "later"]);
}

#[test]
fn reopen_keeps_everything() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put("flushed", "1").unwrap();
        db.flush().unwrap();
        db.put("logged", "2").unwrap();
        db.delete("flushed").unwrap();
        db.put("flushed2", "3").unwrap();
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("flushed").unwrap(), None);
    assert_eq!(db.get("logged").unwrap(), Some(b"2".to_vec()));
    assert_eq!(db.get("flushed2").unwrap(), Some(b"3".to_vec()));
    // Sequence numbers continue: a new write shadows recovered ones.
    db.put("logged", "4").unwrap();
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("logged").unwrap(), Some(b"4".to_vec()));
}

#[test]
fn limits_and_bad_paths() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path().join("db"), Options::default()).unwrap();
    let big_key = vec![b'k'; 64 * 1024 + 1];
    assert!(matches!(
        db.put(&big_key, b"v"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(db.get(&big_key), Err(Error::InvalidArgument(_))));
    db.put(vec![b'k'; 64 * 1024], b"v").unwrap();
    assert_eq!(db.get(vec![b'k'; 64 * 1024]).unwrap(), Some(b"v".to_vec()));

    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    assert!(matches!(
        Db::open(&file, Options::default()),
        Err(Error::InvalidArgument(_))
    ));
    let opts = Options {
        create_if_missing: false,
        ..Default::default()
    };
    assert!(Db::open(dir.path().join("nope"), opts).is_err());
    assert!(!dir.path().join("nope").exists());
}

#[test]
fn second_open_is_locked_until_close() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let err = Db::open(dir.path(), Options::default()).unwrap_err();
    let Error::Locked(conflict) = &err else {
        panic!("{err}")
    };
    assert_eq!(conflict.pids, vec![std::process::id()], "{err}");
    let text = err.to_string();
    assert!(text.contains("which is this process"), "{text}");
    assert!(text.contains("1 Db handle; drop them"), "{text}");
    // Also through another name of the directory.
    #[cfg(unix)]
    {
        let other = tempfile::tempdir().unwrap();
        let link = other.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        let err = Db::open(&link, Options::default()).unwrap_err();
        assert!(err.to_string().contains("1 Db handle"), "{err}");
    }
    let clone = db.clone();
    drop(db);
    assert!(matches!(
        Db::open(dir.path(), Options::default()),
        Err(Error::Locked(_))
    ));
    drop(clone);
    Db::open(dir.path(), Options::default()).unwrap();
}

#[test]
fn db_is_send_sync_clone() {
    fn check<T: Send + Sync + Clone>() {}
    check::<Db>();
}

#[test]
fn small_memtable_flushes_in_background() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 16 * 1024,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..5000u32 {
        db.put(format!("key{i:06}"), format!("value{i}")).unwrap();
    }
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    assert!(stats.flushes > 0, "{stats:?}");
    assert!(stats.total_files() > 0);
    for i in (0..5000u32).step_by(97) {
        assert_eq!(
            db.get(format!("key{i:06}")).unwrap(),
            Some(format!("value{i}").into_bytes())
        );
    }
    assert_eq!(db.scan(..).count(), 5000);
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.scan(..).count(), 5000);
}
