//! kvctl, the command-line tool of bloomkv: parse the command line, dispatch to the
//! subcommand's module, turn its outcome into an exit status (see `exit.rs`).
//!
//! Adding a subcommand takes one variant in `args::Command`, one match arm below, and one
//! module exposing `Args` (a `clap::Args` holding the option groups it uses) and
//! `run(&GlobalArgs, Args) -> Result<(), CliError>`.

mod args;
mod commands;
mod escape;
mod exit;
mod input;
mod open;
mod output;
mod progress;

use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use crate::args::{Cli, Command};
use crate::commands::{
    bench, checkpoint, cluster, compact, dedup, delete, delete_range, filter, get, load, put,
    repair, scan, serve, sst, stats, verify,
};

fn main() -> ExitCode {
    // `kvctl serve` takes `bloomkv-server`'s flags; its `--dir` is accepted as another name
    // of `--db` but not shown, so the help names the database one way, as every command does.
    let matches = Cli::command()
        .mut_subcommand("serve", |s| s.mut_arg("dir", |a| a.hide(true)))
        .get_matches();
    let dir_given = matches
        .subcommand_matches("serve")
        .is_some_and(|s| s.value_source("dir") == Some(ValueSource::CommandLine));
    let Cli { top, command } = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let result = match command {
        Command::Put(a) => put::run(&top.resolve_data(&a.data, None), a),
        Command::Get(a) => get::run(&top.resolve(Some(&a.db), Some(&a.hex), None, None), a),
        Command::Delete(a) => delete::run(&top.resolve_data(&a.data, None), a),
        Command::DeleteRange(a) => delete_range::run(&top.resolve_data(&a.data, None), a),
        Command::Scan(a) => scan::run(&top.resolve_data(&a.data, None), a),
        Command::Load(a) => load::run(&top.resolve_data(&a.data, Some(&a.report)), a),
        Command::Dedup(a) => dedup::run(&top.resolve_data(&a.data, Some(&a.report)), a),
        Command::Stats(a) => stats::run(&top.resolve(Some(&a.db), Some(&a.hex), None, None), a),
        Command::Compact(a) => {
            let g = top.resolve(Some(&a.db), None, Some(&a.prefix), Some(&a.report));
            compact::run(&g, a)
        }
        Command::Checkpoint(a) => {
            let g = top.resolve(Some(&a.db), None, None, Some(&a.report));
            checkpoint::run(&g, a)
        }
        Command::Verify(a) => {
            let g = top.resolve(Some(&a.db), None, None, Some(&a.report));
            verify::run(&g, a)
        }
        Command::Repair(a) => {
            let g = top.resolve(Some(&a.db), None, None, Some(&a.report));
            repair::run(&g, a)
        }
        Command::Sst(c) => sst::run(&top, c),
        Command::SstDump(a) => sst::run(&top, sst::Command::Dump(a)),
        Command::Filter(c) => filter::run(&top, c),
        Command::Serve(a) => {
            let db_given =
                a.db.db.is_some() || top.db_given() || std::env::var_os("KVCTL_DB").is_some();
            let g = top.resolve(Some(&a.db), None, None, None);
            serve::run(&g, a, db_given, dir_given)
        }
        Command::Bench(a) => bench::run(&top.resolve(None, None, None, None), a),
        Command::Cluster(c) => cluster::run(c),
    };
    exit::finish(result)
}
