//! Lists: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LLEN, LRANGE, LINDEX, LSET, LMOVE,
//! RPOPLPUSH, LMPOP here; LTRIM, LREM, LINSERT, LPOS in [`edit`]; the blocking forms in
//! `crate::blocking`. Storage layout and costs: [`store`] and docs/SERVER.md.

pub mod edit;
pub mod store;
pub mod stream;

use bytes::Bytes;

use super::{NOT_INT, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Txn};
use store::{check_elements, clamp_range, elem_key, get_list, index, pop, push, read_range};

pub use edit::{linsert, lpos, lrem, ltrim};

fn bulk_array(elems: Vec<Vec<u8>>) -> Reply {
    Reply::Array(elems.into_iter().map(Reply::bulk).collect())
}

fn push_cmd(txn: &mut Txn<'_>, a: &[Bytes], left: bool, only_existing: bool) -> R {
    check_elements(a[2..].iter().map(|e| e.as_ref()))?;
    let n = push(
        txn,
        &a[1],
        a[2..].iter().map(|e| e.as_ref()),
        left,
        only_existing,
    )?;
    if n.is_some() {
        txn.notify(class::LIST, if left { "lpush" } else { "rpush" }, &a[1]);
    }
    Ok(Reply::Int(n.unwrap_or(0) as i64))
}

/// Tells of a pop from the list `key` that took elements (`lpop`/`rpop`), and of its
/// deletion if that emptied it, as Redis does.
///
/// # Errors
/// Engine errors reading the key's record.
pub fn notify_pop(txn: &mut Txn<'_>, key: &[u8], left: bool) -> Result<(), Reply> {
    txn.notify_then_del_if_gone(class::LIST, if left { "lpop" } else { "rpop" }, key)
}

/// `LPUSH key element [element ...]`
pub fn lpush(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    push_cmd(txn, a, true, false)
}

/// `RPUSH key element [element ...]`
pub fn rpush(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    push_cmd(txn, a, false, false)
}

/// `LPUSHX key element [element ...]`
pub fn lpushx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    push_cmd(txn, a, true, true)
}

/// `RPUSHX key element [element ...]`
pub fn rpushx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    push_cmd(txn, a, false, true)
}

/// Parses a count Redis reads with `getPositiveLongFromObjectOrReply` (0 included).
///
/// # Errors
/// `value is out of range, must be positive` (also for a non-integer, as Redis says).
pub fn parse_positive(b: &[u8]) -> Result<u64, Reply> {
    match parse_i64(b) {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err(Reply::err("value is out of range, must be positive")),
    }
}

/// Parses a long Redis reads with `getLongFromObjectOrReply`.
///
/// # Errors
/// Redis's integer error.
pub fn parse_long(b: &[u8]) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err(NOT_INT))
}

fn pop_cmd(txn: &mut Txn<'_>, a: &[Bytes], left: bool) -> R {
    if a.len() > 3 {
        let name = if left { "lpop" } else { "rpop" };
        return Err(Reply::err(format!(
            "wrong number of arguments for '{name}' command"
        )));
    }
    let count = a.get(2).map(|c| parse_positive(c)).transpose()?;
    let popped = pop(txn, &a[1], left, count.unwrap_or(1))?;
    if popped.as_ref().is_some_and(|v| !v.is_empty()) {
        notify_pop(txn, &a[1], left)?;
    }
    Ok(match (popped, count) {
        (None, None) => Reply::Nil,
        (None, Some(_)) => Reply::NilArray,
        (Some(mut v), None) => Reply::opt_bulk(v.pop()),
        (Some(v), Some(_)) => bulk_array(v),
    })
}

/// `LPOP key [count]`
pub fn lpop(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    pop_cmd(txn, a, true)
}

/// `RPOP key [count]`
pub fn rpop(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    pop_cmd(txn, a, false)
}

/// `LLEN key`
pub fn llen(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(
        get_list(txn, &a[1])?.map_or(0, |l| l.len()) as i64
    ))
}

/// `LRANGE key start stop`: one scan of the elements it returns (streamed from the
/// command's snapshot when long).
pub fn lrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let start = parse_long(&a[2])?;
    let stop = parse_long(&a[3])?;
    let Some(l) = get_list(txn, &a[1])? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let Some((from, n)) = clamp_range(start, stop, l.len()) else {
        return Ok(Reply::Array(Vec::new()));
    };
    if n >= stream::STREAM_MIN
        && let Some(snap) = txn.take_snapshot()
    {
        return Ok(Reply::Stream(stream::range_stream(snap, &a[1], l, from, n)));
    }
    Ok(bulk_array(read_range(txn, &a[1], l, from, n, false)?))
}

/// `LINDEX key index`: one point lookup.
pub fn lindex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some(l) = get_list(txn, &a[1])? else {
        return Ok(Reply::Nil);
    };
    let idx = parse_long(&a[2])?;
    let Some(i) = index(idx, l.len()) else {
        return Ok(Reply::Nil);
    };
    Ok(Reply::opt_bulk(txn.get(&elem_key(
        &a[1],
        l.version,
        l.head + i,
    ))?))
}

