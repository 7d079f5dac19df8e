//! Sets: SADD, SREM, SISMEMBER, SMISMEMBER, SCARD, SMEMBERS, SSCAN (the rest is in
//! `setops`). A set is a metadata key holding its cardinality plus one engine key per member
//! (`store::members`: a member of any length).

use bytes::Bytes;

use super::{WRONGTYPE, parse_scan_args};
use crate::resp::Reply;
use crate::store::members::{self, Slot};
use crate::store::{Meta, R, Txn, sub_prefix, tag};

/// Set `key`'s version and cardinality: `None` if missing, WRONGTYPE for other types.
pub fn card(txn: &Txn<'_>, key: &[u8]) -> Result<Option<(u64, u64)>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Set { version, card }) => Ok(Some((version, card))),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// Adds `members` to set `key` (creating it); returns how many were new.
///
/// # Errors
/// WRONGTYPE, a member too large for one engine value, engine errors.
pub fn add_members<'m>(
    txn: &mut Txn<'_>,
    key: &[u8],
    members: impl IntoIterator<Item = &'m [u8]> + Clone,
) -> Result<i64, Reply> {
    if members
        .clone()
        .into_iter()
        .any(|m| !members::fits(key, m, 0))
    {
        return Err(members::too_large());
    }
    let (version, mut n) = match card(txn, key)? {
        Some(vc) => vc,
        None => (txn.new_version()?, 0),
    };
    let mut added = 0;
    for m in members {
        if let Slot::Free(k) = members::locate(txn, tag::MEMBER, key, version, m)? {
            txn.put(k, members::entry_value(key, m, b""));
            added += 1;
            n += 1;
        }
    }
    if added > 0 {
        txn.put_meta(key, Meta::Set { version, card: n })?;
    }
    Ok(added)
}

/// `SADD key member [member ...]`
pub fn sadd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let added = add_members(txn, &a[1], a[2..].iter().map(|m| m.as_ref()))?;
    if added > 0 {
        txn.notify(crate::notify::class::SET, "sadd", &a[1]);
    }
    Ok(Reply::Int(added))
}

/// Removes `members` from set `key`; the key goes with its last member. Returns how many
/// were there.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn remove_members<'m>(
    txn: &mut Txn<'_>,
    key: &[u8],
    members: impl IntoIterator<Item = &'m [u8]>,
) -> Result<i64, Reply> {
    let Some((version, mut n)) = card(txn, key)? else {
        return Ok(0);
    };
    let mut removed = 0;
    for m in members {
        if let Slot::Found(k, _) = members::locate(txn, tag::MEMBER, key, version, m)? {
            txn.delete(k);
            removed += 1;
            n = n.saturating_sub(1);
        }
    }
    if removed > 0 {
        if n == 0 {
            txn.remove_key(key)?;
        } else {
            txn.put_meta(key, Meta::Set { version, card: n })?;
        }
    }
    Ok(removed)
}

/// `SREM key member [member ...]`
pub fn srem(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let removed = remove_members(txn, &a[1], a[2..].iter().map(|m| m.as_ref()))?;
    if removed > 0 {
        txn.notify_then_del_if_gone(crate::notify::class::SET, "srem", &a[1])?;
    }
    Ok(Reply::Int(removed))
}

/// Whether `member` is in the set of version `version` of `key`.
///
/// # Errors
/// Engine errors.
pub fn has(txn: &Txn<'_>, key: &[u8], version: u64, member: &[u8]) -> Result<bool, Reply> {
    Ok(matches!(
        members::locate(txn, tag::MEMBER, key, version, member)?,
        Slot::Found(..)
    ))
}

/// Calls `f` with each member of version `version` of set `key`, in engine key order, until
/// it returns `false`.
///
/// # Errors
/// Engine errors, damaged members, or `f`'s.
pub fn for_each_member(
    txn: &Txn<'_>,
    key: &[u8],
    version: u64,
    mut f: impl FnMut(&[u8]) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    let prefix = sub_prefix(tag::MEMBER, key, version);
    txn.for_each_prefix(&prefix, None, false, |k, v| {
        let (m, _) = members::decode(key, prefix.len(), k, v)?;
        f(&m)
    })
}

/// Every member of version `version` of set `key`.
///
/// # Errors
/// Engine errors, damaged members.
pub fn all_members(txn: &Txn<'_>, key: &[u8], version: u64) -> Result<Vec<Vec<u8>>, Reply> {
    let mut out = Vec::new();
    for_each_member(txn, key, version, |m| {
        out.push(m.to_vec());
        Ok(true)
    })?;
    Ok(out)
}

/// SISMEMBER key member
pub fn sismember(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((version, _)) = card(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    Ok(Reply::Int(i64::from(has(txn, &a[1], version, &a[2])?)))
}

/// `SMISMEMBER key member [member ...]`
pub fn smismember(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let set = card(txn, &a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for m in &a[2..] {
        let hit = match set {
            Some((version, _)) => has(txn, &a[1], version, m)?,
            None => false,
        };
        out.push(Reply::Int(i64::from(hit)));
    }
    Ok(Reply::Array(out))
}

/// SCARD key
pub fn scard(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(card(txn, &a[1])?.map_or(0, |(_, c)| c) as i64))
}

/// SMEMBERS key
pub fn smembers(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((version, _)) = card(txn, &a[1])? else {
        return Ok(Reply::Set(Vec::new()));
    };
    let members = all_members(txn, &a[1], version)?
        .into_iter()
        .map(Reply::bulk)
        .collect();
    Ok(Reply::Set(members))
}

/// `SSCAN key cursor [MATCH pattern] [COUNT count]`
pub fn sscan(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let opts = parse_scan_args(&a[2..], false)?;
    let Some((version, _)) = card(txn, &a[1])? else {
        return Ok(Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])]));
    };
    let prefix = sub_prefix(tag::MEMBER, &a[1], version);
    let after = match opts.cursor {
        0 => None,
        c => match txn.store().cursor(c) {
            Some(k) if k.starts_with(&prefix) => Some(k),
            _ => return Ok(Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])),
        },
    };
    let page = txn.scan_prefix(&prefix, after.as_deref(), opts.count)?;
    let next = match page.last() {
        Some((k, _)) if page.len() == opts.count => txn.store().save_cursor(k.clone()),
        _ => 0,
    };
    let mut members = Vec::new();
    for (k, v) in &page {
        let (m, _) = members::decode(&a[1], prefix.len(), k, v)?;
        if opts
            .pattern
            .as_ref()
            .is_none_or(|p| crate::glob::matches(p, &m))
        {
            members.push(Reply::bulk(m.into_owned()));
        }
    }
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(members),
    ]))
}
