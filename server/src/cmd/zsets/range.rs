//! Range commands: ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZREVRANGE,
//! ZRANGEBYSCORE, ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZCOUNT, ZLEXCOUNT,
//! ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX.
//!
//! Rank ranges scan the score index from the nearer end; score ranges seek the index to the
//! first score in range; lex ranges seek the member keys (which sort by member bytes, so a
//! lex range is one scan; Redis defines lex ranges only for members of equal scores, where
//! member order and index order agree). Every reply is sized by what the set holds, never by
//! a LIMIT or index the client gave.

use std::ops::Bound;

use bytes::Bytes;

use super::score::parse_range_float;
use super::store::{
    ScoreRange, Zset, decode_member_value, for_each_in_score_range, get_zset, rank_window,
    remove_all,
};
use crate::cmd::{NOT_INT, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{MAX_MEMBER_KEY, R, Txn, prefix_end};

fn not_float_range() -> Reply {
    Reply::err("min or max is not a float")
}

fn not_lex_range() -> Reply {
    Reply::err("min or max not valid string range item")
}

fn parse_long(b: &[u8]) -> Result<i64, Reply> {
    parse_i64(b).ok_or_else(|| Reply::err(NOT_INT))
}

/// Parses one end of a score range: `(x` excludes `x`.
fn parse_score_end(b: &[u8]) -> Option<(f64, bool)> {
    match b.split_first() {
        Some((b'(', rest)) => parse_range_float(rest).map(|v| (v, true)),
        _ => parse_range_float(b).map(|v| (v, false)),
    }
}

/// Parses ZRANGEBYSCORE's `min max`.
///
/// # Errors
/// `min or max is not a float`.
pub fn parse_score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, Reply> {
    let (min, minex) = parse_score_end(min).ok_or_else(not_float_range)?;
    let (max, maxex) = parse_score_end(max).ok_or_else(not_float_range)?;
    Ok(ScoreRange {
        min,
        minex,
        max,
        maxex,
    })
}

/// One end of a lex range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexEnd {
    /// `-`: below every member.
    Lowest,
    /// `+`: above every member.
    Highest,
    /// `[x`.
    Incl(Vec<u8>),
    /// `(x`.
    Excl(Vec<u8>),
}

fn parse_lex_end(b: &[u8]) -> Option<LexEnd> {
    match b.split_first()? {
        (b'+', []) => Some(LexEnd::Highest),
        (b'-', []) => Some(LexEnd::Lowest),
        (b'(', rest) => Some(LexEnd::Excl(rest.to_vec())),
        (b'[', rest) => Some(LexEnd::Incl(rest.to_vec())),
        _ => None,
    }
}

/// Parses ZRANGEBYLEX's `min max`.
///
/// # Errors
/// `min or max not valid string range item`.
pub fn parse_lex_range(min: &[u8], max: &[u8]) -> Result<(LexEnd, LexEnd), Reply> {
    let min = parse_lex_end(min).ok_or_else(not_lex_range)?;
    let max = parse_lex_end(max).ok_or_else(not_lex_range)?;
    Ok((min, max))
}

/// Engine key bounds: start and end.
type KeyBounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The member-key bounds of a lex range; `None` when it is empty by its ends alone.
fn lex_bounds(key: &[u8], version: u64, min: &LexEnd, max: &LexEnd) -> Option<KeyBounds> {
    let prefix = super::store::member_prefix(key, version);
    // No member is longer than this; a longer bound compares like its cut-off prefix
    // (exclusive at the start, inclusive at the end), which keeps engine keys in bounds.
    let room = MAX_MEMBER_KEY.saturating_sub(key.len());
    let at = |x: &[u8]| {
        let mut k = prefix.clone();
        k.extend_from_slice(&x[..x.len().min(room)]);
        k
    };
    let start = match min {
        LexEnd::Highest => return None,
        LexEnd::Lowest => Bound::Included(prefix.clone()),
        LexEnd::Incl(x) if x.len() > room => Bound::Excluded(at(x)),
        LexEnd::Incl(x) => Bound::Included(at(x)),
        LexEnd::Excl(x) => Bound::Excluded(at(x)),
    };
    let end = match max {
        LexEnd::Lowest => return None,
        LexEnd::Highest => match prefix_end(&prefix) {
            Some(e) => Bound::Excluded(e),
            None => Bound::Unbounded,
        },
        LexEnd::Excl(x) if x.len() > room => Bound::Included(at(x)),
        LexEnd::Incl(x) => Bound::Included(at(x)),
        LexEnd::Excl(x) => Bound::Excluded(at(x)),
    };
    Some((start, end))
}

