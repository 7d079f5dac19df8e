//! Random record sequences under random truncation and damage: the reader never panics and
//! never returns a record that was not written.

use crate::db::wal::{BLOCK_SIZE, RecoveryMode};
use proptest::prelude::*;
use crate::test_util::wal::*;

fn record_sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(
        prop_oneof![
            6 => 0usize..64,
            3 => 64usize..2000,
            1 => 2000usize..(2 * BLOCK_SIZE + 100),
        ],
        0..40,
    )
}

#[derive(Debug, Clone)]
enum Damage {
    Truncate(prop::sample::Index),
    FlipBit(prop::sample::Index, u8),
    Zero(prop::sample::Index, usize),
    Garbage(prop::sample::Index, Vec<u8>),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        any::<prop::sample::Index>().prop_map(Damage::Truncate),
        (any::<prop::sample::Index>(), 0u8..8).prop_map(|(i, b)| Damage::FlipBit(i, b)),
        (any::<prop::sample::Index>(), 1usize..200).prop_map(|(i, n)| Damage::Zero(i, n)),
        (
            any::<prop::sample::Index>(),
            prop::collection::vec(any::<u8>(), 1..64)
        )
            .prop_map(|(i, g)| Damage::Garbage(i, g)),
    ]
}

fn apply(data: &mut Vec<u8>, d: &Damage) {
    if data.is_empty() {
        return;
    }
    match d {
        Damage::Truncate(i) => data.truncate(i.index(data.len() + 1)),
        Damage::FlipBit(i, b) => {
            let at = i.index(data.len());
            data[at] ^= 1 << b;
        }
        Damage::Zero(i, n) => {
            let at = i.index(data.len());
            let end = (at + n).min(data.len());
            data[at..end].fill(0);
        }
        Damage::Garbage(i, g) => {
            let at = i.index(data.len());
            let end = (at + g.len()).min(data.len());
            data[at..end].copy_from_slice(&g[..end - at]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn damage_never_invents_records(sizes in record_sizes(), seed: u64,
                                    damages in prop::collection::vec(damage(), 0..4)) {
        let records: Vec<Vec<u8>> = sizes.iter().enumerate()
            .map(|(i, &n)| payload(seed ^ i as u64, n)).collect();
        let (mut data, spans) = write_log(&records);
        let clean_len = data.len();
        for d in &damages {
            apply(&mut data, d);
        }
        let only_truncated = damages.iter().all(|d| matches!(d, Damage::Truncate(_)));

        let (strict, res, r) = read_log(&data, RecoveryMode::Strict);
        // Strict returns a prefix of what was written, then ends or fails.
        prop_assert!(strict.len() <= records.len());
        prop_assert_eq!(&strict[..], &records[..strict.len()]);
        prop_assert!(r.valid_len() <= data.len() as u64);
        if only_truncated {
            // A cut log is a torn write: exactly the complete records, never an error.
            prop_assert!(res.is_ok(), "{:?}", res);
            let complete = spans.iter().filter(|s| s.end <= data.len()).count();
            prop_assert_eq!(strict.len(), complete);
            let want_len = if complete == 0 { 0 } else { spans[complete - 1].end };
            prop_assert_eq!(r.valid_len(), want_len as u64);
        }

        let (best, res, r) = read_log(&data, RecoveryMode::BestEffort);
        prop_assert!(res.is_ok(), "{:?}", res);
        prop_assert!(is_subsequence(&best, &records));
        prop_assert!(best.len() >= strict.len());
        prop_assert!(r.valid_len() <= data.len() as u64);
        if damages.is_empty() {
            prop_assert_eq!(&best, &records);
            prop_assert_eq!(r.valid_len(), clean_len as u64);
        }
    }

    #[test]
    fn single_bit_flip_loses_at_most_its_block(sizes in record_sizes(), seed: u64,
                                               at in any::<prop::sample::Index>(), bit in 0u8..8) {
        let records: Vec<Vec<u8>> = sizes.iter().enumerate()
            .map(|(i, &n)| payload(seed ^ i as u64, n)).collect();
        let (mut data, spans) = write_log(&records);
        prop_assume!(!data.is_empty());
        let f = at.index(data.len());
        data[f] ^= 1 << bit;
        let next_block = (f / BLOCK_SIZE + 1) * BLOCK_SIZE;
        let (best, res, _) = read_log(&data, RecoveryMode::BestEffort);
        prop_assert!(res.is_ok());
        prop_assert!(is_subsequence(&best, &records));
        // Records wholly before the flip, and records starting after its block, survive.
        for (i, s) in spans.iter().enumerate() {
            if s.end <= f || s.start >= next_block {
                prop_assert!(best.contains(&records[i]), "record {} lost", i);
            }
        }
        let (strict, res, _) = read_log(&data, RecoveryMode::Strict);
        let before = spans.iter().filter(|s| s.end <= f).count();
        prop_assert!(strict.len() >= before);
        if spans.iter().any(|s| s.start >= next_block) && strict.len() < records.len() {
            // Records were lost although good ones follow the damage: strict must say so.
            prop_assert!(res.is_err());
        }
    }
}
