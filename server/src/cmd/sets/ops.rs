//! The rest of the set commands: SPOP, SRANDMEMBER, SMOVE, SINTER, SINTERCARD, SUNION, SDIFF
//! and the STORE forms.
//!
//! Random choices come from the command's `Ctx` (`cmd::random`), so a replica chooses the
//! same members. Multi-key reads run on one snapshot (they are Read commands); the STORE forms
//! are Write commands holding the locks of every key they name, and replace the destination
//! with a fresh set (one metadata write removes the old one, whatever it held).

use std::collections::BTreeSet;

use bytes::Bytes;

use super::store::{
    self, add_members, all_members, card, for_each_member, has, member_of, member_prefix,
    remove_members,
};
use crate::cmd::parse_i64;
use crate::cmd::random::{self, MAX_REPEATED, signed_count, too_many};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Txn};

/// A count as Redis's `getPositiveLongFromObjectOrReply` reads it (one error for both).
fn positive_count(b: &[u8]) -> Result<u64, Reply> {
    match parse_i64(b) {
        Some(n) if n >= 0 => Ok(n as u64),
        _ => Err(Reply::err("value is out of range, must be positive")),
    }
}

/// `SPOP key [count]`
pub fn spop(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() > 3 {
        return Err(Reply::err("syntax error"));
    }
    let key = &a[1];
    let count = a.get(2).map(|c| positive_count(c)).transpose()?;
    let Some((version, n)) = card(txn, key)? else {
        return Ok(match count {
            Some(_) => Reply::Set(Vec::new()),
            None => Reply::Nil,
        });
    };
    let prefix = member_prefix(key, version);
    let Some(count) = count else {
        let Some(e) = random::one(txn, &prefix, n)? else {
            return Ok(Reply::Nil);
        };
        let m = member_of(key, &prefix, &e)?;
        store::remove_entries(txn, key, version, n, [e.0])?;
        txn.notify_then_del_if_gone(class::SET, "spop", key)?;
        return Ok(Reply::bulk(m));
    };
    if count == 0 {
        return Ok(Reply::Set(Vec::new()));
    }
    if count >= n {
        let all = all_members(txn, key, version)?;
        txn.remove_key(key)?;
        txn.notify_then_del_if_gone(class::SET, "spop", key)?;
        return Ok(Reply::Set(all.into_iter().map(Reply::bulk).collect()));
    }
    let picked = random::distinct(txn, &prefix, n, count)?;
    let mut out = Vec::with_capacity(picked.len());
    for e in &picked {
        out.push(Reply::bulk(member_of(key, &prefix, e)?));
    }
    store::remove_entries(txn, key, version, n, picked.into_iter().map(|(k, _)| k))?;
    txn.notify(class::SET, "spop", key);
    Ok(Reply::Set(out))
}

/// `SRANDMEMBER key [count]`
pub fn srandmember(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() > 3 {
        return Err(Reply::err("syntax error"));
    }
    let key = &a[1];
    let count = a.get(2).map(|c| signed_count(c)).transpose()?;
    let Some((version, n)) = card(txn, key)? else {
        return Ok(match count {
            Some(_) => Reply::Array(Vec::new()),
            None => Reply::Nil,
        });
    };
    let prefix = member_prefix(key, version);
    let Some(count) = count else {
        return Ok(match random::one(txn, &prefix, n)? {
            Some(e) => Reply::bulk(member_of(key, &prefix, &e)?),
            None => Reply::Nil,
        });
    };
    let picked = if count < 0 {
        let k = count.unsigned_abs();
        if k > MAX_REPEATED {
            return Err(too_many());
        }
        random::repeated(txn, &prefix, n, k)?
    } else if count as u64 >= n {
        let all = all_members(txn, key, version)?;
        return Ok(Reply::Array(all.into_iter().map(Reply::bulk).collect()));
    } else {
        random::distinct(txn, &prefix, n, count as u64)?
    };
    let mut out = Vec::with_capacity(picked.len());
    for e in &picked {
        out.push(Reply::bulk(member_of(key, &prefix, e)?));
    }
    Ok(Reply::Array(out))
}

/// `SMOVE source destination member`
pub fn smove(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (src, dst, member) = (&a[1], &a[2], &a[3]);
    // Redis's order: a missing source answers 0 before the destination's type is looked at.
    let Some((version, _)) = card(txn, src)? else {
        return Ok(Reply::Int(0));
    };
    card(txn, dst)?; // the destination's type, checked before anything moves
    if src == dst {
        return Ok(Reply::Int(i64::from(has(txn, src, version, member)?)));
    }
    if !has(txn, src, version, member)? {
        return Ok(Reply::Int(0));
    }
    // Removing first, as Redis does, so the events come in its order (`srem`, maybe `del`,
    // then `sadd`); the write set commits both steps or neither. A member already in the
    // destination writes nothing there, so its watchers see no change (as Redis).
    remove_members(txn, src, [member.as_ref()])?;
    txn.notify_then_del_if_gone(class::SET, "srem", src)?;
    if add_members(txn, dst, [member.as_ref()])? > 0 {
        txn.notify(class::SET, "sadd", dst);
    }
    Ok(Reply::Int(1))
}

/// A set by name: key, version, cardinality.
type Named<'k> = (&'k [u8], u64, u64);

