//! Tables of format version 1 stay readable: `tests/fixtures/v1-db` was written by the code
//! before block compression (see its README); the current code opens it, reads every key and
//! writes version-2 tables beside the old ones.

use std::collections::BTreeMap;
use std::path::Path;

use bloomkv::sstable::format::FORMAT_VERSION;
use bloomkv::{Db, Options};

fn value(i: u32, round: &str) -> Vec<u8> {
    format!("{round}-{i}-{}", "xyz".repeat((i % 20) as usize)).into_bytes()
}

/// What the fixture holds, per its recipe.
fn model() -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    for i in 0..3000u32 {
        m.insert(format!("key{i:05}").into_bytes(), value(i, "a"));
    }
    for i in (0..3000u32).filter(|i| i % 7 == 0) {
        m.insert(format!("key{i:05}").into_bytes(), value(i, "b"));
    }
    for i in (0..3000u32).filter(|i| i % 11 == 0) {
        m.remove(format!("key{i:05}").as_bytes());
    }
    for i in 3000..3050u32 {
        m.insert(format!("key{i:05}").into_bytes(), value(i, "c"));
    }
    m
}

fn copy_fixture(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1-db");
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name != "README.md" {
            std::fs::copy(entry.path(), to.join(name)).unwrap();
        }
    }
}

fn check_all(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for i in 0..3100u32 {
        let k = format!("key{i:05}").into_bytes();
        assert_eq!(db.get(&k).unwrap().as_ref(), model.get(&k), "key{i:05}");
    }
    let scanned: BTreeMap<Vec<u8>, Vec<u8>> = db.scan(..).map(|kv| kv.unwrap()).collect();
    assert_eq!(&scanned, model);
}

#[test]
fn version_1_database_opens_and_reads_every_key() {
    let dir = tempfile::tempdir().unwrap();
    copy_fixture(dir.path());
    let model = model();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check_all(&db, &model);
    // Rewriting it all makes version-2 tables from version-1 ones; the answers stay the same.
    db.put(b"key99999", b"new").unwrap();
    db.flush().unwrap();
    db.compact().unwrap();
    let mut model = model;
    model.insert(b"key99999".to_vec(), b"new".to_vec());
    check_all(&db, &model);
    drop(db);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    check_all(&db, &model);
}

#[test]
fn fixture_tables_really_are_version_1() {
    // This build writes a newer version than the fixture holds: the fixture tests upgrading.
    assert_ne!(FORMAT_VERSION, 1);
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/v1-db");
    let mut tables = 0;
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "sst") {
            let bytes = std::fs::read(&path).unwrap();
            let footer = &bytes[bytes.len() - 56..];
            assert_eq!(&footer[40..44], &1u32.to_le_bytes(), "{}", path.display());
            tables += 1;
        }
    }
    assert!(tables >= 3);
}
