//! Damage followed by good records is an error in strict mode and a skipped region in
//! best-effort mode; damage at the tail is a torn write, never an error.

use crate::db::wal::{BLOCK_SIZE, HEADER_SIZE, RecordType, RecoveryMode};
use crate::test_util::wal::*;

fn small_records(n: u64) -> Vec<Vec<u8>> {
    (0..n).map(|i| payload(i, 100 + i as usize)).collect()
}

fn without(records: &[Vec<u8>], skip: &[usize]) -> Vec<Vec<u8>> {
    (0..records.len())
        .filter(|i| !skip.contains(i))
        .map(|i| records[i].clone())
        .collect()
}

#[test]
fn bit_flip_in_a_middle_payload() {
    let records = small_records(40);
    let (mut data, spans) = write_log(&records);
    let victim = 17;
    data[spans[victim].start + HEADER_SIZE + 30] ^= 0x08;

    let (got, res, _) = read_log(&data, RecoveryMode::Strict);
    assert_eq!(corruption_offset(&res), spans[victim].start as u64);
    assert_eq!(got, records[..victim]);

    let (got, res, r) = read_log(&data, RecoveryMode::BestEffort);
    res.unwrap();
    assert_eq!(
        got,
        without(&records, &[victim]),
        "only the damaged record is lost"
    );
    let s = spans[victim];
    assert_eq!(
        r.dropped().iter().map(|d| (d.0, d.1)).collect::<Vec<_>>(),
        vec![(s.start as u64, (s.end - s.start) as u64)]
    );
    assert_eq!(r.valid_len(), data.len() as u64);
    assert_eq!(r.tail_dropped(), None);
}

#[test]
fn bit_flip_in_every_header_byte_of_a_middle_record() {
    let records = small_records(40);
    let (clean, spans) = write_log(&records);
    let victim = 5;
    for byte in 0..HEADER_SIZE {
        for bit in 0..8 {
            let mut data = clean.clone();
            data[spans[victim].start + byte] ^= 1 << bit;
            let (got, res, _) = read_log(&data, RecoveryMode::Strict);
            assert_eq!(
                corruption_offset(&res),
                spans[victim].start as u64,
                "byte {byte} bit {bit}"
            );
            assert_eq!(got, records[..victim]);
            // A damaged length can cost the rest of the block, never a wrong record.
            let (got, res, r) = read_log(&data, RecoveryMode::BestEffort);
            res.unwrap();
            assert!(is_subsequence(&got, &records), "byte {byte} bit {bit}");
            assert_eq!(got[..victim], records[..victim]);
            assert!(!got.contains(&records[victim]));
            // A length pointing past the end of the log looks like a torn write to a
            // best-effort reader, which then never resumes inside the claimed payload.
            let first_loss = r
                .dropped()
                .first()
                .map(|d| d.0)
                .or(r.tail_dropped().map(|t| t.0));
            assert_eq!(first_loss, Some(spans[victim].start as u64));
        }
    }
}

#[test]
fn damage_inside_a_multi_block_record() {
    let mut records = small_records(3);
    records.push(payload(99, 3 * BLOCK_SIZE));
    records.extend(small_records(3));
    let (mut data, spans) = write_log(&records);
    // Damage the fragment that starts the second block (a MIDDLE fragment).
    data[BLOCK_SIZE + HEADER_SIZE + 10] ^= 0x40;

    let (got, res, _) = read_log(&data, RecoveryMode::Strict);
    assert_eq!(corruption_offset(&res), BLOCK_SIZE as u64);
    assert_eq!(got, records[..3]);

    let (got, res, r) = read_log(&data, RecoveryMode::BestEffort);
    res.unwrap();
    assert_eq!(got, without(&records, &[3]));
    // The abandoned record from its start, the damaged fragment, then its orphaned rest.
    let d = r.dropped();
    assert_eq!(d[0].0, spans[3].start as u64);
    assert_eq!(d[1].0, BLOCK_SIZE as u64);
    let covered: u64 = d.iter().map(|x| x.1).sum();
    assert_eq!(covered, (spans[3].end - spans[3].start) as u64);
}

#[test]
fn zero_and_garbage_tails_are_torn_writes() {
    let records = small_records(10);
    let (clean, _) = write_log(&records);
    let tails: Vec<Vec<u8>> = vec![
        vec![0; 3],
        vec![0; 100],
        vec![0; 2 * BLOCK_SIZE + 17],
        payload(7, 5),
        payload(8, 1000),
        payload(9, 3 * BLOCK_SIZE),
    ];
    for tail in tails {
        let mut data = clean.clone();
        data.extend_from_slice(&tail);
        for mode in [RecoveryMode::Strict, RecoveryMode::BestEffort] {
            let (got, res, r) = read_log(&data, mode);
            res.unwrap();
            assert_eq!(got, records, "tail of {} bytes", tail.len());
            assert_eq!(r.valid_len(), clean.len() as u64);
            assert_eq!(r.tail_dropped().map(|t| t.0), Some(clean.len() as u64));
        }
    }
}

