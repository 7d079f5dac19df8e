//! Only `put`, `load` and `dedup` create a missing database (`delete` and `delete-range` with
//! `--create`): every other command on a mistyped `--db` exits 3 naming the directory and
//! leaves nothing behind.

use crate::common::TestDb;
use predicates::prelude::*;

#[test]
fn commands_on_a_missing_database_create_nothing() {
    let t = TestDb::new();
    let copy = t.dir.path().join("copy");
    let copy = copy.to_str().unwrap();
    for args in [
        &["compact"][..],
        &["delete", "k"],
        &["delete-range", "a", "b"],
        &["stats"],
        &["verify"],
        &["scan"],
        &["checkpoint", copy],
        &["repair"],
    ] {
        t.kvctl(args).assert().code(3).stderr(
            predicate::str::contains("no database at")
                .and(predicate::str::contains(t.db.display().to_string())),
        );
        assert!(!t.db.exists(), "{args:?} created the database");
        assert_eq!(
            std::fs::read_dir(t.dir.path()).unwrap().count(),
            0,
            "{args:?} left something behind"
        );
    }
    // An existing directory without a database: the same, and it stays empty.
    std::fs::create_dir(&t.db).unwrap();
    t.kvctl(&["compact"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("no CURRENT"));
    assert_eq!(std::fs::read_dir(&t.db).unwrap().count(), 0);
}

#[test]
fn create_makes_delete_create_and_the_creators_still_do() {
    let t = TestDb::new();
    t.kvctl(&["delete", "--create", "k"]).assert().success();
    assert!(bloomkv::Db::exists(&t.db));

    for args in [&["put", "k", "v"][..], &["load"], &["dedup"]] {
        let t = TestDb::new();
        t.kvctl(args).write_stdin("a\tb\n").assert().success();
        assert!(bloomkv::Db::exists(&t.db), "{args:?} did not create it");
    }
    let t = TestDb::new();
    t.kvctl(&["delete-range", "--create", "a", "b"])
        .assert()
        .success();
    assert!(bloomkv::Db::exists(&t.db));
}
