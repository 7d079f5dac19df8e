//! Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD, as Redis 7
//! computes them. Each input is read whole (a plain set counts as scores of 1), so the cost
//! is the inputs' sizes; the result is sorted by score, then member bytes, as Redis orders
//! it, and a STORE replaces its destination (removing it when the result is empty).

use std::collections::HashMap;

use bytes::Bytes;

use super::score;
use super::store::{Zset, decode_member_value, set_score, store_zset};
use crate::cmd::{NOT_INT, WRONGTYPE, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{Meta, R, Txn};

/// How scores of a member present in several inputs combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Aggregate {
    Sum,
    Min,
    Max,
}

/// Which operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Union,
    Inter,
    Diff,
}

/// A parsed call: the input keys, their weights, the aggregate, WITHSCORES.
struct Call<'a> {
    keys: &'a [Bytes],
    weights: Vec<f64>,
    aggregate: Aggregate,
    with_scores: bool,
}

/// Parses `numkeys key [key ...]` and the options after them, starting at `a[at]`. `store`:
/// the STORE form (no WITHSCORES); ZDIFF takes no WEIGHTS or AGGREGATE.
fn parse<'a>(
    a: &'a [Bytes],
    at: usize,
    op: Op,
    store: bool,
    name: &str,
) -> Result<Call<'a>, Reply> {
    let n = parse_i64(&a[at]).ok_or_else(|| Reply::err(NOT_INT))?;
    if n < 1 {
        return Err(Reply::err(format!(
            "at least 1 input key is needed for '{name}' command"
        )));
    }
    let first = at + 1;
    let n = n as usize;
    if a.len() - first < n {
        return Err(Reply::err("syntax error"));
    }
    let keys = &a[first..first + n];
    let mut call = Call {
        keys,
        weights: vec![1.0; n],
        aggregate: Aggregate::Sum,
        with_scores: false,
    };
    let mut j = first + n;
    while j < a.len() {
        let o = &a[j];
        let left = a.len() - j - 1;
        if op != Op::Diff && o.eq_ignore_ascii_case(b"weights") && left >= n {
            for i in 0..n {
                call.weights[i] = score::parse_score(&a[j + 1 + i])
                    .ok_or_else(|| Reply::err("weight value is not a float"))?;
            }
            j += n;
        } else if op != Op::Diff && o.eq_ignore_ascii_case(b"aggregate") && left >= 1 {
            let v = &a[j + 1];
            call.aggregate = if v.eq_ignore_ascii_case(b"sum") {
                Aggregate::Sum
            } else if v.eq_ignore_ascii_case(b"min") {
                Aggregate::Min
            } else if v.eq_ignore_ascii_case(b"max") {
                Aggregate::Max
            } else {
                return Err(Reply::err("syntax error"));
            };
            j += 1;
        } else if !store && o.eq_ignore_ascii_case(b"withscores") {
            call.with_scores = true;
        } else {
            return Err(Reply::err("syntax error"));
        }
        j += 1;
    }
    Ok(call)
}

