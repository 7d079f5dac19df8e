//! Redis's HyperLogLog bytes (hyperloglog.c's format, so `GET`/`SET` and `DUMP`/`RESTORE`
//! carry sketches between Redis and bloomkv): a 16-byte header (`HYLL`, the encoding, three
//! unused bytes, the cached cardinality as 8 little-endian bytes whose top bit marks it
//! stale) and 16,384 six-bit registers, either dense (packed, least significant bits first)
//! or sparse (run-length opcodes: ZERO `00xxxxxx` for 1-64 zero registers, XZERO
//! `01xxxxxx yyyyyyyy` for up to 16,384, VAL `1vvvvvxx` for 1-4 registers of value 1-32).
//!
//! Sparse updates split and re-merge opcodes exactly as Redis's `hllSparseSet` does, so the
//! bytes after any sequence of PFADD/PFMERGE are Redis's bytes.

/// Registers: 2^14.
pub const REGISTERS: usize = 1 << 14;
/// Bits of the hash left after the register index.
pub const Q: usize = 64 - 14;
const HDR: usize = 16;
const DENSE: u8 = 0;
const SPARSE: u8 = 1;
/// Header plus 16,384 six-bit registers.
pub const DENSE_SIZE: usize = HDR + (REGISTERS * 6).div_ceil(8);
/// Redis's `hll-sparse-max-bytes` default: a sparse sketch that would grow past it becomes
/// dense.
const SPARSE_MAX_BYTES: usize = 3000;
const VAL_MAX_VALUE: u8 = 32;
const VAL_MAX_LEN: usize = 4;
const ZERO_MAX_LEN: usize = 64;

/// A sketch whose opcodes do not cover exactly 16,384 registers.
#[derive(Debug, PartialEq)]
pub struct Corrupt;

/// True when `v` is a HyperLogLog as Redis's `isHLLObjectOrReply` accepts it.
pub fn is_hll(v: &[u8]) -> bool {
    v.len() >= HDR
        && &v[..4] == b"HYLL"
        && v[4] <= SPARSE
        && (v[4] != DENSE || v.len() == DENSE_SIZE)
}

/// An empty sketch as Redis creates it: sparse, one XZERO over every register, a cached
/// cardinality of 0.
pub fn empty() -> Vec<u8> {
    let mut v = Vec::with_capacity(HDR + 2);
    v.extend_from_slice(b"HYLL");
    v.extend_from_slice(&[SPARSE, 0, 0, 0]);
    v.extend_from_slice(&[0; 8]);
    push_xzero(&mut v, REGISTERS);
    v
}

/// The cached cardinality, if it is not stale.
pub fn cached(v: &[u8]) -> Option<u64> {
    (v[15] & 0x80 == 0).then(|| u64::from_le_bytes(v[8..16].try_into().unwrap_or([0; 8])))
}

/// Stores `card` as the cached cardinality.
pub fn set_cached(v: &mut [u8], card: u64) {
    v[8..16].copy_from_slice(&card.to_le_bytes());
}

/// Marks the cached cardinality stale.
pub fn invalidate(v: &mut [u8]) {
    v[15] |= 0x80;
}

fn dense_get(regs: &[u8], i: usize) -> u8 {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let lo = u16::from(regs[byte]) >> fb;
    let hi = u16::from(regs.get(byte + 1).copied().unwrap_or(0)) << (8 - fb);
    ((lo | hi) & 63) as u8
}

fn dense_set(regs: &mut [u8], i: usize, val: u8) {
    let byte = i * 6 / 8;
    let fb = (i * 6) & 7;
    let v = u16::from(val);
    regs[byte] = (u16::from(regs[byte]) & !(63 << fb) | (v << fb)) as u8;
    if let Some(next) = regs.get_mut(byte + 1) {
        *next = (u16::from(*next) & !(63 >> (8 - fb)) | (v >> (8 - fb))) as u8;
    }
}

/// One sparse opcode.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    /// Registers set to zero (ZERO or XZERO).
    Zeros(usize),
    /// `len` registers of value `val`.
    Val { val: u8, len: usize },
}

/// The opcode at the start of `p` and its length in bytes.
fn op_at(p: &[u8]) -> (Op, usize) {
    let b = p[0];
    if b & 0x80 != 0 {
        let op = Op::Val {
            val: ((b >> 2) & 0x1f) + 1,
            len: usize::from(b & 3) + 1,
        };
        (op, 1)
    } else if b & 0x40 == 0 {
        (Op::Zeros(usize::from(b & 0x3f) + 1), 1)
    } else {
        let n = (usize::from(b & 0x3f) << 8 | usize::from(p.get(1).copied().unwrap_or(0))) + 1;
        (Op::Zeros(n), 2)
    }
}

fn val_byte(val: u8, len: usize) -> u8 {
    0x80 | ((val - 1) << 2) | (len as u8 - 1)
}

fn push_xzero(out: &mut Vec<u8>, len: usize) {
    let l = len - 1;
    out.push(0x40 | (l >> 8) as u8);
    out.push((l & 0xff) as u8);
}

fn push_zeros(out: &mut Vec<u8>, len: usize) {
    if len > ZERO_MAX_LEN {
        push_xzero(out, len);
    } else {
        out.push(len as u8 - 1);
    }
}

