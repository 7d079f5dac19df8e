//! WriteBatch: payload layout, round trips, damaged payloads, limits, memtable insertion.

use crate::Error;
use crate::db::batch::OpKind;
use crate::db::batch::{HEADER_LEN, WriteBatch};
use crate::util::key::{Kind, MAX_SEQ};
use crate::db::memtable::MemTable;
use crate::options::{MAX_KEY_BYTES, MAX_VALUE_BYTES};
use proptest::prelude::*;

type Op = (Kind, Vec<u8>, Vec<u8>);

fn build(seq: u64, ops: &[Op]) -> WriteBatch {
    let mut b = WriteBatch::new();
    for (kind, k, v) in ops {
        match kind {
            Kind::Put => b.put(k, v),
            Kind::Delete => b.delete(k),
        }
    }
    b.set_sequence(seq);
    b
}

fn ops_of(b: &WriteBatch) -> Vec<Op> {
    b.ops()
        .map(|(k, key, v)| {
            let kind = match k {
                OpKind::Put => Kind::Put,
                OpKind::Delete => Kind::Delete,
                OpKind::RangeDelete => unreachable!("these tests build no range delete"),
            };
            (kind, key.to_vec(), v.to_vec())
        })
        .collect()
}

/// `b`'s operations encoded again by the builder. Unlike [`ops_of`] it takes range deletes:
/// a damaged byte can turn a delete's tag into a range delete's.
fn rebuild(b: &WriteBatch) -> WriteBatch {
    let mut out = WriteBatch::new();
    for (kind, k, v) in b.ops() {
        match kind {
            OpKind::Put => out.put(k, v),
            OpKind::Delete => out.delete(k),
            OpKind::RangeDelete => out.delete_range(k, v),
        }
    }
    out.set_sequence(b.sequence());
    out
}

#[test]
fn a_delete_damaged_into_a_range_delete_is_rebuilt_as_one() {
    let delete = build(1, &[(Kind::Delete, b"a".to_vec(), vec![])]);
    let mut p = delete.payload().to_vec();
    // The delete's tag becomes a range delete's, its key the start; one more field, the end.
    p[HEADER_LEN] = 2;
    p.extend_from_slice(&[1, b'b']);
    let b = WriteBatch::from_payload(&p).unwrap();
    let rebuilt = rebuild(&b);
    assert_eq!(rebuilt.payload(), p.as_slice());
}

#[test]
fn payload_layout_is_exact() {
    let mut b = WriteBatch::new();
    assert!(b.is_empty());
    assert_eq!(b.payload(), &[0u8; HEADER_LEN]);
    b.put(b"ab", b"xyz");
    b.delete("k");
    b.put(Vec::<u8>::new(), "");
    b.set_sequence(0x0102_0304_0506);
    assert_eq!(b.sequence(), 0x0102_0304_0506);
    assert_eq!(b.len(), 3);
    #[rustfmt::skip]
    let expect: Vec<u8> = vec![
        6, 5, 4, 3, 2, 1, 0, 0, // sequence
        3, 0, 0, 0,             // count
        1, 2, b'a', b'b', 3, b'x', b'y', b'z',
        0, 1, b'k',
        1, 0, 0,
    ];
    assert_eq!(b.payload(), expect.as_slice());
    assert_eq!(b.approximate_size(), expect.len());
    let back = WriteBatch::from_payload(&expect).unwrap();
    assert_eq!(back, b);
    assert_eq!(
        ops_of(&back),
        vec![
            (Kind::Put, b"ab".to_vec(), b"xyz".to_vec()),
            (Kind::Delete, b"k".to_vec(), vec![]),
            (Kind::Put, vec![], vec![]),
        ]
    );
    assert!(format!("{b:?}").contains("ops: 3"));
}

#[test]
fn clear_and_default() {
    let mut b = WriteBatch::default();
    b.put("a", "1");
    b.set_sequence(9);
    b.clear();
    assert_eq!(b, WriteBatch::new());
    assert_eq!(b.ops().count(), 0);
}

#[test]
fn append_keeps_our_sequence_and_orders_ops() {
    let mut a = build(100, &[(Kind::Put, b"a".to_vec(), b"1".to_vec())]);
    let b = build(
        7,
        &[
            (Kind::Delete, b"b".to_vec(), vec![]),
            (Kind::Put, b"a".to_vec(), b"2".to_vec()),
        ],
    );
    a.append(&b);
    assert_eq!(a.len(), 3);
    assert_eq!(a.sequence(), 100);
    assert_eq!(
        ops_of(&a),
        vec![
            (Kind::Put, b"a".to_vec(), b"1".to_vec()),
            (Kind::Delete, b"b".to_vec(), vec![]),
            (Kind::Put, b"a".to_vec(), b"2".to_vec()),
        ]
    );
    assert_eq!(WriteBatch::from_payload(a.payload()).unwrap(), a);
}

