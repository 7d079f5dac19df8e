//! How a stream lives in the engine: a metadata record (`Meta::Stream`: length, last, first
//! and largest deleted ID, entries added) and one engine key per entry under the stream's
//! version, keyed by its ID so the entries sort in ID order:
//!
//! ```text
//! 'x' be32(len) key be64(version) be64(ms) be64(seq)  ->  be32(len) field be32(len) value ...
//! ```
//!
//! XADD is one write plus the metadata; XRANGE/XREAD seek to the first ID and scan what they
//! return; trimming the oldest entries is one range deletion whatever their number
//! ([`trim`](super::trim)).

use bytes::Bytes;

use crate::cmd::WRONGTYPE;
use crate::resp::Reply;
use crate::store::meta::StreamMeta;
use crate::store::{MAX_KEY_LEN, Meta, Txn, sub_key, tag};

/// A stream entry ID: milliseconds and sequence number.
pub type Id = (u64, u64);

/// Entries per radix-tree node in Redis (`stream-node-max-entries`): `~` trimming removes
/// whole nodes only, so it removes entries in runs of this many.
pub(super) const NODE_ENTRIES: u64 = 100;

/// One entry: its ID and its field-value pairs.
pub type Entry = (Id, Vec<(Bytes, Bytes)>);

pub(super) fn next_id(id: Id) -> Option<Id> {
    match id {
        (ms, u64::MAX) => Some((ms.checked_add(1)?, 0)),
        (ms, seq) => Some((ms, seq + 1)),
    }
}

pub(super) fn prev_id(id: Id) -> Option<Id> {
    match id {
        (0, 0) => None,
        (ms, 0) => Some((ms - 1, u64::MAX)),
        (ms, seq) => Some((ms, seq - 1)),
    }
}

/// The stream at `key`: `None` if missing, WRONGTYPE for other types.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn get_stream(txn: &Txn<'_>, key: &[u8]) -> Result<Option<StreamMeta>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Stream(m)) => Ok(Some(m)),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

pub(super) fn entry_key(key: &[u8], version: u64, id: Id) -> Vec<u8> {
    let mut rest = [0u8; 16];
    rest[..8].copy_from_slice(&id.0.to_be_bytes());
    rest[8..].copy_from_slice(&id.1.to_be_bytes());
    sub_key(tag::STREAM, key, version, &rest)
}

pub(super) fn corrupt() -> Reply {
    Reply::err("corrupt stream entry in the store")
}

pub(super) fn encode_entry(pairs: &[Bytes]) -> Vec<u8> {
    let mut v = Vec::with_capacity(pairs.iter().map(|p| p.len() + 4).sum());
    for p in pairs {
        v.extend_from_slice(&(p.len() as u32).to_be_bytes());
        v.extend_from_slice(p);
    }
    v
}

pub(super) fn decode_entry(mut v: &[u8]) -> Result<Vec<(Bytes, Bytes)>, Reply> {
    let mut items = Vec::new();
    while !v.is_empty() {
        let n = u32::from_be_bytes(
            v.get(..4)
                .ok_or_else(corrupt)?
                .try_into()
                .map_err(|_| corrupt())?,
        ) as usize;
        items.push(Bytes::copy_from_slice(v.get(4..4 + n).ok_or_else(corrupt)?));
        v = &v[4 + n..];
    }
    if !items.len().is_multiple_of(2) {
        return Err(corrupt());
    }
    let mut pairs = Vec::with_capacity(items.len() / 2);
    let mut it = items.into_iter();
    while let (Some(f), Some(v)) = (it.next(), it.next()) {
        pairs.push((f, v));
    }
    Ok(pairs)
}

pub(super) fn id_of(k: &[u8]) -> Result<Id, Reply> {
    let n = k.len();
    if n < 16 {
        return Err(corrupt());
    }
    let ms = u64::from_be_bytes(k[n - 16..n - 8].try_into().map_err(|_| corrupt())?);
    let seq = u64::from_be_bytes(k[n - 8..].try_into().map_err(|_| corrupt())?);
    Ok((ms, seq))
}

/// Calls `f` with the entries whose IDs lie in `from..=to` (newest first when `reverse`)
/// until it returns false.
pub(super) fn for_each_entry(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    from: Id,
    to: Id,
    reverse: bool,
    mut f: impl FnMut(Id, &[u8]) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    if from > to || m.len == 0 {
        return Ok(());
    }
    use std::ops::Bound;
    let start = Bound::Included(entry_key(key, m.version, from));
    let end = Bound::Included(entry_key(key, m.version, to));
    txn.for_each_in(start, end, reverse, |k, v| f(id_of(k)?, v))
}

/// Up to `count` entries in `from..=to`.
pub(super) fn range(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    from: Id,
    to: Id,
    reverse: bool,
    count: Option<u64>,
) -> Result<Vec<Entry>, Reply> {
    let mut out = Vec::new();
    let limit = count.unwrap_or(u64::MAX);
    if limit == 0 {
        return Ok(out);
    }
    for_each_entry(txn, key, m, from, to, reverse, |id, v| {
        out.push((id, decode_entry(v)?));
        Ok((out.len() as u64) < limit)
    })?;
    Ok(out)
}

/// The first entry's ID at or after `from` (0-0 when none).
pub(super) fn first_from(txn: &Txn<'_>, key: &[u8], m: &StreamMeta, from: Id) -> Result<Id, Reply> {
    let mut first = (0, 0);
    for_each_entry(txn, key, m, from, (u64::MAX, u64::MAX), false, |id, _| {
        first = id;
        Ok(false)
    })?;
    Ok(first)
}

pub(super) fn store_stream(txn: &mut Txn<'_>, key: &[u8], m: StreamMeta) -> Result<(), Reply> {
    txn.put_meta(key, Meta::Stream(m))
}

/// Every entry of the stream `key`, in ID order.
///
/// # Errors
/// Engine errors, a damaged entry.
pub fn all_entries(txn: &Txn<'_>, key: &[u8], m: &StreamMeta) -> Result<Vec<Entry>, Reply> {
    range(txn, key, m, (0, 0), (u64::MAX, u64::MAX), false, None)
}

/// Refuses a key too long to hold a stream (its entries' keys take 4 bytes more).
///
/// # Errors
/// The error a client gets.
pub fn check_key(key: &[u8]) -> Result<(), Reply> {
    if key.len() + 4 > MAX_KEY_LEN {
        return Err(Reply::err(format!(
            "key longer than {} bytes: a stream key holds 4 bytes less than other keys",
            MAX_KEY_LEN - 4
        )));
    }
    Ok(())
}

/// Writes entry `id` (fields and values alternating in `pairs`) of the stream `key` whose
/// entries live under `version`; the metadata is the caller's.
///
/// # Errors
/// An entry too large for the engine.
pub fn put_entry(
    txn: &mut Txn<'_>,
    key: &[u8],
    version: u64,
    id: Id,
    pairs: &[Bytes],
) -> Result<(), Reply> {
    let entry = encode_entry(pairs);
    check_entry_size(&entry)?;
    txn.put(entry_key(key, version, id), entry);
    Ok(())
}

pub(super) fn check_entry_size(entry: &[u8]) -> Result<(), Reply> {
    if entry.len() > bloomkv::MAX_VALUE_BYTES {
        return Err(Reply::err(format!(
            "element too large: a stream entry of {} bytes (bloomkv-server holds one entry to {} bytes)",
            entry.len(),
            bloomkv::MAX_VALUE_BYTES
        )));
    }
    Ok(())
}
