//! W2 (docs/WORKLOAD.md): many keys in random order with values that compress about 2:1,
//! filled and settled, closed, evicted from the page cache, reopened with a 64 MiB block
//! cache; then cold present and absent gets, a long scan and overwrites. Per phase: ops/s,
//! exact latency percentiles, read syscalls and device bytes per op; for the fill: device
//! write amplification, bytes on disk and how long writers were held up.

use std::path::Path;
use std::time::Instant;

use kvctl::bench::{KeySpace, Latencies, ProcIo, SplitMix64, distinct_indices, evict_dir, mix};

use crate::engines::{Engine, Res};

/// Key plus value bytes per entry.
const ENTRY_BYTES: u64 = 16 + 100;
/// A put slower than this counts as stalled time.
const STALL_NS: u64 = 1_000_000;
/// A put slower than this breaks the "no stall longer than 100 ms" target.
const LONG_STALL_NS: u64 = 100_000_000;

pub struct Sizes {
    pub keys: u64,
    pub gets: u64,
    pub scan: u64,
    pub overwrite: u64,
    pub seed: u64,
}

pub struct Phase {
    pub name: &'static str,
    pub ops: u64,
    pub secs: f64,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub p999_ns: Option<u64>,
    pub io: Option<ProcIo>,
}

impl Phase {
    pub fn ops_per_sec(&self) -> f64 {
        self.ops as f64 / self.secs.max(1e-9)
    }
    pub fn per_op(&self, f: impl Fn(&ProcIo) -> u64) -> Option<f64> {
        self.io.map(|io| f(&io) as f64 / self.ops.max(1) as f64)
    }
}

pub struct Report {
    pub engine: &'static str,
    pub phases: Vec<Phase>,
    /// Device bytes written during fill and settle / user bytes.
    pub write_amplification: f64,
    /// Bytes of the engine's directory after settle.
    pub disk_bytes: u64,
    pub user_bytes: u64,
    pub longest_put_ns: u64,
    pub puts_over_100ms: u64,
    /// Sum of the latencies of puts slower than 1 ms, fill and overwrite.
    pub stalled_secs: f64,
    /// The process's peak resident memory during this engine's run (`VmHWM`, reset before
    /// it where the kernel allows), this harness's own included: the latency record of the
    /// fill (4 bytes per put) and whatever an engine run before it left allocated. Run one
    /// engine per process (`--only`) to compare.
    pub peak_rss_bytes: Option<u64>,
    /// Resident memory just before this engine's database was opened (`VmRSS`).
    pub start_rss_bytes: Option<u64>,
}

/// `VmHWM` or `VmRSS` of `/proc/self/status`, in bytes.
fn proc_status_bytes(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))?
        .trim()
        .strip_suffix("kB")?
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Resets the process's peak resident memory to its current one (Linux 4.0+; ignored where
/// it cannot).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Times each of `n` operations of a phase.
struct Timer {
    lat: Latencies,
    io0: Option<ProcIo>,
    start: Instant,
    longest_ns: u64,
    over_100ms: u64,
    stalled_ns: u64,
}

impl Timer {
    fn start(n: u64) -> Self {
        Timer {
            lat: Latencies::with_capacity(n as usize),
            io0: ProcIo::now(),
            start: Instant::now(),
            longest_ns: 0,
            over_100ms: 0,
            stalled_ns: 0,
        }
    }
    fn op<T>(&mut self, f: impl FnOnce() -> Res<T>) -> Res<T> {
        let t = Instant::now();
        let r = f()?;
        let ns = t.elapsed().as_nanos();
        self.lat.record(ns);
        let ns = u64::try_from(ns).unwrap_or(u64::MAX);
        self.longest_ns = self.longest_ns.max(ns);
        if ns >= STALL_NS {
            self.stalled_ns += ns;
        }
        if ns >= LONG_STALL_NS {
            self.over_100ms += 1;
        }
        Ok(r)
    }
    fn finish(mut self, name: &'static str, ops: u64) -> (Phase, u64, u64, u64) {
        let secs = self.start.elapsed().as_secs_f64();
        let io = ProcIo::now().zip(self.io0).map(|(b, a)| b.since(a));
        let phase = Phase {
            name,
            ops,
            secs,
            p50_ns: self.lat.quantile(0.5),
            p99_ns: self.lat.quantile(0.99),
            p999_ns: self.lat.quantile(0.999),
            io,
        };
        (phase, self.longest_ns, self.over_100ms, self.stalled_ns)
    }
}

