//! `ACL` for the one user this server has: `default`, allowed every command, key and
//! channel, whose password is `--requirepass` (none: `nopass`).
//!
//! The questions clients and tools ask are answered as Redis 7 answers them for that user
//! (`WHOAMI`, `USERS`, `LIST`, `GETUSER`, `CAT`, `DRYRUN`, `GENPASS`, and `DELUSER`, which
//! finds no user to remove); what would create or change users, or load and save an ACL
//! file, is refused with an error naming how this server is configured instead. Failed authentications are not recorded, so
//! `ACL LOG` is refused rather than answered with an empty log.

use std::io::Read as _;

use bytes::Bytes;
use sha2::{Digest, Sha256};

use super::Conn;
use crate::cmd::{self, Command, Kind, parse_i64};
use crate::resp::Reply;

/// Redis 7's command categories, in the order `ACL CAT` lists them.
const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

const HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "WHOAMI",
    "    The user this connection is authenticated as (always 'default').",
    "USERS",
    "    The users: 'default'.",
    "LIST",
    "    The users' rules, in Redis's ACL file syntax.",
    "GETUSER <username>",
    "    A user's flags, password hashes, commands, keys and channels.",
    "CAT [<category>]",
    "    The command categories, or the commands of one.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Whether the user may run the command ('OK', or why not).",
    "GENPASS [<bits>]",
    "    A random password of <bits> bits (default 256), in hex.",
    "HELP",
    "    This help.",
    "DELUSER <username> [<username> ...]",
    "    Removes nothing: there is no user but 'default', which cannot be removed.",
    "(SETUSER, LOAD, SAVE and LOG are refused: the one user is 'default',",
    "its password --requirepass or CONFIG SET requirepass.)",
];

const ONE_USER: &str = "bloomkv-server has one user, 'default', allowed everything; its password is \
     --requirepass (CONFIG SET requirepass changes it)";

impl Conn {
    /// `ACL subcommand ...`
    pub(super) fn acl(&self, a: &[Bytes]) -> Reply {
        let sub = a[1].to_ascii_uppercase();
        match (&sub[..], a.len()) {
            (b"WHOAMI", 2) => Reply::bulk("default"),
            (b"USERS", 2) => Reply::Array(vec![Reply::bulk("default")]),
            (b"LIST", 2) => Reply::Array(vec![Reply::bulk(format!(
                "user default on {} ~* &* +@all",
                self.password_rule()
            ))]),
            (b"GETUSER", 3) => self.getuser(&a[2]),
            (b"CAT", 2) => Reply::Array(CATEGORIES.iter().map(|c| Reply::bulk(*c)).collect()),
            (b"CAT", 3) => category(&a[2]),
            (b"DRYRUN", n) if n >= 4 => dryrun(&a[2], &a[3..]),
            (b"GENPASS", 2 | 3) => genpass(a.get(2)),
            (b"HELP", 2) => Reply::Array(HELP.iter().map(|l| Reply::Status((*l).into())).collect()),
            // No user but `default`, which cannot go: none of the names is removed.
            (b"DELUSER", n) if n >= 3 => {
                if a[2..].iter().any(|u| u.as_ref() == b"default") {
                    Reply::err("The 'default' user cannot be removed")
                } else {
                    Reply::Int(0)
                }
            }
            (b"SETUSER" | b"LOAD" | b"SAVE" | b"LOG", _) => Reply::err(format!(
                "ACL {} is not supported: {ONE_USER}",
                String::from_utf8_lossy(&sub)
            )),
            (
                b"WHOAMI" | b"USERS" | b"LIST" | b"GETUSER" | b"CAT" | b"DRYRUN" | b"GENPASS"
                | b"HELP",
                _,
            ) => Reply::err(format!(
                "wrong number of arguments for 'acl|{}' command",
                String::from_utf8_lossy(&a[1]).to_ascii_lowercase()
            )),
            _ => Reply::err(format!(
                "unknown subcommand '{}'. Try ACL HELP.",
                String::from_utf8_lossy(&a[1])
            )),
        }
    }

