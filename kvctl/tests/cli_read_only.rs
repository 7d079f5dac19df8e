//! Read commands open the database read-only: they run beside another read-only handle (and
//! each other) and change nothing, while a write command is refused with exit 3 and a
//! message saying read-only openers hold the lock.

mod common;

use common::TestDb;
use predicates::prelude::*;

fn dir_state(dir: &std::path::Path) -> Vec<(String, u64, std::time::SystemTime)> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let m = e.metadata().unwrap();
            (
                e.file_name().into_string().unwrap(),
                m.len(),
                m.modified().unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

#[test]
fn reads_run_beside_a_read_only_handle_and_writes_are_refused() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    t.ok(&["put", "k2", "v2"]);
    let before = dir_state(&t.db);
    let held = bloomkv::Db::open_read_only(&t.db, bloomkv::Options::default()).unwrap();

    assert_eq!(t.ok(&["get", "k"]), "v\n");
    assert_eq!(t.ok(&["scan"]), "k\tv\nk2\tv2\n");
    t.ok(&["stats"]);
    for args in [&["put", "k", "w"][..], &["delete", "k"], &["compact"]] {
        t.kvctl(args)
            .assert()
            .code(3)
            .stderr(predicate::str::contains("locked"))
            .stderr(predicate::str::contains("held by read-only openers"));
    }
    assert_eq!(held.get("k").unwrap(), Some(b"v".to_vec()));
    drop(held);
    assert_eq!(
        dir_state(&t.db),
        before,
        "read commands changed the directory"
    );

    // Several read commands at once, all beside each other's shared locks.
    let children: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(assert_cmd::cargo::cargo_bin("kvctl"))
                .args(["--db"])
                .arg(&t.db)
                .args(["get", "k2"])
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(out.stdout, b"v2\n");
    }
    t.ok(&["put", "k", "w"]);
    assert_eq!(t.ok(&["get", "k"]), "w\n");
}

/// A writer holding the database: read commands fail with exit 3 naming the writer.
#[test]
fn reads_are_refused_while_a_writer_holds_the_database() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    let held = bloomkv::Db::open(&t.db, bloomkv::Options::default()).unwrap();
    t.kvctl(&["get", "k"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("held by a writer"));
    drop(held);
}
