//! `kvctl repair`: a database whose CURRENT is gone does not open, and the error says to run
//! `kvctl repair`; repair rebuilds it, reports (as text or JSON), and the data reads again.

use crate::common::TestDb;
use predicates::prelude::*;

#[test]
fn repair_rebuilds_a_database_that_lost_its_current_file() {
    let t = TestDb::new();
    let lines: String = (0..500).map(|i| format!("key{i:04}\tvalue{i}\n")).collect();
    t.kvctl(&["load"]).write_stdin(lines).assert().success();
    t.ok(&["compact"]);
    t.ok(&["put", "late", "in the WAL"]);
    std::fs::remove_file(t.db.join("CURRENT")).unwrap();

    // Writes open for writing: the engine refuses, and the message names the command.
    t.kvctl(&["put", "x", "y"]).assert().code(3).stderr(
        predicate::str::contains("kvctl repair")
            .and(predicate::str::contains("bloomkv::repair").not()),
    );

    let out = t
        .kvctl(&["repair", "--json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert!(v["entries_salvaged"].as_u64().unwrap() >= 501, "{v}");
    assert_eq!(v["db"], t.db.display().to_string());
    assert_eq!(t.ok(&["get", "key0123"]), "value123\n");
    assert_eq!(t.ok(&["get", "late"]), "in the WAL\n");

    // Text report on stderr, nothing on stdout.
    t.kvctl(&["repair"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::starts_with(format!(
            "repaired {}: ",
            t.db.display()
        )));
    t.kvctl(&["repair", "--quiet"])
        .assert()
        .success()
        .stderr("");
}
