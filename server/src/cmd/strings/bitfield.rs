//! BITFIELD and BITFIELD_RO: signed and unsigned integers of 1 to 64 bits at any bit offset
//! of a string (most significant bit first, as Redis stores them), with GET, SET, INCRBY and
//! the WRAP, SAT and FAIL overflow policies.

use bytes::Bytes;

use super::chunks::read_range;
use super::edit::Edit;
use crate::cmd::{NOT_INT, WRONGTYPE, parse_i64};
use crate::resp::Reply;
use crate::store::{Meta, R, Txn};

/// Largest byte a bit offset may address: Redis's `proto-max-bulk-len` default (512 MB).
const MAX_BYTES: i64 = 512 * 1024 * 1024;

const BAD_TYPE: &str =
    "Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";
const BAD_OFFSET: &str = "bit offset is not an integer or out of range";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Overflow {
    Wrap,
    Sat,
    Fail,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Get,
    Set,
    Incr,
}

/// One GET, SET or INCRBY of the command, with the overflow policy in force for it.
#[derive(Clone, Copy, Debug)]
struct Field {
    kind: Kind,
    signed: bool,
    bits: u32,
    offset: u64,
    value: i64,
    overflow: Overflow,
}

/// `BITFIELD key [GET type offset] [SET type offset value] [INCRBY type offset increment]
/// [OVERFLOW WRAP|SAT|FAIL] ...`
pub fn bitfield(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    run(txn, a, false)
}

/// `BITFIELD_RO key [GET type offset] ...`
pub fn bitfield_ro(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    run(txn, a, true)
}

fn run(txn: &mut Txn<'_>, a: &[Bytes], read_only: bool) -> R {
    let fields = parse(a)?;
    let key = &a[1];
    let writes = fields.iter().any(|f| f.kind != Kind::Get);
    if !writes {
        let meta = txn.meta(key)?;
        if meta
            .as_ref()
            .is_some_and(|m| !matches!(m, Meta::Str(_) | Meta::Chunked { .. }))
        {
            return Err(Reply::Error(WRONGTYPE.into()));
        }
        let mut out = Vec::with_capacity(fields.len());
        for f in &fields {
            let mut buf = [0u8; 9];
            if let Some(m) = &meta {
                let got = read_range(txn, key, m, f.offset / 8, 9)?;
                buf[..got.len()].copy_from_slice(&got);
            }
            out.push(Reply::Int(decode(&buf, f)));
        }
        return Ok(Reply::Array(out));
    }
    if read_only {
        return Err(Reply::err("BITFIELD_RO only supports the GET subcommand"));
    }
    // The string grows to the last bit any write reaches, even a write that fails.
    let highest = fields
        .iter()
        .filter(|f| f.kind != Kind::Get)
        .map(|f| f.offset + u64::from(f.bits) - 1)
        .max()
        .unwrap_or(0);
    let mut edit = Edit::open(txn, key, highest / 8 + 1)?;
    let mut out = Vec::with_capacity(fields.len());
    let mut changes = 0;
    for f in &fields {
        let mut buf = [0u8; 9];
        edit.read(txn, f.offset / 8, &mut buf)?;
        let old = decode(&buf, f);
        let (by, reply_new) = match f.kind {
            Kind::Get => {
                out.push(Reply::Int(old));
                continue;
            }
            Kind::Set => (0, false),
            Kind::Incr => (f.value, true),
        };
        // SET checks its value as an increment of 0 to the value; INCRBY the increment to
        // the old value.
        let base = if f.kind == Kind::Set { f.value } else { old };
        let Some(new) = apply(base, by, f) else {
            out.push(Reply::Nil);
            continue;
        };
        encode(&mut buf, f, new);
        edit.write(txn, f.offset / 8, &buf[..span(f)])?;
        changes += 1;
        out.push(Reply::Int(if reply_new { new } else { old }));
    }
    edit.commit(txn)?;
    // Redis tells of a BITFIELD whose SET or INCRBY ran (not those OVERFLOW FAIL stopped).
    if changes > 0 {
        txn.notify(crate::notify::class::STRING, "setbit", key);
    }
    Ok(Reply::Array(out))
}

