//! The Lua side of functions: running a library's code so that it registers its functions
//! (`redis.register_function`), and calling one of them.
//!
//! Redis runs a library's code once, at `FUNCTION LOAD`, in one long-lived Lua state, and
//! keeps the registered closures. Here every thread has a state of its own (`run`), and a
//! state keeps nothing from one run to the next, so `FCALL` runs the library's code again in
//! a fresh environment to get the closure back, then calls it. That is sound because
//! loading code cannot depend on anything but its text: it sees only the library API
//! (`redis.register_function`, `redis.log`, the log levels and the version), no data, no
//! clock, no randomness, and is held to an instruction budget instead of a timer. So what
//! it registered at `FUNCTION LOAD` it registers again on every node and every call. (One
//! difference with Redis follows: a value a library keeps in a local of its own code
//! between calls starts afresh on every call.)

use std::cell::RefCell;
use std::rc::Rc;

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::library::{Flags, FunctionInfo, valid_name};
use crate::script::sandbox::Vm;

/// Kill-hook checks (of `sandbox::KILL_CHECK_EVERY` instructions each) a library's code
/// may run before it is stopped with Redis's `FUNCTION LOAD timeout`: 50 million Lua
/// instructions, about what Redis's 500 ms allow. Loading code registers functions and
/// should take a tiny part of this.
pub const LOAD_BUDGET: u32 = 50_000;

/// Lua helpers, loaded with the state (`sandbox::Vm`) under the chunk name error positions
/// skip. `library_env(register)` answers a library's environment and the function that
/// turns it from the load-time API (what Redis lets loading code see, each miss and each
/// assignment an error as in Redis) to the run's environment; `call_with` calls a
/// registered function with its keys and arguments under the error handler (Lua 5.1's
/// `xpcall` passes no arguments).
pub const PRELUDE: &str = r#"
local redis_base, xpcall = ...
local error, tostring, setmetatable, rawget = error, tostring, setmetatable, rawget
local function readonly() error("Attempt to modify a readonly table", 2) end
local function missing(_, k)
  error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
end
local shared = {}
for _, k in ipairs({"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING",
                    "REDIS_VERSION", "REDIS_VERSION_NUM"}) do
  shared[k] = redis_base[k]
end
local function library_env(register)
  local redis = {register_function = register}
  for k, v in pairs(shared) do redis[k] = v end
  setmetatable(redis, {__index = missing, __newindex = readonly, __metatable = false})
  local api = {redis = redis}
  local mt = {__newindex = readonly, __metatable = false}
  mt.__index = function(_, k)
    local v = rawget(api, k)
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
    end
    return v
  end
  local env = setmetatable({}, mt)
  return env, function(run_env) mt.__index = run_env end
end
local function call_with(f, h, keys, args)
  return xpcall(function() return f(keys, args) end, h)
end
return library_env, call_with
"#;

/// A function the library's code registered, with its closure.
pub struct Registered {
    /// Its name, description and flags.
    pub info: FunctionInfo,
    /// The closure to call.
    pub callback: Function,
}

/// The environment a library's code ran in, and what it registered.
pub struct Ran {
    /// The functions, in the order they were registered.
    pub functions: Vec<Registered>,
    /// Switches the library's environment to the run's: the closures see the whole script
    /// API (`redis.call`, the libraries) from then on.
    pub to_run: Function,
}

/// Runs the compiled library code `chunk` in a fresh load-time environment, under the load
/// budget.
///
/// # Errors
/// Redis's text for a library that fails while registering: `Error registering functions:
/// ...`.
pub fn register(vm: &Vm, chunk: &Function) -> Result<Ran, String> {
    let lua = &vm.lua;
    let collected: Rc<RefCell<Vec<Registered>>> = Rc::new(RefCell::new(Vec::new()));
    let into = Rc::clone(&collected);
    let inner = |e: mlua::Error| format!("Error registering functions: ERR {}", e);
    let register = lua
        .create_function(move |lua, args: MultiValue| {
            let r = read_args(lua, args)?;
            let mut list = into.borrow_mut();
            if list
                .iter()
                .any(|f| f.info.name.eq_ignore_ascii_case(&r.info.name))
            {
                return Err(mlua::Error::runtime(
                    "Function already exists in the library",
                ));
            }
            list.push(r);
            Ok(())
        })
        .map_err(inner)?;
    let (env, to_run): (Table, Function) = vm.library_env.call(register).map_err(inner)?;
    chunk.set_environment(env).map_err(inner)?;
    vm.set_budget(LOAD_BUDGET);
    let out: mlua::Result<MultiValue> = vm.raw_xpcall.call((chunk.clone(), vm.handler.clone()));
    vm.set_budget(0);
    // Taken out whatever happened: the registering function holds the list, and the list
    // holds closures that reach the registering function, a cycle Lua's collector cannot
    // see through.
    let functions = std::mem::take(&mut *collected.borrow_mut());
    let mut out = out.map_err(inner)?.into_iter();
    if !matches!(out.next(), Some(Value::Boolean(true))) {
        let err = match out.next() {
            Some(Value::Table(t)) => t
                .raw_get::<Option<String>>("err")
                .ok()
                .flatten()
                .unwrap_or_else(|| "ERR unknown error".into()),
            Some(Value::Error(e)) => crate::script::run::err_text(&e),
            Some(Value::String(s)) => format!("ERR {}", s.to_string_lossy()),
            _ => "ERR unknown error".into(),
        };
        return Err(format!("Error registering functions: {err}"));
    }
    Ok(Ran { functions, to_run })
}

