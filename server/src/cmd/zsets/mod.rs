//! Sorted sets: ZADD, ZINCRBY, ZREM, ZSCORE, ZMSCORE, ZCARD, ZRANK, ZREVRANK, ZRANDMEMBER,
//! ZSCAN here; the range commands in [`range`]; ZPOPMIN, ZPOPMAX, ZMPOP in [`pop`]; the
//! blocking forms in `crate::blocking`; ZUNION, ZINTER, ZDIFF, their STORE forms and
//! ZINTERCARD in [`algebra`]. Storage layout and costs: [`store`] and docs/SERVER.md.

pub mod algebra;
pub mod pop;
pub mod range;
pub mod score;
pub mod store;
pub mod stream;

use bytes::Bytes;

use super::scan::{self, parse_scan_args};
use super::{NOT_INT, parse_i64};
use crate::notify::class;
use crate::resp::{Reply, format_double};
use crate::store::{R, Txn, member_fits, member_too_long};
use store::{Zset, get_zset, score_of, set_score, store_zset};

pub use algebra::{zdiff, zdiffstore, zinter, zintercard, zinterstore, zunion, zunionstore};
pub use pop::{zmpop, zpopmax, zpopmin};
pub use range::{
    zcount, zlexcount, zrange, zrangebylex, zrangebyscore, zrangestore, zremrangebylex,
    zremrangebyrank, zremrangebyscore, zrevrange, zrevrangebylex, zrevrangebyscore,
};

fn not_float() -> Reply {
    Reply::err("value is not a valid float")
}

/// ZADD's options.
#[derive(Clone, Copy, Debug, Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

/// Adds or updates `pairs` (score, member) as ZADD does with `f`; returns the reply.
fn add(txn: &mut Txn<'_>, key: &[u8], f: AddFlags, pairs: &[(f64, &[u8])]) -> R {
    for (_, m) in pairs {
        if !member_fits(key, m) {
            return Err(member_too_long(key, m));
        }
    }
    let nothing = || {
        if f.incr { Reply::Nil } else { Reply::Int(0) }
    };
    let mut z = match get_zset(txn, key)? {
        Some(z) => z,
        None if f.xx => return Ok(nothing()),
        None => Zset {
            version: txn.new_version()?,
            card: 0,
        },
    };
    let (mut added, mut updated, mut processed) = (0i64, 0i64, 0i64);
    let mut last = 0.0;
    for &(s, m) in pairs {
        match score_of(txn, key, z, m)? {
            Some(cur) => {
                if f.nx {
                    continue;
                }
                let new = if f.incr { cur + s } else { s };
                if new.is_nan() {
                    return Err(Reply::err("resulting score is not a number (NaN)"));
                }
                if (f.lt && new >= cur) || (f.gt && new <= cur) {
                    continue;
                }
                processed += 1;
                last = new;
                // -0.0 == 0.0: Redis keeps the old score then.
                if new != cur {
                    set_score(txn, key, z, m, Some(cur), new);
                    updated += 1;
                }
            }
            None if !f.xx => {
                set_score(txn, key, z, m, None, s);
                z.card += 1;
                added += 1;
                processed += 1;
                last = s;
            }
            None => {}
        }
    }
    if added > 0 || updated > 0 {
        store_zset(txn, key, z)?;
        txn.notify(class::ZSET, if f.incr { "zincr" } else { "zadd" }, key);
    }
    if added > 0 {
        txn.signal_ready(key);
    }
    Ok(if f.incr {
        if processed > 0 {
            Reply::Double(last)
        } else {
            Reply::Nil
        }
    } else {
        Reply::Int(if f.ch { added + updated } else { added })
    })
}