fn parse(a: &[Bytes]) -> Result<Vec<Field>, Reply> {
    let mut fields = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < a.len() {
        let rest = a.len() - j - 1;
        let kind = match a[j].to_ascii_uppercase().as_slice() {
            b"GET" if rest >= 2 => Kind::Get,
            b"SET" if rest >= 3 => Kind::Set,
            b"INCRBY" if rest >= 3 => Kind::Incr,
            b"OVERFLOW" if rest >= 1 => {
                overflow = match a[j + 1].to_ascii_uppercase().as_slice() {
                    b"WRAP" => Overflow::Wrap,
                    b"SAT" => Overflow::Sat,
                    b"FAIL" => Overflow::Fail,
                    _ => return Err(Reply::err("Invalid OVERFLOW type specified")),
                };
                j += 2;
                continue;
            }
            _ => return Err(Reply::err("syntax error")),
        };
        let (signed, bits) = parse_type(&a[j + 1])?;
        let offset = parse_offset(&a[j + 2], bits)?;
        let value = if kind == Kind::Get {
            0
        } else {
            parse_i64(&a[j + 3]).ok_or_else(|| Reply::err(NOT_INT))?
        };
        fields.push(Field {
            kind,
            signed,
            bits,
            offset,
            value,
            overflow,
        });
        j += if kind == Kind::Get { 3 } else { 4 };
    }
    Ok(fields)
}

/// `i1`..`i64` or `u1`..`u63` (lowercase only, as Redis).
fn parse_type(t: &[u8]) -> Result<(bool, u32), Reply> {
    let signed = match t.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(Reply::err(BAD_TYPE)),
    };
    let max = if signed { 64 } else { 63 };
    match parse_i64(&t[1..]) {
        Some(n) if (1..=max).contains(&n) => Ok((signed, n as u32)),
        _ => Err(Reply::err(BAD_TYPE)),
    }
}

/// A bit offset, or `#n`: the n-th field of this width.
fn parse_offset(o: &[u8], bits: u32) -> Result<u64, Reply> {
    let (hash, digits) = match o.first() {
        Some(b'#') => (true, &o[1..]),
        _ => (false, o),
    };
    let n = parse_i64(digits).ok_or_else(|| Reply::err(BAD_OFFSET))?;
    let n = if hash {
        n.checked_mul(i64::from(bits))
            .ok_or_else(|| Reply::err(BAD_OFFSET))?
    } else {
        n
    };
    if n < 0 || (n >> 3) >= MAX_BYTES {
        return Err(Reply::err(BAD_OFFSET));
    }
    Ok(n as u64)
}

/// Bytes from the field's first byte to its last.
fn span(f: &Field) -> usize {
    ((f.offset % 8 + u64::from(f.bits)).div_ceil(8)) as usize
}

/// The field's value in `buf`, which starts at byte `f.offset / 8`.
fn decode(buf: &[u8; 9], f: &Field) -> i64 {
    let shift = (f.offset % 8) as u32;
    let mut raw: u64 = 0;
    for i in 0..f.bits + shift {
        if i >= shift {
            let bit = buf[(i / 8) as usize] & (0x80 >> (i % 8)) != 0;
            raw = (raw << 1) | u64::from(bit);
        }
    }
    if f.signed {
        sign_extend(raw, f.bits)
    } else {
        raw as i64
    }
}

/// Writes the low `f.bits` bits of `v` into the field's place in `buf`.
fn encode(buf: &mut [u8; 9], f: &Field, v: i64) {
    let shift = (f.offset % 8) as u32;
    for k in 0..f.bits {
        let bit = (v as u64 >> (f.bits - 1 - k)) & 1 == 1;
        let i = shift + k;
        let mask = 0x80u8 >> (i % 8);
        if bit {
            buf[(i / 8) as usize] |= mask;
        } else {
            buf[(i / 8) as usize] &= !mask;
        }
    }
}

