//! Sets: SADD, SREM, SISMEMBER, SMISMEMBER, SCARD, SMEMBERS, SSCAN here; SPOP,
//! SRANDMEMBER, SMOVE, SINTER, SINTERCARD, SUNION, SDIFF and the STORE forms in [`ops`].
//! Storage layout and costs: [`store`] and docs/SERVER.md.

pub mod ops;
pub mod store;

use bytes::Bytes;

use super::scan::{self, parse_scan_args};
use crate::resp::Reply;
use crate::store::{R, Txn};
use store::{add_members, all_members, card, decode_member, has, member_prefix, remove_members};

pub use ops::{
    sdiff, sdiffstore, sinter, sintercard, sinterstore, smove, spop, srandmember, sunion,
    sunionstore,
};

/// `SADD key member [member ...]`
pub fn sadd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let added = add_members(txn, &a[1], a[2..].iter().map(|m| m.as_ref()))?;
    if added > 0 {
        txn.notify(crate::notify::class::SET, "sadd", &a[1]);
    }
    Ok(Reply::Int(added))
}

/// `SREM key member [member ...]`
pub fn srem(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let removed = remove_members(txn, &a[1], a[2..].iter().map(|m| m.as_ref()))?;
    if removed > 0 {
        txn.notify_then_del_if_gone(crate::notify::class::SET, "srem", &a[1])?;
    }
    Ok(Reply::Int(removed))
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
        return Ok(scan::done());
    };
    let prefix = member_prefix(&a[1], version);
    scan::page(txn, &prefix, &opts, |k, v, out| {
        let m = decode_member(&a[1], &prefix, k, v)?;
        if scan::matches(opts.pattern.as_deref(), &m) {
            out.push(Reply::bulk(m.into_owned()));
        }
        Ok(())
    })
}
