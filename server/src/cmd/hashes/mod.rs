//! Hashes: HSET, HSETNX, HMSET, HGET, HMGET, HGETALL, HDEL, HEXISTS, HINCRBY, HINCRBYFLOAT,
//! HLEN, HKEYS, HVALS, HSTRLEN, HRANDFIELD, HSCAN. Storage layout and costs: [`store`] and
//! docs/SERVER.md.

pub mod store;

use bytes::Bytes;

use super::random::{self, MAX_REPEATED, signed_count, too_many};
use super::scan::{self, parse_scan_args};
use super::{NOT_INT, parse_i64};
use crate::notify::class;
use crate::resp::Reply;
use crate::store::{R, Txn};
use store::{
    Pair, decode_field, field_prefix, for_each_field, get_field, has_field, hash, set_fields,
};

/// The field-value pairs after HSET's or HMSET's key (`cmd` names it in the arity error).
fn pairs<'a>(a: &'a [Bytes], cmd: &str) -> Result<Vec<Pair<'a>>, Reply> {
    if a.len() < 4 || !a.len().is_multiple_of(2) {
        return Err(Reply::err(format!(
            "wrong number of arguments for '{cmd}' command"
        )));
    }
    Ok(a[2..]
        .chunks(2)
        .map(|p| (p[0].as_ref(), p[1].as_ref()))
        .collect())
}

/// `HSET key field value [field value ...]`
pub fn hset(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let p = pairs(a, "hset")?;
    let n = set_fields(txn, &a[1], &p)?;
    // Redis tells of every HSET, even one that changed no field.
    txn.notify(class::HASH, "hset", &a[1]);
    Ok(Reply::Int(n))
}

/// `HMSET key field value [field value ...]`
pub fn hmset(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let p = pairs(a, "hmset")?;
    set_fields(txn, &a[1], &p)?;
    txn.notify(class::HASH, "hset", &a[1]);
    Ok(Reply::Ok)
}

/// `HSETNX key field value`
pub fn hsetnx(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if let Some((version, _)) = hash(txn, &a[1])?
        && get_field(txn, &a[1], version, &a[2])?.is_some()
    {
        return Ok(Reply::Int(0));
    }
    set_fields(txn, &a[1], &[(&a[2], &a[3])])?;
    txn.notify(class::HASH, "hset", &a[1]);
    Ok(Reply::Int(1))
}

/// `HGET key field`
pub fn hget(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((version, _)) = hash(txn, &a[1])? else {
        return Ok(Reply::Nil);
    };
    Ok(Reply::opt_bulk(get_field(txn, &a[1], version, &a[2])?))
}

