//! `kvctl compact`.

use crate::args::GlobalArgs;
use crate::exit::CliError;
use crate::{open, progress};

/// Arguments of `compact` (none).
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs a full compaction with a spinner on a terminal, then reports the shape before and
/// after on stderr.
pub fn run(g: &GlobalArgs, _a: Args) -> Result<(), CliError> {
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
    eprintln!(
        "compacted {}: {} tables, {} bytes -> {} tables, {} bytes ({} bytes read, {} written)",
        g.db.display(),
        before.total_files(),
        total_bytes(&before),
        after.total_files(),
        total_bytes(&after),
        after.compaction_bytes_read,
        after.compaction_bytes_written,
    );
    Ok(())
}

fn total_bytes(s: &bloomkv::Stats) -> u64 {
    s.levels.iter().map(|l| l.bytes).sum()
}
