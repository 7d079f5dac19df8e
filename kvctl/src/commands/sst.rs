//! `kvctl sst ...`: commands on table files themselves, no database needed.

use crate::args::TopArgs;
use crate::commands::sst_dump;
use crate::exit::CliError;

/// The `sst` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// Print a table's footer, properties, filter parameters, block counts (verifying every
    /// block) and, with --entries, its entries.
    Dump(sst_dump::Args),
}

/// Runs an `sst` subcommand. `top`: the flags given before `sst` (an old `--hex`).
pub fn run(top: &TopArgs, c: Command) -> Result<(), CliError> {
    match c {
        Command::Dump(a) => {
            let g = top.resolve(None, Some(&a.hex), None, None);
            sst_dump::run(&g, a)
        }
    }
}
