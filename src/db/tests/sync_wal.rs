//! `Db::sync_wal` syncs the directory once per WAL (the new WAL's entry), not on every call,
//! and what it synced survives a power cut.

use std::sync::Arc;

use crate::env::fault::FaultOp;
use crate::{Db, Options};

#[test]
fn the_directory_is_synced_once_per_wal() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env: Arc::clone(&env),
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let dir_syncs = || ctl.calls(FaultOp::SyncDir);

    let before = dir_syncs();
    for i in 0..5u32 {
        db.put(i.to_be_bytes(), "v").unwrap();
        db.sync_wal().unwrap();
    }
    assert_eq!(
        dir_syncs(),
        before,
        "open already synced the first WAL's entry"
    );

    // A new WAL (the memtable switched): its entry is synced by the first sync_wal only.
    db.flush().unwrap();
    db.put("after-switch", "v").unwrap();
    let before = dir_syncs();
    db.sync_wal().unwrap();
    let first = dir_syncs() - before;
    assert!(first >= 1, "the new WAL's entry must be synced");
    db.put("again", "v").unwrap();
    db.sync_wal().unwrap();
    assert_eq!(
        dir_syncs() - before,
        first,
        "no directory sync for the same WAL"
    );

    // What sync_wal promised survives a power cut.
    drop(db);
    ctl.crash(env.as_ref()).unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get("again").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get("after-switch").unwrap().as_deref(), Some(&b"v"[..]));
}
