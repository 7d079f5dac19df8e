//! MEMORY USAGE, STATS, DOCTOR, PURGE, MALLOC-STATS, HELP, as Redis 7 answers them for what
//! this server keeps.
//!
//! A key's "memory" here is what it occupies in the engine: its metadata record and its
//! members' records (engine key and value bytes, before compression), not a process heap
//! as in Redis, where values live in memory. Collections are measured as Redis measures
//! them: `SAMPLES n` members (5 by default, 0: all) are read and their mean size counts
//! for every member.

use bytes::Bytes;

use super::parse_i64;
use crate::resp::Reply;
use crate::store::{Meta, R, Txn, sub_prefix, tag};

/// Members read per collection by default (Redis's `SAMPLES` default).
const DEFAULT_SAMPLES: u64 = 5;

const HELP: &[&str] = &[
    "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "USAGE <key> [SAMPLES <count>]",
    "    Bytes <key> takes in the engine: its metadata and its members' records (a",
    "    collection's mean over <count> members, default 5, times its length; 0: all).",
    "STATS",
    "    The key count, the engine's table bytes and the mean per key.",
    "DOCTOR",
    "    A report of memory problems.",
    "PURGE",
    "    Accepted; nothing to do.",
    "MALLOC-STATS",
    "    The allocator's statistics (not available).",
    "HELP",
    "    This help.",
];

/// `MEMORY USAGE key [SAMPLES n] | STATS | DOCTOR | PURGE | MALLOC-STATS | HELP`
pub fn memory(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let sub = a[1].to_ascii_uppercase();
    match (&sub[..], a.len()) {
        (b"USAGE", 3 | 5) => usage(txn, a),
        (b"STATS", 2) => Ok(stats(txn)),
        (b"DOCTOR", 2) => Ok(Reply::Verbatim(
            "No memory issue found: bloomkv-server keeps its data in the engine, not in the \
             heap; INFO memory shows the heap, the block cache and the memtables."
                .into(),
        )),
        (b"PURGE", 2) => Ok(Reply::Ok),
        (b"MALLOC-STATS", 2) => Ok(Reply::Verbatim(
            "Stats not supported for the current allocator".into(),
        )),
        (b"HELP", 2) => Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Status((*l).into())).collect(),
        )),
        (b"USAGE" | b"STATS" | b"DOCTOR" | b"PURGE" | b"MALLOC-STATS" | b"HELP", _) => {
            Err(Reply::err(format!(
                "wrong number of arguments for 'memory|{}' command",
                String::from_utf8_lossy(&a[1]).to_ascii_lowercase()
            )))
        }
        _ => Err(Reply::err(format!(
            "unknown subcommand '{}'. Try MEMORY HELP.",
            String::from_utf8_lossy(&a[1])
        ))),
    }
}

fn usage(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let samples = match a.get(3..5) {
        None => DEFAULT_SAMPLES,
        Some([opt, n]) if opt.eq_ignore_ascii_case(b"SAMPLES") => match parse_i64(n) {
            Some(n) if n >= 0 => n as u64,
            _ => return Err(Reply::err("value is not an integer or out of range")),
        },
        Some(_) => return Err(Reply::err("syntax error")),
    };
    let key = &a[2];
    let Some(record) = txn.live(key)? else {
        return Ok(Reply::Nil);
    };
    // The metadata record: its tag (and database index), the key, the encoded record.
    let mut bytes = 2 + key.len() as u64 + record.encode().len() as u64;
    // Each member tag of the type, with how many records live under it when known.
    let subs: Vec<(u8, u64, Option<u64>)> = match &record.meta {
        Meta::Str(_) => Vec::new(),
        Meta::Chunked { version, .. } => vec![(tag::CHUNK, *version, None)],
        Meta::Bloom { version, .. } => vec![(tag::BLOOM, *version, None)],
        Meta::Cuckoo { version, .. } => vec![(tag::CUCKOO, *version, None)],
        Meta::Set { version, card } => vec![(tag::MEMBER, *version, Some(*card))],
        Meta::Hash { version, len } => vec![(tag::FIELD, *version, Some(*len))],
        Meta::List {
            version,
            head,
            tail,
        } => vec![(tag::ELEMENT, *version, Some(tail.saturating_sub(*head)))],
        Meta::Zset { version, card } => vec![
            (tag::ZMEMBER, *version, Some(*card)),
            (tag::ZSCORE, *version, Some(*card)),
        ],
        Meta::Stream(s) => vec![
            (tag::STREAM, s.version, Some(s.len)),
            (tag::GROUP, s.version, None),
        ],
    };
    for (t, version, count) in subs {
        // Chunks and groups are read whole: their count is not in the metadata.
        let limit = match count {
            Some(_) if samples > 0 => samples,
            _ => u64::MAX,
        };
        let (mut seen, mut sum) = (0u64, 0u64);
        txn.for_each_prefix(&sub_prefix(t, key, version), None, false, |k, v| {
            seen += 1;
            sum += (k.len() + v.len()) as u64;
            Ok(seen < limit)
        })?;
        bytes += match count {
            Some(n) if seen > 0 && seen < n => sum / seen * n,
            _ => sum,
        };
    }
    Ok(Reply::Int(i64::try_from(bytes).unwrap_or(i64::MAX)))
}

/// Redis's MEMORY STATS fields this server can fill: the keys and the engine's tables.
fn stats(txn: &Txn<'_>) -> Reply {
    let store = txn.store();
    let keys: i64 = (0..store.databases())
        .map(|db| store.dbsize(db as crate::store::DbIndex))
        .sum();
    let db = store.db();
    let stats = db.stats();
    let tables: u64 = stats.levels.iter().map(|l| l.bytes).sum();
    let per_key = if keys > 0 { tables / keys as u64 } else { 0 };
    let fields = vec![
        (Reply::bulk("keys.count"), Reply::Int(keys)),
        (
            Reply::bulk("keys.bytes-per-key"),
            Reply::Int(i64::try_from(per_key).unwrap_or(i64::MAX)),
        ),
        (
            Reply::bulk("dataset.bytes"),
            Reply::Int(i64::try_from(tables).unwrap_or(i64::MAX)),
        ),
    ];
    Reply::Map(fields)
}