/// `LSET key index element`: one point write.
pub fn lset(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some(l) = get_list(txn, &a[1])? else {
        return Err(Reply::err("no such key"));
    };
    let idx = parse_long(&a[2])?;
    check_elements([a[3].as_ref()])?;
    let Some(i) = index(idx, l.len()) else {
        return Err(Reply::err("index out of range"));
    };
    txn.put(elem_key(&a[1], l.version, l.head + i), a[3].to_vec());
    txn.notify(class::LIST, "lset", &a[1]);
    Ok(Reply::Ok)
}

/// Parses LEFT or RIGHT (true for LEFT).
///
/// # Errors
/// `syntax error`.
pub fn parse_side(b: &[u8]) -> Result<bool, Reply> {
    if b.eq_ignore_ascii_case(b"left") {
        Ok(true)
    } else if b.eq_ignore_ascii_case(b"right") {
        Ok(false)
    } else {
        Err(Reply::err("syntax error"))
    }
}

/// Moves one element from `src` (its head when `from_left`) to `dst` (its head when
/// `to_left`): `None` when `src` does not exist. Both types are checked before anything
/// moves, as Redis does.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn move_one(
    txn: &mut Txn<'_>,
    src: &[u8],
    dst: &[u8],
    from_left: bool,
    to_left: bool,
) -> Result<Option<Vec<u8>>, Reply> {
    if get_list(txn, src)?.is_none() {
        return Ok(None);
    }
    get_list(txn, dst)?;
    let Some(mut v) = pop(txn, src, from_left, 1)? else {
        return Ok(None);
    };
    let Some(e) = v.pop() else {
        return Ok(None);
    };
    if src == dst {
        // Popping the only element removed the list; Redis moves it without deleting.
        txn.overwrites(dst);
    }
    push(txn, dst, [e.as_slice()], to_left, false)?;
    // Redis tells of the push before the pop.
    txn.notify(class::LIST, if to_left { "lpush" } else { "rpush" }, dst);
    notify_pop(txn, src, from_left)?;
    Ok(Some(e))
}

/// `LMOVE source destination LEFT|RIGHT LEFT|RIGHT`
pub fn lmove(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let from_left = parse_side(&a[3])?;
    let to_left = parse_side(&a[4])?;
    Ok(Reply::opt_bulk(move_one(
        txn, &a[1], &a[2], from_left, to_left,
    )?))
}

/// `RPOPLPUSH source destination`
pub fn rpoplpush(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::opt_bulk(move_one(txn, &a[1], &a[2], false, true)?))
}

/// The parsed arguments of LMPOP / BLMPOP / ZMPOP / BZMPOP after `numkeys`: the keys, the
/// side word's index, and the count (1 by default).
#[derive(Debug)]
pub struct MpopArgs {
    /// The keys, in order.
    pub keys: Vec<Bytes>,
    /// Index of the LEFT / RIGHT / MIN / MAX word.
    pub side: usize,
    /// COUNT (1 by default).
    pub count: u64,
}

/// Parses `numkeys key [key ...] <side> [COUNT count]` starting at `a[at]`, as Redis's
/// `lmpopGenericCommand` and `zmpopGenericCommand` do; the side word is checked by the
/// caller.
///
/// # Errors
/// Redis's texts: `numkeys should be greater than 0`, `syntax error`, `count should be
/// greater than 0`.
pub fn parse_mpop(a: &[Bytes], at: usize) -> Result<MpopArgs, Reply> {
    let numkeys = match parse_i64(&a[at]) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(Reply::err("numkeys should be greater than 0")),
    };
    let side = (at as u64 + numkeys + 1) as usize;
    if numkeys >= a.len() as u64 || side >= a.len() {
        return Err(Reply::err("syntax error"));
    }
    let mut count = None;
    let mut j = side + 1;
    while j < a.len() {
        if count.is_none() && a[j].eq_ignore_ascii_case(b"count") && j + 1 < a.len() {
            j += 1;
            count = Some(match parse_i64(&a[j]) {
                Some(n) if n >= 1 => n as u64,
                _ => return Err(Reply::err("count should be greater than 0")),
            });
        } else {
            return Err(Reply::err("syntax error"));
        }
        j += 1;
    }
    Ok(MpopArgs {
        keys: a[at + 1..side].to_vec(),
        side,
        count: count.unwrap_or(1),
    })
}

/// Pops up to `count` elements from the first non-empty list of `keys`: `[key, [elements]]`,
/// or `None` when every list is empty or missing.
///
/// # Errors
/// WRONGTYPE for the first key of another type met before a non-empty list.
pub fn mpop(
    txn: &mut Txn<'_>,
    keys: &[Bytes],
    left: bool,
    count: u64,
) -> Result<Option<Reply>, Reply> {
    for k in keys {
        if let Some(v) = pop(txn, k, left, count)?
            && !v.is_empty()
        {
            notify_pop(txn, k, left)?;
            return Ok(Some(Reply::Array(vec![
                Reply::Bulk(k.clone()),
                bulk_array(v),
            ])));
        }
    }
    Ok(None)
}

/// `LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]`
pub fn lmpop(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let m = parse_mpop(a, 1)?;
    let left = parse_side(&a[m.side])?;
    Ok(mpop(txn, &m.keys, left, m.count)?.unwrap_or(Reply::NilArray))
}
