//! SORT and SORT_RO: the elements of a list, set or sorted set, ordered by their own value
//! or by values found through a pattern (`BY weight_*`, `BY h_*->field`), as numbers or
//! bytes, with LIMIT, GET patterns and STORE into a list, as Redis 7.0 does.
//!
//! The order matches Redis's: numbers ascending with equal scores ordered by the elements'
//! bytes; ALPHA compares bytes (Redis's `strcoll` in the C locale); a missing BY value
//! counts as 0, or sorts first under ALPHA. `BY` a pattern without `*` skips sorting: a
//! list or sorted set keeps its own order (DESC reverses it) and a set comes in member
//! order, which is this server's own order for a set.

use bytes::Bytes;

use super::lists::store::{get_list, push, read_range};
use super::zsets::store::{Zset, for_each_ranked};
use crate::cmd::{NOT_INT, WRONGTYPE, hashes, parse_i64, strings};
use crate::resp::Reply;
use crate::store::{Meta, R, Txn};

/// Redis's error for an element or BY value that is not a number.
const NOT_DOUBLE: &str = "One or more scores can't be converted into double";

/// A parsed SORT call.
struct Call<'a> {
    by: Option<&'a [u8]>,
    /// `BY` a pattern without `*`: no sorting.
    dont_sort: bool,
    limit: Option<(i64, i64)>,
    get: Vec<&'a [u8]>,
    desc: bool,
    alpha: bool,
    store: Option<&'a [u8]>,
}

