//! `kvctl filter new|add|check|info|remove`: standalone filter files from the shell (what
//! pybloom or RedisBloom's `BF.*` commands give), and the approximate `dedup` state.
//!
//! Files are read whole and saved atomically (temporary file, sync, rename) by the library:
//! an interrupted `add` leaves the previous file intact.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use bloomkv::Error;
use bloomkv::filter::{
    AnyFilter, BloomFilter, CountingBloomFilter, FilterSize, ScalableBloomFilter,
};

use crate::args::{HexArg, ReportArgs, TopArgs};
use crate::escape::Codec;
use crate::exit::CliError;
use crate::input::Lines;
use crate::output::{JSON_FORMAT, Out, ReportTo, document, report};
use serde_json::json;

/// The `filter` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Create an empty filter file for CAPACITY items at ERROR_RATE false positives.
    New(NewArgs),
    /// Add ITEMs (or the lines of stdin); report how many were new.
    Add(AddArgs),
    /// Print `maybe` or `no` for each ITEM (or line of stdin); with one ITEM, exit 0 for
    /// maybe and 1 for no, like grep.
    Check(CheckArgs),
    /// Print the filter's kind, capacity, count, estimated distinct items, bits, k, fill ratio
    /// and estimated FPR.
    Info(InfoArgs),
    /// Remove ITEMs from a counting filter.
    Remove(RemoveArgs),
}

/// Arguments of `filter new`.
#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The filter file to create.
    pub file: PathBuf,
    /// Items the filter is sized for (the first stage's, with --scalable).
    #[arg(long, value_name = "N")]
    pub capacity: usize,
    /// False-positive rate to keep up to CAPACITY items (overall, with --scalable).
    #[arg(long, value_name = "P", default_value_t = 0.01)]
    pub error_rate: f64,
    /// A scalable filter: grows by adding larger, tighter stages, keeping ERROR_RATE.
    #[arg(long, conflicts_with = "counting")]
    pub scalable: bool,
    /// A counting filter (4-bit counters): items can be removed; 4x the memory.
    #[arg(long)]
    pub counting: bool,
    /// Growth factor of a scalable filter's stages (2 or 4).
    #[arg(long, requires = "scalable", default_value_t = ScalableBloomFilter::DEFAULT_GROWTH)]
    pub growth: u32,
    /// Tightening ratio of a scalable filter's stage error rates (0.5..1).
    #[arg(long, requires = "scalable", default_value_t = ScalableBloomFilter::DEFAULT_TIGHTENING)]
    pub tightening: f64,
    /// Replace FILE if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `filter add`.
#[derive(Debug, clap::Args)]
pub struct AddArgs {
    #[command(flatten)]
    pub hex: HexArg,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The filter file.
    pub file: PathBuf,
    /// Items (with --hex, in hex); none reads one item per line from stdin.
    pub items: Vec<OsString>,
}

/// Arguments of `filter check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub hex: HexArg,
    /// The filter file.
    pub file: PathBuf,
    /// Items (with --hex, in hex); none reads one item per line from stdin.
    pub items: Vec<OsString>,
}

/// Arguments of `filter remove`.
#[derive(Debug, clap::Args)]
pub struct RemoveArgs {
    #[command(flatten)]
    pub hex: HexArg,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The counting filter file.
    pub file: PathBuf,
    /// Items to remove (with --hex, in hex).
    #[arg(required = true)]
    pub items: Vec<OsString>,
}

/// Arguments of `filter info`.
#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// The filter file.
    pub file: PathBuf,
    /// One JSON object instead of text (layout in docs/CLI.md).
    #[arg(long)]
    pub json: bool,
}

/// Runs a `filter` subcommand. `top`: the flags given before `filter` (an old `--hex`).
pub fn run(top: &TopArgs, c: Command) -> Result<(), CliError> {
    match c {
        Command::New(a) => new(a),
        Command::Add(a) => {
            let g = top.resolve(None, Some(&a.hex), None, Some(&a.report));
            add(&g, a)
        }
        Command::Check(a) => check(top.resolve(None, Some(&a.hex), None, None).codec(), a),
        Command::Info(a) => info(a),
        Command::Remove(a) => {
            let g = top.resolve(None, Some(&a.hex), None, Some(&a.report));
            remove(&g, a)
        }
    }
}

/// A library error about `file` in `command`: bad arguments are usage errors (exit 2),
/// the rest (I/O, corruption, newer format) file errors (exit 3).
pub fn file_error(command: &str, file: &Path, e: Error) -> CliError {
    match e {
        Error::InvalidArgument(why) => {
            CliError::Usage(format!("{command} {}: {why}", file.display()))
        }
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            CliError::Database(format!(
                "{command} {}: no such filter file (create it with `kvctl filter new`)",
                file.display()
            ))
        }
        other => CliError::Database(format!("{command} {}: {other}", file.display())),
    }
}

