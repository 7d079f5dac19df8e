//! `kvctl dedup [FILE|-]`: the crawler's "have I seen this URL?" job, done exactly.
//!
//! Every line is looked up with `Db::get`; for a line never seen (the common case for a
//! crawler) the tables' Bloom filters rule it out without reading data blocks, and for a
//! filter's false positive the data block read gives the exact answer, so no new line is
//! ever dropped. New lines are printed and stored (key = the line, empty value), so a later
//! run drops them too.

use std::collections::HashSet;
use std::path::PathBuf;

use bloomkv::WriteBatch;

use crate::args::GlobalArgs;
use crate::commands::load::BATCH_LINES;
use crate::exit::CliError;
use crate::input::Lines;
use crate::open;
use crate::output::Out;

/// Arguments of `dedup`.
#[derive(Debug, clap::Args)]
pub struct Args {
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
    /// Items the --state filter is sized for when it is created (needed then).
    #[arg(long, value_name = "N", requires = "approx")]
    pub capacity: Option<usize>,
    /// False-positive rate of the --state filter when it is created.
    #[arg(long, value_name = "P", default_value_t = 0.01, requires = "approx")]
    pub error_rate: f64,
}

/// Prints each line the first time it is ever seen, in input order, byte-exact (with
/// --hex: as lower-case hex). New lines of a batch are printed (and stdout flushed) before
/// the batch is stored: a crash in between prints those lines again next run rather than
/// losing them (at least once, never zero times).
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    if a.approx {
        return crate::commands::filter::dedup_approx(g, a);
    }
    let codec = g.codec();
    let mut lines = Lines::open(a.file.as_deref())?;
    let name = lines.name.clone();
    let db = open::for_write(g)?;
    let mut out = Out::new();
    let store = |batch: WriteBatch, out: &mut Out| -> Result<(), CliError> {
        out.flush()?;
        if batch.is_empty() {
            return Ok(());
        }
        db.write(batch).map_err(CliError::with(format_args!(
            "dedup: storing into {}",
            g.db.display()
        )))
    };
    // Lines new to the database but already printed in the batch not yet stored.
    let mut pending: HashSet<Vec<u8>> = HashSet::new();
    let mut batch = WriteBatch::new();
    let mut buf = Vec::new();
    let (mut read, mut new) = (0u64, 0u64);
    while let Some((no, _)) = lines.next_line(&mut buf)? {
        read += 1;
        // Checked here, line by line, as `load` does: the lookup (and the batch holding the
        // line) would be refused by the database as a whole, a database error rather than
        // the input's.
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
                store(batch, &mut out)?;
                return Err(CliError::Usage(format!(
                    "{name} line {no}: malformed input ({why}); the lines before it were handled"
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
        new += 1;
        batch.put(&key, b"");
        pending.insert(key);
        if batch.len() >= BATCH_LINES {
            store(std::mem::take(&mut batch), &mut out)?;
            pending.clear();
        }
    }
    store(batch, &mut out)?;
    eprintln!(
        "dedup: {read} lines read from {name}, {new} new (printed and stored in {}), {} seen before",
        g.db.display(),
        read - new
    );
    Ok(())
}
