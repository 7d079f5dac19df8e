//! `kvctl verify`.

use serde_json::json;

use crate::args::{DbArg, GlobalArgs, ReportArgs};
use crate::exit::CliError;
use crate::open;
use crate::output::{ReportTo, count, counted, report};

/// Arguments of `verify`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Reads every table of the database whole (`Db::verify`, on a secondary) and reports what
/// it checked; damage is exit 3 naming the file and offset.
pub fn run(g: &GlobalArgs, _a: Args) -> Result<(), CliError> {
    let db = open::existing(g)?;
    let r = db
        .verify()
        .map_err(CliError::with(format_args!("verify {}", g.db.display())))?;
    report(
        g,
        ReportTo::Stdout,
        || {
            format!(
                "verified {}: {}, {}, {} bytes: no damage found",
                g.db.display(),
                count(r.tables, "table"),
                counted(r.entries, "entry", "entries"),
                r.bytes
            )
        },
        || {
            json!({
                "db": g.db.display().to_string(),
                "tables": r.tables,
                "entries": r.entries,
                "bytes": r.bytes,
                "damage": false,
            })
        },
    )
}
