//! The command line: global options and the list of subcommands. Each subcommand's own
//! arguments live in its module, next to the code that uses them.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands::{
    bench, checkpoint, cluster, compact, dedup, delete, delete_range, filter, get, load, put, scan,
    sst, stats, verify,
};
use crate::escape::Codec;

/// kvctl: put, get, scan, load, dedup and inspect a bloomkv database.
#[derive(Debug, Parser)]
#[command(name = "kvctl", version, about, max_term_width = 100)]
#[command(
    after_help = "Exit status: 0 ok, 1 key not found (or `filter check` of one absent item), 2 usage error or malformed input, \
                        3 database error (missing, locked, corrupt, I/O)."
)]
pub struct Cli {
    /// Options every subcommand shares.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options that apply to every subcommand (accepted before or after it).
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// Database directory.
    #[arg(
        long,
        global = true,
        env = "KVCTL_DB",
        default_value = "./kvdb",
        value_name = "DIR"
    )]
    pub db: PathBuf,
    /// Keys and values, in and out, are hex digits (any bytes can pass); without it they are
    /// taken literally and printed with non-printable bytes escaped (\xNN, \t, \n, \\).
    #[arg(long, global = true)]
    pub hex: bool,
    /// Build prefix filters over the first N bytes of each key (tables written by this
    /// command), and use them in `scan --prefix` (for prefixes of exactly N bytes).
    #[arg(long, global = true, value_name = "N", conflicts_with = "prefix_delim")]
    pub prefix_len: Option<usize>,
    /// Build prefix filters over each key up to and including the first byte C (one ASCII
    /// character, e.g. `/` or `:`), and use them in `scan --prefix` (for such prefixes).
    #[arg(long, global = true, value_name = "C", value_parser = one_byte)]
    pub prefix_delim: Option<u8>,
}

/// A single ASCII character as a byte.
fn one_byte(s: &str) -> Result<u8, String> {
    match s.as_bytes() {
        [b] if b.is_ascii() => Ok(*b),
        _ => Err(format!("{s:?} is not one ASCII character")),
    }
}

impl GlobalArgs {
    /// The byte convention `--hex` selects.
    pub fn codec(&self) -> Codec {
        Codec::new(self.hex)
    }
}

/// The subcommands. Adding one: a variant here, a match arm in `main.rs`, a module.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Set KEY to VALUE (creates the database if missing).
    Put(put::Args),
    /// Print the value of KEY; exit 1 if absent.
    Get(get::Args),
    /// Delete KEY (no error if absent).
    Delete(delete::Args),
    /// Delete every key from START up to, not including, END (one range tombstone).
    DeleteRange(delete_range::Args),
    /// Print key, TAB, value lines in key order (the help text says it as `key<TAB>value`).
    #[command(about = "Print \"key<TAB>value\" lines in key order")]
    Scan(scan::Args),
    /// Store key, TAB, value lines from FILE or stdin.
    #[command(about = "Store \"key<TAB>value\" lines from FILE or stdin")]
    Load(load::Args),
    /// Print each line of FILE or stdin the first time it is ever seen, and remember it
    /// (exactly in the database, or with --approx in a Bloom filter file).
    Dedup(dedup::Args),
    /// Per-level shape, filter figures (expected vs measured FPR) and counters.
    Stats(stats::Args),
    /// Merge every level down into one (full manual compaction).
    Compact(compact::Args),
    /// Write a consistent, openable copy of the database into a new directory DIR (tables
    /// hard-linked where possible).
    Checkpoint(checkpoint::Args),
    /// Read every table of the database whole and check it (checksums, key order, entry
    /// counts, filters, the MANIFEST's record of each file).
    Verify(verify::Args),
    /// Inspect SSTable files directly (no database needed).
    #[command(subcommand)]
    Sst(sst::Command),
    /// Standalone Bloom filter files: new, add, check, info, remove (no database needed).
    #[command(subcommand)]
    Filter(filter::Command),
    /// Serve a database over the Redis protocol (the same flags as `bloomkv-server`; stops on
    /// SIGINT/SIGTERM).
    Serve(bloomkv_server::Config),
    /// Run the W1 read-amplification benchmark on a fresh temporary database (ignores --db).
    Bench(bench::Args),
    /// Membership of a replicated cluster (bloomkv-cluster nodes), through any node's
    /// client port: status, add, remove (ignores --db).
    #[command(subcommand)]
    Cluster(cluster::Command),
}
