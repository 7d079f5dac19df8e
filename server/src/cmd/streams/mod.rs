//! Streams' command layer: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID, XREAD (with
//! BLOCK, woken by XADD as blocking pops are) here, with their parsing (IDs, range bounds,
//! the trimming options), replies, Redis's error texts and keyspace events; the consumer-group
//! commands in [`group_cmds`]; XINFO in [`info`].
//!
//! Under them, the stream's logic over the engine: [`store`] (entries, metadata, ID
//! arithmetic), `trim` (MAXLEN and MINID), [`groups`] (group, consumer and PEL records),
//! `pel` (delivering, acknowledging and claiming entries) and [`lag`] (a group's
//! `entries-read` and lag).

pub mod group_cmds;
pub mod groups;
pub mod info;
pub mod lag;
mod pel;
pub mod store;
mod trim;

use bytes::Bytes;

use super::blocking::{Block, Op, Outcome};
use super::{NOT_INT, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Txn};
use store::{
    Entry, Id, IdRefused, MAX_ID, NewId, append, check_key, delete_entries, encoded_entry,
    entries_after, get_stream, last_entry_id, new_id, new_stream, next_id, prev_id, range, set_id,
    store_stream,
};
use trim::{DEFAULT_APPROX_LIMIT, Trim, TrimSpec, trim};

const INVALID_ID: &str = "Invalid stream ID specified as stream command argument";

fn invalid_id() -> Reply {
    Reply::err(INVALID_ID)
}

/// Formats an ID as Redis does (`ms-seq`).
pub fn fmt_id(id: Id) -> String {
    format!("{}-{}", id.0, id.1)
}

fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() || b.len() > 20 || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(b).ok()?.parse().ok()
}

/// Parses `ms[-seq]`; a missing sequence is `missing_seq`; `-` and `+` when `specials`.
fn parse_id(b: &[u8], missing_seq: u64, specials: bool) -> Result<Id, Reply> {
    if specials && b == b"-" {
        return Ok((0, 0));
    }
    if specials && b == b"+" {
        return Ok(MAX_ID);
    }
    match b.iter().position(|&c| c == b'-') {
        None => Ok((parse_u64(b).ok_or_else(invalid_id)?, missing_seq)),
        Some(i) => Ok((
            parse_u64(&b[..i]).ok_or_else(invalid_id)?,
            parse_u64(&b[i + 1..]).ok_or_else(invalid_id)?,
        )),
    }
}

fn entry_reply((id, pairs): Entry) -> Reply {
    let mut fv = Vec::with_capacity(pairs.len() * 2);
    for (f, v) in pairs {
        fv.push(Reply::Bulk(f));
        fv.push(Reply::Bulk(v));
    }
    Reply::Array(vec![Reply::bulk(fmt_id(id)), Reply::Array(fv)])
}

fn entries_reply(entries: Vec<Entry>) -> Reply {
    Reply::Array(entries.into_iter().map(entry_reply).collect())
}

/// What XADD's and XTRIM's options say, parsed in any order as Redis does.
struct AddTrimArgs {
    /// The trimming, if any.
    spec: Option<TrimSpec>,
    /// XADD's NOMKSTREAM.
    nomkstream: bool,
    /// XADD: where the ID is (`*`, `ms-*` or an explicit ID).
    id_at: usize,
}

