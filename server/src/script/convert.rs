//! Conversions between Redis replies and Lua values, as Redis 7 documents them.
//!
//! Reply to Lua (what `redis.call` returns): integer -> number, bulk -> string, nil bulk or
//! nil array -> `false`, array -> table, status -> `{ok=...}`, error -> `{err=...}`; with
//! `redis.setresp(3)`: null -> `nil`, map -> `{map={...}}`, set -> `{set={...}}`, double ->
//! `{double=n}`, boolean -> boolean.
//!
//! Lua to reply (what a script returns): number -> integer (truncated), string -> bulk,
//! `true` -> 1, `false` and `nil` -> nil, table -> array up to its first `nil`, unless it has
//! a string `err` (error), `ok` (status), number `double`, or table `map` / `set` field.

use bytes::Bytes;
use mlua::{Lua, Result, Table, Value};

use crate::resp::{Reply, format_double};

/// Deepest nesting of tables a script may return (a table that holds itself would recurse
/// forever).
const MAX_DEPTH: usize = 512;

/// Formats a Lua number as C's `%.17g`, as Redis does for `redis.call` arguments.
pub fn fmt_g17(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // %e with 16 digits after the point gives the exponent %g decides with.
    let e = format!("{x:.16e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..17).contains(&exp) {
        let prec = (16 - exp) as usize;
        trim(&format!("{x:.prec$}"))
    } else {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mant), exp.unsigned_abs())
    }
}

/// Truncates a Lua number to an integer as Redis's `(long long)` cast does on x86-64: values
/// out of range (and NaN) become `i64::MIN`.
pub fn truncate(n: f64) -> i64 {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    if n.is_nan() || !(-LIMIT..LIMIT).contains(&n) {
        i64::MIN
    } else {
        n as i64
    }
}

/// An `{err = text}` table.
pub fn error_table(lua: &Lua, text: &str) -> Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(text)?)?;
    Ok(t)
}

/// The Lua value of a command's reply (`resp3`: the script asked for RESP3 with
/// `redis.setresp(3)`); error replies give `{err=...}` and `true`.
///
/// # Errors
/// Lua's (out of memory).
pub fn reply_to_lua(lua: &Lua, reply: Reply, resp3: bool) -> Result<(Value, bool)> {
    let v = match reply {
        Reply::Error(e) => return Ok((Value::Table(error_table(lua, &e)?), true)),
        Reply::Ok => status(lua, "OK")?,
        Reply::Status(s) => status(lua, &s)?,
        Reply::Int(i) => Value::Number(i as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(&b)?),
        Reply::Nil | Reply::NilArray => {
            if resp3 {
                Value::Nil
            } else {
                Value::Boolean(false)
            }
        }
        Reply::Bool(b) => {
            if resp3 {
                Value::Boolean(b)
            } else if b {
                Value::Number(1.0)
            } else {
                Value::Boolean(false)
            }
        }
        Reply::Array(items) | Reply::Push(items) | Reply::Seq(items) => array(lua, items, resp3)?,
        Reply::Set(items) if resp3 => {
            let set = lua.create_table()?;
            for r in items {
                let (k, _) = reply_to_lua(lua, r, resp3)?;
                set.raw_set(k, true)?;
            }
            wrap(lua, "set", Value::Table(set))?
        }
        Reply::Set(items) => array(lua, items, resp3)?,
        Reply::Map(pairs) if resp3 => {
            let map = lua.create_table()?;
            for (k, v) in pairs {
                let (k, _) = reply_to_lua(lua, k, resp3)?;
                let (v, _) = reply_to_lua(lua, v, resp3)?;
                map.raw_set(k, v)?;
            }
            wrap(lua, "map", Value::Table(map))?
        }
        Reply::Map(pairs) => array(
            lua,
            pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
            resp3,
        )?,
        Reply::Pairs(pairs) => {
            if resp3 {
                let items = pairs
                    .into_iter()
                    .map(|(k, v)| Reply::Array(vec![k, v]))
                    .collect();
                array(lua, items, resp3)?
            } else {
                array(
                    lua,
                    pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
                    resp3,
                )?
            }
        }
        Reply::Double(d) => {
            if resp3 {
                wrap(lua, "double", Value::Number(d))?
            } else {
                Value::String(lua.create_string(format_double(d))?)
            }
        }
        Reply::Verbatim(s) => Value::String(lua.create_string(&s)?),
        Reply::NoReply => Value::Boolean(false),
        Reply::ByProto { resp2, resp3: r3 } => {
            return reply_to_lua(lua, if resp3 { *r3 } else { *resp2 }, resp3);
        }
        Reply::Stream(s) => {
            // A long range (LRANGE, ZRANGE by rank): read it whole, as the script holds it.
            let mut out = Vec::new();
            let mut done = false;
            while !done {
                done = s
                    .fill(2, &mut out, usize::MAX)
                    .map_err(mlua::Error::runtime)?;
            }
            let mut at = 0;
            let r = parse_resp2(&out, &mut at)
                .ok_or_else(|| mlua::Error::runtime("unreadable streamed reply"))?;
            return reply_to_lua(lua, r, resp3);
        }
    };
    Ok((v, false))
}

