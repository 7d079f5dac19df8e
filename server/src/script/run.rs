//! Running one script: a fresh, sandboxed Lua 5.1 state per run, `redis.*` bound to the
//! command's write set, Redis's error texts.
//!
//! A fresh state per run (about 40 µs to build) means nothing a script does survives it:
//! there is no shared interpreter whose globals or library tables a script could change for
//! the next one, and its memory is returned at once. Globals are still guarded as in Redis 7
//! (reading an unknown global or creating one is an error), so scripts that run on Redis run
//! here unchanged.

use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use mlua::{
    Function, HookTriggers, Lua, LuaOptions, MultiValue, StdLib, Table, Value, Variadic, VmState,
};

use mlua::chunk::ChunkMode;

use super::call;
use super::convert::{error_table, error_text, fmt_g17, lua_to_reply, reply_to_lua};
use crate::resp::Reply;
use crate::store::Txn;

/// Most memory one script's Lua state may hold.
pub const MEMORY_LIMIT: usize = 1 << 30;

/// Lua instructions between two looks at the kill switch.
const KILL_CHECK_EVERY: u32 = 1000;

/// The chunk name of the user's script (Lua prints it as `user_script`), as in Redis.
const CHUNK: &str = "@user_script";

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
    let lua = Lua::new_with(StdLib::NONE, LuaOptions::default()).map_err(internal)?;
    load(&lua, &body[start..]).map(|_| ())
}

fn load(lua: &Lua, code: &[u8]) -> Result<Function, Reply> {
    lua.load(code)
        .set_name(CHUNK)
        .set_mode(ChunkMode::Text)
        .into_function()
        .map_err(|e| {
            Reply::err(format!(
                "Error compiling script (new function): {}",
                message(&e)
            ))
        })
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
    let (start, no_writes) = match shebang(body) {
        Ok(s) => s,
        Err(e) => return Ran::Done(e),
    };
    let read_only = read_only || no_writes;
    let seed = txn.rand_u64();
    // The script's commands run inside one savepoint: a killed script leaves nothing.
    txn.begin_nested();
    let cell = RefCell::new(&mut *txn);
    let outcome = execute(
        &cell,
        sha,
        &body[start..],
        keys,
        argv,
        read_only,
        seed,
        kill,
    );
    let txn = cell.into_inner();
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

#[allow(clippy::too_many_arguments)]
fn execute(
    txn: &RefCell<&mut Txn<'_>>,
    sha: &str,
    code: &[u8],
    keys: &[Bytes],
    argv: &[Bytes],
    read_only: bool,
    seed: u64,
    kill: &Arc<AtomicBool>,
) -> Result<Reply, Reply> {
    let lua = Lua::new_with(
        StdLib::TABLE | StdLib::STRING | StdLib::MATH,
        LuaOptions::default(),
    )
    .map_err(internal)?;
    lua.set_memory_limit(MEMORY_LIMIT).map_err(internal)?;
    let globals = lua.globals();
    let raw_xpcall: Function = globals.raw_get("xpcall").map_err(internal)?;
    super::sandbox::prepare(&lua, &globals, seed, Arc::clone(kill)).map_err(internal)?;
    let sequence = |items: &[Bytes]| -> mlua::Result<Table> {
        let t = lua.create_table_with_capacity(items.len(), 0)?;
        for (i, v) in items.iter().enumerate() {
            t.raw_set(i + 1, lua.create_string(v)?)?;
        }
        Ok(t)
    };
    globals
        .raw_set("KEYS", sequence(keys).map_err(internal)?)
        .map_err(internal)?;
    globals
        .raw_set("ARGV", sequence(argv).map_err(internal)?)
        .map_err(internal)?;
    let f = load(&lua, code)?;
    let resp3 = Cell::new(false);
    let handler = lua.create_function(error_handler).map_err(internal)?;
    let kill_hook = Arc::clone(kill);
    lua.set_hook(
        HookTriggers::new().every_nth_instruction(KILL_CHECK_EVERY),
        move |_, _| {
            if kill_hook.load(Ordering::Relaxed) {
                Err(mlua::Error::runtime(
                    "Script killed by user with SCRIPT KILL...",
                ))
            } else {
                Ok(VmState::Continue)
            }
        },
    )
    .map_err(internal)?;
    let result = lua.scope(|scope| {
        // Runs a command; `Err`: its error text.
        let dispatch = |lua: &Lua, args: Variadic<Value>| -> mlua::Result<Result<Value, String>> {
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
                reply => Ok(Ok(reply_to_lua(lua, reply, resp3.get())?.0)),
            }
        };
        // Both are Rust functions, as in Redis: a `return redis.call(...)` is then no tail
        // call, and the error's position is the script's line.
        let rcall = scope.create_function(move |lua, args: Variadic<Value>| {
            dispatch(lua, args)?.map_err(|e| mlua::Error::external(CallError(e)))
        })?;
        let rpcall = scope.create_function(move |lua, args: Variadic<Value>| {
            match dispatch(lua, args)? {
                Ok(v) => Ok(v),
                Err(e) => Ok(Value::Table(error_table(lua, &e)?)),
            }
        })?;
        let setresp = scope.create_function(|_, args: Variadic<Value>| {
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
            Ok(())
        })?;
        super::sandbox::bind_calls(&lua, &globals, rcall, rpcall, setresp)?;
        let out: MultiValue = raw_xpcall.call((f, handler))?;
        let mut out = out.into_iter();
        let ok = matches!(out.next(), Some(Value::Boolean(true)));
        let v = out.next().unwrap_or(Value::Nil);
        Ok(if ok {
            lua_to_reply(&v)
        } else {
            failure(sha, &v)
        })
    });
    lua.remove_hook();
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
