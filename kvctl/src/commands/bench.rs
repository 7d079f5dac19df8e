//! `kvctl bench`: the W1 read-amplification benchmark and the W2 cold-cache workload
//! (docs/WORKLOAD.md, docs/BENCH.md) on a fresh database, printed as the runner in
//! `kvctl::bench` formats it.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use std::sync::Arc;

use bloomkv::Compression;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use kvctl::bench::{
    FilterKind, Progress, W1Config, W1Report, Workload, headline, json_string, print_trio,
    run_sweep, run_trio, run_w1, runs_chart,
};

use crate::args::GlobalArgs;
use crate::exit::CliError;
use crate::output::Out;
use crate::progress;

/// Arguments of `bench`. Counts and sizes take an optional k/M/G suffix (powers of 1024)
/// and `_` separators: `--keys 200k`, `--block-cache 64M`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The benchmark never touches a database of yours: it writes a fresh one \
    into a temporary directory (deleted afterwards) or into --dir (kept). Without --single or \
    --sweep it runs three times: as configured, with filters off, and with the other filter \
    allocation (uniform <-> Monkey) at the same memory. --workload w2 is one run (as \
    --single) with W2's sizes, compressible values and the page cache evicted before the \
    reopen; --keys and the other flags scale it. The results (results.json) and a chart \
    (read_amplification.svg; --sweep adds results.csv) go into --out unless --no-files."
)]
pub struct Args {
    /// The workload: w1 (1M keys, warm page cache) or w2 (50M keys, values that compress
    /// 2:1, page cache evicted, 64 MiB block cache, 1M-key scan, 1M overwrites).
    #[arg(long, default_value = "w1", value_parser = parse_workload, value_name = "W")]
    pub workload: Workload,
    /// Block compression of every level: none, lz4, zstd or zstd:LEVEL; default none (W1)
    /// or the engine's default, lz4 (W2).
    #[arg(long, value_parser = parse_compression, value_name = "C")]
    pub compression: Option<Compression>,
    /// Keys written by the fill (N); default 1000000 (W1) or 50M (W2).
    #[arg(long, value_parser = parse_count, value_name = "N")]
    pub keys: Option<u64>,
    /// Lookups in each of get_present and get_absent (sets both).
    #[arg(long, value_parser = parse_count, value_name = "N")]
    pub gets: Option<u64>,
    /// Lookups of present keys (overrides --gets).
    #[arg(long, value_parser = parse_count, value_name = "N")]
    pub get_present: Option<u64>,
    /// Lookups of absent keys (overrides --gets).
    #[arg(long, value_parser = parse_count, value_name = "N")]
    pub get_absent: Option<u64>,
    /// Keys read by the range scan; default 100000 (W1) or 1M (W2).
    #[arg(long, value_parser = parse_count, value_name = "N")]
    pub scan: Option<u64>,
    /// Overwrites of existing keys; default 200000 (W1) or 1M (W2).
    #[arg(long, value_parser = parse_count, value_name = "N")]
    pub overwrite: Option<u64>,
    /// Filter bits per key (0: no filters); with --monkey, the average over all keys.
    #[arg(long, default_value = "10", value_parser = parse_bits, value_name = "B")]
    pub bits_per_key: f64,
    /// Monkey filter allocation (same memory, more bits on small levels) instead of uniform.
    #[arg(long)]
    pub monkey: bool,
    /// Filter kind per level, comma-separated, the last for all deeper levels: bloom,
    /// ribbon or fuse (e.g. `bloom,bloom,ribbon`: Ribbon from level 2 down; `bloom`: Bloom
    /// everywhere); `default`: the engine's default (Bloom on level 0, Ribbon below).
    #[arg(long, default_value = "default", value_parser = parse_filter_kinds, value_name = "KINDS")]
    pub filter: FilterKinds,
    /// Block cache capacity in bytes; default 32M (W1) or 64M (W2).
    #[arg(long, value_parser = parse_count, value_name = "BYTES")]
    pub block_cache: Option<u64>,
    /// Read table files through memory maps instead of pread (Options::mmap_reads).
    #[arg(long)]
    pub mmap_reads: bool,
    /// Size levels from the bottom up (Options::level_compaction_dynamic_level_bytes):
    /// `true` or `false`; default: the engine's default.
    #[arg(long, value_name = "BOOL")]
    pub dynamic_levels: Option<bool>,
    /// Seed of the key order and of the phases' random choices.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Build the database(s) here and keep them (must be empty or missing); default: a
    /// temporary directory, deleted afterwards.
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// Drop the database files from the OS page cache before the reopen (Linux; always on
    /// with --workload w2).
    #[arg(long)]
    pub evict_page_cache: bool,
    /// Only the configured run (no filters-off and other-allocation runs).
    #[arg(long, conflicts_with = "sweep")]
    pub single: bool,
    /// Run at 0, 2, ..., 16 bits/key (and write results.csv too).
    #[arg(long)]
    pub sweep: bool,
    /// Where the results (results.json) and the chart (read_amplification.svg) go; created
    /// if missing.
    #[arg(long, default_value = "bench-out", value_name = "DIR")]
    pub out: PathBuf,
    /// Write no files: the results only on stdout.
    #[arg(long, conflicts_with = "out")]
    pub no_files: bool,
    /// JSON for scripts: one object with --single, else an array of one object per run.
    #[arg(long)]
    pub json: bool,
}

