//! A table is the table the MANIFEST names: a table file swapped with another, or replaced by
//! a copy of another, is `Corruption` naming the file, never answers from the wrong table.

use bloomkv::{Db, Error, Options};

use crate::common::{sst_paths, swap_files, two_versions_in_two_tables};

fn assert_refused(dir: &std::path::Path) {
    let db = Db::open(dir, Options::default()).unwrap();
    let err = db.get("a007").unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    assert!(err.to_string().contains("MANIFEST"), "{err}");
}

#[test]
fn swapped_tables_are_corruption() {
    let dir = two_versions_in_two_tables();
    let t = sst_paths(dir.path());
    swap_files(&t[0], &t[1]);
    assert_refused(dir.path());
}

#[test]
fn a_table_copied_over_another_is_corruption() {
    let dir = two_versions_in_two_tables();
    let t = sst_paths(dir.path());
    // The older table over the newer one: a lookup would answer "first" from it.
    std::fs::copy(&t[0], &t[1]).unwrap();
    assert_refused(dir.path());
}
