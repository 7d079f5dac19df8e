//! The blocking pops: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX, BZMPOP.
//!
//! Each runs at once like its non-blocking form when one of its keys has something; else it
//! answers [`Outcome::Block`]: the keys to wait on, the [`Op`] to run when one of them
//! becomes ready, and the timeout. The connection registers the waiter (`crate::blocking`)
//! while it still holds the keys' writer locks, so no push can slip in between. Inside MULTI
//! a blocking pop never blocks: it answers what the non-blocking form would (nil).

use std::time::Duration;

use bytes::Bytes;

use super::lists::{self, parse_side};
use super::zsets::{self, pop::parse_min_max};
use crate::resp::Reply;
use crate::store::{Meta, Txn};

/// What a blocking command did.
#[derive(Debug)]
pub enum Outcome {
    /// It was served at once (or failed): the reply.
    Done(Reply),
    /// Nothing to pop: the client waits.
    Block(Block),
}

/// What a blocked client waits for.
#[derive(Clone, Debug)]
pub struct Block {
    /// The database of its keys.
    pub db: crate::store::DbIndex,
    /// The keys it waits on, in the command's order.
    pub keys: Vec<Bytes>,
    /// What to do when one of them is ready.
    pub op: Op,
    /// How long to wait; `None`: forever (timeout 0).
    pub timeout: Option<Duration>,
}

/// A blocking command's handler.
pub type BlockHandler = fn(&mut Txn<'_>, &[Bytes]) -> Result<Outcome, Reply>;

/// The pop a blocked client waits to run.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// BLPOP / BRPOP (`count: None`, reply `[key, element]`) and BLMPOP (`[key, [elements]]`).
    ListPop {
        /// From the head.
        left: bool,
        /// BLMPOP's count.
        count: Option<u64>,
    },
    /// BLMOVE / BRPOPLPUSH: pop from the ready key, push to `dst`; reply the element.
    ListMove {
        /// The destination list.
        dst: Bytes,
        /// Pop from the source's head.
        from_left: bool,
        /// Push at the destination's head.
        to_left: bool,
    },
    /// BZPOPMIN / BZPOPMAX (`count: None`, reply `[key, member, score]`) and BZMPOP
    /// (`[key, [[member, score], ...]]`).
    ZPop {
        /// Highest scores first.
        max: bool,
        /// BZMPOP's count.
        count: Option<u64>,
    },
    /// XREAD BLOCK: reads (takes nothing), so every waiter with entries after its ID is
    /// served.
    XRead(super::streams::XReadWait),
    /// XREADGROUP BLOCK: takes what its group has not delivered yet (writing the PEL).
    XReadGroup(super::streams::group_cmds::XReadGroupWait),
    /// WAIT on a server without replicas: waits on no key, so only its timeout (or CLIENT
    /// UNBLOCK) ends it, with 0 replicas.
    Wait,
}

/// What serving a waiter on one key came to.
#[derive(Debug)]
pub enum Attempt {
    /// Served (the pop ran in the write set): the waiter's reply. Also an error reply the
    /// command would give (BLMOVE to a destination of another type).
    Served(Reply),
    /// The key holds nothing to pop: no later waiter can be served from it either.
    Empty,
    /// The key holds the other kind of collection: this waiter stays blocked.
    Skip,
}

impl Op {
    /// The reply when the timeout passes (or inside MULTI): a nil array, or a nil bulk for
    /// the moves.
    pub fn timeout_reply(&self) -> Reply {
        match self {
            Op::ListMove { .. } => Reply::Nil,
            Op::Wait => Reply::Int(0),
            _ => Reply::NilArray,
        }
    }

    /// The command a cluster-mode client sends on its next attempt when its original would
    /// now mean something else: XREAD with each `$` replaced by the ID it stood for.
    pub fn retry_args(&self) -> Option<Vec<Bytes>> {
        let Op::XRead(w) = self else {
            return None;
        };
        let mut args = vec![Bytes::from_static(b"XREAD")];
        if let Some(n) = w.count {
            args.push(Bytes::from_static(b"COUNT"));
            args.push(Bytes::from(n.to_string()));
        }
        args.extend([Bytes::from_static(b"BLOCK"), Bytes::from_static(b"0")]);
        args.push(Bytes::from_static(b"STREAMS"));
        args.extend(w.after.iter().map(|(k, _)| k.clone()));
        args.extend(
            w.after
                .iter()
                .map(|(_, id)| Bytes::from(super::streams::fmt_id(*id))),
        );
        Some(args)
    }

    /// Keys besides the ready one that serving writes (BLMOVE's destination).
    pub fn extra_keys(&self) -> Option<&[u8]> {
        match self {
            Op::ListMove { dst, .. } => Some(dst),
            _ => None,
        }
    }

