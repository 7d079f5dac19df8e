//! Running one script: in this thread's sandboxed Lua 5.1 state and its read-only
//! environment (`sandbox`), `redis.*` bound to the command's write set, Redis's error texts.
//!
//! Building a Lua state costs several times a short script (callgrind: 2.6 million instructions
//! per `EVALSHA` of `return 1` with a state per run, 0.34 million without), so each
//! thread keeps one and compiled scripts with it; a state whose run was killed or ran out
//! of memory is dropped and built afresh.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use mlua::{Function, Lua, MultiValue, Table, Value, Variadic};

use mlua::chunk::ChunkMode;

use super::call;
use super::convert::{error_table, error_text, fmt_g17, lua_to_reply, reply_to_lua};
use super::sandbox::{Unlimited, Vm};
use crate::resp::Reply;
use crate::store::Txn;

/// The chunk name of the user's script (Lua prints it as `user_script`), as in Redis.
const CHUNK: &str = "@user_script";

/// The chunk name of a function library's code, as in Redis.
const LIBRARY_CHUNK: &str = "@user_function";

/// What a run executes.
#[derive(Clone, Copy, Debug)]
pub enum Program<'p> {
    /// An `EVAL` script: its body (a `#!lua` first line included), named in errors by `sha`
    /// (its SHA1, or anything a test likes).
    Script {
        /// The name in error texts.
        sha: &'p str,
        /// The script's text.
        body: &'p [u8],
    },
    /// The function `name` of the library whose code (from its first line's newline on)
    /// is `code`: the code runs to register its functions, then `name`'s closure is called
    /// with the keys and arguments (`functions::engine`).
    Function {
        /// The library's code after its first line.
        code: &'p [u8],
        /// The function (any case).
        name: &'p str,
    },
}

/// The chunk name of this module's Lua helpers, which error positions skip.
const API_CHUNK: &str = "=redis_api";

/// What a script run came to.
#[derive(Debug)]
pub enum Ran {
    /// It ended (its reply may be an error: the writes it made before stay, as in Redis).
    Done(Reply),
    /// It was killed (`SCRIPT KILL`, shutdown): its writes must be discarded.
    Killed(Reply),
}

/// The flags of a `#!lua` first line: where the code starts (the newline stays, so line
/// numbers are the user's) and whether the script declared `no-writes`.
///
/// # Errors
/// Redis's texts for a bad shebang.
pub fn shebang(body: &[u8]) -> Result<(usize, bool), Reply> {
    if !body.starts_with(b"#!") {
        return Ok((0, false));
    }
    let Some(end) = body.iter().position(|&c| c == b'\n') else {
        return Err(Reply::err("Invalid script shebang"));
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let mut parts = line.split_ascii_whitespace();
    match parts.next() {
        Some("#!lua") => {}
        Some(other) => {
            return Err(Reply::err(format!(
                "Unexpected engine in script shebang: {other}"
            )));
        }
        None => return Err(Reply::err("Invalid engine in script shebang")),
    }
    let mut no_writes = false;
    for p in parts {
        let Some(flags) = p.strip_prefix("flags=") else {
            return Err(Reply::err(format!("Unknown lua shebang option: {p}")));
        };
        for f in flags.split(',').filter(|f| !f.is_empty()) {
            match f {
                "no-writes" => no_writes = true,
                "allow-oom" | "allow-stale" | "no-cluster" | "allow-cross-slot-keys" => {}
                other => {
                    return Err(Reply::err(format!(
                        "Unexpected flag in script shebang: {other}"
                    )));
                }
            }
        }
    }
    Ok((end, no_writes))
}

/// Compiles `body` without running it (SCRIPT LOAD, and EVAL before caching).
///
/// # Errors
/// Redis's `Error compiling script (new function): ...`, or a shebang error.
pub fn compile(body: &[u8]) -> Result<(), Reply> {
    let (start, _) = shebang(body)?;
    let sha = super::cache::sha1_hex(body);
    with_vm(|vm| (compiled(vm, &sha, &body[start..], false).map(|_| ()), false))?
}

/// Compiles a script into the environment its runs share, or a library's code (which
/// gets its environment when it runs).
fn load(vm: &Vm, code: &[u8], library: bool) -> Result<Function, Reply> {
    let (chunk, what) = if library {
        (LIBRARY_CHUNK, "Error compiling function")
    } else {
        (CHUNK, "Error compiling script (new function)")
    };
    let mut chunk = vm.lua.load(code).set_name(chunk).set_mode(ChunkMode::Text);
    if !library {
        chunk = chunk.set_environment(vm.env().clone());
    }
    chunk
        .into_function()
        .map_err(|e| Reply::err(format!("{what}: {}", message(&e))))
}

/// The key compiled library code is cached under in a state: apart from scripts' (a
/// script's key is the SHA1 of its body alone).
pub(super) fn library_key(code: &[u8]) -> [u8; 40] {
    super::cache::sha1_hex(&[b"function\0", code].concat())
}

/// Compiles a library's code (from its first line's newline on) and runs it to register
/// its functions: what `FUNCTION LOAD` keeps of them.
///
/// # Errors
/// Redis's texts: `Error compiling function: ...`, `Error registering functions: ...`.
pub fn register_library(
    code: &[u8],
) -> Result<Vec<super::functions::library::FunctionInfo>, Reply> {
    let key = library_key(code);
    with_vm(|vm| {
        let out = compiled(vm, &key, code, true).and_then(|chunk| {
            let r = super::functions::engine::register(vm, &chunk);
            vm.retire(&chunk);
            r.map(|ran| ran.functions.into_iter().map(|f| f.info).collect())
                .map_err(Reply::err)
        });
        // A library stopped by its budget leaves its state mid-run: built afresh.
        let discard = matches!(&out, Err(Reply::Error(e)) if e.contains("FUNCTION LOAD timeout") || e.contains("not enough memory"));
        (out, discard)
    })?
}

fn internal(e: mlua::Error) -> Reply {
    Reply::err(format!("Lua error: {}", message(&e)))
}

/// The error `redis.call` raises: a command's error reply, as the text Redis puts in `err`.
#[derive(Debug)]
pub struct CallError(pub String);

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CallError {}

/// The `err` text of an error raised in a script: a command's error as it is, any other
/// error's text with `ERR` in front.
pub fn err_text(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => err_text(cause),
        mlua::Error::ExternalError(x) => match x.downcast_ref::<CallError>() {
            Some(c) => c.0.clone(),
            None => error_text(&x.to_string()),
        },
        other => error_text(&message(other)),
    }
}

