//! `kvctl dedup [FILE|-]`: the crawler's "have I seen this URL?" job, done exactly.
//!
//! Every line is looked up with `Db::get`; for a line never seen (the common case for a
//! crawler) the tables' Bloom filters rule it out without reading data blocks, and for a
//! filter's false positive the data block read gives the exact answer, so no new line is
//! ever dropped. New lines are printed and stored (key = the line, empty value), so a later
//! run drops them too.
//!
//! A batch's new lines are printed and stdout flushed before the batch is stored, so a line
//! is marked as seen only once it was handed to the reader. When the reader goes away
//! (`dedup | head`), dedup stops at once, stores nothing more, and exits 4 saying how many
//! lines it marked as seen: the pipe may have held some of them unread when the reader left.

use std::collections::HashSet;
use std::path::PathBuf;

use bloomkv::WriteBatch;
use serde_json::json;

use crate::args::{DataArgs, GlobalArgs, ReportArgs};
use crate::commands::load::BATCH_LINES;
use crate::exit::CliError;
use crate::input::Lines;
use crate::open;
use crate::output::{Out, ReportTo, count, report};

/// Arguments of `dedup`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub report: ReportArgs,
    /// Input file (one item per line; with --hex each line is hex); `-` or nothing reads
    /// stdin.
    pub file: Option<PathBuf>,
    /// Approximate: remember lines in a Bloom filter file (--state) instead of the database.
    /// Uses a fraction of the memory and no database, but a new line is dropped when it is
    /// a false positive of the filter; the summary says how many are expected.
    #[arg(long, requires = "state")]
    pub approx: bool,
    /// The filter file of --approx: created if missing, saved atomically at the end.
    #[arg(long, value_name = "FILE", requires = "approx")]
    pub state: Option<PathBuf>,
    /// Items the --state filter is sized for when it is created (needed then). A plain
    /// filter that reaches it stops the run, unless --scalable or --force.
    #[arg(long, value_name = "N", requires = "approx")]
    pub capacity: Option<usize>,
    /// False-positive rate of the --state filter when it is created.
    #[arg(long, value_name = "P", default_value_t = 0.01, requires = "approx")]
    pub error_rate: f64,
    /// Create the --state filter scalable: it grows past --capacity, keeping --error-rate.
    #[arg(long, requires = "approx", conflicts_with = "force")]
    pub scalable: bool,
    /// Go on past the --state filter's capacity (its false-positive rate then climbs, and
    /// more new lines are dropped).
    #[arg(long, requires = "approx")]
    pub force: bool,
}

/// Prints each line the first time it is ever seen, in input order, byte-exact (with
/// --hex: as lower-case hex). New lines of a batch are printed (and stdout flushed) before
/// the batch is stored: a crash in between prints those lines again next run rather than
/// losing them (at least once, never zero times).
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    if a.approx {
        return crate::commands::dedup_approx::run(g, a);
    }
    let codec = g.codec();
    let mut lines = Lines::open(a.file.as_deref())?;
    let name = lines.name.clone();
    let db = open::plain(g, open::for_write(g)?)?;
    let mut out = Out::new();
    // New lines printed, and of those stored (marked as seen).
    let (mut printed, mut stored) = (0u64, 0u64);
    let store = |batch: WriteBatch, out: &mut Out, stored: &mut u64| -> Result<(), CliError> {
        out.flush()?;
        if batch.is_empty() {
            return Ok(());
        }
        let n = batch.len() as u64;
        db.write(batch).map_err(CliError::with(format_args!(
            "dedup: storing into {}",
            g.db.display()
        )))?;
        *stored += n;
        Ok(())
    };
    // Lines new to the database but already printed in the batch not yet stored.
    let mut pending: HashSet<Vec<u8>> = HashSet::new();
    let mut batch = WriteBatch::new();
    let mut buf = Vec::new();
    let mut read = 0u64;
    let result = (|| -> Result<(), CliError> {
        while let Some((no, _)) = lines.next_line(&mut buf)? {
            read += 1;
            // Checked here, line by line, as `load` does: the lookup (and the batch holding
            // the line) would be refused by the database as a whole, a database error
            // rather than the input's.
            let key = match codec.input(&buf).and_then(|k| {
                if k.len() > bloomkv::MAX_KEY_BYTES {
                    Err(format!(
                        "line of {} bytes exceeds the {}-byte key limit",
                        k.len(),
                        bloomkv::MAX_KEY_BYTES
                    ))
                } else {
                    Ok(k)
                }
            }) {
                Ok(k) => k,
                Err(why) => {
                    store(std::mem::take(&mut batch), &mut out, &mut stored)?;
                    return Err(CliError::Usage(format!(
                        "{name} line {no}: malformed input ({why}); the lines before it were \
                         handled"
                    )));
                }
            };
            if pending.contains(&key) {
                continue;
            }
            let seen = db.get(&key).map_err(CliError::with(format_args!(
                "dedup: looking up {name} line {no} in {}",
                g.db.display()
            )))?;
            if seen.is_some() {
                continue;
            }
            match codec {
                crate::escape::Codec::Text => out.bytes(&buf)?,
                crate::escape::Codec::Hex => out.bytes(codec.show(&key).as_bytes())?,
            }
            out.bytes(b"\n")?;
            printed += 1;
            batch.put(&key, b"");
            pending.insert(key);
            if batch.len() >= BATCH_LINES {
                store(std::mem::take(&mut batch), &mut out, &mut stored)?;
                pending.clear();
            }
        }
        store(std::mem::take(&mut batch), &mut out, &mut stored)
    })();
    match result {
        Err(CliError::BrokenPipe) => {
            return Err(CliError::OutputClosed(format!(
                "dedup: stdout was closed after {} of {name}; {} marked as seen in {} (the \
                 reader may have left some of them unread in the pipe) and will not be printed \
                 again; the other {} printed since were not stored and will be printed again \
                 by the next run",
                count(read, "line"),
                count(stored, "new line"),
                g.db.display(),
                printed - stored
            )));
        }
        other => other?,
    }
    report(
        g,
        ReportTo::Stderr,
        || {
            format!(
                "dedup: {} read from {name}, {printed} new (printed and stored in {}), {} seen \
                 before",
                count(read, "line"),
                g.db.display(),
                read - printed
            )
        },
        || {
            json!({
                "db": g.db.display().to_string(),
                "input": name,
                "lines": read,
                "new": printed,
                "seen_before": read - printed,
            })
        },
    )
}