    fn wants_list(&self) -> bool {
        !matches!(self, Op::ZPop { .. })
    }

    /// Runs the pop on `key` in `txn`. With `strict` (the command's own first attempt) a
    /// key of another type is Redis's WRONGTYPE error; when serving a waiter it is
    /// [`Attempt::Skip`] (Redis serves only clients blocked for the key's type).
    ///
    /// # Errors
    /// WRONGTYPE (strict only), engine errors.
    pub fn attempt(&self, txn: &mut Txn<'_>, key: &Bytes, strict: bool) -> Result<Attempt, Reply> {
        let stream_reply = match self {
            Op::XRead(w) => Some(w.serve(txn, key)?),
            Op::XReadGroup(w) => Some(w.serve(txn, key)?),
            _ => None,
        };
        if let Some(r) = stream_reply {
            return Ok(r.map_or(Attempt::Skip, Attempt::Served));
        }
        match txn.meta(key)? {
            None => return Ok(Attempt::Empty),
            Some(Meta::List { .. }) if self.wants_list() => {}
            Some(Meta::Zset { .. }) if !self.wants_list() => {}
            Some(_) if strict => return Err(Reply::Error(super::WRONGTYPE.into())),
            Some(_) => return Ok(Attempt::Skip),
        }
        let reply = match self {
            Op::ListPop { left, count } => {
                let Some(v) = lists::store::pop(txn, key, *left, count.unwrap_or(1))? else {
                    return Ok(Attempt::Empty);
                };
                if v.is_empty() {
                    return Ok(Attempt::Empty);
                }
                lists::notify_pop(txn, key, *left)?;
                let mut items: Vec<Reply> = v.into_iter().map(Reply::bulk).collect();
                match count {
                    None => Reply::Array(vec![Reply::Bulk(key.clone()), items.remove(0)]),
                    Some(_) => Reply::Array(vec![Reply::Bulk(key.clone()), Reply::Array(items)]),
                }
            }
            Op::ListMove {
                dst,
                from_left,
                to_left,
            } => match lists::move_one(txn, key, dst, *from_left, *to_left) {
                Ok(Some(e)) => Reply::bulk(e),
                Ok(None) => return Ok(Attempt::Empty),
                // The destination's type: a served client gets the error, as Redis's re-run
                // of the command gives it (nothing moved: types are checked first).
                Err(e) if !strict => e,
                Err(e) => return Err(e),
            },
            Op::XRead(_) | Op::XReadGroup(_) | Op::Wait => return Ok(Attempt::Skip),
            Op::ZPop { max, count } => {
                let Some(got) = zsets::pop::pop(txn, key, *max, count.unwrap_or(1))? else {
                    return Ok(Attempt::Empty);
                };
                if got.is_empty() {
                    return Ok(Attempt::Empty);
                }
                zsets::pop::notify_pop(txn, key, *max)?;
                match count {
                    None => {
                        let mut out = vec![Reply::Bulk(key.clone())];
                        for (m, s) in got {
                            out.push(Reply::bulk(m));
                            out.push(Reply::Double(s));
                        }
                        Reply::Array(out)
                    }
                    Some(_) => zsets::pop::keyed_reply(key, got),
                }
            }
        };
        Ok(Attempt::Served(reply))
    }
}

/// C's `isspace`.
fn c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Parses a timeout in seconds as Redis's `getTimeoutFromObjectOrReply` does (a long
/// double, rounded up to whole milliseconds): `None` for 0 (wait forever).
///
/// # Errors
/// `timeout is not a float or out of range`, `timeout is out of range`, `timeout is
/// negative`.
pub fn parse_timeout(b: &[u8], now_ms: u64) -> Result<Option<Duration>, Reply> {
    let not_float = || Reply::err("timeout is not a float or out of range");
    let s = std::str::from_utf8(b).map_err(|_| not_float())?;
    if s.is_empty() || c_space(b[0]) {
        return Err(not_float());
    }
    let secs: f64 = s.parse().map_err(|_| not_float())?;
    if secs.is_nan() {
        return Err(not_float());
    }
    // A long double holds what a double rounds to zero: a tiny positive timeout is still
    // rounded up to 1 ms, as Redis does.
    let tiny = secs == 0.0
        && s.bytes()
            .take_while(|c| !matches!(c, b'e' | b'E'))
            .any(|c| (b'1'..=b'9').contains(&c));
    let ms = (secs * 1000.0).ceil();
    if ms > i64::MAX as f64 {
        return Err(Reply::err("timeout is out of range"));
    }
    let ms = if tiny && !s.starts_with('-') {
        1
    } else {
        ms as i64
    };
    if ms < 0 {
        return Err(Reply::err("timeout is negative"));
    }
    if ms == 0 {
        return Ok(None);
    }
    if ms > i64::MAX - now_ms as i64 {
        return Err(Reply::err("timeout is out of range"));
    }
    Ok(Some(Duration::from_millis(ms as u64)))
}