/// The text of an error, without mlua's wrapping (callback errors, tracebacks).
pub fn message(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } => message(cause),
        mlua::Error::RuntimeError(s) | mlua::Error::SyntaxError { message: s, .. } => s.clone(),
        mlua::Error::MemoryError(_) => "not enough memory".into(),
        other => other.to_string(),
    }
}

/// Runs a script against `txn`: `sha` names it in error texts, `keys` and `argv` fill `KEYS`
/// and `ARGV`, `read_only` refuses write commands, `seed` seeds `math.random`, `kill` stops it.
pub fn run(
    txn: &mut Txn<'_>,
    sha: &str,
    body: &[u8],
    keys: &[Bytes],
    argv: &[Bytes],
    read_only: bool,
    kill: &Arc<AtomicBool>,
) -> Ran {
    run_program(
        txn,
        Program::Script { sha, body },
        keys,
        argv,
        read_only,
        kill,
    )
}

/// [`run`] of any [`Program`]: a function gets `keys` and `argv` as its two arguments.
pub fn run_program(
    txn: &mut Txn<'_>,
    program: Program<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    read_only: bool,
    kill: &Arc<AtomicBool>,
) -> Ran {
    let (program, no_writes) = match program {
        Program::Script { sha, body } => match shebang(body) {
            Ok((start, no_writes)) => (
                Program::Script {
                    sha,
                    body: &body[start..],
                },
                no_writes,
            ),
            Err(e) => return Ran::Done(e),
        },
        f @ Program::Function { .. } => (f, false),
    };
    let read_only = read_only || no_writes;
    let seed = txn.rand_u64();
    // A SELECT inside the script lasts until it ends (Redis 7): the caller's database
    // is back afterwards.
    let db = txn.db();
    // The script's commands run inside one savepoint: a killed script leaves nothing.
    txn.begin_nested();
    let cell = RefCell::new(&mut *txn);
    let outcome = execute(&cell, program, keys, argv, read_only, seed, kill);
    let txn = cell.into_inner();
    txn.select_stored(db);
    match outcome {
        Ok(r) if kill.load(Ordering::Relaxed) && r.is_error() => {
            txn.rollback();
            Ran::Killed(r)
        }
        Ok(r) => {
            txn.end_nested();
            Ran::Done(r)
        }
        Err(e) => {
            txn.end_nested();
            Ran::Done(e)
        }
    }
}

