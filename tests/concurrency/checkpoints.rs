//! Checkpoints taken while a writer runs (memtables freezing and flushing, compactions
//! going on) each hold exactly the writes up to their sequence number: a prefix of the
//! writer's puts, never a hole, never a later write.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use bloomkv::{Db, Options};

use crate::common;

fn key(i: u64) -> Vec<u8> {
    // Not in write order, so tables and memtables interleave in key space.
    format!("{:016x}-{i}", common::mix(i)).into_bytes()
}

fn options() -> Options {
    Options {
        memtable_bytes: 32 << 10,
        ..common::small_options()
    }
}

#[test]
fn checkpoints_under_a_running_writer_hold_a_prefix_of_its_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(Db::open(dir.path().join("live"), options()).unwrap());
    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (db, acked, stop) = (Arc::clone(&db), Arc::clone(&acked), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                db.put(key(i), i.to_le_bytes()).unwrap();
                i += 1;
                acked.store(i, Ordering::Release);
            }
        })
    };
    let mut checkpoints = Vec::new();
    for c in 0..5 {
        while acked.load(Ordering::Acquire) < (c + 1) * 3000 {
            std::thread::yield_now();
        }
        let before = acked.load(Ordering::Acquire);
        let path = dir.path().join(format!("copy{c}"));
        let seq = db.checkpoint(&path).unwrap();
        let after = acked.load(Ordering::Acquire);
        // Put `i` is sequence number `i + 1`: every put that returned before the call is in,
        // and the writer cannot have gone past the end of the call by more than one put.
        assert!(
            before <= seq && seq <= after + 1,
            "{before} <= {seq} <= {after} + 1"
        );
        checkpoints.push((path, seq));
    }
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    drop(db);

    for (path, seq) in checkpoints {
        let copy = Db::open_read_only(&path, options()).unwrap();
        let mut found = 0u64;
        for kv in copy.scan(..) {
            let (k, v) = kv.unwrap();
            let i = u64::from_le_bytes(v.as_slice().try_into().unwrap());
            assert_eq!(k, key(i), "key and value of put {i} match");
            assert!(
                i < seq,
                "put {i} is past the checkpoint's sequence number {seq}"
            );
            found += 1;
        }
        assert_eq!(found, seq, "every put up to {seq} is in {}", path.display());
    }
}
