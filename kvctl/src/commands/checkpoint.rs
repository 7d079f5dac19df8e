//! `kvctl checkpoint DIR`.

use std::path::PathBuf;

use crate::args::GlobalArgs;
use crate::exit::CliError;
use crate::open;

/// Arguments of `checkpoint`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory to create the checkpoint in (must not exist).
    pub dir: PathBuf,
}

/// Writes a checkpoint of the database into a new directory and reports its sequence number
/// on stderr. The database is opened read-only: a checkpoint writes nothing into it.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let db = open::existing(g)?;
    if a.dir.exists() {
        return Err(CliError::Usage(format!(
            "checkpoint {}: the directory already exists (a checkpoint creates it)",
            a.dir.display()
        )));
    }
    let seq = db.checkpoint(&a.dir).map_err(CliError::with(format_args!(
        "checkpoint of {} into {}",
        g.db.display(),
        a.dir.display()
    )))?;
    eprintln!(
        "checkpoint of {} at sequence {seq} written to {} ({} tables)",
        g.db.display(),
        a.dir.display(),
        db.live_files().len()
    );
    Ok(())
}
