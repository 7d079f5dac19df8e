//! `ACL` (users, their rules, the log of refusals), and what a connection does with the
//! registry (`crate::acl`): logging in as a user, and refusing what its user may not run
//! with Redis's `NOPERM` errors, each recorded in `ACL LOG`.
//!
//! `ACL LOAD` and `ACL SAVE` read and write the server's ACL file (`--aclfile`); without
//! one they answer Redis's error.

use std::io::Read as _;
use std::sync::Arc;

use bytes::Bytes;

use super::Conn;
use crate::acl::category::{CATEGORIES, in_category};
use crate::acl::{Denied, User};
use crate::cmd::{self, parse_i64};
use crate::resp::Reply;

const HELP: &[&str] = &[
    "ACL <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
    "HELP",
    "    Print this help.",
];

const NO_FILE: &str = "This Redis instance is not configured to use an ACL file. You may want to specify users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a Redis configuration file set) in order to store users in the Redis configuration.";

const SAVE_FAILED: &str =
    "There was an error trying to save the ACLs. Please check the server logs for more information";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

impl Conn {
    /// `ACL subcommand ...`
    pub(super) fn acl(&mut self, a: &[Bytes]) -> Reply {
        let sub = a[1].to_ascii_uppercase();
        let acl = &self.shared.acl;
        match (&sub[..], a.len()) {
            (b"WHOAMI", 2) => Reply::bulk(self.user.name.clone()),
            (b"USERS", 2) => Reply::Array(
                acl.users()
                    .iter()
                    .map(|u| Reply::bulk(u.name.clone()))
                    .collect(),
            ),
            (b"LIST", 2) => Reply::Array(
                acl.users()
                    .iter()
                    .map(|u| Reply::bulk(u.describe()))
                    .collect(),
            ),
            (b"GETUSER", 3) => acl.get(&text(&a[2])).map_or(Reply::Nil, |u| getuser(&u)),
            (b"SETUSER", n) if n >= 3 => match acl.set_user(&text(&a[2]), &a[3..]) {
                Ok(()) => Reply::Ok,
                Err(e) => Reply::err(e),
            },
            (b"DELUSER", n) if n >= 3 => {
                let names: Vec<String> = a[2..].iter().map(|n| text(n)).collect();
                match acl.delete(&names) {
                    Ok(removed) => {
                        // Redis disconnects the clients of a removed user.
                        for c in self.shared.client_list.all() {
                            if names.contains(&c.user()) {
                                c.kill();
                            }
                        }
                        Reply::Int(removed as i64)
                    }
                    Err(e) => Reply::err(e),
                }
            }
            (b"CAT", 2) => Reply::Array(CATEGORIES.iter().map(|c| Reply::bulk(*c)).collect()),
            (b"CAT", 3) => category(&a[2]),
            (b"DRYRUN", n) if n >= 4 => self.dryrun(&a[2], &a[3..]),
            (b"GENPASS", 2 | 3) => genpass(a.get(2)),
            (b"LOG", 2) => acl.log_reply(10),
            (b"LOG", 3) if a[2].eq_ignore_ascii_case(b"reset") => {
                acl.reset_log();
                Reply::Ok
            }
            (b"LOG", 3) => match parse_i64(&a[2]) {
                Some(n) if n >= 0 => acl.log_reply(n as usize),
                _ => Reply::err("value is out of range, must be positive"),
            },
            (b"LOAD" | b"SAVE", 2) => match &self.shared.config.aclfile {
                None => Reply::err(NO_FILE),
                Some(path) if sub == b"LOAD" => match acl.load(path) {
                    Ok(replaced) => {
                        // Redis frees the users it replaced and closes their clients.
                        for c in self.shared.client_list.all() {
                            if replaced.contains(&c.user()) {
                                c.kill();
                            }
                        }
                        Reply::Ok
                    }
                    Err(e) => Reply::err(e),
                },
                Some(path) => match acl.save(path) {
                    Ok(()) => Reply::Ok,
                    Err(e) => {
                        crate::log::warn(&format!("ACL SAVE: writing {}: {e}", path.display()));
                        Reply::err(SAVE_FAILED)
                    }
                },
            },
            (b"HELP", 2) => Reply::Array(HELP.iter().map(|l| Reply::Status((*l).into())).collect()),
            (
                b"WHOAMI" | b"USERS" | b"LIST" | b"GETUSER" | b"SETUSER" | b"DELUSER" | b"CAT"
                | b"DRYRUN" | b"GENPASS" | b"LOG" | b"LOAD" | b"SAVE" | b"HELP",
                _,
            ) => Reply::err(format!(
                "wrong number of arguments for 'acl|{}' command",
                text(&a[1]).to_ascii_lowercase()
            )),
            _ => Reply::err(format!(
                "unknown subcommand '{}'. Try ACL HELP.",
                text(&a[1])
            )),
        }
    }

    /// Looks the connection's user up again if any user changed since (a removed user's
    /// connection is closed, as Redis closes it).
    pub(super) fn refresh_user(&mut self) {
        let g = self.shared.acl.generation();
        if g == self.user_generation {
            return;
        }
        self.user_generation = g;
        match self.shared.acl.get(&self.user.name) {
            Some(u) => self.user = u,
            None => {
                self.authed = false;
                self.entry.kill();
            }
        }
    }

    /// Whether the connection's user may run `args` (the command at `pos`), as its rules
    /// stood when last looked up. Commands a client may send before it logs in are always
    /// allowed (Redis's `no-auth` flag).
    pub(super) fn acl_check(&self, pos: usize, args: &[Bytes]) -> Result<(), Denied> {
        let c = &cmd::COMMANDS[pos];
        if self.user.unrestricted() || matches!(c.name, "auth" | "hello") {
            return Ok(());
        }
        self.user.check(pos, c, args)
    }

