//! `kvctl checkpoint DIR`.

use std::path::PathBuf;

use serde_json::json;

use crate::args::{DbArg, GlobalArgs, ReportArgs};
use crate::exit::CliError;
use crate::open;
use crate::output::{ReportTo, count, report};

/// Arguments of `checkpoint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub report: ReportArgs,
    /// The directory to create the checkpoint in (must not exist).
    pub dir: PathBuf,
}

/// Writes a checkpoint of the database into a new directory and reports its sequence
/// number. The database is read as a secondary, so this works beside a running writer and
/// writes nothing into the database.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    if a.dir.exists() {
        return Err(CliError::Usage(format!(
            "checkpoint {}: the directory already exists (a checkpoint creates it)",
            a.dir.display()
        )));
    }
    let db = open::existing(g)?;
    let seq = db.checkpoint(&a.dir).map_err(CliError::with(format_args!(
        "checkpoint of {} into {}",
        g.db.display(),
        a.dir.display()
    )))?;
    let tables = db.live_files().len() as u64;
    report(
        g,
        ReportTo::Stdout,
        || {
            format!(
                "checkpoint of {} at sequence {seq} written to {} ({})",
                g.db.display(),
                a.dir.display(),
                count(tables, "table")
            )
        },
        || {
            json!({
                "db": g.db.display().to_string(),
                "checkpoint": a.dir.display().to_string(),
                "sequence": seq,
                "tables": tables,
            })
        },
    )
}
