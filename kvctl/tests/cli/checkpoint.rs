//! `kvctl checkpoint DIR`: a copy that `kvctl` reads like the original, unaffected by later
//! writes; an existing DIR is a usage error (exit 2); a database a writer has open is
//! checkpointed beside it (read as a secondary), its WAL's writes included.

use crate::common::{TestDb, kvctl};
use predicates::prelude::*;

#[test]
fn a_checkpoint_is_a_database_kvctl_reads() {
    let t = TestDb::new();
    t.ok(&["put", "a", "1"]);
    t.ok(&["compact"]);
    t.ok(&["put", "b", "2"]);
    let copy = t.dir.path().join("copy");
    t.kvctl(&["checkpoint", copy.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains("at sequence 2 written to"));
    t.ok(&["put", "a", "changed"]);
    t.ok(&["delete", "b"]);

    let scan = kvctl()
        .args(["--db", copy.to_str().unwrap(), "scan"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&scan.get_output().stdout),
        "a\t1\nb\t2\n"
    );
    assert_eq!(t.ok(&["scan"]), "a\tchanged\n");
}

#[test]
fn an_existing_directory_is_exit_2_and_a_running_writer_is_no_obstacle() {
    let t = TestDb::new();
    t.ok(&["put", "a", "1"]);
    let there = t.dir.path().join("there");
    std::fs::create_dir(&there).unwrap();
    t.kvctl(&["checkpoint", there.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));

    let writer = bloomkv::Db::open(&t.db, bloomkv::Options::default()).unwrap();
    writer.put("w", "in the WAL only").unwrap();
    writer.flush().unwrap();
    writer.put("x", "after the flush").unwrap();
    let copy = t.dir.path().join("copy");
    t.kvctl(&["checkpoint", copy.to_str().unwrap()])
        .assert()
        .success()
        .stderr(predicate::str::contains("written to"));
    writer.put("y", "after the checkpoint").unwrap();
    let scan = kvctl()
        .args(["--db", copy.to_str().unwrap(), "scan"])
        .assert()
        .success();
    assert_eq!(
        String::from_utf8_lossy(&scan.get_output().stdout),
        "a\t1\nw\tin the WAL only\nx\tafter the flush\n"
    );
    drop(writer);
}