fn progress(engine: &str, phase: &str, done: u64, total: u64) {
    if done.is_multiple_of(1_000_000) || done == total {
        eprintln!("  {engine} {phase}: {done}/{total}");
    }
}

/// Resident memory before the database is created and the reset of the peak, for [`run`]:
/// call before constructing the engine.
pub fn memory_baseline() -> Option<u64> {
    reset_peak_rss();
    proc_status_bytes("VmRSS")
}

pub fn run(e: &mut dyn Engine, s: &Sizes, start_rss_bytes: Option<u64>) -> Res<Report> {
    let name = e.name();
    let ks = KeySpace::new(s.seed);
    let mut rng = SplitMix64::new(mix(s.seed ^ 0x5732));
    let mut v = [0u8; 100];
    let mut phases = Vec::new();

    let io_fill = ProcIo::now();
    let mut t = Timer::start(s.keys);
    for i in 0..s.keys {
        ks.half_repeated_value(i, 0, &mut v);
        t.op(|| e.put(&ks.key(i), &v))?;
        progress(name, "fill", i + 1, s.keys);
    }
    let (fill, mut longest, mut over, mut stalled) = t.finish("fillrandom", s.keys);
    phases.push(fill);

    let t = Timer::start(1);
    e.settle()?;
    let (settle, ..) = t.finish("settle", 1);
    phases.push(settle);
    if let Some(b) = e.write_breakdown() {
        eprintln!("{name} writes after fill and settle:\n{b}");
    }
    let written = ProcIo::now()
        .zip(io_fill)
        .map_or(0, |(b, a)| b.since(a).write_bytes);
    let user_bytes = s.keys * ENTRY_BYTES;
    e.close();
    let disk_bytes = dir_bytes(e.dir())?;
    evict_tree(e.dir())?;

    let t = Timer::start(1);
    e.open()?;
    let (reopen, ..) = t.finish("reopen", 1);
    phases.push(reopen);

    let present = distinct_indices(s.keys, s.gets, &mut rng);
    let mut t = Timer::start(present.len() as u64);
    for &i in &present {
        ks.half_repeated_value(i, 0, &mut v);
        let got = t.op(|| e.get(&ks.key(i)))?;
        if got.as_deref() != Some(&v[..]) {
            return Err(format!("{name}: wrong value for key {i}").into());
        }
    }
    phases.push(t.finish("get_present", present.len() as u64).0);

    let mut t = Timer::start(s.gets);
    for j in 0..s.gets {
        if t.op(|| e.get(&ks.key(s.keys + j)))?.is_some() {
            return Err(format!("{name}: absent key found").into());
        }
    }
    phases.push(t.finish("get_absent", s.gets).0);

    let start = ks.key(rng.below(s.keys));
    let t = Timer::start(1);
    let n = e.scan(&start, s.scan)?;
    phases.push(t.finish("scan", n).0);

    let targets = distinct_indices(s.keys, s.overwrite, &mut rng);
    let mut t = Timer::start(targets.len() as u64);
    for (n, &i) in targets.iter().enumerate() {
        ks.half_repeated_value(i, 1, &mut v);
        t.op(|| e.put(&ks.key(i), &v))?;
        progress(name, "overwrite", n as u64 + 1, targets.len() as u64);
    }
    let (ow, l2, o2, s2) = t.finish("overwrite", targets.len() as u64);
    phases.push(ow);
    longest = longest.max(l2);
    over += o2;
    stalled += s2;

    Ok(Report {
        engine: name,
        phases,
        write_amplification: written as f64 / user_bytes as f64,
        disk_bytes,
        user_bytes,
        longest_put_ns: longest,
        puts_over_100ms: over,
        stalled_secs: stalled as f64 / 1e9,
        peak_rss_bytes: proc_status_bytes("VmHWM"),
        start_rss_bytes,
    })
}

