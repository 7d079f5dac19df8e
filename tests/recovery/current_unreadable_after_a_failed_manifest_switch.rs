//! `Db::resume` after a failed MANIFEST append writes a fresh MANIFEST and switches CURRENT to
//! it. When the directory sync after that switch fails while CURRENT cannot be read back, the
//! fresh MANIFEST may be the one CURRENT names: it stays. Resume returns the I/O error and
//! writes stay stopped; the directory, as a process that died then would leave it, opens
//! with every acknowledged write; once the disk works again, resume succeeds in place.
//!
//! Before the fix in 1bb5c00, an unreadable CURRENT counted as "names another MANIFEST", and
//! the failed switch removed the MANIFEST that CURRENT named.

use bloomkv::env::fault::{Fault, FaultKind, FaultOp};
use bloomkv::{Db, Error, Options};

use crate::common::copy_dir;
use crate::common::fault::fault_env;

fn key(i: u32) -> String {
    format!("key{i:05}")
}

fn check(db: &Db, upto: u32) {
    for i in 0..upto {
        let want: &[u8] = if i < 1000 { b"first" } else { b"second" };
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(want), "{}", key(i));
    }
}

#[test]
fn a_failed_switch_keeps_the_manifest_an_unreadable_current_may_name() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = fault_env();
    let opts = Options {
        env,
        ..Options::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for i in 0..1000 {
        db.put(key(i), b"first").unwrap();
    }
    db.flush().unwrap();
    for i in 1000..2000 {
        db.put(key(i), b"second").unwrap();
    }
    // The flush's fsyncs: the retired WAL, the new table, then the MANIFEST append's.
    ctl.fail_nth(FaultOp::Sync, 3, FaultKind::NoSpace);
    let err = db.flush().unwrap_err();
    assert!(matches!(err, Error::WritesStopped(_)), "{err}");

    // Resume's fresh MANIFEST: its directory syncs (at its creation, before the switch)
    // pass, the one after CURRENT's rename fails, and CURRENT cannot be read to see which
    // MANIFEST it names.
    ctl.clear();
    ctl.add(Fault::nth(FaultOp::SyncDir, 3, FaultKind::Eio));
    ctl.add(
        Fault::nth(FaultOp::Read, 1, FaultKind::Eio)
            .on_file("CURRENT")
            .and_later(),
    );
    let err = db.resume().unwrap_err();
    assert!(
        matches!(&err, Error::Io { path: Some(p), .. } if p == dir.path()),
        "the directory sync's error: {err}"
    );
    assert!(ctl.injected() >= 2, "the sync and a read of CURRENT failed");
    assert!(matches!(db.put("x", "y"), Err(Error::WritesStopped(_))));

    // What CURRENT names is there, and a process dying now leaves a database holding every
    // acknowledged write.
    let current = std::fs::read_to_string(dir.path().join("CURRENT")).unwrap();
    assert!(
        dir.path().join(current.trim_end()).exists(),
        "CURRENT names {current:?}, which is gone"
    );
    let died = tempfile::tempdir().unwrap();
    copy_dir(dir.path(), died.path());
    check(&Db::open(died.path(), Options::default()).unwrap(), 2000);

    // The disk works again: resume succeeds without a reopen.
    ctl.clear();
    db.resume().unwrap();
    db.put(key(2000), b"second").unwrap();
    db.flush().unwrap();
    check(&db, 2001);
    drop(db);
    check(&Db::open(dir.path(), opts).unwrap(), 2001);
}
