//! VersionEdit encoding: exact round trips, typed errors for bad bytes, never a panic.

use crate::Error;
use crate::db::manifest::{FileMeta, VersionEdit};
use proptest::prelude::*;

fn file_meta() -> impl Strategy<Value = FileMeta> {
    (
        (any::<u64>(), any::<u64>()),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u8>(), 0..40),
        (any::<u64>(), any::<u64>()),
        (0.0f64..100.0, any::<u64>(), 0.0f64..=1.0),
    )
        .prop_map(
            |((number, size), smallest, largest, (entries, deletions), (bits, fbytes, fpr))| {
                FileMeta {
                    number,
                    size,
                    smallest,
                    largest,
                    entries,
                    deletions,
                    filter_bits_per_key: bits,
                    filter_bytes: fbytes,
                    expected_fpr: fpr,
                    range_deletions: number % 3,
                }
            },
        )
}

fn edit() -> impl Strategy<Value = VersionEdit> {
    (
        (
            prop::option::of(any::<u64>()),
            prop::option::of(any::<u64>()),
            prop::option::of(any::<u64>()),
        ),
        prop::collection::vec((0usize..7, prop::collection::vec(any::<u8>(), 0..30)), 0..4),
        prop::collection::vec((0usize..7, any::<u64>()), 0..6),
        prop::collection::vec((0usize..7, file_meta()), 0..6),
    )
        .prop_map(
            |((log_number, next_file_number, last_sequence), cps, deleted, new)| VersionEdit {
                log_number,
                next_file_number,
                last_sequence,
                compact_pointers: cps,
                deleted_files: deleted,
                new_files: new,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn round_trip(e in edit()) {
        let bytes = e.encode();
        prop_assert_eq!(VersionEdit::decode(&bytes).unwrap(), e);
    }

    #[test]
    fn mutated_bytes_never_panic(e in edit(), flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
                                 cut in any::<prop::sample::Index>()) {
        let mut bytes = e.encode();
        if !bytes.is_empty() {
            for (i, x) in &flips {
                let at = i.index(bytes.len());
                bytes[at] ^= x;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        match VersionEdit::decode(&bytes) {
            Ok(_) => {}
            Err(Error::Corruption { offset, .. }) => prop_assert!(offset <= bytes.len() as u64),
            Err(other) => prop_assert!(false, "unexpected error kind {:?}", other),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = VersionEdit::decode(&bytes);
    }
}

fn meta() -> FileMeta {
    FileMeta {
        number: 12,
        size: 4096,
        smallest: b"a\x01\0\0\0\0\0\0\0".to_vec(),
        largest: b"z\x01\0\0\0\0\0\0\0".to_vec(),
        entries: 10,
        deletions: 1,
        filter_bits_per_key: 10.0,
        filter_bytes: 13,
        expected_fpr: 0.0082,
        range_deletions: 0,
    }
}

#[test]
fn exact_bytes_of_each_tag() {
    let e = VersionEdit {
        log_number: Some(5),
        next_file_number: Some(300),
        last_sequence: Some(7),
        compact_pointers: vec![(2, b"k".to_vec())],
        deleted_files: vec![(1, 9)],
        new_files: vec![(0, meta())],
    };
    let mut want = vec![
        1, 5, 2, 0xac, 0x02, 3, 7, 4, 2, 1, b'k', 5, 1, 9, 6, 0, 12, 0x80, 0x20,
    ];
    want.push(9);
    want.extend_from_slice(&meta().smallest);
    want.push(9);
    want.extend_from_slice(&meta().largest);
    want.extend_from_slice(&[10, 1]);
    want.extend_from_slice(&10.0f64.to_bits().to_le_bytes());
    want.push(13);
    want.extend_from_slice(&0.0082f64.to_bits().to_le_bytes());
    assert_eq!(e.encode(), want);
    assert_eq!(VersionEdit::decode(&want).unwrap(), e);
    assert_eq!(VersionEdit::default().encode(), Vec::<u8>::new());
}

fn corruption_at(bytes: &[u8]) -> (u64, String) {
    match VersionEdit::decode(bytes) {
        Err(Error::Corruption { offset, why, .. }) => (offset, why),
        other => panic!("expected corruption, got {other:?}"),
    }
}

#[test]
fn bad_fields_are_typed_errors() {
    let (at, why) = corruption_at(&[1, 5, 99, 0]);
    assert_eq!(at, 2);
    assert!(why.contains("unknown version edit tag 99"), "{why}");

    let (at, why) = corruption_at(&[1, 5, 5, 7, 3]);
    assert_eq!(at, 3);
    assert!(why.contains("level 7"), "{why}");

    let (at, why) = corruption_at(&[3, 1, 3, 2]);
    assert_eq!(at, 2);
    assert!(why.contains("twice"), "{why}");

    // A key length far beyond the input is refused before anything is allocated.
    let (_, why) = corruption_at(&[4, 0, 0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert!(why.contains("needs"), "{why}");

    let mut nan = VersionEdit {
        new_files: vec![(0, meta())],
        ..VersionEdit::default()
    };
    nan.new_files[0].1.filter_bits_per_key = f64::NAN;
    let (_, why) = corruption_at(&nan.encode());
    assert!(why.contains("bits per key"), "{why}");

    let mut fpr = VersionEdit {
        new_files: vec![(6, meta())],
        ..VersionEdit::default()
    };
    fpr.new_files[0].1.expected_fpr = 1.5;
    let (_, why) = corruption_at(&fpr.encode());
    assert!(why.contains("false-positive"), "{why}");

    // Every strict prefix of a new-file field is truncated, hence an error.
    let full = VersionEdit {
        new_files: vec![(3, meta())],
        ..VersionEdit::default()
    }
    .encode();
    for cut in 1..full.len() {
        assert!(VersionEdit::decode(&full[..cut]).is_err(), "cut {cut}");
    }
}
