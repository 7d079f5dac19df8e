//! Lua scripting, as Redis 7: `EVAL`, `EVALSHA`, `EVAL_RO`, `EVALSHA_RO` and `SCRIPT` (see
//! docs/SERVER.md, "Scripting").
//!
//! * [`cache`]: the scripts by SHA1, and the scripts running now (`SCRIPT KILL`).
//! * `run`: one run in a fresh sandboxed Lua 5.1 state, `redis.call` bound to the write set.
//! * `sandbox`: the globals a script sees. * `call`: commands called from scripts.
//! * `convert`: replies to Lua values and back. * [`bit`]: the `bit` library. * `cjson`,
//!   `cmsgpack`: the JSON and MessagePack libraries.
//!
//! `EVAL` runs as an exclusive command: every other writer is locked out while it runs, and
//! its writes commit as one batch with the rest of its write set (atomic for readers and
//! across a crash). An error raised part-way keeps the writes made before it, as in Redis; a
//! killed script keeps none. `EVAL_RO` runs as a read command against one snapshot, beside
//! writers. Scripts depend on nothing but the data and the command's `Ctx` (`math.random`
//! draws from its randomness, `TIME` reads its clock), so a replica re-running one decides
//! the same way.

pub mod bit;
mod call;
pub(crate) mod caller;
mod cjson;
mod cmsgpack;
mod convert;
pub mod functions;
mod located;
pub(crate) mod run;
mod sandbox;

use bytes::Bytes;

use crate::store::scripts as cache;
pub use crate::store::scripts::Scripts;

use crate::cmd::{NOT_INT, parse_i64};
use crate::resp::Reply;
use crate::store::{R, Txn};

/// Redis's reply to `EVALSHA` of a script the cache does not hold.
pub const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

/// `EVAL script numkeys [key ...] [arg ...]`
pub fn eval(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    eval_generic(txn, a, false, false, true)
}

/// `EVALSHA sha1 numkeys [key ...] [arg ...]`
pub fn evalsha(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    eval_generic(txn, a, true, false, true)
}

/// `EVAL_RO script numkeys [key ...] [arg ...]`: write commands are refused.
pub fn eval_ro(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    eval_generic(txn, a, false, true, true)
}

/// `EVALSHA_RO sha1 numkeys [key ...] [arg ...]`
pub fn evalsha_ro(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    eval_generic(txn, a, true, true, true)
}

/// `EVAL` applied from the replicated log (cluster mode): as [`eval`], but `SCRIPT KILL`
/// cannot stop it, since every node must decide alike. The script sees the entry's time
/// and randomness, so every node runs it to the same writes and reply.
pub fn eval_replicated(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    eval_generic(txn, a, false, false, false)
}

/// The body `EVALSHA` names, if this node's cache holds it: in cluster mode the node a
/// client sent `EVALSHA` to sends `EVAL` with the body through the log instead, so that
/// applying it never depends on another node's cache.
pub fn body_for_sha(scripts: &Scripts, sha: &[u8]) -> Option<Bytes> {
    scripts.get(sha)
}

/// In cluster mode, `SCRIPT LOAD` through a node also puts the script in that node's cache
/// at once, beside sending the load through the log: the client's next `EVALSHA` through
/// the same node can arrive before the node has applied the load, and must find it (the
/// cache is keyed by the body's digest, so an early entry can never be a wrong one).
pub fn cache_before_replicating(scripts: &Scripts, a: &[Bytes]) {
    if a.len() == 3
        && a[0].eq_ignore_ascii_case(b"script")
        && a[1].eq_ignore_ascii_case(b"load")
        && run::compile(&a[2]).is_ok()
    {
        scripts.insert(cache::sha1_hex(&a[2]), a[2].clone());
    }
}

/// How long a script may run before other clients' writes are answered `BUSY` instead of
/// waiting for it (Redis's `busy-reply-threshold` default).
pub const BUSY_THRESHOLD: std::time::Duration = std::time::Duration::from_secs(5);

/// Redis's `BUSY` reply while an `EVAL` runs (`SCRIPT KILL` stops it).
pub const BUSY_EVAL: &str =
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";

/// Redis's `BUSY` reply while a function runs (`FUNCTION KILL` stops it).
pub const BUSY_FUNCTION: &str =
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";

/// Redis's `BUSY` reply, when a script that may write has run past [`BUSY_THRESHOLD`]; the
/// text names the command that kills it.
pub fn busy(scripts: &Scripts) -> Option<Reply> {
    scripts
        .busy()
        .filter(|(t, _)| *t >= BUSY_THRESHOLD)
        .map(|(_, function)| Reply::Error(if function { BUSY_FUNCTION } else { BUSY_EVAL }.into()))
}

