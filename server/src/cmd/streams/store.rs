//! How a stream lives in the engine: a metadata record (`Meta::Stream`: length, last, first
//! and largest deleted ID, entries added) and one engine key per entry under the stream's
//! version, keyed by its ID so the entries sort in ID order:
//!
//! ```text
//! 'x' be32(len) key be64(version) be64(ms) be64(seq)  ->  be32(len) field be32(len) value ...
//! ```
//!
//! XADD is one write plus the metadata; XRANGE/XREAD seek to the first ID and scan what they
//! return; trimming the oldest entries (`trim`) is one range deletion whatever their number.
//!
//! Here: the entries' keys and encoding, the metadata, ID arithmetic (the next and previous
//! ID, the ID XADD gives a new entry), and the reads and writes of entries (ranges,
//! appending, deleting). Consumer groups live beside the entries: [`groups`](super::groups).

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

/// The largest ID (`+`), the end of every scan to the stream's end.
pub const MAX_ID: Id = (u64::MAX, u64::MAX);

/// The ID after `id`, if any.
#[inline]
pub(super) fn next_id(id: Id) -> Option<Id> {
    match id {
        (ms, u64::MAX) => Some((ms.checked_add(1)?, 0)),
        (ms, seq) => Some((ms, seq + 1)),
    }
}

/// The ID before `id`, if any.
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
#[inline]
pub fn get_stream(txn: &Txn<'_>, key: &[u8]) -> Result<Option<StreamMeta>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::Stream(m)) => Ok(Some(m)),
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// The engine key of entry `id` of the stream `key` whose entries live under `version`.
#[inline]
pub(super) fn entry_key(key: &[u8], version: u64, id: Id) -> Vec<u8> {
    let mut rest = [0u8; 16];
    rest[..8].copy_from_slice(&id.0.to_be_bytes());
    rest[8..].copy_from_slice(&id.1.to_be_bytes());
    sub_key(tag::STREAM, key, version, &rest)
}

/// The error for a damaged entry.
pub(super) fn corrupt() -> Reply {
    Reply::err("corrupt stream entry in the store")
}

/// An entry's engine value: fields and values alternating in `pairs`, each after its
/// length.
#[inline]
fn encode_entry(pairs: &[Bytes]) -> Vec<u8> {
    let mut v = Vec::with_capacity(pairs.iter().map(|p| p.len() + 4).sum());
    for p in pairs {
        v.extend_from_slice(&(p.len() as u32).to_be_bytes());
        v.extend_from_slice(p);
    }
    v
}

/// An entry's field-value pairs from its engine value.
#[inline]
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

/// The ID at the end of an entry's engine key.
#[inline]
fn id_of(k: &[u8]) -> Result<Id, Reply> {
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
#[inline]
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
fn first_from(txn: &Txn<'_>, key: &[u8], m: &StreamMeta, from: Id) -> Result<Id, Reply> {
    let mut first = (0, 0);
    for_each_entry(txn, key, m, from, MAX_ID, false, |id, _| {
        first = id;
        Ok(false)
    })?;
    Ok(first)
}

/// Writes the stream's metadata.
#[inline]
pub(super) fn store_stream(txn: &mut Txn<'_>, key: &[u8], m: StreamMeta) -> Result<(), Reply> {
    txn.put_meta(key, Meta::Stream(m))
}

/// Every entry of the stream `key`, in ID order.
///
/// # Errors
/// Engine errors, a damaged entry.
pub fn all_entries(txn: &Txn<'_>, key: &[u8], m: &StreamMeta) -> Result<Vec<Entry>, Reply> {
    range(txn, key, m, (0, 0), MAX_ID, false, None)
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
    let entry = encoded_entry(pairs)?;
    txn.put(entry_key(key, version, id), entry);
    Ok(())
}

/// The engine value of an entry (fields and values alternating in `pairs`), refused when
/// it is too large for the engine.
///
/// # Errors
/// The error a client gets.
#[inline]
pub(super) fn encoded_entry(pairs: &[Bytes]) -> Result<Vec<u8>, Reply> {
    let entry = encode_entry(pairs);
    if entry.len() > bloomkv::MAX_VALUE_BYTES {
        return Err(Reply::err(format!(
            "element too large: a stream entry of {} bytes (bloomkv-server holds one entry to {} bytes)",
            entry.len(),
            bloomkv::MAX_VALUE_BYTES
        )));
    }
    Ok(entry)
}

/// A new, empty stream's metadata under a new version (written by the caller).
///
/// # Errors
/// Engine errors.
pub(super) fn new_stream(txn: &mut Txn<'_>) -> Result<StreamMeta, Reply> {
    Ok(StreamMeta {
        version: txn.new_version()?,
        ..StreamMeta::default()
    })
}

/// The entries after `after` (up to `count`), as XREAD and XREADGROUP's `>` read them.
///
/// # Errors
/// Engine errors, a damaged entry.
#[inline]
pub(super) fn entries_after(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    after: Id,
    count: Option<u64>,
) -> Result<Vec<Entry>, Reply> {
    let Some(from) = next_id(after) else {
        return Ok(Vec::new());
    };
    range(txn, key, m, from, MAX_ID, false, count)
}

/// The entry `id` of the stream, if it is still there.
///
/// # Errors
/// Engine errors, a damaged entry.
pub(super) fn read_entry(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
    id: Id,
) -> Result<Option<Entry>, Reply> {
    match txn.get(&entry_key(key, m.version, id))? {
        Some(v) => Ok(Some((id, decode_entry(&v)?))),
        None => Ok(None),
    }
}

/// The ID XADD asks for: `*`, `ms-*` or an explicit one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NewId {
    /// `*`: the time now, or the next sequence after the last ID.
    Auto,
    /// `ms-*`: the next sequence at `ms`.
    Seq(u64),
    /// An explicit ID.
    Exact(Id),
}

/// Why a stream cannot take the ID XADD asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum IdRefused {
    /// The last possible ID was given out.
    Exhausted,
    /// The ID is not above the last one.
    NotAbove,
}

