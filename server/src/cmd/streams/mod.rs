//! Streams: XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XREAD (with BLOCK, woken by XADD as
//! blocking pops are) here; consumer groups in [`group_cmds`] over [`groups`]; XINFO in
//! [`info`].
//!
//! A stream is a metadata record (`Meta::Stream`: length, last, first and largest deleted
//! ID, entries added) and one engine key per entry under the stream's version, keyed by its
//! ID so the entries sort in ID order:
//!
//! ```text
//! 'x' be32(len) key be64(version) be64(ms) be64(seq)  ->  be32(len) field be32(len) value ...
//! ```
//!
//! XADD is one write plus the metadata; XRANGE/XREAD seek to the first ID and scan what they
//! return; trimming the oldest entries is one range deletion whatever their number.

pub mod group_cmds;
pub mod groups;
pub mod info;
pub mod lag;

use bytes::Bytes;

use super::blocking::{Block, Op, Outcome};
use super::{NOT_INT, WRONGTYPE, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::meta::StreamMeta;
use crate::store::{MAX_KEY_LEN, Meta, R, Txn, prefix_end, sub_key, sub_prefix, tag};

/// A stream entry ID: milliseconds and sequence number.
pub type Id = (u64, u64);

/// Entries per radix-tree node in Redis (`stream-node-max-entries`): `~` trimming removes
/// whole nodes only, so it removes entries in runs of this many.
const NODE_ENTRIES: u64 = 100;

const INVALID_ID: &str = "Invalid stream ID specified as stream command argument";

/// One entry: its ID and its field-value pairs.
pub type Entry = (Id, Vec<(Bytes, Bytes)>);

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
        return Ok((u64::MAX, u64::MAX));
    }
    match b.iter().position(|&c| c == b'-') {
        None => Ok((parse_u64(b).ok_or_else(invalid_id)?, missing_seq)),
        Some(i) => Ok((
            parse_u64(&b[..i]).ok_or_else(invalid_id)?,
            parse_u64(&b[i + 1..]).ok_or_else(invalid_id)?,
        )),
    }
}

fn next_id(id: Id) -> Option<Id> {
    match id {
        (ms, u64::MAX) => Some((ms.checked_add(1)?, 0)),
        (ms, seq) => Some((ms, seq + 1)),
    }
}

fn prev_id(id: Id) -> Option<Id> {
    match id {
        (0, 0) => None,
        (ms, 0) => Some((ms - 1, u64::MAX)),
        (ms, seq) => Some((ms, seq - 1)),
    }
}

/// The stream at `key`: `None` if missing, WRONGTYPE for other types.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn get_stream(txn: &Txn<'_>, key: &[u8]) -> Result<Option<StreamMeta>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Stream(m)) => Ok(Some(m)),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

fn entry_key(key: &[u8], version: u64, id: Id) -> Vec<u8> {
    let mut rest = [0u8; 16];
    rest[..8].copy_from_slice(&id.0.to_be_bytes());
    rest[8..].copy_from_slice(&id.1.to_be_bytes());
    sub_key(tag::STREAM, key, version, &rest)
}

fn corrupt() -> Reply {
    Reply::err("corrupt stream entry in the store")
}

fn encode_entry(pairs: &[Bytes]) -> Vec<u8> {
    let mut v = Vec::with_capacity(pairs.iter().map(|p| p.len() + 4).sum());
    for p in pairs {
        v.extend_from_slice(&(p.len() as u32).to_be_bytes());
        v.extend_from_slice(p);
    }
    v
}

fn decode_entry(mut v: &[u8]) -> Result<Vec<(Bytes, Bytes)>, Reply> {
    let mut items = Vec::new();
    while !v.is_empty() {
        let n = u32::from_be_bytes(
            v.get(..4)
                .ok_or_else(corrupt)?
                .try_into()
                .map_err(|_| corrupt())?,
        ) as usize;
        items.push(Bytes::copy_from_slice(v.get(4..4 + n).ok_or_else(corrupt)?));
        v = &v[4 + n..];
    }
    if !items.len().is_multiple_of(2) {
        return Err(corrupt());
    }
    let mut pairs = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(f), Some(v)) = (it.next(), it.next()) {
        pairs.push((f, v));
    }
    Ok(pairs)
}

fn id_of(k: &[u8]) -> Result<Id, Reply> {
    let n = k.len();
    if n < 16 {
        return Err(corrupt());
    }
    let ms = u64::from_be_bytes(k[n - 16..n - 8].try_into().map_err(|_| corrupt())?);
    let seq = u64::from_be_bytes(k[n - 8..].try_into().map_err(|_| corrupt())?);
    Ok((ms, seq))
}

/// Calls `f` with the entries whose IDs lie in `from..=to` (newest first when `reverse`)
/// until it returns false.
fn for_each_entry(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    from: Id,
    to: Id,
    reverse: bool,
    mut f: impl FnMut(Id, &[u8]) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    if from > to || m.len == 0 {
        return Ok(());
    }
    use std::ops::Bound;
    let start = Bound::Included(entry_key(key, m.version, from));
    let end = Bound::Included(entry_key(key, m.version, to));
    txn.for_each_in(start, end, reverse, |k, v| f(id_of(k)?, v))
}

