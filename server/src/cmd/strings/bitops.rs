//! Bitwise commands over whole strings: BITOP (AND, OR, XOR, NOT into a destination key)
//! and BITPOS (the first set or clear bit in a byte or bit range).

use bytes::Bytes;

use super::{MAX_STRING, read_string, set_string};
use crate::cmd::{NOT_INT, WRONGTYPE, parse_i64};
use crate::resp::Reply;
use crate::store::{CHUNK_BYTES, Meta, R, Record, Txn, chunk_key};

#[derive(Clone, Copy, PartialEq)]
enum Op {
    And,
    Or,
    Xor,
    Not,
}

/// `BITOP AND|OR|XOR|NOT destkey key [key ...]`: stores the result (as long as the longest
/// source, shorter ones read as zero-padded) in `destkey` without a time to live, or deletes
/// `destkey` when every source is empty; replies with the result's length.
pub fn bitop(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let op = match a[1].to_ascii_uppercase().as_slice() {
        b"AND" => Op::And,
        b"OR" => Op::Or,
        b"XOR" => Op::Xor,
        b"NOT" => Op::Not,
        _ => return Err(Reply::err("syntax error")),
    };
    if op == Op::Not && a.len() != 4 {
        return Err(Reply::err(
            "BITOP NOT must be called with a single source key.",
        ));
    }
    let mut sources = Vec::with_capacity(a.len() - 3);
    for key in &a[3..] {
        sources.push(match txn.meta(key)? {
            None => Vec::new(),
            Some(m) => read_string(txn, key, &m)?,
        });
    }
    let out_len = sources.iter().map(Vec::len).max().unwrap_or(0);
    let dest = &a[2];
    if out_len == 0 {
        if txn.remove_key(dest)? {
            txn.notify(crate::notify::class::GENERIC, "del", dest);
        }
        return Ok(Reply::Int(0));
    }
    let mut out = vec![0u8; out_len];
    match op {
        Op::Not => {
            for (o, s) in out.iter_mut().zip(&sources[0]) {
                *o = !s;
            }
        }
        Op::And => {
            out.copy_from_slice(&padded(&sources[0], out_len));
            for s in &sources[1..] {
                for (i, o) in out.iter_mut().enumerate() {
                    *o &= s.get(i).copied().unwrap_or(0);
                }
            }
        }
        Op::Or | Op::Xor => {
            for s in &sources {
                for (o, b) in out.iter_mut().zip(s) {
                    if op == Op::Or {
                        *o |= b;
                    } else {
                        *o ^= b;
                    }
                }
            }
        }
    }
    store_new(txn, dest, out)?;
    txn.notify(crate::notify::class::STRING, "set", dest);
    Ok(Reply::Int(out_len as i64))
}

fn padded(s: &[u8], n: usize) -> Vec<u8> {
    let mut v = s.to_vec();
    v.resize(n, 0);
    v
}

/// Replaces `key` with the string `value`, without a time to live: inline as SET stores it
/// while it fits a metadata value, chunked beyond.
fn store_new(txn: &mut Txn<'_>, key: &[u8], value: Vec<u8>) -> Result<(), Reply> {
    if value.len() <= MAX_STRING {
        return set_string(txn, key, value, 0);
    }
    let version = txn.new_version()?;
    for (i, c) in value.chunks(CHUNK_BYTES).enumerate() {
        txn.put(chunk_key(key, version, i as u64), c.to_vec());
    }
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

/// `BITPOS key bit [start [end [BYTE | BIT]]]`: the position of the first bit equal to
/// `bit` in the range, -1 when there is none. Looking for a 0 without an explicit end finds
/// the first bit past the string (a string reads as followed by zeros).
pub fn bitpos(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let bit = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    if bit != 0 && bit != 1 {
        return Err(Reply::err("The bit argument must be 1 or 0."));
    }
    let want = bit == 1;
    let Some(meta) = txn.meta(&a[1])? else {
        return Ok(Reply::Int(if want { -1 } else { 0 }));
    };
    if !matches!(meta, Meta::Str(_) | Meta::Chunked { .. }) {
        return Err(Reply::Error(WRONGTYPE.into()));
    }
    let v = read_string(txn, &a[1], &meta)?;
    let strlen = v.len() as i64;
    let (start, end, end_given, in_bits) = match a.len() {
        3 => (0, strlen - 1, false, false),
        4..=6 => {
            let start = parse_i64(&a[3]).ok_or_else(|| Reply::err(NOT_INT))?;
            let in_bits = match a.get(5).map(|o| o.to_ascii_uppercase()) {
                None => false,
                Some(o) if o == b"BIT" => true,
                Some(o) if o == b"BYTE" => false,
                Some(_) => return Err(Reply::err("syntax error")),
            };
            let end = match a.get(4) {
                Some(e) => Some(parse_i64(e).ok_or_else(|| Reply::err(NOT_INT))?),
                None => None,
            };
            let total = if in_bits { strlen * 8 } else { strlen };
            let norm = |x: i64| if x < 0 { (x + total).max(0) } else { x };
            let s = norm(start);
            let e = norm(end.unwrap_or(total - 1)).min(total - 1);
            (s, e, end.is_some(), in_bits)
        }
        _ => return Err(Reply::err("syntax error")),
    };
    if start > end {
        return Ok(Reply::Int(-1));
    }
    let (first, last) = if in_bits {
        (start, end)
    } else {
        (start * 8, end * 8 + 7)
    };
    let found = first_bit(&v, first as u64, last as u64, want);
    Ok(Reply::Int(match found {
        Some(p) => p as i64,
        // No clear bit in an open-ended range: the first bit past the string.
        None if !want && !end_given => strlen * 8,
        None => -1,
    }))
}

/// The first bit position in `[first, last]` whose value is `want`.
fn first_bit(v: &[u8], first: u64, last: u64, want: bool) -> Option<u64> {
    let skip = if want { 0x00 } else { 0xff };
    let mut p = first;
    while p <= last {
        let byte = v[(p / 8) as usize];
        // Whole bytes that cannot hold the bit are skipped at once.
        if p.is_multiple_of(8) && p + 7 <= last && byte == skip {
            p += 8;
            continue;
        }
        if (byte & (0x80 >> (p % 8)) != 0) == want {
            return Some(p);
        }
        p += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_bit;

    #[test]
    fn first_bit_scans_ranges() {
        let v = [0x00, 0x0f, 0xff];
        assert_eq!(first_bit(&v, 0, 23, true), Some(12));
        assert_eq!(first_bit(&v, 13, 23, true), Some(13));
        assert_eq!(first_bit(&v, 0, 11, true), None);
        assert_eq!(first_bit(&v, 12, 23, false), None);
        assert_eq!(first_bit(&v, 11, 23, false), Some(11));
    }
}