/// Loads a filter file of any kind.
pub fn load(command: &str, file: &Path) -> Result<AnyFilter, CliError> {
    AnyFilter::load(file).map_err(|e| file_error(command, file, e))
}

/// Saves a filter file atomically.
pub fn save(command: &str, file: &Path, f: &AnyFilter) -> Result<(), CliError> {
    f.save(file).map_err(|e| file_error(command, file, e))
}

/// Checks `--capacity` and `--error-rate` by their flag names.
pub fn check_sizing(cmd: &str, capacity: usize, error_rate: f64) -> Result<(), CliError> {
    if capacity == 0 {
        return Err(CliError::Usage(format!(
            "{cmd}: --capacity must be at least 1"
        )));
    }
    if !(error_rate > 0.0 && error_rate < 1.0) {
        return Err(CliError::Usage(format!(
            "{cmd}: --error-rate must be strictly between 0 and 1, not {error_rate}"
        )));
    }
    Ok(())
}

/// A rate for people: six decimals, or scientific notation when that would show zeros.
fn rate(x: f64) -> String {
    if x == 0.0 || x >= 1e-4 {
        format!("{x:.6}")
    } else {
        format!("{x:.3e}")
    }
}

fn new(a: NewArgs) -> Result<(), CliError> {
    let cmd = "filter new";
    check_sizing(cmd, a.capacity, a.error_rate)?;
    if !a.force && a.file.exists() {
        return Err(CliError::Usage(format!(
            "{cmd} {}: the file already exists (pass --force to replace it)",
            a.file.display()
        )));
    }
    let size = FilterSize::for_items(a.capacity, a.error_rate);
    let made = if a.scalable {
        ScalableBloomFilter::with_growth(a.capacity, a.error_rate, a.growth, a.tightening)
            .map(AnyFilter::Scalable)
    } else if a.counting {
        CountingBloomFilter::new(size).map(AnyFilter::Counting)
    } else {
        BloomFilter::new(size).map(AnyFilter::Bloom)
    };
    let f = made.map_err(|e| file_error(cmd, &a.file, e))?;
    save(cmd, &a.file, &f)
}

/// The items of a command: its arguments, or else the lines of stdin.
fn for_each_item(
    codec: Codec,
    items: Vec<OsString>,
    mut each: impl FnMut(&[u8]) -> Result<(), CliError>,
) -> Result<(), CliError> {
    if !items.is_empty() {
        for item in items {
            each(&codec.arg("ITEM", item)?)?;
        }
        return Ok(());
    }
    let mut lines = Lines::open(None)?;
    let mut buf = Vec::new();
    while let Some((no, _)) = lines.next_line(&mut buf)? {
        let item = codec
            .input(&buf)
            .map_err(|why| CliError::Usage(format!("stdin line {no}: malformed input ({why})")))?;
        each(&item)?;
    }
    Ok(())
}

fn add(g: &crate::args::GlobalArgs, a: AddArgs) -> Result<(), CliError> {
    let cmd = "filter add";
    let codec = g.codec();
    let mut f = load(cmd, &a.file)?;
    let (mut total, mut new) = (0u64, 0u64);
    let result = for_each_item(codec, a.items, |item| {
        total += 1;
        new += u64::from(f.insert(item));
        Ok(())
    });
    // Keep what was added before a malformed line, as `load` does.
    save(cmd, &a.file, &f)?;
    result?;
    report(
        g,
        ReportTo::Stdout,
        || {
            format!(
                "{}: {new} new, {} already present (or false positives)",
                a.file.display(),
                total - new
            )
        },
        || {
            json!({
                "file": a.file.display().to_string(),
                "items": total,
                "new": new,
                "present": total - new,
                "count": f.len(),
            })
        },
    )?;
    warn_if_over_capacity(&a.file, &f);
    Ok(())
}

/// A plain or counting filter past its capacity keeps working at a higher rate: say so.
///
/// The load is the distinct items: a plain filter's `len` (inserts that were new); for a
/// counting filter, whose `len` counts every insertion (the same item added 11 times is 11),
/// the distinct items its counters suggest (`estimated_len`), since repeats of an item add no
/// false positives. A scalable filter grows instead.
pub fn warn_if_over_capacity(file: &Path, f: &AnyFilter) {
    let (load, what) = match f {
        AnyFilter::Bloom(b) => (b.len(), "items"),
        AnyFilter::Counting(c) => (c.estimated_len(), "distinct items (estimated)"),
        AnyFilter::Scalable(_) => return,
    };
    if load > f.capacity() {
        eprintln!(
            "kvctl: warning: {} holds {load} {what}, past its capacity of {}: estimated \
             false-positive rate {:.4}% (built for {}%)",
            file.display(),
            f.capacity(),
            100.0 * f.estimated_fpr(),
            100.0 * f.error_rate()
        );
    }
}

