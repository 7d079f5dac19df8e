//! Read commands open the database as a secondary: they take no lock, so they run beside a
//! read-only handle, a writer and each other, change nothing, and never keep a writer out
//! (a paused `kvctl scan | less` included); a write command beside read-only handles is
//! refused with exit 3 and a message saying read-only openers hold the lock.

use crate::common::TestDb;
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

/// A writer holding the database: read commands read its state beside it (WAL included).
#[test]
fn reads_work_while_a_writer_holds_the_database() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    let held = bloomkv::Db::open(&t.db, bloomkv::Options::default()).unwrap();
    held.put("k2", "unflushed").unwrap();
    assert_eq!(t.ok(&["get", "k2"]), "unflushed\n");
    assert_eq!(t.ok(&["scan"]), "k\tv\nk2\tunflushed\n");
    t.ok(&["stats"]);
    t.ok(&["verify"]);
    held.flush().unwrap();
    held.compact().unwrap();
    assert_eq!(t.ok(&["get", "k"]), "v\n");
    drop(held);
}

/// A read command that is stalled (its reader stopped reading, as `kvctl scan | less` at a
/// prompt) keeps no writer out.
#[test]
fn a_paused_scan_does_not_block_a_writer() {
    let t = TestDb::new();
    let lines: String = (0..20_000)
        .map(|i| format!("key{i:06}\t{}\n", "v".repeat(40)))
        .collect();
    t.kvctl(&["load"]).write_stdin(lines).assert().success();
    // The scan fills the pipe (far more than it holds) and waits for a reader.
    let mut scan = std::process::Command::new(assert_cmd::cargo::cargo_bin("kvctl"))
        .args(["--db"])
        .arg(&t.db)
        .arg("scan")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(scan.try_wait().unwrap().is_none(), "the scan did not stall");
    let writer = bloomkv::Db::open(&t.db, bloomkv::Options::default()).unwrap();
    writer.put("key000000", "changed").unwrap();
    writer.compact().unwrap();
    drop(writer);
    let out = scan.wait_with_output().unwrap();
    assert!(out.status.success());
    // The scan read the state it started with, whole, though the writer replaced its tables.
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 20_000);
    assert!(text.starts_with(&format!("key000000\t{}\n", "v".repeat(40))));
}