/// The sets named by `keys`: `(key, version, cardinality)`, `None` for a missing key.
///
/// # Errors
/// WRONGTYPE if any key holds another type (checked for every key, as Redis 7 does).
fn load<'k>(txn: &Txn<'_>, keys: &'k [Bytes]) -> Result<Vec<Option<Named<'k>>>, Reply> {
    keys.iter()
        .map(|k| Ok(card(txn, k)?.map(|(v, c)| (k.as_ref(), v, c))))
        .collect()
}

/// The members in every one of `keys`, stopping after `limit` (0: no limit).
fn inter(txn: &Txn<'_>, keys: &[Bytes], limit: usize) -> Result<Vec<Vec<u8>>, Reply> {
    let sets = load(txn, keys)?;
    let Some(mut sets) = sets.into_iter().collect::<Option<Vec<_>>>() else {
        return Ok(Vec::new()); // a missing key is an empty set
    };
    sets.sort_by_key(|s| s.2);
    let (first, rest) = sets
        .split_first()
        .ok_or_else(|| Reply::err("syntax error"))?;
    let mut out = Vec::new();
    let mut err = None;
    for_each_member(txn, first.0, first.1, |m| {
        for (k, v, _) in rest {
            match has(txn, k, *v, m) {
                Ok(true) => {}
                Ok(false) => return Ok(true),
                Err(e) => {
                    err = Some(e);
                    return Ok(false);
                }
            }
        }
        out.push(m.to_vec());
        Ok(limit == 0 || out.len() < limit)
    })?;
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// The members of any of `keys`, each once.
fn union(txn: &Txn<'_>, keys: &[Bytes]) -> Result<Vec<Vec<u8>>, Reply> {
    let mut out = BTreeSet::new();
    for (k, v, _) in load(txn, keys)?.into_iter().flatten() {
        for_each_member(txn, k, v, |m| {
            if !out.contains(m) {
                out.insert(m.to_vec());
            }
            Ok(true)
        })?;
    }
    Ok(out.into_iter().collect())
}

/// The members of the first of `keys` in none of the others.
fn diff(txn: &Txn<'_>, keys: &[Bytes]) -> Result<Vec<Vec<u8>>, Reply> {
    let sets = load(txn, keys)?;
    let Some(Some(first)) = sets.first().copied() else {
        return Ok(Vec::new());
    };
    let rest: Vec<_> = sets[1..].iter().flatten().copied().collect();
    if rest.iter().any(|(k, _, _)| *k == first.0) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    let mut err = None;
    for_each_member(txn, first.0, first.1, |m| {
        for (k, v, _) in &rest {
            match has(txn, k, *v, m) {
                Ok(false) => {}
                Ok(true) => return Ok(true),
                Err(e) => {
                    err = Some(e);
                    return Ok(false);
                }
            }
        }
        out.push(m.to_vec());
        Ok(true)
    })?;
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

fn set_reply(members: Vec<Vec<u8>>) -> Reply {
    Reply::Set(members.into_iter().map(Reply::bulk).collect())
}

/// Replaces `dst` with a new set of `members` (none: `dst` is removed). Returns the count.
fn store_result(txn: &mut Txn<'_>, dst: &[u8], members: Vec<Vec<u8>>, event: &'static str) -> R {
    if members.is_empty() {
        if txn.remove_key(dst)? {
            txn.notify(class::GENERIC, "del", dst);
        }
        return Ok(Reply::Int(0));
    }
    let n = store::replace(txn, dst, members)?;
    txn.notify(class::SET, event, dst);
    Ok(Reply::Int(n as i64))
}

/// `SINTER key [key ...]`
pub fn sinter(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(set_reply(inter(txn, &a[1..], 0)?))
}

/// `SINTERSTORE destination key [key ...]`
pub fn sinterstore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let result = inter(txn, &a[2..], 0)?;
    store_result(txn, &a[1], result, "sinterstore")
}

/// `SUNION key [key ...]`
pub fn sunion(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(set_reply(union(txn, &a[1..])?))
}

/// `SUNIONSTORE destination key [key ...]`
pub fn sunionstore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let result = union(txn, &a[2..])?;
    store_result(txn, &a[1], result, "sunionstore")
}

/// `SDIFF key [key ...]`
pub fn sdiff(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(set_reply(diff(txn, &a[1..])?))
}

/// `SDIFFSTORE destination key [key ...]`
pub fn sdiffstore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let result = diff(txn, &a[2..])?;
    store_result(txn, &a[1], result, "sdiffstore")
}

/// `SINTERCARD numkeys key [key ...] [LIMIT limit]`
pub fn sintercard(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let numkeys = parse_i64(&a[1])
        .filter(|n| *n > 0)
        .ok_or_else(|| Reply::err("numkeys should be greater than 0"))? as u64;
    if numkeys > (a.len() - 2) as u64 {
        return Err(Reply::err(
            "Number of keys can't be greater than number of args",
        ));
    }
    let keys = &a[2..2 + numkeys as usize];
    let mut limit = 0usize;
    let mut i = 2 + numkeys as usize;
    while i < a.len() {
        match (a[i].eq_ignore_ascii_case(b"LIMIT"), a.get(i + 1)) {
            (true, Some(v)) => {
                limit = parse_i64(v)
                    .filter(|n| *n >= 0)
                    .ok_or_else(|| Reply::err("LIMIT can't be negative"))?
                    .try_into()
                    .unwrap_or(usize::MAX);
                i += 2;
            }
            _ => return Err(Reply::err("syntax error")),
        }
    }
    Ok(Reply::Int(inter(txn, keys, limit)?.len() as i64))
}
