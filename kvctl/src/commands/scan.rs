//! `kvctl scan [--start K] [--end K] [--prefix P] [--limit N] [--reverse]`.

use std::ffi::OsString;
use std::ops::Bound;

use crate::args::GlobalArgs;
use crate::exit::CliError;
use crate::open;
use crate::output::Out;

/// Arguments of `scan`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// First key to print (inclusive).
    #[arg(long, value_name = "K")]
    pub start: Option<OsString>,
    /// Stop before this key (exclusive).
    #[arg(long, value_name = "K")]
    pub end: Option<OsString>,
    /// Only keys starting with P (combines with --start/--end).
    #[arg(long, value_name = "P")]
    pub prefix: Option<OsString>,
    /// Print at most N entries.
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
    /// Print in descending key order, starting from the end of the range (with --limit, the
    /// last N entries).
    #[arg(long, short = 'r')]
    pub reverse: bool,
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

/// Prints `key<TAB>value` lines in key order (descending with `--reverse`).
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let codec = g.codec();
    let start = a.start.map(|k| codec.arg("--start", k)).transpose()?;
    let end = a.end.map(|k| codec.arg("--end", k)).transpose()?;
    let prefix = a.prefix.map(|p| codec.arg("--prefix", p)).transpose()?;
    let db = open::existing(&g.db)?;

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
    let scan = db.scan(bounds);
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
