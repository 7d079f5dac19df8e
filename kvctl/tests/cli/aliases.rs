//! Renamed commands keep their old names: `kvctl sst-dump FILE` is `kvctl sst dump FILE`.

use crate::common::TestDb;

#[test]
fn sst_dump_answers_to_its_old_name() {
    let t = TestDb::new();
    t.ok(&["put", "k", "v"]);
    t.ok(&["compact"]);
    let table = t.tables().pop().unwrap();
    let table = table.to_str().unwrap();
    let new = t.ok(&["sst", "dump", table, "--entries"]);
    let old = t.ok(&["sst-dump", table, "--entries"]);
    assert_eq!(new, old);
    assert!(new.contains("k\t"), "{new}");
    // The old name is not advertised.
    let help = t.ok(&["--help"]);
    assert!(!help.contains("sst-dump"), "{help}");
}
