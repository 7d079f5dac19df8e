//! `kvctl verify`: a clean database reports its counts on stderr (exit 0) and leaves the
//! directory untouched; a flipped byte in a table is exit 3 naming the file.

use crate::common::TestDb;
use predicates::prelude::*;

#[test]
fn verify_reports_counts_then_damage() {
    let t = TestDb::new();
    for i in 0..50 {
        t.ok(&["put", &format!("key{i:03}"), "value"]);
    }
    t.ok(&["compact"]);
    // The report is a summary: on stderr, stdout empty.
    t.kvctl(&["verify"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains(": 1 table, 50 entries,"));

    let table = t.tables().pop().unwrap();
    let mut bytes = std::fs::read(&table).unwrap();
    bytes[5] ^= 0x01;
    std::fs::write(&table, bytes).unwrap();
    t.kvctl(&["verify"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains("corruption in"))
        .stderr(predicate::str::contains(
            table.file_name().unwrap().to_str().unwrap(),
        ));
}
