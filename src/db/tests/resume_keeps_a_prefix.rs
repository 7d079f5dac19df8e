//! `resume` after a background failure (here a flush that could not install its table) leaves
//! a WAL that took acknowledged writes after the last memtable switch and was never synced.
//! Writes then go to a fresh WAL: unless the old one is synced first, a power cut can lose
//! its tail while keeping the new WAL's records — a hole, not a prefix.

use crate::env::StdEnv;
use crate::env::fault::{FaultKind, FaultOp};
use crate::{Db, Error, Options};

fn key(i: u32) -> String {
    format!("key{i:06}")
}

#[test]
fn a_power_cut_after_resume_keeps_a_prefix_of_the_writes() {
    let dir = tempfile::tempdir().unwrap();
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        memtable_bytes: 64 << 10,
        ..Options::default()
    };
    let mut acked = 0u32;
    {
        let db = Db::open(dir.path(), opts).unwrap();
        // Without sync_writes a memtable switch syncs no directory, so the first directory
        // sync from here on is the background flush's, before its MANIFEST append.
        ctl.fail_nth(FaultOp::SyncDir, 1, FaultKind::Eio);
        loop {
            match db.put(key(acked), [b'v'; 100]) {
                Ok(()) => acked += 1,
                Err(Error::WritesStopped(_)) => break,
                Err(e) => panic!("unexpected error {e}"),
            }
            assert!(acked < 100_000, "the flush never failed");
        }
        ctl.clear();
        db.resume().unwrap();
        for i in acked..acked + 100 {
            db.put(key(i), [b'w'; 100]).unwrap();
        }
        db.sync_wal().unwrap();
    }
    ctl.crash(&StdEnv).unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    // Everything synced after the resume survived, so everything before it must too.
    for i in 0..acked + 100 {
        assert!(
            db.get(key(i)).unwrap().is_some(),
            "write {i} of {} lost: a hole before the writes synced after resume",
            acked + 100
        );
    }
}