/// Up to `count` entries in `from..=to`.
fn range(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    from: Id,
    to: Id,
    reverse: bool,
    count: Option<u64>,
) -> Result<Vec<Entry>, Reply> {
    let mut out = Vec::new();
    let limit = count.unwrap_or(u64::MAX);
    if limit == 0 {
        return Ok(out);
    }
    for_each_entry(txn, key, m, from, to, reverse, |id, v| {
        out.push((id, decode_entry(v)?));
        Ok((out.len() as u64) < limit)
    })?;
    Ok(out)
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

/// The first entry's ID at or after `from` (0-0 when none).
fn first_from(txn: &Txn<'_>, key: &[u8], m: &StreamMeta, from: Id) -> Result<Id, Reply> {
    let mut first = (0, 0);
    for_each_entry(txn, key, m, from, (u64::MAX, u64::MAX), false, |id, _| {
        first = id;
        Ok(false)
    })?;
    Ok(first)
}

/// A trimming strategy: MAXLEN or MINID, exact (`=`) or approximate (`~`), with LIMIT.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trim {
    MaxLen(u64),
    MinId(Id),
}

#[derive(Clone, Copy, Debug)]
struct TrimSpec {
    trim: Trim,
    approx: bool,
    /// Most entries removed (0: no limit).
    limit: u64,
}

/// Entries approximate trimming removes at most per call without LIMIT (Redis: 100 nodes).
const DEFAULT_APPROX_LIMIT: u64 = 100 * NODE_ENTRIES;

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

/// Removes the oldest entries as `spec` says; returns how many went.
fn trim(txn: &mut Txn<'_>, key: &[u8], m: &mut StreamMeta, spec: TrimSpec) -> Result<u64, Reply> {
    // How many of the oldest entries the strategy would remove.
    let below = match spec.trim {
        Trim::MaxLen(max) => m.len.saturating_sub(max),
        Trim::MinId(min) => match prev_id(min) {
            None => 0,
            Some(last_below) => {
                let mut c = 0u64;
                for_each_entry(txn, key, m, (0, 0), last_below, false, |_, _| {
                    c += 1;
                    Ok(true)
                })?;
                c
            }
        },
    };
    let n = if spec.approx {
        // Redis removes whole nodes only, oldest first: each while all of it is to go and
        // LIMIT (counting whole nodes) allows. Nodes here are runs of 100 entries from the
        // first one, the last possibly shorter.
        let mut removed = 0u64;
        while removed < m.len {
            let node = NODE_ENTRIES.min(m.len - removed);
            if removed + node > below || (spec.limit > 0 && removed + node > spec.limit) {
                break;
            }
            removed += node;
        }
        removed
    } else {
        below
    };
    if n == 0 {
        return Ok(0);
    }
    // The (n+1)-th entry bounds the range deletion; the n-th is the last removed.
    let mut seen = 0u64;
    let mut next = None;
    for_each_entry(txn, key, m, (0, 0), (u64::MAX, u64::MAX), false, |id, _| {
        if seen == n {
            next = Some(id);
            return Ok(false);
        }
        seen += 1;
        Ok(true)
    })?;
    let start = sub_prefix(tag::STREAM, key, m.version);
    let end = match next {
        Some(id) => entry_key(key, m.version, id),
        None => prefix_end(&start).ok_or_else(corrupt)?,
    };
    txn.delete_range(start, end);
    m.len -= seen;
    // Trimming leaves no tombstones: `max_deleted` names XDEL's only, as in Redis.
    m.first = next.unwrap_or((0, 0));
    Ok(seen)
}

fn store_stream(txn: &mut Txn<'_>, key: &[u8], m: StreamMeta) -> Result<(), Reply> {
    txn.put_meta(key, Meta::Stream(m))
}

/// Every entry of the stream `key`, in ID order.
///
/// # Errors
/// Engine errors, a damaged entry.
pub fn all_entries(txn: &Txn<'_>, key: &[u8], m: &StreamMeta) -> Result<Vec<Entry>, Reply> {
    range(txn, key, m, (0, 0), (u64::MAX, u64::MAX), false, None)
}

/// Refuses a key too long to hold a stream (its entries' keys take 4 bytes more).
///
/// # Errors
/// The error a client gets.
pub fn check_key(key: &[u8]) -> Result<(), Reply> {
    if key.len() + 4 > MAX_KEY_LEN {
        return Err(Reply::err(format!(
            "key longer than {} bytes: a stream key holds 4 bytes less than other keys",
            MAX_KEY_LEN - 4
        )));
    }
    Ok(())
}

/// Writes entry `id` (fields and values alternating in `pairs`) of the stream `key` whose
/// entries live under `version`; the metadata is the caller's.
///
/// # Errors
/// An entry too large for the engine.
pub fn put_entry(
    txn: &mut Txn<'_>,
    key: &[u8],
    version: u64,
    id: Id,
    pairs: &[Bytes],
) -> Result<(), Reply> {
    let entry = encode_entry(pairs);
    check_entry_size(&entry)?;
    txn.put(entry_key(key, version, id), entry);
    Ok(())
}