/// `ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]`
pub fn zadd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut f = AddFlags::default();
    let mut i = 2;
    while i < a.len() {
        let o = &a[i];
        if o.eq_ignore_ascii_case(b"nx") {
            f.nx = true;
        } else if o.eq_ignore_ascii_case(b"xx") {
            f.xx = true;
        } else if o.eq_ignore_ascii_case(b"ch") {
            f.ch = true;
        } else if o.eq_ignore_ascii_case(b"incr") {
            f.incr = true;
        } else if o.eq_ignore_ascii_case(b"gt") {
            f.gt = true;
        } else if o.eq_ignore_ascii_case(b"lt") {
            f.lt = true;
        } else {
            break;
        }
        i += 1;
    }
    let rest = &a[i..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(Reply::err("syntax error"));
    }
    if f.nx && f.xx {
        return Err(Reply::err(
            "XX and NX options at the same time are not compatible",
        ));
    }
    if (f.nx && (f.gt || f.lt)) || (f.gt && f.lt) {
        return Err(Reply::err(
            "GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if f.incr && rest.len() > 2 {
        return Err(Reply::err(
            "INCR option supports a single increment-element pair",
        ));
    }
    let mut pairs = Vec::with_capacity(rest.len() / 2);
    for p in rest.chunks(2) {
        let s = score::parse_score(&p[0]).ok_or_else(not_float)?;
        pairs.push((s, p[1].as_ref()));
    }
    add(txn, &a[1], f, &pairs)
}

/// `ZINCRBY key increment member`
pub fn zincrby(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let s = score::parse_score(&a[2]).ok_or_else(not_float)?;
    let f = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    add(txn, &a[1], f, &[(s, a[3].as_ref())])
}

/// `ZREM key member [member ...]`
pub fn zrem(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let Some(mut z) = get_zset(txn, key)? else {
        return Ok(Reply::Int(0));
    };
    let mut n = 0;
    for m in &a[2..] {
        if let Some(s) = score_of(txn, key, z, m)? {
            store::remove_member(txn, key, z, m, s);
            z.card = z.card.saturating_sub(1);
            n += 1;
        }
    }
    if n > 0 {
        store_zset(txn, key, z)?;
        txn.notify_then_del_if_gone(class::ZSET, "zrem", key)?;
    }
    Ok(Reply::Int(n))
}

/// `ZSCORE key member`
pub fn zscore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some(z) = get_zset(txn, &a[1])? else {
        return Ok(Reply::Nil);
    };
    Ok(score_of(txn, &a[1], z, &a[2])?.map_or(Reply::Nil, Reply::Double))
}

/// `ZMSCORE key member [member ...]`
pub fn zmscore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let z = get_zset(txn, &a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for m in &a[2..] {
        let s = match z {
            Some(z) => score_of(txn, &a[1], z, m)?,
            None => None,
        };
        out.push(s.map_or(Reply::Nil, Reply::Double));
    }
    Ok(Reply::Array(out))
}

/// `ZCARD key`
pub fn zcard(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(
        get_zset(txn, &a[1])?.map_or(0, |z| z.card) as i64
    ))
}

fn rank_cmd(txn: &mut Txn<'_>, a: &[Bytes], reverse: bool) -> R {
    if a.len() > 4 {
        let name = if reverse { "zrevrank" } else { "zrank" };
        return Err(Reply::err(format!(
            "wrong number of arguments for '{name}' command"
        )));
    }
    let with_score = match a.get(3) {
        Some(o) if o.eq_ignore_ascii_case(b"withscore") => true,
        Some(_) => return Err(Reply::err("syntax error")),
        None => false,
    };
    let none = if with_score {
        Reply::NilArray
    } else {
        Reply::Nil
    };
    let key = &a[1];
    let Some(z) = get_zset(txn, key)? else {
        return Ok(none);
    };
    let Some(s) = score_of(txn, key, z, &a[2])? else {
        return Ok(none);
    };
    // The rank is the number of index keys on the asked side of the member's: one scan of
    // that side (below it for ZRANK, above it for ZREVRANK).
    let me = store::index_key(key, z.version, s, &a[2]);
    let prefix = store::index_prefix(key, z.version);
    let mut rank = 0i64;
    txn.for_each_prefix(&prefix, Some(&me), !reverse, |_, _| {
        rank += 1;
        Ok(true)
    })?;
    Ok(if with_score {
        Reply::Array(vec![Reply::Int(rank), Reply::Double(s)])
    } else {
        Reply::Int(rank)
    })
}

/// `ZRANK key member [WITHSCORE]`: counts the members below (cost: the rank).
pub fn zrank(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    rank_cmd(txn, a, false)
}

/// `ZREVRANK key member [WITHSCORE]`: counts the members above.
pub fn zrevrank(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    rank_cmd(txn, a, true)
}

/// `ZSCAN key cursor [MATCH pattern] [COUNT count]`: walks the members in byte order; scores
/// as ZSCORE prints them.
pub fn zscan(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let opts = parse_scan_args(&a[2..], false)?;
    let Some(z) = get_zset(txn, &a[1])? else {
        return Ok(scan::done());
    };
    if let Some(all) = small_in_score_order(txn, &a[1], z)? {
        // Redis keeps a small sorted set in one listpack, by score, and answers a scan of
        // it whole, in that order, with cursor 0 (whatever cursor and COUNT were given).
        let mut out = Vec::with_capacity(all.len() * 2);
        for (m, s) in all {
            if scan::matches(opts.pattern.as_deref(), &m) {
                out.push(Reply::bulk(m));
                out.push(Reply::bulk(format_double(s)));
            }
        }
        return Ok(scan::reply(0, out));
    }
    let prefix = store::member_prefix(&a[1], z.version);
    scan::page(txn, &prefix, &opts, |k, v, out| {
        let m = &k[prefix.len()..];
        if scan::matches(opts.pattern.as_deref(), m) {
            let s = store::decode_member_value(&a[1], v)?;
            out.push(Reply::bulk(m.to_vec()));
            out.push(Reply::bulk(format_double(s)));
        }
        Ok(())
    })
}

