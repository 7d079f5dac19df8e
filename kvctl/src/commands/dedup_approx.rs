//! `kvctl dedup --approx --state FILE`: the crawler dedup with a filter file instead of the
//! database. A line the filter reports present is dropped; otherwise it is printed and
//! added. The filter is saved (atomically) at the end, also when a malformed line or a full
//! filter stops the run, so the lines printed are remembered.
//!
//! A plain (or counting) filter that holds its capacity stops the run at the next new line,
//! unless the state was created `--scalable` (it grows) or `--force` says to go on: past its
//! capacity a filter's false-positive rate climbs, and every false positive is a new line
//! dropped without a word.
//!
//! When the reader of stdout goes away (`dedup --approx | head`), the run stops at once and
//! the state is not saved: no line of the run is marked as seen, so none is lost (the next
//! run prints them again), and the exit status is 4.
//!
//! Expected false positives: each truly new line is dropped with the filter's current rate
//! `f`, so each printed line stands for about `f / (1 - f)` lost ones; summed over printed
//! lines, with `f` read from the bits (`estimated_fpr`) every few lines (at most
//! [`FPR_SAMPLE_LINES`]) and averaged between two readings.

use bloomkv::filter::{AnyFilter, BloomFilter, FilterSize, ScalableBloomFilter};
use serde_json::json;

use crate::args::GlobalArgs;
use crate::commands::dedup::Args;
use crate::commands::filter::{check_sizing, file_error, load, save, warn_if_over_capacity};
use crate::escape::Codec;
use crate::exit::CliError;
use crate::input::Lines;
use crate::output::{Out, ReportTo, count, report};

/// Most printed lines between two readings of the filter's estimated false-positive rate
/// (fewer for small filters, whose rate moves faster: a thousandth of the capacity).
const FPR_SAMPLE_LINES: u64 = 1024;

/// Whether `f` is a filter that must not take one more new item: a plain or counting one
/// holding its capacity (a counting state only ever counts each printed line once).
fn full(f: &AnyFilter) -> bool {
    !matches!(f, AnyFilter::Scalable(_)) && f.len() >= f.capacity()
}

/// Runs the approximate dedup.
pub fn run(g: &GlobalArgs, a: Args) -> Result<(), CliError> {
    let cmd = "dedup --approx";
    let codec = g.codec();
    let Some(state) = a.state.as_deref() else {
        return Err(CliError::Usage(format!("{cmd}: --state FILE is required")));
    };
    let created = !state.exists();
    let mut f = if created {
        let Some(capacity) = a.capacity else {
            return Err(CliError::Usage(format!(
                "{cmd}: {} does not exist; --capacity N is needed to create it",
                state.display()
            )));
        };
        check_sizing(cmd, capacity, a.error_rate)?;
        let made = if a.scalable {
            ScalableBloomFilter::new(capacity, a.error_rate).map(AnyFilter::Scalable)
        } else {
            BloomFilter::new(FilterSize::for_items(capacity, a.error_rate)).map(AnyFilter::Bloom)
        };
        made.map_err(|e| file_error(cmd, state, e))?
    } else {
        let f = load(cmd, state)?;
        if a.scalable && !matches!(f, AnyFilter::Scalable(_)) {
            return Err(CliError::Usage(format!(
                "{cmd}: {} is a {} filter; --scalable applies when the state is created (make \
                 a scalable one with `kvctl filter new --scalable`)",
                state.display(),
                f.kind_name()
            )));
        }
        f
    };
    let mut lines = Lines::open(a.file.as_deref())?;
    let name = lines.name.clone();
    let mut out = Out::new();
    let mut buf = Vec::new();
    let (mut read, mut new) = (0u64, 0u64);
    let lost_per_line = |fpr: f64| fpr / (1.0 - fpr).max(f64::EPSILON);
    let interval = (f.capacity() as u64 / 1000).clamp(1, FPR_SAMPLE_LINES);
    let mut before = lost_per_line(f.estimated_fpr());
    let mut since_sample = 0u64;
    let mut expected_lost = 0.0f64;
    let result = (|| -> Result<(), CliError> {
        while let Some((no, _)) = lines.next_line(&mut buf)? {
            read += 1;
            let key = codec.input(&buf).map_err(|why| {
                CliError::Usage(format!(
                    "{name} line {no}: malformed input ({why}); the lines before it were handled"
                ))
            })?;
            if f.contains(&key) {
                continue;
            }
            if !a.force && full(&f) {
                return Err(CliError::Usage(format!(
                    "{cmd}: {} is full: it holds its capacity of {} items, and more would push \
                     its false-positive rate past {} (new lines would be dropped unseen); {name} \
                     line {no} and the lines after it were not handled. Create a larger state \
                     (--capacity), a growing one (--scalable), or pass --force to go on anyway",
                    state.display(),
                    f.capacity(),
                    f.error_rate()
                )));
            }
            f.insert(&key);
            match codec {
                Codec::Text => out.bytes(&buf)?,
                Codec::Hex => out.bytes(codec.show(&key).as_bytes())?,
            }
            out.bytes(b"\n")?;
            new += 1;
            since_sample += 1;
            if since_sample == interval {
                let after = lost_per_line(f.estimated_fpr());
                expected_lost += since_sample as f64 * (before + after) / 2.0;
                (before, since_sample) = (after, 0);
            }
        }
        Ok(())
    })();
    // Printed lines are remembered only once they reached the reader: stdout is flushed
    // first, and a closed stdout leaves the state as it was.
    let flushed = out.flush();
    if matches!(result, Err(CliError::BrokenPipe)) || matches!(flushed, Err(CliError::BrokenPipe)) {
        return Err(CliError::OutputClosed(format!(
            "{cmd}: stdout was closed after {} of {name}; {} left as it was, so none of the {} \
             printed is marked as seen (the next run prints them again)",
            count(read, "line"),
            state.display(),
            count(new, "new line")
        )));
    }
    if created && new == 0 && matches!(&result, Err(CliError::Usage(_))) {
        // Nothing printed: a state the run never used is not left behind.
        return result;
    }
    save(cmd, state, &f)?;
    result?;
    flushed?;
    if since_sample > 0 {
        let after = lost_per_line(f.estimated_fpr());
        expected_lost += since_sample as f64 * (before + after) / 2.0;
    }
    let dropped = read - new;
    let expected = expected_lost.min(dropped as f64);
    report(
        g,
        ReportTo::Stderr,
        || {
            format!(
                "dedup --approx: {} read from {name}, {new} new (printed), {dropped} dropped as \
                 seen before; of those about {expected:.1} are expected to be false positives \
                 (new lines lost). {} {}: {} items, capacity {}, estimated false-positive rate \
                 now {:.4}%",
                count(read, "line"),
                if created { "Created" } else { "Updated" },
                state.display(),
                f.len(),
                f.capacity(),
                100.0 * f.estimated_fpr()
            )
        },
        || {
            json!({
                "state": state.display().to_string(),
                "kind": f.kind_name(),
                "created": created,
                "input": name,
                "lines": read,
                "new": new,
                "dropped": dropped,
                "expected_false_positives": expected,
                "items": f.len(),
                "capacity": f.capacity(),
                "estimated_fpr": f.estimated_fpr(),
            })
        },
    )?;
    warn_if_over_capacity(state, &f);
    Ok(())
}