/// Tries `op` on each key in order: served at once, or the block to wait in.
fn run_or_block(
    txn: &mut Txn<'_>,
    keys: &[Bytes],
    op: Op,
    timeout: Option<Duration>,
) -> Result<Outcome, Reply> {
    for k in keys {
        if let Attempt::Served(r) = op.attempt(txn, k, true)? {
            return Ok(Outcome::Done(r));
        }
    }
    Ok(Outcome::Block(Block {
        db: txn.db(),
        keys: keys.to_vec(),
        op,
        timeout,
    }))
}

fn bpop(txn: &mut Txn<'_>, a: &[Bytes], op: Op) -> Result<Outcome, Reply> {
    let timeout = parse_timeout(&a[a.len() - 1], txn.now_ms())?;
    run_or_block(txn, &a[1..a.len() - 1], op, timeout)
}

/// `BLPOP key [key ...] timeout`
pub fn blpop(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    bpop(
        txn,
        a,
        Op::ListPop {
            left: true,
            count: None,
        },
    )
}

/// `BRPOP key [key ...] timeout`
pub fn brpop(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    bpop(
        txn,
        a,
        Op::ListPop {
            left: false,
            count: None,
        },
    )
}

/// `BZPOPMIN key [key ...] timeout`
pub fn bzpopmin(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    bpop(
        txn,
        a,
        Op::ZPop {
            max: false,
            count: None,
        },
    )
}

/// `BZPOPMAX key [key ...] timeout`
pub fn bzpopmax(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    bpop(
        txn,
        a,
        Op::ZPop {
            max: true,
            count: None,
        },
    )
}

fn bmove(
    txn: &mut Txn<'_>,
    a: &[Bytes],
    from_left: bool,
    to_left: bool,
    timeout: &[u8],
) -> Result<Outcome, Reply> {
    let timeout = parse_timeout(timeout, txn.now_ms())?;
    let op = Op::ListMove {
        dst: a[2].clone(),
        from_left,
        to_left,
    };
    run_or_block(txn, &a[1..2], op, timeout)
}

/// `BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout`
pub fn blmove(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    let from_left = parse_side(&a[3])?;
    let to_left = parse_side(&a[4])?;
    bmove(txn, a, from_left, to_left, &a[5])
}

/// `BRPOPLPUSH source destination timeout`
pub fn brpoplpush(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    bmove(txn, a, false, true, &a[3])
}

/// `BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]`
pub fn blmpop(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    let m = lists::parse_mpop(a, 2)?;
    let left = parse_side(&a[m.side])?;
    let timeout = parse_timeout(&a[1], txn.now_ms())?;
    let op = Op::ListPop {
        left,
        count: Some(m.count),
    };
    run_or_block(txn, &m.keys, op, timeout)
}

/// `BZMPOP timeout numkeys key [key ...] MIN|MAX [COUNT count]`
pub fn bzmpop(txn: &mut Txn<'_>, a: &[Bytes]) -> Result<Outcome, Reply> {
    let m = lists::parse_mpop(a, 2)?;
    let max = parse_min_max(&a[m.side])?;
    let timeout = parse_timeout(&a[1], txn.now_ms())?;
    let op = Op::ZPop {
        max,
        count: Some(m.count),
    };
    run_or_block(txn, &m.keys, op, timeout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_parse_like_redis() {
        let ms = |s: &str| parse_timeout(s.as_bytes(), 1_000).map(|d| d.map(|d| d.as_millis()));
        assert_eq!(ms("0"), Ok(None));
        assert_eq!(ms("1"), Ok(Some(1000)));
        assert_eq!(ms("0.0001"), Ok(Some(1)));
        assert_eq!(ms("1e-400"), Ok(Some(1)));
        assert_eq!(ms("0.5"), Ok(Some(500)));
        assert_eq!(ms("-0.0001"), Ok(None));
        let e = |s: &str| match parse_timeout(s.as_bytes(), 1_000) {
            Err(Reply::Error(t)) => t,
            other => panic!("{s}: {other:?}"),
        };
        assert_eq!(e("-1"), "ERR timeout is negative");
        assert_eq!(e("abc"), "ERR timeout is not a float or out of range");
        assert_eq!(e(" 1"), "ERR timeout is not a float or out of range");
        assert_eq!(e("nan"), "ERR timeout is not a float or out of range");
        assert_eq!(e("inf"), "ERR timeout is out of range");
        assert_eq!(e("1e300"), "ERR timeout is out of range");
    }
}
