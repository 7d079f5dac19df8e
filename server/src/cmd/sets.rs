//! Sets: SADD, SREM, SISMEMBER, SMISMEMBER, SCARD, SMEMBERS, SSCAN. A set is a metadata key
//! holding its cardinality plus one engine key per member.

use bytes::Bytes;

use super::{WRONGTYPE, parse_scan_args};
use crate::resp::Reply;
use crate::store::{MAX_KEY_LEN, Meta, R, Txn, member_key, sub_prefix, tag};

/// The cardinality of set `key`: `None` if missing, WRONGTYPE for other types.
fn card(txn: &Txn<'_>, key: &[u8]) -> Result<Option<u64>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Set { card }) => Ok(Some(card)),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// `SADD key member [member ...]`
pub fn sadd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    if a[2..].iter().any(|m| key.len() + m.len() > MAX_KEY_LEN) {
        return Err(Reply::err("set member too long for bloomkv-server"));
    }
    let old = card(txn, key)?;
    let mut n = old.unwrap_or(0);
    let mut added = 0;
    for m in &a[2..] {
        let mk = member_key(key, m);
        if txn.get(&mk)?.is_none() {
            txn.put(mk, Vec::new());
            added += 1;
            n += 1;
        }
    }
    if added > 0 {
        txn.put_meta(key, &Meta::Set { card: n }, old.is_some());
    }
    Ok(Reply::Int(added))
}

/// `SREM key member [member ...]`
pub fn srem(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let Some(mut n) = card(txn, key)? else {
        return Ok(Reply::Int(0));
    };
    let mut removed = 0;
    for m in &a[2..] {
        let mk = member_key(key, m);
        if txn.get(&mk)?.is_some() {
            txn.delete(mk);
            removed += 1;
            n = n.saturating_sub(1);
        }
    }
    if removed > 0 {
        if n == 0 {
            txn.remove_key(key, &Meta::Set { card: 0 })?;
        } else {
            txn.put_meta(key, &Meta::Set { card: n }, true);
        }
    }
    Ok(Reply::Int(removed))
}

/// SISMEMBER key member
pub fn sismember(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if card(txn, &a[1])?.is_none() {
        return Ok(Reply::Int(0));
    }
    Ok(Reply::Int(i64::from(
        txn.get(&member_key(&a[1], &a[2]))?.is_some(),
    )))
}

/// `SMISMEMBER key member [member ...]`
pub fn smismember(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let exists = card(txn, &a[1])?.is_some();
    let mut out = Vec::with_capacity(a.len() - 2);
    for m in &a[2..] {
        let hit = exists && txn.get(&member_key(&a[1], m))?.is_some();
        out.push(Reply::Int(i64::from(hit)));
    }
    Ok(Reply::Array(out))
}

/// SCARD key
pub fn scard(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(card(txn, &a[1])?.unwrap_or(0) as i64))
}

/// SMEMBERS key
pub fn smembers(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if card(txn, &a[1])?.is_none() {
        return Ok(Reply::Set(Vec::new()));
    }
    let prefix = sub_prefix(tag::MEMBER, &a[1]);
    let members = txn
        .scan_prefix(&prefix, None, usize::MAX)?
        .into_iter()
        .map(|(k, _)| Reply::bulk(k[prefix.len()..].to_vec()))
        .collect();
    Ok(Reply::Set(members))
}

/// `SSCAN key cursor [MATCH pattern] [COUNT count]`
pub fn sscan(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let opts = parse_scan_args(&a[2..], false)?;
    if card(txn, &a[1])?.is_none() {
        return Ok(Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])]));
    }
    let prefix = sub_prefix(tag::MEMBER, &a[1]);
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
    let members = page
        .iter()
        .map(|(k, _)| &k[prefix.len()..])
        .filter(|m| {
            opts.pattern
                .as_ref()
                .is_none_or(|p| crate::glob::matches(p, m))
        })
        .map(|m| Reply::bulk(m.to_vec()))
        .collect();
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(members),
    ]))
}
