//! Database throughput on a prepared 200k-key database (W1 keys and values, settled tree,
//! reopened so engine caches start cold): put, get of present keys, get of absent keys with
//! filters on (10 bits/key) and off, and a 1,000-key scan from a random key. The `rd_*`
//! benches repeat the gets with 300 range tombstones present (tiny ranges between present
//! keys, covering none of them), first in the memtable, then flushed to a level-0 table
//! whose key range spans every key (so every get consults its tombstones).
//!
//! `cargo bench --bench db -- --measurement-time 2 --warm-up-time 1`

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark that cannot go on panics with the error"
)]
#![expect(
    missing_docs,
    reason = "criterion_group! defines an undocumented pub fn"
)]

use std::path::Path;

use bloomkv::{Db, Options};
use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use kvctl::bench::{KeySpace, SplitMix64};

const N: u64 = 200_000;
const SEED: u64 = 42;

/// Fills `dir` with N W1 keys, settles the tree and reopens it.
fn prepared(dir: &Path, bits: f64) -> Db {
    let opts = || Options {
        filter_bits_per_key: bits,
        block_cache_bytes: 32 << 20,
        ..Options::default()
    };
    let ks = KeySpace::new(SEED);
    let mut v = [0u8; 100];
    {
        let db = Db::open(dir, opts()).unwrap();
        for i in 0..N {
            ks.value(i, 0, &mut v);
            db.put(ks.key(i), v).unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
    }
    Db::open(dir, opts()).unwrap()
}

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let ks = KeySpace::new(SEED);
    let on = prepared(&tmp.path().join("on"), 10.0);
    let off = prepared(&tmp.path().join("off"), 0.0);

    let mut g = c.benchmark_group("db");
    g.throughput(Throughput::Elements(1));

    let mut rng = SplitMix64::new(1);
    g.bench_function("get_present", |b| {
        b.iter(|| black_box(on.get(ks.key(rng.below(N))).unwrap()))
    });
    for (name, db) in [
        ("get_absent_filters_on", &on),
        ("get_absent_filters_off", &off),
    ] {
        let mut j = N;
        g.bench_function(name, |b| {
            b.iter(|| {
                j += 1;
                black_box(db.get(ks.key(j)).unwrap())
            })
        });
    }

    let rd = prepared(&tmp.path().join("rd"), 10.0);
    for j in 0..300u64 {
        let mut lo = ks.key(j * (N / 300)).to_vec();
        lo.push(0);
        let mut hi = lo.clone();
        hi.push(0);
        rd.delete_range(&lo, &hi).unwrap();
    }
    for place in ["memtable", "table"] {
        if place == "table" {
            rd.flush().unwrap();
        }
        g.bench_function(format!("rd_{place}_get_present"), |b| {
            b.iter(|| black_box(rd.get(ks.key(rng.below(N))).unwrap()))
        });
        let mut j = N;
        g.bench_function(format!("rd_{place}_get_absent"), |b| {
            b.iter(|| {
                j += 1;
                black_box(rd.get(ks.key(j)).unwrap())
            })
        });
    }

    g.throughput(Throughput::Elements(1_000));
    g.bench_function("scan_1000", |b| {
        b.iter(|| {
            let start = ks.key(rng.below(N));
            black_box(on.scan(start..).take(1_000).count())
        })
    });
    g.throughput(Throughput::Elements(1));
    let mut v = [0u8; 100];
    let mut i = 0u64;
    g.bench_function("put_overwrite", |b| {
        b.iter(|| {
            i = (i + 1) % N;
            ks.value(i, 1, &mut v);
            on.put(ks.key(i), v).unwrap()
        })
    });
    let fresh = Db::open(tmp.path().join("fresh"), Options::default()).unwrap();
    let mut k = 0u64;
    g.bench_function("put_fresh", |b| {
        b.iter(|| {
            k += 1;
            fresh.put(ks.key(k), v).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