/// Redis's `zset-max-listpack-entries` and `zset-max-listpack-value`: a sorted set within
/// both is one listpack in Redis (OBJECT ENCODING says so too).
const LISTPACK_ENTRIES: u64 = 128;
const LISTPACK_VALUE: usize = 64;

/// Members and their scores.
type Scored = Vec<(Vec<u8>, f64)>;

/// Every member and score of a sorted set Redis would hold as a listpack, by score; `None`
/// for a bigger one.
fn small_in_score_order(
    txn: &Txn<'_>,
    key: &[u8],
    z: store::Zset,
) -> Result<Option<Scored>, Reply> {
    if z.card > LISTPACK_ENTRIES {
        return Ok(None);
    }
    let mut all = Vec::with_capacity(z.card as usize);
    let mut small = true;
    store::for_each_ranked(txn, key, z, false, |_, m, s| {
        small = m.len() <= LISTPACK_VALUE;
        all.push((m.to_vec(), s));
        Ok(small)
    })?;
    Ok(small.then_some(all))
}

/// Most replies ZRANDMEMBER with a negative count returns.
pub const RANDMEMBER_MAX_REPEATS: u64 = 1 << 24;

/// `ZRANDMEMBER key [count [WITHSCORES]]`: random members, drawn with the command's
/// deterministic randomness (`Txn::rand_u64`).
pub fn zrandmember(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    if a.len() == 2 {
        let Some(z) = get_zset(txn, key)? else {
            return Ok(Reply::Nil);
        };
        let r = txn.rand_u64() % z.card;
        let w = store::rank_window(txn, key, z, r, 1)?;
        return Ok(w
            .into_iter()
            .next()
            .map_or(Reply::Nil, |(m, _)| Reply::bulk(m)));
    }
    let l = match parse_i64(&a[2]) {
        Some(i64::MIN) => {
            return Err(Reply::err(format!(
                "value is out of range, value must between {} and {}",
                -i64::MAX,
                i64::MAX
            )));
        }
        Some(l) => l,
        None => return Err(Reply::err(NOT_INT)),
    };
    let with_scores = match a.len() {
        3 => false,
        4 if a[3].eq_ignore_ascii_case(b"withscores") => true,
        _ => return Err(Reply::err("syntax error")),
    };
    if with_scores && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&l) {
        return Err(Reply::err("value is out of range"));
    }
    let Some(z) = get_zset(txn, key)? else {
        return Ok(Reply::Array(Vec::new()));
    };
    let count = l.unsigned_abs();
    if count == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    let picked: Vec<(Vec<u8>, f64)> = if l < 0 {
        if count > RANDMEMBER_MAX_REPEATS {
            return Err(Reply::err(format!(
                "count too large: bloomkv-server returns at most {RANDMEMBER_MAX_REPEATS} random members per call"
            )));
        }
        // Draw the ranks, then read them in one pass in rank order.
        let ranks: Vec<u64> = (0..count).map(|_| txn.rand_u64() % z.card).collect();
        let mut order: Vec<usize> = (0..ranks.len()).collect();
        order.sort_unstable_by_key(|&i| ranks[i]);
        let mut out: Vec<(Vec<u8>, f64)> = vec![(Vec::new(), 0.0); ranks.len()];
        let mut next = order.iter().copied().peekable();
        store::for_each_ranked(txn, key, z, false, |r, m, s| {
            while let Some(&i) = next.peek() {
                if ranks[i] != r {
                    break;
                }
                out[i] = (m.to_vec(), s);
                next.next();
            }
            Ok(next.peek().is_some())
        })?;
        if next.peek().is_some() {
            return Err(store::corrupt(key));
        }
        out
    } else if count >= z.card {
        store::rank_window(txn, key, z, 0, z.card)?
    } else {
        // Distinct ranks (Floyd's sampling), read in one pass, then shuffled.
        let mut ranks = std::collections::BTreeSet::new();
        for j in (z.card - count)..z.card {
            let t = txn.rand_u64() % (j + 1);
            if !ranks.insert(t) {
                ranks.insert(j);
            }
        }
        let mut out = Vec::with_capacity(ranks.len());
        let mut want = ranks.iter().copied().peekable();
        store::for_each_ranked(txn, key, z, false, |r, m, s| {
            if want.peek() == Some(&r) {
                want.next();
                out.push((m.to_vec(), s));
            }
            Ok(want.peek().is_some())
        })?;
        if want.peek().is_some() {
            return Err(store::corrupt(key));
        }
        for i in (1..out.len()).rev() {
            let j = (txn.rand_u64() % (i as u64 + 1)) as usize;
            out.swap(i, j);
        }
        out
    };
    Ok(if with_scores {
        Reply::Pairs(
            picked
                .into_iter()
                .map(|(m, s)| (Reply::bulk(m), Reply::Double(s)))
                .collect(),
        )
    } else {
        Reply::Array(picked.into_iter().map(|(m, _)| Reply::bulk(m)).collect())
    })
}
