//! kvctl, the command-line tool of bloomkv: parse the command line, dispatch to the
//! subcommand's module, turn its outcome into an exit status (see `exit.rs`).
//!
//! Adding a subcommand takes one variant in `args::Command`, one match arm below, and one
//! module exposing `Args` (a `clap::Args`) and `run(&GlobalArgs, Args) -> Result<(), CliError>`.

mod args;
mod commands;
mod escape;
mod exit;
mod input;
mod open;
mod output;
mod progress;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};
use crate::commands::{
    bench, checkpoint, cluster, compact, dedup, delete, delete_range, filter, get, load, put, scan,
    sst, stats, verify,
};

fn main() -> ExitCode {
    let Cli { global, command } = Cli::parse();
    let result = match command {
        Command::Put(a) => put::run(&global, a),
        Command::Get(a) => get::run(&global, a),
        Command::Delete(a) => delete::run(&global, a),
        Command::DeleteRange(a) => delete_range::run(&global, a),
        Command::Scan(a) => scan::run(&global, a),
        Command::Load(a) => load::run(&global, a),
        Command::Dedup(a) => dedup::run(&global, a),
        Command::Stats(a) => stats::run(&global, a),
        Command::Compact(a) => compact::run(&global, a),
        Command::Checkpoint(a) => checkpoint::run(&global, a),
        Command::Verify(a) => verify::run(&global, a),
        Command::Sst(c) => sst::run(&global, c),
        Command::Filter(c) => filter::run(&global, c),
        Command::Bench(a) => bench::run(&global, a),
        Command::Cluster(c) => cluster::run(&global, c),
        Command::Serve(config) => bloomkv_server::run(config).map_err(|e| match e {
            // Options the engine rejects at open are a usage error, as for every command.
            bloomkv_server::ServerError::Engine(e) => open::failure("serve: database", e),
            e => exit::CliError::Database(format!("serve: {e}")),
        }),
    };
    exit::finish(result)
}