fn status(lua: &Lua, s: &str) -> Result<Value> {
    wrap(lua, "ok", Value::String(lua.create_string(s)?))
}

fn wrap(lua: &Lua, field: &str, v: Value) -> Result<Value> {
    let t = lua.create_table()?;
    t.raw_set(field, v)?;
    Ok(Value::Table(t))
}

fn array(lua: &Lua, items: Vec<Reply>, resp3: bool) -> Result<Value> {
    let t = lua.create_table_with_capacity(items.len(), 0)?;
    for (i, r) in items.into_iter().enumerate() {
        let (v, _) = reply_to_lua(lua, r, resp3)?;
        t.raw_set(i + 1, v)?;
    }
    Ok(Value::Table(t))
}

/// Parses one RESP2 reply at `at` (what a streamed reply encodes: arrays, bulks, integers).
fn parse_resp2(b: &[u8], at: &mut usize) -> Option<Reply> {
    let end = *at + b.get(*at..)?.windows(2).position(|w| w == b"\r\n")?;
    let kind = b[*at];
    let line = std::str::from_utf8(&b[*at + 1..end]).ok()?;
    *at = end + 2;
    match kind {
        b'*' => {
            let n: i64 = line.parse().ok()?;
            if n < 0 {
                return Some(Reply::NilArray);
            }
            let mut items = Vec::with_capacity((n as usize).min(1 << 16));
            for _ in 0..n {
                items.push(parse_resp2(b, at)?);
            }
            Some(Reply::Array(items))
        }
        b'$' => {
            let n: i64 = line.parse().ok()?;
            if n < 0 {
                return Some(Reply::Nil);
            }
            let n = n as usize;
            let v = Bytes::copy_from_slice(b.get(*at..*at + n)?);
            *at += n + 2;
            Some(Reply::Bulk(v))
        }
        b':' => Some(Reply::Int(line.parse().ok()?)),
        b'+' => Some(Reply::Status(line.to_string())),
        b'-' => Some(Reply::Error(line.to_string())),
        _ => None,
    }
}

/// The reply a script's return value gives. Booleans follow the protocol the script chose
/// with `redis.setresp` (`resp3`), not the client's, as in Redis: without `setresp(3)`
/// `true` is `1` and `false` a null, in RESP3 too.
pub fn lua_to_reply(v: &Value, resp3: bool) -> Reply {
    to_reply(v, 0, resp3)
}

fn to_reply(v: &Value, depth: usize, resp3: bool) -> Reply {
    if depth > MAX_DEPTH {
        return Reply::err("reached lua stack limit");
    }
    match v {
        Value::String(s) => Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes())),
        Value::Boolean(b) if resp3 => Reply::Bool(*b),
        Value::Boolean(true) => Reply::Int(1),
        Value::Boolean(false) => Reply::Nil,
        Value::Integer(i) => Reply::Int(truncate(*i as f64)),
        Value::Number(n) => Reply::Int(truncate(*n)),
        Value::Table(t) => table_reply(t, depth, resp3),
        _ => Reply::Nil,
    }
}

