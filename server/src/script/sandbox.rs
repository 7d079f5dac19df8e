//! The globals a script sees: Lua's base, table, string and math libraries and `bit`, as
//! Redis exposes them, and nothing that reaches the file system or the process (no `io`,
//! `os`, `package`, `debug`, `dofile`, `loadfile`, `require`; `loadstring` and `load` accept
//! source text only, never precompiled bytecode). `math.random` draws from the command's
//! randomness, so a replica re-running the script draws the same numbers.
//!
//! A [`Vm`] (one per thread, reused) holds the libraries and one environment every run
//! shares, read-only as in Redis 7: reading an unknown global, creating or changing one, or
//! writing to a library table is an error, so nothing a script does outlives its run. The
//! shared tables are out of the script's reach: it sees empty proxies with protected
//! metatables, and the string metatable is protected too.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use mlua::chunk::ChunkMode;
use mlua::state::{GcIncParams, GcMode};
use mlua::{
    Function, HookTriggers, Lua, LuaOptions, LuaString, MultiValue, Result, StdLib, Table, Value,
    Variadic, VmState,
};

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
    "loadstring",
    "load",
];

/// The libraries each run sees through proxies of its own.
const LIBRARIES: &[&str] = &[
    "string", "table", "math", "bit", "cjson", "cmsgpack", "redis",
];

/// Lua instructions between two looks at the kill switch.
pub const KILL_CHECK_EVERY: u32 = 1000;

/// Most memory a thread's Lua state may hold.
pub const MEMORY_LIMIT: usize = 1 << 30;

/// Lifts a state's memory limit while Rust, not a script, works on it (building `KEYS`,
/// `ARGV` and a command's reply, setting up and tearing down a run), and puts it back when
/// dropped. With a limit, mlua runs every string or table it creates in a protected call of
/// its own, as an allocation may fail; that cost a one-command script a quarter of its
/// instructions. What Rust puts in the state is bounded by the request or reply it already
/// holds; the limit is there for what a script's own code allocates.
pub struct Unlimited<'l>(&'l Lua);

impl<'l> Unlimited<'l> {
    /// Lifts `lua`'s limit until the guard drops.
    pub fn new(lua: &'l Lua) -> Unlimited<'l> {
        // Fails only for a state without mlua's allocator, which `Vm::new` never makes.
        let _ = lua.set_memory_limit(0);
        Unlimited(lua)
    }
}

impl Drop for Unlimited<'_> {
    fn drop(&mut self) {
        let _ = self.0.set_memory_limit(MEMORY_LIMIT);
    }
}

/// Most memory a state is kept with between runs: a script that left more garbage than
/// this gets its state dropped (and its memory returned) rather than held by the thread.
const KEEP_MEMORY: usize = 32 << 20;

/// Lua 5.1's collector settings (`LUAI_GCPAUSE`, `LUAI_GCMUL`), restored after each run.
const GC_PAUSE: i32 = 200;
const GC_STEP_MULTIPLIER: i32 = 200;

/// Helpers written in Lua (loaded as the `=redis_api` chunk, which error positions skip):
/// `pcall` hands back the text of a `{err=...}` error (or of an error `redis.call` raised) as
/// Redis 7 does, and neither `pcall` nor `xpcall` can catch a kill.
const PRELUDE: &str = r#"
local killed, errtext = ...
local rawpcall, rawxpcall, error, select, unpack, type =
    pcall, xpcall, error, select, unpack, type
local function pack(...) return {n = select('#', ...), ...} end
local wrapped_pcall = function(f, ...)
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
local wrapped_xpcall = function(f, h)
  local r = pack(rawxpcall(f, h))
  if not r[1] and killed() then error(r[2], 0) end
  return unpack(r, 1, r.n)
end
return wrapped_pcall, wrapped_xpcall
"#;

