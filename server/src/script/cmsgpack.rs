//! The `cmsgpack` library Redis embeds (lua-cmsgpack's API): `pack`, `unpack`, `unpack_one`
//! and `unpack_limit`, encoding as lua-cmsgpack does.
//!
//! A number with an integer value is packed in the smallest integer format, any other as a
//! float 32 when that is exact, else a float 64. A table whose keys are 1..n with no hole is
//! an array (an empty table too), any other a map. Tables nested deeper than 16 levels, and
//! values of other types (functions, userdata), pack as nil. Unpacking reads every format
//! but extensions; binary and string formats become Lua strings.

use mlua::{Lua, MultiValue, Result, Table, Value, Variadic};

use super::located::located;

/// Tables nested deeper than this pack as nil (lua-cmsgpack's limit).
const MAX_NESTING: u32 = 16;

fn err<T>(msg: &str) -> Result<T> {
    Err(mlua::Error::runtime(msg.to_string()))
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

fn pack_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        let u = n as u64;
        if u <= 0x7f {
            out.push(u as u8);
        } else if u <= 0xff {
            out.extend_from_slice(&[0xcc, u as u8]);
        } else if u <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(u as u16).to_be_bytes());
        } else if u <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(u as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&u.to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn pack_number(out: &mut Vec<u8>, n: f64) {
    // An integer value that an int64 holds exactly packs as an integer.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if n.fract() == 0.0 && (-TWO_63..TWO_63).contains(&n) {
        pack_int(out, n as i64);
        return;
    }
    let f = n as f32;
    if f64::from(f) == n {
        out.push(0xca);
        out.extend_from_slice(&f.to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn pack_len(out: &mut Vec<u8>, len: usize, fix: u8, fix_max: usize, w16: u8, w32: u8) {
    if len <= fix_max {
        out.push(fix | len as u8);
    } else if len <= 0xffff {
        out.push(w16);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(w32);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

fn pack_bytes(out: &mut Vec<u8>, b: &[u8]) {
    let len = b.len();
    if len < 32 {
        out.push(0xa0 | len as u8);
    } else if len <= 0xff {
        out.extend_from_slice(&[0xd9, len as u8]);
    } else if len <= 0xffff {
        out.push(0xda);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(0xdb);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
    out.extend_from_slice(b);
}

/// `Some(n)` when the keys of `t` are exactly 1..n.
fn array_len(t: &Table) -> Result<Option<usize>> {
    let mut count = 0usize;
    let mut max = 0f64;
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        match as_number(&k) {
            Some(n) if n > 0.0 && n.fract() == 0.0 => {
                count += 1;
                max = max.max(n);
            }
            _ => return Ok(None),
        }
    }
    Ok((max == count as f64).then_some(count))
}

fn pack_value(out: &mut Vec<u8>, v: &Value, level: u32) -> Result<()> {
    match v {
        Value::Nil => out.push(0xc0),
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(i) => pack_int(out, *i),
        Value::Number(n) => pack_number(out, *n),
        Value::String(s) => pack_bytes(out, &s.as_bytes()),
        Value::Table(t) if level < MAX_NESTING => match array_len(t)? {
            Some(n) => {
                pack_len(out, n, 0x90, 15, 0xdc, 0xdd);
                for i in 1..=n {
                    let item: Value = t.raw_get(i)?;
                    pack_value(out, &item, level + 1)?;
                }
            }
            None => {
                let pairs: Vec<(Value, Value)> =
                    t.pairs::<Value, Value>().collect::<Result<_>>()?;
                pack_len(out, pairs.len(), 0x80, 15, 0xde, 0xdf);
                for (k, item) in &pairs {
                    pack_value(out, k, level + 1)?;
                    pack_value(out, item, level + 1)?;
                }
            }
        },
        _ => out.push(0xc0),
    }
    Ok(())
}

/// A MessagePack buffer being read.
struct Reader<'a> {
    lua: &'a Lua,
    data: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        match self.data.get(self.pos..self.pos.saturating_add(n)) {
            Some(b) => {
                self.pos += n;
                Ok(b)
            }
            None => err("Missing bytes in input."),
        }
    }

    fn uint(&mut self, n: usize) -> Result<u64> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | u64::from(b)))
    }

    fn string(&mut self, len: usize) -> Result<Value> {
        let lua = self.lua;
        let b = self.take(len)?;
        Ok(Value::String(lua.create_string(b)?))
    }

    fn array(&mut self, len: usize) -> Result<Value> {
        let t = self.lua.create_table()?;
        for i in 1..=len {
            let v = self.value()?;
            t.raw_set(i, v)?;
        }
        Ok(Value::Table(t))
    }

    fn map(&mut self, len: usize) -> Result<Value> {
        let t = self.lua.create_table()?;
        for _ in 0..len {
            let k = self.value()?;
            let v = self.value()?;
            // A nil key cannot index a Lua table: lua-cmsgpack drops the pair as Lua would.
            if k != Value::Nil {
                t.raw_set(k, v)?;
            }
        }
        Ok(Value::Table(t))
    }

    fn value(&mut self) -> Result<Value> {
        let b = self.take(1)?[0];
        Ok(match b {
            0x00..=0x7f => Value::Number(f64::from(b)),
            0x80..=0x8f => return self.map(usize::from(b & 0x0f)),
            0x90..=0x9f => return self.array(usize::from(b & 0x0f)),
            0xa0..=0xbf => return self.string(usize::from(b & 0x1f)),
            0xc0 => Value::Nil,
            0xc2 => Value::Boolean(false),
            0xc3 => Value::Boolean(true),
            0xc4 | 0xd9 => {
                let n = self.uint(1)? as usize;
                return self.string(n);
            }
            0xc5 | 0xda => {
                let n = self.uint(2)? as usize;
                return self.string(n);
            }
            0xc6 | 0xdb => {
                let n = self.uint(4)? as usize;
                return self.string(n);
            }
            0xca => {
                let bits = self.uint(4)? as u32;
                Value::Number(f64::from(f32::from_bits(bits)))
            }
            0xcb => Value::Number(f64::from_bits(self.uint(8)?)),
            0xcc => Value::Number(self.uint(1)? as f64),
            0xcd => Value::Number(self.uint(2)? as f64),
            0xce => Value::Number(self.uint(4)? as f64),
            0xcf => Value::Number(self.uint(8)? as f64),
            0xd0 => Value::Number(f64::from(self.uint(1)? as u8 as i8)),
            0xd1 => Value::Number(f64::from(self.uint(2)? as u16 as i16)),
            0xd2 => Value::Number(f64::from(self.uint(4)? as u32 as i32)),
            0xd3 => Value::Number(self.uint(8)? as i64 as f64),
            0xdc => {
                let n = self.uint(2)? as usize;
                return self.array(n);
            }
            0xdd => {
                let n = self.uint(4)? as usize;
                return self.array(n);
            }
            0xde => {
                let n = self.uint(2)? as usize;
                return self.map(n);
            }
            0xdf => {
                let n = self.uint(4)? as usize;
                return self.map(n);
            }
            0xe0..=0xff => Value::Number(f64::from(b as i8)),
            _ => return err("Bad data format in input."),
        })
    }
}

