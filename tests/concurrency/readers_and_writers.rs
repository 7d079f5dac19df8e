//! Concurrency: writers and readers at once; every read sees a value written for that key.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bloomkv::{Db, Options};

#[test]
fn four_writers_four_readers() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 32 * 1024,
        level0_compaction_trigger: 2,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4u32 {
        let db = db.clone();
        writers.push(std::thread::spawn(move || {
            for i in 0..3000u32 {
                let k = format!("k{:04}", (i * 7 + w) % 500);
                // Value says who wrote it for which key, so readers can check it.
                db.put(&k, format!("{k}:w{w}:{i}")).unwrap();
                if i.is_multiple_of(10) {
                    db.delete(format!("k{:04}", (i * 3 + w) % 500)).unwrap();
                }
            }
        }));
    }
    let mut readers = Vec::new();
    for _ in 0..4 {
        let db = db.clone();
        let stop = Arc::clone(&stop);
        readers.push(std::thread::spawn(move || {
            let mut seen = 0u64;
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) {
                let k = format!("k{:04}", i % 500);
                if let Some(v) = db.get(&k).unwrap() {
                    let v = String::from_utf8(v).unwrap();
                    assert!(v.starts_with(&format!("{k}:w")), "{k} -> {v}");
                    seen += 1;
                }
                if i.is_multiple_of(500) {
                    let mut prev: Option<Vec<u8>> = None;
                    for kv in db.scan("k0100".."k0200") {
                        let (k, v) = kv.unwrap();
                        assert!(v.starts_with(&k));
                        assert!(prev.as_ref().is_none_or(|p| p < &k));
                        prev = Some(k);
                    }
                }
                i = i.wrapping_add(1);
            }
            seen
        }));
    }
    for w in writers {
        w.join().unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let seen: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
    assert!(seen > 0);
    db.wait_for_compactions().unwrap();
    for k in 0..500 {
        if let Some(v) = db.get(format!("k{k:04}")).unwrap() {
            assert!(v.starts_with(format!("k{k:04}:w").as_bytes()));
        }
    }
}