/// Bytes of every file under `dir`.
fn dir_bytes(dir: &Path) -> Res<u64> {
    let mut sum = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        if meta.is_dir() {
            sum += dir_bytes(&entry.path())?;
        } else {
            sum += meta.len();
        }
    }
    Ok(sum)
}

/// Drops every file under `dir` from the page cache (fjall keeps its tables in
/// subdirectories).
fn evict_tree(dir: &Path) -> Res<()> {
    evict_dir(dir)?;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            evict_tree(&entry.path())?;
        }
    }
    Ok(())
}

fn fmt_us(ns: Option<u64>) -> String {
    ns.map_or("-".into(), |n| format!("{:.1}", n as f64 / 1e3))
}

pub fn print(reports: &[Report]) {
    for r in reports {
        println!("\n{}", r.engine);
        println!(
            "{:<12} {:>10} {:>12} {:>9} {:>9} {:>10} {:>9} {:>11}",
            "phase", "ops", "ops/s", "p50 us", "p99 us", "p99.9 us", "syscr/op", "dev B/op"
        );
        for p in &r.phases {
            println!(
                "{:<12} {:>10} {:>12.0} {:>9} {:>9} {:>10} {:>9} {:>11}",
                p.name,
                p.ops,
                p.ops_per_sec(),
                fmt_us(p.p50_ns),
                fmt_us(p.p99_ns),
                fmt_us(p.p999_ns),
                p.per_op(|io| io.syscr)
                    .map_or("-".into(), |x| format!("{x:.4}")),
                p.per_op(|io| io.read_bytes)
                    .map_or("-".into(), |x| format!("{x:.1}")),
            );
        }
        println!(
            "on disk {:.1} MiB (space amplification {:.2}); device write amplification of \
             fill+settle {:.2}; longest put {:.1} ms, {} puts over 100 ms, {:.2} s in puts over 1 ms",
            r.disk_bytes as f64 / (1u64 << 20) as f64,
            r.disk_bytes as f64 / r.user_bytes as f64,
            r.write_amplification,
            r.longest_put_ns as f64 / 1e6,
            r.puts_over_100ms,
            r.stalled_secs,
        );
        let mib = |b: Option<u64>| b.map_or("-".into(), |b| format!("{:.1}", b as f64 / 1048576.0));
        println!(
            "peak RSS {} MiB (resident before open {} MiB)",
            mib(r.peak_rss_bytes),
            mib(r.start_rss_bytes)
        );
    }
    let Some(ours) = reports.first() else {
        return;
    };
    for theirs in reports.iter().skip(1) {
        println!("\nbloomkv / {}", theirs.engine);
        println!(
            "{:<12} {:>12} {:>14} {:>14}",
            "phase", "ops/s ratio", "syscr/op ratio", "dev B/op ratio"
        );
        for (a, b) in ours.phases.iter().zip(&theirs.phases) {
            let ratio = |f: &dyn Fn(&ProcIo) -> u64| match (a.per_op(f), b.per_op(f)) {
                (Some(x), Some(y)) if y > 0.0 => format!("{:.3}", x / y),
                _ => "-".into(),
            };
            println!(
                "{:<12} {:>12.2} {:>14} {:>14}",
                a.name,
                a.ops_per_sec() / b.ops_per_sec(),
                ratio(&|io| io.syscr),
                ratio(&|io| io.read_bytes),
            );
        }
        println!(
            "bytes on disk {:.2}x, write amplification {:.2}x",
            ours.disk_bytes as f64 / theirs.disk_bytes as f64,
            ours.write_amplification / theirs.write_amplification
        );
    }
}
