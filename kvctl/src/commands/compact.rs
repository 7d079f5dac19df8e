//! `kvctl compact`.

use serde_json::json;

use crate::args::{DbArg, GlobalArgs, PrefixArgs, ReportArgs};
use crate::exit::CliError;
use crate::output::{ReportTo, count, report};
use crate::{open, progress};

/// Arguments of `compact`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub prefix: PrefixArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// Runs a full compaction of the existing database with a spinner on a terminal, then
/// reports the shape before and after.
pub fn run(g: &GlobalArgs, _a: Args) -> Result<(), CliError> {
    // Compacting makes sense only of a database that exists: no --create.
    open::must_exist(&g.db, "")?;
    let db = open::for_write(g)?;
    let before = db.stats();
    let spin = progress::spinner(&format!("compacting {}", g.db.display()));
    let done = db.compact();
    spin.finish_and_clear();
    done.map_err(CliError::with(format_args!(
        "compacting {}",
        g.db.display()
    )))?;
    let after = db.stats();
    report(
        g,
        ReportTo::Stdout,
        || {
            format!(
                "compacted {}: {}, {} bytes -> {}, {} bytes ({} bytes read, {} written)",
                g.db.display(),
                count(before.total_files(), "table"),
                total_bytes(&before),
                count(after.total_files(), "table"),
                total_bytes(&after),
                after.compaction_bytes_read,
                after.compaction_bytes_written,
            )
        },
        || {
            json!({
                "db": g.db.display().to_string(),
                "tables_before": before.total_files(),
                "bytes_before": total_bytes(&before),
                "tables_after": after.total_files(),
                "bytes_after": total_bytes(&after),
                "compaction_bytes_read": after.compaction_bytes_read,
                "compaction_bytes_written": after.compaction_bytes_written,
            })
        },
    )
}

fn total_bytes(s: &bloomkv::Stats) -> u64 {
    s.levels.iter().map(|l| l.bytes).sum()
}
