//! Runs the W1 workload (docs/BENCH.md) against bloomkv.
//!
//! ```sh
//! cargo run --release --example w1                      # 1M keys: filters on, off, Monkey
//! cargo run --release --example w1 -- --keys 200000 --sweep
//! cargo run --release --example w1 -- --monkey --bits-per-key 6 --json
//! ```
//!
//! Flags: `--keys N --gets N (both lookups) --get-present N --get-absent N --scan N
//! --overwrite N --bits-per-key B --block-cache BYTES[k|M|G] --dir PATH --seed S --monkey
//! --evict-page-cache --json --sweep --single` (`--single`: only the configured run).

use std::io::Write;
use std::path::PathBuf;

use kvctl::bench::{W1Config, json_string, print_trio, run_sweep, run_trio, run_w1};

fn parse_size(s: &str) -> Result<u64, String> {
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1 << 10),
        Some('m' | 'M') => (&s[..s.len() - 1], 1 << 20),
        Some('g' | 'G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.replace('_', "")
        .parse::<u64>()
        .map(|n| n * mul)
        .map_err(|e| format!("bad size {s:?}: {e}"))
}

struct Args {
    cfg: W1Config,
    dir: Option<PathBuf>,
    json: bool,
    sweep: bool,
    single: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        cfg: W1Config::new(""),
        dir: None,
        json: false,
        sweep: false,
        single: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut val = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        let c = &mut a.cfg;
        match flag.as_str() {
            "--keys" => c.keys = parse_size(&val()?)?,
            "--gets" => {
                let n = parse_size(&val()?)?;
                (c.get_present, c.get_absent) = (n, n);
            }
            "--get-present" => c.get_present = parse_size(&val()?)?,
            "--get-absent" => c.get_absent = parse_size(&val()?)?,
            "--scan" => c.scan = parse_size(&val()?)?,
            "--overwrite" => c.overwrite = parse_size(&val()?)?,
            "--bits-per-key" => {
                c.bits_per_key = val()?.parse().map_err(|e| format!("--bits-per-key: {e}"))?
            }
            "--block-cache" => c.block_cache_bytes = parse_size(&val()?)? as usize,
            "--seed" => c.seed = val()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--dir" => a.dir = Some(PathBuf::from(val()?)),
            "--monkey" => c.monkey = true,
            "--evict-page-cache" => c.evict_page_cache = true,
            "--json" => a.json = true,
            "--sweep" => a.sweep = true,
            "--single" => a.single = true,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(a)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = parse()?;
    let tmp = tempfile::tempdir()?;
    args.cfg.dir = args.dir.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let mut out = std::io::stdout().lock();
    if args.sweep {
        let (reports, csv, svg) = run_sweep(&args.cfg, &PathBuf::from("bench-out"), |i, n, l| {
            eprintln!("[{i}/{n}] {l}");
        })?;
        for r in &reports {
            if args.json {
                writeln!(out, "{}", json_string(r))?;
            } else {
                writeln!(
                    out,
                    "{:>5} bits/key: {:.4} blocks/absent get (expected {:.4}), filters {:.2} MiB, get_absent {:.0}/s",
                    r.bits_per_key,
                    r.absent.measured_blocks_per_get,
                    r.absent.expected_blocks_per_get,
                    r.filter_bytes as f64 / (1 << 20) as f64,
                    r.phase("get_absent").map_or(0.0, |p| p.ops_per_sec())
                )?;
            }
        }
        eprintln!("wrote {} and {}", csv.display(), svg.display());
        return Ok(());
    }
    if args.single {
        let r = run_w1(&args.cfg)?;
        if args.json {
            writeln!(out, "{}", json_string(&r))?;
        } else {
            write!(out, "{r}")?;
        }
        return Ok(());
    }
    let reports = run_trio(&args.cfg, |label| eprintln!("running W1: {label}"))?;
    print_trio(&reports, args.json, &mut out)?;
    Ok(())
}
