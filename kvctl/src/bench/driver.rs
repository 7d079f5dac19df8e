//! What `kvctl bench` (and the `w1` example) print: the chosen configuration next to the same
//! run without filters and, at the same memory, the other filter allocation; or a sweep over
//! bits per key written to a CSV file and an SVG chart.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{W1Config, W1Report, compare_table, json_string, run_w1};
use bloomkv::filter::monkey::textbook_fpr;
use bloomkv::{Error, Result};

fn sub(base: &W1Config, name: &str) -> W1Config {
    W1Config {
        dir: base.dir.join(name),
        ..base.clone()
    }
}

/// The three runs of the default `bench`: `base` as given, the same without filters, and
/// the same memory with the other allocation (uniform <-> Monkey). Each gets a
/// subdirectory of `base.dir`; `progress` hears each run's label before it starts.
///
/// # Errors
/// As for [`run_w1`].
pub fn run_trio(base: &W1Config, mut progress: impl FnMut(&str)) -> Result<Vec<W1Report>> {
    let mut reports = Vec::new();
    let other = W1Config {
        monkey: !base.monkey,
        ..sub(base, "alloc")
    };
    let off = W1Config {
        bits_per_key: 0.0,
        monkey: false,
        ..sub(base, "off")
    };
    for cfg in [sub(base, "main"), off, other] {
        if cfg.bits_per_key <= 0.0 && cfg.monkey {
            continue;
        }
        progress(&cfg.label());
        reports.push(run_w1(&cfg)?);
    }
    Ok(reports)
}

/// Writes what [`run_trio`] measured: the first run's table, it against the run without
/// filters, and uniform against Monkey at the same memory (expected and measured data
/// blocks per absent get). With `json`, one JSON array instead.
///
/// # Errors
/// Errors writing to `out`.
pub fn print_trio(reports: &[W1Report], json: bool, out: &mut dyn Write) -> Result<()> {
    let io = |e| Error::Io {
        path: None,
        source: e,
    };
    if json {
        let items: Vec<String> = reports.iter().map(json_string).collect();
        return writeln!(out, "[{}]", items.join(",")).map_err(io);
    }
    let Some(first) = reports.first() else {
        return Ok(());
    };
    write!(out, "{first}").map_err(io)?;
    if let Some(off) = reports.iter().skip(1).find(|r| r.bits_per_key <= 0.0) {
        writeln!(out, "\nfilters on vs off:\n{}", compare_table(first, off)).map_err(io)?;
    }
    let uniform = reports.iter().find(|r| !r.monkey && r.bits_per_key > 0.0);
    let monkey = reports.iter().find(|r| r.monkey);
    if let (Some(u), Some(m)) = (uniform, monkey) {
        let (eu, em) = (
            u.absent.expected_blocks_per_get,
            m.absent.expected_blocks_per_get,
        );
        let (mu, mm) = (
            u.absent.measured_blocks_per_get,
            m.absent.measured_blocks_per_get,
        );
        // The two runs seldom end with the same tree (level-0 tables left over depend on
        // timing), so also compare like for like: the Monkey run's tree with the uniform run's
        // filters, i.e. its probes per absent get times the uniform filters' expected rate.
        let uniform_rate = eu / u.absent.tables_probed_per_get.max(1e-12);
        let same_tree_uniform = m.absent.tables_probed_per_get * uniform_rate;
        writeln!(
            out,
            "uniform vs Monkey at the same memory ({:.2} vs {:.2} bits/key):\n  \
             expected data blocks per absent get {eu:.4} vs {em:.4} ({:.2}x)\n  \
             measured data blocks per absent get {mu:.4} vs {mm:.4} ({:.2}x)\n  \
             absent get ops/s {:.0} vs {:.0}\n  \
             on the Monkey run's own tree (the runs' trees differ), uniform filters of the same \
             memory would consult {:.4} expected vs Monkey's {em:.4} ({:.2}x)",
            u.filter_bits_per_key,
            m.filter_bits_per_key,
            eu / em.max(1e-12),
            mu / mm.max(1e-12),
            u.phase("get_absent").map_or(0.0, |p| p.ops_per_sec()),
            m.phase("get_absent").map_or(0.0, |p| p.ops_per_sec()),
            same_tree_uniform,
            same_tree_uniform / em.max(1e-12),
        )
        .map_err(io)?;
        for (name, r) in [("uniform", u), ("Monkey", m)] {
            let bits: Vec<String> = r
                .levels
                .iter()
                .map(|l| format!("L{} {:.1}", l.level, l.bits_per_key))
                .collect();
            writeln!(out, "  {name} bits/key per level: {}", bits.join(", ")).map_err(io)?;
        }
    }
    Ok(())
}

