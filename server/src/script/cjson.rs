//! The `cjson` library Redis embeds (lua-cjson 2.1's API): `cjson.encode`, `cjson.decode`,
//! `cjson.null` and the settings functions, with lua-cjson's defaults and rules.
//!
//! Encoding: a table whose keys are all positive integers is an array (holes become `null`;
//! an array sparser than the sparse-array setting allows is an error), any other non-empty
//! table an object with string or number keys, an empty table `{}`. Numbers print as C's
//! `%.14g`; NaN and infinities are refused. Strings are escaped as lua-cjson escapes them
//! (`/` as `\/`, control bytes as `\u00XX`), other bytes pass through. Decoding: JSON's
//! `null` is `cjson.null`, numbers are Lua numbers, `\u` escapes become UTF-8.

use std::cell::Cell;
use std::rc::Rc;

use mlua::{Lua, Result, Table, Value, Variadic};

use super::located::located;

/// The settings the `encode_*`/`decode_*` functions read and change. They last for the rest
/// of the script that changes them: every run starts from lua-cjson's defaults
/// ([`Settings::reset`]), so a script decides the same way whichever Lua state runs it.
pub struct Settings {
    encode_max_depth: Cell<u32>,
    decode_max_depth: Cell<u32>,
    precision: Cell<u32>,
    sparse_convert: Cell<bool>,
    sparse_ratio: Cell<u32>,
    sparse_safe: Cell<u32>,
    encode_invalid: Cell<Invalid>,
    decode_invalid: Cell<bool>,
    keep_buffer: Cell<bool>,
}

/// What `encode` does with NaN and infinities.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Invalid {
    Refuse,
    Allow,
    Null,
}

impl Settings {
    /// Back to lua-cjson's defaults.
    pub fn reset(&self) {
        let d = Settings::default();
        self.encode_max_depth.set(d.encode_max_depth.get());
        self.decode_max_depth.set(d.decode_max_depth.get());
        self.precision.set(d.precision.get());
        self.sparse_convert.set(d.sparse_convert.get());
        self.sparse_ratio.set(d.sparse_ratio.get());
        self.sparse_safe.set(d.sparse_safe.get());
        self.encode_invalid.set(d.encode_invalid.get());
        self.decode_invalid.set(d.decode_invalid.get());
        self.keep_buffer.set(d.keep_buffer.get());
    }
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            encode_max_depth: Cell::new(1000),
            decode_max_depth: Cell::new(1000),
            precision: Cell::new(14),
            sparse_convert: Cell::new(false),
            sparse_ratio: Cell::new(2),
            sparse_safe: Cell::new(10),
            encode_invalid: Cell::new(Invalid::Refuse),
            decode_invalid: Cell::new(true),
            keep_buffer: Cell::new(true),
        }
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T> {
    Err(mlua::Error::runtime(msg.into()))
}