/// Builds the environment every run on a state shares (loaded once per state), as Redis 7
/// does: the globals and every library table are read-only, so nothing a script does
/// outlives its run, and a run costs no tables of its own beyond `KEYS` and `ARGV`. Its
/// arguments: the base globals, the names of the libraries, `math.random` and
/// `math.randomseed`, and `loadstring` and `load` (Rust functions, as Lua's own are C
/// functions, compiling into this environment).
///
/// Plain Lua 5.1 has no read-only tables (Redis patched its Lua for them), so each library
/// and the globals are empty proxies whose `__newindex` refuses, over tables out of the
/// script's reach; and the functions that write without `__newindex` (`rawset`,
/// `setmetatable`, `table.insert`, `table.remove`, `table.sort`) refuse a proxy, while the
/// ones that read raw (`rawget`, `next`, `pairs`) read through it. It returns the
/// environment and the table behind it (where each run's `KEYS` and `ARGV` go).
const ENVIRONMENT: &str = r#"
local base, names, random, randomseed, compile, pieces = ...
local setmetatable, getmetatable, rawset, rawget, next, pairs, error, tostring =
    setmetatable, getmetatable, rawset, rawget, next, pairs, error, tostring
local insert, remove, sort = base.table.insert, base.table.remove, base.table.sort
local behind = setmetatable({}, {__mode = 'k'})
local function readonly() error("Attempt to modify a readonly table", 2) end
local function refuse(t)
  if behind[t] then error("Attempt to modify a readonly table", 0) end
end
local function protect(t)
  local p = setmetatable({}, {__index = t, __newindex = readonly, __metatable = false})
  behind[p] = t
  return p
end
local function copy(t)
  local c = {}
  for k, v in pairs(t) do c[k] = v end
  return c
end
local globals = copy(base)
for i = 1, #names do globals[names[i]] = copy(base[names[i]]) end
globals.math.random, globals.math.randomseed = random, randomseed
local tbl = globals.table
tbl.insert = function(t, ...) refuse(t) return insert(t, ...) end
tbl.remove = function(t, ...) refuse(t) return remove(t, ...) end
tbl.sort = function(t, ...) refuse(t) return sort(t, ...) end
globals.rawset = function(t, k, v) refuse(t) return rawset(t, k, v) end
globals.setmetatable = function(t, mt) refuse(t) return setmetatable(t, mt) end
globals.getmetatable = function(t)
  if behind[t] then return nil end
  return getmetatable(t)
end
globals.rawget = function(t, k) return rawget(behind[t] or t, k) end
local function next_of(t, k) return next(behind[t] or t, k) end
globals.next = next_of
globals.pairs = function(t)
  if behind[t] then return next_of, t, nil end
  return pairs(t)
end
for i = 1, #names do globals[names[i]] = protect(globals[names[i]]) end
globals.loadstring, globals.load = compile, pieces
local env = setmetatable({}, {
  __index = function(_, k)
    local v = globals[k]
    if v == nil then
      error("Script attempted to access nonexistent global variable '" .. tostring(k) .. "'", 2)
    end
    return v
  end,
  __newindex = readonly,
  __metatable = false,
})
behind[env] = globals
globals._G = env
return env, globals
"#;

/// A reusable Lua state: the libraries, the `redis` table's fixed part, the helpers.
pub struct Vm {
    /// The Lua state.
    pub lua: Lua,
    /// The environment every run shares ([`ENVIRONMENT`]).
    env: Table,
    /// The table behind `env`: each run's `KEYS` and `ARGV` go there.
    globals: Table,
    /// The names `KEYS` and `ARGV`, made once (a name made for each run is hashed each time).
    keys_argv_names: [LuaString; 2],
    /// The running command's `redis.call` and friends: one function of the run's (bound to
    /// its transaction), called with 0 (`call`), 1 (`pcall`) or 2 (`setresp`) first.
    dispatch: Rc<RefCell<Option<Function>>>,
    /// The state of the run's `math.random`, seeded for each run.
    random: Rc<Cell<u64>>,
    /// Lua's own `xpcall`, to run scripts under the error handler.
    pub raw_xpcall: Function,
    /// The error handler scripts run under.
    pub handler: Function,
    /// The running script's kill switch (the hook and `pcall` look at it).
    kill: Rc<RefCell<Arc<AtomicBool>>>,
    /// The environment compiled scripts keep between runs (empty).
    idle: Table,
    /// Compiled scripts by SHA1 (content-addressed: never stale).
    pub compiled: std::collections::HashMap<[u8; 40], Function>,
    /// Scripts run on this state (it is rebuilt now and then).
    pub runs: u32,
    /// `cjson`'s settings, back to their defaults for each run.
    cjson: std::rc::Rc<super::cjson::Settings>,
    /// Kill-hook checks left before a function library's loading code is stopped (0: no
    /// limit). Counted in instructions, not time, so every node of a cluster decides alike.
    budget: Rc<Cell<u32>>,
    /// Builds a function library's environment (`functions::engine`).
    pub library_env: Function,
    /// Calls a registered function under the error handler with its keys and arguments.
    pub call_with: Function,
}