/// Every member of `key` with its score (a set's members score 1); empty when missing.
///
/// # Errors
/// WRONGTYPE for other types; engine errors; damage.
fn read_input(txn: &Txn<'_>, key: &[u8]) -> Result<Vec<(Vec<u8>, f64)>, Reply> {
    match txn.meta(key)? {
        None => Ok(Vec::new()),
        Some(Meta::Zset { version, .. }) => {
            let prefix = super::store::member_prefix(key, version);
            let mut out = Vec::new();
            txn.for_each_prefix(&prefix, None, false, |k, v| {
                out.push((k[prefix.len()..].to_vec(), decode_member_value(key, v)?));
                Ok(true)
            })?;
            Ok(out)
        }
        Some(Meta::Set { version, .. }) => {
            Ok(crate::cmd::sets::store::all_members(txn, key, version)?
                .into_iter()
                .map(|m| (m, 1.0))
                .collect())
        }
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// A weighted score, with Redis's rule that a NaN (infinity times zero) counts as 0.
fn weighted(s: f64, w: f64) -> f64 {
    let v = s * w;
    if v.is_nan() { 0.0 } else { v }
}

fn combine(agg: Aggregate, acc: f64, v: f64) -> f64 {
    match agg {
        // inf + -inf: Redis makes it 0.
        Aggregate::Sum => {
            let s = acc + v;
            if s.is_nan() { 0.0 } else { s }
        }
        Aggregate::Min => acc.min(v),
        Aggregate::Max => acc.max(v),
    }
}

/// The result of `op` over the call's inputs, in Redis's order.
fn compute(txn: &Txn<'_>, op: Op, call: &Call<'_>) -> Result<Vec<(Vec<u8>, f64)>, Reply> {
    // Every key is read first, so a wrong type anywhere answers WRONGTYPE (as Redis checks
    // all inputs before computing).
    let mut inputs = Vec::with_capacity(call.keys.len());
    for (k, &w) in call.keys.iter().zip(&call.weights) {
        inputs.push((read_input(txn, k)?, w));
    }
    if op != Op::Diff {
        // Redis combines the inputs smallest first (stable for equal sizes), which decides
        // where an infinite sum turns into NaN, and so into 0.
        inputs.sort_by_key(|(i, _)| i.len());
    }
    let mut out: Vec<(Vec<u8>, f64)> = match op {
        Op::Union => {
            let mut acc: HashMap<Vec<u8>, f64> = HashMap::new();
            for (input, w) in inputs {
                for (m, s) in input {
                    let v = weighted(s, w);
                    acc.entry(m)
                        .and_modify(|a| *a = combine(call.aggregate, *a, v))
                        .or_insert(v);
                }
            }
            acc.into_iter().collect()
        }
        Op::Inter => {
            let maps: Vec<(HashMap<Vec<u8>, f64>, f64)> = inputs
                .into_iter()
                .map(|(i, w)| (i.into_iter().collect(), w))
                .collect();
            // Walk the smallest input (the first), look the members up in the others. As in
            // Redis, only the first input's weighted score has a NaN made 0; a later NaN
            // product makes the sum NaN, which is then made 0.
            let mut res = Vec::new();
            let Some(((first, w0), rest)) = maps.split_first() else {
                return Ok(Vec::new());
            };
            'members: for (m, &s0) in first {
                let mut acc = weighted(s0, *w0);
                for (map, w) in rest {
                    let Some(&s) = map.get(m) else {
                        continue 'members;
                    };
                    acc = combine(call.aggregate, acc, s * w);
                }
                res.push((m.clone(), acc));
            }
            res
        }
        Op::Diff => {
            let mut it = inputs.into_iter().map(|(i, _)| i);
            let first = it.next().unwrap_or_default();
            let others: Vec<std::collections::HashSet<Vec<u8>>> = it
                .map(|i| i.into_iter().map(|(m, _)| m).collect())
                .collect();
            first
                .into_iter()
                .filter(|(m, _)| !others.iter().any(|o| o.contains(m)))
                .collect()
        }
    };
    // Redis's order: -0 and 0 are equal scores (tied by member); no NaN reaches here.
    out.sort_by(|a, b| {
        a.1.partial_cmp(&b.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| a.0.cmp(&b.0))
    });
    Ok(out)
}

/// Replaces `dst` with a sorted set of `members` (removes it when empty); returns the
/// number of members stored.
///
/// # Errors
/// Engine errors.
/// `event` names the command for keyspace notifications (`zunionstore`...).
pub fn store_result(
    txn: &mut Txn<'_>,
    dst: &[u8],
    members: Vec<(Vec<u8>, f64)>,
    event: &'static str,
) -> R {
    let removed = txn.remove_to_overwrite(dst)?;
    if members.is_empty() {
        if removed {
            txn.notify(class::GENERIC, "del", dst);
        }
        return Ok(Reply::Int(0));
    }
    for (m, _) in &members {
        if !crate::store::member_fits(dst, m) {
            return Err(crate::store::member_too_long(dst, m));
        }
    }
    let mut z = Zset {
        version: txn.new_version()?,
        card: 0,
    };
    for (m, s) in &members {
        // -0.0 is stored as 0.0, as ZADD stores it.
        let s = if *s == 0.0 { 0.0 } else { *s };
        set_score(txn, dst, z, m, None, s);
        z.card += 1;
    }
    store_zset(txn, dst, z)?;
    txn.signal_ready(dst);
    txn.notify(class::ZSET, event, dst);
    Ok(Reply::Int(z.card as i64))
}

fn read_cmd(txn: &mut Txn<'_>, a: &[Bytes], op: Op, name: &str) -> R {
    let call = parse(a, 1, op, false, name)?;
    let out = compute(txn, op, &call)?;
    Ok(super::range::members_reply(out, call.with_scores))
}

fn store_cmd(txn: &mut Txn<'_>, a: &[Bytes], op: Op, name: &'static str) -> R {
    let call = parse(a, 2, op, true, name)?;
    let out = compute(txn, op, &call)?;
    store_result(txn, &a[1], out, name)
}

/// `ZUNION numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]`
pub fn zunion(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    read_cmd(txn, a, Op::Union, "zunion")
}

/// `ZINTER numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]`
pub fn zinter(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    read_cmd(txn, a, Op::Inter, "zinter")
}

/// `ZDIFF numkeys key [key ...] [WITHSCORES]`
pub fn zdiff(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    read_cmd(txn, a, Op::Diff, "zdiff")
}

/// `ZUNIONSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE ...]`
pub fn zunionstore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    store_cmd(txn, a, Op::Union, "zunionstore")
}

/// `ZINTERSTORE destination numkeys key [key ...] [WEIGHTS w ...] [AGGREGATE ...]`
pub fn zinterstore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    store_cmd(txn, a, Op::Inter, "zinterstore")
}

/// `ZDIFFSTORE destination numkeys key [key ...]`
pub fn zdiffstore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    store_cmd(txn, a, Op::Diff, "zdiffstore")
}

/// `ZINTERCARD numkeys key [key ...] [LIMIT limit]`: the size of the intersection, counted
/// up to LIMIT (0: no limit).
pub fn zintercard(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let n = parse_i64(&a[1]).ok_or_else(|| Reply::err(NOT_INT))?;
    if n < 1 {
        return Err(Reply::err(
            "at least 1 input key is needed for 'zintercard' command",
        ));
    }
    let n = n as usize;
    if a.len() - 2 < n {
        return Err(Reply::err("syntax error"));
    }
    let mut limit = 0u64;
    let mut j = 2 + n;
    while j < a.len() {
        if a[j].eq_ignore_ascii_case(b"limit") && j + 1 < a.len() {
            let l = parse_i64(&a[j + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
            if l < 0 {
                return Err(Reply::err("LIMIT can't be negative"));
            }
            limit = l as u64;
            j += 2;
        } else {
            return Err(Reply::err("syntax error"));
        }
    }
    let call = Call {
        keys: &a[2..2 + n],
        weights: vec![1.0; n],
        aggregate: Aggregate::Sum,
        with_scores: false,
    };
    let out = compute(txn, Op::Inter, &call)?;
    let count = out.len() as u64;
    Ok(Reply::Int(
        if limit > 0 { count.min(limit) } else { count } as i64
    ))
}