/// The reply to `SCRIPT KILL` (`functions` false) or `FUNCTION KILL`: each stops only its
/// own kind of script, as in Redis, and names the other command when only the other kind
/// runs.
pub fn kill(scripts: &Scripts, functions: bool) -> Reply {
    match scripts.kill_kind(functions) {
        cache::Killed::Some => Reply::Ok,
        cache::Killed::NotBusy => Reply::Error("NOTBUSY No scripts in execution right now.".into()),
        cache::Killed::OtherKind if functions => Reply::Error(BUSY_EVAL.into()),
        cache::Killed::OtherKind => Reply::Error(BUSY_FUNCTION.into()),
    }
}

/// True for the commands that run scripts.
pub fn is_script_command(name: &str) -> bool {
    matches!(
        name,
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    )
}

fn eval_generic(
    txn: &mut Txn<'_>,
    a: &[Bytes],
    by_sha: bool,
    read_only: bool,
    killable: bool,
) -> R {
    if by_sha && a[1].len() != 40 {
        return Err(Reply::Error(NOSCRIPT.into()));
    }
    let numkeys = parse_i64(&a[2]).ok_or_else(|| Reply::err(NOT_INT))?;
    if numkeys > (a.len() - 3) as i64 {
        return Err(Reply::err(
            "Number of keys can't be greater than number of args",
        ));
    }
    if numkeys < 0 {
        return Err(Reply::err("Number of keys can't be negative"));
    }
    let scripts = txn.store().scripts();
    let (sha, body) = if by_sha {
        match scripts.get(&a[1]) {
            // Found under `a[1]`, 40 hex digits: its name, without hashing the body again.
            Some(body) => (
                cache::key(&a[1]).unwrap_or_else(|| cache::sha1_hex(&body)),
                body,
            ),
            None => return Err(Reply::Error(NOSCRIPT.into())),
        }
    } else {
        let sha = cache::sha1_hex(&a[1]);
        if !scripts.contains(&sha) {
            run::compile(&a[1])?;
            scripts.insert(sha, a[1].clone());
        }
        (sha, a[1].clone())
    };
    let sha = String::from_utf8_lossy(&sha).into_owned();
    let keys = &a[3..3 + numkeys as usize];
    let argv = &a[3 + numkeys as usize..];
    // A replicated run is not registered: SCRIPT KILL on one node must not make it differ.
    let guard = killable.then(|| scripts.start(!read_only));
    let unkillable = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let kill = guard.as_ref().map_or(&unkillable, |g| &g.kill);
    match run::run(txn, &sha, &body, keys, argv, read_only, kill) {
        run::Ran::Done(r) => Ok(r),
        run::Ran::Killed(r) => {
            crate::log::warn("Lua script killed by user with SCRIPT KILL.");
            Err(r)
        }
    }
}

/// The `SCRIPT` command: `LOAD`, `EXISTS`, `FLUSH`, `KILL`, `HELP`.
pub fn script(scripts: &Scripts, a: &[Bytes]) -> Reply {
    let sub = a[1].to_ascii_uppercase();
    match (sub.as_slice(), a.len()) {
        (b"HELP", 2) => Reply::Array(
            HELP.iter()
                .map(|l| Reply::Status((*l).to_string()))
                .collect(),
        ),
        (b"LOAD", 3) => match run::compile(&a[2]) {
            Ok(()) => {
                let sha = cache::sha1_hex(&a[2]);
                scripts.insert(sha, a[2].clone());
                Reply::bulk(sha.to_vec())
            }
            Err(e) => e,
        },
        (b"EXISTS", n) if n >= 3 => Reply::Array(
            a[2..]
                .iter()
                .map(|s| Reply::Int(i64::from(scripts.contains(s))))
                .collect(),
        ),
        (b"FLUSH", 2) => {
            scripts.flush();
            Reply::Ok
        }
        (b"FLUSH", 3) => {
            let mode = a[2].to_ascii_uppercase();
            if mode == b"SYNC" || mode == b"ASYNC" {
                scripts.flush();
                Reply::Ok
            } else {
                Reply::err("SCRIPT FLUSH only support SYNC|ASYNC option")
            }
        }
        (b"KILL", 2) => kill(scripts, false),
        _ => {
            let name: String = String::from_utf8_lossy(&a[1]).chars().take(128).collect();
            Reply::err(format!("unknown subcommand '{name}'. Try SCRIPT HELP."))
        }
    }
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script (its writes are discarded).",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Prints this help.",
];
