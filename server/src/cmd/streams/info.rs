//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS and XINFO CONSUMERS, in Redis 7.2's shapes
//! (the server reports `redis_version:7.2.0`): maps in RESP3, flat arrays in RESP2. The
//! command layer: it reads through [`store`](super::store), [`groups`](super::groups) and
//! [`lag`](super::lag).
//!
//! `radix-tree-keys` and `radix-tree-nodes` describe Redis's in-memory layout, which this
//! server does not have: they are what Redis would report for entries stored 100 to a node
//! (its default `stream-node-max-entries`), so tools that read them see plausible sizes.

use bytes::Bytes;

use super::super::{NOT_INT, parse_i64};
use super::group_cmds::{no_group, subcommand_error};
use super::groups::{Group, Groups, UNKNOWN_READ};
use super::lag::lag;
use super::store::{Id, MAX_ID, NODE_ENTRIES, get_stream, range};
use super::{entries_reply, entry_reply, fmt_id};
use crate::resp::Reply;
use crate::store::meta::StreamMeta;
use crate::store::{R, Txn};

/// Entries, pending entries and consumers' pending entries XINFO STREAM FULL shows by
/// default.
const FULL_COUNT: u64 = 10;

const HELP: &[&str] = &[
    "XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
    "HELP",
    "    Prints this help.",
];

fn field(name: &str, value: Reply) -> (Reply, Reply) {
    (Reply::bulk(name.as_bytes().to_vec()), value)
}

fn id(i: Id) -> Reply {
    Reply::bulk(fmt_id(i))
}

fn int(n: u64) -> Reply {
    Reply::Int(n as i64)
}

/// `XINFO CONSUMERS key group | GROUPS key | STREAM key [FULL [COUNT n]] | HELP`
pub fn xinfo(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let sub = a[1].to_ascii_uppercase();
    let arity_ok = match &sub[..] {
        b"HELP" => a.len() == 2,
        b"CONSUMERS" => a.len() == 4,
        b"GROUPS" => a.len() == 3,
        b"STREAM" => a.len() >= 3,
        _ => return Err(subcommand_error("XINFO", &a[1], false)),
    };
    if !arity_ok {
        return Err(subcommand_error("XINFO", &a[1], true));
    }
    if &sub[..] == b"HELP" {
        return Ok(Reply::Array(
            HELP.iter().map(|l| Reply::Status((*l).into())).collect(),
        ));
    }
    let key = &a[2];
    let Some(m) = get_stream(txn, key)? else {
        return Err(Reply::err("no such key"));
    };
    let full = if &sub[..] == b"STREAM" {
        parse_full(a)?
    } else {
        None
    };
    let groups = Groups::of(key, m.version);
    match &sub[..] {
        b"CONSUMERS" => consumers(txn, groups, key, &a[3]),
        b"GROUPS" => Ok(Reply::Array(
            groups
                .list(txn)?
                .iter()
                .map(|g| group_summary(&m, g))
                .collect(),
        )),
        _ => match full {
            None => stream_summary(txn, key, &m, groups),
            Some(count) => stream_full(txn, key, &m, groups, count),
        },
    }
}

/// FULL's COUNT: `None` without FULL, `Some(None)` for every entry.
fn parse_full(a: &[Bytes]) -> Result<Option<Option<u64>>, Reply> {
    let bad = || {
        Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try XINFO HELP.",
            String::from_utf8_lossy(&a[1])
        ))
    };
    match a.len() {
        3 => Ok(None),
        4 if a[3].eq_ignore_ascii_case(b"FULL") => Ok(Some(Some(FULL_COUNT))),
        6 if a[3].eq_ignore_ascii_case(b"FULL") && a[4].eq_ignore_ascii_case(b"COUNT") => {
            let n = parse_i64(&a[5]).ok_or_else(|| Reply::err(NOT_INT))?;
            Ok(Some((n > 0).then_some(n as u64)))
        }
        _ => Err(bad()),
    }
}

fn radix_tree(m: &StreamMeta) -> (u64, u64) {
    let keys = m.len.div_ceil(NODE_ENTRIES);
    let nodes = match keys {
        0 => 1,
        1 => 2,
        k => 2 * k + 2,
    };
    (keys, nodes)
}

fn stream_header(m: &StreamMeta) -> Vec<(Reply, Reply)> {
    let (keys, nodes) = radix_tree(m);
    vec![
        field("length", int(m.len)),
        field("radix-tree-keys", int(keys)),
        field("radix-tree-nodes", int(nodes)),
        field("last-generated-id", id(m.last)),
        field("max-deleted-entry-id", id(m.max_deleted)),
        field("entries-added", int(m.added)),
        field("recorded-first-entry-id", id(m.first)),
    ]
}

fn read_counter(g: &Group) -> Reply {
    if g.entries_read == UNKNOWN_READ {
        Reply::Nil
    } else {
        Reply::Int(g.entries_read)
    }
}