impl Args {
    fn config(&self, dir: &Path) -> W1Config {
        let mut c = match self.workload {
            Workload::W1 => W1Config::new(dir),
            Workload::W2 => W1Config::w2(dir),
        };
        c.compression = self.compression.unwrap_or(c.compression);
        c.keys = self.keys.unwrap_or(c.keys);
        if let Some(n) = self.gets {
            (c.get_present, c.get_absent) = (n, n);
        }
        c.get_present = self.get_present.unwrap_or(c.get_present);
        c.get_absent = self.get_absent.unwrap_or(c.get_absent);
        c.scan = self.scan.unwrap_or(c.scan);
        c.overwrite = self.overwrite.unwrap_or(c.overwrite);
        c.bits_per_key = self.bits_per_key;
        c.monkey = self.monkey;
        c.filter_kinds = self.filter.0.clone();
        // A cache larger than the address space is a usage error caught in `run`.
        if let Some(bytes) = self.block_cache {
            c.block_cache_bytes = usize::try_from(bytes).unwrap_or(usize::MAX);
        }
        c.mmap_reads = self.mmap_reads;
        c.dynamic_levels = self.dynamic_levels.unwrap_or(c.dynamic_levels);
        c.seed = self.seed;
        c.evict_page_cache |= self.evict_page_cache;
        c
    }
}

/// Runs the benchmark the flags ask for and prints its headline and tables (or JSON) on
/// stdout, and writes its files; progress goes to stderr.
pub fn run(_g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    if let Some(bytes) = a.block_cache
        && usize::try_from(bytes).is_err()
    {
        return Err(CliError::Usage(format!(
            "--block-cache {bytes} does not fit in memory"
        )));
    }
    if a.keys == Some(0) {
        return Err(CliError::Usage(
            "--keys 0: the benchmark needs at least one key to fill the database with".into(),
        ));
    }
    // Held until the end of `run`: dropping it deletes the temporary database.
    let scratch;
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None => {
            scratch = ScratchDir::new()?;
            scratch.path.clone()
        }
    };
    let bars = MultiProgress::new();
    let mut cfg = a.config(&dir);
    cfg.progress = Some(phase_progress(&bars));
    let files = (!a.no_files).then_some(a.out.as_path());
    if let Some(dir) = files {
        // Fail before minutes of runs, not after, if the results cannot be written.
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::Database(format!("creating {}: {e}", dir.display())))?;
    }
    let mut text = Vec::new();
    let reports;
    if a.sweep {
        let sweep_dir = files.map_or_else(|| dir.join("sweep-files"), Path::to_path_buf);
        reports = sweep(&cfg, &sweep_dir, files.is_some(), a.json, &mut text)?;
        if a.json {
            write_json_array(&reports, &mut text);
        }
    } else if a.single || a.workload == Workload::W2 {
        let bar = Steps::new(1, &bars, cfg.workload);
        bar.start(&cfg.label());
        let report = run_w1(&cfg).map_err(bench_error);
        bar.finish();
        let report = report?;
        if a.json {
            text.extend_from_slice(json_string(&report).as_bytes());
            text.push(b'\n');
        } else {
            text.extend_from_slice(headline(std::slice::from_ref(&report)).as_bytes());
            text.extend_from_slice(report.to_string().as_bytes());
        }
        reports = vec![report];
    } else {
        // run_trio skips the "Monkey without filters" combination: two runs at 0 bits/key.
        let bar = Steps::new(
            if cfg.bits_per_key > 0.0 { 3 } else { 2 },
            &bars,
            cfg.workload,
        );
        let done = run_trio(&cfg, |label| bar.start(label)).map_err(bench_error);
        bar.finish();
        reports = done?;
        if !a.json {
            text.extend_from_slice(headline(&reports).as_bytes());
        }
        print_trio(&reports, a.json, &mut text).map_err(bench_error)?;
    }
    if let Some(dir) = files {
        let written = write_files(dir, &reports, !a.sweep)?;
        if a.json {
            eprintln!("kvctl bench: wrote {written}");
        } else {
            text.extend_from_slice(format!("wrote {written}\n").as_bytes());
        }
    }
    let mut out = Out::new();
    out.bytes(&text)?;
    out.flush()
}

