//! One writer adds while reader threads get and iterate: every read sees a value that was
//! written for that key, nothing goes backwards, and a key written at or below the snapshot is
//! always found (the key filter never hides it).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread;

use crate::iter::InternalIterator;
use crate::util::key::{self, Kind};
use crate::db::memtable::MemTable;

const KEYS: u64 = 200;
const WRITES: u64 = 40_000;

fn user_key(i: u64) -> Vec<u8> {
    format!("key{i:04}").into_bytes()
}

/// The value written at `seq` for key `i`; readers check values against it.
fn value_for(i: u64, seq: u64) -> Vec<u8> {
    let mut v = format!("{i}:{seq}:").into_bytes();
    v.resize(v.len() + (seq % 17) as usize, b'x');
    v
}

fn parse_value(v: &[u8]) -> (u64, u64) {
    let s = std::str::from_utf8(v).unwrap();
    let mut parts = s.split(':');
    let i = parts.next().unwrap().parse().unwrap();
    let seq = parts.next().unwrap().parse().unwrap();
    (i, seq)
}

#[test]
fn readers_see_only_written_values_while_one_writer_adds() {
    // A small budget: the key filter is saturated part of the way through, so both of its
    // answers occur.
    let mem = Arc::new(MemTable::with_budget(4 << 10));
    // The first write of each key: from that sequence on, a get at or above it finds the key.
    let mut first = vec![u64::MAX; KEYS as usize];
    for seq in (1..=WRITES).rev() {
        first[((seq * 7919) % KEYS) as usize] = seq;
    }
    let first = Arc::new(first);
    // Published sequence: everything <= it is fully added (the Db's "last sequence").
    let published = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));

    let writer = {
        let (mem, published) = (mem.clone(), published.clone());
        thread::spawn(move || {
            for seq in 1..=WRITES {
                let i = (seq * 7919) % KEYS;
                if seq % 10 == 0 {
                    mem.add(seq, Kind::Delete, &user_key(i), b"");
                } else {
                    mem.add(seq, Kind::Put, &user_key(i), &value_for(i, seq));
                }
                published.store(seq, Ordering::Release);
            }
        })
    };

    let getters: Vec<_> = (0..2)
        .map(|t| {
            let (mem, published, stop) = (mem.clone(), published.clone(), stop.clone());
            let first = first.clone();
            thread::spawn(move || {
                let mut last_seen = vec![0u64; KEYS as usize];
                let mut reads = 0u64;
                let mut n = t;
                while !stop.load(Ordering::Acquire) {
                    n = (n * 31 + 7) % KEYS;
                    let snap = published.load(Ordering::Acquire);
                    match mem.get(&user_key(n), snap) {
                        Some((Kind::Put, v)) => {
                            let (i, seq) = parse_value(&v);
                            assert_eq!(i, n, "value of another key");
                            assert!(seq <= snap, "saw seq {seq} above snapshot {snap}");
                            assert_eq!(v, value_for(i, seq), "torn or wrong value");
                            assert!(seq >= last_seen[n as usize], "went backwards");
                            last_seen[n as usize] = seq;
                        }
                        Some((Kind::Delete, v)) => assert!(v.is_empty()),
                        None => assert!(
                            first[n as usize] > snap,
                            "key {n}, first written at {}, missing at snapshot {snap}",
                            first[n as usize]
                        ),
                    }
                    reads += 1;
                }
                reads
            })
        })
        .collect();

    let scanner = {
        let (mem, stop) = (mem.clone(), stop.clone());
        thread::spawn(move || {
            let mut scans = 0;
            while !stop.load(Ordering::Acquire) {
                let mut it = mem.iter();
                it.seek_to_first().unwrap();
                let mut prev: Option<Vec<u8>> = None;
                while it.valid() {
                    let p = key::parse(it.key()).unwrap();
                    if p.kind == Kind::Put {
                        let (i, seq) = parse_value(it.value());
                        assert_eq!(user_key(i), p.user_key);
                        assert_eq!(seq, p.seq);
                        assert_eq!(it.value(), value_for(i, seq));
                    } else {
                        assert!(it.value().is_empty());
                    }
                    if let Some(prev) = &prev {
                        assert_eq!(
                            key::compare(prev, it.key()),
                            std::cmp::Ordering::Less,
                            "iterator not strictly increasing"
                        );
                    }
                    prev = Some(it.key().to_vec());
                    it.next().unwrap();
                }
                scans += 1;
            }
            scans
        })
    };

    writer.join().unwrap();
    stop.store(true, Ordering::Release);
    for g in getters {
        assert!(g.join().unwrap() > 0);
    }
    assert!(scanner.join().unwrap() > 0);

    // After the writer: every key's newest version is the last one written.
    assert_eq!(mem.len() as u64, WRITES);
    for i in 0..KEYS {
        let last = (1..=WRITES).rev().find(|s| (s * 7919) % KEYS == i).unwrap();
        let expect = if last % 10 == 0 {
            (Kind::Delete, vec![])
        } else {
            (Kind::Put, value_for(i, last))
        };
        assert_eq!(mem.get(&user_key(i), u64::MAX), Some(expect));
    }
}
