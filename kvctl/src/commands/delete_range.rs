//! `kvctl delete-range START END`.

use std::ffi::OsString;

use crate::args::{DataArgs, GlobalArgs};
use crate::escape::brief;
use crate::exit::CliError;
use crate::open;

/// Arguments of `delete-range`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    /// Create the database if it is missing (else that is an error, exit 3).
    #[arg(long)]
    pub create: bool,
    /// The first key deleted (hex with --hex).
    pub start: OsString,
    /// The first key after the range, not deleted (hex with --hex).
    pub end: OsString,
}

/// Deletes every key in `[START, END)` with one range tombstone. START == END deletes
/// nothing; START > END is a usage error; a missing database is an error unless `--create`.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let codec = g.codec();
    let start = codec.arg("START", a.start)?;
    let end = codec.arg("END", a.end)?;
    if start > end {
        return Err(CliError::Usage(format!(
            "delete-range: START {} sorts after END {}",
            brief(&start),
            brief(&end)
        )));
    }
    let db = open::plain(g, open::existing_for_write(g, a.create)?)?;
    // A bound over the key limit is a usage error (exit 2), as for `put`.
    db.delete_range(&start, &end).map_err(|e| {
        CliError::arg(
            format_args!(
                "delete-range {} {} in {}",
                brief(&start),
                brief(&end),
                g.db.display()
            ),
            e,
        )
    })
}