/// Writes results.json (every run) and, unless a sweep wrote its own, the runs' chart into
/// `dir`; returns what it wrote, for the closing line.
fn write_files(dir: &Path, reports: &[W1Report], chart: bool) -> Result<String, CliError> {
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes)
            .map_err(|e| CliError::Database(format!("writing {}: {e}", path.display())))?;
        Ok::<_, CliError>(path.display().to_string())
    };
    let mut json = Vec::new();
    write_json_array(reports, &mut json);
    let mut wrote = vec![write("results.json", &json)?];
    if chart {
        wrote.push(write(
            "read_amplification.svg",
            runs_chart(reports).as_bytes(),
        )?);
    }
    Ok(wrote.join(" and "))
}

/// The sweep: its runs behind a progress bar, then one line per bits/key and the files it
/// wrote (on stderr with --json so stdout stays one JSON document).
fn sweep(
    cfg: &W1Config,
    out_dir: &Path,
    keep_files: bool,
    json: bool,
    text: &mut Vec<u8>,
) -> Result<Vec<W1Report>, CliError> {
    let bar = Steps::new(
        kvctl::bench::SWEEP_BITS.len() as u64,
        &MultiProgress::new(),
        cfg.workload,
    );
    let done = run_sweep(cfg, out_dir, |i, n, label| {
        if i < n {
            bar.start(label);
        }
    });
    bar.finish();
    let (reports, csv, svg) = done.map_err(bench_error)?;
    if !keep_files {
        // --no-files: the sweep wrote its CSV and chart beside its databases.
        let _ = std::fs::remove_file(&csv);
        let _ = std::fs::remove_file(&svg);
    }
    if !json {
        text.extend_from_slice(headline(&reports).as_bytes());
        for r in &reports {
            let line = format!(
                "{:>5} bits/key: {:.4} data blocks per absent get (expected {:.4}), \
                 filters {:.2} MiB, get_absent {:.0}/s\n",
                r.bits_per_key,
                r.absent.measured_blocks_per_get,
                r.absent.expected_blocks_per_get,
                r.filter_bytes as f64 / (1 << 20) as f64,
                r.phase("get_absent").map_or(0.0, |p| p.ops_per_sec())
            );
            text.extend_from_slice(line.as_bytes());
        }
        if keep_files {
            text.extend_from_slice(
                format!("wrote {} and {}\n", csv.display(), svg.display()).as_bytes(),
            );
        }
    } else if keep_files {
        eprintln!("kvctl bench: wrote {} and {}", csv.display(), svg.display());
    }
    Ok(reports)
}

fn write_json_array(reports: &[W1Report], text: &mut Vec<u8>) {
    let items: Vec<String> = reports.iter().map(json_string).collect();
    text.extend_from_slice(format!("[{}]\n", items.join(",")).as_bytes());
}

/// A non-empty `--dir` is the user's mistake (exit 2); anything else is the engine's or the
/// file system's (exit 3).
fn bench_error(e: bloomkv::Error) -> CliError {
    match e {
        bloomkv::Error::InvalidArgument(m) => CliError::Usage(format!("bench: {m}")),
        other => CliError::db("bench", other),
    }
}

/// Progress over the runs: a bar on a terminal, else one line per run on stderr so a log
/// shows where a long benchmark is.
struct Steps {
    bar: ProgressBar,
    total: u64,
    started: std::cell::Cell<u64>,
    workload: Workload,
}