    /// The SHA-256 of the password in hex, or `None` without one.
    fn password_hash(&self) -> Option<String> {
        self.shared.requirepass.read().as_ref().map(|p| {
            Sha256::digest(p.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        })
    }

    /// `nopass` or `#<sha256>`, as ACL LIST writes a user's password.
    fn password_rule(&self) -> String {
        self.password_hash()
            .map_or_else(|| "nopass".into(), |h| format!("#{h}"))
    }

    fn getuser(&self, user: &[u8]) -> Reply {
        if user != b"default" {
            return Reply::Nil;
        }
        let hash = self.password_hash();
        let mut flags = vec![Reply::bulk("on")];
        if hash.is_none() {
            flags.push(Reply::bulk("nopass"));
        }
        Reply::Map(vec![
            (Reply::bulk("flags"), Reply::Array(flags)),
            (
                Reply::bulk("passwords"),
                Reply::Array(hash.into_iter().map(Reply::bulk).collect()),
            ),
            (Reply::bulk("commands"), Reply::bulk("+@all")),
            (Reply::bulk("keys"), Reply::bulk("~*")),
            (Reply::bulk("channels"), Reply::bulk("&*")),
            (Reply::bulk("selectors"), Reply::Array(Vec::new())),
        ])
    }
}

/// Whether command `c` is in ACL category `cat` (from its group, kind and flags).
fn in_category(c: &Command, cat: &str) -> bool {
    let flag = |f: &str| c.flags.contains(&f);
    match cat {
        "keyspace" => matches!(c.group, "generic" | "keyspace"),
        "read" => matches!(c.kind, Kind::Read(_)) || flag("readonly"),
        "write" => matches!(c.kind, Kind::Write(_) | Kind::Exclusive(_)) || flag("write"),
        "set" | "list" | "hash" | "string" | "bitmap" | "hyperloglog" | "geo" | "stream"
        | "pubsub" | "connection" | "scripting" => c.group == cat,
        "sortedset" => c.group == "sorted-set",
        "transaction" => c.group == "transactions",
        "admin" => flag("admin"),
        "dangerous" => flag("admin") || matches!(c.name, "keys" | "flushall" | "flushdb" | "sort"),
        "fast" => flag("fast"),
        "slow" => !flag("fast"),
        "blocking" => matches!(c.kind, Kind::Blocking(_)) || flag("blocking"),
        _ => false,
    }
}

fn category(name: &[u8]) -> Reply {
    let cat = String::from_utf8_lossy(name).to_ascii_lowercase();
    if !CATEGORIES.contains(&cat.as_str()) {
        return Reply::err(format!(
            "Unknown category '{}'",
            String::from_utf8_lossy(name)
        ));
    }
    Reply::Array(
        cmd::COMMANDS
            .iter()
            .filter(|c| in_category(c, &cat))
            .map(|c| Reply::bulk(c.name))
            .collect(),
    )
}

fn dryrun(user: &[u8], command: &[Bytes]) -> Reply {
    if user != b"default" {
        return Reply::err(format!(
            "User '{}' not found",
            String::from_utf8_lossy(user)
        ));
    }
    match cmd::lookup(&command[0]) {
        Some(c) if c.arity_ok(command.len()) => Reply::Ok,
        Some(c) => Reply::err(format!(
            "wrong number of arguments for '{}' command",
            c.name
        )),
        None => Reply::err(format!(
            "Command '{}' not found",
            String::from_utf8_lossy(&command[0])
        )),
    }
}

fn genpass(bits: Option<&Bytes>) -> Reply {
    let bits = match bits.map(|b| parse_i64(b)) {
        None => 256,
        Some(Some(n @ 1..=4096)) => n as usize,
        Some(_) => {
            return Reply::err(
                "ACL GENPASS argument must be the number of bits for the output password, a positive number up to 4096",
            );
        }
    };
    let chars = bits.div_ceil(4);
    let mut raw = vec![0u8; chars.div_ceil(2)];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut raw));
    if let Err(e) = read {
        return Reply::err(format!("reading /dev/urandom: {e}"));
    }
    let mut hex: String = raw.iter().map(|b| format!("{b:02x}")).collect();
    hex.truncate(chars);
    Reply::bulk(hex)
}
