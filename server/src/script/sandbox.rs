//! The globals a script sees: Lua's base, table, string and math libraries and `bit`, as
//! Redis exposes them, and nothing that reaches the file system or the process (no `io`,
//! `os`, `package`, `debug`, `dofile`, `loadfile`, `require`; `loadstring` and `load` accept
//! source text only, never precompiled bytecode). `math.random` draws from the command's
//! randomness, so a replica re-running the script draws the same numbers.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mlua::chunk::ChunkMode;
use mlua::{Function, Lua, LuaString, MultiValue, Result, Table, Value, Variadic};

use super::convert::{error_table, error_text};
use crate::log::Level;

/// Globals Lua's libraries define that scripts do not get (Redis 7's deny list, and what
/// would escape the sandbox or outlive the kill switch).
const REMOVED: &[&str] = &[
    "dofile",
    "loadfile",
    "print",
    "require",
    "module",
    "package",
    "setfenv",
    "getfenv",
    "newproxy",
    "coroutine",
    "io",
    "os",
    "debug",
];

/// Wrappers written in Lua (loaded as the `=redis_api` chunk, which error positions skip):
/// `pcall` hands back the text of a `{err=...}` error (or of an error `redis.call` raised) as
/// Redis 7 does, neither `pcall` nor `xpcall` can catch a kill, and the globals are guarded.
const PRELUDE: &str = r#"
local killed, errtext = ...
local rawpcall, rawxpcall, error, select, unpack, type =
    pcall, xpcall, error, select, unpack, type
local function pack(...) return {n = select('#', ...), ...} end
pcall = function(f, ...)
  local r = pack(rawpcall(f, ...))
  if not r[1] then
    if killed() then error(r[2], 0) end
    local e = r[2]
    if type(e) == 'table' and type(e.err) == 'string' then
      r[2] = e.err
    elseif type(e) == 'userdata' then
      r[2] = errtext(e)
    end
  end
  return unpack(r, 1, r.n)
end
xpcall = function(f, h)
  local r = pack(rawxpcall(f, h))
  if not r[1] and killed() then error(r[2], 0) end
  return unpack(r, 1, r.n)
end
setmetatable(_G, {
  __index = function(_, k)
    error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
  end,
  __newindex = function()
    error("Attempt to modify a readonly table", 2)
  end,
  __metatable = {},
})
"#;

/// Redis's `redis.LOG_*` levels.
const LOG_DEBUG: i64 = 0;
const LOG_WARNING: i64 = 3;
const LOG_NOTICE: i64 = 2;