impl Steps {
    fn new(total: u64, bars: &MultiProgress, workload: Workload) -> Steps {
        let bar = progress::steps(total);
        let bar = if bar.is_hidden() { bar } else { bars.add(bar) };
        Steps {
            bar,
            total,
            started: std::cell::Cell::new(0),
            workload,
        }
    }

    /// Announces the next run.
    fn start(&self, label: &str) {
        let n = self.started.get() + 1;
        self.started.set(n);
        if self.bar.is_hidden() {
            eprintln!(
                "kvctl bench: run {n}/{}: {}, {label}",
                self.total,
                self.workload.name()
            );
        } else {
            self.bar.set_position(n - 1);
            self.bar
                .set_message(format!("{}, {label}", self.workload.name()));
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A bar per phase (operations done of the phase's total) below the runs' bar on a
/// terminal; elsewhere one stderr line as each phase starts, so a log shows where a long run
/// is.
fn phase_progress(bars: &MultiProgress) -> Progress {
    let bar = progress::steps(0);
    let bar = if bar.is_hidden() {
        bar
    } else {
        if let Ok(style) =
            ProgressStyle::with_template("[{bar:20}] {pos}/{len} {msg} ({per_sec}, eta {eta})")
        {
            bar.set_style(style.progress_chars("=> "));
        }
        bars.add(bar)
    };
    Progress(Arc::new(move |phase, done, total| {
        if bar.is_hidden() {
            if done == 0 {
                eprintln!("kvctl bench: {phase} ({total} ops)");
            }
            return;
        }
        if done == 0 {
            bar.reset();
            bar.set_length(total);
            bar.set_message(phase.to_string());
        }
        bar.set_position(done);
    }))
}

fn parse_workload(s: &str) -> Result<Workload, String> {
    match s.to_ascii_lowercase().as_str() {
        "w1" => Ok(Workload::W1),
        "w2" => Ok(Workload::W2),
        _ => Err(format!("{s:?}: expected w1 or w2")),
    }
}

fn parse_compression(s: &str) -> Result<Compression, String> {
    s.parse()
}

/// A fresh directory under the system temp dir, removed with everything in it on drop.
struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    fn new() -> Result<ScratchDir, CliError> {
        let base = std::env::temp_dir();
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        // `create_dir` fails if the name exists, so a clash is retried, never shared.
        let mut last = None;
        for attempt in 0..16u32 {
            let path = base.join(format!(
                "kvctl-bench-{}-{nanos:x}-{attempt}",
                std::process::id()
            ));
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(ScratchDir { path }),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    return Err(CliError::Database(format!(
                        "creating a temporary directory in {}: {e}",
                        base.display()
                    )));
                }
            }
        }
        Err(CliError::Database(format!(
            "creating a temporary directory in {}: {}",
            base.display(),
            last.map_or_else(|| "no free name".to_string(), |e| e.to_string())
        )))
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.path) {
            eprintln!("kvctl bench: could not delete {}: {e}", self.path.display());
        }
    }
}

/// A count or byte size: digits with optional `_`, then an optional k/M/G (x1024^n).
fn parse_count(s: &str) -> Result<u64, String> {
    let (digits, shift) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 10),
        Some('m' | 'M') => (&s[..s.len() - 1], 20),
        Some('g' | 'G') => (&s[..s.len() - 1], 30),
        _ => (s, 0),
    };
    let n: u64 = digits
        .replace('_', "")
        .parse()
        .map_err(|e| format!("{s:?} is not a count or size: {e}"))?;
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// Bits per key: a finite number from 0 to 64.
/// `--filter`'s value: one kind per level.
#[derive(Clone, Debug)]
pub struct FilterKinds(pub Vec<FilterKind>);

fn parse_filter_kinds(s: &str) -> Result<FilterKinds, String> {
    if s.trim() == "default" {
        return Ok(FilterKinds(Vec::new()));
    }
    s.split(',')
        .map(|k| {
            FilterKind::parse(k.trim()).ok_or_else(|| {
                format!("{k:?} is not a filter kind (bloom, ribbon or fuse, or default)")
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(FilterKinds)
}

fn parse_bits(s: &str) -> Result<f64, String> {
    let b: f64 = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    if b.is_finite() && (0.0..=64.0).contains(&b) {
        Ok(b)
    } else {
        Err(format!("{s:?} is not between 0 and 64"))
    }
}