/// `HMGET key field [field ...]`
pub fn hmget(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let h = hash(txn, &a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for f in &a[2..] {
        out.push(match h {
            Some((version, _)) => Reply::opt_bulk(get_field(txn, &a[1], version, f)?),
            None => Reply::Nil,
        });
    }
    Ok(Reply::Array(out))
}

/// `HEXISTS key field`
pub fn hexists(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((version, _)) = hash(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    Ok(Reply::Int(i64::from(has_field(
        txn, &a[1], version, &a[2],
    )?)))
}

/// `HSTRLEN key field`
pub fn hstrlen(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let Some((version, _)) = hash(txn, &a[1])? else {
        return Ok(Reply::Int(0));
    };
    Ok(Reply::Int(
        get_field(txn, &a[1], version, &a[2])?.map_or(0, |v| v.len() as i64),
    ))
}

/// `HLEN key`
pub fn hlen(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    Ok(Reply::Int(hash(txn, &a[1])?.map_or(0, |(_, n)| n as i64)))
}

/// `HDEL key field [field ...]`: the key goes with its last field.
pub fn hdel(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let removed = store::remove_fields(txn, &a[1], a[2..].iter().map(|f| f.as_ref()))?;
    if removed > 0 {
        txn.notify_then_del_if_gone(class::HASH, "hdel", &a[1])?;
    }
    Ok(Reply::Int(removed))
}

/// Which parts of each field HGETALL, HKEYS and HVALS answer.
#[derive(Clone, Copy)]
enum Parts {
    Both,
    Fields,
    Values,
}

fn all(txn: &Txn<'_>, key: &[u8], parts: Parts) -> R {
    let Some((version, len)) = hash(txn, key)? else {
        return Ok(match parts {
            Parts::Both => Reply::Map(Vec::new()),
            _ => Reply::Array(Vec::new()),
        });
    };
    let cap = (len as usize).min(1 << 16);
    let mut pairs = Vec::new();
    let mut items = Vec::new();
    match parts {
        Parts::Both => pairs.reserve(cap),
        _ => items.reserve(cap),
    }
    for_each_field(txn, key, version, |f, v| {
        match parts {
            Parts::Both => pairs.push((Reply::bulk(f.to_vec()), Reply::bulk(v.to_vec()))),
            Parts::Fields => items.push(Reply::bulk(f.to_vec())),
            Parts::Values => items.push(Reply::bulk(v.to_vec())),
        }
        Ok(true)
    })?;
    Ok(match parts {
        Parts::Both => Reply::Map(pairs),
        _ => Reply::Array(items),
    })
}

/// `HGETALL key`: a map in RESP3, a flat array in RESP2.
pub fn hgetall(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    all(txn, &a[1], Parts::Both)
}

/// `HKEYS key`
pub fn hkeys(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    all(txn, &a[1], Parts::Fields)
}

/// `HVALS key`
pub fn hvals(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    all(txn, &a[1], Parts::Values)
}

/// `HINCRBY key field increment`
pub fn hincrby(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let by = parse_i64(&a[3]).ok_or_else(|| Reply::err(NOT_INT))?;
    let current = match hash(txn, &a[1])? {
        Some((version, _)) => get_field(txn, &a[1], version, &a[2])?,
        None => None,
    };
    let current = match current {
        None => 0,
        Some(v) => parse_i64(&v).ok_or_else(|| Reply::err("hash value is not an integer"))?,
    };
    let new = current
        .checked_add(by)
        .ok_or_else(|| Reply::err("increment or decrement would overflow"))?;
    set_fields(txn, &a[1], &[(&a[2], new.to_string().as_bytes())])?;
    txn.notify(class::HASH, "hincrby", &a[1]);
    Ok(Reply::Int(new))
}

/// `HINCRBYFLOAT key field increment`: in Redis's long double arithmetic and text
/// (`cmd::longdouble`).
pub fn hincrbyfloat(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    use super::longdouble::{IncrError, Parsed, parse};
    // Redis checks the increment before it looks at the key.
    match parse(&a[3]) {
        None => return Err(Reply::err("value is not a valid float")),
        Some(Parsed::Infinite) => return Err(Reply::err("value is NaN or Infinity")),
        Some(Parsed::Finite(_)) => {}
    }
    let current = match hash(txn, &a[1])? {
        Some((version, _)) => get_field(txn, &a[1], version, &a[2])?,
        None => None,
    };
    let text = super::longdouble::incr(current.as_deref(), &a[3]).map_err(|e| match e {
        IncrError::Value => Reply::err("hash value is not a float"),
        IncrError::Increment => Reply::err("value is not a valid float"),
        IncrError::InfiniteIncrement => Reply::err("value is NaN or Infinity"),
        IncrError::Overflow => Reply::err("increment would produce NaN or Infinity"),
    })?;
    set_fields(txn, &a[1], &[(&a[2], text.as_bytes())])?;
    txn.notify(class::HASH, "hincrbyfloat", &a[1]);
    Ok(Reply::bulk(text))
}

/// `HRANDFIELD key [count [WITHVALUES]]`: with values, pairs (a flat array in RESP2, an array
/// of `[field, value]` arrays in RESP3, as Redis answers).
pub fn hrandfield(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let key = &a[1];
    let count = a.get(2).map(|c| signed_count(c)).transpose()?;
    if a.len() > 4 || (a.len() == 4 && !a[3].eq_ignore_ascii_case(b"WITHVALUES")) {
        return Err(Reply::err("syntax error"));
    }
    let with_values = a.len() == 4;
    if let Some(c) = count
        && with_values
        && !(-i64::MAX / 2..=i64::MAX / 2).contains(&c)
    {
        return Err(Reply::err("value is out of range"));
    }
    let Some((version, len)) = hash(txn, key)? else {
        return Ok(match count {
            Some(_) => Reply::Array(Vec::new()),
            None => Reply::Nil,
        });
    };
    let prefix = field_prefix(key, version);
    let Some(count) = count else {
        return Ok(match random::one(txn, &prefix, len)? {
            Some((k, v)) => Reply::bulk(decode_field(key, &prefix, &k, &v)?.0.into_owned()),
            None => Reply::Nil,
        });
    };
    let picked = if count == 0 {
        Vec::new()
    } else if count < 0 {
        let k = count.unsigned_abs();
        if k > MAX_REPEATED {
            return Err(too_many());
        }
        random::repeated(txn, &prefix, len, k)?
    } else if count as u64 >= len {
        txn.scan_prefix(&prefix, None, usize::MAX)?
    } else {
        random::distinct(txn, &prefix, len, count as u64)?
    };
    let mut fields = Vec::with_capacity(picked.len());
    let mut pairs = Vec::with_capacity(if with_values { picked.len() } else { 0 });
    for (k, v) in &picked {
        let (f, value) = decode_field(key, &prefix, k, v)?;
        let f = Reply::bulk(f.into_owned());
        if with_values {
            pairs.push((f, Reply::bulk(value.to_vec())));
        } else {
            fields.push(f);
        }
    }
    Ok(if with_values {
        Reply::Pairs(pairs)
    } else {
        Reply::Array(fields)
    })
}

/// `HSCAN key cursor [MATCH pattern] [COUNT count] [NOVALUES]`
pub fn hscan(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut rest = vec![a[2].clone()];
    let mut novalues = false;
    let mut i = 3;
    while i < a.len() {
        if a[i].eq_ignore_ascii_case(b"NOVALUES") {
            novalues = true;
            i += 1;
        } else {
            rest.extend(a[i..(i + 2).min(a.len())].iter().cloned());
            i += 2;
        }
    }
    let opts = parse_scan_args(&rest, false)?;
    let Some((version, _)) = hash(txn, &a[1])? else {
        return Ok(scan::done());
    };
    let prefix = field_prefix(&a[1], version);
    scan::page(txn, &prefix, &opts, |k, v, out| {
        let (f, value) = decode_field(&a[1], &prefix, k, v)?;
        if scan::matches(opts.pattern.as_deref(), &f) {
            out.push(Reply::bulk(f.into_owned()));
            if !novalues {
                out.push(Reply::bulk(value.to_vec()));
            }
        }
        Ok(())
    })
}
