//! MemTable point lookups at snapshots, tombstones, empty keys/values, iteration and seek.

use std::sync::Arc;

use crate::iter::InternalIterator;
use crate::util::key::{self, KIND_SEEK, Kind, MAX_SEQ};
use crate::db::memtable::{ENTRY_OVERHEAD_BYTES, MemTable};

#[test]
fn get_picks_newest_version_at_snapshot() {
    let mem = MemTable::new();
    mem.add(10, Kind::Put, b"k", b"v10");
    mem.add(20, Kind::Put, b"k", b"v20");
    mem.add(30, Kind::Delete, b"k", b"");
    mem.add(40, Kind::Put, b"k", b"v40");
    mem.add(15, Kind::Put, b"j", b"j15");
    mem.add(25, Kind::Put, b"ka", b"ka25");

    assert_eq!(mem.get(b"k", 9), None);
    assert_eq!(mem.get(b"k", 10), Some((Kind::Put, b"v10".to_vec())));
    assert_eq!(mem.get(b"k", 19), Some((Kind::Put, b"v10".to_vec())));
    assert_eq!(mem.get(b"k", 20), Some((Kind::Put, b"v20".to_vec())));
    assert_eq!(mem.get(b"k", 30), Some((Kind::Delete, vec![])));
    assert_eq!(mem.get(b"k", 39), Some((Kind::Delete, vec![])));
    assert_eq!(mem.get(b"k", 40), Some((Kind::Put, b"v40".to_vec())));
    assert_eq!(mem.get(b"k", MAX_SEQ), Some((Kind::Put, b"v40".to_vec())));
    assert_eq!(mem.get(b"k", u64::MAX), Some((Kind::Put, b"v40".to_vec())));
    // Neighbouring keys do not leak into each other.
    assert_eq!(mem.get(b"j", 14), None);
    assert_eq!(mem.get(b"j", 100), Some((Kind::Put, b"j15".to_vec())));
    assert_eq!(mem.get(b"ka", 24), None);
    assert_eq!(mem.get(b"ka", 25), Some((Kind::Put, b"ka25".to_vec())));
    assert_eq!(mem.get(b"", 100), None);
    assert_eq!(mem.get(b"kb", 100), None);
    assert_eq!(mem.len(), 6);
}

#[test]
fn empty_keys_and_values() {
    let mem = MemTable::new();
    assert!(mem.is_empty());
    mem.add(1, Kind::Put, b"", b"");
    mem.add(2, Kind::Put, b"\0", b"x");
    mem.add(3, Kind::Put, b"a", b"");
    assert_eq!(mem.get(b"", 5), Some((Kind::Put, vec![])));
    assert_eq!(mem.get(b"\0", 5), Some((Kind::Put, b"x".to_vec())));
    assert_eq!(mem.get(b"a", 5), Some((Kind::Put, vec![])));
    mem.add(4, Kind::Delete, b"", b"");
    assert_eq!(mem.get(b"", 5), Some((Kind::Delete, vec![])));
    assert_eq!(mem.get(b"", 3), Some((Kind::Put, vec![])));
    assert!(!mem.is_empty());
    assert_eq!(mem.len(), 4);
}

#[test]
fn approximate_bytes_counts_payload_and_overhead() {
    let mem = MemTable::new();
    assert_eq!(mem.approximate_bytes(), 0);
    mem.add(1, Kind::Put, b"abc", &[7u8; 1000]);
    assert_eq!(mem.approximate_bytes(), 3 + 1000 + ENTRY_OVERHEAD_BYTES);
    mem.add(2, Kind::Delete, b"abc", b"");
    assert_eq!(
        mem.approximate_bytes(),
        2 * (3 + ENTRY_OVERHEAD_BYTES) + 1000
    );
}

fn collect(it: &mut dyn InternalIterator) -> Vec<(Vec<u8>, u64, Kind, Vec<u8>)> {
    let mut out = Vec::new();
    while it.valid() {
        let p = key::parse(it.key()).unwrap();
        out.push((p.user_key.to_vec(), p.seq, p.kind, it.value().to_vec()));
        it.next().unwrap();
    }
    out
}

