//! `kvctl put KEY VALUE`.

use std::ffi::OsString;

use crate::args::{DataArgs, GlobalArgs};
use crate::escape::brief;
use crate::exit::CliError;
use crate::open;

/// Arguments of `put`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    /// The key (hex with --hex).
    pub key: OsString,
    /// The value (hex with --hex).
    pub value: OsString,
}

/// Sets the key; creates the database if missing.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let codec = g.codec();
    let key = codec.arg("KEY", a.key)?;
    let value = codec.arg("VALUE", a.value)?;
    let db = open::plain(g, open::for_write(g)?)?;
    db.put(&key, &value).map_err(|e| {
        // An oversized key or value is a usage error (exit 2), like any bad argument.
        CliError::arg(format_args!("put {} in {}", brief(&key), g.db.display()), e)
    })
}
