//! Parts of a stored string, reading and writing only the chunks they cover: APPEND's end,
//! GETRANGE's and SETRANGE's byte ranges (and BITFIELD's reads), SETBIT's and GETBIT's bits.
//! How a string is stored: [`store`](super::store).

use super::edit::Edit;
use super::store::{
    MAX_LEN, MAX_STRING, put_chunked, put_value, set_string, string_len, to_chunked, too_big,
    wrong_type,
};
use crate::resp::Reply;
use crate::store::{CHUNK_BYTES, Meta, Txn, chunk_key};

/// APPEND: adds `data` to the end of the string `key` (creating it); returns the new length.
///
/// # Errors
/// [`too_big`], WRONGTYPE, engine errors.
pub fn append(txn: &mut Txn<'_>, key: &[u8], data: &[u8]) -> Result<u64, Reply> {
    match txn.meta(key)? {
        None => {
            if data.len() > MAX_STRING {
                return Err(too_big());
            }
            set_string(txn, key, data.to_vec(), 0)?;
            Ok(data.len() as u64)
        }
        Some(Meta::Str(mut v)) => {
            let new_len = v.len() + data.len();
            if new_len as u64 > MAX_LEN {
                return Err(too_big());
            }
            if new_len <= CHUNK_BYTES {
                v.extend_from_slice(data);
                put_value(txn, key, v)?;
            } else {
                let version = to_chunked(txn, key, &v)?;
                write_chunked(txn, key, version, v.len() as u64, v.len() as u64, data)?;
            }
            Ok(new_len as u64)
        }
        Some(Meta::Chunked { version, len }) => {
            if len + data.len() as u64 > MAX_LEN {
                return Err(too_big());
            }
            write_chunked(txn, key, version, len, len, data)
        }
        Some(_) => Err(wrong_type()),
    }
}

/// Bytes `[start, end]` of the string `key` by Redis's GETRANGE rules (negative positions
/// count from the end), reading only the chunks the range covers.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn get_range(txn: &Txn<'_>, key: &[u8], start: i64, end: i64) -> Result<Vec<u8>, Reply> {
    let Some(meta) = txn.meta(key)? else {
        return Ok(Vec::new());
    };
    let len = string_len(&meta).ok_or_else(wrong_type)?;
    let Some((s, e)) = clamp(start, end, len) else {
        return Ok(Vec::new());
    };
    read_range(txn, key, &meta, s, e - s + 1)
}

/// Redis's GETRANGE range rules: `None` for an empty range.
fn clamp(start: i64, end: i64, len: u64) -> Option<(u64, u64)> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    if start < 0 && end < 0 && start > end {
        return None;
    }
    let norm = |x: i64| if x < 0 { (x + len).max(0) } else { x };
    let (s, e) = (norm(start), norm(end).min(len - 1));
    (len > 0 && s <= e).then_some((s as u64, e as u64))
}

/// SETRANGE: writes `value` at byte `offset` of the string `key` (zero-padding a shorter
/// one, creating a missing one); returns the new length. An empty `value` writes nothing.
///
/// # Errors
/// [`too_big`], WRONGTYPE, engine errors.
pub fn set_range(txn: &mut Txn<'_>, key: &[u8], offset: u64, value: &[u8]) -> Result<u64, Reply> {
    let current = match txn.meta(key)? {
        None => None,
        Some(m) => Some(string_len(&m).ok_or_else(wrong_type)?),
    };
    if value.is_empty() {
        return Ok(current.unwrap_or(0));
    }
    let end = offset.saturating_add(value.len() as u64);
    if end > MAX_LEN {
        return Err(too_big());
    }
    let mut edit = Edit::open(txn, key, end)?;
    edit.write(txn, offset, value)?;
    let len = edit.byte_len();
    edit.commit(txn)?;
    Ok(len)
}

