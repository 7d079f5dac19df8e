//! Fault injection: file-system calls fail (EIO, ENOSPC, short writes) at the Nth call, in
//! the foreground WAL write or in the background flush/compaction. After the failure the
//! database must refuse writes with a clear error, keep serving reads, and a reopen on a
//! healthy file system must recover every acknowledged write. The "power cut" variants also
//! throw away everything not synced (`FaultController::crash`) before reopening.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use crate::env::fault::{FaultKind, FaultOp};
use crate::env::{Env, StdEnv};
use crate::{Db, Error, Options, WriteBatch};

fn options(env: Arc<dyn Env>, sync_writes: bool) -> Options {
    Options {
        env,
        sync_writes,
        memtable_bytes: 12 * 1024,
        target_file_bytes: 8 * 1024,
        max_bytes_for_level_base: 32 * 1024,
        level0_compaction_trigger: 2,
        block_bytes: 1024,
        ..Default::default()
    }
}

/// What each key must hold after recovery; keys touched by the write that failed may hold
/// either their old or their new state.
#[derive(Default)]
struct Model {
    acked: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    uncertain: BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>>,
}

impl Model {
    fn check(&self, db: &Db, context: &str) {
        for (k, want) in &self.acked {
            let got = db
                .get(k)
                .unwrap_or_else(|e| panic!("{context}: get failed: {e}"));
            match self.uncertain.get(k) {
                Some(alts) => assert!(
                    &got == want || alts.contains(&got),
                    "{context}: key {:?}",
                    String::from_utf8_lossy(k)
                ),
                None => assert_eq!(
                    &got,
                    want,
                    "{context}: key {:?}",
                    String::from_utf8_lossy(k)
                ),
            }
        }
    }
}

/// One write of the workload: puts, deletes and two-key batches over a small key space, so
/// flushes and compactions overwrite and drop versions.
fn workload_write(i: u64) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    let key = |n: u64| format!("key{:05}", n % 400).into_bytes();
    let value = |n: u64| format!("v{n}-{}", "x".repeat((n % 90) as usize)).into_bytes();
    match i % 10 {
        3 => vec![(key(i * 7), None)],
        6 => vec![(key(i), Some(value(i))), (key(i + 200), Some(value(i)))],
        _ => vec![(key(i * 13), Some(value(i)))],
    }
}

fn apply(db: &Db, ops: &[(Vec<u8>, Option<Vec<u8>>)]) -> crate::Result<()> {
    let mut batch = WriteBatch::new();
    for (k, v) in ops {
        match v {
            Some(v) => batch.put(k, v),
            None => batch.delete(k),
        }
    }
    db.write(batch)
}

/// How one case went.
#[derive(Debug, Default, Clone, Copy)]
struct Outcome {
    fired: bool,
    background: bool,
    acked: u64,
}

/// Opens a database on a fault-injecting env, arms `op`'s `n`th call to fail, writes until
/// a write fails, checks writes stay stopped and reads keep working, then reopens on the
/// real file system (after a simulated power cut when `power_cut`) and checks every
/// acknowledged write.
fn run_case(op: FaultOp, n: u64, kind: FaultKind, power_cut: bool) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let context = format!("{op:?} #{n} {kind:?} power_cut={power_cut}");
    let (env, ctl) = super::fault_env();
    let mut model = Model::default();
    let mut outcome = Outcome::default();
    {
        let db = Db::open(dir.path(), options(env, power_cut)).unwrap();
        // A first stretch of writes with no fault, so there are tables to read back.
        for i in 0..150 {
            let w = workload_write(i);
            apply(&db, &w).unwrap();
            model.acked.extend(w);
        }
        ctl.fail_nth(op, n, kind);
        for i in 150..4000 {
            let w = workload_write(i);
            match apply(&db, &w) {
                Ok(()) => {
                    model.acked.extend(w);
                    outcome.acked += 1;
                }
                Err(e) => {
                    outcome.fired = true;
                    outcome.background = matches!(e, Error::WritesStopped(_));
                    assert!(
                        matches!(e, Error::WritesStopped(_) | Error::Io { .. }),
                        "{context}: unexpected error {e}"
                    );
                    for (k, v) in w {
                        let old = model.acked.get(&k).cloned().flatten();
                        model.uncertain.entry(k.clone()).or_default().push(v);
                        model.acked.insert(k, old);
                    }
                    break;
                }
            }
        }
        if !outcome.fired {
            eprintln!("{context}: not reached ({} calls)", ctl.calls(op));
            assert_eq!(
                ctl.injected(),
                0,
                "{context}: fault injected but never reported"
            );
            return outcome;
        }
        // No silent continuation: every later write is refused, and says why.
        let later = db.put("after-failure", "x").unwrap_err();
        assert!(
            matches!(later, Error::WritesStopped(_)),
            "{context}: later write: {later}"
        );
        assert!(later.to_string().contains("writes stopped"), "{later}");
        assert!(db.flush().is_err(), "{context}: flush after failure");
        // Reads keep working.
        ctl.clear();
        model.check(&db, &format!("{context}, before reopen"));
        let scanned = db.scan(..).count();
        assert!(scanned > 0);
    }
    if power_cut {
        ctl.crash(&StdEnv).unwrap();
    }
    reopen_and_check(dir.path(), &model, &format!("{context}, after reopen"));
    outcome
}

