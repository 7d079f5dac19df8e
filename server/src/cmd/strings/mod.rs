//! Strings and bitmaps: GET, SET (with its expiry options), SETNX, SETEX, PSETEX, GETSET,
//! GETDEL, GETEX, MGET, MSET, MSETNX, INCR/DECR(BY), APPEND, STRLEN, SETBIT, GETBIT, BITCOUNT.
//!
//! A string is held inline in its metadata value until a bit or append operation would make
//! it longer than one chunk; from then on it is chunked (4 KiB per engine value), so a
//! SETBIT writes one chunk (and the metadata when the string grows).

pub mod bitfield;
pub mod bitops;
pub mod edit;
pub mod lcs;
pub mod ranges;

use bytes::Bytes;

use crate::cmd::expiry::{Expiry, parse_expiry};
use crate::cmd::{NOT_INT, WRONGTYPE, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{CHUNK_BYTES, Meta, R, Record, Txn, chunk_key, meta_key, sub_prefix, tag};

pub use bitfield::{bitfield, bitfield_ro};
pub use bitops::{bitop, bitpos};
pub use lcs::lcs;
pub use ranges::{getrange, setrange};

/// Largest string value: the engine's value limit less the metadata tag.
pub const MAX_STRING: usize = 256 * 1024 * 1024 - 16;

/// Largest bit offset (Redis: 2^32 - 1, a 512 MB string).
const MAX_BIT_OFFSET: u64 = (1 << 32) - 1;

fn too_big() -> Reply {
    Reply::err("string exceeds maximum allowed size (proto-max-bulk-len)")
}

/// The bytes of a string key (inline or chunked).
///
/// # Errors
/// Engine errors.
pub fn read_string(txn: &Txn<'_>, key: &[u8], meta: &Meta) -> Result<Vec<u8>, Reply> {
    match meta {
        Meta::Str(v) => Ok(v.clone()),
        Meta::Chunked { version, len } => {
            let len = *len as usize;
            let mut out = vec![0u8; len];
            let prefix = sub_prefix(tag::CHUNK, key, *version);
            for (k, v) in txn.scan_prefix(&prefix, None, usize::MAX)? {
                let idx = chunk_index(&k[prefix.len()..]);
                let start = idx.saturating_mul(CHUNK_BYTES);
                if start >= len {
                    continue;
                }
                let n = v.len().min(len - start);
                out[start..start + n].copy_from_slice(&v[..n]);
            }
            Ok(out)
        }
        _ => Err(Reply::Error(WRONGTYPE.into())),
    }
}

fn chunk_index(suffix: &[u8]) -> usize {
    suffix
        .try_into()
        .map(u64::from_be_bytes)
        .map_or(usize::MAX, |i| usize::try_from(i).unwrap_or(usize::MAX))
}

/// The string value of `key`, `None` if missing; WRONGTYPE for other types.
fn get_string(txn: &Txn<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(m) => read_string(txn, key, &m).map(Some),
    }
}

/// Sets `key` to the inline string `value` expiring at `expire_at` (0: never), replacing
/// whatever it held: one write of its metadata key.
///
/// # Errors
/// Engine errors reading the current record.
pub fn set_string(
    txn: &mut Txn<'_>,
    key: &[u8],
    value: Vec<u8>,
    expire_at: u64,
) -> Result<(), Reply> {
    let old = txn.record_to_replace(key)?;
    let record = Record {
        expire_at,
        meta: Meta::Str(value),
    };
    txn.replace_record(key, record, old.as_ref());
    Ok(())
}

/// GET key: one engine read for an inline string, whose bytes go into the reply as read.
pub fn get(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some(v) = txn.get_once(&meta_key(txn.db(), &a[1]))? else {
        return Ok(Reply::Nil);
    };
    match Record::inline_string(v, txn.now_ms()) {
        Ok(Some(b)) => Ok(Reply::Bulk(b)),
        Ok(None) => Ok(Reply::Nil),
        // A chunked string (read under the command's snapshot), another type, damage.
        Err(_) => Ok(Reply::opt_bulk(get_string(txn, &a[1])?)),
    }
}