/// Parses `a[2..]`: MAXLEN|MINID [=|~] threshold, LIMIT n, and for XADD NOMKSTREAM and the
/// ID that ends the options (checked here, so a bad ID is reported before the options'
/// combinations, as Redis reports it).
fn parse_add_trim(a: &[Bytes], xadd: bool) -> Result<AddTrimArgs, Reply> {
    let not_int = || Reply::err(NOT_INT);
    let mut trim = None;
    let mut approx = false;
    let mut limit: Option<u64> = None;
    let mut nomkstream = false;
    let mut i = 2;
    while i < a.len() {
        let more = a.len() - 1 - i;
        let opt = a[i].as_ref();
        if xadd && opt == b"*" {
            break;
        }
        let maxlen = opt.eq_ignore_ascii_case(b"MAXLEN");
        if (maxlen || opt.eq_ignore_ascii_case(b"MINID")) && more > 0 {
            if trim.is_some() {
                return Err(Reply::err(
                    "syntax error, MAXLEN and MINID options at the same time are not compatible",
                ));
            }
            approx = false;
            let next = a[i + 1].as_ref();
            if more >= 2 && (next == b"~" || next == b"=") {
                approx = next == b"~";
                i += 1;
            }
            let thr = &a[i + 1];
            trim = Some(if maxlen {
                let n = parse_i64(thr).ok_or_else(not_int)?;
                if n < 0 {
                    return Err(Reply::err("The MAXLEN argument must be >= 0."));
                }
                Trim::MaxLen(n as u64)
            } else {
                Trim::MinId(parse_id(thr, 0, false)?)
            });
            i += 2;
        } else if opt.eq_ignore_ascii_case(b"LIMIT") && more > 0 {
            let n = parse_i64(&a[i + 1]).ok_or_else(not_int)?;
            if n < 0 {
                return Err(Reply::err("The LIMIT argument must be >= 0."));
            }
            limit = Some(n as u64);
            i += 2;
        } else if xadd && opt.eq_ignore_ascii_case(b"NOMKSTREAM") {
            nomkstream = true;
            i += 1;
        } else if xadd {
            match opt.strip_suffix(b"-*") {
                Some(ms) => {
                    parse_u64(ms).ok_or_else(invalid_id)?;
                }
                None => {
                    parse_id(opt, 0, false)?;
                }
            }
            break;
        } else {
            return Err(Reply::err("syntax error"));
        }
    }
    if limit.is_some_and(|n| n > 0) && trim.is_none() {
        return Err(Reply::err(
            "syntax error, LIMIT cannot be used without specifying a trimming strategy",
        ));
    }
    if !xadd && trim.is_none() {
        return Err(Reply::err(
            "syntax error, XTRIM must be called with a trimming strategy",
        ));
    }
    if limit.is_some() && !approx {
        return Err(Reply::err(
            "syntax error, LIMIT cannot be used without the special ~ option",
        ));
    }
    let limit = match limit {
        Some(n) => n,
        None if approx => DEFAULT_APPROX_LIMIT,
        None => 0,
    };
    Ok(AddTrimArgs {
        spec: trim.map(|trim| TrimSpec {
            trim,
            approx,
            limit,
        }),
        nomkstream,
        id_at: i,
    })
}

/// `XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value ...`
pub fn xadd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let AddTrimArgs {
        spec,
        nomkstream,
        id_at: i,
    } = parse_add_trim(a, true)?;
    let Some(id_arg) = a.get(i) else {
        return Err(crate::cmd::wrong_arity("xadd"));
    };
    let want = if id_arg.as_ref() == b"*" {
        NewId::Auto
    } else if let Some(ms) = id_arg.strip_suffix(b"-*") {
        NewId::Seq(parse_u64(ms).ok_or_else(invalid_id)?)
    } else {
        NewId::Exact(parse_id(id_arg, 0, false)?)
    };
    let pairs = &a[i + 1..];
    if pairs.len() < 2 || !pairs.len().is_multiple_of(2) {
        return Err(crate::cmd::wrong_arity("xadd"));
    }
    if want == NewId::Exact((0, 0)) {
        return Err(Reply::err(
            "The ID specified in XADD must be greater than 0-0",
        ));
    }
    let existing = get_stream(txn, key)?;
    if existing.is_none() && nomkstream {
        return Ok(Reply::Nil);
    }
    if existing.is_none() {
        check_key(key)?;
    }
    let entry = encoded_entry(pairs)?;
    let mut m = match existing {
        Some(m) => m,
        None => new_stream(txn)?,
    };
    let id = new_id(txn, &m, want).map_err(|refused| match refused {
        IdRefused::Exhausted => {
            Reply::err("The stream has exhausted the last possible ID, unable to add more items")
        }
        IdRefused::NotAbove => Reply::err(
            "The ID specified in XADD is equal or smaller than the target stream top item",
        ),
    })?;
    append(txn, key, &mut m, id, entry);
    let trimmed = match spec {
        Some(s) => trim(txn, key, &mut m, s)?,
        None => 0,
    };
    store_stream(txn, key, m)?;
    txn.signal_ready(key);
    txn.notify(class::STREAM, "xadd", key);
    if trimmed > 0 {
        txn.notify(class::STREAM, "xtrim", key);
    }
    Ok(Reply::bulk(fmt_id(id)))
}

/// `XLEN key`
pub fn xlen(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(
        get_stream(txn, &a[1])?.map_or(0, |m| m.len as i64),
    ))
}

/// Parses a range bound: `-`, `+`, an ID (missing sequence: `missing_seq`), or `(ID`
/// (exclusive).
fn parse_bound(b: &[u8], missing_seq: u64, start: bool) -> Result<Id, Reply> {
    if let Some(rest) = b.strip_prefix(b"(") {
        let id = parse_id(rest, missing_seq, false)?;
        let moved = if start { next_id(id) } else { prev_id(id) };
        return moved.ok_or_else(|| {
            Reply::err(if start {
                "invalid start ID for the interval"
            } else {
                "invalid end ID for the interval"
            })
        });
    }
    parse_id(b, missing_seq, true)
}