    /// Whether the connection's user may not run `args` (without logging it: the request
    /// is then answered by the path that refuses it).
    pub(super) fn acl_denies(&self, args: &[Bytes]) -> bool {
        if self.user.unrestricted() && self.user_generation == self.shared.acl.generation() {
            return false;
        }
        cmd::index(&args[0]).is_some_and(|pos| self.acl_check(pos, args).is_err())
    }

    /// The `NOPERM` error for a request its user may not run (recorded in ACL LOG), if so.
    pub(super) fn acl_refusal(&mut self, pos: usize, args: &[Bytes]) -> Option<Reply> {
        self.refresh_user();
        let denied = self.acl_check(pos, args).err()?;
        let context = if self.multi.is_some() {
            "multi"
        } else {
            "toplevel"
        };
        Some(self.noperm(&denied, context))
    }

    /// The `NOPERM` error for `denied`, recorded in ACL LOG under `context`.
    pub(super) fn noperm(&self, denied: &Denied, context: &'static str) -> Reply {
        let (reason, object, error) = match denied {
            Denied::Command(name) => (
                "command",
                Bytes::from(name.clone()),
                format!(
                    "NOPERM User {} has no permissions to run the '{name}' command",
                    self.user.name
                ),
            ),
            Denied::Key(k) => (
                "key",
                k.clone(),
                "NOPERM No permissions to access a key".into(),
            ),
            Denied::Channel(ch) => (
                "channel",
                ch.clone(),
                "NOPERM No permissions to access a channel".into(),
            ),
        };
        self.shared
            .acl
            .log(reason, context, &object, &self.user.name, self.entry.line());
        Reply::Error(error)
    }

    /// EXEC's error for a queued command the user's rules, changed since it was queued, now
    /// refuse (recorded in ACL LOG), in redis-server 7.0.15's words.
    pub(super) fn noperm_at_exec(&self, denied: &Denied) -> Reply {
        self.noperm(denied, "multi");
        let reason = match denied {
            Denied::Command(_) => "no permission to execute the command or subcommand",
            Denied::Key(_) => "no permission to touch the specified keys",
            Denied::Channel(_) => "no permission to access one of the channels used as arguments",
        };
        Reply::Error(format!(
            "NOPERM ACLs rules changed between the moment the transaction was accumulated and the EXEC call. This command is no longer allowed for the following reason: {reason}"
        ))
    }

    /// AUTH or HELLO AUTH: the connection runs as `user` if `pass` opens it; a failure is
    /// recorded in ACL LOG.
    pub(super) fn log_in(&mut self, user: &[u8], pass: &[u8]) -> bool {
        let generation = self.shared.acl.generation();
        let name = text(user);
        match self.shared.acl.get(&name) {
            Some(u) if u.password_ok(pass) => {
                self.user = u;
                self.user_generation = generation;
                self.authed = true;
                self.publish_meta();
                true
            }
            _ => {
                self.shared
                    .acl
                    .log("auth", "toplevel", b"AUTH", &name, self.entry.line());
                false
            }
        }
    }

    /// RESET: back to the default user, logged in if it needs no password.
    pub(super) fn log_in_as_default(&mut self) {
        self.user_generation = self.shared.acl.generation();
        self.user = self
            .shared
            .acl
            .get("default")
            .unwrap_or_else(|| Arc::new(User::default_user(None)));
        self.authed = self.user.enabled && self.user.nopass;
    }

    /// `ACL DRYRUN user command args...`, with Redis 7.0's texts.
    fn dryrun(&self, user: &[u8], command: &[Bytes]) -> Reply {
        let Some(u) = self.shared.acl.get(&text(user)) else {
            return Reply::err(format!("User '{}' not found", text(user)));
        };
        let Some(pos) = cmd::index(&command[0]) else {
            return Reply::err(format!("Command '{}' not found", text(&command[0])));
        };
        let c = &cmd::COMMANDS[pos];
        if !c.arity_ok(command.len()) {
            return Reply::err(format!(
                "wrong number of arguments for '{}' command",
                c.name
            ));
        }
        match u.check(pos, c, command) {
            Ok(()) => Reply::Ok,
            Err(Denied::Command(name)) => Reply::bulk(format!(
                "This user has no permissions to run the '{name}' command"
            )),
            Err(Denied::Key(k)) => Reply::bulk(format!(
                "This user has no permissions to access the '{}' key",
                text(&k)
            )),
            Err(Denied::Channel(ch)) => Reply::bulk(format!(
                "This user has no permissions to access the '{}' channel",
                text(&ch)
            )),
        }
    }
}

/// ACL GETUSER's reply.
fn getuser(u: &User) -> Reply {
    let s = |x: &str| Reply::bulk(x.to_string());
    let ([commands, keys, channels], selectors) = u.selector_parts();
    Reply::Map(vec![
        (
            s("flags"),
            Reply::Array(u.flags().iter().map(|f| s(f)).collect()),
        ),
        (
            s("passwords"),
            Reply::Array(u.passwords().iter().map(|p| s(p)).collect()),
        ),
        (s("commands"), s(&commands)),
        (s("keys"), s(&keys)),
        (s("channels"), s(&channels)),
        (
            s("selectors"),
            Reply::Array(
                selectors
                    .iter()
                    .map(|[c, k, ch]| {
                        Reply::Map(vec![
                            (s("commands"), s(c)),
                            (s("keys"), s(k)),
                            (s("channels"), s(ch)),
                        ])
                    })
                    .collect(),
            ),
        ),
    ])
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
