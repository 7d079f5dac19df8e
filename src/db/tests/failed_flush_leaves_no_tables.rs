//! A flush whose table is written but whose version edit cannot be made durable (the
//! directory sync before the MANIFEST append fails) removes its table: before any reopen, the
//! directory holds exactly the tables the MANIFEST names.

use super::{named_tables, table_files};
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

#[test]
fn a_failed_flush_leaves_only_the_tables_the_manifest_names() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..500u32 {
        db.put(format!("a{i:04}"), b"first").unwrap();
    }
    db.flush().unwrap();
    let before = table_files(dir.path());
    assert_eq!(before.len(), 1);
    for i in 0..500u32 {
        db.put(format!("b{i:04}"), b"second").unwrap();
    }
    // The flush's only directory sync is the one before its MANIFEST append.
    ctl.fail_nth(FaultOp::SyncDir, 1, FaultKind::Eio);
    let err = db.flush().unwrap_err();
    assert!(matches!(err, Error::WritesStopped(_)), "{err}");
    assert_eq!(ctl.injected(), 1);
    assert_eq!(table_files(dir.path()), before, "the flush's table is gone");
    assert_eq!(named_tables(dir.path()), before);
    // Reads go on from the memtable the flush could not write out.
    assert_eq!(db.get("b0042").unwrap(), Some(b"second".to_vec()));
    drop(db);

    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert!(db.recovery_report().orphan_tables_removed.is_empty());
    assert_eq!(db.get("a0042").unwrap(), Some(b"first".to_vec()));
    assert_eq!(db.get("b0042").unwrap(), Some(b"second".to_vec()));
}