#[test]
fn insert_into_gives_consecutive_sequences() {
    let b = build(
        50,
        &[
            (Kind::Put, b"a".to_vec(), b"1".to_vec()),
            (Kind::Put, b"a".to_vec(), b"2".to_vec()),
            (Kind::Delete, b"b".to_vec(), vec![]),
        ],
    );
    let mem = MemTable::new();
    mem.add(10, Kind::Put, b"b", b"old");
    b.insert_into(&mem);
    assert_eq!(mem.len(), 4);
    assert_eq!(mem.get(b"a", 49), None);
    assert_eq!(mem.get(b"a", 50), Some((Kind::Put, b"1".to_vec())));
    assert_eq!(mem.get(b"a", 51), Some((Kind::Put, b"2".to_vec())));
    assert_eq!(mem.get(b"b", 51), Some((Kind::Put, b"old".to_vec())));
    assert_eq!(mem.get(b"b", 52), Some((Kind::Delete, vec![])));
}

#[test]
fn validate_enforces_key_limit() {
    let mut b = WriteBatch::new();
    b.put(vec![1u8; MAX_KEY_BYTES], b"v");
    b.delete(vec![1u8; MAX_KEY_BYTES]);
    b.validate().unwrap();
    b.delete(vec![1u8; MAX_KEY_BYTES + 1]);
    let err = b.validate().unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidArgument(_)), "{msg}");
    assert!(msg.contains("delete #2"), "{msg}");
    assert!(msg.contains(&(MAX_KEY_BYTES + 1).to_string()), "{msg}");
}

#[test]
fn validate_enforces_value_limit() {
    // 256 MiB: the source is lazily zeroed, the batch copy is one memcpy.
    let mut b = WriteBatch::new();
    b.put(b"k", b"small");
    b.put(b"big", vec![0u8; MAX_VALUE_BYTES + 1]);
    let err = b.validate().unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, Error::InvalidArgument(_)), "{msg}");
    assert!(msg.contains("put #1"), "{msg}");
    assert!(msg.contains(&(MAX_VALUE_BYTES + 1).to_string()), "{msg}");
}

fn corruption_offset(e: &Error) -> u64 {
    match e {
        Error::Corruption { offset, .. } => *offset,
        other => panic!("expected Corruption, got {other}"),
    }
}

#[test]
fn from_payload_reports_each_defect_with_its_offset() {
    let good = build(
        5,
        &[
            (Kind::Put, b"ab".to_vec(), b"xyz".to_vec()),
            (Kind::Delete, b"k".to_vec(), vec![]),
        ],
    );
    let p = good.payload().to_vec(); // ops at 12 (8 bytes) and 20 (3 bytes), len 23

    let e = WriteBatch::from_payload(&p[..11]).unwrap_err();
    assert_eq!(corruption_offset(&e), 0, "{e}");

    let mut bad = p.clone();
    bad[20] = 9; // unknown kind of op 1
    let e = WriteBatch::from_payload(&bad).unwrap_err();
    assert_eq!(corruption_offset(&e), 20, "{e}");
    assert!(e.to_string().contains("kind 9"), "{e}");

    let mut bad = p.clone();
    bad[13] = 50; // key length of op 0 runs past the end: reported at the length
    let e = WriteBatch::from_payload(&bad).unwrap_err();
    assert_eq!(corruption_offset(&e), 13, "{e}");

    let mut bad = p.clone();
    bad[8] = 3; // count says 3, payload holds 2
    let e = WriteBatch::from_payload(&bad).unwrap_err();
    assert_eq!(corruption_offset(&e), 23, "{e}");
    assert!(e.to_string().contains("3 operations"), "{e}");

    let mut bad = p.clone();
    bad[8] = 1; // count says 1: op 1 is trailing garbage
    let e = WriteBatch::from_payload(&bad).unwrap_err();
    assert_eq!(corruption_offset(&e), 20, "{e}");
    assert!(e.to_string().contains("trailing"), "{e}");

    let mut bad = p.clone();
    bad.push(0);
    let e = WriteBatch::from_payload(&bad).unwrap_err();
    assert_eq!(corruption_offset(&e), 23, "{e}");

    let mut bad = p.clone();
    bad[..8].copy_from_slice(&MAX_SEQ.to_le_bytes()); // 2 ops from MAX_SEQ overflow
    let e = WriteBatch::from_payload(&bad).unwrap_err();
    assert!(e.to_string().contains("sequence"), "{e}");
    let mut ok = p.clone();
    ok[..8].copy_from_slice(&(MAX_SEQ - 1).to_le_bytes());
    WriteBatch::from_payload(&ok).unwrap();

    // An oversized key length is rejected without allocating or reading it.
    let mut huge = vec![0u8; 12];
    huge[8] = 1;
    huge.push(0);
    crate::util::coding::put_varint64(&mut huge, u64::MAX / 2);
    let e = WriteBatch::from_payload(&huge).unwrap_err();
    assert_eq!(corruption_offset(&e), 13, "{e}");

    // Empty batch with trailing bytes, and a clean empty batch.
    assert!(WriteBatch::from_payload(&[0u8; 13]).is_err());
    assert!(WriteBatch::from_payload(&[0u8; 12]).unwrap().is_empty());
}

