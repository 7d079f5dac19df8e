//! An open that fails after it switched CURRENT to its new MANIFEST (the directory sync after
//! the rename failed), while CURRENT cannot be read back: the new MANIFEST may be the one
//! CURRENT names, so the open keeps it, the WAL it names and the tables replay wrote. It
//! returns the I/O error; once the disk reads again, the next open finds every write.
//!
//! Before the fix in 1bb5c00, an unreadable CURRENT counted as "names another MANIFEST" (and,
//! if it had also been unreadable before the switch, as "unchanged"): the open removed the
//! new MANIFEST, its WAL and the replayed tables, leaving CURRENT naming a missing MANIFEST.

use bloomkv::env::fault::{Fault, FaultKind, FaultOp};
use bloomkv::{Db, Error, Options};

use crate::common::fault::fault_env;

fn key(i: u32) -> String {
    format!("key{i:05}")
}

#[test]
fn a_failed_open_keeps_what_an_unreadable_current_may_name() {
    let dir = tempfile::tempdir().unwrap();
    {
        // A big memtable: every write stays in the WAL.
        let db = Db::open(dir.path(), Options::default()).unwrap();
        for i in 0..3000u32 {
            db.put(key(i), [b'v'; 100]).unwrap();
        }
    }
    let (env, ctl) = fault_env();
    // A small memtable: replay writes level-0 tables before the new MANIFEST.
    let opts = Options {
        env,
        memtable_bytes: 64 << 10,
        ..Options::default()
    };
    // Directory syncs at open: the new MANIFEST's at its creation, again before the switch,
    // then the one after CURRENT's rename. CURRENT reads: the first gives the state to recover; every later
    // one fails (the check before the switch and the ones after the failure).
    ctl.add(Fault::nth(FaultOp::SyncDir, 3, FaultKind::Eio));
    ctl.add(
        Fault::nth(FaultOp::Read, 2, FaultKind::Eio)
            .on_file("CURRENT")
            .and_later(),
    );
    let err = Db::open(dir.path(), opts.clone()).unwrap_err();
    assert!(
        matches!(&err, Error::Io { path: Some(p), .. } if p == dir.path()),
        "the directory sync's error: {err}"
    );
    assert!(ctl.injected() >= 2, "the sync and a read of CURRENT failed");

    // What CURRENT names is there.
    let current = std::fs::read_to_string(dir.path().join("CURRENT")).unwrap();
    assert!(
        dir.path().join(current.trim_end()).exists(),
        "CURRENT names {current:?}, which is gone"
    );

    ctl.clear();
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..3000u32 {
        assert_eq!(
            db.get(key(i)).unwrap().as_deref(),
            Some(&[b'v'; 100][..]),
            "{}",
            key(i)
        );
    }
}
