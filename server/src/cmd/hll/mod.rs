//! HyperLogLog: PFADD, PFCOUNT, PFMERGE on string values holding Redis's own sketch bytes
//! ([`mod@format`]), so a sketch moves between Redis and bloomkv with GET/SET or DUMP/RESTORE.

pub mod count;
pub mod format;

use bytes::Bytes;

use super::WRONGTYPE;
use super::strings::store::read_string;
use crate::resp::Reply;
use crate::store::{Meta, R, Txn};
use format::{REGISTERS, is_hll};

fn not_hll() -> Reply {
    Reply::Error("WRONGTYPE Key is not a valid HyperLogLog string value.".into())
}

fn corrupt() -> Reply {
    Reply::Error("INVALIDOBJ Corrupted HLL object detected".into())
}

/// The sketch at `key`: `None` if missing; WRONGTYPE for other types and for strings that
/// are not sketches.
fn load(txn: &Txn<'_>, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(m @ (Meta::Str(_) | Meta::Chunked { .. })) => {
            let v = read_string(txn, key, &m)?;
            if is_hll(&v) {
                Ok(Some(v))
            } else {
                Err(not_hll())
            }
        }
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// Stores a sketch as the string value of `key`, keeping its time to live.
fn store(txn: &mut Txn<'_>, key: &[u8], v: Vec<u8>) -> Result<(), Reply> {
    txn.put_meta(key, Meta::Str(v))
}

/// `PFADD key [element ...]`: 1 if the sketch was created or a register changed.
pub fn pfadd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let (mut v, mut updated) = match load(txn, key)? {
        Some(v) => (v, false),
        None => (format::empty(), true),
    };
    for e in &a[2..] {
        let (index, value) = count::place(e);
        updated |= format::raise(&mut v, index, value).map_err(|_| corrupt())?;
    }
    if updated {
        format::invalidate(&mut v);
        store(txn, key, v)?;
        txn.notify(crate::notify::class::STRING, "pfadd", key);
    }
    Ok(Reply::Int(i64::from(updated)))
}

/// `PFCOUNT key [key ...]`: the estimate for one sketch (cached in it, as Redis does) or
/// for the union of several.
pub fn pfcount(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() == 2 {
        let key = &a[1];
        let Some(mut v) = load(txn, key)? else {
            return Ok(Reply::Int(0));
        };
        if let Some(card) = format::cached(&v) {
            return Ok(Reply::Int(card as i64));
        }
        let card = count::estimate(&format::registers(&v).map_err(|_| corrupt())?);
        format::set_cached(&mut v, card);
        store(txn, key, v)?;
        return Ok(Reply::Int(card as i64));
    }
    let mut max = vec![0u8; REGISTERS];
    for key in &a[1..] {
        if let Some(v) = load(txn, key)? {
            merge(&mut max, &v)?;
        }
    }
    Ok(Reply::Int(count::estimate(&max) as i64))
}

fn merge(max: &mut [u8], v: &[u8]) -> Result<(), Reply> {
    let regs = format::registers(v).map_err(|_| corrupt())?;
    for (m, r) in max.iter_mut().zip(regs) {
        *m = (*m).max(r);
    }
    Ok(())
}

/// `PFMERGE destkey [sourcekey ...]`: the union of the sketches (the destination's own
/// included) into the destination, dense if any input was dense.
pub fn pfmerge(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut max = vec![0u8; REGISTERS];
    let mut dense = false;
    let mut dest = None;
    for (i, key) in a[1..].iter().enumerate() {
        let Some(v) = load(txn, key)? else {
            continue;
        };
        dense |= v.len() == format::DENSE_SIZE && v[4] == 0;
        merge(&mut max, &v)?;
        if i == 0 {
            dest = Some(v);
        }
    }
    let mut v = dest.unwrap_or_else(format::empty);
    if dense {
        format::make_dense(&mut v).map_err(|_| corrupt())?;
    }
    for (i, &m) in max.iter().enumerate() {
        if m != 0 {
            format::raise(&mut v, i, m).map_err(|_| corrupt())?;
        }
    }
    format::invalidate(&mut v);
    store(txn, &a[1], v)?;
    // Redis names PFMERGE's event after PFADD.
    txn.notify(crate::notify::class::STRING, "pfadd", &a[1]);
    Ok(Reply::Ok)
}
