//! A log cut at any byte — what a crash mid-write leaves — yields exactly its complete
//! records, no error, and a `valid_len` at the end of the last of them.

use crate::db::wal::{BLOCK_SIZE, RecoveryMode};
use crate::test_util::wal::*;

/// Checks every cut in `from..=data.len()`, in both recovery modes.
fn check_every_cut(records: &[Vec<u8>], from: usize) {
    let (data, spans) = write_log(records);
    for cut in from..=data.len() {
        let complete = spans.iter().take_while(|s| s.end <= cut).count();
        let valid_len = if complete == 0 {
            0
        } else {
            spans[complete - 1].end
        };
        // Bytes past the next header position are a torn tail; bytes before it are padding.
        let next_header = first_header_at(valid_len);
        for mode in [RecoveryMode::Strict, RecoveryMode::BestEffort] {
            let (got, res, r) = read_log(&data[..cut], mode);
            assert!(res.is_ok(), "cut {cut} {mode:?}: {res:?}");
            assert_eq!(got.len(), complete, "cut {cut} {mode:?}");
            assert!(got.iter().zip(records).all(|(g, w)| g == w), "cut {cut}");
            assert_eq!(r.valid_len(), valid_len as u64, "cut {cut} {mode:?}");
            assert!(r.dropped().is_empty(), "cut {cut} {mode:?}");
            match r.tail_dropped() {
                Some((at, _)) => {
                    assert!(cut > next_header, "cut {cut}: spurious tail report");
                    assert_eq!(at, next_header as u64, "cut {cut}: tail offset");
                }
                None => assert!(cut <= next_header, "cut {cut}: torn tail not reported"),
            }
        }
    }
}

#[test]
fn every_cut_of_a_small_log() {
    let records: Vec<Vec<u8>> = (0..20u64).map(|i| payload(i, i as usize * 13)).collect();
    check_every_cut(&records, 0);
}

#[test]
fn every_cut_of_the_last_records_including_first_middle_last() {
    // The big record starts 600 bytes before the end of block 0, so it is a FIRST there, a
    // MIDDLE filling block 1 and a LAST in block 2; two small records (the last empty) follow.
    let mut records = vec![payload(1, BLOCK_SIZE - 7 - 600)];
    let before = write_log(&records).0.len();
    records.push(payload(100, 593 + (BLOCK_SIZE - 7) + 500));
    records.push(payload(101, 40));
    records.push(Vec::new());
    check_every_cut(&records, before);
}

#[test]
#[ignore = "heavier variant: ~100 KiB of cuts over a record crossing two boundaries mid-log"]
fn every_cut_of_the_last_records_including_one_spanning_blocks() {
    let mut records: Vec<Vec<u8>> = (0..30u64).map(|i| payload(i, 500 + i as usize)).collect();
    let before: usize = write_log(&records).0.len();
    records.push(payload(100, 2 * BLOCK_SIZE + 1234));
    records.push(payload(101, 40));
    records.push(Vec::new());
    check_every_cut(&records, before);
}

#[test]
fn every_cut_around_a_padded_block_trailer() {
    // The first record leaves a 3-byte trailer; the second starts the next block.
    let records = vec![payload(1, BLOCK_SIZE - 7 - 3), payload(2, 64)];
    check_every_cut(&records, BLOCK_SIZE - 40);
}
