//! Rendering of a `get --explain` trace ([`bloomkv::GetExplain`]) as a small table.

use std::fmt::Write as _;

use bloomkv::sstable::{FilterVerdict, table_file_name};
use bloomkv::{GetExplain, TableProbe};

use crate::escape::Codec;
use crate::output::count;

/// The trace as text lines: memtables, then every table consulted in order, then totals.
pub fn render(t: &GetExplain, key: &[u8], codec: Codec) -> String {
    let mut s = String::new();
    let found_in = |src: &str| t.source == src;
    let _ = writeln!(
        s,
        "explain: get {} at sequence {}",
        codec.show(key),
        t.snapshot
    );
    let mem = if found_in("memtable") {
        answer(t)
    } else {
        "miss"
    };
    let _ = writeln!(s, "  memtable            {mem}");
    let imm = match (t.checked_immutable, found_in("immutable memtable")) {
        (false, _) => "none (no memtable being flushed)",
        (true, true) => answer(t),
        (true, false) => "miss",
    };
    let _ = writeln!(s, "  immutable memtable  {imm}");
    if t.tables.is_empty() {
        let why = if t.source == "nowhere" {
            "no table's key range could hold the key"
        } else {
            "not reached"
        };
        let _ = writeln!(s, "  tables              {why}");
    } else {
        let _ = writeln!(
            s,
            "  {:>2}  {:<5}  {:<10}  {:<9}  {:<7}  {:>6}  {:<5}  result",
            "#", "level", "table", "key range", "filter", "blocks", "from"
        );
        for (i, p) in t.tables.iter().enumerate() {
            let last = i + 1 == t.tables.len();
            let _ = writeln!(
                s,
                "  {:>2}  L{:<4}  {:<10}  {:<9}  {:<7}  {:>6}  {:<5}  {}",
                i + 1,
                p.level,
                table_file_name(p.file_number),
                if p.verdict == FilterVerdict::OutOfRange {
                    "skipped"
                } else {
                    "hit"
                },
                filter_word(p.verdict),
                p.blocks_read + p.cache_hits,
                source_word(p),
                result_word(p, last, t),
            );
        }
    }
    let n = |v: FilterVerdict| t.tables.iter().filter(|p| p.verdict == v).count();
    let checks = n(FilterVerdict::Absent) + n(FilterVerdict::MayContain);
    let fps = t.tables.iter().filter(|p| p.false_positive).count();
    let disk: u32 = t.tables.iter().map(|p| p.blocks_read).sum();
    let cache: u32 = t.tables.iter().map(|p| p.cache_hits).sum();
    let _ = writeln!(
        s,
        "  totals: {} consulted ({} out of key range, {} without filter); {} ({} absent, {} \
         maybe, {fps} false {}); {} ({disk} from disk, {cache} from cache)",
        count(t.tables.len() as u64, "table"),
        n(FilterVerdict::OutOfRange),
        n(FilterVerdict::NoFilter),
        count(checks as u64, "filter check"),
        n(FilterVerdict::Absent),
        n(FilterVerdict::MayContain),
        if fps == 1 { "positive" } else { "positives" },
        count(u64::from(disk + cache), "data block"),
    );
    let where_ = match t.tables.iter().find(|p| p.found) {
        Some(p) if t.source == "table" => {
            format!("{} (L{})", table_file_name(p.file_number), p.level)
        }
        _ => t.source.to_string(),
    };
    let verdict = match (&t.value, t.source) {
        (_, "nowhere") => "not found".to_string(),
        (Some(_), _) => format!("found in {where_}"),
        (None, _) => format!("deleted (tombstone in {where_})"),
    };
    let _ = writeln!(s, "  answer: {verdict}");
    s
}

fn answer(t: &GetExplain) -> &'static str {
    if t.value.is_some() {
        "found"
    } else {
        "found tombstone (deleted)"
    }
}

fn filter_word(v: FilterVerdict) -> &'static str {
    match v {
        FilterVerdict::OutOfRange => "-",
        FilterVerdict::NoFilter => "none",
        FilterVerdict::Absent => "absent",
        FilterVerdict::MayContain => "maybe",
    }
}

fn source_word(p: &TableProbe) -> &'static str {
    match (p.blocks_read, p.cache_hits) {
        (0, 0) => "-",
        (_, 0) => "disk",
        (0, _) => "cache",
        _ => "both",
    }
}

fn result_word(p: &TableProbe, last: bool, t: &GetExplain) -> &'static str {
    match p.verdict {
        _ if p.found && last && t.value.is_none() => "found tombstone",
        _ if p.found => "found",
        _ if p.false_positive => "false positive",
        FilterVerdict::OutOfRange => "not read",
        FilterVerdict::Absent => "ruled out by filter",
        _ => "miss",
    }
}
