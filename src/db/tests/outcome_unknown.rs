//! A WAL fsync fails after the record reached the OS, and cutting the record back out of the
//! log fails too: the write's outcome is unknown, and the error says so. Writes stop; after a
//! reopen (with or without a power cut) the batch is all there or all absent, never part.

use crate::env::StdEnv;
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options, WriteBatch};

fn batch() -> WriteBatch {
    let mut b = WriteBatch::new();
    for i in 0..3 {
        b.put(format!("unknown{i}"), b"x");
    }
    b.delete("key7");
    b
}

/// The batch's four effects, each as present (`true`) or absent after the reopen.
fn effects(db: &Db) -> Vec<bool> {
    let mut v: Vec<bool> = (0..3)
        .map(|i| db.get(format!("unknown{i}")).unwrap().is_some())
        .collect();
    v.push(db.get("key7").unwrap().is_none());
    v
}

#[test]
fn a_failed_sync_whose_record_cannot_be_cut_back_is_outcome_unknown() {
    for power_cut in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (env, ctl) = super::fault_env();
        let opts = Options {
            env,
            sync_writes: true,
            ..Options::default()
        };
        {
            let db = Db::open(dir.path(), opts).unwrap();
            for i in 0..20 {
                db.put(format!("key{i}"), b"v").unwrap();
            }
            ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
            ctl.also_fail_nth(FaultOp::Truncate, 1, FaultKind::Eio);
            let err = db.write(batch()).unwrap_err();
            assert!(matches!(err, Error::OutcomeUnknown(_)), "{err}");
            assert!(err.to_string().contains("outcome unknown"), "{err}");
            assert_eq!(ctl.injected(), 2);
            // The database refuses writes and says why; reads go on and do not show the batch.
            let stopped = db.put("later", b"v").unwrap_err();
            assert!(matches!(stopped, Error::WritesStopped(_)), "{stopped}");
            assert!(stopped.to_string().contains("outcome unknown"), "{stopped}");
            assert_eq!(effects(&db), vec![false; 4]);
            assert_eq!(db.get("key3").unwrap(), Some(b"v".to_vec()));
        }
        ctl.clear();
        if power_cut {
            ctl.crash(&StdEnv).unwrap();
        }
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let seen = effects(&db);
        assert!(
            seen == vec![true; 4] || seen == vec![false; 4],
            "power_cut={power_cut}: part of the batch: {seen:?}"
        );
        for i in (0..20).filter(|&i| i != 7) {
            assert_eq!(db.get(format!("key{i}")).unwrap(), Some(b"v".to_vec()));
        }
        assert_eq!(db.get("later").unwrap(), None);
    }
}