/// Redis's `redis.LOG_*` levels.
const LOG_DEBUG: i64 = 0;
const LOG_WARNING: i64 = 3;
const LOG_NOTICE: i64 = 2;

impl Vm {
    /// A state with the libraries scripts may use, the fixed part of `redis`, and the kill
    /// hook.
    ///
    /// # Errors
    /// Lua's (out of memory).
    pub fn new(error_handler: fn(&Lua, Value) -> Result<Table>) -> Result<Vm> {
        let lua = Lua::new_with(
            StdLib::TABLE | StdLib::STRING | StdLib::MATH,
            LuaOptions::default(),
        )?;
        lua.set_memory_limit(MEMORY_LIMIT)?;
        let base = lua.globals();
        let raw_xpcall: Function = base.raw_get("xpcall")?;
        for name in REMOVED {
            base.raw_set(*name, Value::Nil)?;
        }
        super::bit::install(&lua, &base)?;
        let cjson = super::cjson::install(&lua, &base)?;
        super::cmsgpack::install(&lua, &base)?;
        let dispatch: Rc<RefCell<Option<Function>>> = Rc::new(RefCell::new(None));
        let redis = redis_table(&lua)?;
        for (mode, name) in ["call", "pcall", "setresp"].into_iter().enumerate() {
            redis.raw_set(name, forward(&lua, &dispatch, mode as i64)?)?;
        }
        base.raw_set("redis", redis)?;
        // `("x"):upper()` reads the shared string table through the string metatable: keep
        // that metatable (and so the table) out of reach.
        let string_mt: Table = lua.load("return getmetatable('')").eval()?;
        string_mt.raw_set("__metatable", false)?;
        let kill = Rc::new(RefCell::new(Arc::new(AtomicBool::new(false))));
        let killed = {
            let kill = Rc::clone(&kill);
            lua.create_function(move |_, ()| Ok(kill.borrow().load(Ordering::Relaxed)))?
        };
        let errtext = lua.create_function(|_, e: Value| {
            Ok(match e {
                Value::Error(e) => super::run::err_text(&e),
                _ => "ERR unknown error".into(),
            })
        })?;
        let (pcall, xpcall): (Function, Function) = lua
            .load(PRELUDE)
            .set_name(super::run::api_chunk())
            .set_mode(ChunkMode::Text)
            .call((killed, errtext))?;
        base.raw_set("pcall", pcall)?;
        base.raw_set("xpcall", xpcall)?;
        let names = lua.create_sequence_from(LIBRARIES.iter().copied())?;
        let random = Rc::new(Cell::new(1u64));
        let (random_fn, randomseed_fn) = random_functions(&lua, &random)?;
        let current: Rc<RefCell<Option<Table>>> = Rc::new(RefCell::new(None));
        let compile = {
            let current = Rc::clone(&current);
            lua.create_function(move |lua, (s, name): (LuaString, Option<String>)| {
                compile_in(lua, &running(&current)?, &bytes_of(&s), name)
            })?
        };
        let pieces = {
            let current = Rc::clone(&current);
            lua.create_function(move |lua, (f, name): (Function, Option<String>)| {
                load_pieces(lua, &running(&current)?, f, name)
            })?
        };
        let (env, globals): (Table, Table) = lua
            .load(ENVIRONMENT)
            .set_name(super::run::api_chunk())
            .set_mode(ChunkMode::Text)
            .call((
                base.clone(),
                names,
                random_fn,
                randomseed_fn,
                compile,
                pieces,
            ))?;
        *current.borrow_mut() = Some(env.clone());
        let (library_env, call_with): (Function, Function) = lua
            .load(super::functions::engine::PRELUDE)
            .set_name(super::run::api_chunk())
            .set_mode(ChunkMode::Text)
            .call((base.raw_get::<Table>("redis")?, raw_xpcall.clone()))?;
        let hook_kill = Rc::clone(&kill);
        let budget = Rc::new(Cell::new(0u32));
        let hook_budget = Rc::clone(&budget);
        lua.set_hook(
            HookTriggers::new().every_nth_instruction(KILL_CHECK_EVERY),
            move |_, _| {
                if hook_kill.borrow().load(Ordering::Relaxed) {
                    return Err(mlua::Error::runtime(
                        "Script killed by user with SCRIPT KILL...",
                    ));
                }
                match hook_budget.get() {
                    0 => {}
                    1 => return Err(mlua::Error::runtime("FUNCTION LOAD timeout")),
                    n => hook_budget.set(n - 1),
                }
                Ok(VmState::Continue)
            },
        )?;
        let handler = lua.create_function(error_handler)?;
        let idle = lua.create_table()?;
        let keys_argv_names = [lua.create_string("KEYS")?, lua.create_string("ARGV")?];
        Ok(Vm {
            idle,
            lua,
            env,
            globals,
            keys_argv_names,
            dispatch,
            random,
            raw_xpcall,
            handler,
            kill,
            compiled: std::collections::HashMap::new(),
            runs: 0,
            cjson,
            budget,
            library_env,
            call_with,
        })
    }

