//! `kvctl scan [--start K] [--end K] [--prefix P] [--limit N]`.

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
}

/// Prints `key<TAB>value` lines in key order.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let codec = g.codec();
    let start = a.start.map(|k| codec.arg("--start", k)).transpose()?;
    let end = a.end.map(|k| codec.arg("--end", k)).transpose()?;
    let prefix = a.prefix.map(|p| codec.arg("--prefix", p)).transpose()?;
    let db = open::existing(&g.db)?;

    // The scan starts at the later of --start and --prefix and stops at --end, or at the
    // first key past the prefix.
    let lower = match (start, &prefix) {
        (Some(s), Some(p)) => Some(if s >= *p { s } else { p.clone() }),
        (s, p) => s.or_else(|| p.clone()),
    };
    let bounds = (
        lower.map_or(Bound::Unbounded, Bound::Included),
        end.map_or(Bound::Unbounded, Bound::Excluded),
    );
    let limit = usize::try_from(a.limit.unwrap_or(u64::MAX)).unwrap_or(usize::MAX);
    let mut out = Out::new();
    let mut line = String::new();
    for kv in db.scan(bounds).take(limit) {
        let (k, v) = kv.map_err(CliError::with(format_args!("scan of {}", g.db.display())))?;
        if let Some(p) = &prefix
            && !k.starts_with(p)
        {
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