/// `SET key value [NX | XX] [GET] [EX s | PX ms | EXAT s | PXAT ms | KEEPTTL]`
pub fn set(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (mut nx, mut xx, mut get) = (false, false, false);
    let mut expiry: Option<Expiry> = None;
    let mut keepttl = false;
    let mut i = 3;
    while i < a.len() {
        let opt = a[i].to_ascii_uppercase();
        match opt.as_slice() {
            b"NX" if !xx => nx = true,
            b"XX" if !nx => xx = true,
            b"GET" => get = true,
            b"KEEPTTL" if expiry.is_none() => keepttl = true,
            b"EX" | b"PX" | b"EXAT" | b"PXAT" if expiry.is_none() && !keepttl => {
                let Some(v) = a.get(i + 1) else {
                    return Err(Reply::err("syntax error"));
                };
                expiry = Some(parse_expiry(&opt, v, "set")?);
                i += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        i += 1;
    }
    let key = &a[1];
    if a[2].len() > MAX_STRING {
        return Err(too_big());
    }
    // One read of the record, expired or not: the write below replaces it as stored.
    let stored = txn.record_to_replace(key)?;
    let old = stored.as_ref().filter(|r| !r.expired(txn.now_ms()));
    let old_value = match (old, get) {
        (Some(r), true) => Some(read_string(txn, key, &r.meta)?),
        _ => None,
    };
    let skip = (nx && old.is_some()) || (xx && old.is_none());
    if !skip {
        let expire_at = match (expiry, old) {
            (Some(e), _) => e.at(txn.now_ms())?,
            (None, Some(r)) if keepttl => r.expire_at,
            (None, _) => 0,
        };
        let record = Record {
            expire_at,
            meta: Meta::Str(a[2].to_vec()),
        };
        txn.replace_record(key, record, stored.as_ref());
        txn.notify(class::STRING, "set", key);
        if expiry.is_some() {
            txn.notify(class::GENERIC, "expire", key);
        }
    }
    Ok(match (get, skip) {
        (true, _) => Reply::opt_bulk(old_value),
        (false, true) => Reply::Nil,
        (false, false) => Reply::Ok,
    })
}

/// `SETEX key seconds value`
pub fn setex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    set_with_expiry(txn, a, b"EX", "setex")
}

/// `PSETEX key milliseconds value`
pub fn psetex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    set_with_expiry(txn, a, b"PX", "psetex")
}

fn set_with_expiry(txn: &mut Txn<'_>, a: &[Bytes], unit: &[u8], cmd: &'static str) -> R {
    let e = parse_expiry(unit, &a[2], cmd)?;
    if a[3].len() > MAX_STRING {
        return Err(too_big());
    }
    let at = e.at(txn.now_ms())?;
    set_string(txn, &a[1], a[3].to_vec(), at)?;
    txn.notify(class::STRING, "set", &a[1]);
    txn.notify(class::GENERIC, "expire", &a[1]);
    Ok(Reply::Ok)
}

/// `GETDEL key`
pub fn getdel(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some(v) = get_string(txn, &a[1])? else {
        return Ok(Reply::Nil);
    };
    txn.remove_key(&a[1])?;
    txn.notify(class::GENERIC, "del", &a[1]);
    Ok(Reply::bulk(v))
}

/// `GETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST]`
pub fn getex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let mut expiry: Option<Expiry> = None;
    let mut persist = false;
    let mut i = 2;
    while i < a.len() {
        let opt = a[i].to_ascii_uppercase();
        match opt.as_slice() {
            b"PERSIST" if expiry.is_none() && !persist => persist = true,
            b"EX" | b"PX" | b"EXAT" | b"PXAT" if expiry.is_none() && !persist => {
                let Some(v) = a.get(i + 1) else {
                    return Err(Reply::err("syntax error"));
                };
                expiry = Some(parse_expiry(&opt, v, "getex")?);
                i += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        i += 1;
    }
    let Some(rec) = txn.live(key)? else {
        return Ok(Reply::Nil);
    };
    let v = read_string(txn, key, &rec.meta)?;
    let now = txn.now_ms();
    match (expiry, persist) {
        (Some(e), _) => {
            let at = e.at(now)?;
            if at <= now {
                txn.remove_key(key)?;
                txn.notify(class::GENERIC, "del", key);
            } else {
                txn.put_record(
                    key,
                    Record {
                        expire_at: at,
                        ..rec
                    },
                )?;
                txn.notify(class::GENERIC, "expire", key);
            }
        }
        (None, true) if rec.expire_at != 0 => {
            txn.put_record(
                key,
                Record {
                    expire_at: 0,
                    ..rec
                },
            )?;
            txn.notify(class::GENERIC, "persist", key);
        }
        _ => {}
    }
    Ok(Reply::bulk(v))
}

/// SETNX key value
pub fn setnx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a[2].len() > MAX_STRING {
        return Err(too_big());
    }
    if txn.meta(&a[1])?.is_some() {
        return Ok(Reply::Int(0));
    }
    set_string(txn, &a[1], a[2].to_vec(), 0)?;
    txn.notify(class::STRING, "set", &a[1]);
    Ok(Reply::Int(1))
}

