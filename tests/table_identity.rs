//! A table is the table the MANIFEST names: a table file swapped with another, or replaced by
//! a copy of another, is `Corruption` naming the file, never answers from the wrong table.

use bloomkv::{Db, Error, Options};

fn tables(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "sst"))
        .collect();
    v.sort();
    v
}

fn two_tables() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for i in 0..100u32 {
        db.put(format!("a{i:03}"), b"first").unwrap();
    }
    db.flush().unwrap();
    for i in 0..100u32 {
        db.put(format!("a{i:03}"), b"second").unwrap();
    }
    db.flush().unwrap();
    drop(db);
    assert_eq!(tables(dir.path()).len(), 2);
    dir
}

fn assert_refused(dir: &std::path::Path) {
    let db = Db::open(dir, Options::default()).unwrap();
    let err = db.get("a007").unwrap_err();
    assert!(matches!(err, Error::Corruption { .. }), "{err}");
    assert!(err.to_string().contains("MANIFEST"), "{err}");
}

#[test]
fn swapped_tables_are_corruption() {
    let dir = two_tables();
    let t = tables(dir.path());
    let tmp = dir.path().join("swap");
    std::fs::rename(&t[0], &tmp).unwrap();
    std::fs::rename(&t[1], &t[0]).unwrap();
    std::fs::rename(&tmp, &t[1]).unwrap();
    assert_refused(dir.path());
}

#[test]
fn a_table_copied_over_another_is_corruption() {
    let dir = two_tables();
    let t = tables(dir.path());
    // The older table over the newer one: a lookup would answer "first" from it.
    std::fs::copy(&t[0], &t[1]).unwrap();
    assert_refused(dir.path());
}
