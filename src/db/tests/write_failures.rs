//! A write that returned an error leaves no trace, then or after a reopen; writes stop after
//! it (reads go on) until `Db::resume` starts a fresh WAL once the cause is gone.

use std::sync::Arc;

use crate::env::StdEnv;
use crate::env::fault::{FaultController, FaultKind, FaultOp};
use crate::{Db, Error, Options};

fn faulty(sync_writes: bool) -> (Options, Arc<FaultController>) {
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        sync_writes,
        ..Options::default()
    };
    (opts, ctl)
}

fn key(i: u32) -> String {
    format!("key{i:05}")
}

/// The fsync of a write fails after its bytes reached the OS: the record is cut back out of
/// the log, so the failed write does not come back at reopen.
#[test]
fn a_write_whose_sync_failed_is_not_replayed() {
    let dir = tempfile::tempdir().unwrap();
    let (opts, ctl) = faulty(true);
    {
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..50 {
            db.put(key(i), b"v").unwrap();
        }
        ctl.fail_nth(FaultOp::Sync, 1, FaultKind::Eio);
        let err = db.put("failed", b"x").unwrap_err();
        assert!(
            !matches!(err, Error::OutcomeUnknown(_)),
            "the cut worked: {err}"
        );
        assert_eq!(db.get("failed").unwrap(), None);
        // Writes now fail fast with the cause; reads go on.
        let stopped = db.put(key(99), b"v").unwrap_err();
        assert!(matches!(stopped, Error::WritesStopped(_)), "{stopped}");
        assert_eq!(db.get(key(7)).unwrap(), Some(b"v".to_vec()));
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(
        db.get("failed").unwrap(),
        None,
        "the failed write came back"
    );
    for i in 0..50 {
        assert_eq!(db.get(key(i)).unwrap(), Some(b"v".to_vec()), "{i}");
    }
}

/// A full disk: the write fails half-written; once space is back, `resume` lets writes go
/// on without a reopen, and only acknowledged writes exist afterwards.
#[test]
fn resume_after_a_full_disk_writes_again_and_keeps_only_acknowledged_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (opts, ctl) = faulty(false);
    {
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..100 {
            db.put(key(i), b"before").unwrap();
        }
        ctl.fail_from_nth(FaultOp::Write, 1, FaultKind::ShortWrite);
        assert!(db.put("failed", vec![7u8; 3000]).is_err());
        // Still full: resume fails and writes stay stopped.
        ctl.fail_from_nth(FaultOp::Create, 1, FaultKind::NoSpace);
        assert!(db.resume().is_err());
        assert!(matches!(
            db.put(key(100), b"v").unwrap_err(),
            Error::WritesStopped(_)
        ));
        // Space is back.
        ctl.clear();
        db.resume().unwrap();
        for i in 100..200 {
            db.put(key(i), b"after").unwrap();
        }
        assert_eq!(db.get("failed").unwrap(), None);
        db.flush().unwrap();
        for i in 200..250 {
            db.put(key(i), b"after").unwrap();
        }
    }
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("failed").unwrap(), None);
    for i in 0..250 {
        let want: &[u8] = if i < 100 { b"before" } else { b"after" };
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(want), "{i}");
    }
    assert!(
        db.recovery_report().dropped.is_empty(),
        "{:?}",
        db.recovery_report()
    );
}

/// Without `sync_writes`, a power cut may lose the last writes but never leaves a hole: across
/// several memtable switches (each retiring a WAL), what survives is a prefix of the writes,
/// and it holds at least everything `sync_wal` covered.
#[test]
fn a_power_cut_keeps_a_prefix_across_memtable_switches() {
    for round in 0..3u32 {
        let dir = tempfile::tempdir().unwrap();
        let (mut opts, ctl) = faulty(false);
        opts.memtable_bytes = 4 << 10;
        let synced;
        {
            let db = Db::open(dir.path(), opts).unwrap();
            let n = 3000 + round * 500;
            let mut last_synced = 0;
            for i in 0..n {
                db.put(key(i), vec![b'v'; 40]).unwrap();
                if i % 997 == 0 {
                    db.sync_wal().unwrap();
                    last_synced = i;
                }
            }
            synced = last_synced;
        }
        // The crash rewinds the files underneath the fault env.
        ctl.crash(&StdEnv).unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let present: Vec<bool> = (0..3000 + round * 500)
            .map(|i| db.get(key(i)).unwrap().is_some())
            .collect();
        let kept = present.iter().take_while(|p| **p).count();
        assert!(
            present[kept..].iter().all(|p| !p),
            "round {round}: a hole after {kept} writes"
        );
        assert!(
            kept as u32 > synced,
            "round {round}: lost synced writes ({kept} <= {synced})"
        );
    }
}
