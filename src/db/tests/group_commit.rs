//! Group commit: concurrent writers under `sync_writes` share fsyncs (fewer fsyncs than
//! writes), every batch stays atomic and visible only whole, a failed group fails each of
//! its writers, and a power cut keeps every acknowledged write and no failed one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::env::StdEnv;
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options, WriteBatch};

const THREADS: u64 = 8;

/// What each simulated fsync takes.
const SYNC_DELAY: std::time::Duration = std::time::Duration::from_micros(500);

fn key(t: u64, i: u64, half: &str) -> String {
    format!("t{t}-{i:05}-{half}")
}

/// A batch of two puts that must be seen together.
fn pair(t: u64, i: u64) -> WriteBatch {
    let mut b = WriteBatch::new();
    b.put(key(t, i, "a"), i.to_string());
    b.put(key(t, i, "b"), i.to_string());
    b
}

fn options(env: Arc<dyn crate::env::Env>) -> Options {
    Options {
        env,
        sync_writes: true,
        memtable_bytes: 64 << 10,
        ..Options::default()
    }
}

#[test]
fn concurrent_writers_share_fsyncs_and_batches_stay_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    // An fsync as slow as a real disk's, so that writers meet at it.
    ctl.set_sync_delay(SYNC_DELAY);
    let db = Db::open(dir.path(), options(Arc::clone(&env))).unwrap();
    let per_thread = 300;
    let syncs_before = ctl.calls(FaultOp::Sync);
    let stop = Arc::new(AtomicBool::new(false));
    // A reader checks that no snapshot holds half a batch.
    let reader = {
        let (db, stop) = (db.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut checks = 0u64;
            while !stop.load(Ordering::SeqCst) {
                let snap = db.snapshot();
                for t in 0..THREADS {
                    for i in [0, per_thread / 2, per_thread - 1] {
                        let a = snap.get(key(t, i, "a")).unwrap();
                        let b = snap.get(key(t, i, "b")).unwrap();
                        assert_eq!(a, b, "half of batch {t}/{i} visible");
                        checks += 1;
                    }
                }
            }
            checks
        })
    };
    let writers: Vec<_> = (0..THREADS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                for i in 0..per_thread {
                    db.write(pair(t, i)).unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    assert!(reader.join().unwrap() > 0);
    let writes = THREADS * per_thread;
    let syncs = ctl.calls(FaultOp::Sync) - syncs_before;
    // One fsync per group (plus the memtable switches' and flushes'): with eight writers
    // waiting on each fsync, groups form. Without group commit there is one per write.
    assert!(
        syncs < writes * 3 / 4,
        "{syncs} fsyncs for {writes} concurrent synced writes"
    );
    drop(db);
    ctl.crash(&StdEnv).unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for t in 0..THREADS {
        for i in 0..per_thread {
            assert_eq!(
                db.get(key(t, i, "b")).unwrap(),
                Some(i.to_string().into_bytes()),
                "acknowledged synced write {t}/{i} lost"
            );
        }
    }
}

#[test]
fn a_failed_group_fails_its_writers_and_a_power_cut_keeps_only_acknowledged_writes() {
    let mut failures_seen = 0;
    // The most writers one failure failed with its own error: a failed group's members.
    let mut widest_failed_group = 0;
    for n in [1, 3, 10, 40] {
        for kind in [FaultKind::Eio, FaultKind::NoSpace, FaultKind::ShortWrite] {
            let op = if kind == FaultKind::ShortWrite {
                FaultOp::Write
            } else {
                FaultOp::Sync
            };
            let dir = tempfile::tempdir().unwrap();
            let (env, ctl) = super::fault_env();
            ctl.set_sync_delay(SYNC_DELAY);
            let db = Db::open(dir.path(), options(Arc::clone(&env))).unwrap();
            ctl.fail_nth(op, n, kind);
            let writers: Vec<_> = (0..THREADS)
                .map(|t| {
                    let db = db.clone();
                    std::thread::spawn(move || {
                        // (writes acknowledged, whether the failed one's outcome is unknown,
                        // whether it failed with the group's own error rather than because
                        // writes had stopped before it)
                        for i in 0..200 {
                            match db.write(pair(t, i)) {
                                Ok(()) => {}
                                Err(e) => {
                                    assert!(
                                        matches!(
                                            e,
                                            Error::Io { .. }
                                                | Error::WritesStopped(_)
                                                | Error::OutcomeUnknown(_)
                                        ),
                                        "{e}"
                                    );
                                    return (
                                        i,
                                        matches!(e, Error::OutcomeUnknown(_)),
                                        !matches!(e, Error::WritesStopped(_)),
                                    );
                                }
                            }
                        }
                        (200, false, false)
                    })
                })
                .collect();
            let acked: Vec<(u64, bool, bool)> =
                writers.into_iter().map(|w| w.join().unwrap()).collect();
            let context = format!("{op:?} #{n} {kind:?}");
            if ctl.injected() == 0 {
                continue;
            }
            failures_seen += 1;
            let in_group = acked.iter().filter(|a| a.2).count();
            widest_failed_group = widest_failed_group.max(in_group);
            assert!(
                acked.iter().all(|&(i, _, _)| i < 200),
                "{context}: a writer went on after the failure"
            );
            drop(db);
            ctl.crash(&StdEnv).unwrap();
            let db = Db::open(dir.path(), Options::default()).unwrap();
            for (t, &(n_acked, unknown, _)) in acked.iter().enumerate() {
                let t = t as u64;
                for i in 0..n_acked {
                    assert!(
                        db.get(key(t, i, "a")).unwrap().is_some(),
                        "{context}: acknowledged write {t}/{i} lost"
                    );
                }
                let a = db.get(key(t, n_acked, "a")).unwrap();
                let b = db.get(key(t, n_acked, "b")).unwrap();
                assert_eq!(a, b, "{context}: half of failed batch {t}/{n_acked}");
                assert!(
                    a.is_none() || unknown,
                    "{context}: failed write {t}/{n_acked} survived"
                );
            }
        }
    }
    assert!(failures_seen >= 8, "only {failures_seen} faults landed");
    assert!(
        widest_failed_group >= 2,
        "no failure failed a group of several writers"
    );
}