fn fail<T>(msg: &str) -> mlua::Result<T> {
    Err(mlua::Error::runtime(msg.to_string()))
}

/// A Lua string or number as bytes (Redis's `lua_isstring` accepts both).
fn stringish(lua: &Lua, v: &Value) -> mlua::Result<Option<Vec<u8>>> {
    Ok(match v {
        Value::String(_) | Value::Integer(_) | Value::Number(_) => {
            lua.coerce_string(v.clone())?.map(|s| s.as_bytes().to_vec())
        }
        _ => None,
    })
}

/// The arguments of `redis.register_function`: `(name, callback)` or one table of named
/// arguments (`function_name`, `callback`, `flags`, `description`), with Redis's checks and
/// texts.
fn read_args(lua: &Lua, args: MultiValue) -> mlua::Result<Registered> {
    let args: Vec<Value> = args.into_iter().collect();
    let (name, description, flags, callback) = match args.as_slice() {
        [Value::Table(t)] => read_named(lua, t)?,
        [_] => {
            return fail(
                "calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).",
            );
        }
        [name, callback] => {
            let Some(name) = stringish(lua, name)? else {
                return fail("first argument to redis.register_function must be a string");
            };
            let Value::Function(callback) = callback else {
                return fail("second argument to redis.register_function must be a function");
            };
            (name, None, Flags::default(), callback.clone())
        }
        _ => return fail("wrong number of arguments to redis.register_function"),
    };
    if !valid_name(&name) {
        // Redis's text, which says "Library" for a function's name too.
        return fail(super::library::BAD_NAME);
    }
    Ok(Registered {
        info: FunctionInfo {
            name,
            description,
            flags,
        },
        callback,
    })
}

type Named = (Vec<u8>, Option<Vec<u8>>, Flags, Function);

fn read_named(lua: &Lua, t: &Table) -> mlua::Result<Named> {
    let (mut name, mut description, mut flags, mut callback) = (None, None, Flags::default(), None);
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair?;
        let Some(key) = stringish(lua, &k)? else {
            return fail("named argument key given to redis.register_function is not a string");
        };
        match key.to_ascii_lowercase().as_slice() {
            b"function_name" => match stringish(lua, &v)? {
                Some(n) => name = Some(n),
                None => {
                    return fail(
                        "function_name argument given to redis.register_function must be a string",
                    );
                }
            },
            b"description" => match stringish(lua, &v)? {
                Some(d) => description = Some(d),
                None => {
                    return fail(
                        "description argument given to redis.register_function must be a string",
                    );
                }
            },
            b"callback" => match v {
                Value::Function(f) => callback = Some(f),
                _ => {
                    return fail(
                        "callback argument given to redis.register_function must be a function",
                    );
                }
            },
            b"flags" => {
                let Value::Table(list) = v else {
                    return fail(
                        "flags argument to redis.register_function must be a table representing function flags",
                    );
                };
                flags = read_flags(lua, &list)?;
            }
            _ => return fail("unknown argument given to redis.register_function"),
        }
    }
    let Some(name) = name else {
        return fail("redis.register_function must get a function name argument");
    };
    let Some(callback) = callback else {
        return fail("redis.register_function must get a callback argument");
    };
    Ok((name, description, flags, callback))
}

/// The flags of a `flags` table: its items 1, 2, ... up to the first nil, each a flag's
/// name in any case.
fn read_flags(lua: &Lua, list: &Table) -> mlua::Result<Flags> {
    let mut flags = Flags::default();
    for i in 1.. {
        let v: Value = list.get(i)?;
        if v.is_nil() {
            break;
        }
        match stringish(lua, &v)?.and_then(|f| Flags::named(&f)) {
            Some(f) => flags = flags.with(f),
            None => return fail("unknown flag given"),
        }
    }
    Ok(flags)
}