/// The bits per key of a sweep: 0, 2, ..., 16.
pub const SWEEP_BITS: [f64; 9] = [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0];

/// Runs `base` at every bits/key of [`SWEEP_BITS`] (each in its own subdirectory) and writes
/// `results.csv` and `read_amplification.svg` into `out_dir`. `progress(i, n, label)` is
/// called before each run.
///
/// # Errors
/// As for [`run_w1`]; I/O errors writing the files.
pub fn run_sweep(
    base: &W1Config,
    out_dir: &Path,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<(Vec<W1Report>, PathBuf, PathBuf)> {
    let mut reports = Vec::new();
    for (i, &bits) in SWEEP_BITS.iter().enumerate() {
        let cfg = W1Config {
            bits_per_key: bits,
            ..sub(base, &format!("bits{bits}"))
        };
        progress(i, SWEEP_BITS.len(), &cfg.label());
        reports.push(run_w1(&cfg)?);
    }
    progress(SWEEP_BITS.len(), SWEEP_BITS.len(), "done");
    std::fs::create_dir_all(out_dir).map_err(|e| Error::io(out_dir, e))?;
    let csv = out_dir.join("results.csv");
    std::fs::write(&csv, sweep_csv(&reports)).map_err(|e| Error::io(&csv, e))?;
    let svg = out_dir.join("read_amplification.svg");
    std::fs::write(&svg, super::svg::sweep_chart(&reports)).map_err(|e| Error::io(&svg, e))?;
    Ok((reports, csv, svg))
}

/// Tables an absent get probes with filters off: the theory curve's multiplier.
pub(crate) fn probes_per_absent_get(reports: &[W1Report]) -> f64 {
    reports
        .iter()
        .map(|r| r.absent.tables_probed_per_get)
        .fold(0.0, f64::max)
}

/// The sweep as CSV, one row per run.
pub fn sweep_csv(reports: &[W1Report]) -> String {
    let probes = probes_per_absent_get(reports);
    let mut s = String::from(
        "bits_per_key,filter_bytes,filter_bits_per_key,tables_probed_per_absent_get,\
         blocks_per_absent_get,blocks_read_per_absent_get,expected_blocks_per_absent_get,\
         theory_blocks_per_absent_get,measured_fpr,fillrandom_ops,get_present_ops,\
         get_absent_ops,scan_keys_per_sec,overwrite_ops\n",
    );
    for r in reports {
        let ops = |n: &str| r.phase(n).map_or(0.0, |p| p.ops_per_sec());
        let a = &r.absent;
        s.push_str(&format!(
            "{},{},{:.4},{:.4},{:.6},{:.6},{:.6},{:.6},{},{:.0},{:.0},{:.0},{:.0},{:.0}\n",
            r.bits_per_key,
            r.filter_bytes,
            r.filter_bits_per_key,
            a.tables_probed_per_get,
            a.measured_blocks_per_get,
            a.blocks_read_per_get,
            a.expected_blocks_per_get,
            probes * textbook_fpr(r.bits_per_key),
            a.measured_fpr
                .map_or_else(String::new, |x| format!("{x:.6}")),
            ops("fillrandom"),
            ops("get_present"),
            ops("get_absent"),
            ops("scan"),
            ops("overwrite"),
        ));
    }
    s
}
