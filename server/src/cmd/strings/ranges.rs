//! Byte ranges of strings: GETRANGE (and its old name SUBSTR) and SETRANGE, reading and
//! writing only the chunks the range covers.

use bytes::Bytes;

use super::chunks;
use crate::cmd::{NOT_INT, parse_i64};
use crate::resp::Reply;
use crate::store::{R, Txn};

/// `GETRANGE key start end` (and `SUBSTR`): the bytes from `start` to `end` inclusive,
/// negative positions counting from the end.
pub fn getrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let start = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    let end = parse_i64(&a[3]).ok_or_else(|| Reply::err(NOT_INT))?;
    Ok(Reply::bulk(chunks::get_range(txn, &a[1], start, end)?))
}

/// `SETRANGE key offset value`: overwrites from `offset` (zero-padding a shorter string);
/// replies with the new length.
pub fn setrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let offset = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    if offset < 0 {
        return Err(Reply::err("offset is out of range"));
    }
    let len = chunks::set_range(txn, key, offset as u64, &a[3])?;
    if !a[3].is_empty() {
        txn.notify(crate::notify::class::STRING, "setrange", key);
    }
    Ok(Reply::Int(len as i64))
}
