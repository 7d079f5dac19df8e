//! The filter kinds tables can carry, side by side at (about) equal bits per key: blocked
//! Bloom (`BloomPolicy`), binary fuse 8 (`BinaryFusePolicy`) and standard Ribbon
//! (`RibbonPolicy`). For each: measured false-positive rate, build ns per key, probe ns per
//! lookup (present and absent keys, probing the serialized bytes in place, as tables do), and
//! memory in bits per key. Medians of `--runs` runs (default 3).
//!
//! ```sh
//! cargo run --release --example filter_kinds                    # 1M keys, 1M absent probes
//! cargo run --release --example filter_kinds -- --keys 10000000 --probes 10000000 --runs 5
//! ```

use std::hint::black_box;
use std::time::Instant;

use bloomkv::filter::{BinaryFusePolicy, BloomPolicy, FilterPolicy, RibbonPolicy, hash_key};

struct Row {
    name: String,
    fpr: f64,
    build_ns: f64,
    present_ns: f64,
    absent_ns: f64,
    bits_per_key: f64,
    predicted: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn measure(
    name: &str,
    policy: &dyn FilterPolicy,
    predicted: f64,
    keys: &[u64],
    absent: &[u64],
    runs: usize,
) -> Row {
    let (mut build, mut present, mut miss) = (Vec::new(), Vec::new(), Vec::new());
    let mut filter = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        filter = policy.create_filter_from_hashes(keys);
        build.push(t.elapsed().as_nanos() as f64 / keys.len() as f64);
        let t = Instant::now();
        let hits = keys
            .iter()
            .filter(|&&h| policy.may_contain_hash(black_box(&filter), h))
            .count();
        present.push(t.elapsed().as_nanos() as f64 / keys.len() as f64);
        assert_eq!(hits, keys.len(), "{name}: false negative");
        let t = Instant::now();
        let fp = absent
            .iter()
            .filter(|&&h| policy.may_contain_hash(black_box(&filter), h))
            .count();
        miss.push(t.elapsed().as_nanos() as f64 / absent.len() as f64);
        black_box(fp);
    }
    let fp = absent
        .iter()
        .filter(|&&h| policy.may_contain_hash(&filter, h))
        .count();
    Row {
        name: name.to_string(),
        fpr: fp as f64 / absent.len() as f64,
        build_ns: median(build),
        present_ns: median(present),
        absent_ns: median(miss),
        bits_per_key: filter.len() as f64 * 8.0 / keys.len() as f64,
        predicted,
    }
}

fn arg(args: &[String], name: &str, default: usize) -> usize {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n = arg(&args, "--keys", 1_000_000);
    let probes = arg(&args, "--probes", 1_000_000);
    let runs = arg(&args, "--runs", 3).max(1);
    let keys: Vec<u64> = (0..n as u64).map(|i| hash_key(&i.to_le_bytes())).collect();
    let absent: Vec<u64> = (0..probes as u64)
        .map(|i| hash_key(&(i | 1 << 62).to_le_bytes()))
        .collect();
    let bloom = |bpk: f64| {
        let p = BloomPolicy::new(bpk);
        let k = bloomkv::filter::math::optimal_blocked_hashes(bpk);
        let rate = bloomkv::filter::math::blocked_false_positive_rate(bpk * n as f64, n, k);
        (p, rate)
    };
    let mut rows = Vec::new();
    for bpk in [7.5, 9.0, 10.0] {
        let (p, rate) = bloom(bpk);
        rows.push(measure(
            &format!("blocked Bloom {bpk} b/k"),
            &p,
            rate,
            &keys,
            &absent,
            runs,
        ));
    }
    rows.push(measure(
        "binary fuse 8",
        &BinaryFusePolicy::new(),
        BinaryFusePolicy::predicted_fpr(9.0),
        &keys,
        &absent,
        runs,
    ));
    for r in [7, 8, 9] {
        let p = RibbonPolicy::with_result_bits(r);
        rows.push(measure(
            &format!("Ribbon r={r}"),
            &p,
            0.5f64.powi(r as i32),
            &keys,
            &absent,
            runs,
        ));
    }
    println!(
        "{n} keys, {probes} absent probes, median of {runs} runs (ns include the in-place \
         header checks; keys pre-hashed)"
    );
    println!(
        "| kind | bits/key | FPR measured | FPR predicted | build ns/key | probe ns (present) | probe ns (absent) |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.2} | {:.3}% | {:.3}% | {:.1} | {:.1} | {:.1} |",
            r.name,
            r.bits_per_key,
            100.0 * r.fpr,
            100.0 * r.predicted,
            r.build_ns,
            r.present_ns,
            r.absent_ns
        );
    }
}
