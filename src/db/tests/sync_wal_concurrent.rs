//! `Db::sync_wal` while writers append: it fsyncs outside the writer lock (a writer holding
//! the lock does not keep it waiting), concurrent calls share fsyncs, and when its fsync
//! fails writes stop and a power cut keeps every write acknowledged before the last
//! successful call, and a prefix of the rest (no hole).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::env::StdEnv;
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

fn key(i: u64) -> String {
    format!("key{i:07}")
}

#[test]
fn sync_wal_does_not_wait_for_the_writer_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let db = Db::open(
        dir.path(),
        Options {
            env,
            ..Options::default()
        },
    )
    .unwrap();
    db.put("k", "v").unwrap();
    let syncs = ctl.calls(FaultOp::Sync);
    let (done, finished) = std::sync::mpsc::channel();
    {
        // A writer in the middle of a commit holds the writer lock.
        let _held = db.inner().writer.lock();
        let db = db.clone();
        std::thread::spawn(move || done.send(db.sync_wal()).unwrap());
        let synced = finished
            .recv_timeout(Duration::from_secs(30))
            .expect("sync_wal waited for the writer lock");
        synced.unwrap();
    }
    assert_eq!(ctl.calls(FaultOp::Sync), syncs + 1, "one fsync");
    // Nothing new acknowledged: nothing to fsync.
    db.sync_wal().unwrap();
    assert_eq!(ctl.calls(FaultOp::Sync), syncs + 1);
}

/// What one case left behind.
struct Case {
    /// Writes acknowledged (keys 0..acked).
    acked: u64,
    /// Every write below this was acknowledged before a `sync_wal` that succeeded began.
    durable: u64,
    /// Whether the first failed write's outcome is unknown (it may have survived).
    unknown: bool,
    sync_failed: bool,
}

fn run(n: u64, kind: FaultKind) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        memtable_bytes: 256 << 10,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    ctl.fail_nth(FaultOp::Sync, n, kind);
    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, acked, stop) = (db.clone(), Arc::clone(&acked), Arc::clone(&stop));
        std::thread::spawn(move || {
            for i in 0..20_000 {
                match db.put(key(i), [b'v'; 100]) {
                    Ok(()) => acked.store(i + 1, Ordering::SeqCst),
                    Err(e) => {
                        stop.store(true, Ordering::SeqCst);
                        return matches!(e, Error::OutcomeUnknown(_));
                    }
                }
                if stop.load(Ordering::SeqCst) {
                    break;
                }
            }
            stop.store(true, Ordering::SeqCst);
            false
        })
    };
    let mut durable = 0;
    let mut sync_failed = false;
    while !stop.load(Ordering::SeqCst) {
        let before = acked.load(Ordering::SeqCst);
        match db.sync_wal() {
            Ok(()) => durable = before,
            Err(e) => {
                assert!(
                    matches!(
                        e,
                        Error::Io { .. } | Error::WritesStopped(_) | Error::OutcomeUnknown(_)
                    ),
                    "{e}"
                );
                sync_failed = true;
                // Writes stop: the writer sees it at its next put.
                while !stop.load(Ordering::SeqCst) {
                    std::thread::yield_now();
                }
            }
        }
    }
    let unknown = writer.join().unwrap();
    let acked = acked.load(Ordering::SeqCst);
    if sync_failed || ctl.injected() > 0 {
        let later = db.put("later", "x").unwrap_err();
        assert!(matches!(later, Error::WritesStopped(_)), "{later}");
    }
    drop(db);
    ctl.crash(&StdEnv).unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    // A prefix: every key below the first missing one is there, none after it.
    let mut present = 0;
    while db.get(key(present)).unwrap().is_some() {
        present += 1;
    }
    for i in present..acked + 1 {
        assert!(
            db.get(key(i)).unwrap().is_none(),
            "fault at sync {n}: write {i} survived but {present} was lost: a hole"
        );
    }
    assert!(
        present >= durable,
        "fault at sync {n}: {present} writes survived, {durable} were synced by sync_wal"
    );
    let limit = if unknown { acked + 1 } else { acked };
    assert!(
        present <= limit,
        "a failed write survived: {present} > {limit}"
    );
    Case {
        acked,
        durable,
        unknown,
        sync_failed,
    }
}

#[test]
fn a_failed_sync_wal_stops_writes_and_a_power_cut_keeps_a_prefix() {
    let mut failed_in_sync_wal = 0;
    for n in [1, 2, 3, 5, 8, 13, 21] {
        for kind in [FaultKind::Eio, FaultKind::NoSpace] {
            let c = run(n, kind);
            failed_in_sync_wal += u64::from(c.sync_failed);
            eprintln!(
                "sync #{n} {kind:?}: acked {}, durable {}, unknown {}, sync_wal failed {}",
                c.acked, c.durable, c.unknown, c.sync_failed
            );
        }
    }
    assert!(
        failed_in_sync_wal >= 7,
        "only {failed_in_sync_wal} faults hit sync_wal"
    );
}