thread_local! {
    /// This thread's Lua state, reused across runs (each run gets a fresh environment).
    static VM: RefCell<Option<Vm>> = const { RefCell::new(None) };
}

/// Runs after which a thread's Lua state is rebuilt (its heap starts afresh).
const RUNS_PER_VM: u32 = 10_000;

/// Most compiled scripts a thread's state keeps.
const MAX_COMPILED: usize = 1024;

/// Calls `f` with this thread's Lua state, building it first if needed; `f` answers whether
/// the state must be dropped afterwards (a killed run, an exhausted heap).
pub(super) fn with_vm<T>(f: impl FnOnce(&mut Vm) -> (T, bool)) -> Result<T, Reply> {
    VM.with(|cell| {
        let Ok(mut slot) = cell.try_borrow_mut() else {
            // A run inside a run on this thread (no command a script may call leads here
            // today): a state of its own, dropped afterwards.
            let mut vm = Vm::new(error_handler).map_err(internal)?;
            return Ok(f(&mut vm).0);
        };
        if slot.as_ref().is_none_or(|vm| vm.runs >= RUNS_PER_VM) {
            *slot = Some(Vm::new(error_handler).map_err(internal)?);
        }
        let Some(vm) = slot.as_mut() else {
            return Err(Reply::err("Lua state unavailable"));
        };
        vm.runs += 1;
        let (out, discard) = f(vm);
        let bloated = vm.after_run();
        if discard || bloated {
            *slot = None;
        }
        Ok(out)
    })
}

/// The compiled main function of `code` (cached under `sha`: a script's SHA1, or
/// [`library_key`] for a library's code).
fn compiled(vm: &mut Vm, sha: &[u8; 40], code: &[u8], library: bool) -> Result<Function, Reply> {
    if let Some(f) = vm.compiled.get(sha) {
        return Ok(f.clone());
    }
    let f = load(vm, code, library)?;
    if vm.compiled.len() >= MAX_COMPILED {
        vm.compiled.clear();
    }
    vm.compiled.insert(*sha, f.clone());
    Ok(f)
}

fn execute(
    txn: &RefCell<&mut Txn<'_>>,
    program: Program<'_>,
    keys: &[Bytes],
    argv: &[Bytes],
    read_only: bool,
    seed: u64,
    kill: &Arc<AtomicBool>,
) -> Result<Reply, Reply> {
    // Compiled scripts are cached by the SHA1 of the whole body (as `compile` keys them);
    // callers pass that as `sha`, anything else (tests) gets the code's own.
    let key = match program {
        Program::Script { sha, body } => {
            <[u8; 40]>::try_from(sha.as_bytes()).unwrap_or_else(|_| super::cache::sha1_hex(body))
        }
        Program::Function { code, .. } => library_key(code),
    };
    with_vm(|vm| {
        let r = execute_in(vm, txn, program, &key, keys, argv, read_only, seed, kill);
        let discard = kill.load(Ordering::Relaxed)
            || matches!(&r, Ok(Reply::Error(e)) | Err(Reply::Error(e)) if e.contains("not enough memory"));
        (r, discard)
    })?
}

