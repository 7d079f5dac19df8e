//! Strings: GET, SET (with its expiry options), SETNX, SETEX, PSETEX, GETSET, GETDEL, GETEX,
//! MGET, MSET, MSETNX, INCR/DECR(BY), INCRBYFLOAT, APPEND, STRLEN here; GETRANGE and SETRANGE
//! in [`ranges`]; LCS in [`lcs`](mod@lcs); the bitmap commands in [`bitops`] (SETBIT, GETBIT,
//! BITCOUNT, BITOP, BITPOS) and [`bitfield`](mod@bitfield). Storage layout and costs:
//! [`store`] (whole values), [`chunks`] and [`edit`] (parts of a value), and docs/SERVER.md.

pub mod bitfield;
pub mod bitops;
pub mod chunks;
pub mod edit;
pub mod lcs;
pub mod ranges;
pub mod store;

use bytes::Bytes;

use crate::cmd::expiry::{Expiry, parse_expiry};
use crate::cmd::longdouble::{self, IncrError};
use crate::cmd::{NOT_INT, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Txn};
use store::{MAX_STRING, SetOptions, TtlChange, TtlDone, set_string, too_big};

pub use bitfield::{bitfield, bitfield_ro};
pub use bitops::{bitcount, bitop, bitpos, getbit, setbit};
pub use lcs::lcs;
pub use ranges::{getrange, setrange};
pub use store::read_string;

/// GET key: one engine read for an inline string, whose bytes go into the reply as read.
pub fn get(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(match store::get_bytes(txn, &a[1])? {
        Some(b) => Reply::Bulk(b),
        None => Reply::Nil,
    })
}

/// `SET key value [NX | XX] [GET] [EX s | PX ms | EXAT s | PXAT ms | KEEPTTL]`
pub fn set(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut o = SetOptions::default();
    let mut i = 3;
    while i < a.len() {
        let opt = a[i].to_ascii_uppercase();
        match opt.as_slice() {
            b"NX" if !o.xx => o.nx = true,
            b"XX" if !o.nx => o.xx = true,
            b"GET" => o.get = true,
            b"KEEPTTL" if o.expiry.is_none() => o.keepttl = true,
            b"EX" | b"PX" | b"EXAT" | b"PXAT" if o.expiry.is_none() && !o.keepttl => {
                let Some(v) = a.get(i + 1) else {
                    return Err(Reply::err("syntax error"));
                };
                o.expiry = Some(parse_expiry(&opt, v, "set")?);
                i += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        i += 1;
    }
    let key = &a[1];
    if a[2].len() > MAX_STRING {
        return Err(too_big());
    }
    let done = store::set(txn, key, &a[2], &o)?;
    if done.written {
        txn.notify(class::STRING, "set", key);
        if o.expiry.is_some() {
            txn.notify(class::GENERIC, "expire", key);
        }
    }
    Ok(match (o.get, done.written) {
        (true, _) => Reply::opt_bulk(done.old),
        (false, false) => Reply::Nil,
        (false, true) => Reply::Ok,
    })
}

/// `SETEX key seconds value`
pub fn setex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    set_with_expiry(txn, a, b"EX", "setex")
}

/// `PSETEX key milliseconds value`
pub fn psetex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    set_with_expiry(txn, a, b"PX", "psetex")
}

fn set_with_expiry(txn: &mut Txn<'_>, a: &[Bytes], unit: &[u8], cmd: &'static str) -> R {
    let e = parse_expiry(unit, &a[2], cmd)?;
    if a[3].len() > MAX_STRING {
        return Err(too_big());
    }
    let at = e.at(txn.now_ms())?;
    set_string(txn, &a[1], a[3].to_vec(), at)?;
    txn.notify(class::STRING, "set", &a[1]);
    txn.notify(class::GENERIC, "expire", &a[1]);
    Ok(Reply::Ok)
}

/// `GETDEL key`
pub fn getdel(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some(v) = store::take(txn, &a[1])? else {
        return Ok(Reply::Nil);
    };
    txn.notify(class::GENERIC, "del", &a[1]);
    Ok(Reply::bulk(v))
}

/// `GETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST]`
pub fn getex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let mut expiry: Option<Expiry> = None;
    let mut persist = false;
    let mut i = 2;
    while i < a.len() {
        let opt = a[i].to_ascii_uppercase();
        match opt.as_slice() {
            b"PERSIST" if expiry.is_none() && !persist => persist = true,
            b"EX" | b"PX" | b"EXAT" | b"PXAT" if expiry.is_none() && !persist => {
                let Some(v) = a.get(i + 1) else {
                    return Err(Reply::err("syntax error"));
                };
                expiry = Some(parse_expiry(&opt, v, "getex")?);
                i += 1;
            }
            _ => return Err(Reply::err("syntax error")),
        }
        i += 1;
    }
    let change = match (expiry, persist) {
        (Some(e), _) => TtlChange::To(e),
        (None, true) => TtlChange::Persist,
        (None, false) => TtlChange::Keep,
    };
    let Some((v, done)) = store::get_and_expire(txn, key, change)? else {
        return Ok(Reply::Nil);
    };
    match done {
        TtlDone::Removed => txn.notify(class::GENERIC, "del", key),
        TtlDone::Set => txn.notify(class::GENERIC, "expire", key),
        TtlDone::Persisted => txn.notify(class::GENERIC, "persist", key),
        TtlDone::Unchanged => {}
    }
    Ok(Reply::bulk(v))
}

