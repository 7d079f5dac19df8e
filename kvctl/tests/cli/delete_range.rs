//! kvctl delete-range: half-open bounds, usage errors, and `sst dump` of a table holding the
//! range tombstone.

use crate::common::{TestDb, kvctl};
use predicates::prelude::*;

#[test]
fn delete_range_removes_the_half_open_range_and_sst_dump_counts_the_tombstone() {
    let t = TestDb::new();
    for k in ["a", "b", "c", "d", "e"] {
        t.ok(&["put", k, "v"]);
    }
    t.kvctl(&["delete-range", "b", "d"])
        .assert()
        .code(0)
        .stdout("");
    assert_eq!(t.ok(&["scan"]), "a\tv\nd\tv\ne\tv\n");
    assert_eq!(t.ok(&["scan", "--reverse"]), "e\tv\nd\tv\na\tv\n");
    t.kvctl(&["get", "c"]).assert().code(1);
    // An empty range deletes nothing; an inverted one is a usage error.
    t.ok(&["delete-range", "e", "e"]);
    assert_eq!(t.ok(&["get", "e"]), "v\n");
    t.kvctl(&["delete-range", "z", "a"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("START"));
    // --hex bounds: 0x64 = "d", 0x65 = "e".
    t.ok(&["--hex", "delete-range", "64", "65"]);
    assert_eq!(t.ok(&["scan"]), "a\tv\ne\tv\n");

    // A table holding a tombstone, written through the library (the CLI has no flush).
    let dir = tempfile::tempdir().unwrap();
    {
        let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default()).unwrap();
        db.put("k1", "v").unwrap();
        db.delete_range("m", "q").unwrap();
        db.flush().unwrap();
    }
    let table = crate::common::tables_in(dir.path()).pop().unwrap();
    let out = kvctl()
        .args(["sst", "dump", table.to_str().unwrap(), "--entries"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for needle in [
        "format version 3",
        "1 range tombstones,",
        "range dels   1 range tombstones at @",
        "range del    [m, q) @ seq 2",
        "key range    k1 @ seq 1 put  ..  q @ seq 0 del",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}
