//! `Db::checkpoint` returns a sequence number up to which the live database is durable: with
//! `sync_writes` off, a power cut right after the checkpoint keeps every write up to it
//! (the companion of tests/checkpoint.rs, which needs no fault env).

use crate::env::StdEnv;
use crate::{Db, Options};

fn key(i: u32) -> String {
    format!("key{i:05}")
}

#[test]
fn a_power_cut_after_a_checkpoint_keeps_every_write_up_to_its_sequence() {
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let (env, ctl) = super::fault_env();
    let opts = Options {
        env,
        sync_writes: false,
        // Several memtable switches: some writes are in tables, the rest in WALs.
        memtable_bytes: 32 << 10,
        ..Options::default()
    };
    let before = 3000u32;
    let seq;
    {
        let db = Db::open(&live, opts).unwrap();
        for i in 0..before {
            db.put(key(i), format!("v{i}")).unwrap();
        }
        seq = db.checkpoint(dir.path().join("copy")).unwrap();
        assert_eq!(seq, u64::from(before), "one sequence number per put");
        // A few later writes, never synced (too few to fill the memtable, whose switch would
        // sync the WAL): a power cut may take them.
        for i in before..before + 20 {
            db.put(key(i), format!("v{i}")).unwrap();
        }
    }
    ctl.crash(&StdEnv).unwrap();

    let db = Db::open(&live, Options::default()).unwrap();
    let recovered = db.snapshot().sequence();
    assert!(recovered >= seq, "{recovered} < {seq}");
    for i in 0..before {
        assert_eq!(
            db.get(key(i)).unwrap(),
            Some(format!("v{i}").into_bytes()),
            "write {i} (before the checkpoint) was lost"
        );
    }
    // What survives of the later writes is a prefix of them.
    let kept = (before..before + 20)
        .take_while(|&i| db.get(key(i)).unwrap().is_some())
        .count() as u32;
    for i in before + kept..before + 20 {
        assert_eq!(db.get(key(i)).unwrap(), None, "a hole before write {i}");
    }
}