    /// The environment for one run, which every run shares: `KEYS` and `ARGV` (a
    /// script's; `None` for a function, which has neither), `math.random` seeded with
    /// `seed`, `cjson`'s settings at their defaults, and `dispatch` (bound to the running
    /// command by the caller) behind `redis.call`, `redis.pcall` and `redis.setresp`. `kill`
    /// stops the run.
    ///
    /// # Errors
    /// Lua's (out of memory).
    pub fn environment(
        &self,
        seed: u64,
        kill: &Arc<AtomicBool>,
        dispatch: Function,
        keys_argv: Option<(Table, Table)>,
    ) -> Result<Table> {
        *self.kill.borrow_mut() = Arc::clone(kill);
        self.cjson.reset();
        self.random.set(seed | 1);
        *self.dispatch.borrow_mut() = Some(dispatch);
        let (keys, argv) = match keys_argv {
            Some((k, a)) => (Value::Table(k), Value::Table(a)),
            None => (Value::Nil, Value::Nil),
        };
        let [k, a] = &self.keys_argv_names;
        self.globals.raw_set(k, keys)?;
        self.globals.raw_set(a, argv)?;
        Ok(self.env.clone())
    }

    /// The environment every script's run shares (its compiled chunk keeps it).
    pub fn env(&self) -> &Table {
        &self.env
    }

    /// Limits what runs from now on to `checks` kill-hook checks (of [`KILL_CHECK_EVERY`]
    /// instructions each); 0 lifts the limit.
    pub fn set_budget(&self, checks: u32) {
        self.budget.set(checks);
    }

    /// Gives the compiled script `f` back the empty environment it waits in between runs.
    pub fn retire(&self, f: &Function) {
        // Setting a Lua function's environment fails only on memory exhaustion, when the
        // state is dropped anyway.
        let _ = f.set_environment(self.idle.clone());
    }

    /// Undoes what a run may have changed in the state itself (`collectgarbage` can stop
    /// the collector or retune it) and drops the run's kill switch. Answers whether the state
    /// holds more than [`KEEP_MEMORY`] even after a full collection (then it is better
    /// dropped than kept by an idle thread).
    pub fn after_run(&self) -> bool {
        let lua = &self.lua;
        let unlimited = Unlimited::new(lua);
        lua.gc_restart();
        lua.gc_set_mode(GcMode::Incremental(
            GcIncParams::default()
                .pause(GC_PAUSE)
                .step_multiplier(GC_STEP_MULTIPLIER),
        ));
        *self.kill.borrow_mut() = Arc::new(AtomicBool::new(false));
        *self.dispatch.borrow_mut() = None;
        // Failing only on memory exhaustion, when the state is dropped anyway.
        let [k, a] = &self.keys_argv_names;
        let _ = self.globals.raw_set(k, Value::Nil);
        let _ = self.globals.raw_set(a, Value::Nil);
        drop(unlimited);
        lua.used_memory() > KEEP_MEMORY
            && (lua.gc_collect().is_err() || lua.used_memory() > KEEP_MEMORY)
    }
}