#[expect(
    clippy::too_many_arguments,
    reason = "execute's arguments plus the VM it runs in"
)]
fn execute_in(
    vm: &mut Vm,
    txn: &RefCell<&mut Txn<'_>>,
    program: Program<'_>,
    key: &[u8; 40],
    keys: &[Bytes],
    argv: &[Bytes],
    read_only: bool,
    seed: u64,
    kill: &Arc<AtomicBool>,
) -> Result<Reply, Reply> {
    let (code, sha, library) = match program {
        Program::Script { sha, body } => (body, sha, false),
        Program::Function { code, name } => (code, name, true),
    };
    let f = compiled(vm, key, code, library)?;
    let vm = &*vm;
    let lua = &vm.lua;
    // The limit is back on (`limited`) only while the script's own code runs.
    let mut unlimited = Some(Unlimited::new(lua));
    let sequence = |items: &[Bytes]| -> mlua::Result<Table> {
        let t = lua.create_table_with_capacity(items.len(), 0)?;
        for (i, v) in items.iter().enumerate() {
            t.raw_set(i + 1, lua.create_string(v)?)?;
        }
        Ok(t)
    };
    let keys = sequence(keys).map_err(internal)?;
    let argv = sequence(argv).map_err(internal)?;
    let resp3 = Cell::new(false);
    let result = lua.scope(|scope| {
        let resp3 = &resp3;
        // Runs a command; `Err`: its error text.
        let dispatch =
            move |lua: &Lua, args: Variadic<Value>| -> mlua::Result<Result<Value, String>> {
                if args.is_empty() {
                    return Ok(Err(
                        "ERR Please specify at least one argument for this redis lib call".into(),
                    ));
                }
                let mut words = Vec::with_capacity(args.len());
                for a in args.iter() {
                    match a {
                        Value::String(s) => words.push(Bytes::copy_from_slice(&s.as_bytes())),
                        Value::Integer(i) => words.push(Bytes::from(fmt_g17(*i as f64))),
                        Value::Number(n) => words.push(Bytes::from(fmt_g17(*n))),
                        _ => {
                            return Ok(Err(
                                "ERR Lua redis lib command arguments must be strings or integers"
                                    .into(),
                            ));
                        }
                    }
                }
                match call::dispatch(&mut txn.borrow_mut(), &words, read_only) {
                    Reply::Error(e) => Ok(Err(error_text(&format!("-{e}")))),
                    reply => {
                        let _unlimited = Unlimited::new(lua);
                        Ok(Ok(reply_to_lua(lua, reply, resp3.get())?.0))
                    }
                }
            };
        // `redis.call` (0), `redis.pcall` (1) and `redis.setresp` (2) of this run: one
        // function, as binding each to the run costs about as much as a short script.
        let bound = scope.create_function(move |lua, mut args: Variadic<Value>| {
            let mode = match args.first() {
                Some(Value::Integer(m)) => *m,
                _ => return Err(mlua::Error::runtime("no script is running")),
            };
            args.remove(0);
            match mode {
                0 => dispatch(lua, args)?.map_err(|e| mlua::Error::external(CallError(e))),
                1 => match dispatch(lua, args)? {
                    Ok(v) => Ok(v),
                    Err(e) => Ok(Value::Table(error_table(lua, &e)?)),
                },
                _ => {
                    if args.len() != 1 {
                        return Err(mlua::Error::runtime(
                            "redis.setresp() requires one argument.",
                        ));
                    }
                    match &args[0] {
                        Value::Integer(2) => resp3.set(false),
                        Value::Integer(3) => resp3.set(true),
                        _ => return Err(mlua::Error::runtime("RESP version must be 2 or 3.")),
                    }
                    Ok(Value::Nil)
                }
            }
        })?;
        let env = vm.environment(
            seed,
            kill,
            bound,
            (!library).then(|| (keys.clone(), argv.clone())),
        )?;
        drop(unlimited.take());
        let out: MultiValue = if library {
            // Functions get their keys and arguments as arguments, not as globals.
            let ran = match super::functions::engine::register(vm, &f) {
                Ok(ran) => ran,
                Err(e) => return Ok(Reply::err(e)),
            };
            let Some(target) = ran
                .functions
                .into_iter()
                .find(|r| r.info.name.eq_ignore_ascii_case(sha.as_bytes()))
            else {
                return Ok(Reply::err("Function not found"));
            };
            ran.to_run.call::<()>(env)?;
            vm.call_with
                .call((target.callback, vm.handler.clone(), keys, argv))?
        } else {
            // The same for every run (set when it was compiled): no run's state is in it.
            debug_assert!(f.environment().is_some_and(|e| e == env));
            vm.raw_xpcall.call((f.clone(), vm.handler.clone()))?
        };
        unlimited = Some(Unlimited::new(lua));
        let mut out = out.into_iter();
        let ok = matches!(out.next(), Some(Value::Boolean(true)));
        let v = out.next().unwrap_or(Value::Nil);
        Ok(if ok {
            lua_to_reply(&v, resp3.get())
        } else {
            failure(sha, &v)
        })
    });
    result.map_err(|e| Reply::err(format!("Error running script {sha}, {}", message(&e))))
}

