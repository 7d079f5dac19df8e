//! Presenting W1 and W2 results: a table per run, two runs side by side, and JSON for scripts.

use std::fmt::{self, Write as _};

use serde_json::{Value, json};

use super::{Phase, W1Report};

fn fmt_ns(ns: Option<u64>) -> String {
    match ns {
        Some(n) if n >= 10_000 => format!("{:.0}", n as f64 / 1000.0),
        Some(n) => format!("{:.2}", n as f64 / 1000.0),
        None => "-".into(),
    }
}

fn fmt_rate(x: f64) -> String {
    if x >= 1e6 {
        format!("{:.2}M", x / 1e6)
    } else if x >= 1e3 {
        format!("{:.1}k", x / 1e3)
    } else {
        format!("{x:.1}")
    }
}

/// A duration for people: microseconds, milliseconds or seconds.
pub fn fmt_duration(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 1e-3 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{:.0} us", s * 1e6)
    }
}

/// A phase's rate, or `-` for a phase of one operation (flush, reopen): its time is what
/// says how it went, in the time column.
fn phase_rate(p: &Phase) -> String {
    if p.ops <= 1 {
        "-".into()
    } else {
        fmt_rate(p.ops_per_sec())
    }
}

fn fmt_opt(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

fn phase_row(out: &mut String, p: &Phase) {
    let e = &p.engine;
    let _ = writeln!(
        out,
        "{:<12} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>11.4} {:>10.1} {:>9} {:>10}",
        p.name,
        p.ops,
        fmt_duration(p.elapsed),
        phase_rate(p),
        fmt_ns(p.p50_ns),
        fmt_ns(p.p99_ns),
        fmt_ns(p.p999_ns),
        p.per_op(e.data_blocks_read),
        p.per_op(e.bytes_read),
        fmt_opt(p.io.map(|io| p.per_op(io.syscr)), 4),
        fmt_opt(p.io.map(|io| p.per_op(io.read_bytes)), 1),
    );
}

impl fmt::Display for W1Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{}: {} keys, {}, compression {}, block cache {} MiB{}{}, seed {}",
            self.workload,
            self.keys,
            self.label,
            self.compression,
            self.block_cache_bytes >> 20,
            if self.mmap_reads { ", mmap reads" } else { "" },
            if self.dynamic_levels {
                ", dynamic level sizes"
            } else {
                ""
            },
            self.seed
        );
        let _ = writeln!(
            out,
            "{:<12} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>11} {:>10} {:>9} {:>10}",
            "phase",
            "ops",
            "time",
            "ops/s",
            "p50 us",
            "p99 us",
            "p99.9 us",
            "blocks/op",
            "bytes/op",
            "syscr/op",
            "dev B/op"
        );
        for p in &self.phases {
            phase_row(&mut out, p);
        }
        let _ = writeln!(
            out,
            "\non disk {:.1} MiB in {} tables (space amplification {:.2}); device writes of \
             fill+flush {:.2}x the user data; writers stalled {:.3} s ({:.3} s of it stopped), \
             longest stall {:.3} s, longest put {} us",
            self.bytes_on_disk as f64 / (1 << 20) as f64,
            self.tables,
            self.space_amplification,
            self.device_write_amplification,
            self.stall_micros as f64 / 1e6,
            self.stop_micros as f64 / 1e6,
            self.longest_stall_micros as f64 / 1e6,
            // Latencies are kept as u32 nanoseconds: the largest means "at least that".
            if self.longest_put_ns >= u64::from(u32::MAX) {
                format!(">= {}", fmt_ns(Some(self.longest_put_ns)))
            } else {
                fmt_ns(Some(self.longest_put_ns))
            },
        );
        let w = &self.writes;
        let levels: Vec<String> = w
            .compaction_bytes
            .iter()
            .enumerate()
            .filter(|(_, b)| **b > 0)
            .map(|(l, b)| format!("L{l} {:.2}", w.per_user_byte(*b)))
            .collect();
        let _ = writeln!(
            out,
            "bytes written per byte of keys and values, fill+settle (engine's count): WAL {:.2}, flush {:.2}, \
             compaction into {}, re-filter {:.2}; total {:.2}; trivial moves {} ({:.1} MiB moved, \
             none written)",
            w.per_user_byte(w.wal_bytes),
            w.per_user_byte(w.flush_bytes),
            if levels.is_empty() {
                "none".to_string()
            } else {
                levels.join(", ")
            },
            w.per_user_byte(w.refilter_bytes),
            w.per_user_byte(w.total()),
            w.trivial_moves,
            w.trivial_move_bytes as f64 / (1 << 20) as f64,
        );
        let _ = writeln!(
            out,
            "\ntree after the fill (write amplification {:.2}); filters {:.2} MiB, {:.2} bits/key",
            self.write_amplification,
            self.filter_bytes as f64 / (1 << 20) as f64,
            self.filter_bits_per_key
        );
        let _ = writeln!(
            out,
            "{:<6} {:>6} {:>10} {:>9} {:>9} {:>12} {:>12} {:>14}",
            "level",
            "files",
            "entries",
            "MiB",
            "bits/key",
            "expected FPR",
            "measured FPR",
            "probes/absent"
        );
        for l in &self.levels {
            let _ = writeln!(
                out,
                "L{:<5} {:>6} {:>10} {:>9.1} {:>9.2} {:>12.5} {:>12} {:>14.3}",
                l.level,
                l.files,
                l.entries,
                l.bytes as f64 / (1 << 20) as f64,
                l.bits_per_key,
                l.expected_fpr,
                fmt_opt(l.measured_fpr, 5),
                l.probes_per_absent_get
            );
        }
        let a = &self.absent;
        let _ = writeln!(
            out,
            "\nabsent get: {:.3} tables probed, {:.4} data blocks consulted per get \
             (expected {:.4} from the filters' FPRs; {:.4} read from files); measured FPR {}",
            a.tables_probed_per_get,
            a.measured_blocks_per_get,
            a.expected_blocks_per_get,
            a.blocks_read_per_get,
            fmt_opt(a.measured_fpr, 5)
        );
        if a.theory_uniform > 0.0 {
            let _ = writeln!(
                out,
                "textbook at {:.2} bits/key for this shape: uniform {:.4}, Monkey {:.4} false positives per absent get",
                self.filter_bits_per_key, a.theory_uniform, a.theory_monkey
            );
        }
        f.write_str(&out)
    }
}

