//! The command line: the list of subcommands and the option groups they share. Each
//! subcommand takes only the groups it uses (so its `--help` shows only its own flags); its
//! own arguments live in its module, next to the code that uses them.
//!
//! `--db`, `--hex`, `--prefix-len` and `--prefix-delim` were global flags, so scripts pass
//! them before the subcommand too (`kvctl --db DIR get k`): they are still accepted there,
//! hidden from the help, and a value given after the subcommand wins.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::commands::{
    bench, checkpoint, cluster, compact, dedup, delete, delete_range, filter, get, load, put,
    repair, scan, serve, sst, sst_dump, stats, verify,
};
use crate::escape::Codec;

/// The database directory when neither `--db` nor `$KVCTL_DB` names one.
pub const DEFAULT_DB: &str = "./kvdb";

/// kvctl: put, get, scan, load, dedup and inspect a bloomkv database.
#[derive(Debug, Parser)]
#[command(name = "kvctl", version, about, max_term_width = 100)]
#[command(
    after_help = "Each command's own flags: kvctl COMMAND --help. The database is --db DIR, else \
                  $KVCTL_DB, else ./kvdb.\n\nExit status: 0 ok, 1 key not found (or `filter check` \
                  of one absent item), 2 usage error or malformed input, 3 database error \
                  (missing, corrupt, I/O), 4 stdout closed while `dedup` ran."
)]
pub struct Cli {
    /// The flags accepted before the subcommand (hidden: each command has its own).
    #[command(flatten)]
    pub top: TopArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The old global flags, before the subcommand: still accepted, for scripts.
#[derive(Debug, clap::Args)]
pub struct TopArgs {
    #[arg(long, value_name = "DIR", hide = true)]
    db: Option<PathBuf>,
    #[arg(long, hide = true)]
    hex: bool,
    #[arg(long, value_name = "N", hide = true, conflicts_with = "prefix_delim")]
    prefix_len: Option<usize>,
    #[arg(long, value_name = "C", hide = true, value_parser = one_byte)]
    prefix_delim: Option<u8>,
}

/// `--db`, for the commands that use a database.
#[derive(Debug, Default, clap::Args)]
pub struct DbArg {
    /// Database directory [default: $KVCTL_DB, else ./kvdb].
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
}

/// `--hex`, for the commands that take or print keys and values.
#[derive(Debug, Default, clap::Args)]
pub struct HexArg {
    /// Keys and values, in and out, are hex digits (any bytes can pass); without it they are
    /// taken literally and printed with non-printable bytes escaped (\xNN, \t, \n, \\).
    #[arg(long)]
    pub hex: bool,
}

/// The prefix-filter flags, for the commands that write tables or scan by prefix.
#[derive(Debug, Default, clap::Args)]
pub struct PrefixArgs {
    /// Build prefix filters over the first N bytes of each key (tables written by this
    /// command), and use them in `scan --prefix` (for prefixes of exactly N bytes).
    #[arg(long, value_name = "N", conflicts_with = "prefix_delim")]
    pub prefix_len: Option<usize>,
    /// Build prefix filters over each key up to and including the first byte C (one ASCII
    /// character, e.g. `/` or `:`), and use them in `scan --prefix` (for such prefixes).
    #[arg(long, value_name = "C", value_parser = one_byte)]
    pub prefix_delim: Option<u8>,
}

/// The groups every command that puts or reads keys and values in a database takes first:
/// `--db`, `--hex` and the prefix-filter flags.
#[derive(Debug, Default, clap::Args)]
pub struct DataArgs {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub hex: HexArg,
    #[command(flatten)]
    pub prefix: PrefixArgs,
}

/// `--quiet` and `--json`, for the commands that end with a report.
#[derive(Debug, Default, clap::Args)]
pub struct ReportArgs {
    /// Print no report (errors still go to stderr, with the exit status).
    #[arg(long, short, conflicts_with = "json")]
    pub quiet: bool,
    /// The report as one JSON object on stdout (on stderr where stdout carries data).
    #[arg(long)]
    pub json: bool,
}

/// A single ASCII character as a byte.
fn one_byte(s: &str) -> Result<u8, String> {
    match s.as_bytes() {
        [b] if b.is_ascii() => Ok(*b),
        _ => Err(format!("{s:?} is not one ASCII character")),
    }
}

/// What a command runs with: its groups' flags, resolved against the ones given before the
/// subcommand and the environment.
#[derive(Debug, Clone)]
pub struct GlobalArgs {
    /// The database directory.
    pub db: PathBuf,
    /// `--hex`.
    pub hex: bool,
    /// `--prefix-len`.
    pub prefix_len: Option<usize>,
    /// `--prefix-delim`.
    pub prefix_delim: Option<u8>,
    /// `--quiet`: no report.
    pub quiet: bool,
    /// `--json`: the report as JSON.
    pub json: bool,
}

impl GlobalArgs {
    /// The byte convention `--hex` selects.
    pub fn codec(&self) -> Codec {
        Codec::new(self.hex)
    }
}

impl TopArgs {
    /// The command's context: its own flags where given, else those before the subcommand,
    /// else `$KVCTL_DB` and the defaults.
    pub fn resolve(
        &self,
        db: Option<&DbArg>,
        hex: Option<&HexArg>,
        prefix: Option<&PrefixArgs>,
        report: Option<&ReportArgs>,
    ) -> GlobalArgs {
        let own_db = db.and_then(|d| d.db.clone());
        let dir = own_db
            .or_else(|| self.db.clone())
            .or_else(|| std::env::var_os("KVCTL_DB").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from(DEFAULT_DB));
        let (prefix_len, prefix_delim) = match prefix {
            Some(p) if p.prefix_len.is_some() || p.prefix_delim.is_some() => {
                (p.prefix_len, p.prefix_delim)
            }
            _ => (self.prefix_len, self.prefix_delim),
        };
        GlobalArgs {
            db: dir,
            hex: hex.is_some_and(|h| h.hex) || self.hex,
            prefix_len,
            prefix_delim,
            quiet: report.is_some_and(|r| r.quiet),
            json: report.is_some_and(|r| r.json),
        }
    }