/// The reply to a script that raised `v` (the error handler's table, or a bare message when
/// Lua skipped the handler: out of memory).
fn failure(sha: &str, v: &Value) -> Reply {
    let Value::Table(t) = v else {
        let msg = match v {
            Value::String(s) => s.to_string_lossy(),
            Value::Error(e) => message(e),
            _ => "execution failure".into(),
        };
        return Reply::err(format!("Error running script {sha}, {msg}"));
    };
    let err: String = match t.raw_get::<Value>("err") {
        Ok(Value::String(s)) => s.to_string_lossy(),
        _ => "ERR execution failure".into(),
    };
    let source = t.raw_get::<Option<String>>("source").ok().flatten();
    let line = match t.raw_get::<Value>("line") {
        Ok(Value::Integer(l)) => Some(l.to_string()),
        Ok(Value::Number(l)) => Some((l as i64).to_string()),
        _ => None,
    };
    match (source, line) {
        (Some(s), Some(l)) => Reply::Error(format!("{err} script: {sha}, on {s}:{l}.")),
        _ => Reply::Error(err),
    }
}

/// Redis's `__redis__err__handler`: turns any error into `{err=..., source=..., line=...}`,
/// the position being that of the innermost frame of the user's code.
fn error_handler(lua: &Lua, err: Value) -> mlua::Result<Table> {
    let t = match err {
        Value::Table(t) if matches!(t.raw_get::<Value>("err"), Ok(Value::String(_))) => t,
        Value::String(s) => error_table(lua, &format!("ERR {}", s.to_string_lossy()))?,
        Value::Error(e) => error_table(lua, &err_text(&e))?,
        other => {
            let s = lua.coerce_string(other)?.map(|s| s.to_string_lossy());
            error_table(lua, &format!("ERR {}", s.unwrap_or_default()))?
        }
    };
    for level in 1..200 {
        let frame = lua.inspect_stack(level, |d| {
            let s = d.source();
            (s.what, s.source.map(|s| s.into_owned()), d.current_line())
        });
        let Some((what, source, line)) = frame else {
            break;
        };
        if what == "C" || source.as_deref() == Some(API_CHUNK) {
            continue;
        }
        if let Some(source) = source {
            t.raw_set("source", source)?;
        }
        if let Some(line) = line {
            t.raw_set("line", line as i64)?;
        }
        break;
    }
    Ok(t)
}

