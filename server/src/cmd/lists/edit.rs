//! List commands that work inside a list: LTRIM, LREM, LINSERT, LPOS.
//!
//! Elements sit at consecutive positions, so removing from the middle (LREM) or inserting
//! (LINSERT) moves the elements on one side by the number removed or inserted; both pick
//! the side with fewer elements to move, as a deque would. Costs (n elements, docs/SERVER.md):
//! LTRIM writes the metadata plus at most two deletions (point deletes for short runs, a
//! range deletion for long ones) whatever it trims; LPOS reads up to the match (or MAXLEN);
//! LREM reads the list and rewrites up to half of it; LINSERT reads up to the pivot and
//! rewrites up to half of the list.

use bytes::Bytes;

use super::store::{
    List, check_elements, delete_positions, elem_key, for_each_element, get_list, read_range,
    store_list,
};
use super::{parse_i64, parse_long};
use crate::cmd::NOT_INT;
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Txn};

/// `LTRIM key start stop`: moves head and tail and deletes what falls outside.
pub fn ltrim(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let start = parse_long(&a[2])?;
    let stop = parse_long(&a[3])?;
    let key = &a[1];
    let Some(l) = get_list(txn, key)? else {
        return Ok(Reply::Ok);
    };
    let Some((from, n)) = super::store::clamp_range(start, stop, l.len()) else {
        // Nothing kept: the key goes (its elements stay under a version nothing names).
        txn.remove_key(key)?;
        txn.notify(class::LIST, "ltrim", key);
        txn.notify(class::GENERIC, "del", key);
        return Ok(Reply::Ok);
    };
    let kept = List {
        version: l.version,
        head: l.head + from,
        tail: l.head + from + n,
    };
    delete_positions(txn, key, l.version, l.head, kept.head);
    delete_positions(txn, key, l.version, kept.tail, l.tail);
    // Written even when nothing was trimmed: Redis counts every LTRIM of an existing list
    // as a change (a WATCH on it fails).
    store_list(txn, key, kept)?;
    txn.notify(class::LIST, "ltrim", key);
    Ok(Reply::Ok)
}

/// Removes the elements at list indexes `removed` (ascending, distinct, not all of them):
/// the elements on the side with fewer of them move over the gaps.
fn remove_indexes(
    txn: &mut Txn<'_>,
    key: &[u8],
    mut l: List,
    removed: &[u64],
) -> Result<(), Reply> {
    let (Some(&first), Some(&last)) = (removed.first(), removed.last()) else {
        return Ok(());
    };
    let m = removed.len() as u64;
    let n = l.len();
    let move_tail_side = (n - 1 - first) <= last;
    if move_tail_side {
        // Elements after the first removed one shift towards the head.
        let region = read_range(txn, key, l, first, n - first, false)?;
        let mut gone = 0u64;
        let mut r = removed.iter().peekable();
        for (off, v) in region.into_iter().enumerate() {
            let i = first + off as u64;
            if r.peek() == Some(&&i) {
                r.next();
                gone += 1;
                continue;
            }
            txn.put(elem_key(key, l.version, l.head + i - gone), v);
        }
        delete_positions(txn, key, l.version, l.tail - m, l.tail);
        l.tail -= m;
    } else {
        // Elements before the last removed one shift towards the tail.
        let region = read_range(txn, key, l, last, last + 1, true)?;
        let mut gone = 0u64;
        let mut r = removed.iter().rev().peekable();
        for (off, v) in region.into_iter().enumerate() {
            let i = last - off as u64;
            if r.peek() == Some(&&i) {
                r.next();
                gone += 1;
                continue;
            }
            txn.put(elem_key(key, l.version, l.head + i + gone), v);
        }
        delete_positions(txn, key, l.version, l.head, l.head + m);
        l.head += m;
    }
    store_list(txn, key, l)
}

/// `LREM key count element`
pub fn lrem(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    // Redis 7.2 reads the count without a range check (-2^63 removes every match).
    let count = parse_long(&a[2])?;
    let key = &a[1];
    let Some(l) = get_list(txn, key)? else {
        return Ok(Reply::Int(0));
    };
    let limit = count.unsigned_abs();
    let reverse = count < 0;
    let start = if reverse { l.len() - 1 } else { 0 };
    let mut hits = Vec::new();
    for_each_element(txn, key, l, start, reverse, |i, v| {
        if v == a[3].as_ref() {
            hits.push(i);
        }
        Ok(limit == 0 || (hits.len() as u64) < limit)
    })?;
    if hits.is_empty() {
        return Ok(Reply::Int(0));
    }
    if reverse {
        hits.reverse();
    }
    let n = hits.len() as i64;
    if hits.len() as u64 == l.len() {
        txn.remove_key(key)?;
    } else {
        remove_indexes(txn, key, l, &hits)?;
    }
    txn.notify_then_del_if_gone(class::LIST, "lrem", key)?;
    Ok(Reply::Int(n))
}