/// Removes what scripts may not use, and adds `bit`, Redis's `math.random` and the `redis`
/// table (all but `call`, `pcall` and `setresp`, which [`bind_calls`] adds).
///
/// # Errors
/// Lua's (out of memory).
pub fn prepare(lua: &Lua, globals: &Table, seed: u64, kill: Arc<AtomicBool>) -> Result<()> {
    for name in REMOVED {
        globals.raw_set(*name, Value::Nil)?;
    }
    super::bit::install(lua, globals)?;
    random(lua, globals, seed)?;
    source_only_loaders(lua, globals)?;
    let redis = lua.create_table()?;
    redis.raw_set("REDIS_VERSION", crate::info::REDIS_VERSION)?;
    redis.raw_set("REDIS_VERSION_NUM", 0x0007_0200)?;
    for (name, v) in [
        ("LOG_DEBUG", LOG_DEBUG),
        ("LOG_VERBOSE", 1),
        ("LOG_NOTICE", LOG_NOTICE),
        ("LOG_WARNING", LOG_WARNING),
        ("REPL_NONE", 0),
        ("REPL_AOF", 1),
        ("REPL_SLAVE", 2),
        ("REPL_REPLICA", 2),
        ("REPL_ALL", 3),
    ] {
        redis.raw_set(name, v)?;
    }
    redis.raw_set(
        "sha1hex",
        lua.create_function(|lua, args: Variadic<Value>| {
            if args.len() != 1 {
                return Err(mlua::Error::runtime("wrong number of arguments"));
            }
            let s = lua.coerce_string(args[0].clone())?;
            let bytes = s.map(|s| s.as_bytes().to_vec()).unwrap_or_default();
            Ok(String::from_utf8_lossy(&super::cache::sha1_hex(&bytes)).into_owned())
        })?,
    )?;
    redis.raw_set(
        "error_reply",
        lua.create_function(|lua, args: Variadic<Value>| match args.first() {
            Some(Value::String(s)) if args.len() == 1 => {
                let s = s.to_string_lossy();
                let dashed = if s.starts_with('-') {
                    s
                } else {
                    format!("-{s}")
                };
                error_table(lua, &error_text(&dashed))
            }
            _ => error_table(lua, "ERR wrong number or type of arguments"),
        })?,
    )?;
    redis.raw_set(
        "status_reply",
        lua.create_function(|lua, args: Variadic<Value>| match args.first() {
            Some(Value::String(s)) if args.len() == 1 => {
                let t = lua.create_table()?;
                t.raw_set("ok", s.clone())?;
                Ok(t)
            }
            _ => error_table(lua, "ERR wrong number or type of arguments"),
        })?,
    )?;
    redis.raw_set("log", lua.create_function(log)?)?;
    redis.raw_set(
        "set_repl",
        lua.create_function(|_, args: Variadic<Value>| {
            if args.len() != 1 {
                return Err(mlua::Error::runtime(
                    "redis.set_repl() requires two arguments.",
                ));
            }
            match &args[0] {
                Value::Integer(f) if *f & !3 == 0 => Ok(()),
                _ => Err(mlua::Error::runtime(
                    "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.",
                )),
            }
        })?,
    )?;
    redis.raw_set("replicate_commands", lua.create_function(|_, ()| Ok(true))?)?;
    redis.raw_set("breakpoint", lua.create_function(|_, ()| Ok(false))?)?;
    redis.raw_set("debug", lua.create_function(|_, _: MultiValue| Ok(()))?)?;
    redis.raw_set(
        "acl_check_cmd",
        lua.create_function(|_, args: Variadic<Value>| {
            let known = match args.first() {
                Some(Value::String(s)) => crate::cmd::lookup(&s.as_bytes()).is_some(),
                _ => false,
            };
            if known {
                Ok(true)
            } else {
                Err(mlua::Error::runtime(
                    "Invalid command passed to redis.acl_check_cmd()",
                ))
            }
        })?,
    )?;
    globals.raw_set("redis", redis)?;
    let killed = lua.create_function(move |_, ()| Ok(kill.load(Ordering::Relaxed)))?;
    globals.raw_set("__bloomkv_killed", killed)?;
    Ok(())
}

/// Adds `redis.call`, `redis.pcall` and `redis.setresp` (bound to the running command), then
/// guards the globals.
///
/// # Errors
/// Lua's.
pub fn bind_calls(
    lua: &Lua,
    globals: &Table,
    call: Function,
    pcall: Function,
    setresp: Function,
) -> Result<()> {
    let redis: Table = globals.raw_get("redis")?;
    redis.raw_set("call", call)?;
    redis.raw_set("pcall", pcall)?;
    redis.raw_set("setresp", setresp)?;
    let killed: Function = globals.raw_get("__bloomkv_killed")?;
    globals.raw_set("__bloomkv_killed", Value::Nil)?;
    let errtext = lua.create_function(|_, e: Value| {
        Ok(match e {
            Value::Error(e) => super::run::err_text(&e),
            _ => "ERR unknown error".into(),
        })
    })?;
    lua.load(PRELUDE)
        .set_name(super::run::api_chunk())
        .set_mode(ChunkMode::Text)
        .call::<()>((killed, errtext))
}

