//! DUMP and RESTORE in Redis's serialization (an RDB object, its RDB version and CRC-64), so
//! a value dumped by Redis restores here and one dumped here restores in Redis 7.0 and later.
//!
//! DUMP writes the plain encodings every Redis reads (a string, a set or hash of strings, a
//! sorted set with binary scores, a list as listpack nodes, a stream as Redis 7.0 writes it);
//! RESTORE also reads the compact ones Redis 7.0-7.2 writes (intsets, listpacks,
//! LZF-compressed and integer strings) and streams from Redis 5 to 7.2 ([`stream`]).
//! Bloom and cuckoo filters are not serialized (`ERR` names them).

pub mod listpack;
pub mod rdb;
pub mod stream;
pub mod stream_store;

use bytes::Bytes;

use super::{NOT_INT, hashes, lists, parse_i64, sets, strings, zsets};
use crate::resp::{Reply, format_double};
use crate::store::{Meta, R, Record, Txn};
use rdb::{Bad, Reader, kind};

/// Elements per listpack node of a dumped list (Redis's default `list-max-listpack-size`
/// is 8 KiB per node; a count keeps nodes small for any element size).
const LIST_NODE_ENTRIES: usize = 128;

/// The serialized value of `key`, or `None` when it does not exist.
///
/// # Errors
/// Engine errors; a stream or a Bloom filter (not serialized).
pub fn dump_value(txn: &Txn<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    let Some(meta) = txn.meta(key)? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    match &meta {
        Meta::Str(_) | Meta::Chunked { .. } => {
            out.push(kind::STRING);
            rdb::put_string(&mut out, &strings::read_string(txn, key, &meta)?);
        }
        Meta::Set { version, card } => {
            out.push(kind::SET);
            rdb::put_len(&mut out, *card);
            sets::store::for_each_member(txn, key, *version, |m| {
                rdb::put_string(&mut out, m);
                Ok(true)
            })?;
        }
        Meta::Hash { version, len } => {
            out.push(kind::HASH);
            rdb::put_len(&mut out, *len);
            hashes::store::for_each_field(txn, key, *version, |f, v| {
                rdb::put_string(&mut out, f);
                rdb::put_string(&mut out, v);
                Ok(true)
            })?;
        }
        Meta::Zset { version, card } => {
            out.push(kind::ZSET_2);
            rdb::put_len(&mut out, *card);
            let z = zsets::store::Zset {
                version: *version,
                card: *card,
            };
            zsets::store::for_each_ranked(txn, key, z, false, |_, m, s| {
                rdb::put_string(&mut out, m);
                out.extend_from_slice(&s.to_le_bytes());
                Ok(true)
            })?;
        }
        Meta::List { .. } => {
            let Some(l) = lists::store::get_list(txn, key)? else {
                return Ok(None);
            };
            let mut elems: Vec<Vec<u8>> = Vec::with_capacity(l.len().min(1 << 16) as usize);
            lists::store::for_each_element(txn, key, l, 0, false, |_, v| {
                elems.push(v.to_vec());
                Ok(true)
            })?;
            out.push(kind::LIST_QUICKLIST_2);
            let nodes: Vec<&[Vec<u8>]> = elems.chunks(LIST_NODE_ENTRIES).collect();
            rdb::put_len(&mut out, nodes.len() as u64);
            for node in nodes {
                // Container 2: a packed listpack node.
                rdb::put_len(&mut out, 2);
                let refs: Vec<&[u8]> = node.iter().map(Vec::as_slice).collect();
                let lp = listpack::write(&refs);
                rdb::put_len(&mut out, lp.len() as u64);
                out.extend_from_slice(&lp);
            }
        }
        Meta::Stream(m) => stream::write(&mut out, &stream_store::collect(txn, key, m)?),
        Meta::Bloom { .. } => {
            return Err(Reply::err(
                "DUMP of a Bloom filter is not supported by bloomkv-server (BF.SCANDUMP is the filters' own form)",
            ));
        }
        Meta::Cuckoo { .. } => {
            return Err(Reply::err(
                "DUMP of a cuckoo filter is not supported by bloomkv-server (CF.SCANDUMP is the filters' own form)",
            ));
        }
    }
    Ok(Some(rdb::seal(out)))
}