/// GETSET key value
pub fn getset(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a[2].len() > MAX_STRING {
        return Err(too_big());
    }
    let old_value = get_string(txn, &a[1])?;
    set_string(txn, &a[1], a[2].to_vec(), 0)?;
    txn.notify(class::STRING, "set", &a[1]);
    Ok(Reply::opt_bulk(old_value))
}

/// `MGET key [key ...]`: nil for missing keys and keys of other types.
pub fn mget(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut out = Vec::with_capacity(a.len() - 1);
    for key in &a[1..] {
        out.push(match txn.meta(key)? {
            Some(m @ (Meta::Str(_) | Meta::Chunked { .. })) => {
                Reply::bulk(read_string(txn, key, &m)?)
            }
            _ => Reply::Nil,
        });
    }
    Ok(Reply::Array(out))
}

/// `MSET key value [key value ...]`
pub fn mset(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len().is_multiple_of(2) {
        return Err(Reply::err("wrong number of arguments for 'mset' command"));
    }
    if a[2..].iter().step_by(2).any(|v| v.len() > MAX_STRING) {
        return Err(too_big());
    }
    for pair in a[1..].chunks(2) {
        set_string(txn, &pair[0], pair[1].to_vec(), 0)?;
        txn.notify(class::STRING, "set", &pair[0]);
    }
    Ok(Reply::Ok)
}

/// `MSETNX key value [key value ...]`: sets them all only if none exists.
pub fn msetnx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len().is_multiple_of(2) {
        return Err(Reply::err("wrong number of arguments for 'msetnx' command"));
    }
    if a[2..].iter().step_by(2).any(|v| v.len() > MAX_STRING) {
        return Err(too_big());
    }
    for pair in a[1..].chunks(2) {
        if txn.meta(&pair[0])?.is_some() {
            return Ok(Reply::Int(0));
        }
    }
    for pair in a[1..].chunks(2) {
        set_string(txn, &pair[0], pair[1].to_vec(), 0)?;
        txn.notify(class::STRING, "set", &pair[0]);
    }
    Ok(Reply::Int(1))
}

/// INCRBY's work: the value changes, its time to live stays (as in Redis).
fn incr_by(txn: &mut Txn<'_>, key: &[u8], by: i64) -> R {
    let current = match get_string(txn, key)? {
        None => 0,
        Some(v) => parse_i64(&v).ok_or_else(|| Reply::err(NOT_INT))?,
    };
    let new = current
        .checked_add(by)
        .ok_or_else(|| Reply::err("increment or decrement would overflow"))?;
    txn.put_meta(key, Meta::Str(new.to_string().into_bytes()))?;
    txn.notify(class::STRING, "incrby", key);
    Ok(Reply::Int(new))
}

/// `INCRBYFLOAT key increment`: in Redis's long double arithmetic and text
/// (`cmd::longdouble`); an infinite increment is refused by its infinite result, as Redis 7.0.
pub fn incrbyfloat(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    use crate::cmd::longdouble::IncrError;
    let current = get_string(txn, &a[1])?;
    let text = crate::cmd::longdouble::incr(current.as_deref(), &a[2]).map_err(|e| match e {
        IncrError::Value | IncrError::Increment => Reply::err("value is not a valid float"),
        IncrError::InfiniteIncrement | IncrError::Overflow => {
            Reply::err("increment would produce NaN or Infinity")
        }
    })?;
    txn.put_meta(&a[1], Meta::Str(text.clone().into_bytes()))?;
    txn.notify(class::STRING, "incrbyfloat", &a[1]);
    Ok(Reply::bulk(text))
}

fn int_arg(b: &[u8]) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err(NOT_INT))
}

/// INCR key
pub fn incr(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    incr_by(txn, &a[1], 1)
}

/// DECR key
pub fn decr(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    incr_by(txn, &a[1], -1)
}

/// INCRBY key increment
pub fn incrby(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let by = int_arg(&a[2])?;
    incr_by(txn, &a[1], by)
}

/// DECRBY key decrement
pub fn decrby(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let by = int_arg(&a[2])?;
    let neg = by
        .checked_neg()
        .ok_or_else(|| Reply::err("decrement would overflow"))?;
    incr_by(txn, &a[1], neg)
}