fn lag_reply(m: &StreamMeta, g: &Group) -> Reply {
    lag(m, g).map_or(Reply::Nil, Reply::Int)
}

fn stream_summary(txn: &Txn<'_>, key: &[u8], m: &StreamMeta, groups: Groups<'_>) -> R {
    let mut fields = stream_header(m);
    fields.push(field("groups", int(groups.list(txn)?.len() as u64)));
    let first = range(txn, key, m, (0, 0), MAX_ID, false, Some(1))?;
    let last = range(txn, key, m, (0, 0), MAX_ID, true, Some(1))?;
    for (name, e) in [("first-entry", first), ("last-entry", last)] {
        let v = e.into_iter().next().map_or(Reply::Nil, entry_reply);
        fields.push(field(name, v));
    }
    Ok(Reply::Map(fields))
}

fn group_summary(m: &StreamMeta, g: &Group) -> Reply {
    Reply::Map(vec![
        field("name", Reply::Bulk(g.name.clone())),
        field("consumers", int(g.consumers)),
        field("pending", int(g.pending)),
        field("last-delivered-id", id(g.last)),
        field("entries-read", read_counter(g)),
        field("lag", lag_reply(m, g)),
    ])
}

/// Milliseconds since `t`, never negative.
fn since(now: u64, t: u64) -> i64 {
    now.saturating_sub(t) as i64
}

fn consumers(txn: &Txn<'_>, groups: Groups<'_>, key: &[u8], name: &[u8]) -> R {
    let Some(g) = groups.get(txn, name)? else {
        return Err(no_group(key, name));
    };
    let now = txn.now_ms();
    let rows = groups
        .consumers(txn, &g.name)?
        .into_iter()
        .map(|c| {
            let inactive = if c.active < 0 {
                -1
            } else {
                since(now, c.active as u64)
            };
            Reply::Map(vec![
                field("name", Reply::Bulk(c.name)),
                field("pending", int(c.pending)),
                field("idle", Reply::Int(since(now, c.seen))),
                field("inactive", Reply::Int(inactive)),
            ])
        })
        .collect();
    Ok(Reply::Array(rows))
}

fn stream_full(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    groups: Groups<'_>,
    count: Option<u64>,
) -> R {
    let limit = count.unwrap_or(u64::MAX);
    let mut fields = stream_header(m);
    let entries = range(txn, key, m, (0, 0), MAX_ID, false, count)?;
    fields.push(field("entries", entries_reply(entries)));
    let mut out = Vec::new();
    for g in groups.list(txn)? {
        let mut pel = Vec::new();
        groups.for_each_pending(txn, &g.name, (0, 0), MAX_ID, false, |i, p| {
            pel.push(Reply::Array(vec![
                id(i),
                Reply::Bulk(p.consumer),
                int(p.delivered),
                int(p.deliveries),
            ]));
            Ok((pel.len() as u64) < limit)
        })?;
        let mut consumers = Vec::new();
        for c in groups.consumers(txn, &g.name)? {
            let mut rows = Vec::new();
            groups.for_each_owned_pending(
                txn,
                &g.name,
                &c.name,
                (0, 0),
                MAX_ID,
                limit,
                |i, p| {
                    rows.push(Reply::Array(vec![
                        id(i),
                        int(p.delivered),
                        int(p.deliveries),
                    ]));
                    Ok(true)
                },
            )?;
            consumers.push(Reply::Map(vec![
                field("name", Reply::Bulk(c.name)),
                field("seen-time", int(c.seen)),
                field("active-time", Reply::Int(c.active)),
                field("pel-count", int(c.pending)),
                field("pending", Reply::Array(rows)),
            ]));
        }
        out.push(Reply::Map(vec![
            field("name", Reply::Bulk(g.name.clone())),
            field("last-delivered-id", id(g.last)),
            field("entries-read", read_counter(&g)),
            field("lag", lag_reply(m, &g)),
            field("pel-count", int(g.pending)),
            field("pending", Reply::Array(pel)),
            field("consumers", Reply::Array(consumers)),
        ]));
    }
    fields.push(field("groups", Reply::Array(out)));
    Ok(Reply::Map(fields))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_tree_sizes_follow_redis_for_100_entries_a_node() {
        // Measured on redis-server 7.0.15: 1, 100, 101, 250 and 1000 entries.
        let m = |len| StreamMeta {
            len,
            ..StreamMeta::default()
        };
        assert_eq!(radix_tree(&m(0)), (0, 1));
        assert_eq!(radix_tree(&m(1)), (1, 2));
        assert_eq!(radix_tree(&m(100)), (1, 2));
        assert_eq!(radix_tree(&m(101)), (2, 6));
        assert_eq!(radix_tree(&m(250)), (3, 8));
        assert_eq!(radix_tree(&m(1000)), (10, 22));
    }
}
