//! `--prefix-delim` / `--prefix-len` build prefix filters, and `scan --prefix P --explain`
//! shows the tables they let the scan skip; the scan's output is the same with or without.

use crate::common::TestDb;
use predicates::prelude::*;

#[test]
fn scan_prefix_explain_shows_tables_skipped_by_prefix_filters() {
    let t = TestDb::new();
    let input = t.dir.path().join("in.tsv");
    let mut lines = String::new();
    for tenant in ["a", "c", "e"] {
        for i in 0..50 {
            lines.push_str(&format!("{tenant}/{i:03}\tv\n"));
        }
    }
    std::fs::write(&input, lines).unwrap();
    t.ok(&["--prefix-delim", "/", "load", input.to_str().unwrap()]);
    t.ok(&["--prefix-delim", "/", "compact"]);

    // "b/" lies inside the table's key range but no key has it.
    t.kvctl(&["--prefix-delim", "/", "scan", "--prefix", "b/", "--explain"])
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("absent: skipped"))
        .stderr(predicate::str::contains("1 skipped by their prefix filter"));
    let with = t.ok(&["--prefix-delim", "/", "scan", "--prefix", "c/"]);
    assert_eq!(with.lines().count(), 50);
    assert_eq!(t.ok(&["scan", "--prefix", "c/"]), with);
    // Without the extractor (or with another) the table is read, never skipped.
    t.kvctl(&["scan", "--prefix", "b/", "--explain"])
        .assert()
        .success()
        .stderr(predicate::str::contains("none: read"));
    t.kvctl(&["--prefix-len", "2", "scan", "--prefix", "b/", "--explain"])
        .assert()
        .success()
        .stderr(predicate::str::contains("0 skipped"));
    t.kvctl(&["--prefix-delim", "//", "scan"]).assert().code(2);
    t.kvctl(&["scan", "--explain"]).assert().code(2);
}
