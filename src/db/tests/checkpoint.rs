//! A checkpoint that fails at any file-system call (a link, a create, a write, a sync, the
//! final rename) leaves no directory behind, and the live database goes on working.

use std::sync::Arc;

use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

#[test]
fn a_failed_checkpoint_leaves_nothing_and_the_database_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env: Arc::clone(&env),
        memtable_bytes: 16 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path().join("live"), opts).unwrap();
    for i in 0..2000u32 {
        db.put(i.to_be_bytes(), [7u8; 40]).unwrap();
    }
    // An empty memtable, so the loop's few small writes never fill one: a background flush
    // running while a fault is armed would take the fault meant for the checkpoint (and
    // stop writes), which happened under a loaded CI run.
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert!(db.live_files().len() >= 2);

    let mut failures = 0;
    for op in [
        FaultOp::Create,
        FaultOp::Write,
        FaultOp::Sync,
        FaultOp::SyncDir,
        FaultOp::Rename,
    ] {
        for n in 1..=12 {
            let target = dir.path().join(format!("copy-{op:?}-{n}"));
            db.wait_for_compactions().unwrap();
            ctl.fail_nth(op, n, FaultKind::Eio);
            let result = db.checkpoint(&target);
            ctl.clear();
            let staging = super::super::checkpoint::staging_dir(&target).unwrap();
            match result {
                Ok(seq) => {
                    assert!(seq >= 2000);
                    let copy = Db::open_read_only(&target, Options::default()).unwrap();
                    assert_eq!(copy.scan(..).count(), 2000);
                }
                Err(e) => {
                    failures += 1;
                    assert!(matches!(e, Error::Io { .. }), "{op:?} #{n}: {e}");
                    assert!(!target.exists(), "{op:?} #{n}: no checkpoint directory");
                    assert!(!staging.exists(), "{op:?} #{n}: no staging directory");
                    // A failed WAL sync stops writes (as any WAL sync failure does).
                    db.resume().unwrap();
                }
            }
            assert!(!staging.exists());
            db.put(format!("after-{op:?}-{n}"), "x").unwrap();
            db.delete(format!("after-{op:?}-{n}")).unwrap();
        }
    }
    assert!(failures >= 20, "only {failures} checkpoints failed");
}