/// `DUMP key`
pub fn dump(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(dump_value(txn, &a[1])?.map_or(Reply::Nil, Reply::bulk))
}

/// A decoded value, ready to be written.
enum Value {
    Str(Vec<u8>),
    Set(Vec<Vec<u8>>),
    Hash(Vec<(Vec<u8>, Vec<u8>)>),
    Zset(Vec<(Vec<u8>, f64)>),
    List(Vec<Vec<u8>>),
    Stream(stream::StreamValue),
}

fn pairs<T>(items: Vec<T>) -> Result<Vec<(T, T)>, Bad> {
    if !items.len().is_multiple_of(2) {
        return Err(Bad);
    }
    let mut out = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(a), Some(b)) = (it.next(), it.next()) {
        out.push((a, b));
    }
    Ok(out)
}

fn score(text: &[u8]) -> Result<f64, Bad> {
    super::parse_f64(text).ok_or(Bad)
}

/// Decodes one RDB object (type byte first, nothing after it).
fn decode(obj: &[u8]) -> Result<Value, Bad> {
    let mut r = Reader::new(obj);
    let t = r.byte()?;
    let v = match t {
        kind::STRING => Value::Str(r.string()?),
        kind::SET => {
            let n = r.count()?;
            Value::Set((0..n).map(|_| r.string()).collect::<Result<_, _>>()?)
        }
        kind::SET_INTSET => Value::Set(listpack::read_intset(&r.string()?)?),
        kind::SET_LISTPACK => Value::Set(listpack::read(&r.string()?)?),
        kind::HASH => {
            let n = r.count()?;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                out.push((r.string()?, r.string()?));
            }
            Value::Hash(out)
        }
        kind::HASH_LISTPACK => Value::Hash(pairs(listpack::read(&r.string()?)?)?),
        kind::ZSET | kind::ZSET_2 => {
            let n = r.count()?;
            let mut out = Vec::with_capacity(n);
            for _ in 0..n {
                let m = r.string()?;
                let s = if t == kind::ZSET_2 {
                    r.double()?
                } else {
                    r.text_double()?
                };
                if s.is_nan() {
                    return Err(Bad);
                }
                out.push((m, s));
            }
            Value::Zset(out)
        }
        kind::ZSET_LISTPACK => Value::Zset(
            pairs(listpack::read(&r.string()?)?)?
                .into_iter()
                .map(|(m, s)| Ok((m, score(&s)?)))
                .collect::<Result<_, Bad>>()?,
        ),
        kind::LIST => {
            let n = r.count()?;
            Value::List((0..n).map(|_| r.string()).collect::<Result<_, _>>()?)
        }
        kind::LIST_QUICKLIST_2 => {
            let nodes = r.count()?;
            let mut out = Vec::new();
            for _ in 0..nodes {
                match r.length()? {
                    // A plain node: one element as it is.
                    1 => out.push(r.string()?),
                    2 => out.extend(listpack::read(&r.string()?)?),
                    _ => return Err(Bad),
                }
            }
            Value::List(out)
        }
        kind::STREAM_LISTPACKS | kind::STREAM_LISTPACKS_2 | kind::STREAM_LISTPACKS_3 => {
            Value::Stream(stream::read(&mut r, t)?)
        }
        _ => return Err(Bad),
    };
    if !r.done() {
        return Err(Bad);
    }
    // Redis never writes an empty collection, and refuses one (there is no empty key); an
    // empty stream is a value of its own.
    let empty = match &v {
        Value::Str(_) | Value::Stream(_) => false,
        Value::Set(m) | Value::List(m) => m.is_empty(),
        Value::Hash(f) => f.is_empty(),
        Value::Zset(m) => m.is_empty(),
    };
    if empty {
        return Err(Bad);
    }
    Ok(v)
}