/// Two runs side by side, phase by phase (ops/s and data blocks per op), then the saving on
/// absent gets as one number: "absent get: 0.011 vs 4.1 data blocks per get, 370x fewer".
pub fn compare_table(a: &W1Report, b: &W1Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<12} {:>22} {:>22} {:>22} {:>22}",
        "phase",
        format!("ops/s (time) {}", a.label),
        format!("ops/s (time) {}", b.label),
        format!("blocks/op {}", a.label),
        format!("blocks/op {}", b.label),
    );
    for pa in &a.phases {
        if let Some(pb) = b.phase(pa.name) {
            let _ = writeln!(
                out,
                "{:<12} {:>22} {:>22} {:>22.4} {:>22.4}",
                pa.name,
                rate_or_time(pa),
                rate_or_time(pb),
                pa.per_op(pa.engine.data_blocks_read),
                pb.per_op(pb.engine.data_blocks_read),
            );
        }
    }
    let (x, y) = (
        a.absent.measured_blocks_per_get,
        b.absent.measured_blocks_per_get,
    );
    let ratio = if x > 0.0 && y > 0.0 {
        if x <= y {
            format!("{:.1}x fewer", y / x)
        } else {
            format!("{:.1}x more", x / y)
        }
    } else {
        "no blocks on one side".into()
    };
    let _ = writeln!(
        out,
        "absent get: {x:.4} vs {y:.4} data blocks per get ({} vs {}), {ratio}",
        a.label, b.label
    );
    out
}

/// A phase's rate, or its time for a phase of one operation.
fn rate_or_time(p: &Phase) -> String {
    if p.ops <= 1 {
        fmt_duration(p.elapsed)
    } else {
        fmt_rate(p.ops_per_sec())
    }
}

/// What the benchmark shows, in two lines to read first: data blocks an absent get reads
/// with filters and without, and the speed-up of absent gets. From the runs with and without
/// filters when both are there (the default mode), else from what one run or a sweep gives.
pub fn headline(reports: &[W1Report]) -> String {
    let absent_rate = |r: &W1Report| r.phase("get_absent").map_or(0.0, |p| p.ops_per_sec());
    let blocks = |r: &W1Report| r.absent.measured_blocks_per_get;
    let with = reports.iter().find(|r| r.bits_per_key > 0.0);
    let without = reports.iter().find(|r| r.bits_per_key <= 0.0);
    match (with, without) {
        (Some(w), Some(o)) if reports.len() <= 3 => {
            let fewer = if blocks(w) > 0.0 {
                format!("{:.1}x fewer", blocks(o) / blocks(w))
            } else {
                "none with filters".to_string()
            };
            let (rw, ro) = (absent_rate(w), absent_rate(o));
            format!(
                "headline: an absent get reads {:.4} data blocks with filters ({:.2} bits/key) \
                 vs {:.4} without: {fewer}; absent gets {}/s vs {}/s ({:.2}x as fast)\n",
                blocks(w),
                w.filter_bits_per_key,
                blocks(o),
                fmt_rate(rw),
                fmt_rate(ro),
                rw / ro.max(f64::MIN_POSITIVE)
            )
        }
        (Some(_), Some(_)) => {
            // A sweep: the ends of the range.
            let (first, last) = (&reports[0], &reports[reports.len() - 1]);
            format!(
                "headline: an absent get reads {:.4} data blocks at {} bits/key and {:.4} at {} \
                 bits/key; absent gets {}/s and {}/s\n",
                blocks(first),
                first.bits_per_key,
                blocks(last),
                last.bits_per_key,
                fmt_rate(absent_rate(first)),
                fmt_rate(absent_rate(last))
            )
        }
        _ => match reports.first() {
            Some(r) => format!(
                "headline: an absent get reads {:.4} data blocks ({:.4} expected from the \
                 filters' rates) at {:.2} bits/key, {}/s; run without --single to compare with \
                 no filters\n",
                blocks(r),
                r.absent.expected_blocks_per_get,
                r.filter_bits_per_key,
                fmt_rate(absent_rate(r))
            ),
            None => String::new(),
        },
    }
}