fn check_entry_size(entry: &[u8]) -> Result<(), Reply> {
    if entry.len() > bloomkv::MAX_VALUE_BYTES {
        return Err(Reply::err(format!(
            "element too large: a stream entry of {} bytes (bloomkv-server holds one entry to {} bytes)",
            entry.len(),
            bloomkv::MAX_VALUE_BYTES
        )));
    }
    Ok(())
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
    // `*`, `ms-*` or an explicit ID.
    let (want_ms, want_seq) = if id_arg.as_ref() == b"*" {
        (None, None)
    } else if let Some(ms) = id_arg.strip_suffix(b"-*") {
        (Some(parse_u64(ms).ok_or_else(invalid_id)?), None)
    } else {
        let id = parse_id(id_arg, 0, false)?;
        (Some(id.0), Some(id.1))
    };
    let pairs = &a[i + 1..];
    if pairs.len() < 2 || !pairs.len().is_multiple_of(2) {
        return Err(crate::cmd::wrong_arity("xadd"));
    }
    if want_ms == Some(0) && want_seq == Some(0) {
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
    let entry = encode_entry(pairs);
    check_entry_size(&entry)?;
    let mut m = match existing {
        Some(m) => m,
        None => StreamMeta {
            version: txn.new_version()?,
            ..StreamMeta::default()
        },
    };
    let exhausted =
        || Reply::err("The stream has exhausted the last possible ID, unable to add more items");
    let smaller = || {
        Reply::err("The ID specified in XADD is equal or smaller than the target stream top item")
    };
    let id = match (want_ms, want_seq) {
        (None, _) => {
            let ms = txn.now_ms().max(m.last.0);
            if ms == m.last.0 {
                next_id(m.last).ok_or_else(exhausted)?
            } else {
                (ms, 0)
            }
        }
        (Some(ms), None) => {
            if ms < m.last.0 {
                return Err(smaller());
            }
            if ms == m.last.0 {
                if m.last.1 == u64::MAX {
                    return Err(if ms == u64::MAX {
                        exhausted()
                    } else {
                        smaller()
                    });
                }
                (ms, m.last.1 + 1)
            } else {
                (ms, 0)
            }
        }
        (Some(ms), Some(seq)) => {
            if m.last == (u64::MAX, u64::MAX) {
                return Err(exhausted());
            }
            if (ms, seq) <= m.last {
                return Err(smaller());
            }
            (ms, seq)
        }
    };
    txn.put(entry_key(key, m.version, id), entry);
    if m.len == 0 {
        m.first = id;
    }
    m.len += 1;
    m.last = id;
    m.added += 1;
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
    let Some(mut m) = get_stream(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let mut n = 0;
    let mut first_gone = false;
    for id in ids {
        let k = entry_key(&a[1], m.version, id);
        if txn.get(&k)?.is_some() {
            txn.delete(k);
            n += 1;
            m.len -= 1;
            m.max_deleted = m.max_deleted.max(id);
            first_gone |= id == m.first;
        }
    }
    if n > 0 {
        if first_gone {
            m.first = first_from(txn, &a[1], &m, m.first)?;
        }
        store_stream(txn, &a[1], m)?;
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
    let Some(mut m) = get_stream(txn, &a[1])? else {
        return Err(Reply::err("no such key"));
    };
    if m.len > 0 {
        let top = range(txn, &a[1], &m, (0, 0), (u64::MAX, u64::MAX), true, Some(1))?;
        if top.first().is_some_and(|(top, _)| id < *top) {
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
    m.last = id;
    if let Some(n) = added {
        m.added = n;
    }
    if let Some(d) = max_deleted.filter(|d| *d != (0, 0)) {
        m.max_deleted = d;
    }
    store_stream(txn, &a[1], m)?;
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
        let Some(from) = next_id(*after) else {
            return Ok(None);
        };
        let entries = range(txn, key, &m, from, (u64::MAX, u64::MAX), false, self.count)?;
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
        let (Some(m), Some(from)) = (m, next_id(*id)) else {
            continue;
        };
        let entries = range(txn, k, m, from, (u64::MAX, u64::MAX), false, count)?;
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
        assert_eq!(next_id((1, u64::MAX)), Some((2, 0)));
        assert_eq!(prev_id((2, 0)), Some((1, u64::MAX)));
        assert_eq!(prev_id((0, 0)), None);
    }

    #[test]
    fn entries_round_trip() {
        let pairs = [
            Bytes::from_static(b"f"),
            Bytes::from_static(b""),
            Bytes::from_static(b"g"),
            Bytes::from_static(b"v"),
        ];
        let got = decode_entry(&encode_entry(&pairs)).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1], (pairs[2].clone(), pairs[3].clone()));
        assert!(decode_entry(&[0, 0, 0, 9, 1]).is_err());
    }
}