fn reopen_and_check(dir: &Path, model: &Model, context: &str) {
    let db = Db::open(dir, options(StdEnv::shared(), false))
        .unwrap_or_else(|e| panic!("{context}: reopen failed: {e}"));
    model.check(&db, context);
    // And the recovered database accepts writes again.
    db.put("after-reopen", "ok").unwrap();
    assert_eq!(db.get("after-reopen").unwrap(), Some(b"ok".to_vec()));
}

struct Tally {
    cases: u64,
    fired: u64,
    background: u64,
}

fn sweep(ops: &[(FaultOp, std::ops::RangeInclusive<u64>, u64)], power_cut: bool) -> Tally {
    let kinds = [FaultKind::Eio, FaultKind::NoSpace, FaultKind::ShortWrite];
    let mut t = Tally {
        cases: 0,
        fired: 0,
        background: 0,
    };
    for (op, range, step) in ops {
        for (i, n) in range.clone().step_by(*step as usize).enumerate() {
            let kind = kinds[i % kinds.len()];
            let o = run_case(*op, n, kind, power_cut);
            t.cases += 1;
            t.fired += o.fired as u64;
            t.background += o.background as u64;
        }
    }
    eprintln!(
        "fault sweep (power_cut={power_cut}): {} cases, {} faults hit, {} in background jobs",
        t.cases, t.fired, t.background
    );
    t
}

#[test]
fn write_and_sync_failures_stop_writes_and_lose_nothing_acknowledged() {
    let t = sweep(
        &[
            (FaultOp::Write, 1..=120, 7),
            (FaultOp::Sync, 1..=40, 3),
            (FaultOp::Create, 1..=6, 1),
            (FaultOp::SyncDir, 1..=6, 1),
        ],
        false,
    );
    assert_eq!(t.fired, t.cases, "every planned fault was reached");
    assert!(t.background > 0, "some faults hit flush/compaction");
}

#[test]
fn power_cut_after_failure_keeps_every_synced_write() {
    let t = sweep(
        &[
            (FaultOp::Write, 1..=120, 11),
            (FaultOp::Sync, 2..=80, 9),
            (FaultOp::Create, 1..=5, 1),
            (FaultOp::SyncDir, 1..=5, 1),
        ],
        true,
    );
    assert_eq!(t.fired, t.cases);
    assert!(t.background > 0);
}

/// A power cut with no failure at all: every synced write survives, including those whose
/// WAL or table was created after the last directory sync the engine made.
#[test]
fn power_cut_without_failure_keeps_every_synced_write() {
    for stop in [200u64, 700, 1500] {
        let dir = tempfile::tempdir().unwrap();
        let (env, ctl) = super::fault_env();
        let mut model = Model::default();
        {
            let db = Db::open(dir.path(), options(env, true)).unwrap();
            for i in 0..stop {
                let w = workload_write(i);
                apply(&db, &w).unwrap();
                model.acked.extend(w);
            }
        }
        ctl.crash(&StdEnv).unwrap();
        reopen_and_check(dir.path(), &model, &format!("clean power cut after {stop}"));
    }
}