/// `redis.call`, `redis.pcall` or `redis.setresp` (`mode` 0, 1, 2): Rust functions, as in
/// Redis (a `return redis.call(...)` is then no tail call, and an error's position is the
/// script's line), handing their arguments to the running command's `dispatch`.
fn forward(lua: &Lua, dispatch: &Rc<RefCell<Option<Function>>>, mode: i64) -> Result<Function> {
    let dispatch = Rc::clone(dispatch);
    lua.create_function(move |_, mut args: MultiValue| {
        let f = dispatch.borrow().clone();
        let f = f.ok_or_else(|| mlua::Error::runtime("no script is running"))?;
        args.push_front(Value::Integer(mode));
        f.call::<MultiValue>(args)
    })
}

/// The fixed part of the `redis` table (all but `call`, `pcall` and `setresp`).
fn redis_table(lua: &Lua) -> Result<Table> {
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
    Ok(redis)
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

/// Lua's `math.random` and `math.randomseed` over the generator in `state`, which each run
/// seeds from the command's randomness ([`Vm::environment`]).
fn random_functions(lua: &Lua, state: &Rc<Cell<u64>>) -> Result<(Function, Function)> {
    let state = Rc::clone(state);
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
    let random = lua.create_function(move |_, args: Variadic<f64>| {
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
    })?;
    let randomseed = lua.create_function(move |_, n: f64| {
        state.set(crate::store::txn::mix(n as i64 as u64) | 1);
        Ok(())
    })?;
    Ok((random, randomseed))
}

/// The environment of the script running on a state (what `loadstring` compiles into).
fn running(current: &Rc<RefCell<Option<Table>>>) -> Result<Table> {
    current
        .borrow()
        .clone()
        .ok_or_else(|| mlua::Error::runtime("no script is running"))
}

/// Compiles source text (never bytecode: Lua 5.1 does not verify it, so a crafted binary
/// chunk could break out of the interpreter) into a function of the run's environment: what
/// `loadstring` and `load` answer.
fn compile_in(lua: &Lua, env: &Table, code: &[u8], name: Option<String>) -> Result<(Value, Value)> {
    let name = name.unwrap_or_else(|| format!("={}", String::from_utf8_lossy(code)));
    match lua
        .load(code)
        .set_name(name)
        .set_mode(ChunkMode::Text)
        .set_environment(env.clone())
        .into_function()
    {
        Ok(f) => Ok((Value::Function(f), Value::Nil)),
        Err(e) => Ok((
            Value::Nil,
            Value::String(lua.create_string(super::run::message(&e))?),
        )),
    }
}

/// `load(f [, name])`: the pieces `f` returns, compiled by [`compile_in`].
///
/// # Errors
/// `f`'s.
fn load_pieces(
    lua: &Lua,
    env: &Table,
    f: Function,
    name: Option<String>,
) -> Result<(Value, Value)> {
    let mut code = Vec::new();
    loop {
        match f.call::<Value>(())? {
            Value::String(s) if !s.as_bytes().is_empty() => {
                code.extend_from_slice(&s.as_bytes());
            }
            _ => break,
        }
    }
    compile_in(
        lua,
        env,
        &code,
        Some(name.unwrap_or_else(|| "=(load)".into())),
    )
}

/// A `LuaString` as bytes (for `loadstring`).
fn bytes_of(s: &LuaString) -> Vec<u8> {
    s.as_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every table a script reaches from its globals is a read-only proxy (empty itself):
    /// any other would be one all runs share and could write to.
    #[test]
    fn the_only_shared_tables_scripts_reach_are_proxied() {
        let vm = Vm::new(|lua, _| lua.create_table()).expect("state");
        for pair in vm.globals.pairs::<String, Value>() {
            let (name, value) = pair.expect("global");
            match value {
                Value::Table(t) => {
                    assert!(
                        name == "_G" || LIBRARIES.contains(&name.as_str()),
                        "global {name} is a shared table"
                    );
                    assert_eq!(t.raw_len(), 0, "{name}");
                    assert!(
                        t.pairs::<Value, Value>().next().is_none(),
                        "{name} is no proxy"
                    );
                }
                Value::UserData(_) | Value::Thread(_) => panic!("global {name} is a {value:?}"),
                _ => {}
            }
        }
    }
}