/// Calls `f` with the members (and scores) in a lex range, in member order (reversed when
/// `reverse`), until it returns `false`.
fn for_each_in_lex_range(
    txn: &Txn<'_>,
    key: &[u8],
    z: Zset,
    min: &LexEnd,
    max: &LexEnd,
    reverse: bool,
    mut f: impl FnMut(&[u8], f64) -> Result<bool, Reply>,
) -> Result<(), Reply> {
    let Some((start, end)) = lex_bounds(key, z.version, min, max) else {
        return Ok(());
    };
    let plen = super::store::member_prefix(key, z.version).len();
    txn.for_each_in(start, end, reverse, |k, v| {
        f(&k[plen..], decode_member_value(key, v)?)
    })
}

/// Normalizes a rank range (`start stop`, negative from the end) against `card` members:
/// the first rank and the count, `None` when empty.
fn rank_range(start: i64, stop: i64, card: u64) -> Option<(u64, u64)> {
    crate::cmd::lists::store::clamp_range(start, stop, card)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By {
    Auto,
    Rank,
    Score,
    Lex,
}

/// ZRANGE and its older forms, as Redis's `zrangeGenericCommand` parses them.
fn zrange_generic(txn: &mut Txn<'_>, a: &[Bytes], by: By, rev: Option<bool>) -> R {
    zrange_into(txn, a, by, rev, None)
}

/// ZRANGE's work: `a[1]` is the source, `a[2..4]` the range, options after. With `dst`
/// (ZRANGESTORE) the members found, with their scores, replace `dst` and the reply is
/// their number.
fn zrange_into(
    txn: &mut Txn<'_>,
    a: &[Bytes],
    mut by: By,
    mut rev: Option<bool>,
    dst: Option<&[u8]>,
) -> R {
    let key = &a[1];
    let mut with_scores = false;
    let mut limit: Option<(i64, i64)> = None;
    let mut j = 4;
    while j < a.len() {
        let left = a.len() - j - 1;
        let o = &a[j];
        if dst.is_none() && o.eq_ignore_ascii_case(b"withscores") {
            with_scores = true;
        } else if o.eq_ignore_ascii_case(b"limit") && left >= 2 {
            limit = Some((parse_long(&a[j + 1])?, parse_long(&a[j + 2])?));
            j += 2;
        } else if rev.is_none() && o.eq_ignore_ascii_case(b"rev") {
            rev = Some(true);
        } else if by == By::Auto && o.eq_ignore_ascii_case(b"bylex") {
            by = By::Lex;
        } else if by == By::Auto && o.eq_ignore_ascii_case(b"byscore") {
            by = By::Score;
        } else {
            return Err(Reply::err("syntax error"));
        }
        j += 1;
    }
    let rev = rev.unwrap_or(false);
    if by == By::Auto {
        by = By::Rank;
    }
    if limit.is_some() && by == By::Rank {
        return Err(Reply::err(
            "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if with_scores && by == By::Lex {
        return Err(Reply::err(
            "syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    // Reversed score and lex ranges are given as `max min`.
    let (lo, hi) = if rev && by != By::Rank {
        (&a[3], &a[2])
    } else {
        (&a[2], &a[3])
    };
    enum Parsed {
        Rank(i64, i64),
        Score(ScoreRange),
        Lex(LexEnd, LexEnd),
    }
    let parsed = match by {
        By::Score => Parsed::Score(parse_score_range(lo, hi)?),
        By::Lex => {
            let (min, max) = parse_lex_range(lo, hi)?;
            Parsed::Lex(min, max)
        }
        _ => Parsed::Rank(parse_long(lo)?, parse_long(hi)?),
    };
    let Some(z) = get_zset(txn, key)? else {
        return match dst {
            Some(d) => super::algebra::store_result(txn, d, Vec::new(), "zrangestore"),
            None => Ok(Reply::Array(Vec::new())),
        };
    };
    let (offset, count) = limit.unwrap_or((0, -1));
    let mut out: Vec<(Vec<u8>, f64)> = Vec::new();
    match parsed {
        Parsed::Rank(start, stop) => {
            if let Some((first, n)) = rank_range(start, stop, z.card) {
                if n >= super::stream::STREAM_MIN
                    && dst.is_none()
                    && let Some(snap) = txn.take_snapshot()
                {
                    return Ok(Reply::Stream(super::stream::rank_stream(
                        snap,
                        key,
                        z,
                        first,
                        n,
                        rev,
                        with_scores,
                    )));
                }
                if rev {
                    // Ranks counted from the highest score.
                    let lo = z.card - first - n;
                    out = rank_window(txn, key, z, lo, n)?;
                    out.reverse();
                } else {
                    out = rank_window(txn, key, z, first, n)?;
                }
            }
        }
        Parsed::Score(range) => {
            if offset >= 0 && (offset as u64) < z.card {
                let mut skip = offset as u64;
                for_each_in_score_range(txn, key, z, &range, rev, |m, s| {
                    if count >= 0 && out.len() as i64 >= count {
                        return Ok(false);
                    }
                    if skip > 0 {
                        skip -= 1;
                    } else {
                        out.push((m.to_vec(), s));
                    }
                    Ok(count < 0 || (out.len() as i64) < count)
                })?;
            }
        }
        Parsed::Lex(min, max) => {
            if offset >= 0 && (offset as u64) < z.card {
                let mut skip = offset as u64;
                for_each_in_lex_range(txn, key, z, &min, &max, rev, |m, s| {
                    if count >= 0 && out.len() as i64 >= count {
                        return Ok(false);
                    }
                    if skip > 0 {
                        skip -= 1;
                    } else {
                        out.push((m.to_vec(), s));
                    }
                    Ok(count < 0 || (out.len() as i64) < count)
                })?;
            }
        }
    }
    match dst {
        Some(d) => super::algebra::store_result(txn, d, out, "zrangestore"),
        None => Ok(members_reply(out, with_scores)),
    }
}

/// `ZRANGESTORE dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]`
pub fn zrangestore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    zrange_into(txn, &a[1..], By::Auto, None, Some(&a[1]))
}

/// Members, or members and scores (RESP2 flat, RESP3 pairs).
pub fn members_reply(out: Vec<(Vec<u8>, f64)>, with_scores: bool) -> Reply {
    if with_scores {
        Reply::Pairs(
            out.into_iter()
                .map(|(m, s)| (Reply::bulk(m), Reply::Double(s)))
                .collect(),
        )
    } else {
        Reply::Array(out.into_iter().map(|(m, _)| Reply::bulk(m)).collect())
    }
}

/// `ZRANGE key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]`
pub fn zrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    zrange_generic(txn, a, By::Auto, None)
}

/// `ZREVRANGE key start stop [WITHSCORES]`
pub fn zrevrange(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    zrange_generic(txn, a, By::Rank, Some(true))
}

/// `ZRANGEBYSCORE key min max [WITHSCORES] [LIMIT offset count]`
pub fn zrangebyscore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    zrange_generic(txn, a, By::Score, Some(false))
}

/// `ZREVRANGEBYSCORE key max min [WITHSCORES] [LIMIT offset count]`
pub fn zrevrangebyscore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    zrange_generic(txn, a, By::Score, Some(true))
}

/// `ZRANGEBYLEX key min max [LIMIT offset count]`
pub fn zrangebylex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    zrange_generic(txn, a, By::Lex, Some(false))
}

/// `ZREVRANGEBYLEX key max min [LIMIT offset count]`
pub fn zrevrangebylex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    zrange_generic(txn, a, By::Lex, Some(true))
}