fn check(codec: Codec, a: CheckArgs) -> Result<(), CliError> {
    let f = load("filter check", &a.file)?;
    let single = a.items.len() == 1;
    let mut out = Out::new();
    let mut last = false;
    for_each_item(codec, a.items, |item| {
        last = f.contains(item);
        out.line(if last { "maybe" } else { "no" })
    })?;
    out.flush()?;
    if single && !last {
        return Err(CliError::Silent(crate::exit::NOT_FOUND));
    }
    Ok(())
}

fn info(a: InfoArgs) -> Result<(), CliError> {
    let f = load("filter info", &a.file)?;
    let bytes = f.to_bytes().len() as u64;
    let (layout, stages, saturated) = match &f {
        AnyFilter::Bloom(b) => (format!("{:?}", b.layout()).to_lowercase(), 1, None),
        AnyFilter::Counting(c) => (
            format!("{:?}", c.layout()).to_lowercase(),
            1,
            Some(c.saturated_counters()),
        ),
        AnyFilter::Scalable(s) => ("standard".to_string(), s.stages() as u64, None),
    };
    let mut out = Out::new();
    if a.json {
        let mut o = json!({
            "file": a.file.display().to_string(),
            "kind": f.kind_name(),
            "layout": layout,
            "capacity": f.capacity(),
            "count": f.len(),
            "estimated_len": f.estimated_len(),
            "error_rate": f.error_rate(),
            "bits": f.bit_len(),
            "k": f.num_hashes(),
            "fill_ratio": f.fill_ratio(),
            "estimated_fpr": f.estimated_fpr(),
            "bytes": bytes,
        });
        if let AnyFilter::Scalable(s) = &f {
            o["stages"] = json!(stages);
            o["growth"] = json!(s.growth());
            o["tightening"] = json!(s.tightening());
        }
        if let Some(sat) = saturated {
            o["saturated_counters"] = json!(sat);
        }
        out.line(&document(JSON_FORMAT, o).to_string())?;
    } else {
        let counters = if matches!(f, AnyFilter::Counting(_)) {
            " (4-bit counters)"
        } else {
            ""
        };
        out.line(&format!("file            {}", a.file.display()))?;
        out.line(&format!("kind            {}", f.kind_name()))?;
        out.line(&format!("layout          {layout}"))?;
        out.line(&format!("capacity        {}", f.capacity()))?;
        out.line(&format!("count           {}", f.len()))?;
        out.line(&format!("distinct (est.) {}", f.estimated_len()))?;
        out.line(&format!("error rate      {}", f.error_rate()))?;
        out.line(&format!("bits            {}{counters}", f.bit_len()))?;
        out.line(&format!("k               {}", f.num_hashes()))?;
        out.line(&format!("fill ratio      {:.4}", f.fill_ratio()))?;
        out.line(&format!("estimated FPR   {}", rate(f.estimated_fpr())))?;
        out.line(&format!("bytes           {bytes}"))?;
        if let AnyFilter::Scalable(s) = &f {
            out.line(&format!(
                "stages          {stages} (growth {}, tightening {})",
                s.growth(),
                s.tightening()
            ))?;
        }
        if let Some(sat) = saturated {
            out.line(&format!("saturated       {sat} counters"))?;
        }
    }
    out.flush()
}

fn remove(g: &crate::args::GlobalArgs, a: RemoveArgs) -> Result<(), CliError> {
    let cmd = "filter remove";
    let codec = g.codec();
    let mut f = load(cmd, &a.file)?;
    let AnyFilter::Counting(c) = &mut f else {
        return Err(CliError::Usage(format!(
            "{cmd} {}: a {} filter cannot remove items; only counting filters can \
             (`kvctl filter new --counting`)",
            a.file.display(),
            f.kind_name()
        )));
    };
    let (mut removed, mut absent) = (0u64, 0u64);
    for item in a.items {
        if c.remove(codec.arg("ITEM", item)?) {
            removed += 1;
        } else {
            absent += 1;
        }
    }
    save(cmd, &a.file, &f)?;
    report(
        g,
        ReportTo::Stdout,
        || {
            format!(
                "{}: {removed} removed, {absent} not present",
                a.file.display()
            )
        },
        || {
            json!({
                "file": a.file.display().to_string(),
                "removed": removed,
                "absent": absent,
                "count": f.len(),
            })
        },
    )
}
