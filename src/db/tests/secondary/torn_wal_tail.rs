//! A WAL record the writer is still appending is seen cut short: the secondary opens without
//! it and without an error, and a catch-up reads it once it is whole, from where the last
//! read stopped.

use std::io::Write;

use crate::db::batch::WriteBatch;
use crate::env::{Env, StdEnv};
use crate::util::filename::{self, FileType};
use crate::db::wal::LogWriter;
use crate::{Db, Options};

fn newest_log(dir: &std::path::Path) -> std::path::PathBuf {
    let n = StdEnv
        .list_dir(dir)
        .unwrap()
        .iter()
        .filter_map(|n| filename::parse_file_name(n))
        .filter(|(t, _)| *t == FileType::Log)
        .map(|(_, n)| n)
        .max()
        .unwrap();
    filename::log_path(dir, n)
}

#[test]
fn a_record_being_written_is_read_once_it_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("a", "1").unwrap();
    let seq = db.snapshot().sequence();
    drop(db);
    // What a writer appending the next batch has written so far: the record's first half.
    let log = newest_log(dir.path());
    let before = std::fs::metadata(&log).unwrap().len();
    let mut w = LogWriter::new(StdEnv.open_appendable(&log).unwrap());
    let mut batch = WriteBatch::new();
    batch.put("b", "2".repeat(5000));
    batch.put("c", "3");
    batch.set_sequence(seq + 1);
    w.add_record(batch.payload()).unwrap();
    w.sync().unwrap();
    drop(w);
    let whole = std::fs::read(&log).unwrap();
    let cut = before as usize + (whole.len() - before as usize) / 2;
    StdEnv.truncate(&log, cut as u64).unwrap();

    let reader = Db::open_secondary(dir.path(), Options::default()).unwrap();
    assert_eq!(reader.get("a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(reader.get("b").unwrap(), None);
    assert!(reader.recovery_report().dropped.is_empty());
    reader.try_catch_up().unwrap();
    assert_eq!(reader.get("c").unwrap(), None);

    // The writer finishes the record.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(&whole[cut..]).unwrap();
    drop(f);
    reader.try_catch_up().unwrap();
    assert_eq!(
        reader.get("b").unwrap(),
        Some("2".repeat(5000).into_bytes())
    );
    assert_eq!(reader.get("c").unwrap(), Some(b"3".to_vec()));
    assert_eq!(reader.get("a").unwrap(), Some(b"1".to_vec()));
}