/// A number as C's `%.{precision}g` prints it.
pub fn format_g(n: f64, precision: u32) -> String {
    if n == 0.0 {
        return if n.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let p = precision.clamp(1, 17) as usize;
    let sci = format!("{:.*e}", p - 1, n);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if exp < -4 || exp >= p as i32 {
        let m = strip_zeros(mantissa);
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", exp.unsigned_abs())
    } else {
        let decimals = (p as i32 - 1 - exp).max(0) as usize;
        strip_zeros(&format!("{n:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            0..0x20 | 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

fn number_into(out: &mut Vec<u8>, n: f64, s: &Settings) -> Result<()> {
    if !n.is_finite() {
        match s.encode_invalid.get() {
            Invalid::Refuse => return err("Cannot serialise number: must not be NaN or Inf"),
            Invalid::Null => {
                out.extend_from_slice(b"null");
                return Ok(());
            }
            Invalid::Allow => {
                let t = if n.is_nan() {
                    "nan"
                } else if n > 0.0 {
                    "inf"
                } else {
                    "-inf"
                };
                out.extend_from_slice(t.as_bytes());
                return Ok(());
            }
        }
    }
    out.extend_from_slice(format_g(n, s.precision.get()).as_bytes());
    Ok(())
}

fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(i) => Some(*i as f64),
        Value::Number(n) => Some(*n),
        _ => None,
    }
}

/// The array length of `t` as lua-cjson decides it: `Some(max)` when every key is a positive
/// integer (and the array is not too sparse), `None` for an object.
fn array_len(t: &Table, s: &Settings) -> Result<Option<usize>> {
    let mut max = 0f64;
    let mut items = 0usize;
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        match as_number(&k) {
            Some(n) if n >= 1.0 && n.fract() == 0.0 => {
                max = max.max(n);
                items += 1;
            }
            _ => return Ok(None),
        }
    }
    let ratio = f64::from(s.sparse_ratio.get());
    if ratio > 0.0 && max > items as f64 * ratio && max > f64::from(s.sparse_safe.get()) {
        if !s.sparse_convert.get() {
            return err("Cannot serialise table: excessively sparse array");
        }
        return Ok(None);
    }
    Ok(Some(max as usize))
}

fn encode_into(out: &mut Vec<u8>, v: &Value, depth: u32, s: &Settings) -> Result<()> {
    match v {
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(u) if u.0.is_null() => out.extend_from_slice(b"null"),
        Value::Boolean(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Integer(_) | Value::Number(_) => {
            number_into(out, as_number(v).unwrap_or_default(), s)?;
        }
        Value::String(st) => escape_into(out, &st.as_bytes()),
        Value::Table(t) => {
            let depth = depth + 1;
            if depth > s.encode_max_depth.get() {
                return err(format!("Cannot serialise, excessive nesting ({depth})"));
            }
            match array_len(t, s)? {
                Some(len) if len > 0 => {
                    out.push(b'[');
                    for i in 1..=len {
                        if i > 1 {
                            out.push(b',');
                        }
                        let item: Value = t.raw_get(i)?;
                        encode_into(out, &item, depth, s)?;
                    }
                    out.push(b']');
                }
                _ => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.pairs::<Value, Value>() {
                        let (k, item) = pair?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match &k {
                            Value::String(ks) => escape_into(out, &ks.as_bytes()),
                            Value::Integer(_) | Value::Number(_) => {
                                let mut key = Vec::new();
                                number_into(&mut key, as_number(&k).unwrap_or_default(), s)?;
                                escape_into(out, &key);
                            }
                            other => {
                                return err(format!(
                                    "Cannot serialise {}: table key must be a number or string",
                                    other.type_name()
                                ));
                            }
                        }
                        out.push(b':');
                        encode_into(out, &item, depth, s)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => {
            return err(format!(
                "Cannot serialise {}: type not supported",
                other.type_name()
            ));
        }
    }
    Ok(())
}

/// A JSON text being decoded.
struct Decoder<'a> {
    lua: &'a Lua,
    text: &'a [u8],
    pos: usize,
    settings: &'a Settings,
}

impl Decoder<'_> {
    fn skip_space(&mut self) {
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            self.pos += 1;
        }
    }

    /// lua-cjson's error text: what was expected, what was found, at which character (from 1).
    fn fail<T>(&self, expected: &str) -> Result<T> {
        let found = match self.text.get(self.pos) {
            None => "T_END",
            Some(b'{') => "T_OBJ_BEGIN",
            Some(b'}') => "T_OBJ_END",
            Some(b'[') => "T_ARR_BEGIN",
            Some(b']') => "T_ARR_END",
            Some(b',') => "T_COMMA",
            Some(b':') => "T_COLON",
            Some(b'"') => "T_STRING",
            _ => "invalid token",
        };
        err(format!(
            "Expected {expected} but found {found} at character {}",
            self.pos + 1
        ))
    }

    fn value(&mut self, depth: u32) -> Result<Value> {
        self.skip_space();
        match self.text.get(self.pos) {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.lua.create_string(self.string()?)?)),
            Some(b't') if self.text[self.pos..].starts_with(b"true") => {
                self.pos += 4;
                Ok(Value::Boolean(true))
            }
            Some(b'f') if self.text[self.pos..].starts_with(b"false") => {
                self.pos += 5;
                Ok(Value::Boolean(false))
            }
            Some(b'n') if self.text[self.pos..].starts_with(b"null") => {
                self.pos += 4;
                Ok(Value::NULL)
            }
            Some(b'-' | b'0'..=b'9' | b'i' | b'I' | b'n' | b'N') => self.number(),
            _ => self.fail("value"),
        }
    }

    fn nested(&self, depth: u32) -> Result<()> {
        if depth > self.settings.decode_max_depth.get() {
            return err(format!(
                "Found too many nested data structures ({depth}) at character {}",
                self.pos + 1
            ));
        }
        Ok(())
    }

    fn object(&mut self, depth: u32) -> Result<Value> {
        self.nested(depth)?;
        self.pos += 1;
        let t = self.lua.create_table()?;
        self.skip_space();
        if self.text.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Value::Table(t));
        }
        loop {
            self.skip_space();
            if self.text.get(self.pos) != Some(&b'"') {
                return self.fail("object key string");
            }
            let key = self.string()?;
            self.skip_space();
            if self.text.get(self.pos) != Some(&b':') {
                return self.fail("colon");
            }
            self.pos += 1;
            let v = self.value(depth)?;
            t.raw_set(self.lua.create_string(key)?, v)?;
            self.skip_space();
            match self.text.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Value::Table(t));
                }
                _ => return self.fail("comma or object end"),
            }
        }
    }

    fn array(&mut self, depth: u32) -> Result<Value> {
        self.nested(depth)?;
        self.pos += 1;
        let t = self.lua.create_table()?;
        self.skip_space();
        if self.text.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Value::Table(t));
        }
        let mut i = 1;
        loop {
            let v = self.value(depth)?;
            t.raw_set(i, v)?;
            i += 1;
            self.skip_space();
            match self.text.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Value::Table(t));
                }
                _ => return self.fail("comma or array end"),
            }
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let h = self.text.get(self.pos..self.pos + 4)?;
        let v = u32::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?;
        self.pos += 4;
        Some(v)
    }

    fn string(&mut self) -> Result<Vec<u8>> {
        let start = self.pos;
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let Some(&b) = self.text.get(self.pos) else {
                self.pos = start;
                return self.fail("string end");
            };
            self.pos += 1;
            match b {
                b'"' => return Ok(out),
                b'\\' => {
                    let Some(&e) = self.text.get(self.pos) else {
                        self.pos = start;
                        return self.fail("string end");
                    };
                    self.pos += 1;
                    match e {
                        b'"' | b'\\' | b'/' => out.push(e),
                        b'b' => out.push(0x08),
                        b'f' => out.push(0x0c),
                        b'n' => out.push(b'\n'),
                        b'r' => out.push(b'\r'),
                        b't' => out.push(b'\t'),
                        b'u' => {
                            let Some(c) = self.unicode_escape() else {
                                return err(format!(
                                    "Expected value but found invalid unicode escape code at character {}",
                                    start + 1
                                ));
                            };
                            let mut buf = [0u8; 4];
                            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                        }
                        _ => {
                            return err(format!(
                                "Expected value but found invalid escape code at character {}",
                                start + 1
                            ));
                        }
                    }
                }
                _ => out.push(b),
            }
        }
    }

    /// A `\uXXXX` escape (the `\u` read), with a surrogate pair's second half.
    fn unicode_escape(&mut self) -> Option<char> {
        let hi = self.hex4()?;
        if (0xd800..0xdc00).contains(&hi) {
            if self.text.get(self.pos..self.pos + 2) != Some(b"\\u") {
                return None;
            }
            self.pos += 2;
            let lo = self.hex4()?;
            if !(0xdc00..0xe000).contains(&lo) {
                return None;
            }
            return char::from_u32(0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00));
        }
        char::from_u32(hi)
    }

    fn number(&mut self) -> Result<Value> {
        let start = self.pos;
        while self
            .text
            .get(self.pos)
            .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.'))
        {
            self.pos += 1;
        }
        let token = std::str::from_utf8(&self.text[start..self.pos]).unwrap_or("");
        let lower = token.to_ascii_lowercase();
        let special = matches!(lower.trim_start_matches('-'), "inf" | "infinity" | "nan");
        let n = if special {
            if !self.settings.decode_invalid.get() {
                None
            } else {
                lower.parse::<f64>().ok()
            }
        } else {
            token.parse::<f64>().ok()
        };
        match n {
            Some(n) => Ok(Value::Number(n)),
            None => {
                self.pos = start;
                self.fail("value")
            }
        }
    }
}