/// Failures while `open` recovers (writing tables from the WAL, the new manifest, the CURRENT
/// swap) fail the open cleanly; the next open on a healthy file system has everything.
#[test]
fn failures_during_open_leave_the_old_state_recoverable() {
    let cases = [
        (FaultOp::Create, 1),
        (FaultOp::Create, 2),
        (FaultOp::Create, 3),
        (FaultOp::Write, 1),
        (FaultOp::Write, 4),
        (FaultOp::Sync, 1),
        (FaultOp::Sync, 2),
        (FaultOp::Sync, 3),
        (FaultOp::SyncDir, 1),
        (FaultOp::SyncDir, 2),
        (FaultOp::Rename, 1),
    ];
    let mut failed_opens = 0;
    for (op, n) in cases {
        for power_cut in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let mut model = Model::default();
            {
                // Closed cleanly before the faulty open, so all of it counts as durable.
                let db = Db::open(dir.path(), options(StdEnv::shared(), false)).unwrap();
                for i in 0..120 {
                    let w = workload_write(i);
                    apply(&db, &w).unwrap();
                    model.acked.extend(w);
                }
            }
            let (env, ctl) = super::fault_env();
            ctl.fail_nth(op, n, FaultKind::Eio);
            match Db::open(dir.path(), options(env, true)) {
                Ok(db) => {
                    ctl.clear();
                    model.check(&db, &format!("open survived {op:?} #{n}"));
                }
                Err(e) => {
                    assert!(matches!(e, Error::Io { .. }), "{op:?} #{n}: {e}");
                    failed_opens += 1;
                }
            }
            if power_cut {
                ctl.crash(&StdEnv).unwrap();
            }
            reopen_and_check(
                dir.path(),
                &model,
                &format!("after open failed at {op:?} #{n}, power_cut={power_cut}"),
            );
        }
    }
    assert!(
        failed_opens >= 10,
        "only {failed_opens} opens hit their fault"
    );
}

/// A disk that stays full: every write fails from some point on. The database stops, and
/// the next open (disk freed) recovers.
#[test]
fn disk_full_for_good_stops_writes_and_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let mut model = Model::default();
    {
        let db = Db::open(dir.path(), options(env, false)).unwrap();
        ctl.fail_from_nth(FaultOp::Write, 300, FaultKind::NoSpace);
        let mut failures = 0;
        for i in 0..3000 {
            let w = workload_write(i);
            match apply(&db, &w) {
                Ok(()) => {
                    assert_eq!(failures, 0, "write acknowledged after a failure");
                    model.acked.extend(w);
                }
                Err(_) => {
                    if failures == 0 {
                        for (k, v) in w {
                            let old = model.acked.get(&k).cloned().flatten();
                            model.uncertain.entry(k.clone()).or_default().push(v);
                            model.acked.insert(k, old);
                        }
                    }
                    failures += 1;
                }
            }
        }
        assert!(failures > 0 && ctl.injected() > 0);
        model.check(&db, "disk full, before reopen");
    }
    reopen_and_check(dir.path(), &model, "disk full, after reopen");
}

/// Faults inside an explicit flush and an explicit full compaction (both run on the
/// background thread): the call fails, writes stop, reads work, and a reopen has everything.
#[test]
fn flush_and_compaction_failures_stop_writes_and_recover() {
    let mut hit = 0;
    for (op, n) in [
        (FaultOp::Create, 1),
        (FaultOp::Write, 1),
        (FaultOp::Write, 9),
        (FaultOp::Sync, 1),
        (FaultOp::Sync, 2),
        (FaultOp::SyncDir, 1),
    ] {
        for compaction in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let (env, ctl) = super::fault_env();
            let mut model = Model::default();
            let context = format!(
                "{op:?} #{n} in a {}",
                if compaction { "compaction" } else { "flush" }
            );
            {
                let opts = Options {
                    level0_compaction_trigger: 100,
                    level0_slowdown_writes: 100,
                    level0_stop_writes: 200,
                    ..options(env, false)
                };
                let db = Db::open(dir.path(), opts).unwrap();
                for i in 0..600 {
                    let w = workload_write(i);
                    apply(&db, &w).unwrap();
                    model.acked.extend(w);
                }
                if compaction {
                    db.flush().unwrap();
                    db.wait_for_compactions().unwrap();
                }
                ctl.fail_nth(op, n, FaultKind::Eio);
                let result = if compaction { db.compact() } else { db.flush() };
                if ctl.injected() == 0 {
                    assert!(result.is_ok(), "{context}: {result:?}");
                    continue;
                }
                hit += 1;
                let e = result.unwrap_err();
                assert!(
                    matches!(e, Error::WritesStopped(_) | Error::Io { .. }),
                    "{context}: {e}"
                );
                let later = db.put("later", "x").unwrap_err();
                assert!(
                    matches!(later, Error::WritesStopped(_)),
                    "{context}: {later}"
                );
                ctl.clear();
                model.check(&db, &format!("{context}, before reopen"));
            }
            reopen_and_check(dir.path(), &model, &format!("{context}, after reopen"));
        }
    }
    assert!(
        hit >= 10,
        "only {hit} faults landed in a flush or compaction"
    );
}
