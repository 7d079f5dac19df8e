//! Keys of any type: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, DBSIZE, FLUSHDB, FLUSHALL; TIME.

use bytes::Bytes;

use super::parse_scan_args;
use crate::resp::Reply;
use crate::store::keys::meta_prefix;
use crate::store::{R, Record, Txn};

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
    let prefix = meta_prefix(txn.db());
    txn.for_each_prefix(&prefix, None, false, |k, v| {
        let key = &k[prefix.len()..];
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
    let prefix = meta_prefix(txn.db());
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
    let now = txn.now_ms();
    let mut out = Vec::new();
    for (k, v) in &page {
        let key = &k[prefix.len()..];
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

/// DBSIZE: the keys present in the selected database, counting expired ones not yet
/// reclaimed (as Redis does).
pub fn dbsize(txn: &mut Txn<'_>, _a: &[Bytes]) -> R {
    Ok(Reply::Int(txn.store().dbsize(txn.db()).max(0)))
}

/// `FLUSHDB [ASYNC | SYNC]`: removes every key of the selected database with one range
/// deletion of its metadata and one of its expiry index, whatever their number (runs with
/// every other writer locked out; the members left behind are compaction's).
pub fn flushdb(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    flush_mode(a)?;
    txn.clear_db();
    Ok(Reply::Ok)
}

/// `FLUSHALL [ASYNC | SYNC]`: removes every key of every database with one range deletion.
pub fn flushall(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    flush_mode(a)?;
    txn.clear_every_db();
    Ok(Reply::Ok)
}

/// Checks FLUSHDB's and FLUSHALL's optional mode (both run the same way: one range
/// deletion is already as quick as an asynchronous flush).
fn flush_mode(a: &[Bytes]) -> Result<(), Reply> {
    if a.len() > 2 {
        return Err(Reply::err("syntax error"));
    }
    if let Some(mode) = a.get(1) {
        let m = mode.to_ascii_uppercase();
        if m != b"ASYNC" && m != b"SYNC" {
            return Err(Reply::err("syntax error"));
        }
    }
    Ok(())
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