/// Every register's value.
///
/// # Errors
/// [`Corrupt`] for sparse opcodes that do not cover exactly the registers.
pub fn registers(v: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let body = &v[HDR..];
    if v[4] == DENSE {
        return Ok((0..REGISTERS).map(|i| dense_get(body, i)).collect());
    }
    let mut regs = vec![0u8; REGISTERS];
    let (mut i, mut p) = (0, 0);
    while p < body.len() {
        let (op, n) = op_at(&body[p..]);
        match op {
            Op::Zeros(len) => i += len,
            Op::Val { val, len } => {
                if i + len > REGISTERS {
                    return Err(Corrupt);
                }
                regs[i..i + len].fill(val);
                i += len;
            }
        }
        p += n;
    }
    if i == REGISTERS {
        Ok(regs)
    } else {
        Err(Corrupt)
    }
}

/// Turns a sparse sketch dense (the header, cache included, is kept).
///
/// # Errors
/// [`Corrupt`] sparse opcodes.
pub fn make_dense(v: &mut Vec<u8>) -> Result<(), Corrupt> {
    if v[4] == DENSE {
        return Ok(());
    }
    let regs = registers(v)?;
    let mut dense = vec![0u8; DENSE_SIZE];
    dense[..HDR].copy_from_slice(&v[..HDR]);
    dense[4] = DENSE;
    for (i, &r) in regs.iter().enumerate() {
        if r != 0 {
            dense_set(&mut dense[HDR..], i, r);
        }
    }
    *v = dense;
    Ok(())
}

/// Raises register `index` to `count` if it is lower; true when it changed. A sparse
/// sketch becomes dense when `count` is past what VAL holds or the sketch would grow past
/// 3,000 bytes.
///
/// # Errors
/// [`Corrupt`] sparse opcodes.
pub fn raise(v: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    if v[4] == DENSE {
        let regs = &mut v[HDR..];
        if dense_get(regs, index) >= count {
            return Ok(false);
        }
        dense_set(regs, index, count);
        return Ok(true);
    }
    if count > VAL_MAX_VALUE {
        return promote(v, index, count);
    }
    // Step 1: the opcode covering `index` (and the one before it, where merging starts).
    let (mut p, mut first, mut prev) = (HDR, 0usize, None);
    let (op, oplen) = loop {
        if p >= v.len() {
            return Err(Corrupt);
        }
        let (op, n) = op_at(&v[p..]);
        let span = match op {
            Op::Zeros(len) | Op::Val { len, .. } => len,
        };
        if index < first + span {
            break (op, n);
        }
        prev = Some(p);
        p += n;
        first += span;
    };
    // Step 2: updates in place.
    match op {
        Op::Val { val, .. } if val >= count => return Ok(false),
        Op::Val { len: 1, .. } | Op::Zeros(1) if oplen == 1 => {
            v[p] = val_byte(count, 1);
            merge_vals(v, prev.unwrap_or(HDR));
            return Ok(true);
        }
        _ => {}
    }
    // Step 3: split the opcode into up to three.
    let mut seq = Vec::with_capacity(5);
    match op {
        Op::Zeros(len) => {
            let last = first + len - 1;
            if index != first {
                push_zeros(&mut seq, index - first);
            }
            seq.push(val_byte(count, 1));
            if index != last {
                push_zeros(&mut seq, last - index);
            }
        }
        Op::Val { val, len } => {
            let last = first + len - 1;
            if index != first {
                seq.push(val_byte(val, index - first));
            }
            seq.push(val_byte(count, 1));
            if index != last {
                seq.push(val_byte(val, last - index));
            }
        }
    }
    if seq.len() > oplen && v.len() + seq.len() - oplen > SPARSE_MAX_BYTES {
        return promote(v, index, count);
    }
    v.splice(p..p + oplen, seq);
    merge_vals(v, prev.unwrap_or(HDR));
    Ok(true)
}

fn promote(v: &mut Vec<u8>, index: usize, count: u8) -> Result<bool, Corrupt> {
    make_dense(v)?;
    dense_set(&mut v[HDR..], index, count);
    Ok(true)
}

/// Redis's step 4: from `start`, over at most five opcodes, adjacent VALs of one value
/// whose runs fit one opcode become one.
fn merge_vals(v: &mut Vec<u8>, start: usize) {
    let mut p = start;
    let mut scan = 5;
    while p < v.len() && scan > 0 {
        scan -= 1;
        let (op, n) = op_at(&v[p..]);
        let Op::Val { val, len } = op else {
            p += n;
            continue;
        };
        if let Some(&next) = v.get(p + 1)
            && let (Op::Val { val: v2, len: l2 }, _) = op_at(&[next])
            && v2 == val
            && len + l2 <= VAL_MAX_LEN
        {
            v[p + 1] = val_byte(val, len + l2);
            v.remove(p);
            continue;
        }
        p += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_sketch_is_redis_s_eighteen_bytes() {
        let v = empty();
        assert_eq!(v.len(), 18);
        assert_eq!(&v[16..], &[0x7f, 0xff]);
        assert!(is_hll(&v));
        assert_eq!(cached(&v), Some(0));
    }

    #[test]
    fn sparse_and_dense_hold_the_same_registers() {
        let mut s = empty();
        let mut want = vec![0u8; REGISTERS];
        let mut x = 12345u64;
        for _ in 0..2000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (x >> 33) as usize % REGISTERS;
            let c = ((x >> 20) % 20 + 1) as u8;
            let changed = raise(&mut s, i, c).unwrap();
            assert_eq!(changed, want[i] < c);
            want[i] = want[i].max(c);
            assert_eq!(registers(&s).unwrap(), want);
        }
        assert_eq!(
            s.len(),
            DENSE_SIZE,
            "2000 registers do not fit 3000 sparse bytes"
        );
    }

    #[test]
    fn truncated_opcodes_are_corrupt() {
        let mut v = empty();
        v.truncate(17);
        v.push(0x00);
        assert_eq!(registers(&v), Err(Corrupt));
    }
}
