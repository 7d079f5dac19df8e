//! [`Stats`] for people: a few lines a program can print or log, where `{:?}` gives every
//! field (and every table) on one long line.

use std::fmt;

use crate::stats::{LevelStats, Stats};

/// Bytes as B, KiB, MiB or GiB, one decimal.
fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// A rate as a percentage with three decimals, or `-` when nothing was measured.
fn percent(rate: Option<f64>) -> String {
    rate.map_or_else(|| "-".to_string(), |r| format!("{:.3}%", 100.0 * r))
}

fn level_line(f: &mut fmt::Formatter<'_>, level: usize, l: &LevelStats) -> fmt::Result {
    writeln!(
        f,
        "  L{level}: {} {}, {}, {} entries, filters {} ({:.1} bits/key), FPR expected {} \
         measured {}",
        l.files,
        if l.files == 1 { "table" } else { "tables" },
        bytes(l.bytes),
        l.entries,
        bytes(l.filter_bytes),
        l.filter_bits_per_key,
        percent(Some(l.expected_fpr)),
        percent(l.measured_fpr()),
    )
}

impl fmt::Display for Stats {
    /// The shape, level by level (levels without tables left out), then the lookup and
    /// write counters since open. `{:?}` gives every field, the tables' included.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// db.get("k")?;
    /// let text = db.stats().to_string();
    /// assert!(text.starts_with("1 table, "), "{text}");
    /// assert!(text.contains("\n  L0: 1 table, "), "{text}");
    /// assert!(text.contains("gets 1, "), "{text}");
    /// # Ok(())
    /// # }
    /// ```
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let total: u64 = self.levels.iter().map(|l| l.bytes).sum();
        let entries: u64 = self.levels.iter().map(|l| l.entries).sum();
        let files = self.total_files();
        writeln!(
            f,
            "{files} {}, {}, {entries} entries",
            if files == 1 { "table" } else { "tables" },
            bytes(total)
        )?;
        for (level, l) in self.levels.iter().enumerate().filter(|(_, l)| l.files > 0) {
            level_line(f, level, l)?;
        }
        let negatives = self.filter_useful + self.filter_false_positives;
        writeln!(
            f,
            "reads since open: gets {}, filter checks {} ({} ruled out a table, {} false \
             positives, FPR {}), {} unavailable filters, data blocks read {}, block cache hits \
             {}, {} read",
            self.gets,
            self.filter_checks,
            self.filter_useful,
            self.filter_false_positives,
            percent((negatives > 0).then(|| self.filter_false_positives as f64 / negatives as f64)),
            self.filter_unavailable,
            self.data_blocks_read,
            self.block_cache_hits,
            bytes(self.bytes_read),
        )?;
        write!(
            f,
            "writes since open: {} user data, flushes {}, compactions {} ({} read, {} written), \
             write amplification {:.2}, stalled {:.3} s (longest {:.3} s)",
            bytes(self.user_bytes_written),
            self.flushes,
            self.compactions,
            bytes(self.compaction_bytes_read),
            bytes(self.compaction_bytes_written),
            self.write_amplification(),
            self.stall_micros as f64 / 1e6,
            self.longest_stall_micros as f64 / 1e6,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_text_has_a_line_per_used_level_and_no_table_dump() {
        let mut s = Stats {
            levels: Stats::empty_levels(),
            gets: 7,
            ..Stats::default()
        };
        s.levels[0] = LevelStats {
            files: 2,
            bytes: 3 << 20,
            entries: 1000,
            filter_bytes: 1250,
            filter_bits_per_key: 10.0,
            expected_fpr: 0.0082,
            filter_checks: 10,
            filter_useful: 9,
            filter_false_positives: 1,
            ..LevelStats::default()
        };
        s.levels[3].files = 1;
        let text = s.to_string();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        assert_eq!(lines[0], "3 tables, 3.0 MiB, 1000 entries");
        assert!(lines[1].starts_with("  L0: 2 tables, 3.0 MiB, 1000 entries, filters 1.2 KiB"));
        assert!(
            lines[1].ends_with("FPR expected 0.820% measured 10.000%"),
            "{}",
            lines[1]
        );
        assert!(lines[2].starts_with("  L3: 1 table, 0 B"), "{}", lines[2]);
        assert!(
            lines[3].starts_with("reads since open: gets 7, "),
            "{}",
            lines[3]
        );
        assert!(
            lines[4].starts_with("writes since open: 0 B user data"),
            "{}",
            lines[4]
        );
    }
}