/// The bytes `[start, start + n)` of the string `key` with metadata `meta`, cut at its end
/// (missing chunks read as zeros).
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn read_range(
    txn: &Txn<'_>,
    key: &[u8],
    meta: &Meta,
    start: u64,
    n: u64,
) -> Result<Vec<u8>, Reply> {
    let len = string_len(meta).ok_or_else(wrong_type)?;
    let end = start.saturating_add(n).min(len);
    if start >= end {
        return Ok(Vec::new());
    }
    match meta {
        Meta::Str(v) => Ok(v[start as usize..end as usize].to_vec()),
        Meta::Chunked { version, .. } => {
            let cb = CHUNK_BYTES as u64;
            let mut out = vec![0u8; (end - start) as usize];
            for idx in start / cb..=(end - 1) / cb {
                let Some(chunk) = txn.get(&chunk_key(key, *version, idx))? else {
                    continue;
                };
                copy_overlap(&mut out, start, idx * cb, &chunk);
            }
            Ok(out)
        }
        _ => Err(wrong_type()),
    }
}

/// Copies the part of `src` (which starts at string position `src_at`) that overlaps `out`
/// (which starts at `out_at`).
pub(super) fn copy_overlap(out: &mut [u8], out_at: u64, src_at: u64, src: &[u8]) {
    let lo = out_at.max(src_at);
    let hi = (out_at + out.len() as u64).min(src_at + src.len() as u64);
    if lo >= hi {
        return;
    }
    let n = (hi - lo) as usize;
    let o = (lo - out_at) as usize;
    let s = (lo - src_at) as usize;
    out[o..o + n].copy_from_slice(&src[s..s + n]);
}

/// SETBIT: sets bit `offset` (most significant first) of the string `key` to `on`, creating
/// or growing it; returns the bit's old value. A bit set to what it was writes nothing to an
/// existing string, so a WATCH on the key holds, as in Redis.
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn set_bit(txn: &mut Txn<'_>, key: &[u8], offset: u64, on: bool) -> Result<bool, Reply> {
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
            put_value(txn, key, v)?;
            return Ok(false);
        }
        None => (txn.new_version()?, 0, false),
        Some(Meta::Str(mut v)) => {
            if byte.max(v.len().saturating_sub(1)) < CHUNK_BYTES {
                let grows = v.len() <= byte;
                if grows {
                    v.resize(byte + 1, 0);
                }
                let was = set(&mut v[byte]);
                if grows || was != on {
                    put_value(txn, key, v)?;
                }
                return Ok(was);
            }
            (to_chunked(txn, key, &v)?, v.len() as u64, true)
        }
        Some(Meta::Chunked { version, len }) => (version, len, true),
        Some(_) => return Err(wrong_type()),
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
        return Ok(was);
    }
    txn.put(ck, chunk);
    if new_len != len || !existed {
        put_chunked(txn, key, version, new_len)?;
    }
    Ok(was)
}

/// Byte `byte` of the string `key` (0 past its end or for a missing key).
///
/// # Errors
/// WRONGTYPE, engine errors.
pub fn get_byte(txn: &Txn<'_>, key: &[u8], byte: usize) -> Result<u8, Reply> {
    Ok(match txn.meta(key)? {
        None => 0,
        Some(Meta::Str(v)) => v.get(byte).copied().unwrap_or(0),
        Some(Meta::Chunked { version, .. }) => txn
            .get(&chunk_key(key, version, (byte / CHUNK_BYTES) as u64))?
            .and_then(|c| c.get(byte % CHUNK_BYTES).copied())
            .unwrap_or(0),
        Some(_) => return Err(wrong_type()),
    })
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
    put_chunked(txn, key, version, new_len)?;
    Ok(new_len)
}

#[cfg(test)]
mod tests {
    use super::clamp;

    #[test]
    fn ranges_clamp_like_redis() {
        assert_eq!(clamp(0, -1, 5), Some((0, 4)));
        assert_eq!(clamp(-3, -1, 5), Some((2, 4)));
        assert_eq!(clamp(-100, 2, 5), Some((0, 2)));
        assert_eq!(clamp(3, 100, 5), Some((3, 4)));
        assert_eq!(clamp(-1, -3, 5), None);
        assert_eq!(clamp(4, 2, 5), None);
        assert_eq!(clamp(0, 0, 0), None);
        assert_eq!(clamp(-100, -50, 5), Some((0, 0)));
        assert_eq!(clamp(10, 20, 5), None);
    }
}
