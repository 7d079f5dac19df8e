//! `kvctl stats [--json] [--tables]`.

use std::fmt::Write as _;

use bloomkv::{Db, LevelStats, Stats, TableStats};

use crate::args::{DbArg, GlobalArgs, HexArg};
use crate::escape::Codec;
use crate::exit::CliError;
use crate::open;
use crate::output::{Out, count};
use serde_json::{Value, json};

/// Version of the `--json` layout; bumped only if a field changes meaning or goes away
/// (new fields may be added).
const JSON_FORMAT: u64 = 1;

/// Arguments of `stats`.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten)]
    pub hex: HexArg,
    /// One JSON object on one line, for scripts (layout documented in docs/CLI.md).
    #[arg(long)]
    pub json: bool,
    /// Also list every table: level, file, entries, bytes, filter bits/key and expected FPR,
    /// filter checks and false positives since open, key range.
    #[arg(long)]
    pub tables: bool,
}

/// Prints the per-level table and the global counters. The database is read as a
/// secondary (no lock: it works beside a running writer), so the counters count since this
/// kvctl process opened it: lookup counters, flushes and compactions are zero.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let db = open::existing(g)?;
    let s = db.stats();
    let codec = g.codec();
    let text = match (a.json, a.tables) {
        (true, false) => json(&db, &s, None),
        (true, true) => json(&db, &s, Some(codec)),
        (false, false) => table(&db, &s),
        (false, true) => format!("{}\n{}", table(&db, &s), tables(&s.tables, codec)),
    };
    let mut out = Out::new();
    out.line(&text)?;
    out.flush()
}

/// A rate as a percentage, or in scientific notation when too small for three decimals of a
/// percent to show it (a filter with many bits per key predicts rates like 1e-9).
pub fn rate(x: f64) -> String {
    if x == 0.0 || x >= 1e-5 {
        format!("{:.3}%", 100.0 * x)
    } else {
        format!("{x:.1e}")
    }
}

fn kib(bytes: u64) -> String {
    format!("{:.1} KiB", bytes as f64 / 1024.0)
}

fn table(db: &Db, s: &Stats) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "database {}", db.path().display());
    let _ = writeln!(
        t,
        "{:<5} {:>6} {:>12} {:>10} {:>8} {:>11} {:>9} {:>9} {:>8} {:>8} {:>8}",
        "level",
        "files",
        "bytes",
        "entries",
        "bits/key",
        "filter mem",
        "exp. FPR",
        "meas. FPR",
        "checks",
        "useful",
        "fp"
    );
    let mut total = LevelStats::default();
    for (i, l) in s.levels.iter().enumerate() {
        row(&mut t, &format!("L{i}"), l);
        total.files += l.files;
        total.bytes += l.bytes;
        total.entries += l.entries;
        total.filter_bytes += l.filter_bytes;
        total.filter_checks += l.filter_checks;
        total.filter_useful += l.filter_useful;
        total.filter_false_positives += l.filter_false_positives;
        // Entry-weighted like the per-level figures.
        total.filter_bits_per_key += l.filter_bits_per_key * l.entries as f64;
        total.expected_fpr += l.expected_fpr * l.entries as f64;
    }
    if total.entries > 0 {
        total.filter_bits_per_key /= total.entries as f64;
        total.expected_fpr /= total.entries as f64;
    }
    row(&mut t, "all", &total);
    let _ = writeln!(
        t,
        "counters since open (this kvctl process, so lookups start at zero): gets {}, filter \
         checks {} (useful {}, false positives {}), filters unavailable {}, data blocks read {}, \
         block cache hits {}, bytes read {}",
        s.gets,
        s.filter_checks,
        s.filter_useful,
        s.filter_false_positives,
        s.filter_unavailable,
        s.data_blocks_read,
        s.block_cache_hits,
        s.bytes_read
    );
    let _ = writeln!(
        t,
        "writes since open: flushes {}, compactions {}, compaction bytes read {} written {}, \
         user bytes written {}, write amplification {:.2}, stall {} us (delayed {} us over {} \
         writes, stopped {} us over {} writes, longest {} us)",
        s.flushes,
        s.compactions,
        s.compaction_bytes_read,
        s.compaction_bytes_written,
        s.user_bytes_written,
        s.write_amplification(),
        s.stall_micros,
        s.write_delay_micros,
        s.writes_delayed,
        s.write_stop_micros,
        s.writes_stopped,
        s.longest_stall_micros
    );
    let per_level: Vec<String> = s
        .levels
        .iter()
        .enumerate()
        .filter(|(_, l)| l.compaction_bytes_written > 0 || l.compactions > 0)
        .map(|(i, l)| {
            format!(
                "L{i} {} ({}, {} read)",
                l.compaction_bytes_written,
                count(l.compactions, "compaction"),
                l.compaction_bytes_read
            )
        })
        .collect();
    let compaction = if per_level.is_empty() {
        "compaction 0 (no compaction ran since open)".to_string()
    } else {
        format!("compaction into {}", per_level.join(", "))
    };
    let _ = writeln!(
        t,
        "bytes written per cause since open: WAL {}, flush {}, {compaction}, re-filter {}; \
         trivial moves {} ({} bytes moved, none written)",
        s.wal_bytes_written,
        s.flush_bytes_written,
        s.refilter_bytes_written,
        s.trivial_moves,
        s.trivial_move_bytes
    );
    let r = db.recovery_report();
    let _ = write!(
        t,
        "recovery at open: {} replayed ({}), {} written, {} dropped",
        count(r.logs_replayed as u64, "WAL file"),
        count(r.records, "record"),
        count(r.tables_written as u64, "table"),
        count(r.dropped.len() as u64, "item")
    );
    t
}