#[test]
fn iterates_in_internal_key_order_and_seeks() {
    let mem = Arc::new(MemTable::new());
    // Added out of order on purpose.
    mem.add(5, Kind::Put, b"b", b"b5");
    mem.add(1, Kind::Put, b"a", b"a1");
    mem.add(7, Kind::Delete, b"b", b"");
    mem.add(3, Kind::Put, b"", b"e3");
    mem.add(2, Kind::Put, b"b", b"b2");
    mem.add(9, Kind::Put, b"c", b"c9");

    let mut it = mem.iter();
    assert!(!it.valid(), "unpositioned before a seek");
    it.seek_to_first().unwrap();
    let all = collect(&mut it);
    let expect: Vec<(Vec<u8>, u64, Kind, Vec<u8>)> = vec![
        (b"".to_vec(), 3, Kind::Put, b"e3".to_vec()),
        (b"a".to_vec(), 1, Kind::Put, b"a1".to_vec()),
        (b"b".to_vec(), 7, Kind::Delete, vec![]),
        (b"b".to_vec(), 5, Kind::Put, b"b5".to_vec()),
        (b"b".to_vec(), 2, Kind::Put, b"b2".to_vec()),
        (b"c".to_vec(), 9, Kind::Put, b"c9".to_vec()),
    ];
    assert_eq!(all, expect);

    // Seek to "b" at snapshot 6 lands on b@5; at snapshot 1 on c@9 (first entry after b's).
    it.seek(&key::encode(b"b", 6, KIND_SEEK)).unwrap();
    assert_eq!(collect(&mut it), expect[3..].to_vec());
    it.seek(&key::encode(b"b", 1, KIND_SEEK)).unwrap();
    assert_eq!(collect(&mut it), expect[5..].to_vec());
    it.seek(&key::encode(b"bb", 100, KIND_SEEK)).unwrap();
    assert_eq!(collect(&mut it), expect[5..].to_vec());
    it.seek(&key::encode(b"d", 100, KIND_SEEK)).unwrap();
    assert!(!it.valid());
    // A seek after exhaustion works again.
    it.seek(&key::encode(b"", MAX_SEQ, KIND_SEEK)).unwrap();
    assert_eq!(collect(&mut it), expect);
}

#[test]
fn iterator_outlives_callers_handle_and_sees_later_adds_after_its_position() {
    let mem = Arc::new(MemTable::new());
    mem.add(1, Kind::Put, b"a", b"1");
    let mut it = mem.iter();
    drop(mem.clone());
    it.seek_to_first().unwrap();
    assert!(it.valid());
    // Keys added after the fetched entries sort later, so the iterator reaches them.
    mem.add(2, Kind::Put, b"z", b"2");
    drop(mem);
    it.next().unwrap();
    assert!(it.valid());
    assert_eq!(key::user_key(it.key()), b"z");
    it.next().unwrap();
    assert!(!it.valid());
}

/// Resident memory in bytes (Linux), to check the per-entry overhead estimate.
fn rss_bytes() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[test]
#[ignore = "measures process memory; run alone: cargo test --release --lib memtable::tests::basic -- --ignored"]
fn entry_overhead_estimate_matches_resident_memory() {
    const N: usize = 400_000;
    let Some(before) = rss_bytes() else { return };
    let mem = MemTable::new();
    for i in 0..N {
        let k = (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).to_be_bytes();
        mem.add(i as u64 + 1, Kind::Put, &k, &[1u8; 16]);
    }
    let after = rss_bytes().unwrap();
    let per_entry = (after - before) as f64 / N as f64;
    let payload = 8.0 + 16.0;
    let overhead = per_entry - payload;
    println!("resident bytes per entry {per_entry:.1}, overhead beyond key+value {overhead:.1}");
    assert!(
        overhead > ENTRY_OVERHEAD_BYTES as f64 * 0.6
            && overhead < ENTRY_OVERHEAD_BYTES as f64 * 1.5,
        "estimate {ENTRY_OVERHEAD_BYTES} vs measured {overhead:.1}"
    );
    assert_eq!(mem.len(), N);
}

#[test]
fn entries_on_both_sides_of_the_scratch_limit_keep_their_bytes() {
    // Up to 64 KiB an entry is assembled in a per-thread buffer; beyond, in one of its own.
    let mem = MemTable::new();
    let sizes = [0usize, 1, 100, (64 << 10) - 20, (64 << 10) + 20, 1 << 20];
    for (i, &n) in sizes.iter().enumerate() {
        let value: Vec<u8> = (0..n).map(|j| (j * 7 + i) as u8).collect();
        mem.add(i as u64 + 1, Kind::Put, format!("key{i}").as_bytes(), &value);
    }
    // A short entry after a long one must not carry the long one's bytes.
    mem.add(10, Kind::Put, b"short", b"s");
    for (i, &n) in sizes.iter().enumerate() {
        let value: Vec<u8> = (0..n).map(|j| (j * 7 + i) as u8).collect();
        assert_eq!(
            mem.get(format!("key{i}").as_bytes(), 100),
            Some((Kind::Put, value)),
            "size {n}"
        );
    }
    assert_eq!(mem.get(b"short", 100), Some((Kind::Put, b"s".to_vec())));
}
