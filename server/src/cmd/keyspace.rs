//! Keys of any type: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, DBSIZE, FLUSHDB, FLUSHALL; TIME.

use bytes::Bytes;

use super::parse_scan_args;
use crate::resp::Reply;
use crate::store::{R, Record, Txn, tag};

/// `DEL key [key ...]`: removes each key, whatever it holds, with one write of its metadata
/// key (members stay behind under a version nothing names, for compaction to drop).
pub fn del(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut n = 0;
    for key in &a[1..] {
        if txn.remove_key(key)? {
            n += 1;
        }
    }
    Ok(Reply::Int(n))
}

/// `EXISTS key [key ...]`: a key named twice counts twice, as in Redis.
pub fn exists(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut n = 0;
    for key in &a[1..] {
        if txn.meta(key)?.is_some() {
            n += 1;
        }
    }
    Ok(Reply::Int(n))
}

/// TYPE key
pub fn type_(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Status(
        txn.meta(&a[1])?
            .map_or("none", |m| m.type_name())
            .to_string(),
    ))
}

/// Whether the metadata value `v` is of a key that has expired by `now`.
fn expired(v: &[u8], now: u64) -> bool {
    Record::peek(v).is_some_and(|(_, at)| at != 0 && at <= now)
}

/// KEYS pattern
pub fn keys(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let now = txn.now_ms();
    let mut out = Vec::new();
    txn.for_each_prefix(&[tag::META], None, false, |k, v| {
        let key = &k[1..];
        if !expired(v, now) && crate::glob::matches(&a[1], key) {
            out.push(Reply::bulk(key.to_vec()));
        }
        Ok(true)
    })?;
    Ok(Reply::Array(out))
}

/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`
pub fn scan(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let opts = parse_scan_args(&a[1..], true)?;
    let after = match opts.cursor {
        0 => None,
        c => match txn.store().cursor(c) {
            Some(k) if k.first() == Some(&tag::META) => Some(k),
            _ => return Ok(Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])),
        },
    };
    let page = txn.scan_prefix(&[tag::META], after.as_deref(), opts.count)?;
    let next = match page.last() {
        Some((k, _)) if page.len() == opts.count => txn.store().save_cursor(k.clone()),
        _ => 0,
    };
    let now = txn.now_ms();
    let mut out = Vec::new();
    for (k, v) in &page {
        let key = &k[1..];
        if expired(v, now) {
            continue;
        }
        if let Some(p) = &opts.pattern
            && !crate::glob::matches(p, key)
        {
            continue;
        }
        if let Some(t) = &opts.type_name {
            let m = Record::decode(v)?.meta;
            if !m.type_name().eq_ignore_ascii_case(t) {
                continue;
            }
        }
        out.push(Reply::bulk(key.to_vec()));
    }
    Ok(Reply::Array(vec![
        Reply::bulk(next.to_string()),
        Reply::Array(out),
    ]))
}

/// DBSIZE: the keys present, counting expired ones not yet reclaimed (as Redis does).
pub fn dbsize(txn: &mut Txn<'_>, _a: &[Bytes]) -> R {
    Ok(Reply::Int(txn.store().dbsize().max(0)))
}

/// `FLUSHDB [ASYNC | SYNC]` (and FLUSHALL: there is one database): removes every key with
/// one range deletion, whatever their number (runs with every other writer locked out).
pub fn flushdb(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() > 2 {
        return Err(Reply::err("syntax error"));
    }
    if let Some(mode) = a.get(1) {
        let m = mode.to_ascii_uppercase();
        if m != b"ASYNC" && m != b"SYNC" {
            return Err(Reply::err("syntax error"));
        }
    }
    txn.clear_all();
    Ok(Reply::Ok)
}

/// TIME: the command's clock (its `Ctx`, so a script replayed on a replica reads the same
/// time), to the millisecond.
pub fn time(txn: &mut Txn<'_>, _a: &[Bytes]) -> R {
    let ms = txn.now_ms();
    Ok(Reply::Array(vec![
        Reply::bulk((ms / 1000).to_string()),
        Reply::bulk(((ms % 1000) * 1000).to_string()),
    ]))
}
