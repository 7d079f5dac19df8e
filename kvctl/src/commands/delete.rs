//! `kvctl delete KEY`.

use std::ffi::OsString;

use crate::args::{DataArgs, GlobalArgs};
use crate::escape::brief;
use crate::exit::CliError;
use crate::open;

/// Arguments of `delete`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    /// Create the database if it is missing (else that is an error, exit 3).
    #[arg(long)]
    pub create: bool,
    /// The key (hex with --hex).
    pub key: OsString,
}

/// Deletes the key (a no-op if absent). A missing database is an error unless `--create`.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let key = g.codec().arg("KEY", a.key)?;
    let db = open::plain(g, open::existing_for_write(g, a.create)?)?;
    // An oversized key is a usage error (exit 2), as for `put`.
    db.delete(&key).map_err(|e| {
        CliError::arg(
            format_args!("delete {} in {}", brief(&key), g.db.display()),
            e,
        )
    })
}
