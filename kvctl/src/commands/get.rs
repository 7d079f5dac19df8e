//! `kvctl get KEY [--explain [--json]]`.

use std::ffi::OsString;

use crate::args::{DbArg, GlobalArgs, HexArg};
use crate::commands::explain;
use crate::escape::brief;
use crate::exit::CliError;
use crate::open;
use crate::output::Out;

/// Arguments of `get`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub hex: HexArg,
    /// The key (hex with --hex).
    pub key: OsString,
    /// Also print, on stderr, how the lookup went: memtables, every table consulted, its
    /// filter's verdict, blocks read (cache or disk), false positives, totals.
    #[arg(long)]
    pub explain: bool,
    /// With --explain: the trace as one JSON document on stderr (the value still goes to
    /// stdout; layout in docs/CLI.md).
    #[arg(long, requires = "explain")]
    pub json: bool,
}

/// Prints the value and a newline; absent: a message on stderr and exit 1.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let codec = g.codec();
    let key = codec.arg("KEY", a.key)?;
    let db = open::plain(g, open::existing(g)?)?;
    let context = || format!("get {} in {}", brief(&key), g.db.display());
    let value = if a.explain {
        let trace = db
            .get_explained(&key)
            .map_err(|e| CliError::arg(context(), e))?;
        if a.json {
            eprintln!("{}", explain::json(&trace, &g.db, &key, codec));
        } else {
            eprint!("{}", explain::render(&trace, &key, codec));
        }
        trace.value
    } else {
        db.get(&key).map_err(|e| CliError::arg(context(), e))?
    };
    match value {
        Some(v) => {
            let mut out = Out::new();
            out.line(&codec.show(&v))?;
            out.flush()
        }
        None => Err(CliError::NotFound(format!(
            "key {} not found in {}",
            codec.show(&key),
            g.db.display()
        ))),
    }
}