fn table_reply(t: &Table, depth: usize, resp3: bool) -> Reply {
    if let Ok(Value::String(e)) = t.raw_get::<Value>("err") {
        return Reply::Error(format_err(&e.to_string_lossy()));
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("ok") {
        return Reply::Status(s.to_string_lossy());
    }
    if let Ok(Value::Number(d)) = t.raw_get::<Value>("double") {
        return Reply::Double(d);
    }
    if let Ok(Value::Integer(d)) = t.raw_get::<Value>("double") {
        return Reply::Double(d as f64);
    }
    if let Ok(Value::String(s)) = t.raw_get::<Value>("big_number") {
        return Reply::Bulk(Bytes::copy_from_slice(&s.as_bytes()));
    }
    if let Ok(Value::Table(m)) = t.raw_get::<Value>("map") {
        let mut pairs = Vec::new();
        for (k, v) in m.pairs::<Value, Value>().flatten() {
            pairs.push((
                to_reply(&k, depth + 1, resp3),
                to_reply(&v, depth + 1, resp3),
            ));
        }
        return Reply::Map(pairs);
    }
    if let Ok(Value::Table(s)) = t.raw_get::<Value>("set") {
        let items = s
            .pairs::<Value, Value>()
            .flatten()
            .map(|(k, _)| to_reply(&k, depth + 1, resp3))
            .collect();
        return Reply::Set(items);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(to_reply(&v, depth + 1, resp3)),
        }
    }
    Reply::Array(items)
}

/// An `err` field as the reply line Redis sends (it adds `-` itself; the text is kept).
fn format_err(e: &str) -> String {
    e.trim_end_matches(['\r', '\n']).to_string()
}

/// What `redis.error_reply(text)` and an error inside a script make of `text`: `-CODE msg`
/// keeps its code, a text without `-` gets `ERR` (as Redis's `luaPushErrorBuff`).
pub fn error_text(text: &str) -> String {
    let (code, msg) = match text.strip_prefix('-') {
        Some(rest) => match rest.split_once(' ') {
            Some((code, msg)) => (code, msg),
            None => ("ERR", rest),
        },
        None => ("ERR", text),
    };
    format!("{code} {}", msg.trim_end_matches(['\r', '\n']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_format_as_percent_17g() {
        for (x, want) in [
            (1.5, "1.5"),
            (0.1, "0.10000000000000001"),
            (1e20, "1e+20"),
            (3.0, "3"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (12_345_678_901_234_567.0, "12345678901234568"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1.0000000000000001e-05"),
            (1_732_000_000_123.0, "1732000000123"),
            (-2.5e-300, "-2.5e-300"),
        ] {
            assert_eq!(fmt_g17(x), want, "{x:e}");
        }
    }

    #[test]
    fn truncation_matches_x86() {
        assert_eq!(truncate(3.99), 3);
        assert_eq!(truncate(-3.99), -3);
        assert_eq!(truncate(1e20), i64::MIN);
        assert_eq!(truncate(-1e300), i64::MIN);
        assert_eq!(truncate(f64::NAN), i64::MIN);
    }

    #[test]
    fn error_texts_get_a_code() {
        assert_eq!(error_text("My err"), "ERR My err");
        assert_eq!(error_text("-My err"), "My err");
        assert_eq!(error_text("-e"), "ERR e");
        assert_eq!(error_text("-WRONGTYPE x y\r\n"), "WRONGTYPE x y");
    }

    #[test]
    fn streamed_replies_parse_back() {
        let mut at = 0;
        let b = b"*3\r\n$1\r\na\r\n:5\r\n$-1\r\n";
        assert_eq!(
            parse_resp2(b, &mut at),
            Some(Reply::Array(vec![
                Reply::bulk("a"),
                Reply::Int(5),
                Reply::Nil
            ]))
        );
        assert_eq!(at, b.len());
    }
}
