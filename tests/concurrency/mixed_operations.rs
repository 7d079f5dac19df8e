//! Concurrency: 8 threads mix puts, deletes, batches, gets, scans and snapshots for a bounded
//! time over a database with a tiny memtable, so flushes and compactions run underneath them
//! all the time. Each thread owns its own keys (so it knows their exact values) and reads
//! everyone's. Checked: gets and scans of a thread's own keys match its model; a snapshot's
//! scan gives the same result twice, agrees with the snapshot's gets, shows the thread's own
//! keys exactly as they were when it was taken, and never shows half of a batch.
//!
//! Duration: `BLOOMKV_CONCURRENCY_SECS` (default 3).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bloomkv::{Db, Options, WriteBatch};

use crate::common::Rng;

const THREADS: u64 = 8;
const KEYS_PER_THREAD: u64 = 150;

fn own_key(t: u64, i: u64) -> String {
    format!("t{t}-k{i:04}")
}

/// Batches write the same value to both keys of a pair; nobody may ever see them differ.
fn pair_keys(t: u64, p: u64) -> (String, String) {
    (format!("t{t}-pair{p}-a"), format!("t{t}-pair{p}-b"))
}

type Kv = Vec<(Vec<u8>, Vec<u8>)>;

fn collect(it: bloomkv::DbIter) -> Kv {
    it.collect::<bloomkv::Result<Kv>>().unwrap()
}

/// Pairs in a scan result all have equal halves.
fn check_pairs(kv: &Kv, context: &str) {
    let map: BTreeMap<&[u8], &[u8]> = kv.iter().map(|(k, v)| (&k[..], &v[..])).collect();
    for (k, v) in &map {
        if let Some(prefix) = k.strip_suffix(b"-a") {
            let b = [prefix, b"-b"].concat();
            assert_eq!(
                map.get(&b[..]),
                Some(v),
                "{context}: half batch at {}",
                String::from_utf8_lossy(k)
            );
        }
    }
}

fn worker(db: Db, t: u64, deadline: Instant, ops: Arc<AtomicU64>, snaps: Arc<AtomicU64>) {
    let mut rng = Rng::new(0x2545_f491_4f6c_dd1d ^ (t + 1).wrapping_mul(0x9e37_79b9));
    let mut model: BTreeMap<String, String> = BTreeMap::new();
    let mut n = 0u64;
    while Instant::now() < deadline {
        n += 1;
        match rng.below(20) {
            0..=7 => {
                let k = own_key(t, rng.below(KEYS_PER_THREAD));
                let v = format!("{n}-{}", "x".repeat(rng.below(100) as usize));
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
            8 | 9 => {
                let k = own_key(t, rng.below(KEYS_PER_THREAD));
                db.delete(&k).unwrap();
                model.remove(&k);
            }
            10 | 11 => {
                let mut b = WriteBatch::new();
                let (a, bk) = pair_keys(t, rng.below(20));
                let v = format!("batch{n}");
                b.put(&a, &v);
                b.put(&bk, &v);
                let k = own_key(t, rng.below(KEYS_PER_THREAD));
                b.delete(&k);
                db.write(b).unwrap();
                model.insert(a, v.clone());
                model.insert(bk, v);
                model.remove(&k);
            }
            12..=15 => {
                let k = own_key(t, rng.below(KEYS_PER_THREAD));
                let got = db.get(&k).unwrap();
                assert_eq!(
                    got.as_deref(),
                    model.get(&k).map(|v| v.as_bytes()),
                    "get {k}"
                );
            }
            16 | 17 => {
                // A scan of this thread's own keys is exactly its model.
                let lo = format!("t{t}-");
                let hi = format!("t{t}.");
                let got = collect(db.scan(lo.as_bytes()..hi.as_bytes()));
                let want: Kv = model
                    .iter()
                    .map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes()))
                    .collect();
                assert_eq!(got, want, "thread {t}: scan of own keys");
            }
            _ => {
                let at_snapshot = model.clone();
                let snap = db.snapshot();
                let first = collect(snap.scan(..));
                // Writes after the snapshot, by this thread and others, must not show.
                let k = own_key(t, rng.below(KEYS_PER_THREAD));
                db.put(&k, "after-snapshot").unwrap();
                model.insert(k, "after-snapshot".into());
                let second = collect(snap.scan(..));
                assert_eq!(first, second, "thread {t}: snapshot scan changed");
                check_pairs(&first, &format!("thread {t} snapshot"));
                // This thread's keys are exactly as they were when the snapshot was taken.
                let prefix = format!("t{t}-");
                let own: Kv = first
                    .iter()
                    .filter(|(k, _)| k.starts_with(prefix.as_bytes()))
                    .cloned()
                    .collect();
                let want: Kv = at_snapshot
                    .iter()
                    .map(|(k, v)| (k.clone().into_bytes(), v.clone().into_bytes()))
                    .collect();
                assert_eq!(own, want, "thread {t}: own keys in snapshot");
                // Spot-check the snapshot's gets against its scan.
                let scanned: BTreeMap<&[u8], &[u8]> =
                    first.iter().map(|(k, v)| (&k[..], &v[..])).collect();
                for _ in 0..20 {
                    let other = rng.below(THREADS);
                    let k = own_key(other, rng.below(KEYS_PER_THREAD));
                    assert_eq!(
                        snap.get(&k).unwrap().as_deref(),
                        scanned.get(k.as_bytes()).copied(),
                        "thread {t}: snapshot get vs scan for {k}"
                    );
                }
                snaps.fetch_add(1, Ordering::Relaxed);
            }
        }
        // Own-key exactness inside snapshots: take one, compare to the model right away.
        if n.is_multiple_of(97) {
            let snap = db.snapshot();
            for i in 0..KEYS_PER_THREAD {
                let k = own_key(t, i);
                assert_eq!(
                    snap.get(&k).unwrap().as_deref(),
                    model.get(&k).map(|v| v.as_bytes()),
                    "thread {t}: snapshot value of own key {k}"
                );
            }
        }
    }
    ops.fetch_add(n, Ordering::Relaxed);
}

#[test]
fn eight_threads_mixed_operations_with_background_compaction() {
    let secs: u64 = std::env::var("BLOOMKV_CONCURRENCY_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let dir = tempfile::tempdir().unwrap();
    let opts = Options {
        memtable_bytes: 16 * 1024,
        target_file_bytes: 16 * 1024,
        max_bytes_for_level_base: 64 * 1024,
        level0_compaction_trigger: 2,
        block_bytes: 1024,
        ..Default::default()
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let ops = Arc::new(AtomicU64::new(0));
    let snaps = Arc::new(AtomicU64::new(0));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (db, ops, snaps) = (db.clone(), Arc::clone(&ops), Arc::clone(&snaps));
            std::thread::spawn(move || worker(db, t, deadline, ops, snaps))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    db.wait_for_compactions().unwrap();
    let stats = db.stats();
    eprintln!(
        "concurrency: {} operations, {} snapshots checked, {} flushes, {} compactions",
        ops.load(Ordering::Relaxed),
        snaps.load(Ordering::Relaxed),
        stats.flushes,
        stats.compactions
    );
    assert!(
        stats.flushes > 0 && stats.compactions > 0,
        "background work ran"
    );
    let before = collect(db.scan(..));
    check_pairs(&before, "final");
    drop(db);
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(collect(db.scan(..)), before, "reopen changed the contents");
}