/// Parses the options after the key; `read_only` (SORT_RO) takes no STORE.
fn parse(a: &[Bytes], read_only: bool) -> Result<Call<'_>, Reply> {
    let mut call = Call {
        by: None,
        dont_sort: false,
        limit: None,
        get: Vec::new(),
        desc: false,
        alpha: false,
        store: None,
    };
    let syntax = || Reply::err("syntax error");
    let mut i = 2;
    while i < a.len() {
        let left = a.len() - i - 1;
        match a[i].to_ascii_uppercase().as_slice() {
            b"ASC" => call.desc = false,
            b"DESC" => call.desc = true,
            b"ALPHA" => call.alpha = true,
            b"LIMIT" if left >= 2 => {
                let start = parse_i64(&a[i + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
                let count = parse_i64(&a[i + 2]).ok_or_else(|| Reply::err(NOT_INT))?;
                call.limit = Some((start, count));
                i += 2;
            }
            b"STORE" if left >= 1 && !read_only => {
                call.store = Some(&a[i + 1]);
                i += 1;
            }
            b"BY" if left >= 1 => {
                let pattern = &a[i + 1][..];
                call.dont_sort = !pattern.contains(&b'*');
                call.by = Some(pattern);
                i += 1;
            }
            b"GET" if left >= 1 => {
                call.get.push(&a[i + 1]);
                i += 1;
            }
            _ => return Err(syntax()),
        }
        i += 1;
    }
    Ok(call)
}

/// The value a pattern names for `elem`: `#` is the element itself; otherwise the first `*`
/// becomes the element, and `key->field` reads a hash field where `key` reads a string.
/// Anything missing, of another type or without a `*` is `None`.
fn lookup(txn: &Txn<'_>, pattern: &[u8], elem: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    if pattern == b"#" {
        return Ok(Some(elem.to_vec()));
    }
    let Some(star) = pattern.iter().position(|&b| b == b'*') else {
        return Ok(None);
    };
    let after = &pattern[star + 1..];
    // A field follows the first "->" after the `*`, if anything follows it.
    let (post, field) = match after.windows(2).position(|w| w == b"->") {
        Some(p) if p + 2 < after.len() => (&after[..p], Some(&after[p + 2..])),
        _ => (after, None),
    };
    let mut key = Vec::with_capacity(star + elem.len() + post.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(elem);
    key.extend_from_slice(post);
    let Some(meta) = txn.meta(&key)? else {
        return Ok(None);
    };
    match (field, &meta) {
        (None, Meta::Str(_) | Meta::Chunked { .. }) => {
            Ok(Some(strings::store::read_string(txn, &key, &meta)?))
        }
        (Some(f), Meta::Hash { version, .. }) => hashes::store::get_field(txn, &key, *version, f),
        _ => Ok(None),
    }
}

/// A number as `strtod` reads it for SORT: leading spaces allowed, nothing after the number,
/// an empty value is 0, NaN refused.
fn parse_score(v: &[u8]) -> Option<f64> {
    let s = std::str::from_utf8(v).ok()?.trim_start();
    if s.is_empty() {
        return Some(0.0);
    }
    s.parse::<f64>().ok().filter(|f| !f.is_nan())
}

/// The elements of `key` in its own order (a sorted set by score, `desc` reversing a list or
/// a sorted set), or `None` for a missing key.
fn elements(txn: &Txn<'_>, key: &[u8], desc: bool) -> Result<Option<Vec<Vec<u8>>>, Reply> {
    match txn.meta(key)? {
        None => Ok(None),
        Some(Meta::List { .. }) => {
            let Some(l) = get_list(txn, key)? else {
                return Ok(None);
            };
            let start = if desc { l.len().saturating_sub(1) } else { 0 };
            Ok(Some(read_range(txn, key, l, start, l.len(), desc)?))
        }
        Some(Meta::Set { version, .. }) => {
            Ok(Some(super::sets::store::all_members(txn, key, version)?))
        }
        Some(Meta::Zset { version, card }) => {
            let mut out = Vec::new();
            for_each_ranked(txn, key, Zset { version, card }, desc, |_, m, _| {
                out.push(m.to_vec());
                Ok(true)
            })?;
            Ok(Some(out))
        }
        Some(_) => Err(Reply::Error(WRONGTYPE.into())),
    }
}

/// The window LIMIT selects from `len` elements, as Redis clamps it.
fn window(limit: Option<(i64, i64)>, len: usize) -> std::ops::Range<usize> {
    let len = len as i64;
    let (start, count) = limit.unwrap_or((0, -1));
    let mut start = start.max(0);
    let mut end = if count < 0 {
        len - 1
    } else {
        start.saturating_add(count) - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    end = end.min(len - 1);
    if end < start {
        return 0..0;
    }
    start as usize..end as usize + 1
}

/// Orders `elems` as the call asks.
fn order(txn: &Txn<'_>, call: &Call<'_>, elems: Vec<Vec<u8>>) -> Result<Vec<Vec<u8>>, Reply> {
    let by = |e: &[u8]| -> Result<Option<Vec<u8>>, Reply> {
        match call.by {
            Some(p) => lookup(txn, p, e),
            None => Ok(Some(e.to_vec())),
        }
    };
    let mut out: Vec<Vec<u8>>;
    if call.alpha {
        let mut keyed = Vec::with_capacity(elems.len());
        for e in elems {
            let k = if call.by.is_some() { by(&e)? } else { None };
            keyed.push((k, e));
        }
        keyed.sort_by(|(ka, ea), (kb, eb)| {
            let o = if call.by.is_some() {
                ka.cmp(kb)
            } else {
                ea.cmp(eb)
            };
            if call.desc { o.reverse() } else { o }
        });
        out = keyed.into_iter().map(|(_, e)| e).collect();
    } else {
        let mut keyed = Vec::with_capacity(elems.len());
        for e in elems {
            let score = match by(&e)? {
                Some(v) => parse_score(&v).ok_or_else(|| Reply::err(NOT_DOUBLE))?,
                None => 0.0,
            };
            keyed.push((score, e));
        }
        keyed.sort_by(|(sa, ea), (sb, eb)| {
            // No NaN gets here; -0.0 and 0.0 are equal scores, as C compares them.
            let o = sa
                .partial_cmp(sb)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then_with(|| ea.cmp(eb));
            if call.desc { o.reverse() } else { o }
        });
        out = keyed.into_iter().map(|(_, e)| e).collect();
    }
    out.shrink_to_fit();
    Ok(out)
}

/// SORT's work: the ordered, limited elements with their GET values (`None` for a missing
/// one), one entry per element and GET pattern.
fn run(txn: &Txn<'_>, key: &[u8], call: &Call<'_>) -> Result<Vec<Option<Vec<u8>>>, Reply> {
    // A list or sorted set keeps its order when nothing is sorted (DESC reverses it); a set
    // comes in member order.
    let keeps_order = call.dont_sort;
    let elems = match elements(txn, key, keeps_order && call.desc)? {
        None => return Ok(Vec::new()),
        Some(e) => e,
    };
    let elems = if keeps_order {
        elems
    } else {
        order(txn, call, elems)?
    };
    let w = window(call.limit, elems.len());
    let mut out = Vec::new();
    for e in &elems[w] {
        if call.get.is_empty() {
            out.push(Some(e.clone()));
        }
        for p in &call.get {
            out.push(lookup(txn, p, e)?);
        }
    }
    Ok(out)
}

/// `SORT key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC | DESC] [ALPHA]
/// [STORE destination]`
pub fn sort(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let call = parse(a, false)?;
    let out = run(txn, &a[1], &call)?;
    let Some(dst) = call.store else {
        return Ok(Reply::Array(out.into_iter().map(Reply::opt_bulk).collect()));
    };
    // The destination is replaced by a list of the results, a missing GET value stored as
    // an empty string; an empty result removes it.
    let removed = txn.remove_to_overwrite(dst)?;
    let n = out.len() as i64;
    if !out.is_empty() {
        let values: Vec<Vec<u8>> = out.into_iter().map(Option::unwrap_or_default).collect();
        super::lists::store::check_elements(values.iter().map(|v| v.as_slice()))?;
        push(txn, dst, values.iter().map(|v| v.as_slice()), false, false)?;
        txn.notify(crate::notify::class::LIST, "sortstore", dst);
    } else if removed {
        txn.notify(crate::notify::class::GENERIC, "del", dst);
    }
    Ok(Reply::Int(n))
}

/// `SORT_RO key [BY pattern] [LIMIT offset count] [GET pattern ...] [ASC | DESC] [ALPHA]`
pub fn sort_ro(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let call = parse(a, true)?;
    let out = run(txn, &a[1], &call)?;
    Ok(Reply::Array(out.into_iter().map(Reply::opt_bulk).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_window_clamps_as_redis_does() {
        assert_eq!(window(None, 5), 0..5);
        assert_eq!(window(Some((1, 2)), 5), 1..3);
        assert_eq!(window(Some((-3, 2)), 5), 0..2);
        assert_eq!(window(Some((2, -1)), 5), 2..5);
        assert_eq!(window(Some((9, 2)), 5), 0..0);
        assert_eq!(window(Some((3, 100)), 5), 3..5);
        assert_eq!(window(Some((0, 0)), 5), 0..0);
        assert_eq!(window(None, 0), 0..0);
    }

    #[test]
    fn scores_read_as_strtod_reads_them() {
        assert_eq!(parse_score(b"1.5"), Some(1.5));
        assert_eq!(parse_score(b"  -2"), Some(-2.0));
        assert_eq!(parse_score(b""), Some(0.0));
        assert_eq!(parse_score(b"inf"), Some(f64::INFINITY));
        assert_eq!(parse_score(b"nan"), None);
        assert_eq!(parse_score(b"1x"), None);
        assert_eq!(parse_score(b"1 "), None);
    }
}