/// The ID a new entry of the stream (metadata `m`) takes when XADD asks for `want`.
///
/// # Errors
/// Which of Redis's refusals applies.
#[inline]
pub(super) fn new_id(txn: &Txn<'_>, m: &StreamMeta, want: NewId) -> Result<Id, IdRefused> {
    Ok(match want {
        NewId::Auto => {
            let ms = txn.now_ms().max(m.last.0);
            if ms == m.last.0 {
                next_id(m.last).ok_or(IdRefused::Exhausted)?
            } else {
                (ms, 0)
            }
        }
        NewId::Seq(ms) => {
            if ms < m.last.0 {
                return Err(IdRefused::NotAbove);
            }
            if ms == m.last.0 {
                if m.last.1 == u64::MAX {
                    return Err(if ms == u64::MAX {
                        IdRefused::Exhausted
                    } else {
                        IdRefused::NotAbove
                    });
                }
                (ms, m.last.1 + 1)
            } else {
                (ms, 0)
            }
        }
        NewId::Exact((ms, seq)) => {
            if m.last == MAX_ID {
                return Err(IdRefused::Exhausted);
            }
            if (ms, seq) <= m.last {
                return Err(IdRefused::NotAbove);
            }
            (ms, seq)
        }
    })
}

/// Writes `entry` (from [`encoded_entry`]) as the stream's new last entry `id` and counts it
/// in the metadata, which the caller writes.
#[inline]
pub(super) fn append(txn: &mut Txn<'_>, key: &[u8], m: &mut StreamMeta, id: Id, entry: Vec<u8>) {
    txn.put(entry_key(key, m.version, id), entry);
    if m.len == 0 {
        m.first = id;
    }
    m.len += 1;
    m.last = id;
    m.added += 1;
}

/// Deletes the entries `ids` that exist (XDEL): each leaves a tombstone in the metadata
/// (`max_deleted`), which is written when any went. Returns how many went.
///
/// # Errors
/// Engine errors.
pub(super) fn delete_entries(
    txn: &mut Txn<'_>,
    key: &[u8],
    mut m: StreamMeta,
    ids: impl IntoIterator<Item = Id>,
) -> Result<i64, Reply> {
    let mut n = 0;
    let mut first_gone = false;
    for id in ids {
        let k = entry_key(key, m.version, id);
        if txn.get(&k)?.is_some() {
            txn.delete(k);
            n += 1;
            m.len -= 1;
            m.max_deleted = m.max_deleted.max(id);
            first_gone |= id == m.first;
        }
    }
    if n > 0 {
        if first_gone {
            m.first = first_from(txn, key, &m, m.first)?;
        }
        store_stream(txn, key, m)?;
    }
    Ok(n)
}

/// XSETID's change: the last ID, and the count of entries ever added and the largest
/// deleted ID when given (a largest deleted ID of 0-0 leaves it); writes the metadata.
///
/// # Errors
/// Engine errors.
pub(super) fn set_id(
    txn: &mut Txn<'_>,
    key: &[u8],
    mut m: StreamMeta,
    last: Id,
    added: Option<u64>,
    max_deleted: Option<Id>,
) -> Result<(), Reply> {
    m.last = last;
    if let Some(n) = added {
        m.added = n;
    }
    if let Some(d) = max_deleted.filter(|d| *d != (0, 0)) {
        m.max_deleted = d;
    }
    store_stream(txn, key, m)
}

/// The ID of the stream's last entry, if it has one.
///
/// # Errors
/// Engine errors, a damaged entry.
pub(super) fn last_entry_id(
    txn: &Txn<'_>,
    key: &[u8],
    m: &StreamMeta,
) -> Result<Option<Id>, Reply> {
    let top = range(txn, key, m, (0, 0), MAX_ID, true, Some(1))?;
    Ok(top.first().map(|(id, _)| *id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_step_across_sequences() {
        assert_eq!(next_id((1, u64::MAX)), Some((2, 0)));
        assert_eq!(next_id(MAX_ID), None);
        assert_eq!(prev_id((2, 0)), Some((1, u64::MAX)));
        assert_eq!(prev_id((0, 0)), None);
    }

    #[test]
    fn entries_round_trip() {
        let pairs = [
            Bytes::from_static(b"f"),
            Bytes::from_static(b""),
            Bytes::from_static(b"g"),
            Bytes::from_static(b"v"),
        ];
        let got = decode_entry(&encode_entry(&pairs)).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[1], (pairs[2].clone(), pairs[3].clone()));
        assert!(decode_entry(&[0, 0, 0, 9, 1]).is_err());
    }
}
