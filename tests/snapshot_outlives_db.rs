//! A `Snapshot` keeps its database open after its `Db` handles are dropped (documented on
//! `Snapshot`), and a reopen meanwhile fails with an error that says so: this process holds
//! the lock, through a snapshot.

use bloomkv::{Db, Error, Options};

#[test]
fn a_snapshot_keeps_its_db_open_and_the_lock_error_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("k", "v").unwrap();
    let snap = db.snapshot();
    drop(db);
    assert_eq!(snap.get("k").unwrap(), Some(b"v".to_vec()));

    for err in [
        Db::open(dir.path(), Options::default()).unwrap_err(),
        Db::open_read_only(dir.path(), Options::default()).unwrap_err(),
    ] {
        let Error::Locked(conflict) = &err else {
            panic!("{err}");
        };
        assert_eq!(conflict.pids, vec![std::process::id()], "{err}");
        let text = err.to_string();
        assert!(text.contains("this process"), "{text}");
        assert!(text.contains("1 Snapshot"), "{text}");
        assert!(!text.contains("Db handle"), "{text}");
    }

    // A second handle is named as such.
    let again = snap.scan(..).count();
    assert_eq!(again, 1);
    drop(snap);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let other = db.clone();
    let text = Db::open(dir.path(), Options::default())
        .unwrap_err()
        .to_string();
    assert!(text.contains("2 Db handles"), "{text}");
    drop((db, other));
    Db::open(dir.path(), Options::default()).unwrap();
}
