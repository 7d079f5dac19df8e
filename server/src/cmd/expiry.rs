//! Times to live: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX, XX, GT, LT), TTL, PTTL,
//! EXPIRETIME, PEXPIRETIME, PERSIST, and the parsing of SET's and GETEX's EX, PX, EXAT, PXAT.
//!
//! Expiry times are absolute (ms since the Unix epoch) in the key's metadata, so they survive
//! a restart; a key is gone for every command from that time on (`Txn::live`), and the
//! reclaimer (`store::expire`) removes it soon after.

use bytes::Bytes;

use super::{NOT_INT, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Record, Txn};

/// A time to live as a command gave it.
#[derive(Clone, Copy, Debug)]
pub struct Expiry {
    /// The number given, in ms.
    ms: i64,
    /// An absolute time (EXAT, PXAT) rather than one from now.
    absolute: bool,
    /// The command, for the error text.
    cmd: &'static str,
}

fn invalid(cmd: &str) -> Reply {
    Reply::err(format!("invalid expire time in '{cmd}' command"))
}

/// Parses the value of a SET / GETEX / SETEX expiry option `unit` (EX, PX, EXAT, PXAT): a
/// positive integer, as Redis requires there.
///
/// # Errors
/// Redis's integer error, or `invalid expire time in '<cmd>' command`.
pub fn parse_expiry(unit: &[u8], v: &[u8], cmd: &'static str) -> Result<Expiry, Reply> {
    let n = parse_i64(v).ok_or_else(|| Reply::err(NOT_INT))?;
    let seconds = matches!(unit, b"EX" | b"EXAT");
    if n <= 0 {
        return Err(invalid(cmd));
    }
    let ms = if seconds {
        n.checked_mul(1000).ok_or_else(|| invalid(cmd))?
    } else {
        n
    };
    Ok(Expiry {
        ms,
        absolute: matches!(unit, b"EXAT" | b"PXAT"),
        cmd,
    })
}

impl Expiry {
    /// The absolute time in ms, for a command running at `now_ms`.
    ///
    /// # Errors
    /// `invalid expire time` when it overflows.
    pub fn at(&self, now_ms: u64) -> Result<u64, Reply> {
        let at = if self.absolute {
            self.ms
        } else {
            self.ms
                .checked_add(now_ms as i64)
                .ok_or_else(|| invalid(self.cmd))?
        };
        Ok(at.max(1) as u64)
    }
}

/// The conditions EXPIRE's family takes.
#[derive(Default)]
struct Cond {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
}

fn parse_cond(opts: &[Bytes]) -> Result<Cond, Reply> {
    let mut c = Cond::default();
    for o in opts {
        match o.to_ascii_uppercase().as_slice() {
            b"NX" => c.nx = true,
            b"XX" => c.xx = true,
            b"GT" => c.gt = true,
            b"LT" => c.lt = true,
            _ => {
                return Err(Reply::err(format!(
                    "Unsupported option {}",
                    String::from_utf8_lossy(o)
                )));
            }
        }
    }
    if c.nx && (c.xx || c.gt || c.lt) {
        return Err(Reply::err(
            "NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if c.gt && c.lt {
        return Err(Reply::err(
            "GT and LT options at the same time are not compatible",
        ));
    }
    Ok(c)
}

/// EXPIRE's work: `unit_ms` ms per unit of the argument, `absolute` for the -AT forms.
fn expire_generic(txn: &mut Txn<'_>, a: &[Bytes], unit_ms: i64, absolute: bool, cmd: &str) -> R {
    let n = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    let cond = parse_cond(&a[3..])?;
    let key = &a[1];
    let now = txn.now_ms();
    // A time that overflows is refused before the key is looked up, as Redis does: a
    // missing key does not turn the error into 0.
    let ms = n.checked_mul(unit_ms).ok_or_else(|| invalid(cmd))?;
    let at = if absolute {
        ms
    } else {
        ms.checked_add(now as i64).ok_or_else(|| invalid(cmd))?
    };
    let Some(rec) = txn.live(key)? else {
        return Ok(Reply::Int(0));
    };
    // A key without a time to live counts as living forever for GT and LT.
    let current = if rec.expire_at == 0 {
        i64::MAX
    } else {
        rec.expire_at as i64
    };
    let ok = !(cond.nx && rec.expire_at != 0
        || cond.xx && rec.expire_at == 0
        || cond.gt && at <= current
        || cond.lt && at >= current);
    if !ok {
        return Ok(Reply::Int(0));
    }
    if at <= now as i64 {
        // A time already past deletes the key, as Redis says: `del`, not `expired`.
        txn.remove_key(key)?;
        txn.notify(class::GENERIC, "del", key);
    } else {
        txn.put_record(
            key,
            Record {
                expire_at: at as u64,
                ..rec
            },
        )?;
        txn.notify(class::GENERIC, "expire", key);
    }
    Ok(Reply::Int(1))
}

/// `EXPIRE key seconds [NX | XX | GT | LT]`
pub fn expire(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    expire_generic(txn, a, 1000, false, "expire")
}

/// `PEXPIRE key milliseconds [NX | XX | GT | LT]`
pub fn pexpire(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    expire_generic(txn, a, 1, false, "pexpire")
}

/// `EXPIREAT key unix-time-seconds [NX | XX | GT | LT]`
pub fn expireat(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    expire_generic(txn, a, 1000, true, "expireat")
}

/// `PEXPIREAT key unix-time-milliseconds [NX | XX | GT | LT]`
pub fn pexpireat(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    expire_generic(txn, a, 1, true, "pexpireat")
}

/// -2 for a missing key, -1 for one without a time to live, else `f(expire_at, now)`.
fn ttl_generic(txn: &mut Txn<'_>, key: &[u8], f: impl Fn(u64, u64) -> i64) -> R {
    Ok(Reply::Int(match txn.live(key)? {
        None => -2,
        Some(r) if r.expire_at == 0 => -1,
        Some(r) => f(r.expire_at, txn.now_ms()),
    }))
}

/// `TTL key`: seconds left, rounded to the nearest (as Redis does).
pub fn ttl(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    ttl_generic(txn, &a[1], |at, now| ((at - now + 500) / 1000) as i64)
}

/// `PTTL key`
pub fn pttl(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    ttl_generic(txn, &a[1], |at, now| (at - now) as i64)
}

/// `EXPIRETIME key`: the absolute time in seconds.
pub fn expiretime(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    ttl_generic(txn, &a[1], |at, _| (at / 1000) as i64)
}

/// `PEXPIRETIME key`
pub fn pexpiretime(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    ttl_generic(txn, &a[1], |at, _| at as i64)
}

/// `PERSIST key`: 1 if a time to live was removed.
pub fn persist(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    match txn.live(&a[1])? {
        Some(r) if r.expire_at != 0 => {
            txn.put_record(&a[1], Record { expire_at: 0, ..r })?;
            txn.notify(class::GENERIC, "persist", &a[1]);
            Ok(Reply::Int(1))
        }
        _ => Ok(Reply::Int(0)),
    }
}
