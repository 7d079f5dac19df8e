//! The memtable's tests: basics, a model check and concurrent readers and writers.

mod basic;
mod concurrent;
mod model;

use super::*;

#[test]
fn send_sync_and_static_iter() {
    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send_static<T: Send + 'static>() {}
    assert_send_sync::<MemTable>();
    assert_send_static::<MemTableIter>();
}

#[test]
fn iterator_crosses_chunk_boundaries() {
    let mem = Arc::new(MemTable::new());
    let n = CHUNK * 3 + 5;
    for i in 0..n {
        mem.add(i as u64 + 1, Kind::Put, format!("k{i:05}").as_bytes(), b"v");
    }
    let mut it = mem.iter();
    it.seek_to_first().unwrap();
    let mut seen = 0;
    while it.valid() {
        let p = key::parse(it.key()).unwrap();
        assert_eq!(p.user_key, format!("k{seen:05}").as_bytes());
        seen += 1;
        it.next().unwrap();
    }
    assert_eq!(seen, n);
}

#[test]
fn duplicate_internal_key_replaces() {
    let mem = MemTable::new();
    mem.add(3, Kind::Put, b"a", b"1");
    mem.add(3, Kind::Put, b"a", b"2");
    assert_eq!(mem.len(), 1);
    assert_eq!(mem.get(b"a", 3), Some((Kind::Put, b"2".to_vec())));
}

#[test]
fn backward_crosses_chunk_boundaries() {
    let mem = Arc::new(MemTable::new());
    let n = CHUNK * 3 + 5;
    for i in 0..n {
        mem.add(i as u64 + 1, Kind::Put, format!("k{i:05}").as_bytes(), b"v");
    }
    let mut it = mem.iter();
    it.seek_to_last().unwrap();
    let mut left = n;
    while it.valid() {
        left -= 1;
        assert_eq!(key::user_key(it.key()), format!("k{left:05}").as_bytes());
        it.prev().unwrap();
    }
    assert_eq!(left, 0);
    let target = key::encode(b"k00100", 0, Kind::Delete);
    it.seek_for_prev(&target).unwrap();
    assert_eq!(key::user_key(it.key()), b"k00100");
    for _ in 0..CHUNK + 3 {
        it.next().unwrap();
    }
    for _ in 0..CHUNK + 3 {
        it.prev().unwrap();
    }
    assert_eq!(key::user_key(it.key()), b"k00100");
    it.seek_for_prev(b"a\0\0\0\0\0\0\0\0").unwrap();
    assert!(!it.valid());
}
