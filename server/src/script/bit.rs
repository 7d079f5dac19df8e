//! The `bit` library Redis embeds (LuaBitOp's API): 32-bit operations on Lua numbers.
//!
//! Arguments are normalised as LuaBitOp does: the number is rounded to an integer (ties to
//! even) and wrapped to its low 32 bits; results are signed 32-bit integers.

use mlua::{Lua, Result, Table, Value, Variadic};

/// LuaBitOp's normalisation: `n + 2^52 + 2^51` puts the rounded integer in the low bits of the
/// mantissa, whose low 32 bits are the result.
pub fn tobit(n: f64) -> u32 {
    (n + 6_755_399_441_055_744.0).to_bits() as u32
}

fn arg(lua: &Lua, v: &Value, pos: usize, name: &str) -> Result<u32> {
    match lua.coerce_number(v.clone())? {
        Some(n) => Ok(tobit(n)),
        None => Err(mlua::Error::runtime(format!(
            "bad argument #{pos} to '{name}' (number expected, got {})",
            match v {
                Value::Nil => "no value",
                other => other.type_name(),
            }
        ))),
    }
}

fn out(b: u32) -> f64 {
    f64::from(b as i32)
}

/// `tohex(x [, n])`: `n` hex digits (8 by default, upper case when negative).
pub fn tohex(b: u32, n: i64) -> String {
    let upper = n < 0;
    let n = n.unsigned_abs().min(8) as usize;
    let s = if upper {
        format!("{b:08X}")
    } else {
        format!("{b:08x}")
    };
    s[8 - n..].to_string()
}

/// Adds the `bit` table to `globals`.
///
/// # Errors
/// Lua's, creating the functions.
pub fn install(lua: &Lua, globals: &Table) -> Result<()> {
    let bit = lua.create_table()?;
    let unary = |name: &'static str, f: fn(u32) -> u32| {
        lua.create_function(move |lua, v: Value| Ok(out(f(arg(lua, &v, 1, name)?))))
    };
    bit.set("tobit", unary("tobit", |b| b)?)?;
    bit.set("bnot", unary("bnot", |b| !b)?)?;
    bit.set("bswap", unary("bswap", u32::swap_bytes)?)?;
    let fold = |name: &'static str, f: fn(u32, u32) -> u32| {
        lua.create_function(move |lua, vs: Variadic<Value>| {
            let mut acc = arg(lua, vs.first().unwrap_or(&Value::Nil), 1, name)?;
            for (i, v) in vs.iter().enumerate().skip(1) {
                acc = f(acc, arg(lua, v, i + 1, name)?);
            }
            Ok(out(acc))
        })
    };
    bit.set("band", fold("band", |a, b| a & b)?)?;
    bit.set("bor", fold("bor", |a, b| a | b)?)?;
    bit.set("bxor", fold("bxor", |a, b| a ^ b)?)?;
    let shift = |name: &'static str, f: fn(u32, u32) -> u32| {
        lua.create_function(move |lua, (x, n): (Value, Value)| {
            let x = arg(lua, &x, 1, name)?;
            let n = arg(lua, &n, 2, name)? & 31;
            Ok(out(f(x, n)))
        })
    };
    bit.set("lshift", shift("lshift", |x, n| x << n)?)?;
    bit.set("rshift", shift("rshift", |x, n| x >> n)?)?;
    bit.set(
        "arshift",
        shift("arshift", |x, n| ((x as i32) >> n) as u32)?,
    )?;
    bit.set("rol", shift("rol", u32::rotate_left)?)?;
    bit.set("ror", shift("ror", u32::rotate_right)?)?;
    bit.set(
        "tohex",
        lua.create_function(|lua, (x, n): (Value, Value)| {
            let b = arg(lua, &x, 1, "tohex")?;
            let n = match n {
                Value::Nil => 8,
                v => i64::from(arg(lua, &v, 2, "tohex")? as i32),
            };
            Ok(tohex(b, n))
        })?,
    )?;
    globals.raw_set("bit", bit)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_matches_luabitop() {
        assert_eq!(tobit(1.0), 1);
        assert_eq!(tobit(-1.0) as i32, -1);
        assert_eq!(tobit(4_294_967_296.0), 0);
        assert_eq!(tobit(4_294_967_297.0), 1);
        assert_eq!(tobit(2.5), 2, "ties to even");
        assert_eq!(tobit(3.5), 4);
        assert_eq!(tobit(2_147_483_648.0) as i32, i32::MIN);
        assert_eq!(tohex(255, 8), "000000ff");
        assert_eq!(tohex(255, -4), "00FF");
        assert_eq!(tohex(0x1234_5678, 2), "78");
    }
}
