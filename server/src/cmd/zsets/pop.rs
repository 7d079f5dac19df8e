//! ZPOPMIN, ZPOPMAX, ZMPOP, and the pop the blocking forms (BZPOPMIN, BZPOPMAX, BZMPOP)
//! share: a scan from one end of the score index, then one delete per member (a long run
//! of index keys as one range deletion).

use bytes::Bytes;

use super::store::{get_zset, rank_window, remove_all};
use crate::cmd::lists::parse_mpop;
use crate::resp::Reply;
use crate::store::{R, Txn};

/// Members and their scores, in the order a command met them.
pub type Scored = Vec<(Vec<u8>, f64)>;

/// Pops up to `count` members with the lowest scores (the highest when `max`), in pop
/// order; `None` when the key does not exist.
///
/// # Errors
/// WRONGTYPE, engine errors, damage.
pub fn pop(txn: &mut Txn<'_>, key: &[u8], max: bool, count: u64) -> Result<Option<Scored>, Reply> {
    let Some(z) = get_zset(txn, key)? else {
        return Ok(None);
    };
    let n = count.min(z.card);
    let mut got = if max {
        rank_window(txn, key, z, z.card - n, n)?
    } else {
        rank_window(txn, key, z, 0, n)?
    };
    remove_all(txn, key, z, &got, true)?;
    if max {
        got.reverse();
    }
    Ok(Some(got))
}

/// Tells of a pop that took members (`zpopmin`/`zpopmax`), then of the key's deletion if
/// it emptied it, as Redis does.
///
/// # Errors
/// Engine errors reading the key's record.
pub fn notify_pop(txn: &mut Txn<'_>, key: &[u8], max: bool) -> Result<(), Reply> {
    let name = if max { "zpopmax" } else { "zpopmin" };
    txn.notify_then_del_if_gone(crate::notify::class::ZSET, name, key)
}

/// `[member, score, ...]` flat, or as pairs (RESP3 nested) when `pairs`.
pub fn popped_reply(got: Vec<(Vec<u8>, f64)>, pairs: bool) -> Reply {
    if pairs {
        Reply::Pairs(
            got.into_iter()
                .map(|(m, s)| (Reply::bulk(m), Reply::Double(s)))
                .collect(),
        )
    } else {
        let mut out = Vec::with_capacity(got.len() * 2);
        for (m, s) in got {
            out.push(Reply::bulk(m));
            out.push(Reply::Double(s));
        }
        Reply::Array(out)
    }
}

/// `[key, [[member, score], ...]]`: ZMPOP's and BZMPOP's reply (nested in both protocols).
pub fn keyed_reply(key: &[u8], got: Vec<(Vec<u8>, f64)>) -> Reply {
    Reply::Array(vec![
        Reply::bulk(key.to_vec()),
        Reply::Array(
            got.into_iter()
                .map(|(m, s)| Reply::Array(vec![Reply::bulk(m), Reply::Double(s)]))
                .collect(),
        ),
    ])
}

fn pop_cmd(txn: &mut Txn<'_>, a: &[Bytes], max: bool) -> R {
    if a.len() > 3 {
        return Err(Reply::err("syntax error"));
    }
    let count = a
        .get(2)
        .map(|c| crate::cmd::lists::parse_positive(c))
        .transpose()?;
    let key = &a[1];
    if get_zset(txn, key)?.is_none() || count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    let got = pop(txn, key, max, count.unwrap_or(1))?.unwrap_or_default();
    if !got.is_empty() {
        notify_pop(txn, key, max)?;
    }
    // One member without COUNT is a flat pair in both protocols; with COUNT, RESP3 nests.
    Ok(popped_reply(got, count.is_some()))
}

/// `ZPOPMIN key [count]`
pub fn zpopmin(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    pop_cmd(txn, a, false)
}

/// `ZPOPMAX key [count]`
pub fn zpopmax(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    pop_cmd(txn, a, true)
}

/// Parses MIN or MAX (true for MAX).
///
/// # Errors
/// `syntax error`.
pub fn parse_min_max(b: &[u8]) -> Result<bool, Reply> {
    if b.eq_ignore_ascii_case(b"min") {
        Ok(false)
    } else if b.eq_ignore_ascii_case(b"max") {
        Ok(true)
    } else {
        Err(Reply::err("syntax error"))
    }
}

/// Pops from the first non-empty sorted set of `keys`: [`keyed_reply`], or `None` when all
/// are empty or missing.
///
/// # Errors
/// WRONGTYPE for the first key of another type met before a non-empty set.
pub fn mpop(
    txn: &mut Txn<'_>,
    keys: &[Bytes],
    max: bool,
    count: u64,
) -> Result<Option<Reply>, Reply> {
    for k in keys {
        if let Some(got) = pop(txn, k, max, count)?
            && !got.is_empty()
        {
            notify_pop(txn, k, max)?;
            return Ok(Some(keyed_reply(k, got)));
        }
    }
    Ok(None)
}

/// `ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]`
pub fn zmpop(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let m = parse_mpop(a, 1)?;
    let max = parse_min_max(&a[m.side])?;
    Ok(mpop(txn, &m.keys, max, m.count)?.unwrap_or(Reply::NilArray))
}