/// SETNX key value
pub fn setnx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a[2].len() > MAX_STRING {
        return Err(too_big());
    }
    if store::exists(txn, &a[1])? {
        return Ok(Reply::Int(0));
    }
    set_string(txn, &a[1], a[2].to_vec(), 0)?;
    txn.notify(class::STRING, "set", &a[1]);
    Ok(Reply::Int(1))
}

/// GETSET key value
pub fn getset(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a[2].len() > MAX_STRING {
        return Err(too_big());
    }
    let old_value = store::get(txn, &a[1])?;
    set_string(txn, &a[1], a[2].to_vec(), 0)?;
    txn.notify(class::STRING, "set", &a[1]);
    Ok(Reply::opt_bulk(old_value))
}

/// `MGET key [key ...]`: nil for missing keys and keys of other types.
pub fn mget(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut out = Vec::with_capacity(a.len() - 1);
    for key in &a[1..] {
        out.push(Reply::opt_bulk(store::get_if_string(txn, key)?));
    }
    Ok(Reply::Array(out))
}

/// Checks MSET's and MSETNX's key-value pairs (`cmd` names the command in the arity error)
/// before anything is written.
fn check_pairs(a: &[Bytes], cmd: &str) -> Result<(), Reply> {
    if a.len().is_multiple_of(2) {
        return Err(Reply::err(format!(
            "wrong number of arguments for '{cmd}' command"
        )));
    }
    if a[2..].iter().step_by(2).any(|v| v.len() > MAX_STRING) {
        return Err(too_big());
    }
    Ok(())
}

/// `MSET key value [key value ...]`
pub fn mset(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    check_pairs(a, "mset")?;
    for pair in a[1..].chunks(2) {
        set_string(txn, &pair[0], pair[1].to_vec(), 0)?;
        txn.notify(class::STRING, "set", &pair[0]);
    }
    Ok(Reply::Ok)
}

/// `MSETNX key value [key value ...]`: sets them all only if none exists.
pub fn msetnx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    check_pairs(a, "msetnx")?;
    for pair in a[1..].chunks(2) {
        if store::exists(txn, &pair[0])? {
            return Ok(Reply::Int(0));
        }
    }
    for pair in a[1..].chunks(2) {
        set_string(txn, &pair[0], pair[1].to_vec(), 0)?;
        txn.notify(class::STRING, "set", &pair[0]);
    }
    Ok(Reply::Int(1))
}

fn incr_by(txn: &mut Txn<'_>, key: &[u8], by: i64) -> R {
    let new = store::incr_by(txn, key, by)?;
    txn.notify(class::STRING, "incrby", key);
    Ok(Reply::Int(new))
}

/// An integer argument, or Redis's "not an integer" error.
pub(super) fn int_arg(b: &[u8]) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err(NOT_INT))
}

/// INCR key
pub fn incr(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    incr_by(txn, &a[1], 1)
}

/// DECR key
pub fn decr(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    incr_by(txn, &a[1], -1)
}

/// INCRBY key increment
pub fn incrby(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let by = int_arg(&a[2])?;
    incr_by(txn, &a[1], by)
}

/// DECRBY key decrement
pub fn decrby(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let by = int_arg(&a[2])?;
    let neg = by
        .checked_neg()
        .ok_or_else(|| Reply::err("decrement would overflow"))?;
    incr_by(txn, &a[1], neg)
}

/// `INCRBYFLOAT key increment`: in Redis's long double arithmetic and text
/// (`cmd::longdouble`); an infinite increment is refused by its infinite result, as Redis 7.0.
pub fn incrbyfloat(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let current = store::get(txn, &a[1])?;
    let text = longdouble::incr(current.as_deref(), &a[2]).map_err(|e| match e {
        IncrError::Value | IncrError::Increment => Reply::err("value is not a valid float"),
        IncrError::InfiniteIncrement | IncrError::Overflow => {
            Reply::err("increment would produce NaN or Infinity")
        }
    })?;
    store::put_value(txn, &a[1], text.clone().into_bytes())?;
    txn.notify(class::STRING, "incrbyfloat", &a[1]);
    Ok(Reply::bulk(text))
}

/// APPEND key value
pub fn append(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let len = chunks::append(txn, &a[1], &a[2])?;
    txn.notify(class::STRING, "append", &a[1]);
    Ok(Reply::Int(len as i64))
}

/// STRLEN key
pub fn strlen(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(store::len(txn, &a[1])? as i64))
}
