//! A compaction whose outputs are written but whose version edit cannot be made durable (the
//! directory sync before the MANIFEST append fails) removes its outputs and keeps its inputs:
//! before any reopen, the directory holds exactly the tables the MANIFEST names.

use super::{named_tables, table_files};
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

#[test]
fn a_failed_compaction_leaves_only_the_tables_the_manifest_names() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        target_file_bytes: 8 << 10,
        // The three level-0 tables must stay there until the compaction below.
        idle_compaction_delay: None,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for round in 0..3u32 {
        for i in 0..2000u32 {
            db.put(format!("k{i:05}"), format!("v{round}-{i}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.wait_for_compactions().unwrap();
    let before = table_files(dir.path());
    assert_eq!(before.len(), 3, "three level-0 tables, below the trigger");
    // The compaction writes several outputs (8 KiB target), then syncs the directory
    // before its MANIFEST append: that sync fails.
    ctl.fail_nth(FaultOp::SyncDir, 1, FaultKind::NoSpace);
    let err = db.compact().unwrap_err();
    assert!(matches!(err, Error::WritesStopped(_)), "{err}");
    assert_eq!(ctl.injected(), 1);
    assert_eq!(table_files(dir.path()), before, "no output is left");
    assert_eq!(named_tables(dir.path()), before);
    assert_eq!(db.get("k01234").unwrap(), Some(b"v2-1234".to_vec()));
    drop(db);

    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert!(db.recovery_report().orphan_tables_removed.is_empty());
    for i in (0..2000u32).step_by(97) {
        assert_eq!(
            db.get(format!("k{i:05}")).unwrap(),
            Some(format!("v2-{i}").into_bytes())
        );
    }
}
