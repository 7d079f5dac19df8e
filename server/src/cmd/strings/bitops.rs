//! The bitmap commands over whole strings and single bits: SETBIT, GETBIT, BITCOUNT, BITOP
//! (AND, OR, XOR, NOT into a destination key) and BITPOS (the first set or clear bit in a
//! byte or bit range).

use bytes::Bytes;

use super::{chunks, int_arg, store};
use crate::cmd::parse_i64;
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Txn};

/// Largest bit offset (Redis: 2^32 - 1, a 512 MB string).
const MAX_BIT_OFFSET: u64 = (1 << 32) - 1;

/// A range's unit: `BIT` (true) or `BYTE`, the default.
fn in_bits(unit: Option<&Bytes>) -> Result<bool, Reply> {
    match unit.map(|o| o.to_ascii_uppercase()) {
        None => Ok(false),
        Some(o) if o == b"BYTE" => Ok(false),
        Some(o) if o == b"BIT" => Ok(true),
        Some(_) => Err(Reply::err("syntax error")),
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
    let offset = bit_offset(&a[2])?;
    let on = match a[3].as_ref() {
        b"1" => true,
        b"0" => false,
        _ => return Err(Reply::err("bit is not an integer or out of range")),
    };
    let was = chunks::set_bit(txn, &a[1], offset, on)?;
    // Redis tells of a SETBIT even when the bit already had that value.
    txn.notify(class::STRING, "setbit", &a[1]);
    Ok(Reply::Int(i64::from(was)))
}

/// GETBIT key offset
pub fn getbit(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let offset = bit_offset(&a[2])?;
    let b = chunks::get_byte(txn, &a[1], (offset / 8) as usize)?;
    Ok(Reply::Int(i64::from(b & (0x80u8 >> (offset % 8)) != 0)))
}

/// `BITCOUNT key [start end [BYTE | BIT]]`
pub fn bitcount(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let range = match a.len() {
        2 => None,
        4 | 5 => {
            let start = int_arg(&a[2])?;
            let end = int_arg(&a[3])?;
            let bit = in_bits(a.get(4))?;
            Some((start, end, bit))
        }
        _ => return Err(Reply::err("syntax error")),
    };
    let Some(v) = store::get(txn, &a[1])? else {
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
        sources.push(store::get(txn, key)?.unwrap_or_default());
    }
    let out_len = sources.iter().map(Vec::len).max().unwrap_or(0);
    let dest = &a[2];
    if out_len == 0 {
        if txn.remove_key(dest)? {
            txn.notify(class::GENERIC, "del", dest);
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
    store::replace(txn, dest, out)?;
    txn.notify(class::STRING, "set", dest);
    Ok(Reply::Int(out_len as i64))
}

fn padded(s: &[u8], n: usize) -> Vec<u8> {
    let mut v = s.to_vec();
    v.resize(n, 0);
    v
}

/// `BITPOS key bit [start [end [BYTE | BIT]]]`: the position of the first bit equal to
/// `bit` in the range, -1 when there is none. Looking for a 0 without an explicit end finds
/// the first bit past the string (a string reads as followed by zeros).
pub fn bitpos(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let bit = int_arg(&a[2])?;
    if bit != 0 && bit != 1 {
        return Err(Reply::err("The bit argument must be 1 or 0."));
    }
    let want = bit == 1;
    let Some(v) = store::get(txn, &a[1])? else {
        return Ok(Reply::Int(if want { -1 } else { 0 }));
    };
    let strlen = v.len() as i64;
    let (start, end, end_given, in_bits) = match a.len() {
        3 => (0, strlen - 1, false, false),
        4..=6 => {
            let start = int_arg(&a[3])?;
            let in_bits = in_bits(a.get(5))?;
            let end = match a.get(4) {
                Some(e) => Some(int_arg(e)?),
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
