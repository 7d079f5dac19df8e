//! Keys of any type: DEL, UNLINK, EXISTS, TYPE, RENAME, RENAMENX, COPY, MOVE, KEYS, SCAN,
//! RANDOMKEY, DBSIZE, FLUSHDB, FLUSHALL; TIME.

use bytes::Bytes;

use super::scan::parse_scan_args;
use crate::notify::class;
use crate::resp::Reply;
use crate::store::copy::copy_value;
use crate::store::keys::{DbIndex, meta_prefix};
use crate::store::{R, Record, Txn};

/// `DEL key [key ...]`: removes each key, whatever it holds, with one write of its metadata
/// key (members stay behind under a version nothing names, for compaction to drop).
pub fn del(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut n = 0;
    for key in &a[1..] {
        if txn.remove_key(key)? {
            txn.notify(class::GENERIC, "del", key);
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

/// Whether `key` exists in stored database `db`.
fn exists_in(txn: &mut Txn<'_>, db: DbIndex, key: &[u8]) -> Result<bool, Reply> {
    let here = txn.db();
    txn.select_stored(db);
    let found = txn.meta(key);
    txn.select_stored(here);
    Ok(found?.is_some())
}

/// RENAME and RENAMENX: moves `src`'s value, with its time to live, to `dst` (replacing it
/// unless `nx`). Returns whether it moved.
fn rename_key(txn: &mut Txn<'_>, src: &[u8], dst: &[u8], nx: bool) -> Result<bool, Reply> {
    let Some(rec) = txn.live(src)? else {
        return Err(Reply::err("no such key"));
    };
    if src == dst {
        return Ok(!nx);
    }
    let db = txn.db();
    if nx && exists_in(txn, db, dst)? {
        return Ok(false);
    }
    copy_value(txn, (db, src), (db, dst), rec.expire_at)?;
    txn.remove_key(src)?;
    txn.notify(class::GENERIC, "rename_from", src);
    txn.notify(class::GENERIC, "rename_to", dst);
    Ok(true)
}

/// `RENAME key newkey`: a string moves in one metadata write; a collection's members are
/// copied under the new name (one write each).
pub fn rename(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    rename_key(txn, &a[1], &a[2], false)?;
    Ok(Reply::Ok)
}

/// `RENAMENX key newkey`: 1 when renamed, 0 when `newkey` exists.
pub fn renamenx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(i64::from(rename_key(txn, &a[1], &a[2], true)?)))
}

/// `COPY source destination [DB destination-db] [REPLACE]`: 1 when copied, 0 when the source
/// does not exist or the destination does (without REPLACE). The copy keeps the time to live.
pub fn copy(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut db = txn.db();
    let mut replace = false;
    let mut i = 3;
    while i < a.len() {
        match a[i].to_ascii_uppercase().as_slice() {
            b"REPLACE" => replace = true,
            b"DB" if i + 1 < a.len() => {
                db = txn
                    .store()
                    .physical(super::db_index(txn.store(), &a[i + 1])?);
                i += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        i += 1;
    }
    let here = txn.db();
    if db == here && a[1] == a[2] {
        return Err(Reply::err("source and destination objects are the same"));
    }
    let Some(rec) = txn.live(&a[1])? else {
        return Ok(Reply::Int(0));
    };
    if !replace && exists_in(txn, db, &a[2])? {
        return Ok(Reply::Int(0));
    }
    copy_value(txn, (here, &a[1]), (db, &a[2]), rec.expire_at)?;
    txn.notify_in(db, class::GENERIC, "copy_to", &a[2]);
    Ok(Reply::Int(1))
}

/// `MOVE key db`: 1 when moved, 0 when the key does not exist here or exists there.
pub fn move_(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let db = txn.store().physical(super::db_index(txn.store(), &a[2])?);
    let here = txn.db();
    if db == here {
        return Err(Reply::err("source and destination objects are the same"));
    }
    let Some(rec) = txn.live(&a[1])? else {
        return Ok(Reply::Int(0));
    };
    if exists_in(txn, db, &a[1])? {
        return Ok(Reply::Int(0));
    }
    copy_value(txn, (here, &a[1]), (db, &a[1]), rec.expire_at)?;
    txn.remove_key(&a[1])?;
    txn.notify(class::GENERIC, "move_from", &a[1]);
    txn.notify_in(db, class::GENERIC, "move_to", &a[1]);
    Ok(Reply::Int(1))
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

/// The live keys of the current database in hash slot `slot`, at most `limit` of them
/// (`CLUSTER COUNTKEYSINSLOT`, `GETKEYSINSLOT`). Redis keeps an index by slot; here the
/// keys are not stored by slot, so this reads every key of the database.
///
/// # Errors
/// Engine errors.
pub fn keys_in_slot(txn: &Txn<'_>, slot: u16, limit: usize) -> Result<Vec<Vec<u8>>, Reply> {
    let now = txn.now_ms();
    let mut out = Vec::new();
    let prefix = meta_prefix(txn.db());
    if limit == 0 {
        return Ok(out);
    }
    txn.for_each_prefix(&prefix, None, false, |k, v| {
        let key = &k[prefix.len()..];
        if !expired(v, now) && crate::keyslot::key_slot(key) == slot {
            out.push(key.to_vec());
        }
        Ok(out.len() < limit)
    })?;
    Ok(out)
}

/// `SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]`
pub fn scan(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let opts = parse_scan_args(&a[1..], true)?;
    let prefix = meta_prefix(txn.db());
    let now = txn.now_ms();
    super::scan::page(txn, &prefix, &opts, |k, v, out| {
        let key = &k[prefix.len()..];
        if expired(v, now) || !super::scan::matches(opts.pattern.as_deref(), key) {
            return Ok(());
        }
        if let Some(t) = &opts.type_name {
            let m = Record::decode(v)?.meta;
            if !m.type_name().eq_ignore_ascii_case(t) {
                return Ok(());
            }
        }
        out.push(Reply::bulk(key.to_vec()));
        Ok(())
    })
}

/// RANDOMKEY: a random live key of the selected database; nil when it has none.
pub fn randomkey(txn: &mut Txn<'_>, _a: &[Bytes]) -> R {
    let prefix = meta_prefix(txn.db());
    let n = txn.store().dbsize(txn.db()).max(0) as u64;
    let now = txn.now_ms();
    // Expired keys the reclaimer has not removed yet are drawn again; past a few draws
    // (a database of mostly expired keys) the first live key in order answers.
    for _ in 0..8 {
        let Some((k, v)) = super::random::one(txn, &prefix, n)? else {
            return Ok(Reply::Nil);
        };
        if !expired(&v, now) {
            return Ok(Reply::bulk(k[prefix.len()..].to_vec()));
        }
    }
    let mut found = None;
    txn.for_each_prefix(&prefix, None, false, |k, v| {
        if expired(v, now) {
            return Ok(true);
        }
        found = Some(k[prefix.len()..].to_vec());
        Ok(false)
    })?;
    Ok(found.map_or(Reply::Nil, Reply::bulk))
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
