//! `kvctl repair`: the library's `bloomkv::repair` from the shell, with its report.

use serde_json::json;

use crate::args::{DbArg, GlobalArgs, ReportArgs};
use crate::exit::CliError;
use crate::open;
use crate::output::{ReportTo, count, counted, report};

/// Arguments of `repair`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "The database must not be open (a running writer makes this exit 3, naming \
    its process). Damage is not an error: what could not be read is skipped and reported, and \
    damaged files are moved to DIR/lost/. Run `kvctl verify` afterwards."
)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Rebuilds the database from every readable table block and WAL record.
pub fn run(g: &GlobalArgs, _a: Args) -> Result<(), CliError> {
    let dir = g.db.as_path();
    if !dir.is_dir() {
        // Repair rebuilds a damaged database; it never makes one where there was nothing.
        open::must_exist(dir, "")?;
    }
    let r = bloomkv::repair(dir)
        .map_err(|e| open::failure(format_args!("repair {}", dir.display()), e))?;
    let skipped: Vec<&String> = r
        .tables_dropped
        .iter()
        .chain(&r.tables_damaged)
        .chain(&r.wal_dropped)
        .collect();
    report(
        g,
        ReportTo::Stdout,
        || {
            let mut text = format!(
                "repaired {}: {} read, {} dropped whole, {} with blocks skipped; {} replayed \
                 ({}); {} salvaged into {}; {} bytes skipped; last sequence {}",
                dir.display(),
                count(r.tables_scanned as u64, "table"),
                r.tables_dropped.len(),
                r.tables_damaged.len(),
                count(r.logs_replayed as u64, "WAL file"),
                count(r.wal_records, "record"),
                counted(r.entries_salvaged, "entry", "entries"),
                count(r.tables_written as u64, "table"),
                r.bytes_skipped,
                r.last_sequence,
            );
            for s in &skipped {
                text.push_str("\n  skipped: ");
                text.push_str(s);
            }
            text
        },
        || {
            json!({
                "db": dir.display().to_string(),
                "tables_scanned": r.tables_scanned,
                "tables_dropped": r.tables_dropped,
                "tables_damaged": r.tables_damaged,
                "logs_replayed": r.logs_replayed,
                "wal_records": r.wal_records,
                "wal_dropped": r.wal_dropped,
                "entries_salvaged": r.entries_salvaged,
                "bytes_skipped": r.bytes_skipped,
                "tables_written": r.tables_written,
                "last_sequence": r.last_sequence,
            })
        },
    )
}
