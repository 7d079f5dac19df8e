//! A failed background WAL sync (the syncer that keeps a growing WAL mostly durable) is not
//! ignored: the kernel may have dropped the pages it could not write, and a later fsync of
//! the file could succeed over the loss. Writes stop soon after it, `resume` starts a fresh
//! WAL, and a power cut leaves a prefix of the writes.

use std::time::{Duration, Instant};

use crate::env::StdEnv;
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

fn key(i: u64) -> String {
    format!("key{i:07}")
}

#[test]
fn a_failed_background_sync_stops_writes_until_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    // Nothing but the background syncer fsyncs while the WAL grows in a 64 MiB memtable.
    ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
    let value = [b'v'; 1000];
    let mut acked = 0;
    let deadline = Instant::now() + Duration::from_secs(60);
    let stopped = loop {
        match db.put(key(acked), value) {
            Ok(()) => acked += 1,
            Err(e) => break e,
        }
        if ctl.injected() > 0 {
            // The sync failed; the writer learns it at its next append.
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(Instant::now() < deadline, "writes never stopped");
    };
    assert_eq!(ctl.injected(), 1);
    assert!(matches!(stopped, Error::WritesStopped(_)), "{stopped}");
    assert!(
        acked > 1000,
        "the failing sync came after a megabyte: {acked}"
    );
    assert!(matches!(db.put("later", "x"), Err(Error::WritesStopped(_))));
    assert_eq!(db.get(key(0)).unwrap().as_deref(), Some(&value[..]));

    ctl.clear();
    db.resume().unwrap();
    db.put("after-resume", "x").unwrap();
    db.sync_wal().unwrap();
    drop(db);
    ctl.crash(&StdEnv).unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    // A prefix: what survived of the writes before the failure is a run from the first.
    let mut present = 0;
    while present < acked && db.get(key(present)).unwrap().is_some() {
        present += 1;
    }
    for i in present..acked {
        assert!(
            db.get(key(i)).unwrap().is_none(),
            "write {i} after a lost {present}: a hole"
        );
    }
    // The write synced after resume survived, so everything before it did too.
    assert_eq!(db.get("after-resume").unwrap().as_deref(), Some(&b"x"[..]));
    assert_eq!(
        present, acked,
        "synced after resume, yet {present} of {acked} survived"
    );
}