#[test]
fn bit_flip_in_the_last_record_is_a_torn_tail() {
    let records = small_records(10);
    let (mut data, spans) = write_log(&records);
    data[spans[9].start + HEADER_SIZE + 3] ^= 1;
    let (got, res, r) = read_log(&data, RecoveryMode::Strict);
    res.unwrap();
    assert_eq!(got, records[..9]);
    assert_eq!(r.valid_len(), spans[8].end as u64);
    assert_eq!(r.tail_dropped().map(|t| t.0), Some(spans[9].start as u64));
}

/// A hand-made physical record.
fn physical(kind: RecordType, payload: &[u8]) -> Vec<u8> {
    let mut crc = crc32fast::Hasher::new();
    crc.update(&[kind as u8]);
    crc.update(payload);
    let mut out = crc.finalize().to_le_bytes().to_vec();
    out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    out.push(kind as u8);
    out.extend_from_slice(payload);
    out
}

#[test]
fn first_without_last_at_the_tail_is_dropped() {
    let records = small_records(4);
    let (mut data, _) = write_log(&records);
    let clean_len = data.len();
    data.extend(physical(RecordType::First, b"half"));
    data.extend(physical(RecordType::Middle, b"more"));
    let (got, res, r) = read_log(&data, RecoveryMode::Strict);
    res.unwrap();
    assert_eq!(got, records);
    assert_eq!(r.valid_len(), clean_len as u64);
    assert_eq!(r.tail_dropped().map(|t| t.0), Some(clean_len as u64));
}

#[test]
fn orphan_and_interrupted_fragments_in_the_middle() {
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (physical(RecordType::Last, b"orphan"), "orphan LAST"),
        (physical(RecordType::Middle, b"orphan"), "orphan MIDDLE"),
        (
            physical(RecordType::First, b"never ends"),
            "FIRST then FULL",
        ),
    ];
    for (bad, what) in cases {
        let (mut data, _) = write_log(&small_records(2));
        let at = data.len() as u64;
        data.extend(&bad);
        data.extend(physical(RecordType::Full, b"after"));

        let (got, res, _) = read_log(&data, RecoveryMode::Strict);
        assert_eq!(corruption_offset(&res), at, "{what}");
        assert_eq!(got.len(), 2, "{what}");

        let (got, res, r) = read_log(&data, RecoveryMode::BestEffort);
        res.unwrap();
        assert_eq!(got.len(), 3, "{what}");
        assert_eq!(got[2], b"after");
        assert_eq!(r.dropped().len(), 1, "{what}");
        assert_eq!((r.dropped()[0].0, r.dropped()[0].1), (at, bad.len() as u64));
    }
}

#[test]
fn strict_error_is_sticky() {
    let records = small_records(10);
    let (mut data, spans) = write_log(&records);
    data[spans[3].start] ^= 0xff;
    let mut r = crate::db::wal::LogReader::new(data, log_path(), RecoveryMode::Strict);
    for _ in 0..3 {
        r.next_record().unwrap();
    }
    assert!(r.next_record().is_err());
    assert!(r.next_record().is_err());
}

#[test]
fn zeroed_middle_block_loses_only_that_block() {
    let records: Vec<Vec<u8>> = (0..200u64).map(|i| payload(i, 700)).collect();
    let (mut data, spans) = write_log(&records);
    data[BLOCK_SIZE..2 * BLOCK_SIZE].fill(0);
    let (_, res, _) = read_log(&data, RecoveryMode::Strict);
    assert!(res.is_err());
    let (got, res, _) = read_log(&data, RecoveryMode::BestEffort);
    res.unwrap();
    let lost: Vec<usize> = (0..records.len())
        .filter(|&i| spans[i].end > BLOCK_SIZE && spans[i].start < 2 * BLOCK_SIZE)
        .collect();
    assert_eq!(got, without(&records, &lost));
}

#[test]
fn damaged_length_loses_only_its_record_when_later_records_chain_to_the_block_end() {
    // Two blocks of small records; break the length of one in the first block so it claims
    // to run past the block end. The reader finds the next good record by scanning.
    let records: Vec<Vec<u8>> = (0..120u64).map(|i| payload(i, 300 + i as usize)).collect();
    let (mut data, spans) = write_log(&records);
    assert!(data.len() > BLOCK_SIZE + 1000);
    let victim = 20;
    data[spans[victim].start + 5] ^= 0x80; // length += 32768
    let (got, res, _) = read_log(&data, RecoveryMode::Strict);
    assert_eq!(corruption_offset(&res), spans[victim].start as u64);
    assert_eq!(got.len(), victim);
    let (got, res, r) = read_log(&data, RecoveryMode::BestEffort);
    res.unwrap();
    assert_eq!(got, without(&records, &[victim]));
    let s = spans[victim];
    assert_eq!(
        (r.dropped()[0].0, r.dropped()[0].1),
        (s.start as u64, (s.end - s.start) as u64)
    );
}
