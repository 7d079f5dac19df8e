//! A read-only open on a full disk: with every file creation (or every write) failing, it
//! opens, serves reads, WAL contents included, and makes no write, sync, rename or creation
//! call at all, while a writable open under the same faults fails.

use std::sync::Arc;

use crate::env::Env;
use crate::env::fault::{FaultController, FaultKind, FaultOp};
use crate::{Db, Error, Options};

const WRITING_OPS: [FaultOp; 5] = [
    FaultOp::Write,
    FaultOp::Sync,
    FaultOp::SyncDir,
    FaultOp::Rename,
    FaultOp::Create,
];

fn counts(ctl: &FaultController) -> Vec<u64> {
    WRITING_OPS.iter().map(|&op| ctl.calls(op)).collect()
}

fn options(env: Arc<dyn Env>) -> Options {
    Options {
        env,
        memtable_bytes: 16 << 10,
        ..Options::default()
    }
}

#[test]
fn a_full_disk_does_not_stop_a_read_only_open() {
    for failing in [FaultOp::Create, FaultOp::Write] {
        let dir = tempfile::tempdir().unwrap();
        let (env, ctl) = super::fault_env();
        {
            let db = Db::open(dir.path(), options(Arc::clone(&env))).unwrap();
            for i in 0..2000u32 {
                db.put(i.to_be_bytes(), [b'v'; 40]).unwrap();
            }
            db.flush().unwrap();
            db.put(b"wal only", b"yes").unwrap();
        }
        ctl.fail_from_nth(failing, 1, FaultKind::NoSpace);
        let e = Db::open(dir.path(), options(Arc::clone(&env))).unwrap_err();
        assert!(e.to_string().contains("os error 28"), "{e}");
        let injected = ctl.injected();

        let before = counts(&ctl);
        let db = Db::open_read_only(dir.path(), options(Arc::clone(&env))).unwrap();
        assert_eq!(db.get(b"wal only").unwrap(), Some(b"yes".to_vec()));
        for i in 0..2000u32 {
            assert_eq!(db.get(i.to_be_bytes()).unwrap(), Some(vec![b'v'; 40]));
        }
        assert_eq!(db.scan(..).count(), 2001);
        assert!(matches!(db.put(b"k", b"v"), Err(Error::ReadOnly(_))));
        drop(db);
        assert_eq!(
            counts(&ctl),
            before,
            "{failing:?}: the read-only session wrote"
        );
        assert_eq!(ctl.injected(), injected);
    }
}
