//! A `get --explain` trace ([`bloomkv::GetExplain`]): rendered as a small table, or as one
//! JSON document (`--json`; layout in docs/CLI.md). Both read the trace through the same
//! words below, so they cannot disagree.

use std::fmt::Write as _;

use bloomkv::sstable::{FilterVerdict, table_file_name};
use bloomkv::{GetExplain, TableProbe};
use serde_json::{Value, json};

use crate::escape::Codec;
use crate::output::{JSON_FORMAT, count, document};

/// The trace as text lines: memtables, then every table consulted in order, then totals.
pub fn render(t: &GetExplain, key: &[u8], codec: Codec) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "explain: get {} at sequence {}",
        codec.show(key),
        t.snapshot
    );
    let _ = writeln!(s, "  memtable            {}", memtable_text(memtable(t)));
    let imm = immutable(t).map_or("none (no memtable being flushed)", memtable_text);
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
            let _ = writeln!(
                s,
                "  {:>2}  L{:<4}  {:<10}  {:<9}  {:<7}  {:>6}  {:<5}  {}",
                i + 1,
                p.level,
                table_file_name(p.file_number),
                if in_key_range(p) { "hit" } else { "skipped" },
                filter_word(p.verdict),
                p.blocks_read + p.cache_hits,
                source_word(p),
                result(p, i + 1 == t.tables.len(), t).text(),
            );
        }
    }
    let n = Totals::of(t);
    let _ = writeln!(
        s,
        "  totals: {} consulted ({} out of key range, {} without filter); {} ({} absent, {} \
         maybe, {} false {}); {} ({} from disk, {} from cache)",
        count(n.tables, "table"),
        n.out_of_range,
        n.no_filter,
        count(n.absent + n.maybe, "filter check"),
        n.absent,
        n.maybe,
        n.false_positives,
        if n.false_positives == 1 {
            "positive"
        } else {
            "positives"
        },
        count(n.disk + n.cache, "data block"),
        n.disk,
        n.cache,
    );
    let verdict = match answer(t) {
        Answer::NotFound => "not found".to_string(),
        Answer::Found(at) => format!("found in {}", at.text()),
        Answer::Deleted(at) => format!("deleted (tombstone in {})", at.text()),
    };
    let _ = writeln!(s, "  answer: {verdict}");
    s
}

/// The trace as one JSON document (`get --explain --json`).
pub fn json(t: &GetExplain, db: &std::path::Path, key: &[u8], codec: Codec) -> Value {
    let tables: Vec<Value> = t
        .tables
        .iter()
        .enumerate()
        .map(|(i, p)| {
            json!({
                "position": i + 1,
                "level": p.level,
                "file_number": p.file_number,
                "file": table_file_name(p.file_number),
                "in_key_range": in_key_range(p),
                "filter": filter_token(p.verdict),
                "blocks": p.blocks_read + p.cache_hits,
                "blocks_from_disk": p.blocks_read,
                "blocks_from_cache": p.cache_hits,
                "false_positive": p.false_positive,
                "found": p.found,
                "result": result(p, i + 1 == t.tables.len(), t).token(),
            })
        })
        .collect();
    let n = Totals::of(t);
    let (result, at) = match answer(t) {
        Answer::NotFound => ("not_found", None),
        Answer::Found(at) => ("found", Some(at)),
        Answer::Deleted(at) => ("deleted", Some(at)),
    };
    let table = match at {
        Some(Place::Table(p)) => Some(p),
        _ => None,
    };
    document(
        JSON_FORMAT,
        json!({
            "db": db.display().to_string(),
            "key": codec.show(key),
            "sequence": t.snapshot,
            "memtable": memtable(t).token(),
            "immutable_memtable": immutable(t).map(Outcome::token),
            "tables": tables,
            "totals": {
                "tables": n.tables,
                "out_of_key_range": n.out_of_range,
                "without_filter": n.no_filter,
                "filter_checks": n.absent + n.maybe,
                "filter_absent": n.absent,
                "filter_maybe": n.maybe,
                "false_positives": n.false_positives,
                "data_blocks": n.disk + n.cache,
                "blocks_from_disk": n.disk,
                "blocks_from_cache": n.cache,
            },
            "answer": {
                "result": result,
                "source": at.map_or("nowhere", Place::token),
                "level": table.map(|p| p.level),
                "file_number": table.map(|p| p.file_number),
                "file": table.map(|p| table_file_name(p.file_number)),
            },
        }),
    )
}

/// What one place (a memtable, a table) said about the key.
#[derive(Clone, Copy)]
enum Outcome {
    Found,
    Tombstone,
    FalsePositive,
    RuledOutByFilter,
    NotRead,
    Miss,
}

