//! kvctl exit code 3: a missing database for read commands (not created), a database a
//! writer holds for write commands (reads work beside it), a path that is not a database.

use crate::common::{TestDb, doc_quote};
use predicates::prelude::*;

#[test]
fn read_commands_on_a_missing_db_fail_without_creating_it() {
    let t = TestDb::new();
    for args in [
        &["get", "k"][..],
        &["get", "k", "--explain"],
        &["scan"],
        &["stats"],
        &["stats", "--json"],
    ] {
        t.kvctl(args).assert().code(3).stdout("").stderr(
            predicate::str::contains("no database at")
                .and(predicate::str::contains(t.db.display().to_string())),
        );
        assert!(!t.db.exists(), "{args:?} created the database directory");
    }
}

#[test]
fn an_empty_directory_is_not_a_database_for_reads() {
    let t = TestDb::new();
    std::fs::create_dir(&t.db).unwrap();
    t.kvctl(&["get", "k"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no CURRENT"));
    assert_eq!(std::fs::read_dir(&t.db).unwrap().count(), 0);
}

#[test]
fn a_locked_database_is_exit_3_for_writes_naming_the_holder_and_reads_go_on() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    let held = bloomkv::Db::open(&t.db, bloomkv::Options::default()).unwrap();
    held.put("k", "from the writer").unwrap();
    let pid = format!("process {}", std::process::id());
    for args in [
        &["put", "k", "w"][..],
        &["delete", "k"],
        &["compact"],
        &["repair"],
    ] {
        t.kvctl(args).assert().code(3).stderr(
            predicate::str::contains("locked")
                .and(predicate::str::contains(pid.as_str()))
                .and(predicate::str::contains("secondary")),
        );
    }
    // The whole message is the one docs/CLI.md quotes, naming kvctl's read commands (an
    // operator's tools), not a library call.
    let quoted = doc_quote("CLI.md", "kvctl: database DIR is locked")
        .replace("DIR", &t.db.display().to_string())
        .replace("4242", &std::process::id().to_string());
    let out = t.kvctl(&["put", "k", "w"]).output().unwrap();
    assert_eq!(
        String::from_utf8(out.stderr).unwrap(),
        format!("{quoted}\n")
    );
    // Reads open a secondary: they see the writer's state, its WAL included.
    assert_eq!(t.ok(&["get", "k"]), "from the writer\n");
    assert_eq!(t.ok(&["scan"]), "k\tfrom the writer\n");
    drop(held);
    assert_eq!(t.ok(&["get", "k"]), "from the writer\n");
}

#[test]
fn a_file_where_the_directory_should_be_is_exit_3() {
    let t = TestDb::new();
    std::fs::write(&t.db, b"not a directory").unwrap();
    t.kvctl(&["put", "k", "v"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(t.db.display().to_string()));
    t.kvctl(&["get", "k"]).assert().code(3);
}

/// The library's own argument checks are usage errors too: exit 2 with its message.
#[test]
fn an_oversized_key_is_a_usage_error() {
    let t = TestDb::new();
    let key = "k".repeat(64 * 1024 + 1);
    t.kvctl(&["put", &key, "v"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("exceeds the limit"));
}