/// The chunk name the Lua helpers are loaded under.
pub(super) fn api_chunk() -> &'static str {
    API_CHUNK
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Ctx, temp_store};

    fn run_with(ctx: Ctx, body: &str) -> Reply {
        let (_dir, store) = temp_store();
        let mut txn = store.txn_with(ctx);
        let kill = Arc::new(AtomicBool::new(false));
        match run(&mut txn, "sha", body.as_bytes(), &[], &[], false, &kill) {
            Ran::Done(r) => r,
            Ran::Killed(r) => panic!("killed: {r:?}"),
        }
    }

    /// A replica re-running a script for the same log entry draws the same numbers and
    /// reads the same time.
    #[test]
    fn scripts_are_deterministic_given_the_ctx() {
        let body = "return {math.random(1000000), math.random(1000000), redis.call('TIME')[1]}";
        let a = run_with(Ctx::replicated(7, 1_700_000_000_123), body);
        let b = run_with(Ctx::replicated(7, 1_700_000_000_123), body);
        let c = run_with(Ctx::replicated(8, 1_700_000_000_123), body);
        assert_eq!(a, b);
        assert_ne!(a, c);
        let Reply::Array(items) = a else {
            panic!("{a:?}")
        };
        assert_eq!(items[2], Reply::bulk("1700000000"));
    }

    /// Runs share this thread's Lua state and its globals: every way of writing to them, or
    /// to a library table, fails as in Redis 7 ("Attempt to modify a readonly table"), and
    /// nothing one script does reaches the next, not even through the raw functions.
    #[test]
    fn scripts_do_not_see_each_others_state() {
        let (_dir, store) = temp_store();
        let mut txn = store.txn();
        let kill = Arc::new(AtomicBool::new(false));
        let mut eval =
            |body: &str| match run(&mut txn, "sha", body.as_bytes(), &[], &[], false, &kill) {
                Ran::Done(r) => r,
                Ran::Killed(r) => panic!("killed: {r:?}"),
            };
        let attempts = [
            "rawset(_G, 'leak', 1)",
            "leak = 1",
            "_G.leak = 1",
            "KEYS = {'planted'}",
            "string.leak = 2",
            "table.leak = 3",
            "math.leak = 4",
            "bit.leak = 5",
            "redis.leak = 6",
            "cjson.leak = 7",
            "cmsgpack.leak = 8",
            "math.random = function() return 7 end",
            "string.upper = function() return 'planted' end",
            "rawset(string, 'upper', function() return 'planted' end)",
            "table.insert(_G, 'planted')",
            "table.insert(string, 'planted')",
            "table.sort(math)",
            "table.remove(redis)",
            "setmetatable(_G, nil)",
            "setmetatable(string, {__index = function() return 'planted' end})",
            "getmetatable('').__index = {}",
        ];
        let plant = attempts
            .iter()
            .map(|a| format!("if pcall(function() {a} end) then table.insert(ok, {a:?}) end"))
            .collect::<Vec<_>>()
            .join("\n");
        let plant = format!("local ok = {{}}\n{plant}\ncollectgarbage('stop')\nreturn ok");
        // Each attempt is refused; whatever is not must not be seen by the next run.
        assert_eq!(eval(&plant), Reply::Array(vec![]));
        let look = "local mt = getmetatable(_G) \
            return {tostring(rawget(_G, 'leak')), tostring(string.leak), tostring(table.leak), \
              tostring(math.leak), tostring(bit.leak), tostring(redis.leak), \
              tostring(cjson.leak), tostring(cmsgpack.leak), tostring(mt), \
              tostring(rawget(_G, 1)), tostring(rawget(string, 1)), tostring(KEYS[1]), \
              ('x'):upper(), string.upper('y'), tostring(math.random(1000000) ~= 7)}";
        let expect = Reply::Array(
            [
                "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil", "nil",
                "X", "Y", "true",
            ]
            .map(Reply::bulk)
            .to_vec(),
        );
        assert_eq!(eval(look), expect);
        // The same script again (its compiled function is cached) starts clean too.
        assert_eq!(eval(&plant), Reply::Array(vec![]));
        assert_eq!(eval(look), expect);
        // The collector runs again after a script stopped it.
        // (200,000 empty tables are about 8 MB of garbage; a live heap of well under 1 MB
        // lets the collector keep far less of it.)
        let churn = "local before = collectgarbage('count') \
            for i = 1, 200000 do local t = {} end \
            return tostring(collectgarbage('count') - before < 4000)";
        assert_eq!(eval(churn), Reply::bulk("true"));
    }

    /// Reading through the proxies hands out the libraries' values: none may be a table
    /// (or full userdata) of its own, or every run could write to it unchecked.
    #[test]
    fn no_library_holds_a_table_a_script_could_write() {
        let reply = run_with(
            Ctx::replicated(1, 1_700_000_000_000),
            "local found = {} \
             for name, lib in pairs(_G) do \
               if type(lib) == 'table' and name ~= 'KEYS' and name ~= 'ARGV' and name ~= '_G' then \
                 for k, v in pairs(lib) do \
                   if type(v) == 'table' or (type(v) == 'userdata' and v ~= cjson.null) then \
                     table.insert(found, name .. '.' .. tostring(k)) \
                   end \
                 end \
               end \
             end \
             return found",
        );
        assert_eq!(reply, Reply::Array(vec![]));
    }

    /// The raw functions read through the read-only globals and libraries, as Redis's
    /// (whose tables are read-only themselves, not proxies).
    #[test]
    fn the_read_only_tables_read_as_plain_ones() {
        let reply = run_with(
            Ctx::replicated(1, 1_700_000_000_000),
            "local n, m = 0, 0 \
             for _ in pairs(string) do n = n + 1 end \
             for k, v in next, _G do if k == 'tostring' then m = m + 1 end end \
             return {n, m, type(rawget(_G, 'redis')), type(rawget(math, 'floor')), \
               type(getmetatable(string)), type(getmetatable(setmetatable({}, {})))}",
        );
        assert_eq!(
            reply,
            Reply::Array(vec![
                Reply::Int(15),
                Reply::Int(1),
                Reply::bulk("table"),
                Reply::bulk("function"),
                Reply::bulk("nil"),
                Reply::bulk("table"),
            ])
        );
    }

    #[test]
    fn a_killed_script_leaves_no_writes() {
        let (_dir, store) = temp_store();
        let mut txn = store.txn();
        let kill = Arc::new(AtomicBool::new(true));
        let body = b"redis.call('SET', 'k', 'v'); while true do end";
        assert!(matches!(
            run(&mut txn, "sha", body, &[], &[], false, &kill),
            Ran::Killed(_)
        ));
        assert!(txn.is_empty());
    }
}