/// `base + by` in the field's type under its overflow policy; `None` when FAIL refuses it.
///
/// The overflow tests are Redis's own (`checkSignedBitfieldOverflow`,
/// `checkUnsignedBitfieldOverflow`), wrapping arithmetic included, because they are not
/// plain range checks at the extremes: `SET i58 0 -9223372036854775808` under SAT stores
/// the type's *maximum* in Redis (its headroom computation wraps), and clients see that.
/// An unsigned field takes `base` as the two's-complement bits Redis casts it to.
fn apply(base: i64, by: i64, f: &Field) -> Option<i64> {
    let bits = f.bits;
    let (up, down, wrapped, max, min) = if f.signed {
        let max = if bits == 64 {
            i64::MAX
        } else {
            (1i64 << (bits - 1)) - 1
        };
        let min = -max - 1;
        let max_incr = (max as u64).wrapping_sub(base as u64) as i64;
        let min_incr = min.wrapping_sub(base);
        let up =
            base > max || (bits != 64 && by > max_incr) || (base >= 0 && by > 0 && by > max_incr);
        let down =
            base < min || (bits != 64 && by < min_incr) || (base < 0 && by < 0 && by < min_incr);
        let sum = (base as u64).wrapping_add(by as u64);
        (up, down, sign_extend(sum, bits), max, min)
    } else {
        let value = base as u64;
        let max = (1u64 << bits) - 1;
        let max_incr = max.wrapping_sub(value) as i64;
        let min_incr = value.wrapping_neg() as i64;
        let up = value > max || (by > 0 && by > max_incr);
        let down = by < 0 && by < min_incr;
        let sum = value.wrapping_add(by as u64) & max;
        (up, down, sum as i64, max as i64, 0)
    };
    if !up && !down {
        return Some(base.wrapping_add(by));
    }
    match f.overflow {
        Overflow::Fail => None,
        Overflow::Sat => Some(if up { max } else { min }),
        Overflow::Wrap => Some(wrapped),
    }
}

/// The low `bits` bits of `v` as a signed number of that width.
fn sign_extend(v: u64, bits: u32) -> i64 {
    if bits < 64 && v & (1 << (bits - 1)) != 0 {
        (v | (u64::MAX << bits)) as i64
    } else if bits < 64 {
        (v & !(u64::MAX << bits)) as i64
    } else {
        v as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(signed: bool, bits: u32, overflow: Overflow) -> Field {
        Field {
            kind: Kind::Incr,
            signed,
            bits,
            offset: 0,
            value: 0,
            overflow,
        }
    }

    #[test]
    fn overflow_policies_match_redis() {
        let u8w = field(false, 8, Overflow::Wrap);
        assert_eq!(apply(250, 10, &u8w), Some(4));
        assert_eq!(apply(5, -10, &u8w), Some(251));
        assert_eq!(apply(-1, 0, &u8w), Some(255));
        let u8s = field(false, 8, Overflow::Sat);
        assert_eq!(apply(250, 10, &u8s), Some(255));
        assert_eq!(apply(5, -10, &u8s), Some(0));
        assert_eq!(
            apply(-1, 0, &u8s),
            Some(255),
            "a negative SET saturates high"
        );
        let i8w = field(true, 8, Overflow::Wrap);
        assert_eq!(apply(127, 1, &i8w), Some(-128));
        assert_eq!(apply(-128, -1, &i8w), Some(127));
        let i8f = field(true, 8, Overflow::Fail);
        assert_eq!(apply(127, 1, &i8f), None);
        assert_eq!(apply(100, 27, &i8f), Some(127));
        let i64w = field(true, 64, Overflow::Wrap);
        assert_eq!(apply(i64::MAX, 1, &i64w), Some(i64::MIN));
        let i64s = field(true, 64, Overflow::Sat);
        assert_eq!(apply(i64::MIN, -1, &i64s), Some(i64::MIN));
        // Redis's headroom computation wraps: the minimum saturates to the maximum.
        let i58s = field(true, 58, Overflow::Sat);
        assert_eq!(apply(i64::MIN, 0, &i58s), Some((1 << 57) - 1));
        let u63s = field(false, 63, Overflow::Sat);
        assert_eq!(apply(i64::MAX, 1, &u63s), Some(i64::MAX));
    }

    #[test]
    fn fields_round_trip_at_odd_offsets() {
        for (bits, signed, off, v) in [
            (5, false, 3, 21),
            (64, true, 7, -2),
            (63, false, 1, i64::MAX),
            (1, true, 9, -1),
        ] {
            let mut f = field(signed, bits, Overflow::Wrap);
            f.offset = off;
            let mut buf = [0u8; 9];
            encode(&mut buf, &f, v);
            assert_eq!(decode(&buf, &f), v);
            assert!(span(&f) <= 9);
        }
    }
}
