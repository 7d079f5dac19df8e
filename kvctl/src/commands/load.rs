//! `kvctl load [FILE|-]`: bulk-store `key<TAB>value` lines.

use std::path::PathBuf;

use bloomkv::WriteBatch;

use serde_json::json;

use crate::args::{DataArgs, GlobalArgs, ReportArgs};
use crate::exit::CliError;
use crate::input::Lines;
use crate::output::{ReportTo, counted, report};
use crate::{open, progress};

/// Lines per write batch: large enough that the per-write cost (WAL record, locking)
/// vanishes, small enough that a batch stays a few hundred KB for typical lines.
pub const BATCH_LINES: usize = 1000;

/// Arguments of `load`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub report: ReportArgs,
    /// Input file of `key<TAB>value` lines (split at the first TAB; with --hex both fields
    /// are hex); `-` or nothing reads stdin.
    pub file: Option<PathBuf>,
}

/// Stores every line. A malformed line stops the load with exit 2; every line before it has
/// been stored, nothing from it on.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let codec = g.codec();
    let mut lines = Lines::open(a.file.as_deref())?;
    let db = open::plain(g, open::for_write(g)?)?;
    let name = lines.name.clone();
    let bar = progress::bar(lines.size, &format!("loading {name}"));
    let write = |batch: WriteBatch, last_line: u64| {
        db.write(batch).map_err(CliError::with(format_args!(
            "load into {} (batch ending at {name} line {last_line})",
            g.db.display(),
        )))
    };
    let mut batch = WriteBatch::new();
    let mut buf = Vec::new();
    let mut loaded = 0u64;
    let mut last = 0u64;
    while let Some((no, consumed)) = lines.next_line(&mut buf)? {
        bar.inc(consumed as u64);
        let parsed = buf
            .iter()
            .position(|&b| b == b'\t')
            .ok_or_else(|| "no TAB between key and value".to_string())
            .and_then(|tab| {
                let key = codec.input(&buf[..tab]).map_err(|e| format!("key: {e}"))?;
                let value = codec
                    .input(&buf[tab + 1..])
                    .map_err(|e| format!("value: {e}"))?;
                // Checked here, line by line: the database would refuse the whole batch
                // holding it, losing the good lines before it.
                if key.len() > bloomkv::MAX_KEY_BYTES {
                    return Err(format!(
                        "key of {} bytes exceeds the {}-byte limit",
                        key.len(),
                        bloomkv::MAX_KEY_BYTES
                    ));
                }
                if value.len() > bloomkv::MAX_VALUE_BYTES {
                    return Err(format!(
                        "value of {} bytes exceeds the {}-byte limit",
                        value.len(),
                        bloomkv::MAX_VALUE_BYTES
                    ));
                }
                Ok((key, value))
            });
        let (key, value) = match parsed {
            Ok(kv) => kv,
            Err(why) => {
                // Keep the promise "everything before the bad line is stored".
                if !batch.is_empty() {
                    write(batch, last)?;
                }
                bar.finish_and_clear();
                let kept = match no {
                    1 => "nothing was loaded".to_string(),
                    2 => format!("line 1 was loaded into {}", g.db.display()),
                    n => format!("lines 1 to {} were loaded into {}", n - 1, g.db.display()),
                };
                return Err(CliError::Usage(format!(
                    "{name} line {no}: malformed input ({why}); {kept}"
                )));
            }
        };
        batch.put(&key, &value);
        loaded += 1;
        last = no;
        if batch.len() >= BATCH_LINES {
            write(std::mem::take(&mut batch), last)?;
        }
    }
    if !batch.is_empty() {
        write(batch, last)?;
    }
    bar.finish_and_clear();
    report(
        g,
        ReportTo::Stdout,
        || {
            format!(
                "loaded {} from {name} into {}",
                counted(loaded, "entry", "entries"),
                g.db.display()
            )
        },
        || json!({"db": g.db.display().to_string(), "input": name, "entries": loaded}),
    )
}