fn xrange_generic(txn: &mut Txn<'_>, a: &[Bytes], reverse: bool) -> R {
    let (lo, hi) = if reverse {
        (&a[3], &a[2])
    } else {
        (&a[2], &a[3])
    };
    let from = parse_bound(lo, 0, true)?;
    let to = parse_bound(hi, u64::MAX, false)?;
    let mut count = None;
    match a.len() {
        4 => {}
        6 if a[4].eq_ignore_ascii_case(b"COUNT") => {
            let n = parse_i64(&a[5]).ok_or_else(|| Reply::err(NOT_INT))?;
            if n <= 0 {
                return Ok(Reply::NilArray);
            }
            count = Some(n as u64);
        }
        _ => return Err(Reply::err("syntax error")),
    }
    let Some(m) = get_stream(txn, &a[1])? else {
        return Ok(Reply::Array(vec![]));
    };
    Ok(entries_reply(range(
        txn, &a[1], &m, from, to, reverse, count,
    )?))
}

/// `XRANGE key start end [COUNT count]`
pub fn xrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    xrange_generic(txn, a, false)
}

/// `XREVRANGE key end start [COUNT count]`
pub fn xrevrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    xrange_generic(txn, a, true)
}

/// `XDEL key id [id ...]`
pub fn xdel(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let ids = a[2..]
        .iter()
        .map(|b| parse_id(b, 0, false))
        .collect::<Result<Vec<_>, _>>()?;
    let Some(m) = get_stream(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let n = delete_entries(txn, &a[1], m, ids)?;
    if n > 0 {
        txn.notify(class::STREAM, "xdel", &a[1]);
    }
    Ok(Reply::Int(n))
}

/// `XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count]`
pub fn xtrim(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some(spec) = parse_add_trim(a, false)?.spec else {
        return Err(Reply::err("syntax error"));
    };
    let Some(mut m) = get_stream(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let n = trim(txn, &a[1], &mut m, spec)?;
    if n > 0 {
        store_stream(txn, &a[1], m)?;
        txn.notify(class::STREAM, "xtrim", &a[1]);
    }
    Ok(Reply::Int(n as i64))
}

/// `XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id]`
pub fn xsetid(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let id = parse_id(&a[2], 0, false)?;
    let mut added = None;
    let mut max_deleted = None;
    let mut i = 3;
    while i < a.len() {
        let more = i + 1 < a.len();
        if a[i].eq_ignore_ascii_case(b"ENTRIESADDED") && more {
            let n = parse_i64(&a[i + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
            if n < 0 {
                return Err(Reply::err("entries_added must be positive"));
            }
            added = Some(n as u64);
        } else if a[i].eq_ignore_ascii_case(b"MAXDELETEDID") && more {
            let d = parse_id(&a[i + 1], 0, false)?;
            if id < d {
                return Err(Reply::err(
                    "The ID specified in XSETID is smaller than the provided max_deleted_entry_id",
                ));
            }
            max_deleted = Some(d);
        } else {
            return Err(Reply::err("syntax error"));
        }
        i += 2;
    }
    let Some(m) = get_stream(txn, &a[1])? else {
        return Err(Reply::err("no such key"));
    };
    if m.len > 0 {
        if last_entry_id(txn, &a[1], &m)?.is_some_and(|top| id < top) {
            return Err(Reply::err(
                "The ID specified in XSETID is smaller than the target stream top item",
            ));
        }
        if added.is_some_and(|n| m.len > n) {
            return Err(Reply::err(
                "The entries_added specified in XSETID is smaller than the target stream length",
            ));
        }
    }
    set_id(txn, &a[1], m, id, added, max_deleted)?;
    txn.notify(class::STREAM, "xsetid", &a[1]);
    Ok(Reply::Ok)
}

/// What a blocked XREAD waits for: entries after `after` in one of its streams.
#[derive(Clone, Debug, PartialEq)]
pub struct XReadWait {
    /// COUNT.
    pub count: Option<u64>,
    /// Each stream and the ID its entries must follow (`$` resolved when the command ran).
    pub after: Vec<(Bytes, Id)>,
}

impl XReadWait {
    /// The reply for `key` if it holds entries after the waiter's ID: `[[key, entries]]`.
    ///
    /// # Errors
    /// Engine errors.
    pub fn serve(&self, txn: &Txn<'_>, key: &[u8]) -> Result<Option<Reply>, Reply> {
        let Some((k, after)) = self.after.iter().find(|(k, _)| k.as_ref() == key) else {
            return Ok(None);
        };
        let Ok(Some(m)) = get_stream(txn, key) else {
            return Ok(None);
        };
        let entries = entries_after(txn, key, &m, *after, self.count)?;
        if entries.is_empty() {
            return Ok(None);
        }
        Ok(Some(xread_reply(vec![(k.clone(), entries_reply(entries))])))
    }
}

/// XREAD's and XREADGROUP's reply: each stream's name and its entries (`[[key, entries],
/// ...]` in RESP2, a map in RESP3).
fn xread_reply(streams: Vec<(Bytes, Reply)>) -> Reply {
    let pairs: Vec<(Reply, Reply)> = streams
        .into_iter()
        .map(|(k, e)| (Reply::Bulk(k), e))
        .collect();
    Reply::ByProto {
        resp2: Box::new(Reply::Array(
            pairs
                .iter()
                .map(|(k, v)| Reply::Array(vec![k.clone(), v.clone()]))
                .collect(),
        )),
        resp3: Box::new(Reply::Map(pairs)),
    }
}

/// XREAD's and XREADGROUP's BLOCK argument: milliseconds, 0 for ever.
fn parse_block_ms(b: &[u8]) -> Result<u64, Reply> {
    let ms = parse_i64(b).ok_or_else(|| Reply::err("timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(Reply::err("timeout is negative"));
    }
    Ok(ms as u64)
}

/// `XREAD [COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]`
pub fn xread(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    let mut i = 1;
    let mut count = None;
    let mut block = None;
    let streams_at = loop {
        let Some(w) = a.get(i) else {
            return Err(Reply::err("syntax error"));
        };
        let w = w.to_ascii_uppercase();
        match w.as_slice() {
            b"COUNT" if i + 1 < a.len() => {
                let n = parse_i64(&a[i + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
                count = (n > 0).then_some(n as u64);
                i += 2;
            }
            b"BLOCK" if i + 1 < a.len() => {
                block = Some(parse_block_ms(&a[i + 1])?);
                i += 2;
            }
            b"STREAMS" => break i + 1,
            b"GROUP" if i + 2 < a.len() => {
                return Err(Reply::err(
                    "The GROUP option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            b"NOACK" => {
                return Err(Reply::err(
                    "The NOACK option is only supported by XREADGROUP. You called XREAD instead.",
                ));
            }
            _ => return Err(Reply::err("syntax error")),
        }
    };
    let rest = &a[streams_at..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(Reply::err(
            "Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.",
        ));
    }
    let (keys, ids) = rest.split_at(rest.len() / 2);
    let mut after = Vec::with_capacity(keys.len());
    for (k, id) in keys.iter().zip(ids) {
        let m = get_stream(txn, k)?;
        let id = if id.as_ref() == b"$" {
            m.map_or((0, 0), |m| m.last)
        } else if id.as_ref() == b">" {
            return Err(Reply::err(
                "The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.",
            ));
        } else {
            parse_id(id, 0, false)?
        };
        after.push((k.clone(), id, m));
    }
    let mut found = Vec::new();
    for (k, id, m) in &after {
        let Some(m) = m else {
            continue;
        };
        let entries = entries_after(txn, k, m, *id, count)?;
        if !entries.is_empty() {
            found.push((k.clone(), entries_reply(entries)));
        }
    }
    let op = Op::XRead(XReadWait {
        count,
        after: after.into_iter().map(|(k, id, _)| (k, id)).collect(),
    });
    Ok(found_or_block(txn, found, block, keys, op))
}

/// XREAD's and XREADGROUP's end: the streams that had entries, else the wait for them
/// (`block` ms, 0 forever), else a nil array.
fn found_or_block(
    txn: &Txn<'_>,
    found: Vec<(Bytes, Reply)>,
    block: Option<u64>,
    keys: &[Bytes],
    op: Op,
) -> Outcome {
    if !found.is_empty() {
        return Outcome::Done(xread_reply(found));
    }
    let Some(ms) = block else {
        return Outcome::Done(Reply::NilArray);
    };
    Outcome::Block(Block {
        db: txn.db(),
        keys: keys.to_vec(),
        op,
        timeout: (ms > 0).then(|| std::time::Duration::from_millis(ms)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_like_redis() {
        assert_eq!(parse_id(b"5", 0, false), Ok((5, 0)));
        assert_eq!(parse_id(b"5", u64::MAX, false), Ok((5, u64::MAX)));
        assert_eq!(parse_id(b"1-2", 0, false), Ok((1, 2)));
        assert_eq!(parse_id(b"-", 0, true), Ok((0, 0)));
        assert_eq!(parse_id(b"+", 0, true), Ok((u64::MAX, u64::MAX)));
        for bad in [&b"-"[..], b"x", b"1-x", b"1-", b"-1", b"", b"1-2-3"] {
            assert!(parse_id(bad, 0, false).is_err(), "{bad:?}");
        }
        assert_eq!(parse_bound(b"(1-2", 0, true), Ok((1, 3)));
        assert_eq!(parse_bound(b"(1", u64::MAX, false), Ok((1, u64::MAX - 1)));
        assert!(parse_bound(b"(0-0", 0, false).is_err());
    }
}
