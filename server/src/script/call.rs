//! `redis.call` / `redis.pcall`: runs one of this server's commands against the script's write
//! set, with Redis's checks and error texts for commands called from scripts.

use bytes::Bytes;

use crate::cmd::blocking::Outcome;
use crate::cmd::{self, Kind};
use crate::resp::Reply;
use crate::store::{MAX_KEY_LEN, Txn};

/// Commands a script may not run (Redis's `noscript` commands, and those that make no sense
/// inside one).
const NOSCRIPT: &[&str] = &[
    "eval",
    "evalsha",
    "eval_ro",
    "evalsha_ro",
    "script",
    "function",
    "fcall",
    "fcall_ro",
    "multi",
    "exec",
    "discard",
    "watch",
    "unwatch",
    "subscribe",
    "psubscribe",
    "unsubscribe",
    "punsubscribe",
    "hello",
    "auth",
    "quit",
    "reset",
    "shutdown",
    "client",
    "config",
];

/// Runs `args` (a command and its arguments) inside a script. A command that fails leaves
/// none of its writes; the others' stay.
pub fn dispatch(txn: &mut Txn<'_>, args: &[Bytes], read_only: bool) -> Reply {
    // The script's commands all read one snapshot (a read-only script sees one moment).
    txn.pin_snapshot();
    let Some(c) = cmd::lookup(&args[0]) else {
        return Reply::err("Unknown Redis command called from script");
    };
    if !c.arity_ok(args.len()) {
        return Reply::err("Wrong number of args calling Redis command from script");
    }
    if NOSCRIPT.contains(&c.name) {
        return Reply::err("This Redis command is not allowed from script");
    }
    if let Some(pos) = cmd::index(&args[0])
        && let Some(refused) = super::caller::refusal(pos, c, args)
    {
        return refused;
    }
    if matches!(c.name, "xread" | "xreadgroup")
        && args
            .iter()
            .take_while(|a| !a.eq_ignore_ascii_case(b"STREAMS"))
            .any(|a| a.eq_ignore_ascii_case(b"BLOCK"))
    {
        return Reply::err(format!(
            "{} command is not allowed with BLOCK option from scripts",
            c.name
        ));
    }
    if c.key_positions(args.len())
        .any(|i| args[i].len() > MAX_KEY_LEN)
    {
        return Reply::err(format!("key longer than {MAX_KEY_LEN} bytes"));
    }
    let writes = matches!(
        c.kind,
        Kind::Write(_) | Kind::Exclusive(_) | Kind::Blocking(_)
    ) && c.name != "xread";
    if read_only && writes {
        return Reply::err("Write commands are not allowed from read-only scripts.");
    }
    txn.begin_nested();
    let r = match c.kind {
        Kind::Read(f) | Kind::Write(f) | Kind::Exclusive(f) => f(txn, args),
        // A blocking pop never blocks in a script: it answers as on a timeout (Redis 7.2).
        Kind::Blocking(f) => f(txn, args).map(|o| match o {
            Outcome::Done(r) => r,
            Outcome::Block(b) => b.op.timeout_reply(),
        }),
        Kind::Conn if c.name == "select" => cmd::db_index(txn.store(), &args[1]).map(|db| {
            txn.select(db);
            Reply::Ok
        }),
        Kind::Conn => Ok(conn_command(c.name, args)),
    };
    // Noted once run, so in the database it left selected, as Redis's MONITOR shows it.
    txn.note_script_call(args);
    match r {
        Ok(r) => {
            txn.end_nested();
            r
        }
        Err(e) => {
            txn.rollback();
            e
        }
    }
}

/// The connection commands a script may run.
fn conn_command(name: &str, a: &[Bytes]) -> Reply {
    match name {
        "ping" => match a.get(1) {
            Some(m) if a.len() == 2 => Reply::Bulk(m.clone()),
            None => Reply::Status("PONG".into()),
            Some(_) => crate::cmd::wrong_arity("ping"),
        },
        "echo" => Reply::Bulk(a[1].clone()),
        other => Reply::err(format!(
            "bloomkv-server does not run '{other}' from scripts"
        )),
    }
}
