//! `Db::verify` reads every table whole: a clean database passes with its counts; a flipped
//! byte in a data block, a damaged filter block, or a table file swapped for another is a
//! `Corruption` naming the file, even while the damaged blocks are cached.

use std::path::{Path, PathBuf};

use bloomkv::{Db, Error, Options};

use crate::common;

fn options() -> Options {
    Options {
        memtable_bytes: 64 << 10,
        target_file_bytes: 32 << 10,
        ..common::small_options()
    }
}

/// A database of a few tables, every key read once (so blocks are cached).
fn build(dir: &Path) -> Db {
    let db = Db::open(dir, options()).unwrap();
    for i in 0..3000u32 {
        db.put(format!("key{i:05}"), [b'v'; 60]).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    for i in 0..3000u32 {
        assert!(db.get(format!("key{i:05}")).unwrap().is_some());
    }
    db
}

fn table(dir: &Path, db: &Db, i: usize) -> PathBuf {
    dir.join(bloomkv::sstable::table_file_name(db.live_files()[i]))
}

fn flip(path: &Path, offset: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[offset as usize] ^= 0x40;
    std::fs::write(path, bytes).unwrap();
}

fn assert_names(err: Error, path: &Path) {
    match err {
        Error::Corruption { ref file, .. } => assert_eq!(file, path, "{err}"),
        other => panic!("expected Corruption naming {}, got {other}", path.display()),
    }
}

#[test]
fn a_clean_database_verifies_with_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path());
    let report = db.verify().unwrap();
    assert_eq!(report.tables, db.live_files().len() as u64);
    assert!(report.tables >= 2);
    assert_eq!(report.entries, 3000);
    assert_eq!(
        report.bytes,
        db.stats().levels.iter().map(|l| l.bytes).sum::<u64>()
    );
}

#[test]
fn a_flipped_byte_in_a_data_block_is_found_though_the_block_is_cached() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path());
    let path = table(dir.path(), &db, 1);
    flip(&path, 20);
    // Reads answer from the block cache, unaware.
    assert!(db.get("key00000").unwrap().is_some());
    assert_names(db.verify().unwrap_err(), &path);
}

#[test]
fn a_damaged_filter_block_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path());
    let number = db.live_files()[0];
    let path = table(dir.path(), &db, 0);
    let stats = db.stats();
    let t = stats
        .tables
        .iter()
        .find(|t| t.file_number == number)
        .unwrap();
    assert!(t.filter_bytes > 0);
    // The filter block sits after the data blocks: find it as the bytes that change the
    // filter and nothing else, by flipping inside the filter's span from the table's end.
    let size = std::fs::metadata(&path).unwrap().len();
    let mut found = false;
    for back in (64..size.min(4096)).step_by(16) {
        let original = std::fs::read(&path).unwrap();
        flip(&path, size - back);
        if let Err(e) = db.verify()
            && e.to_string().contains("filter block")
        {
            assert_names(e, &path);
            found = true;
            break;
        }
        std::fs::write(&path, original).unwrap();
    }
    assert!(
        found,
        "no flipped byte near the end of the table hit its filter block"
    );
}

#[test]
fn a_table_swapped_for_another_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = build(dir.path());
    let (a, b) = (table(dir.path(), &db, 0), table(dir.path(), &db, 1));
    std::fs::copy(&b, &a).unwrap();
    assert_names(db.verify().unwrap_err(), &a);
}
