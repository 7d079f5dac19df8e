//! `kvctl verify`.

use crate::args::GlobalArgs;
use crate::exit::CliError;
use crate::open;

/// Arguments of `verify` (none).
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Reads every table of the database whole (`Db::verify`, read-only open) and prints what
/// it checked; damage is exit 3 naming the file and offset.
pub fn run(g: &GlobalArgs, _a: Args) -> Result<(), CliError> {
    let db = open::existing(g)?;
    let r = db
        .verify()
        .map_err(CliError::with(format_args!("verify {}", g.db.display())))?;
    println!(
        "verified {}: {} tables, {} entries, {} bytes: no damage found",
        g.db.display(),
        r.tables,
        r.entries,
        r.bytes
    );
    Ok(())
}