    /// [`TopArgs::resolve`] for a command taking [`DataArgs`] (and maybe a report).
    pub fn resolve_data(&self, data: &DataArgs, report: Option<&ReportArgs>) -> GlobalArgs {
        self.resolve(Some(&data.db), Some(&data.hex), Some(&data.prefix), report)
    }

    /// Whether `--db` was given before the subcommand.
    pub fn db_given(&self) -> bool {
        self.db.is_some()
    }
}

/// The subcommands. Adding one: a variant here, a match arm in `main.rs`, a module.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Set KEY to VALUE (creates the database if missing).
    Put(put::Args),
    /// Print the value of KEY; exit 1 if absent.
    Get(get::Args),
    /// Delete KEY (no error if absent; the database must exist unless --create).
    Delete(delete::Args),
    /// Delete every key from START up to, not including, END (one range tombstone).
    DeleteRange(delete_range::Args),
    /// Print key, TAB, value lines in key order (the help text says it as `key<TAB>value`).
    #[command(about = "Print \"key<TAB>value\" lines in key order")]
    Scan(scan::Args),
    /// Store key, TAB, value lines from FILE or stdin.
    #[command(about = "Store \"key<TAB>value\" lines from FILE or stdin (creates the database)")]
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
    /// Rebuild a database that no longer opens (damaged MANIFEST, CURRENT, tables or WAL)
    /// from every readable table block and WAL record; damaged files go to DIR/lost/.
    Repair(repair::Args),
    /// Inspect SSTable files directly (no database needed).
    #[command(subcommand)]
    Sst(sst::Command),
    /// The old name of `sst dump`.
    #[command(name = "sst-dump", hide = true)]
    SstDump(sst_dump::Args),
    /// Standalone Bloom filter files: new, add, check, info, remove (no database needed).
    #[command(subcommand)]
    Filter(filter::Command),
    /// Serve a database over the Redis protocol (the flags of `bloomkv-server`, with the
    /// database named by --db like every command; stops on SIGINT/SIGTERM).
    Serve(serve::Args),
    /// Run the W1 read-amplification benchmark on a fresh temporary database of its own.
    Bench(bench::Args),
    /// Membership of a replicated cluster (bloomkv-cluster nodes), through any node's
    /// client port: status, add, remove.
    #[command(subcommand)]
    Cluster(cluster::Command),
}
