//! Memtable and iterator throughput: add, get, full scan, and a 10-way merge.

#![expect(
    clippy::unwrap_used,
    reason = "a benchmark that cannot go on panics with the error"
)]
#![expect(
    missing_docs,
    reason = "criterion_group! defines an undocumented pub fn"
)]

use std::hint::black_box;
use std::ops::Bound;
use std::sync::Arc;

use bloomkv::WriteBatch;
use bloomkv::db::memtable::MemTable;
use bloomkv::iter::InternalIterator;
use bloomkv::iter::db_iter::DbIter;
use bloomkv::iter::merge::MergingIterator;
use bloomkv::util::key::Kind;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const N: u64 = 100_000;

fn key(i: u64) -> [u8; 16] {
    // Scrambled so inserts land all over the list, as real keys do.
    let x = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&x.to_be_bytes());
    k[8..].copy_from_slice(&i.to_be_bytes());
    k
}

fn filled(n: u64) -> Arc<MemTable> {
    let mem = Arc::new(MemTable::new());
    for i in 0..n {
        mem.add(i + 1, Kind::Put, &key(i), &[7u8; 100]);
    }
    mem
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("memtable");
    g.throughput(Throughput::Elements(N));
    g.sample_size(10);
    g.bench_function("add 100k (16 B key, 100 B value)", |b| {
        b.iter(|| black_box(filled(N)))
    });
    g.bench_function("add 100k via WriteBatch of 100", |b| {
        b.iter(|| {
            let mem = MemTable::new();
            let mut batch = WriteBatch::new();
            for i in 0..N {
                batch.put(key(i), [7u8; 100]);
                if batch.len() == 100 {
                    batch.set_sequence(i + 1);
                    batch.insert_into(&mem);
                    batch.clear();
                }
            }
            black_box(mem)
        })
    });
    let mem = filled(N);
    g.bench_function("get 100k hits of 100k", |b| {
        b.iter(|| {
            for i in 0..N {
                black_box(mem.get(&key(i), u64::MAX));
            }
        })
    });
    g.bench_function("scan 100k (MemTableIter)", |b| {
        b.iter(|| {
            let mut it = mem.iter();
            it.seek_to_first().unwrap();
            let mut n = 0;
            while it.valid() {
                n += it.key().len();
                it.next().unwrap();
            }
            black_box(n)
        })
    });
    let parts: Vec<Arc<MemTable>> = (0..10)
        .map(|p| {
            let m = Arc::new(MemTable::new());
            for i in (p..N).step_by(10) {
                m.add(i + 1, Kind::Put, &key(i), &[7u8; 100]);
            }
            m
        })
        .collect();
    g.bench_function("scan 100k: DbIter over 10 merged memtables", |b| {
        b.iter(|| {
            let children: Vec<Box<dyn InternalIterator>> = parts
                .iter()
                .map(|m| Box::new(m.iter()) as Box<dyn InternalIterator>)
                .collect();
            let inner = Box::new(MergingIterator::new(children));
            let it = DbIter::new(inner, u64::MAX, Bound::Unbounded, Bound::Unbounded);
            black_box(it.count())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
