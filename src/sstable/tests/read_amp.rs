//! Read amplification of one table: absent keys read data blocks only for filter false
//! positives, and never for keys outside the table's range.

use std::sync::Arc;

use crate::filter::{BloomPolicy, FilterPolicy, hash_key};
use crate::sstable::{FilterVerdict, TableBuildOptions};
use crate::test_util::sstable::*;
use crate::util::key::{self, KIND_SEEK, Kind, MAX_SEQ};

const N: u64 = 100_000;

fn policy() -> Arc<dyn FilterPolicy> {
    Arc::new(BloomPolicy::new(10.0))
}

#[test]
fn absent_keys_read_blocks_only_for_false_positives() {
    // N + 1 present keys (even numbers up to 2N), so the N odd absent keys are all in range.
    let entries = (0..=N).map(|i| {
        (
            key::encode(format!("user{:09}", i * 2).as_bytes(), i + 1, Kind::Put),
            vec![b'v'; 16],
        )
    });
    let (bytes, props) = build(
        entries,
        TableBuildOptions {
            filter: Some(policy()),
            ..Default::default()
        },
    );
    assert!(props.filter_bytes as f64 >= N as f64 * 10.0 / 8.0);
    assert_eq!(props.entries, N + 1);
    // No cache: every block consulted is a read from the file.
    let opts = read_opts(Some(policy()), None);
    let counters = opts.counters.clone();
    let table = open(bytes, opts).unwrap();
    let fpr = table.expected_fp_rate().unwrap();
    eprintln!("expected fp rate {fpr:.5}");
    assert!(fpr > 0.001 && fpr < 0.03, "fpr {fpr}");

    // 100k absent keys inside the range.
    let mut maybe = 0u64;
    for i in 0..N {
        let uk = format!("user{:09}", i * 2 + 1);
        let g = table
            .get(
                &key::encode(uk.as_bytes(), MAX_SEQ, KIND_SEEK),
                hash_key(uk.as_bytes()),
            )
            .unwrap();
        assert_eq!(g.entry, None);
        match g.verdict {
            FilterVerdict::Absent => assert_eq!(g.blocks_read, 0),
            FilterVerdict::MayContain => {
                assert_eq!(g.blocks_read, 1);
                maybe += 1;
            }
            v => panic!("{v:?}"),
        }
    }
    let s = counters.snapshot();
    eprintln!("{maybe} false positives in {N} absent-key gets; counters {s:?}");
    assert_eq!(s.filter_checks, N);
    assert_eq!(s.filter_false_positives, maybe);
    assert_eq!(s.filter_useful, N - maybe);
    assert_eq!(
        s.data_blocks_read, maybe,
        "data blocks read only for false positives"
    );
    assert_eq!(table.filter_stats(), (N, maybe));
    let expected = fpr * N as f64;
    assert!(
        (maybe as f64) < expected * 1.5 + 50.0 && (maybe as f64) > expected * 0.5 - 50.0,
        "{maybe} false positives, expected about {expected:.0}"
    );

    // Keys outside the range: no filter check, no block.
    for i in 0..N {
        for uk in [format!("a{i}"), format!("zz{i}")] {
            let g = table
                .get(
                    &key::encode(uk.as_bytes(), MAX_SEQ, KIND_SEEK),
                    hash_key(uk.as_bytes()),
                )
                .unwrap();
            assert_eq!(
                (g.verdict, g.blocks_read, g.entry),
                (FilterVerdict::OutOfRange, 0, None)
            );
        }
    }
    let s2 = counters.snapshot();
    assert_eq!(s2, s, "out-of-range lookups touched nothing");
}
