//! Logs are read from their files a block at a time: a reader holds about two blocks and the
//! record it assembles however long the log (also while it looks past damage for a good
//! record), and a record longer than the limit is an error naming its offset, not an
//! allocation that grows with the file.

use std::path::Path;

use crate::env::{Env, StdEnv};
use crate::db::wal::format::BLOCK_SIZE;
use crate::db::wal::reader::MAX_RECORD_BYTES;
use crate::db::wal::{LogReader, LogWriter, RecoveryMode};
use crate::{Error, MAX_BATCH_BYTES};

fn write_log(path: &Path, records: impl Iterator<Item = Vec<u8>>) {
    let mut w = LogWriter::new(StdEnv.create_writable(path).unwrap());
    for r in records {
        w.add_record(&r).unwrap();
    }
    w.sync().unwrap();
}

fn read_all(r: &mut LogReader) -> crate::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    while let Some(rec) = r.next_record()? {
        out.push(rec);
    }
    Ok(out)
}

fn record(i: u32) -> Vec<u8> {
    let mut r = i.to_le_bytes().to_vec();
    r.resize(100 + (i % 300) as usize, (i % 251) as u8);
    r
}

#[test]
fn a_long_log_is_read_with_two_blocks_of_memory() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000001.log");
    write_log(&path, (0..60_000).map(record));
    let size = StdEnv.file_size(&path).unwrap();
    assert!(size > 300 * BLOCK_SIZE as u64);
    let mut r = LogReader::open(&StdEnv, &path, RecoveryMode::Strict).unwrap();
    let records = read_all(&mut r).unwrap();
    assert_eq!(records.len(), 60_000);
    assert!(records.iter().enumerate().all(|(i, rec)| *rec == record(i as u32)));
    // The whole-file reader this replaces held `size` bytes.
    assert!(r.peak_buffered() <= 2 * BLOCK_SIZE, "{} bytes held", r.peak_buffered());
}

#[test]
fn looking_past_damage_through_a_long_stretch_holds_two_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000002.log");
    write_log(&path, (0..2000).map(record));
    // A long zero-filled stretch (preallocated space) after the records: a torn tail.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.resize(bytes.len() + 200 * BLOCK_SIZE, 0);
    std::fs::write(&path, &bytes).unwrap();
    let mut r = LogReader::open(&StdEnv, &path, RecoveryMode::Strict).unwrap();
    assert_eq!(read_all(&mut r).unwrap().len(), 2000);
    assert!(r.tail_dropped().is_some());
    assert!(r.peak_buffered() <= 2 * BLOCK_SIZE + 512, "{} bytes held", r.peak_buffered());

    // The same stretch followed by one good record is middle damage, found by scanning on.
    let mut tail = Vec::new();
    crate::db::wal::format::encode_physical(&mut tail, crate::db::wal::RecordType::Full, b"after");
    bytes.extend_from_slice(&tail);
    std::fs::write(&path, &bytes).unwrap();
    let mut r = LogReader::open(&StdEnv, &path, RecoveryMode::Strict).unwrap();
    match read_all(&mut r) {
        Err(Error::Corruption { file, .. }) => assert_eq!(file, path),
        other => panic!("expected middle damage, got {other:?}"),
    }
    let mut r = LogReader::open(&StdEnv, &path, RecoveryMode::BestEffort).unwrap();
    let records = read_all(&mut r).unwrap();
    assert_eq!(records.len(), 2001);
    assert_eq!(records.last().unwrap(), b"after");
    assert!(r.peak_buffered() <= 3 * BLOCK_SIZE, "{} bytes held", r.peak_buffered());
}

#[test]
fn a_record_past_the_limit_is_an_error_naming_its_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("000003.log");
    let big = vec![7u8; 5 * BLOCK_SIZE];
    write_log(
        &path,
        [b"before".to_vec(), big.clone(), b"after".to_vec()].into_iter(),
    );
    let limit = 3 * BLOCK_SIZE;
    let mut r = LogReader::open(&StdEnv, &path, RecoveryMode::Strict)
        .unwrap()
        .with_max_record(limit);
    assert_eq!(r.next_record().unwrap().as_deref(), Some(&b"before"[..]));
    match r.next_record() {
        Err(Error::Corruption { file, offset, why }) => {
            assert_eq!(file, path);
            assert_eq!(offset, 7 + 6, "the big record starts after the first");
            assert!(why.contains("grows past"), "{why}");
        }
        other => panic!("expected Corruption, got {other:?}"),
    }
    assert!(r.peak_buffered() <= limit + 2 * BLOCK_SIZE);
    // Best effort drops the record and reads on.
    let mut r = LogReader::open(&StdEnv, &path, RecoveryMode::BestEffort)
        .unwrap()
        .with_max_record(limit);
    assert_eq!(read_all(&mut r).unwrap(), vec![b"before".to_vec(), b"after".to_vec()]);
    assert_eq!(r.dropped().len(), 1);
    // Under the real limit the same log reads whole.
    let mut r = LogReader::open(&StdEnv, &path, RecoveryMode::Strict).unwrap();
    assert_eq!(read_all(&mut r).unwrap()[1], big);
}

#[test]
fn the_batch_limit_is_the_record_limit() {
    assert_eq!(MAX_BATCH_BYTES, MAX_RECORD_BYTES);
}
