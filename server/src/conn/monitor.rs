//! MONITOR: every command any client sends, as one status line per command, to each client
//! that asked. The line is Redis's: `<unix seconds>.<microseconds> [<db> <client address>]`
//! and the arguments quoted, with bytes outside printable ASCII escaped. Like Redis, it is
//! sent once the command ran (so `SELECT 2` shows database 2), administrative commands
//! (CONFIG, DEBUG, SAVE, SLOWLOG, MONITOR itself) are left out, and passwords show as
//! `(redacted)` (AUTH's arguments, HELLO's after AUTH). A monitor's lines queue in its pub/sub
//! mailbox, under the same output limits as a slow subscriber. Not shown yet: the commands a
//! script runs (Redis shows them as `[db lua]`).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use super::Conn;
use crate::cmd;
use crate::resp::Reply;

impl Conn {
    /// True while messages may arrive for this client: subscribed or monitoring.
    pub(super) fn listening(&self) -> bool {
        self.subscribed() || self.subs.monitoring
    }

    /// `MONITOR`
    pub(super) fn monitor(&mut self) -> Reply {
        if !self.subs.monitoring {
            self.subs.monitoring = true;
            self.shared.pubsub.monitor(&self.subs.mailbox);
        }
        Reply::Ok
    }

    /// Hands the command at `pos` with `args` to the monitors, unless it is one they never see.
    pub(super) fn feed_monitors(&self, pos: usize, args: &[Bytes]) {
        let c = &cmd::COMMANDS[pos];
        if c.flags.contains(&"admin") {
            return;
        }
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let addr = self.entry.addr.to_string();
        self.shared.pubsub.feed_monitors(&monitor_line(
            now.as_micros(),
            self.db,
            &addr,
            &redacted(c.name, args),
        ));
    }
}

impl Conn {
    /// Hands the commands the last script ran to the monitors, as Redis shows them: after
    /// the script's own line, each as `[db lua]`.
    pub(super) fn feed_script_calls(&mut self) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros();
        let store = Arc::clone(&self.shared.store);
        for (db, args) in std::mem::take(&mut self.script_calls) {
            let db = store.index_of(db);
            let admin = cmd::lookup(&args[0]).is_some_and(|c| c.flags.contains(&"admin"));
            if !admin {
                self.shared
                    .pubsub
                    .feed_monitors(&monitor_line(now, db, "lua", &args));
            }
        }
    }
}

/// `args` with any password replaced by `(redacted)`: every argument of AUTH, the two after
/// HELLO's AUTH, and everything after `ACL SETUSER` (its rules may hold passwords), as
/// Redis hides them.
pub(super) fn redacted<'a>(name: &str, args: &'a [Bytes]) -> std::borrow::Cow<'a, [Bytes]> {
    const HIDDEN: Bytes = Bytes::from_static(b"(redacted)");
    match name {
        "auth" => {
            let mut v = args.to_vec();
            v[1..].fill(HIDDEN);
            v.into()
        }
        "hello" => match args.iter().position(|a| a.eq_ignore_ascii_case(b"auth")) {
            Some(i) => {
                let mut v = args.to_vec();
                let end = (i + 3).min(v.len());
                v[i + 1..end].fill(HIDDEN);
                v.into()
            }
            None => args.into(),
        },
        "acl" if args.len() > 2 && args[1].eq_ignore_ascii_case(b"setuser") => {
            let mut v = args.to_vec();
            v[2..].fill(HIDDEN);
            v.into()
        }
        _ => args.into(),
    }
}

/// The MONITOR line of `args`, run at `micros` since the epoch by the client at `addr` in
/// database `db`.
pub(super) fn monitor_line(micros: u128, db: u8, addr: &str, args: &[Bytes]) -> String {
    let mut line = format!(
        "{}.{:06} [{db} {addr}]",
        micros / 1_000_000,
        micros % 1_000_000
    );
    for a in args {
        line.push_str(" \"");
        for &b in a.iter() {
            match b {
                b'\\' => line.push_str("\\\\"),
                b'"' => line.push_str("\\\""),
                b'\n' => line.push_str("\\n"),
                b'\r' => line.push_str("\\r"),
                b'\t' => line.push_str("\\t"),
                7 => line.push_str("\\a"),
                8 => line.push_str("\\b"),
                0x20..=0x7e => line.push(b as char),
                _ => {
                    let _ = write!(line, "\\x{b:02x}");
                }
            }
        }
        line.push('"');
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_redacted() {
        let b = |w: &[&'static str]| {
            w.iter()
                .map(|s| Bytes::from_static(s.as_bytes()))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            &*redacted("auth", &b(&["AUTH", "u", "pw"])),
            &b(&["AUTH", "(redacted)", "(redacted)"])[..]
        );
        assert_eq!(
            &*redacted(
                "hello",
                &b(&["HELLO", "3", "auth", "u", "pw", "SETNAME", "n"])
            ),
            &b(&[
                "HELLO",
                "3",
                "auth",
                "(redacted)",
                "(redacted)",
                "SETNAME",
                "n"
            ])[..]
        );
        assert_eq!(
            &*redacted("hello", &b(&["HELLO", "3"])),
            &b(&["HELLO", "3"])[..]
        );
        assert_eq!(
            &*redacted("get", &b(&["GET", "pw"])),
            &b(&["GET", "pw"])[..]
        );
        // As redis-server 7.0.15's SLOWLOG shows ACL SETUSER: everything after SETUSER.
        assert_eq!(
            &*redacted("acl", &b(&["acl", "setuser", "u", "on", ">secret"])),
            &b(&["acl", "setuser", "(redacted)", "(redacted)", "(redacted)"])[..]
        );
        assert_eq!(
            &*redacted("acl", &b(&["ACL", "GETUSER", "u"])),
            &b(&["ACL", "GETUSER", "u"])[..]
        );
    }

    #[test]
    fn lines_quote_and_escape_as_redis_does() {
        let args = [
            Bytes::from_static(b"set"),
            Bytes::from_static(b"k \"q\" \\"),
            Bytes::from_static(b"\n\r\t\x07\x08\x00\xff\x7f"),
        ];
        assert_eq!(
            monitor_line(1_700_000_000_000_042, 3, "127.0.0.1:5000", &args),
            "1700000000.000042 [3 127.0.0.1:5000] \"set\" \"k \\\"q\\\" \\\\\" \"\\n\\r\\t\\a\\b\\x00\\xff\\x7f\""
        );
    }
}