impl Outcome {
    fn text(self) -> &'static str {
        match self {
            Outcome::Found => "found",
            Outcome::Tombstone => "found tombstone",
            Outcome::FalsePositive => "false positive",
            Outcome::RuledOutByFilter => "ruled out by filter",
            Outcome::NotRead => "not read",
            Outcome::Miss => "miss",
        }
    }

    fn token(self) -> &'static str {
        match self {
            Outcome::Found => "found",
            Outcome::Tombstone => "tombstone",
            Outcome::FalsePositive => "false_positive",
            Outcome::RuledOutByFilter => "ruled_out_by_filter",
            Outcome::NotRead => "not_read",
            Outcome::Miss => "miss",
        }
    }
}

/// A memtable's answer: found (a value or a tombstone) when the trace's answer came from it.
fn memtable_answer(t: &GetExplain, source: &str) -> Outcome {
    match (t.source == source, &t.value) {
        (false, _) => Outcome::Miss,
        (true, Some(_)) => Outcome::Found,
        (true, None) => Outcome::Tombstone,
    }
}

/// A memtable's answer as text: a tombstone there means the key is deleted.
fn memtable_text(o: Outcome) -> &'static str {
    match o {
        Outcome::Tombstone => "found tombstone (deleted)",
        o => o.text(),
    }
}

fn memtable(t: &GetExplain) -> Outcome {
    memtable_answer(t, "memtable")
}

/// The immutable memtable's answer; `None` when there was none (no flush running).
fn immutable(t: &GetExplain) -> Option<Outcome> {
    t.checked_immutable
        .then(|| memtable_answer(t, "immutable memtable"))
}

/// The table's result; `last`: the lookup stopped at it.
fn result(p: &TableProbe, last: bool, t: &GetExplain) -> Outcome {
    match p.verdict {
        _ if p.found && last && t.value.is_none() => Outcome::Tombstone,
        _ if p.found => Outcome::Found,
        _ if p.false_positive => Outcome::FalsePositive,
        FilterVerdict::OutOfRange => Outcome::NotRead,
        FilterVerdict::Absent => Outcome::RuledOutByFilter,
        _ => Outcome::Miss,
    }
}

/// Where the answer came from.
#[derive(Clone, Copy)]
enum Place<'a> {
    Memtable,
    Immutable,
    Table(&'a TableProbe),
}

impl Place<'_> {
    fn text(self) -> String {
        match self {
            Place::Memtable => "memtable".to_string(),
            Place::Immutable => "immutable memtable".to_string(),
            Place::Table(p) => format!("{} (L{})", table_file_name(p.file_number), p.level),
        }
    }

    fn token(self) -> &'static str {
        match self {
            Place::Memtable => "memtable",
            Place::Immutable => "immutable_memtable",
            Place::Table(_) => "table",
        }
    }
}

/// The lookup's answer and where it came from.
enum Answer<'a> {
    NotFound,
    Found(Place<'a>),
    Deleted(Place<'a>),
}

fn answer(t: &GetExplain) -> Answer<'_> {
    let place = match t.source {
        "memtable" => Place::Memtable,
        "immutable memtable" => Place::Immutable,
        "table" => match t.tables.iter().find(|p| p.found) {
            Some(p) => Place::Table(p),
            // A trace that says "table" names the table that answered; without one there is
            // nothing to point at, and the lookup found nothing.
            None => return Answer::NotFound,
        },
        _ => return Answer::NotFound,
    };
    if t.value.is_some() {
        Answer::Found(place)
    } else {
        Answer::Deleted(place)
    }
}

/// The trace's counts, summed over the tables consulted.
struct Totals {
    tables: u64,
    out_of_range: u64,
    no_filter: u64,
    absent: u64,
    maybe: u64,
    false_positives: u64,
    disk: u64,
    cache: u64,
}

impl Totals {
    fn of(t: &GetExplain) -> Totals {
        let n = |v: FilterVerdict| t.tables.iter().filter(|p| p.verdict == v).count() as u64;
        Totals {
            tables: t.tables.len() as u64,
            out_of_range: n(FilterVerdict::OutOfRange),
            no_filter: n(FilterVerdict::NoFilter),
            absent: n(FilterVerdict::Absent),
            maybe: n(FilterVerdict::MayContain),
            false_positives: t.tables.iter().filter(|p| p.false_positive).count() as u64,
            disk: t.tables.iter().map(|p| u64::from(p.blocks_read)).sum(),
            cache: t.tables.iter().map(|p| u64::from(p.cache_hits)).sum(),
        }
    }
}

fn in_key_range(p: &TableProbe) -> bool {
    p.verdict != FilterVerdict::OutOfRange
}

fn filter_word(v: FilterVerdict) -> &'static str {
    filter_token(v).unwrap_or("-")
}

/// The filter's verdict; `None` when it was not asked (the key range ruled the table out).
fn filter_token(v: FilterVerdict) -> Option<&'static str> {
    match v {
        FilterVerdict::OutOfRange => None,
        FilterVerdict::NoFilter => Some("none"),
        FilterVerdict::Absent => Some("absent"),
        FilterVerdict::MayContain => Some("maybe"),
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
