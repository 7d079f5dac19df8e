//! SSTable throughput: build MB/s, and point lookups (present / absent) on a cached table.
//!
//! Lookups are measured with `BloomPolicy::new(10.0)` and with no filter, so the absent-key
//! figures show what the filter saves even when the data block is already cached.

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark that cannot go on panics with the error"
)]
#![expect(
    missing_docs,
    reason = "criterion_group! defines an undocumented pub fn"
)]

use std::sync::Arc;

use bloomkv::env::{MemRandomAccessFile, MemWritableFile};
use bloomkv::filter::{BloomPolicy, FilterPolicy, hash_key};
use bloomkv::sstable::cache::BlockCache;
use bloomkv::sstable::{ReadCounters, Table, TableBuildOptions, TableBuilder, TableReadOptions};
use bloomkv::util::key::{self, KIND_SEEK, Kind, MAX_SEQ};
use criterion::{BatchSize, Criterion, Throughput, black_box, criterion_group, criterion_main};

const N: u64 = 100_000;

fn user_key(i: u64) -> Vec<u8> {
    format!("user{:012}", i).into_bytes()
}

fn entries() -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..N)
        .map(|i| {
            (
                key::encode(&user_key(i * 2), i + 1, Kind::Put),
                vec![(i % 256) as u8; 100],
            )
        })
        .collect()
}

fn build(entries: &[(Vec<u8>, Vec<u8>)], filter: Option<Arc<dyn FilterPolicy>>) -> Vec<u8> {
    let file = MemWritableFile::with_capacity(16 << 20);
    let mut b = TableBuilder::new(
        Box::new(file.clone()),
        "bench.sst".into(),
        TableBuildOptions {
            filter,
            ..Default::default()
        },
    );
    for (k, v) in entries {
        b.add(k, v).ok();
    }
    b.finish().ok();
    file.contents()
}

fn bench(c: &mut Criterion) {
    let data = entries();
    let raw: u64 = data.iter().map(|(k, v)| (k.len() + v.len()) as u64).sum();
    let mut g = c.benchmark_group("sstable_build");
    g.throughput(Throughput::Bytes(raw));
    g.sample_size(10);
    g.bench_function("100k_entries_bloom10", |b| {
        b.iter_batched(
            || (),
            |()| build(&data, Some(Arc::new(BloomPolicy::new(10.0)))),
            BatchSize::PerIteration,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("sstable_get_cached");
    for (name, filter) in [
        (
            "bloom10",
            Some(Arc::new(BloomPolicy::new(10.0)) as Arc<dyn FilterPolicy>),
        ),
        ("nofilter", None),
    ] {
        let bytes = build(&data, filter.clone());
        let table = Arc::new(
            Table::open(
                Arc::new(MemRandomAccessFile::new(bytes, "bench.sst")),
                TableReadOptions {
                    file_number: 1,
                    filter,
                    cache: Some(Arc::new(BlockCache::new(64 << 20))),
                    counters: Arc::new(ReadCounters::default()),
                },
            )
            .unwrap(),
        );
        let present: Vec<(Vec<u8>, u64)> = (0..4096u64)
            .map(|i| {
                let uk = user_key((i * 7919 % N) * 2);
                (key::encode(&uk, MAX_SEQ, KIND_SEEK), hash_key(&uk))
            })
            .collect();
        let absent: Vec<(Vec<u8>, u64)> = (0..4096u64)
            .map(|i| {
                let uk = user_key((i * 7919 % N) * 2 + 1);
                (key::encode(&uk, MAX_SEQ, KIND_SEEK), hash_key(&uk))
            })
            .collect();
        // Warm the cache.
        for (k, h) in &present {
            table.get(k, *h).ok();
        }
        let mut i = 0;
        g.bench_function(format!("present_{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % present.len();
                black_box(table.get(&present[i].0, present[i].1).ok())
            })
        });
        g.bench_function(format!("absent_{name}"), |b| {
            b.iter(|| {
                i = (i + 1) % absent.len();
                black_box(table.get(&absent[i].0, absent[i].1).ok())
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
