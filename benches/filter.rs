//! Insert and lookup cost at 10 bits/key over 1M keys: bloomkv's two layouts, its SSTable
//! policy probing serialized bytes in place, and `fastbloom` for comparison, in one run; then
//! the filter kinds tables can carry (blocked Bloom, binary fuse 8, Ribbon) side by side
//! (`cargo bench --bench filter -- kinds`).
//!
//! Each iteration touches all 1M keys; criterion's throughput (elements/s) inverts to ns/op.
//! `cargo bench --bench filter -- --measurement-time 2 --warm-up-time 1`

#![expect(
    missing_docs,
    reason = "criterion_group! defines an undocumented pub fn"
)]

use std::hint::black_box;

use bloomkv::filter::FilterSize;
use bloomkv::filter::{
    BinaryFusePolicy, BloomFilter, BloomPolicy, FilterPolicy, Layout, RibbonPolicy, hash_key,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

const N: usize = 1_000_000;
const BITS_PER_KEY: usize = 10;

fn keys(offset: u64) -> Vec<[u8; 8]> {
    (0..N as u64).map(|i| (i ^ offset).to_le_bytes()).collect()
}

fn bloomkv_filter(layout: Layout, keys: &[[u8; 8]]) -> BloomFilter {
    let mut f =
        BloomFilter::new(FilterSize::bits_per_key(N, BITS_PER_KEY as f64).with_layout(layout))
            .unwrap_or_else(|e| panic!("{e}"));
    for k in keys {
        f.insert(k);
    }
    f
}

fn fastbloom_filter(keys: &[[u8; 8]]) -> fastbloom::BloomFilter {
    let mut f = fastbloom::BloomFilter::with_num_bits(BITS_PER_KEY * N).expected_items(N);
    for k in keys {
        f.insert(k);
    }
    f
}

fn bench(c: &mut Criterion) {
    let present = keys(0);
    let absent = keys(1 << 62);

    let mut g = c.benchmark_group("insert");
    g.sample_size(10).throughput(Throughput::Elements(N as u64));
    for layout in [Layout::Standard, Layout::Blocked] {
        g.bench_function(format!("bloomkv-{layout:?}"), |b| {
            b.iter(|| black_box(bloomkv_filter(layout, &present)))
        });
    }
    g.bench_function("fastbloom", |b| {
        b.iter(|| black_box(fastbloom_filter(&present)))
    });
    g.finish();

    let standard = bloomkv_filter(Layout::Standard, &present);
    let blocked = bloomkv_filter(Layout::Blocked, &present);
    let fast = fastbloom_filter(&present);
    let policy = BloomPolicy::new(BITS_PER_KEY as f64);
    let hashes: Vec<u64> = present.iter().map(|k| hash_key(k)).collect();
    let table_filter = policy.create_filter_from_hashes(&hashes);

    let mut g = c.benchmark_group("contains");
    g.sample_size(10).throughput(Throughput::Elements(N as u64));
    for (which, probe) in [("present", &present), ("absent", &absent)] {
        g.bench_function(format!("bloomkv-Standard/{which}"), |b| {
            b.iter(|| probe.iter().filter(|k| standard.contains(k)).count())
        });
        g.bench_function(format!("bloomkv-Blocked/{which}"), |b| {
            b.iter(|| probe.iter().filter(|k| blocked.contains(k)).count())
        });
        g.bench_function(format!("bloomkv-policy-in-place/{which}"), |b| {
            b.iter(|| {
                probe
                    .iter()
                    .filter(|k| policy.may_contain(&table_filter, k.as_slice()))
                    .count()
            })
        });
        g.bench_function(format!("fastbloom/{which}"), |b| {
            b.iter(|| probe.iter().filter(|k| fast.contains(k)).count())
        });
    }
    g.finish();
}

/// The filter kinds tables can carry, at about equal memory: build (from key hashes) and
/// in-place probes of the serialized bytes, per key. `examples/filter_kinds.rs` prints the
/// same comparison with the false-positive rates.
fn kinds(c: &mut Criterion) {
    let present: Vec<u64> = keys(0).iter().map(|k| hash_key(k)).collect();
    let absent: Vec<u64> = keys(1 << 62).iter().map(|k| hash_key(k)).collect();
    let policies: Vec<(&str, Box<dyn FilterPolicy>)> = vec![
        ("bloom-blocked-9", Box::new(BloomPolicy::new(9.0))),
        ("bloom-blocked-10", Box::new(BloomPolicy::new(10.0))),
        ("binary-fuse-8", Box::new(BinaryFusePolicy::new())),
        ("ribbon-r7", Box::new(RibbonPolicy::with_result_bits(7))),
        ("ribbon-r9", Box::new(RibbonPolicy::with_result_bits(9))),
    ];
    let mut g = c.benchmark_group("kinds-build");
    g.sample_size(10).throughput(Throughput::Elements(N as u64));
    for (name, p) in &policies {
        g.bench_function(*name, |b| {
            b.iter(|| black_box(p.create_filter_from_hashes(&present)))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("kinds-probe");
    g.sample_size(10).throughput(Throughput::Elements(N as u64));
    for (name, p) in &policies {
        let filter = p.create_filter_from_hashes(&present);
        for (which, probe) in [("present", &present), ("absent", &absent)] {
            g.bench_function(format!("{name}/{which}"), |b| {
                b.iter(|| {
                    probe
                        .iter()
                        .filter(|&&h| p.may_contain_hash(&filter, h))
                        .count()
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, bench, kinds);
criterion_main!(benches);