fn out_of_range() -> Reply {
    Reply::err(format!(
        "value is out of range, value must between {} and {}",
        -i64::MAX,
        i64::MAX
    ))
}

/// `LINSERT key BEFORE|AFTER pivot element`
pub fn linsert(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let after = if a[2].eq_ignore_ascii_case(b"after") {
        true
    } else if a[2].eq_ignore_ascii_case(b"before") {
        false
    } else {
        return Err(Reply::err("syntax error"));
    };
    let key = &a[1];
    let Some(mut l) = get_list(txn, key)? else {
        return Ok(Reply::Int(0));
    };
    check_elements([a[4].as_ref()])?;
    let mut pivot = None;
    for_each_element(txn, key, l, 0, false, |i, v| {
        if v == a[3].as_ref() {
            pivot = Some(i);
            return Ok(false);
        }
        Ok(true)
    })?;
    let Some(p) = pivot else {
        return Ok(Reply::Int(-1));
    };
    // The new element's index; the elements before it or from it on move by one.
    let at = if after { p + 1 } else { p };
    let n = l.len();
    if at <= n - at {
        let before = read_range(txn, key, l, 0, at, false)?;
        let head = l
            .head
            .checked_sub(1)
            .ok_or_else(|| Reply::err("list positions exhausted"))?;
        for (i, v) in before.into_iter().enumerate() {
            txn.put(elem_key(key, l.version, head + i as u64), v);
        }
        txn.put(elem_key(key, l.version, head + at), a[4].to_vec());
        l.head = head;
    } else {
        let rest = read_range(txn, key, l, at, n - at, false)?;
        let tail = l
            .tail
            .checked_add(1)
            .ok_or_else(|| Reply::err("list positions exhausted"))?;
        for (i, v) in rest.into_iter().enumerate() {
            txn.put(elem_key(key, l.version, l.head + at + 1 + i as u64), v);
        }
        txn.put(elem_key(key, l.version, l.head + at), a[4].to_vec());
        l.tail = tail;
    }
    store_list(txn, key, l)?;
    txn.notify(class::LIST, "linsert", key);
    Ok(Reply::Int(l.len() as i64))
}

/// `LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]`
pub fn lpos(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut rank: i64 = 1;
    let mut count: Option<u64> = None;
    let mut maxlen: u64 = 0;
    let mut j = 3;
    while j < a.len() {
        let more = j + 1 < a.len();
        let opt = &a[j];
        if opt.eq_ignore_ascii_case(b"rank") && more {
            j += 1;
            rank = match parse_i64(&a[j]) {
                Some(i64::MIN) => return Err(out_of_range()),
                Some(r) => r,
                None => return Err(Reply::err(NOT_INT)),
            };
            if rank == 0 {
                return Err(Reply::err(
                    "RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
                ));
            }
        } else if opt.eq_ignore_ascii_case(b"count") && more {
            j += 1;
            count = Some(match parse_i64(&a[j]) {
                Some(c) if c >= 0 => c as u64,
                _ => return Err(Reply::err("COUNT can't be negative")),
            });
        } else if opt.eq_ignore_ascii_case(b"maxlen") && more {
            j += 1;
            maxlen = match parse_i64(&a[j]) {
                Some(c) if c >= 0 => c as u64,
                _ => return Err(Reply::err("MAXLEN can't be negative")),
            };
        } else {
            return Err(Reply::err("syntax error"));
        }
        j += 1;
    }
    let Some(l) = get_list(txn, &a[1])? else {
        return Ok(match count {
            Some(_) => Reply::Array(Vec::new()),
            None => Reply::Nil,
        });
    };
    let reverse = rank < 0;
    let rank = rank.unsigned_abs();
    let start = if reverse { l.len() - 1 } else { 0 };
    let mut scanned = 0u64;
    let mut matches = 0u64;
    let mut found = Vec::new();
    for_each_element(txn, &a[1], l, start, reverse, |i, v| {
        if maxlen != 0 && scanned >= maxlen {
            return Ok(false);
        }
        scanned += 1;
        if v == a[2].as_ref() {
            matches += 1;
            if matches >= rank {
                found.push(i);
                match count {
                    None => return Ok(false),
                    Some(c) if c != 0 && found.len() as u64 >= c => return Ok(false),
                    Some(_) => {}
                }
            }
        }
        Ok(true)
    })?;
    Ok(match count {
        Some(_) => Reply::Array(found.into_iter().map(|i| Reply::Int(i as i64)).collect()),
        None => found.first().map_or(Reply::Nil, |&i| Reply::Int(i as i64)),
    })
}