/// `redis.log(level, message ...)`: notices and warnings go to the server log (the server
/// logs at Redis's default verbosity, `notice`).
fn log(_: &Lua, args: Variadic<Value>) -> Result<()> {
    if args.len() < 2 {
        return Err(mlua::Error::runtime(
            "redis.log() requires two arguments or more.",
        ));
    }
    let level = match &args[0] {
        Value::Integer(l) => *l,
        Value::Number(n) => *n as i64,
        Value::String(s) => match s.to_str().ok().and_then(|s| s.trim().parse::<f64>().ok()) {
            Some(n) => n as i64,
            None => {
                return Err(mlua::Error::runtime(
                    "First argument must be a number (log level).",
                ));
            }
        },
        _ => {
            return Err(mlua::Error::runtime(
                "First argument must be a number (log level).",
            ));
        }
    };
    if !(LOG_DEBUG..=LOG_WARNING).contains(&level) {
        return Err(mlua::Error::runtime("Invalid debug level."));
    }
    if level < LOG_NOTICE {
        return Ok(());
    }
    let mut text = String::new();
    for (i, a) in args.iter().skip(1).enumerate() {
        let piece = match a {
            Value::String(s) => s.to_string_lossy(),
            Value::Integer(n) => n.to_string(),
            Value::Number(n) => n.to_string(),
            _ => continue,
        };
        if i > 0 {
            text.push(' ');
        }
        text.push_str(&piece);
    }
    let level = if level == LOG_WARNING {
        Level::Warning
    } else {
        Level::Notice
    };
    crate::log::log(level, &text);
    Ok(())
}

/// Lua's `math.random` and `math.randomseed` over a generator seeded from the command's
/// randomness.
fn random(lua: &Lua, globals: &Table, seed: u64) -> Result<()> {
    let math: Table = globals.raw_get("math")?;
    let state = Rc::new(Cell::new(seed | 1));
    let next = {
        let state = Rc::clone(&state);
        move || {
            // xorshift64*: 53 bits of it make a double in [0, 1).
            let mut x = state.get();
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            state.set(x);
            (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        }
    };
    math.raw_set(
        "random",
        lua.create_function(move |_, args: Variadic<f64>| {
            let r = next();
            match args.len() {
                0 => Ok(r),
                1 => {
                    let u = args[0].trunc();
                    if u < 1.0 {
                        return Err(mlua::Error::runtime(
                            "bad argument #1 to 'random' (interval is empty)",
                        ));
                    }
                    Ok((r * u).floor() + 1.0)
                }
                2 => {
                    let (l, u) = (args[0].trunc(), args[1].trunc());
                    if l > u {
                        return Err(mlua::Error::runtime(
                            "bad argument #2 to 'random' (interval is empty)",
                        ));
                    }
                    Ok((r * (u - l + 1.0)).floor() + l)
                }
                _ => Err(mlua::Error::runtime("wrong number of arguments")),
            }
        })?,
    )?;
    math.raw_set(
        "randomseed",
        lua.create_function(move |_, n: f64| {
            state.set(crate::store::txn::mix(n as i64 as u64) | 1);
            Ok(())
        })?,
    )?;
    Ok(())
}

/// `loadstring(s [, name])` and `load(f [, name])` that compile source text only: Lua 5.1
/// does not verify bytecode, so a crafted binary chunk could break out of the interpreter.
fn source_only_loaders(lua: &Lua, globals: &Table) -> Result<()> {
    fn compile(lua: &Lua, code: &[u8], name: Option<String>) -> Result<(Value, Value)> {
        let name = name.unwrap_or_else(|| format!("={}", String::from_utf8_lossy(code)));
        match lua
            .load(code)
            .set_name(name)
            .set_mode(ChunkMode::Text)
            .into_function()
        {
            Ok(f) => Ok((Value::Function(f), Value::Nil)),
            Err(e) => Ok((
                Value::Nil,
                Value::String(lua.create_string(super::run::message(&e))?),
            )),
        }
    }
    globals.raw_set(
        "loadstring",
        lua.create_function(|lua, (s, name): (LuaString, Option<String>)| {
            compile(lua, &s.as_bytes(), name)
        })?,
    )?;
    globals.raw_set(
        "load",
        lua.create_function(|lua, (f, name): (Function, Option<String>)| {
            let mut code = Vec::new();
            loop {
                match f.call::<Value>(())? {
                    Value::String(s) if !s.as_bytes().is_empty() => {
                        code.extend_from_slice(&s.as_bytes());
                    }
                    _ => break,
                }
            }
            compile(lua, &code, Some(name.unwrap_or_else(|| "=(load)".into())))
        })?,
    )?;
    Ok(())
}