/// Writes `data` at byte `offset` of the chunked string `key` (of length `len`), touching only
/// the chunks the range covers; returns the new length.
fn write_chunked(
    txn: &mut Txn<'_>,
    key: &[u8],
    version: u64,
    len: u64,
    offset: u64,
    data: &[u8],
) -> Result<u64, Reply> {
    let mut pos = offset;
    let mut rest = data;
    while !rest.is_empty() {
        let idx = pos / CHUNK_BYTES as u64;
        let within = (pos % CHUNK_BYTES as u64) as usize;
        let n = rest.len().min(CHUNK_BYTES - within);
        let ck = chunk_key(key, version, idx);
        let mut chunk = txn.get(&ck)?.unwrap_or_default();
        if chunk.len() < within + n {
            chunk.resize(within + n, 0);
        }
        chunk[within..within + n].copy_from_slice(&rest[..n]);
        txn.put(ck, chunk);
        pos += n as u64;
        rest = &rest[n..];
    }
    let new_len = len.max(offset + data.len() as u64);
    txn.put_meta(
        key,
        Meta::Chunked {
            version,
            len: new_len,
        },
    )?;
    Ok(new_len)
}

/// Turns the inline string `key` into a chunked one under a new version; returns the version.
fn to_chunked(txn: &mut Txn<'_>, key: &[u8], value: &[u8]) -> Result<u64, Reply> {
    let version = txn.new_version()?;
    for (i, c) in value.chunks(CHUNK_BYTES).enumerate() {
        txn.put(chunk_key(key, version, i as u64), c.to_vec());
    }
    txn.put_meta(
        key,
        Meta::Chunked {
            version,
            len: value.len() as u64,
        },
    )?;
    Ok(version)
}

/// APPEND key value
pub fn append(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let r = append_value(txn, a)?;
    txn.notify(class::STRING, "append", &a[1]);
    Ok(r)
}