/// Decodes up to `limit` values (0: all) from `offset`; returns the offset after them (or -1
/// at the end of the data) and the values.
fn unpack(lua: &Lua, data: &[u8], limit: usize, offset: usize) -> Result<(i64, Vec<Value>)> {
    if offset > data.len() {
        return err("Start offset greater than input length.");
    }
    let mut r = Reader {
        lua,
        data,
        pos: offset,
    };
    let mut out = Vec::new();
    while r.pos < data.len() && (limit == 0 || out.len() < limit) {
        out.push(r.value()?);
    }
    let next = if r.pos >= data.len() {
        -1
    } else {
        r.pos as i64
    };
    Ok((next, out))
}

fn offset_arg(v: Option<&Value>, what: &str) -> Result<usize> {
    match v.and_then(as_number) {
        None => Ok(0),
        Some(n) if n >= 0.0 => Ok(n as usize),
        Some(_) => err(what),
    }
}

/// Adds the `cmsgpack` table to `globals`.
///
/// # Errors
/// Lua's, creating the functions.
pub fn install(lua: &Lua, globals: &Table) -> Result<()> {
    let t = lua.create_table()?;
    t.set(
        "pack",
        lua.create_function(|lua, args: Variadic<Value>| {
            if args.is_empty() {
                return Err(located(
                    lua,
                    mlua::Error::runtime(
                        "bad argument #0 to 'pack' (MessagePack pack needs input.)",
                    ),
                ));
            }
            let mut out = Vec::new();
            for a in args.iter() {
                pack_value(&mut out, a, 0)?;
            }
            lua.create_string(out)
        })?,
    )?;
    t.set(
        "unpack",
        lua.create_function(|lua, data: mlua::LuaString| {
            let (_, values) = unpack(lua, &data.as_bytes(), 0, 0).map_err(|e| located(lua, e))?;
            Ok(MultiValue::from_vec(values))
        })?,
    )?;
    t.set(
        "unpack_one",
        lua.create_function(|lua, args: Variadic<Value>| {
            let Some(Value::String(data)) = args.first() else {
                return err("bad argument #1 to 'unpack_one' (string expected)");
            };
            let (next, values) = offset_arg(args.get(1), "Offset must be positive.")
                .and_then(|offset| unpack(lua, &data.as_bytes(), 1, offset))
                .map_err(|e| located(lua, e))?;
            let mut out = vec![Value::Number(next as f64)];
            out.extend(values);
            Ok(MultiValue::from_vec(out))
        })?,
    )?;
    t.set(
        "unpack_limit",
        lua.create_function(|lua, args: Variadic<Value>| {
            let Some(Value::String(data)) = args.first() else {
                return err("bad argument #1 to 'unpack_limit' (string expected)");
            };
            let (next, values) = offset_arg(args.get(1), "Limit must be positive.")
                .and_then(|limit| {
                    let offset = offset_arg(args.get(2), "Offset must be positive.")?;
                    unpack(lua, &data.as_bytes(), limit, offset)
                })
                .map_err(|e| located(lua, e))?;
            let mut out = vec![Value::Number(next as f64)];
            out.extend(values);
            Ok(MultiValue::from_vec(out))
        })?,
    )?;
    globals.raw_set("cmsgpack", t)?;
    Ok(())
}