fn arg(b: &[u8]) -> Bytes {
    Bytes::copy_from_slice(b)
}

/// Writes `v` as `key` (which does not exist now), with time to live `expire_at` (0: none).
fn write_value(txn: &mut Txn<'_>, key: &Bytes, v: Value, expire_at: u64) -> Result<(), Reply> {
    let cmd = |name: &'static str| vec![Bytes::from_static(name.as_bytes()), key.clone()];
    match v {
        Value::Str(s) => {
            let mut a = cmd("SET");
            a.push(Bytes::from(s));
            strings::set(txn, &a)?;
        }
        Value::Set(members) => {
            let mut a = cmd("SADD");
            a.extend(members.iter().map(|m| arg(m)));
            sets::sadd(txn, &a)?;
        }
        Value::Hash(fields) => {
            let mut a = cmd("HSET");
            for (f, v) in &fields {
                a.push(arg(f));
                a.push(arg(v));
            }
            hashes::hset(txn, &a)?;
        }
        Value::Zset(members) => {
            let mut a = cmd("ZADD");
            for (m, s) in &members {
                a.push(Bytes::from(format_double(*s)));
                a.push(arg(m));
            }
            zsets::zadd(txn, &a)?;
        }
        Value::List(elems) => {
            let mut a = cmd("RPUSH");
            a.extend(elems.iter().map(|e| arg(e)));
            lists::rpush(txn, &a)?;
        }
        Value::Stream(s) => stream_store::store(txn, key, s)?,
    }
    if expire_at != 0
        && let Some(rec) = txn.live(key)?
    {
        txn.put_record(
            key,
            Record {
                expire_at,
                meta: rec.meta,
            },
        )?;
    }
    Ok(())
}

/// `RESTORE key ttl serialized [REPLACE] [ABSTTL] [IDLETIME s] [FREQ f]`
pub fn restore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq) = (false, false);
    let mut j = 4;
    while j < a.len() {
        let more = j + 1 < a.len();
        let o = a[j].to_ascii_uppercase();
        match o.as_slice() {
            b"REPLACE" => replace = true,
            b"ABSTTL" => absttl = true,
            b"IDLETIME" if more && !freq => {
                let v = parse_i64(&a[j + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
                if v < 0 {
                    return Err(Reply::err("Invalid IDLETIME value, must be >= 0"));
                }
                idle = true;
                j += 1;
            }
            b"FREQ" if more && !idle => {
                let v = parse_i64(&a[j + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
                if !(0..=255).contains(&v) {
                    return Err(Reply::err("Invalid FREQ value, must be >= 0 and <= 255"));
                }
                freq = true;
                j += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        j += 1;
    }
    let key = &a[1];
    if !replace && txn.live(key)?.is_some() {
        return Err(Reply::Error(
            "BUSYKEY Target key name already exists.".into(),
        ));
    }
    let ttl = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    if ttl < 0 {
        return Err(Reply::err("Invalid TTL value, must be >= 0"));
    }
    let Some(obj) = rdb::unseal(&a[3]) else {
        return Err(Reply::err("DUMP payload version or checksum are wrong"));
    };
    let value = decode(obj).map_err(|Bad| Reply::err("Bad data format"))?;
    let replaced = replace && txn.remove_key(key)?;
    let now = txn.now_ms();
    let expire_at = match ttl as u64 {
        0 => 0,
        t if absttl => t,
        t => now.saturating_add(t),
    };
    // Already expired: nothing is created (the old value, if REPLACE, is gone).
    if expire_at != 0 && expire_at <= now {
        if replaced {
            txn.notify(crate::notify::class::GENERIC, "del", key);
        }
        return Ok(Reply::Ok);
    }
    txn.quietly(|txn| write_value(txn, key, value, expire_at))?;
    txn.notify(crate::notify::class::GENERIC, "restore", key);
    Ok(Reply::Ok)
}
