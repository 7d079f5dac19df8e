//! `FUNCTION` and `FCALL` / `FCALL_RO`: arguments, checks and replies as Redis 7.0's; the
//! libraries themselves are `script::functions`.
//!
//! `FUNCTION` runs as an exclusive command (its writing subcommands change what every
//! `FCALL` runs); the subcommands that do not write (`LIST`, `DUMP`, `STATS`, `KILL`,
//! `HELP`, see [`writes`]) are run by the dispatcher without the lock, and in cluster mode
//! without the log, so `KILL` and `STATS` answer while a function holds every writer out.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use bytes::Bytes;

use super::{parse_i64, wrong_arity};
use crate::resp::Reply;
use crate::script::functions::library::Flags;
use crate::script::functions::{self, Policy, registry};
use crate::script::{Scripts, run};
use crate::store::scripts::Program;
use crate::store::{R, Txn};

/// Each subcommand's Redis arity (`n`: exactly, `-n`: at least, the command's name
/// counted).
const SUBCOMMANDS: &[(&str, i32)] = &[
    ("load", -3),
    ("delete", 3),
    ("flush", -2),
    ("list", -2),
    ("dump", 2),
    ("restore", -3),
    ("stats", 2),
    ("kill", 2),
    ("help", 2),
];

/// True for a `FUNCTION` request that changes the libraries (`LOAD`, `DELETE`, `FLUSH`,
/// `RESTORE`): it runs locked and, in cluster mode, through the log. The others only read.
pub fn writes(a: &[Bytes]) -> bool {
    a.get(1).is_some_and(|s| {
        let s = s.to_ascii_lowercase();
        matches!(s.as_slice(), b"load" | b"delete" | b"flush" | b"restore")
    })
}

/// True for the `FUNCTION` requests Redis answers while a script is busy (`KILL`, `STATS`).
pub fn allowed_when_busy(a: &[Bytes]) -> bool {
    a.get(1)
        .is_some_and(|s| s.eq_ignore_ascii_case(b"kill") || s.eq_ignore_ascii_case(b"stats"))
}

fn syntax_error(sub: &[u8]) -> Reply {
    Reply::err(format!(
        "unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
        String::from_utf8_lossy(sub)
    ))
}

/// `FUNCTION <subcommand> ...`
pub fn function(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let sub = a[1].to_ascii_lowercase();
    let Some(&(name, arity)) = SUBCOMMANDS.iter().find(|(n, _)| n.as_bytes() == sub) else {
        let shown: String = String::from_utf8_lossy(&a[1]).chars().take(128).collect();
        return Err(Reply::err(format!(
            "unknown subcommand '{shown}'. Try FUNCTION HELP."
        )));
    };
    let argc_ok = if arity >= 0 {
        a.len() == arity as usize
    } else {
        a.len() >= arity.unsigned_abs() as usize
    };
    if !argc_ok {
        return Err(wrong_arity(&format!("function|{name}")));
    }
    match name {
        "load" => load(txn, a),
        "delete" => {
            functions::delete(txn, &a[2])?;
            Ok(Reply::Ok)
        }
        "flush" => {
            if a.len() > 3 {
                return Err(syntax_error(&a[1]));
            }
            let mode_ok = a.get(2).is_none_or(|m| {
                m.eq_ignore_ascii_case(b"sync") || m.eq_ignore_ascii_case(b"async")
            });
            if !mode_ok {
                return Err(Reply::err("FUNCTION FLUSH only supports SYNC|ASYNC option"));
            }
            registry::clear(txn);
            Ok(Reply::Ok)
        }
        "list" => list(txn, a),
        "dump" => {
            let libs = registry::libraries(txn)?;
            let payload = functions::dump::dump(libs.iter().map(|l| &l.code[..]));
            Ok(Reply::bulk(payload))
        }
        "restore" => restore(txn, a),
        "stats" => stats(txn, txn.store().scripts()),
        "kill" => Ok(crate::script::kill(txn.store().scripts(), true)),
        _ => Ok(Reply::Array(
            HELP.iter()
                .map(|l| Reply::Status((*l).to_string()))
                .collect(),
        )),
    }
}

fn load(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut replace = false;
    for opt in &a[2..a.len() - 1] {
        if opt.eq_ignore_ascii_case(b"replace") {
            replace = true;
        } else {
            return Err(Reply::err(format!(
                "Unknown option given: {}",
                String::from_utf8_lossy(opt)
            )));
        }
    }
    let name = functions::load(txn, &a[a.len() - 1], replace)?;
    Ok(Reply::bulk(name))
}