fn row(t: &mut String, name: &str, l: &LevelStats) {
    let measured = l.measured_fpr().map_or("-".to_string(), rate);
    let (bits, expected) = if l.files == 0 {
        ("-".to_string(), "-".to_string())
    } else {
        (
            format!("{:.2}", l.filter_bits_per_key),
            rate(l.expected_fpr),
        )
    };
    let _ = writeln!(
        t,
        "{:<5} {:>6} {:>12} {:>10} {:>8} {:>11} {:>9} {:>9} {:>8} {:>8} {:>8}",
        name,
        l.files,
        l.bytes,
        l.entries,
        bits,
        kib(l.filter_bytes),
        expected,
        measured,
        l.filter_checks,
        l.filter_useful,
        l.filter_false_positives
    );
}

/// One line per table, level by level (level 0 newest first, deeper levels in key order).
fn tables(ts: &[TableStats], codec: Codec) -> String {
    let mut t = String::new();
    let _ = write!(
        t,
        "{:<5} {:>10} {:>10} {:>12} {:>8} {:>9} {:>8} {:>8}  key range",
        "level", "file", "entries", "bytes", "bits/key", "exp. FPR", "checks", "fp"
    );
    for x in ts {
        let _ = write!(
            t,
            "\nL{:<4} {:>10} {:>10} {:>12} {:>8.2} {:>9} {:>8} {:>8}  {} .. {}",
            x.level,
            format!("{:06}.sst", x.file_number),
            x.entries,
            x.bytes,
            x.filter_bits_per_key,
            rate(x.expected_fpr),
            x.filter_checks,
            x.filter_false_positives,
            codec.show(&x.smallest_key),
            codec.show(&x.largest_key),
        );
    }
    t
}

fn json(db: &Db, s: &Stats, tables: Option<Codec>) -> String {
    let levels: Vec<Value> = s
        .levels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "level": i,
                "files": l.files,
                "bytes": l.bytes,
                "entries": l.entries,
                "filter_bytes": l.filter_bytes,
                "filter_bits_per_key": l.filter_bits_per_key,
                "expected_fpr": l.expected_fpr,
                "measured_fpr": l.measured_fpr(),
                "filter_checks": l.filter_checks,
                "filter_useful": l.filter_useful,
                "filter_false_positives": l.filter_false_positives,
                "compactions": l.compactions,
                "compaction_bytes_read": l.compaction_bytes_read,
                "compaction_bytes_written": l.compaction_bytes_written,
            })
        })
        .collect();
    let r = db.recovery_report();
    let mut out = json!({
        "format": JSON_FORMAT,
        "db": db.path().display().to_string(),
        "counters_since": "open",
        "gets": s.gets,
        "filter_checks": s.filter_checks,
        "filter_useful": s.filter_useful,
        "filter_false_positives": s.filter_false_positives,
        "filter_unavailable": s.filter_unavailable,
        "data_blocks_read": s.data_blocks_read,
        "block_cache_hits": s.block_cache_hits,
        "bytes_read": s.bytes_read,
        "flushes": s.flushes,
        "compactions": s.compactions,
        "compaction_bytes_read": s.compaction_bytes_read,
        "compaction_bytes_written": s.compaction_bytes_written,
        "user_bytes_written": s.user_bytes_written,
        "wal_bytes_written": s.wal_bytes_written,
        "flush_bytes_written": s.flush_bytes_written,
        "refilter_bytes_written": s.refilter_bytes_written,
        "trivial_moves": s.trivial_moves,
        "trivial_move_bytes": s.trivial_move_bytes,
        "write_amplification": s.write_amplification(),
        "stall_micros": s.stall_micros,
        "write_delay_micros": s.write_delay_micros,
        "write_stop_micros": s.write_stop_micros,
        "longest_stall_micros": s.longest_stall_micros,
        "writes_delayed": s.writes_delayed,
        "writes_stopped": s.writes_stopped,
        "total_files": s.total_files(),
        "recovery": {
            "logs_replayed": r.logs_replayed,
            "records": r.records,
            "tables_written": r.tables_written,
            "dropped": r.dropped.len(),
        },
        "levels": levels,
    });
    if let Some(codec) = tables {
        let tables: Vec<Value> = s
            .tables
            .iter()
            .map(|x| {
                json!({
                    "level": x.level,
                    "file_number": x.file_number,
                    "entries": x.entries,
                    "bytes": x.bytes,
                    "filter_bytes": x.filter_bytes,
                    "filter_bits_per_key": x.filter_bits_per_key,
                    "expected_fpr": x.expected_fpr,
                    "filter_checks": x.filter_checks,
                    "filter_false_positives": x.filter_false_positives,
                    "smallest_key": codec.show(&x.smallest_key),
                    "largest_key": codec.show(&x.largest_key),
                })
            })
            .collect();
        out["tables"] = Value::Array(tables);
    }
    out.to_string()
}
