//! How a string lives in the engine: inline in its metadata value, or chunked under a
//! version once a bit, append or range write makes it longer than one chunk (and BITOP's
//! result when it is too long for one value):
//!
//! ```text
//! metadata                                     ->  1 (string)  expire_at  the bytes
//! metadata                                     ->  2 (chunked) expire_at  version  length
//! 'c' be32(len) key be64(version) be64(chunk)  ->  CHUNK_BYTES (4 KiB) of the string
//! ```
//!
//! SET, MSET and INCR write one metadata value whatever the length; SETBIT, APPEND,
//! SETRANGE and BITFIELD on a chunked string read and write only the chunks they cover (plus
//! the metadata when the length changes): [`chunks`](super::chunks) and
//! [`edit`](super::edit). Missing chunks read as zeros. Layout and costs: docs/SERVER.md.

use bytes::Bytes;

use crate::cmd::expiry::Expiry;
use crate::cmd::{NOT_INT, WRONGTYPE, parse_i64};
use crate::resp::Reply;
use crate::store::{CHUNK_BYTES, Meta, Record, Txn, chunk_key, meta_key, sub_prefix, tag};

/// Largest string value: the engine's value limit less the metadata tag.
pub const MAX_STRING: usize = 256 * 1024 * 1024 - 16;

/// Longest string APPEND and SETRANGE may make: Redis's `proto-max-bulk-len` default
/// (512 MB), the length SETBIT's largest offset reaches.
pub const MAX_LEN: u64 = 512 * 1024 * 1024;

/// Redis's error for a string that would pass its size limit.
pub fn too_big() -> Reply {
    Reply::err("string exceeds maximum allowed size (proto-max-bulk-len)")
}

pub(super) fn wrong_type() -> Reply {
    Reply::Error(WRONGTYPE.into())
}

/// Length in bytes of the string with metadata `meta` (`None` for other types).
pub fn string_len(meta: &Meta) -> Option<u64> {
    match meta {
        Meta::Str(v) => Some(v.len() as u64),
        Meta::Chunked { len, .. } => Some(*len),
        _ => None,
    }
}

/// The bytes of a string key (inline or chunked).
///
/// # Errors
/// WRONGTYPE, engine errors.
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
        _ => Err(wrong_type()),
    }
}

fn chunk_index(suffix: &[u8]) -> usize {
    suffix
        .try_into()
        .map(u64::from_be_bytes)
        .map_or(usize::MAX, |i| usize::try_from(i).unwrap_or(usize::MAX))
}

/// The string value of `key`, `None` if missing.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn get(txn: &Txn<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(m) => read_string(txn, key, &m).map(Some),
    }
}

/// GET's read: one engine read for an inline string, whose bytes come back as read.
///
/// # Errors
/// WRONGTYPE, engine errors.
#[inline]
pub fn get_bytes(txn: &Txn<'_>, key: &[u8]) -> Result<Option<Bytes>, Reply> {
    let Some(v) = txn.get_once(&meta_key(txn.db(), key))? else {
        return Ok(None);
    };
    match Record::inline_string(v, txn.now_ms()) {
        Ok(b) => Ok(b),
        // A chunked string (read under the command's snapshot), another type, damage.
        Err(_) => Ok(get(txn, key)?.map(Bytes::from)),
    }
}

/// The string value of `key`; `None` if missing or of another type (MGET's rule).
///
/// # Errors
/// Engine errors.
pub fn get_if_string(txn: &Txn<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    match txn.meta(key)? {
        Some(m @ (Meta::Str(_) | Meta::Chunked { .. })) => read_string(txn, key, &m).map(Some),
        _ => Ok(None),
    }
}

/// Whether `key` exists (holding any type).
///
/// # Errors
/// Engine errors.
pub fn exists(txn: &Txn<'_>, key: &[u8]) -> Result<bool, Reply> {
    Ok(txn.meta(key)?.is_some())
}