fn op_strategy() -> impl Strategy<Value = Op> {
    (
        any::<bool>(),
        proptest::collection::vec(any::<u8>(), 0..20),
        proptest::collection::vec(any::<u8>(), 0..300),
    )
        .prop_map(|(put, k, v)| {
            if put {
                (Kind::Put, k, v)
            } else {
                (Kind::Delete, k, vec![])
            }
        })
}

#[derive(Debug, Clone)]
enum Damage {
    Flip { at: usize, xor: u8 },
    Truncate { at: usize },
    Insert { at: usize, byte: u8 },
    Remove { at: usize },
}

fn damage_strategy() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1..=255u8).prop_map(|(at, xor)| Damage::Flip { at, xor }),
        any::<usize>().prop_map(|at| Damage::Truncate { at }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Damage::Insert { at, byte }),
        any::<usize>().prop_map(|at| Damage::Remove { at }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn payload_round_trips(seq in 0..=MAX_SEQ - 100, ops in proptest::collection::vec(op_strategy(), 0..40)) {
        let b = build(seq, &ops);
        prop_assert_eq!(b.len(), ops.len());
        prop_assert_eq!(ops_of(&b), ops.clone());
        let back = WriteBatch::from_payload(b.payload()).unwrap();
        prop_assert_eq!(back.sequence(), seq);
        prop_assert_eq!(back.len(), ops.len());
        prop_assert_eq!(ops_of(&back), ops);
        prop_assert_eq!(back.payload(), b.payload());
    }

    #[test]
    fn every_strict_prefix_is_corruption(ops in proptest::collection::vec(op_strategy(), 0..8), cut in any::<usize>()) {
        let b = build(1, &ops);
        let p = b.payload();
        let cut = cut % p.len();
        let e = WriteBatch::from_payload(&p[..cut]).unwrap_err();
        prop_assert!(corruption_offset(&e) <= cut as u64, "{}", e);
    }

    #[test]
    fn damaged_payloads_never_panic(
        ops in proptest::collection::vec(op_strategy(), 0..8),
        damages in proptest::collection::vec(damage_strategy(), 1..4),
    ) {
        let mut p = build(1, &ops).payload().to_vec();
        for d in damages {
            match d {
                Damage::Flip { at, xor } => { let n = p.len(); p[at % n] ^= xor; }
                Damage::Truncate { at } => p.truncate(at % (p.len() + 1)),
                Damage::Insert { at, byte } => p.insert(at % (p.len() + 1), byte),
                Damage::Remove { at } => if !p.is_empty() { let n = p.len(); p.remove(at % n); },
            }
            if p.is_empty() { break; }
        }
        match WriteBatch::from_payload(&p) {
            Err(e) => prop_assert!(corruption_offset(&e) <= p.len() as u64, "{}", e),
            // Accepted bytes must be a well-formed batch: its ops re-encode to the same bytes.
            Ok(b) => {
                let rebuilt = rebuild(&b);
                prop_assert_eq!(rebuilt.payload(), p.as_slice());
                prop_assert_eq!(b.ops().count(), b.len());
            }
        }
    }
}

#[test]
fn op_bytes_is_what_each_operation_adds() {
    // Lengths on both sides of each varint width (1, 2 and 3 bytes).
    for len in [0usize, 1, 126, 127, 128, 16_383, 16_384, 70_000] {
        let key = vec![b'k'; len.min(MAX_KEY_BYTES)];
        let value = vec![b'v'; len];
        // A range delete encodes like a put of its two bounds (the server sizes it so).
        let end = [key.as_slice(), b"\xff"].concat();
        let mut b = WriteBatch::with_capacity(
            WriteBatch::op_bytes(&key, Some(&value))
                + WriteBatch::op_bytes(&key, None)
                + WriteBatch::op_bytes(&key, Some(&end)),
        );
        let capacity = b.rep.capacity();
        let before = b.approximate_size();
        b.put(&key, &value);
        assert_eq!(b.approximate_size() - before, WriteBatch::op_bytes(&key, Some(&value)));
        let before = b.approximate_size();
        b.delete(&key);
        assert_eq!(b.approximate_size() - before, WriteBatch::op_bytes(&key, None));
        let before = b.approximate_size();
        b.delete_range(&key, &end);
        assert_eq!(b.approximate_size() - before, WriteBatch::op_bytes(&key, Some(&end)));
        // Sized from op_bytes, the buffer never regrew.
        assert_eq!(b.rep.capacity(), capacity, "len {len}");
    }
}