/// The report as one JSON object.
pub fn json_string(r: &W1Report) -> String {
    let phases: Vec<Value> = r
        .phases
        .iter()
        .map(|p| {
            let e = &p.engine;
            json!({
                "name": p.name,
                "ops": p.ops,
                "seconds": p.elapsed.as_secs_f64(),
                "ops_per_sec": p.ops_per_sec(),
                "p50_ns": p.p50_ns,
                "p99_ns": p.p99_ns,
                "p999_ns": p.p999_ns,
                "max_ns": p.max_ns,
                "data_blocks_read": e.data_blocks_read,
                "block_cache_hits": e.block_cache_hits,
                "bytes_read": e.bytes_read,
                "filter_checks": e.filter_checks,
                "filter_useful": e.filter_useful,
                "filter_false_positives": e.filter_false_positives,
                "syscr": p.io.map(|io| io.syscr),
                "rchar": p.io.map(|io| io.rchar),
                "read_bytes": p.io.map(|io| io.read_bytes),
                "write_bytes": p.io.map(|io| io.write_bytes),
                "device_read_bytes_per_op": p.io.map(|io| p.per_op(io.read_bytes)),
                "read_calls_per_op": p.io.map(|io| p.per_op(io.syscr)),
                "rss_bytes": p.memory.map(|m| m.rss),
                "peak_rss_bytes": p.memory.map(|m| m.peak),
            })
        })
        .collect();
    let levels: Vec<Value> = r
        .levels
        .iter()
        .map(|l| {
            json!({
                "level": l.level,
                "files": l.files,
                "entries": l.entries,
                "bytes": l.bytes,
                "filter_bytes": l.filter_bytes,
                "bits_per_key": l.bits_per_key,
                "expected_fpr": l.expected_fpr,
                "measured_fpr": l.measured_fpr,
                "probes_per_absent_get": l.probes_per_absent_get,
            })
        })
        .collect();
    let a = &r.absent;
    json!({
        "workload": r.workload,
        "label": r.label,
        "compression": r.compression,
        "keys": r.keys,
        "bits_per_key": r.bits_per_key,
        "monkey": r.monkey,
        "filter_kinds": r.filter_kinds,
        "block_cache_bytes": r.block_cache_bytes,
        "mmap_reads": r.mmap_reads,
        "dynamic_levels": r.dynamic_levels,
        "seed": r.seed,
        "filter_bytes": r.filter_bytes,
        "filter_bits_per_key": r.filter_bits_per_key,
        "write_amplification": r.write_amplification,
        "writes": {
            "user_bytes": r.writes.user_bytes,
            "batch_bytes": r.writes.batch_bytes,
            "wal_bytes": r.writes.wal_bytes,
            "flush_bytes": r.writes.flush_bytes,
            "compaction_bytes_per_level": r.writes.compaction_bytes,
            "compactions_per_level": r.writes.compactions,
            "refilter_bytes": r.writes.refilter_bytes,
            "trivial_moves": r.writes.trivial_moves,
            "trivial_move_bytes": r.writes.trivial_move_bytes,
            "total_bytes": r.writes.total(),
        },
        "device_write_amplification": r.device_write_amplification,
        "bytes_on_disk": r.bytes_on_disk,
        "space_amplification": r.space_amplification,
        "tables": r.tables,
        "stall_micros": r.stall_micros,
        "stop_micros": r.stop_micros,
        "longest_stall_micros": r.longest_stall_micros,
        "longest_put_ns": r.longest_put_ns,
        "absent": {
            "traced": a.traced,
            "tables_probed_per_get": a.tables_probed_per_get,
            "expected_blocks_per_get": a.expected_blocks_per_get,
            "measured_blocks_per_get": a.measured_blocks_per_get,
            "blocks_read_per_get": a.blocks_read_per_get,
            "measured_fpr": a.measured_fpr,
            "theory_uniform": a.theory_uniform,
            "theory_monkey": a.theory_monkey,
        },
        "phases": phases,
        "levels": levels,
    })
    .to_string()
}
