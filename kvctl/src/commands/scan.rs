//! `kvctl scan [--start K] [--end K] [--prefix P [--explain [--json]]] [--limit N] [--reverse]`.

use std::ffi::OsString;
use std::ops::Bound;

use crate::args::{DataArgs, GlobalArgs};
use crate::exit::CliError;
use crate::open;
use crate::output::{JSON_FORMAT, Out, count, document};

/// Arguments of `scan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    /// First key to print (inclusive).
    #[arg(long, value_name = "K")]
    pub start: Option<OsString>,
    /// Stop before this key (exclusive).
    #[arg(long, value_name = "K")]
    pub end: Option<OsString>,
    /// Only keys starting with P (combines with --start/--end).
    #[arg(long, value_name = "P")]
    pub prefix: Option<OsString>,
    /// Print at most N entries (N >= 0; leave --limit out for no limit).
    // Negative numbers reach the parser, which says why they are refused, instead of clap
    // taking `-1` for an unknown flag.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = entry_limit)]
    pub limit: Option<u64>,
    /// Print in descending key order, starting from the end of the range (with --limit, the
    /// last N entries).
    #[arg(long, short = 'r')]
    pub reverse: bool,
    /// With --prefix: also print on stderr, per table, whether its prefix filter let the
    /// scan skip it (needs --prefix-len or --prefix-delim matching the prefix).
    #[arg(long, requires = "prefix")]
    pub explain: bool,
    /// With --explain: the per-table verdicts as one JSON document on stderr (stdout still
    /// carries the lines; layout in docs/CLI.md).
    #[arg(long, requires = "explain")]
    pub json: bool,
}

/// `--limit N`: a count of entries. A negative N is refused rather than read as "no limit"
/// (tools disagree on what -1 means; leaving the flag out already says "no limit").
fn entry_limit(s: &str) -> Result<u64, String> {
    if s.starts_with('-') {
        return Err("N must be 0 or more; leave --limit out to print every entry".to_string());
    }
    s.parse::<u64>()
        .map_err(|e| format!("{e}: N is a count of entries (0 or more)"))
}

/// The smallest key greater than every key starting with `prefix`, or `None` when there is
/// none (the prefix is empty or all 0xff).
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// Whether `bounds` are just the prefix's own key range (no --start or --end narrowed it).
fn only_the_prefix(bounds: &(Bound<Vec<u8>>, Bound<Vec<u8>>), prefix: &[u8]) -> bool {
    let lower = matches!(&bounds.0, Bound::Included(l) if l.as_slice() == prefix);
    let upper = match (&bounds.1, prefix_end(prefix)) {
        (Bound::Excluded(e), Some(p)) => *e == p,
        (Bound::Unbounded, None) => true,
        _ => false,
    };
    lower && upper
}

/// `--explain`: one stderr line per table, then the totals; with `--json`, one JSON
/// document on stderr instead.
fn explain(db: &bloomkv::Db, g: &GlobalArgs, prefix: &[u8], json: bool) {
    use bloomkv::sstable::{FilterVerdict, table_file_name};
    let shown = g.codec().show(prefix);
    let probes = db.explain_prefix(prefix);
    let (mut skipped, mut read) = (0u64, 0u64);
    let mut lines = String::new();
    let mut tables = Vec::with_capacity(probes.len());
    for p in &probes {
        let (what, token) = match p.verdict {
            FilterVerdict::OutOfRange => ("out of key range (not read)", "out_of_key_range"),
            FilterVerdict::Absent => {
                skipped += 1;
                ("absent: skipped", "absent")
            }
            FilterVerdict::MayContain => {
                read += 1;
                ("maybe: read", "maybe")
            }
            FilterVerdict::NoFilter => {
                read += 1;
                ("none: read", "none")
            }
        };
        let file = table_file_name(p.file_number);
        lines.push_str(&format!("  L{:<5} {file:<11} {what}\n", p.level));
        tables.push(serde_json::json!({
            "level": p.level,
            "file_number": p.file_number,
            "file": file,
            "prefix_filter": token,
            "read": matches!(p.verdict, FilterVerdict::MayContain | FilterVerdict::NoFilter),
        }));
    }
    let total = probes.len() as u64;
    let outside = total - skipped - read;
    if json {
        let doc = document(
            JSON_FORMAT,
            serde_json::json!({
                "db": g.db.display().to_string(),
                "prefix": shown,
                "tables": tables,
                "totals": {
                    "tables": total,
                    "skipped": skipped,
                    "read": read,
                    "out_of_key_range": outside,
                },
            }),
        );
        eprintln!("{doc}");
        return;
    }
    eprintln!("explain: scan --prefix {shown}");
    eprintln!("  level  table       prefix filter");
    eprint!("{lines}");
    eprintln!(
        "  {}: {skipped} skipped by their prefix filter, {read} read, {outside} outside the range",
        count(total, "table"),
    );
}

/// Prints `key<TAB>value` lines in key order (descending with `--reverse`).
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let codec = g.codec();
    let start = a.start.map(|k| codec.arg("--start", k)).transpose()?;
    let end = a.end.map(|k| codec.arg("--end", k)).transpose()?;
    let prefix = a.prefix.map(|p| codec.arg("--prefix", p)).transpose()?;
    let db = open::plain(g, open::existing(g)?)?;

    // The scan covers the later of --start and --prefix up to the earlier of --end and the
    // first key past the prefix.
    let lower = match (start, &prefix) {
        (Some(s), Some(p)) => Some(if s >= *p { s } else { p.clone() }),
        (s, p) => s.or_else(|| p.clone()),
    };
    let upper = match (end, prefix.as_deref().and_then(prefix_end)) {
        (Some(e), Some(p)) => Some(if e <= p { e } else { p }),
        (e, p) => e.or(p),
    };
    let bounds = (
        lower.map_or(Bound::Unbounded, Bound::Included),
        upper.map_or(Bound::Unbounded, Bound::Excluded),
    );
    let limit = usize::try_from(a.limit.unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
    let mut out = Out::new();
    let mut line = String::new();
    if a.explain
        && let Some(p) = &prefix
    {
        explain(&db, g, p, a.json);
    }
    // A prefix alone goes through `Db::prefix`, which skips tables by their prefix filters.
    let scan = match (&prefix, &bounds) {
        (Some(p), _) if only_the_prefix(&bounds, p) => db.prefix(p),
        _ => db.scan(bounds),
    };
    let entries: Box<dyn Iterator<Item = _>> = if a.reverse {
        Box::new(scan.rev())
    } else {
        Box::new(scan)
    };
    for kv in entries.take(limit) {
        let (k, v) = kv.map_err(CliError::with(format_args!("scan of {}", g.db.display())))?;
        if let Some(p) = &prefix
            && !k.starts_with(p)
        {
            // Only an all-0xff prefix leaves the range open above; going forward, the first
            // key past the prefix ends it.
            if a.reverse {
                continue;
            }
            break;
        }
        line.clear();
        codec.write(&mut line, &k);
        line.push('\t');
        codec.write(&mut line, &v);
        out.line(&line)?;
    }
    out.flush()
}