fn restore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    if a.len() > 4 {
        return Err(syntax_error(&a[1]));
    }
    let policy = match a.get(3).map(|p| p.to_ascii_lowercase()).as_deref() {
        None | Some(b"append") => Policy::Append,
        Some(b"replace") => Policy::Replace,
        Some(b"flush") => Policy::Flush,
        Some(_) => {
            return Err(Reply::err(
                "Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ));
        }
    };
    functions::restore(txn, &a[2], policy)?;
    Ok(Reply::Ok)
}

fn list(txn: &Txn<'_>, a: &[Bytes]) -> R {
    let (mut with_code, mut pattern) = (false, None);
    let mut i = 2;
    while i < a.len() {
        if !with_code && a[i].eq_ignore_ascii_case(b"withcode") {
            with_code = true;
        } else if pattern.is_none() && a[i].eq_ignore_ascii_case(b"libraryname") {
            let Some(p) = a.get(i + 1) else {
                return Err(Reply::err("library name argument was not given"));
            };
            pattern = Some(p);
            i += 1;
        } else {
            return Err(Reply::err(format!(
                "Unknown argument {}",
                String::from_utf8_lossy(&a[i])
            )));
        }
        i += 1;
    }
    let mut out = Vec::new();
    for lib in registry::libraries(txn)? {
        if pattern.is_some_and(|p| !crate::glob::matches(p, &lib.name)) {
            continue;
        }
        let functions = lib
            .functions
            .iter()
            .map(|f| {
                Reply::Map(vec![
                    (Reply::bulk("name"), Reply::bulk(f.name.clone())),
                    (
                        Reply::bulk("description"),
                        f.description.clone().map_or(Reply::Nil, Reply::bulk),
                    ),
                    (
                        Reply::bulk("flags"),
                        Reply::Set(f.flags.names().map(|n| Reply::Status(n.into())).collect()),
                    ),
                ])
            })
            .collect();
        let mut m = vec![
            (Reply::bulk("library_name"), Reply::bulk(lib.name.clone())),
            (Reply::bulk("engine"), Reply::bulk("LUA")),
            (Reply::bulk("functions"), Reply::Array(functions)),
        ];
        if with_code {
            m.push((Reply::bulk("library_code"), Reply::Bulk(lib.code.clone())));
        }
        out.push(Reply::Map(m));
    }
    Ok(Reply::Array(out))
}

fn stats(txn: &Txn<'_>, scripts: &Scripts) -> R {
    // Redis keeps FUNCTION STATS for functions: while an EVAL runs it names SCRIPT KILL.
    if scripts.eval_running() {
        return Err(Reply::Error(crate::script::BUSY_EVAL.into()));
    }
    let running = match scripts.running_function() {
        None => Reply::Nil,
        Some(f) => Reply::Map(vec![
            (Reply::bulk("name"), Reply::bulk(f.name)),
            (
                Reply::bulk("command"),
                Reply::Array(f.command.into_iter().map(Reply::Bulk).collect()),
            ),
            (
                Reply::bulk("duration_ms"),
                Reply::Int(i64::try_from(f.duration.as_millis()).unwrap_or(i64::MAX)),
            ),
        ]),
    };
    let (libs, functions) = registry::counts(txn)?;
    Ok(Reply::Map(vec![
        (Reply::bulk("running_script"), running),
        (
            Reply::bulk("engines"),
            Reply::Map(vec![(
                Reply::bulk("LUA"),
                Reply::Map(vec![
                    (Reply::bulk("libraries_count"), Reply::Int(libs as i64)),
                    (Reply::bulk("functions_count"), Reply::Int(functions as i64)),
                ]),
            )]),
        ),
    ]))
}

/// `FCALL function numkeys [key ...] [arg ...]`
pub fn fcall(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    fcall_generic(txn, a, false, true)
}

/// `FCALL_RO function numkeys [key ...] [arg ...]`: only functions flagged `no-writes`.
pub fn fcall_ro(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    fcall_generic(txn, a, true, true)
}

/// `FCALL` applied from the replicated log (cluster mode): as [`fcall`], but `FUNCTION
/// KILL` cannot stop it, since every node must decide alike.
pub fn fcall_replicated(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    fcall_generic(txn, a, false, false)
}

fn fcall_generic(txn: &mut Txn<'_>, a: &[Bytes], ro: bool, killable: bool) -> R {
    let Some((lib, f)) = registry::function(txn, &a[1])? else {
        return Err(Reply::err("Function not found"));
    };
    let numkeys = parse_i64(&a[2]).ok_or_else(|| Reply::err("Bad number of keys provided"))?;
    if numkeys > (a.len() - 3) as i64 {
        return Err(Reply::err(
            "Number of keys can't be greater than number of args",
        ));
    }
    if numkeys < 0 {
        return Err(Reply::err("Number of keys can't be negative"));
    }
    let no_writes = f.flags.has(Flags::NO_WRITES);
    if ro && !no_writes {
        return Err(Reply::err(
            "Can not execute a script with write flag using *_ro command.",
        ));
    }
    let header = functions::library::header(&lib.code).map_err(Reply::err)?;
    let keys = &a[3..3 + numkeys as usize];
    let argv = &a[3 + numkeys as usize..];
    let name = String::from_utf8_lossy(&f.name).into_owned();
    let scripts = txn.store().scripts();
    // A replicated run is not registered: FUNCTION KILL on one node must not make it differ.
    let guard = killable.then(|| {
        scripts.start_program(
            !no_writes,
            Program::Function {
                name: f.name.clone(),
                command: a.to_vec(),
            },
        )
    });
    let unkillable = Arc::new(AtomicBool::new(false));
    let kill = guard.as_ref().map_or(&unkillable, |g| &g.kill);
    let program = run::Program::Function {
        code: &lib.code[header.code_start..],
        name: &name,
    };
    match run::run_program(txn, program, keys, argv, no_writes, kill) {
        run::Ran::Done(r) => Ok(r),
        run::Ran::Killed(r) => {
            crate::log::warn("Lua script killed by user with FUNCTION KILL.");
            Err(r)
        }
    }
}

const HELP: &[&str] = &[
    "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
    "HELP",
    "    Prints this help.",
];