fn append_value(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let data = &a[2];
    match txn.meta(key)? {
        None => {
            if data.len() > MAX_STRING {
                return Err(too_big());
            }
            set_string(txn, key, data.to_vec(), 0)?;
            Ok(Reply::Int(data.len() as i64))
        }
        Some(Meta::Str(mut v)) => {
            let new_len = v.len() + data.len();
            if new_len as u64 > MAX_BIT_OFFSET / 8 + 1 {
                return Err(too_big());
            }
            if new_len <= CHUNK_BYTES {
                v.extend_from_slice(data);
                txn.put_meta(key, Meta::Str(v))?;
            } else {
                let version = to_chunked(txn, key, &v)?;
                write_chunked(txn, key, version, v.len() as u64, v.len() as u64, data)?;
            }
            Ok(Reply::Int(new_len as i64))
        }
        Some(Meta::Chunked { version, len }) => {
            if len + data.len() as u64 > MAX_BIT_OFFSET / 8 + 1 {
                return Err(too_big());
            }
            Ok(Reply::Int(
                write_chunked(txn, key, version, len, len, data)? as i64,
            ))
        }
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// STRLEN key
pub fn strlen(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    match txn.meta(&a[1])? {
        None => Ok(Reply::Int(0)),
        Some(Meta::Str(v)) => Ok(Reply::Int(v.len() as i64)),
        Some(Meta::Chunked { len, .. }) => Ok(Reply::Int(len as i64)),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

fn bit_offset(b: &[u8]) -> Result<u64, Reply> {
    match parse_i64(b) {
        Some(n) if n >= 0 && n as u64 <= MAX_BIT_OFFSET => Ok(n as u64),
        _ => Err(Reply::err("bit offset is not an integer or out of range")),
    }
}

/// SETBIT key offset value: replies with the bit's previous value.
pub fn setbit(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let r = set_bit(txn, a)?;
    // Redis tells of a SETBIT even when the bit already had that value.
    txn.notify(class::STRING, "setbit", &a[1]);
    Ok(r)
}

fn set_bit(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let offset = bit_offset(&a[2])?;
    let on = match a[3].as_ref() {
        b"1" => true,
        b"0" => false,
        _ => return Err(Reply::err("bit is not an integer or out of range")),
    };
    let byte = (offset / 8) as usize;
    let mask = 0x80u8 >> (offset % 8);
    let set = |b: &mut u8| -> bool {
        let was = *b & mask != 0;
        if on {
            *b |= mask;
        } else {
            *b &= !mask;
        }
        was
    };
    let meta = txn.meta(key)?;
    let (version, len, existed) = match meta {
        None if byte < CHUNK_BYTES => {
            let mut v = vec![0u8; byte + 1];
            set(&mut v[byte]);
            txn.put_meta(key, Meta::Str(v))?;
            return Ok(Reply::Int(0));
        }
        None => (txn.new_version()?, 0, false),
        Some(Meta::Str(mut v)) => {
            if byte.max(v.len().saturating_sub(1)) < CHUNK_BYTES {
                let grows = v.len() <= byte;
                if grows {
                    v.resize(byte + 1, 0);
                }
                let was = set(&mut v[byte]);
                // A bit set to what it was changes nothing: no write, and a WATCH on the
                // key holds, as in Redis.
                if grows || was != on {
                    txn.put_meta(key, Meta::Str(v))?;
                }
                return Ok(Reply::Int(i64::from(was)));
            }
            (to_chunked(txn, key, &v)?, v.len() as u64, true)
        }
        Some(Meta::Chunked { version, len }) => (version, len, true),
        Some(_) => return Err(Reply::Error(WRONGTYPE.into())),
    };
    let idx = (byte / CHUNK_BYTES) as u64;
    let within = byte % CHUNK_BYTES;
    let ck = chunk_key(key, version, idx);
    let mut chunk = txn.get(&ck)?.unwrap_or_default();
    let grows = chunk.len() <= within;
    if grows {
        chunk.resize(within + 1, 0);
    }
    let was = set(&mut chunk[within]);
    let new_len = len.max(byte as u64 + 1);
    if existed && !grows && was == on && new_len == len {
        return Ok(Reply::Int(i64::from(was)));
    }
    txn.put(ck, chunk);
    if new_len != len || !existed {
        txn.put_meta(
            key,
            Meta::Chunked {
                version,
                len: new_len,
            },
        )?;
    }
    Ok(Reply::Int(i64::from(was)))
}

/// GETBIT key offset
pub fn getbit(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let offset = bit_offset(&a[2])?;
    let byte = (offset / 8) as usize;
    let mask = 0x80u8 >> (offset % 8);
    let b = match txn.meta(key)? {
        None => 0,
        Some(Meta::Str(v)) => v.get(byte).copied().unwrap_or(0),
        Some(Meta::Chunked { version, .. }) => txn
            .get(&chunk_key(key, version, (byte / CHUNK_BYTES) as u64))?
            .and_then(|c| c.get(byte % CHUNK_BYTES).copied())
            .unwrap_or(0),
        Some(_) => return Err(Reply::Error(WRONGTYPE.into())),
    };
    Ok(Reply::Int(i64::from(b & mask != 0)))
}

/// `BITCOUNT key [start end [BYTE | BIT]]`
pub fn bitcount(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let range = match a.len() {
        2 => None,
        4 | 5 => {
            let start = int_arg(&a[2])?;
            let end = int_arg(&a[3])?;
            let bit = match a.get(4).map(|o| o.to_ascii_uppercase()) {
                None => false,
                Some(o) if o == b"BYTE" => false,
                Some(o) if o == b"BIT" => true,
                Some(_) => return Err(Reply::err("syntax error")),
            };
            Some((start, end, bit))
        }
        _ => return Err(Reply::err("syntax error")),
    };
    let Some(v) = get_string(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let Some((start, end, bit)) = range else {
        return Ok(Reply::Int(count_ones(&v)));
    };
    let total = if bit {
        v.len() as i64 * 8
    } else {
        v.len() as i64
    };
    // Redis: both ends negative and the start past the end is an empty range, whatever the
    // length (clamping both to 0 would count the first byte).
    if start < 0 && end < 0 && start > end {
        return Ok(Reply::Int(0));
    }
    let norm = |x: i64| if x < 0 { (x + total).max(0) } else { x };
    let (s, e) = (norm(start), norm(end).min(total - 1));
    if s > e || total == 0 {
        return Ok(Reply::Int(0));
    }
    if !bit {
        return Ok(Reply::Int(count_ones(&v[s as usize..=e as usize])));
    }
    let n = (s..=e)
        .filter(|&i| v[(i / 8) as usize] & (0x80 >> (i % 8)) != 0)
        .count();
    Ok(Reply::Int(n as i64))
}

fn count_ones(v: &[u8]) -> i64 {
    v.iter().map(|b| i64::from(b.count_ones())).sum()
}