fn bool_setting(v: &Value, name: &str) -> Result<Option<bool>> {
    match v {
        Value::Nil => Ok(None),
        Value::Boolean(b) => Ok(Some(*b)),
        Value::String(s) if &*s.as_bytes() == b"on" => Ok(Some(true)),
        Value::String(s) if &*s.as_bytes() == b"off" => Ok(Some(false)),
        _ => err(format!(
            "bad argument #1 to '{name}' (invalid option '{}')",
            v.to_string().unwrap_or_default()
        )),
    }
}

fn int_setting(v: &Value, name: &str, pos: usize, lo: u32, hi: u32) -> Result<Option<u32>> {
    match v {
        Value::Nil => Ok(None),
        _ => match as_number(v) {
            Some(n) if n >= f64::from(lo) && n <= f64::from(hi) => Ok(Some(n as u32)),
            _ => err(format!(
                "bad argument #{pos} to '{name}' (expected integer between {lo} and {hi})"
            )),
        },
    }
}

/// Adds the `cjson` table to `globals`; returns its settings (reset before each run).
///
/// # Errors
/// Lua's, creating the functions.
pub fn install(lua: &Lua, globals: &Table) -> Result<Rc<Settings>> {
    let settings = Rc::new(Settings::default());
    let cjson = lua.create_table()?;
    let s = Rc::clone(&settings);
    cjson.set(
        "encode",
        lua.create_function(move |lua, v: Variadic<Value>| {
            if v.len() != 1 {
                return Err(located(
                    lua,
                    mlua::Error::runtime("bad argument #1 to 'encode' (expected 1 argument)"),
                ));
            }
            let mut out = Vec::new();
            encode_into(&mut out, &v[0], 0, &s).map_err(|e| located(lua, e))?;
            lua.create_string(out)
        })?,
    )?;
    let s = Rc::clone(&settings);
    cjson.set(
        "decode",
        lua.create_function(move |lua, v: Variadic<Value>| {
            let text = match v.first() {
                Some(Value::String(t)) if v.len() == 1 => t.as_bytes().to_vec(),
                Some(Value::Integer(_) | Value::Number(_)) if v.len() == 1 => {
                    v[0].to_string()?.into_bytes()
                }
                _ => {
                    return Err(located(
                        lua,
                        mlua::Error::runtime("bad argument #1 to 'decode' (expected 1 argument)"),
                    ));
                }
            };
            let mut d = Decoder {
                lua,
                text: &text,
                pos: 0,
                settings: &s,
            };
            let decoded = d.value(0).and_then(|value| {
                d.skip_space();
                if d.pos == text.len() {
                    Ok(value)
                } else {
                    d.fail("the end")
                }
            });
            decoded.map_err(|e| located(lua, e))
        })?,
    )?;
    cjson.set("null", Value::NULL)?;
    let s = Rc::clone(&settings);
    cjson.set(
        "encode_max_depth",
        lua.create_function(move |_, v: Value| {
            if let Some(n) = int_setting(&v, "encode_max_depth", 1, 1, i32::MAX as u32)? {
                s.encode_max_depth.set(n);
            }
            Ok(s.encode_max_depth.get())
        })?,
    )?;
    let s = Rc::clone(&settings);
    cjson.set(
        "decode_max_depth",
        lua.create_function(move |_, v: Value| {
            if let Some(n) = int_setting(&v, "decode_max_depth", 1, 1, i32::MAX as u32)? {
                s.decode_max_depth.set(n);
            }
            Ok(s.decode_max_depth.get())
        })?,
    )?;
    let s = Rc::clone(&settings);
    cjson.set(
        "encode_number_precision",
        lua.create_function(move |_, v: Value| {
            if let Some(n) = int_setting(&v, "encode_number_precision", 1, 1, 14)? {
                s.precision.set(n);
            }
            Ok(s.precision.get())
        })?,
    )?;
    let s = Rc::clone(&settings);
    cjson.set(
        "encode_sparse_array",
        lua.create_function(move |_, (c, r, f): (Value, Value, Value)| {
            if let Some(b) = bool_setting(&c, "encode_sparse_array")? {
                s.sparse_convert.set(b);
            }
            if let Some(n) = int_setting(&r, "encode_sparse_array", 2, 0, i32::MAX as u32)? {
                s.sparse_ratio.set(n);
            }
            if let Some(n) = int_setting(&f, "encode_sparse_array", 3, 0, i32::MAX as u32)? {
                s.sparse_safe.set(n);
            }
            Ok((
                s.sparse_convert.get(),
                s.sparse_ratio.get(),
                s.sparse_safe.get(),
            ))
        })?,
    )?;
    let s = Rc::clone(&settings);
    cjson.set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, v: Value| {
            match &v {
                Value::String(t) if &*t.as_bytes() == b"null" => {
                    s.encode_invalid.set(Invalid::Null)
                }
                _ => {
                    if let Some(b) = bool_setting(&v, "encode_invalid_numbers")? {
                        s.encode_invalid
                            .set(if b { Invalid::Allow } else { Invalid::Refuse });
                    }
                }
            }
            Ok(match s.encode_invalid.get() {
                Invalid::Refuse => Value::Boolean(false),
                Invalid::Allow => Value::Boolean(true),
                Invalid::Null => Value::String(lua.create_string("null")?),
            })
        })?,
    )?;
    let s = Rc::clone(&settings);
    cjson.set(
        "decode_invalid_numbers",
        lua.create_function(move |_, v: Value| {
            if let Some(b) = bool_setting(&v, "decode_invalid_numbers")? {
                s.decode_invalid.set(b);
            }
            Ok(s.decode_invalid.get())
        })?,
    )?;
    // Whether lua-cjson keeps its encode buffer between calls: a memory setting with no
    // effect on results; here every call builds its own buffer, and the setting is kept
    // only to be read back.
    let s = Rc::clone(&settings);
    cjson.set(
        "encode_keep_buffer",
        lua.create_function(move |_, v: Value| {
            if let Some(b) = bool_setting(&v, "encode_keep_buffer")? {
                s.keep_buffer.set(b);
            }
            Ok(s.keep_buffer.get())
        })?,
    )?;
    globals.raw_set("cjson", cjson)?;
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::format_g;

    #[test]
    fn numbers_print_as_percent_14g() {
        for (n, want) in [
            (1.0, "1"),
            (-3.0, "-3"),
            (0.5, "0.5"),
            (1.0 / 3.0, "0.33333333333333"),
            (123_456_789_012_345.0, "1.2345678901234e+14"),
            (12_345_678_901_234.0, "12345678901234"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (1e100, "1e+100"),
            (-0.0, "-0"),
            (100.0, "100"),
        ] {
            assert_eq!(format_g(n, 14), want, "{n}");
        }
    }
}
