//! Byte ranges of strings: GETRANGE (and its old name SUBSTR) and SETRANGE, reading and
//! writing only the chunks the range covers.

use bytes::Bytes;

use super::edit::{Edit, read_range, string_len};
use crate::cmd::{NOT_INT, WRONGTYPE, parse_i64};
use crate::resp::Reply;
use crate::store::{R, Txn};

/// Longest string SETRANGE may make: Redis's `proto-max-bulk-len` default (512 MB), the
/// length SETBIT's largest offset reaches.
const MAX_LEN: u64 = 512 * 1024 * 1024;

/// `GETRANGE key start end` (and `SUBSTR`): the bytes from `start` to `end` inclusive,
/// negative positions counting from the end.
pub fn getrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let start = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    let end = parse_i64(&a[3]).ok_or_else(|| Reply::err(NOT_INT))?;
    let Some(meta) = txn.meta(&a[1])? else {
        return Ok(Reply::bulk(Bytes::new()));
    };
    let len = string_len(&meta).ok_or_else(|| Reply::Error(WRONGTYPE.into()))?;
    let Some((s, e)) = clamp(start, end, len) else {
        return Ok(Reply::bulk(Bytes::new()));
    };
    Ok(Reply::bulk(read_range(txn, &a[1], &meta, s, e - s + 1)?))
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

/// `SETRANGE key offset value`: overwrites from `offset` (zero-padding a shorter string);
/// replies with the new length.
pub fn setrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let offset = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    if offset < 0 {
        return Err(Reply::err("offset is out of range"));
    }
    let offset = offset as u64;
    let value = &a[3];
    let current = match txn.meta(key)? {
        None => None,
        Some(m) => Some(string_len(&m).ok_or_else(|| Reply::Error(WRONGTYPE.into()))?),
    };
    if value.is_empty() {
        return Ok(Reply::Int(current.unwrap_or(0) as i64));
    }
    let end = offset.saturating_add(value.len() as u64);
    if end > MAX_LEN {
        return Err(Reply::err(
            "string exceeds maximum allowed size (proto-max-bulk-len)",
        ));
    }
    let mut edit = Edit::open(txn, key, end)?;
    edit.write(txn, offset, value)?;
    let len = edit.byte_len();
    edit.commit(txn)?;
    txn.notify(crate::notify::class::STRING, "setrange", key);
    Ok(Reply::Int(len as i64))
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
