//! `kvctl delete KEY`.

use std::ffi::OsString;

use crate::args::GlobalArgs;
use crate::escape::brief;
use crate::exit::CliError;
use crate::open;

/// Arguments of `delete`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The key (hex with --hex).
    pub key: OsString,
}

/// Deletes the key (a no-op if absent); creates the database if missing, like every write.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let key = g.codec().arg("KEY", a.key)?;
    let db = open::for_write(g)?;
    // An oversized key is a usage error (exit 2), as for `put`.
    db.delete(&key).map_err(|e| {
        CliError::arg(
            format_args!("delete {} in {}", brief(&key), g.db.display()),
            e,
        )
    })
}
