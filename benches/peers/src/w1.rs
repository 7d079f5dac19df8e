//! W1 (docs/WORKLOAD.md): 1M keys in random order, 100-byte random values, warm page
//! cache; per phase ops/s and read syscalls per op (seekrandom: seeks per second, each
//! seek reading 11 keys), and for the writing phases the longest put.

use std::time::Instant;

use kvctl::bench::{KeySpace, ProcIo, SplitMix64, distinct_indices, mix};

use crate::engines::{Engine, Res};

pub struct PhaseResult {
    pub name: &'static str,
    pub ops: u64,
    pub secs: f64,
    pub syscr: Option<u64>,
    /// The slowest single put (fill and overwrite only).
    pub longest_put_ns: Option<u64>,
}

impl PhaseResult {
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9)
    }
    pub fn syscr_per_op(&self) -> Option<f64> {
        self.syscr.map(|s| s as f64 / self.ops.max(1) as f64)
    }
}

pub struct Sizes {
    pub keys: u64,
    pub gets: u64,
    pub scan: u64,
    pub seed: u64,
}

fn phase(name: &'static str, ops: u64, body: impl FnOnce() -> Res<u64>) -> Res<PhaseResult> {
    let io0 = ProcIo::now();
    let t = Instant::now();
    let done = body()?;
    let secs = t.elapsed().as_secs_f64();
    let syscr = ProcIo::now().zip(io0).map(|(b, a)| b.since(a).syscr);
    Ok(PhaseResult {
        name,
        ops: if done > 0 { done } else { ops },
        secs,
        syscr,
        longest_put_ns: None,
    })
}

/// Puts `kv(i)` for each of the `n` indices `indices`, as one timed phase that also
/// records the slowest put.
fn put_phase(
    name: &'static str,
    e: &mut dyn Engine,
    n: u64,
    indices: impl Iterator<Item = u64>,
    mut kv: impl FnMut(u64) -> ([u8; 16], [u8; 100]),
) -> Res<PhaseResult> {
    let mut longest = 0u64;
    let mut r = phase(name, n, || {
        for i in indices {
            let (k, v) = kv(i);
            let t = Instant::now();
            e.put(&k, &v)?;
            longest = longest.max(u64::try_from(t.elapsed().as_nanos()).unwrap_or(u64::MAX));
        }
        Ok(0)
    })?;
    r.longest_put_ns = Some(longest);
    Ok(r)
}

pub fn run(e: &mut dyn Engine, s: &Sizes) -> Res<Vec<PhaseResult>> {
    let ks = KeySpace::new(s.seed);
    let mut rng = SplitMix64::new(mix(s.seed ^ 0x5731));
    let mut v = [0u8; 100];
    let mut out = Vec::new();
    out.push(put_phase("fillrandom", e, s.keys, 0..s.keys, |i| {
        ks.value(i, 0, &mut v);
        (ks.key(i), v)
    })?);
    out.push(phase("flush", 1, || e.settle().map(|_| 0))?);
    out.push(phase("reopen", 1, || e.reopen().map(|_| 0))?);
    let present = distinct_indices(s.keys, s.gets, &mut rng);
    out.push(phase("get_present", present.len() as u64, || {
        for &i in &present {
            ks.value(i, 0, &mut v);
            if e.get(&ks.key(i))?.as_deref() != Some(&v[..]) {
                return Err(format!("{}: wrong value", e.name()).into());
            }
        }
        Ok(0)
    })?);
    out.push(phase("get_absent", s.gets, || {
        for j in 0..s.gets {
            if e.get(&ks.key(s.keys + j))?.is_some() {
                return Err(format!("{}: absent key found", e.name()).into());
            }
        }
        Ok(0)
    })?);
    let start = ks.key(rng.below(s.keys));
    out.push(phase("scan", s.scan, || e.scan(&start, s.scan))?);
    // db_bench's seekrandom: seek to a random present key, then read it and the next 10.
    let seeks = (s.gets / 10).max(1);
    let seek_to: Vec<u64> = (0..seeks).map(|_| rng.below(s.keys)).collect();
    out.push(phase("seekrandom", seeks, || {
        for &i in &seek_to {
            if e.scan(&ks.key(i), 11)? == 0 {
                return Err(format!("{}: seek found nothing", e.name()).into());
            }
        }
        Ok(0)
    })?);
    let targets = distinct_indices(s.keys, s.gets, &mut rng);
    out.push(put_phase(
        "overwrite",
        e,
        targets.len() as u64,
        targets.iter().copied(),
        |i| {
            ks.value(i, 1, &mut v);
            (ks.key(i), v)
        },
    )?);
    Ok(out)
}

pub fn print(results: &[(&'static str, Vec<PhaseResult>)]) {
    for (name, r) in results {
        println!("\n{name}");
        println!(
            "{:<12} {:>12} {:>10} {:>16}",
            "phase", "ops/s", "syscr/op", "longest put ms"
        );
        for p in r {
            println!(
                "{:<12} {:>12.0} {:>10} {:>16}",
                p.name,
                p.ops_per_sec(),
                p.syscr_per_op().map_or("-".into(), |x| format!("{x:.4}")),
                p.longest_put_ns
                    .map_or("-".into(), |ns| format!("{:.2}", ns as f64 / 1e6))
            );
        }
    }
    let Some((_, ours)) = results.first() else {
        return;
    };
    for (name, theirs) in results.iter().skip(1) {
        println!("\nbloomkv / {name}");
        println!(
            "{:<12} {:>12} {:>16}",
            "phase", "ops/s ratio", "syscr/op ratio"
        );
        for (a, b) in ours.iter().zip(theirs) {
            let sys = match (a.syscr_per_op(), b.syscr_per_op()) {
                (Some(x), Some(y)) if y > 0.0 => format!("{:.3}", x / y),
                _ => "-".into(),
            };
            println!(
                "{:<12} {:>12.2} {:>16}",
                a.name,
                a.ops_per_sec() / b.ops_per_sec(),
                sys
            );
        }
    }
}
