//! Records of every awkward size come back exactly, through memory and through real files.

use crate::env::{Env, StdEnv, WritableFile};
use crate::db::wal::{BLOCK_SIZE, HEADER_SIZE, LogReader, LogWriter, RecoveryMode};
use crate::{Error, Result};
use crate::test_util::wal::*;

const ROOM: usize = BLOCK_SIZE - HEADER_SIZE;

fn awkward_sizes() -> Vec<usize> {
    vec![
        0,
        1,
        100,
        ROOM - 1,
        ROOM,
        ROOM + 1,
        BLOCK_SIZE - 1,
        BLOCK_SIZE,
        BLOCK_SIZE + 1,
        2 * ROOM,
        2 * ROOM + 1,
        0,
        100 * 1024,
        1 << 20,
        3,
        0,
    ]
}

#[test]
fn every_size_round_trips_in_memory() {
    let records: Vec<Vec<u8>> = awkward_sizes()
        .into_iter()
        .enumerate()
        .map(|(i, n)| payload(i as u64, n))
        .collect();
    let (data, spans) = write_log(&records);
    let (got, res, r) = read_log(&data, RecoveryMode::Strict);
    res.unwrap();
    assert_eq!(got, records);
    assert_eq!(r.valid_len(), data.len() as u64);
    assert_eq!(r.valid_len(), spans.last().unwrap().end as u64);
    assert_eq!(r.tail_dropped(), None);
    assert!(r.dropped().is_empty());
    // Every block boundary starts a header: no physical record crosses one.
    assert!(spans.iter().all(|s| s.start < s.end));
}

#[test]
fn records_ending_near_a_block_end_pad_the_trailer_with_zeros() {
    // For each trailer size 0..=7, put a record that ends that many bytes before the block end.
    for trailer in 0..=HEADER_SIZE {
        let first = payload(1, BLOCK_SIZE - HEADER_SIZE - trailer);
        let records = vec![first, b"next".to_vec()];
        let (data, spans) = write_log(&records);
        let end0 = spans[0].end;
        assert_eq!(end0, BLOCK_SIZE - trailer);
        if trailer < HEADER_SIZE {
            assert_eq!(spans[1].start, BLOCK_SIZE, "trailer {trailer}");
            assert!(data[end0..BLOCK_SIZE].iter().all(|&b| b == 0));
        } else {
            assert_eq!(
                spans[1].start, end0,
                "a 7-byte trailer still holds a header"
            );
        }
        let (got, res, _) = read_log(&data, RecoveryMode::Strict);
        res.unwrap();
        assert_eq!(got, records);
    }
}

#[test]
fn empty_record_is_a_bare_full_header() {
    let (data, _) = write_log(&[Vec::new()]);
    let crc = crc32fast::hash(&[1]).to_le_bytes();
    assert_eq!(data, [crc[0], crc[1], crc[2], crc[3], 0, 0, 1]);
}

#[test]
fn empty_log_has_no_records() {
    let (got, res, r) = read_log(&[], RecoveryMode::Strict);
    res.unwrap();
    assert!(got.is_empty());
    assert_eq!(r.valid_len(), 0);
    assert_eq!(r.tail_dropped(), None);
}

#[test]
fn real_file_round_trip_and_append_after_reopen() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("000001.log");
    let env = StdEnv;
    let mut want = Vec::new();
    let mut w = LogWriter::new(env.create_writable(&path)?);
    for i in 0..50u64 {
        let rec = payload(i, (i as usize * 977) % 9000);
        w.add_record(&rec)?;
        want.push(rec);
    }
    w.flush()?;
    w.sync()?;
    assert_eq!(w.len(), env.file_size(&path)?);
    drop(w);

    // Reopen for append: the writer must pick up the block position from the file length.
    let mut w = LogWriter::new(env.open_appendable(&path)?);
    for i in 50..80u64 {
        let rec = payload(i, (i as usize * 7919) % 40_000);
        w.add_record(&rec)?;
        want.push(rec);
    }
    w.sync()?;
    drop(w);

    let data = env.read_all(&path)?;
    let mut r = LogReader::new(data, path.clone(), RecoveryMode::Strict);
    let mut got = Vec::new();
    while let Some(rec) = r.next_record()? {
        got.push(rec);
    }
    assert_eq!(got, want);
    assert_eq!(r.valid_len(), env.file_size(&path)?);
    Ok(())
}

/// Fails every append after the first `ok` ones.
struct FailingFile {
    ok: usize,
    len: u64,
}

impl WritableFile for FailingFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        if self.ok == 0 {
            return Err(Error::Io {
                path: None,
                source: std::io::Error::other("disk full"),
            });
        }
        self.ok -= 1;
        self.len += data.len() as u64;
        Ok(())
    }
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    fn sync(&mut self) -> Result<()> {
        Ok(())
    }
    fn len(&self) -> u64 {
        self.len
    }
}

#[test]
fn writer_refuses_work_after_a_failed_append() {
    let mut w = LogWriter::new(Box::new(FailingFile { ok: 1, len: 0 }));
    w.add_record(b"fine").unwrap();
    assert!(matches!(w.add_record(b"fails"), Err(Error::Io { .. })));
    assert!(matches!(w.add_record(b"x"), Err(Error::WritesStopped(_))));
    assert!(matches!(w.sync(), Err(Error::WritesStopped(_))));
}