/// Length of the string `key` (0 if missing).
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn len(txn: &Txn<'_>, key: &[u8]) -> Result<u64, Reply> {
    match txn.meta(key)? {
        None => Ok(0),
        Some(m) => string_len(&m).ok_or_else(wrong_type),
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

/// SET's options.
#[derive(Clone, Copy, Debug, Default)]
pub struct SetOptions {
    /// Only if the key does not exist.
    pub nx: bool,
    /// Only if the key exists.
    pub xx: bool,
    /// Read the old value.
    pub get: bool,
    /// The new time to live (`None`: none, or the old one with `keepttl`).
    pub expiry: Option<Expiry>,
    /// Keep the old time to live.
    pub keepttl: bool,
}

/// What [`set`] did.
pub struct SetOutcome {
    /// The old value, when asked for and there was one.
    pub old: Option<Vec<u8>>,
    /// Whether the value was written (NX and XX may skip it).
    pub written: bool,
}

/// SET: writes `value` to `key` as `o` says, with one read of the record (expired or not),
/// which the write replaces as stored.
///
/// # Errors
/// WRONGTYPE (with GET), an invalid expire time, engine errors.
#[inline]
pub fn set(
    txn: &mut Txn<'_>,
    key: &[u8],
    value: &[u8],
    o: &SetOptions,
) -> Result<SetOutcome, Reply> {
    let stored = txn.record_to_replace(key)?;
    let old = stored.as_ref().filter(|r| !r.expired(txn.now_ms()));
    let old_value = match (old, o.get) {
        (Some(r), true) => Some(read_string(txn, key, &r.meta)?),
        _ => None,
    };
    let skip = (o.nx && old.is_some()) || (o.xx && old.is_none());
    if !skip {
        let expire_at = match (o.expiry, old) {
            (Some(e), _) => e.at(txn.now_ms())?,
            (None, Some(r)) if o.keepttl => r.expire_at,
            (None, _) => 0,
        };
        let record = Record {
            expire_at,
            meta: Meta::Str(value.to_vec()),
        };
        txn.replace_record(key, record, stored.as_ref());
    }
    Ok(SetOutcome {
        old: old_value,
        written: !skip,
    })
}

/// Replaces the value of `key` with the inline string `value`, keeping its time to live.
///
/// # Errors
/// Engine errors.
pub fn put_value(txn: &mut Txn<'_>, key: &[u8], value: Vec<u8>) -> Result<(), Reply> {
    txn.put_meta(key, Meta::Str(value))
}

/// Replaces `key` with the string `value`, without a time to live: inline as SET stores it
/// while it fits a metadata value, chunked beyond.
///
/// # Errors
/// Engine errors.
pub fn replace(txn: &mut Txn<'_>, key: &[u8], value: Vec<u8>) -> Result<(), Reply> {
    if value.len() <= MAX_STRING {
        return set_string(txn, key, value, 0);
    }
    let version = txn.new_version()?;
    put_chunks(txn, key, version, &value);
    txn.put_record(
        key,
        Record {
            expire_at: 0,
            meta: Meta::Chunked {
                version,
                len: value.len() as u64,
            },
        },
    )
}

/// The value of `key`, which goes.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn take(txn: &mut Txn<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    let Some(v) = get(txn, key)? else {
        return Ok(None);
    };
    txn.remove_key(key)?;
    Ok(Some(v))
}

/// How GETEX changes a time to live.
#[derive(Clone, Copy, Debug)]
pub enum TtlChange {
    /// Leave it.
    Keep,
    /// Set it.
    To(Expiry),
    /// Remove it.
    Persist,
}

/// What [`get_and_expire`] did to the time to live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TtlDone {
    /// Nothing.
    Unchanged,
    /// Set it.
    Set,
    /// Removed the key (the time given had passed).
    Removed,
    /// Removed the time to live.
    Persisted,
}

/// GETEX: the value of the live key `key` (`None` if missing), after which its time to
/// live changes as `change` says.
///
/// # Errors
/// WRONGTYPE, an invalid expire time, engine errors.
pub fn get_and_expire(
    txn: &mut Txn<'_>,
    key: &[u8],
    change: TtlChange,
) -> Result<Option<(Vec<u8>, TtlDone)>, Reply> {
    let Some(rec) = txn.live(key)? else {
        return Ok(None);
    };
    let v = read_string(txn, key, &rec.meta)?;
    let now = txn.now_ms();
    let done = match change {
        TtlChange::To(e) => {
            let at = e.at(now)?;
            if at <= now {
                txn.remove_key(key)?;
                TtlDone::Removed
            } else {
                txn.put_record(
                    key,
                    Record {
                        expire_at: at,
                        ..rec
                    },
                )?;
                TtlDone::Set
            }
        }
        TtlChange::Persist if rec.expire_at != 0 => {
            txn.put_record(
                key,
                Record {
                    expire_at: 0,
                    ..rec
                },
            )?;
            TtlDone::Persisted
        }
        _ => TtlDone::Unchanged,
    };
    Ok(Some((v, done)))
}

/// INCRBY's work: the value changes, its time to live stays (as in Redis); returns the new
/// value.
///
/// # Errors
/// A stored value that is not an integer, overflow, WRONGTYPE, engine errors.
pub fn incr_by(txn: &mut Txn<'_>, key: &[u8], by: i64) -> Result<i64, Reply> {
    let current = match get(txn, key)? {
        None => 0,
        Some(v) => parse_i64(&v).ok_or_else(|| Reply::err(NOT_INT))?,
    };
    let new = current
        .checked_add(by)
        .ok_or_else(|| Reply::err("increment or decrement would overflow"))?;
    put_value(txn, key, new.to_string().into_bytes())?;
    Ok(new)
}

/// Writes `value` as the chunks of version `version` of `key`, from chunk 0.
pub(super) fn put_chunks(txn: &mut Txn<'_>, key: &[u8], version: u64, value: &[u8]) {
    for (i, c) in value.chunks(CHUNK_BYTES).enumerate() {
        txn.put(chunk_key(key, version, i as u64), c.to_vec());
    }
}

/// Turns the inline string `key` into a chunked one under a new version; returns the version.
pub(super) fn to_chunked(txn: &mut Txn<'_>, key: &[u8], value: &[u8]) -> Result<u64, Reply> {
    let version = txn.new_version()?;
    put_chunks(txn, key, version, value);
    put_chunked(txn, key, version, value.len() as u64)?;
    Ok(version)
}

/// Writes `key`'s metadata as a chunked string of `len` bytes under `version`, keeping its
/// time to live.
pub(super) fn put_chunked(
    txn: &mut Txn<'_>,
    key: &[u8],
    version: u64,
    len: u64,
) -> Result<(), Reply> {
    txn.put_meta(key, Meta::Chunked { version, len })
}
