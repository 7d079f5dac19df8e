//! Helpers shared by the WAL tests: an in-memory log file and record layout bookkeeping.
#![allow(dead_code)]

use std::path::PathBuf;

use bloomkv::wal::{BLOCK_SIZE, HEADER_SIZE, LogReader, LogWriter, RecoveryMode};
use bloomkv::{Error, Result};

pub use bloomkv::env::MemWritableFile as MemFile;

/// Where one logical record sits in the log: its first header and the end of its last payload.
#[derive(Debug, Clone, Copy)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

/// Writes `records` to a fresh in-memory log; returns the image and each record's span.
pub fn write_log(records: &[Vec<u8>]) -> (Vec<u8>, Vec<Span>) {
    let file = MemFile::default();
    let mut w = LogWriter::new(Box::new(file.clone()));
    let mut spans = Vec::new();
    for r in records {
        let before = w.len() as usize;
        w.add_record(r).unwrap();
        spans.push(Span {
            start: first_header_at(before),
            end: w.len() as usize,
        });
    }
    w.sync().unwrap();
    let data = file.contents();
    (data, spans)
}

/// Where the writer puts the next header when the log is `len` bytes long.
pub fn first_header_at(len: usize) -> usize {
    let left = BLOCK_SIZE - len % BLOCK_SIZE;
    if left < HEADER_SIZE { len + left } else { len }
}

/// A recognisable payload: `len` bytes derived from `seed`.
pub fn payload(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

pub fn log_path() -> PathBuf {
    PathBuf::from("/test/000007.log")
}

/// Reads every record; returns them, the final result (Ok at a clean end), and the reader.
pub fn read_log(data: &[u8], mode: RecoveryMode) -> (Vec<Vec<u8>>, Result<()>, LogReader) {
    let mut r = LogReader::new(data.to_vec(), log_path(), mode);
    let mut out = Vec::new();
    loop {
        match r.next_record() {
            Ok(Some(rec)) => out.push(rec),
            Ok(None) => return (out, Ok(()), r),
            Err(e) => return (out, Err(e), r),
        }
    }
}

/// The offset of a Corruption error, panicking on any other outcome.
pub fn corruption_offset(res: &Result<()>) -> u64 {
    match res {
        Err(Error::Corruption { file, offset, .. }) => {
            assert_eq!(file, &log_path());
            *offset
        }
        other => panic!("expected a corruption error, got {other:?}"),
    }
}

/// True when `got` is `want` with some records left out (order kept).
pub fn is_subsequence(got: &[Vec<u8>], want: &[Vec<u8>]) -> bool {
    let mut it = want.iter();
    got.iter().all(|g| it.any(|w| w == g))
}