/// `ZCOUNT key min max`: one scan of the members in range.
pub fn zcount(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let range = parse_score_range(&a[2], &a[3])?;
    let Some(z) = get_zset(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let mut n = 0i64;
    for_each_in_score_range(txn, &a[1], z, &range, false, |_, _| {
        n += 1;
        Ok(true)
    })?;
    Ok(Reply::Int(n))
}

/// `ZLEXCOUNT key min max`: one scan of the members in range.
pub fn zlexcount(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (min, max) = parse_lex_range(&a[2], &a[3])?;
    let Some(z) = get_zset(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    let mut n = 0i64;
    for_each_in_lex_range(txn, &a[1], z, &min, &max, false, |_, _| {
        n += 1;
        Ok(true)
    })?;
    Ok(Reply::Int(n))
}

/// `ZREMRANGEBYRANK key start stop`: removing every member is one metadata write.
pub fn zremrangebyrank(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let start = parse_long(&a[2])?;
    let stop = parse_long(&a[3])?;
    let key = &a[1];
    let Some(z) = get_zset(txn, key)? else {
        return Ok(Reply::Int(0));
    };
    let Some((first, n)) = rank_range(start, stop, z.card) else {
        return Ok(Reply::Int(0));
    };
    if n == z.card {
        txn.remove_key(key)?;
        txn.notify_then_del_if_gone(class::ZSET, "zremrangebyrank", key)?;
        return Ok(Reply::Int(n as i64));
    }
    let gone = rank_window(txn, key, z, first, n)?;
    remove_all(txn, key, z, &gone, true)?;
    if !gone.is_empty() {
        txn.notify_then_del_if_gone(class::ZSET, "zremrangebyrank", key)?;
    }
    Ok(Reply::Int(gone.len() as i64))
}

/// `ZREMRANGEBYSCORE key min max`
pub fn zremrangebyscore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let range = parse_score_range(&a[2], &a[3])?;
    let key = &a[1];
    let Some(z) = get_zset(txn, key)? else {
        return Ok(Reply::Int(0));
    };
    let mut gone = Vec::new();
    for_each_in_score_range(txn, key, z, &range, false, |m, s| {
        gone.push((m.to_vec(), s));
        Ok(true)
    })?;
    remove_all(txn, key, z, &gone, true)?;
    if !gone.is_empty() {
        txn.notify_then_del_if_gone(class::ZSET, "zremrangebyscore", key)?;
    }
    Ok(Reply::Int(gone.len() as i64))
}

/// `ZREMRANGEBYLEX key min max`
pub fn zremrangebylex(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let (min, max) = parse_lex_range(&a[2], &a[3])?;
    let key = &a[1];
    let Some(z) = get_zset(txn, key)? else {
        return Ok(Reply::Int(0));
    };
    let mut gone = Vec::new();
    for_each_in_lex_range(txn, key, z, &min, &max, false, |m, s| {
        gone.push((m.to_vec(), s));
        Ok(true)
    })?;
    remove_all(txn, key, z, &gone, false)?;
    if !gone.is_empty() {
        txn.notify_then_del_if_gone(class::ZSET, "zremrangebylex", key)?;
    }
    Ok(Reply::Int(gone.len() as i64))
}
