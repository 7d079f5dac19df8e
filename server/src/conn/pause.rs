//! CLIENT PAUSE and CLIENT UNPAUSE on a connection, and which of its commands a pause holds
//! (the state is `crate::pause`).

use bytes::Bytes;

use super::Conn;
use crate::cmd::{self, Kind};
use crate::pause::Hold;
use crate::resp::Reply;

impl Conn {
    /// `CLIENT PAUSE timeout [WRITE | ALL]`
    pub(super) fn client_pause(&self, a: &[Bytes]) -> Reply {
        let Some(ms) = cmd::parse_i64(&a[2]) else {
            return Reply::err("timeout is not an integer or out of range");
        };
        if ms < 0 {
            return Reply::err("timeout is negative");
        }
        let hold = match a.get(3).map(|m| m.to_ascii_uppercase()) {
            None => Hold::All,
            Some(m) if a.len() == 4 && m == b"ALL" => Hold::All,
            Some(m) if a.len() == 4 && m == b"WRITE" => Hold::Writes,
            Some(_) => return Reply::err("CLIENT PAUSE mode must be WRITE or ALL"),
        };
        self.shared.pause.pause(ms as u64, hold);
        Reply::Ok
    }

    /// Whether a pause holds the command `args` now. Every command pays one atomic load for
    /// this while no pause is on.
    pub(super) fn held_by_pause(&self, args: &[Bytes]) -> bool {
        let pause = &self.shared.pause;
        if !pause.on() {
            return false;
        }
        // The way out of a pause of everything.
        if args.len() == 2
            && args[0].eq_ignore_ascii_case(b"client")
            && args[1].eq_ignore_ascii_case(b"unpause")
        {
            return false;
        }
        pause.holds(self.pausable_write(args))
    }

    /// Whether `args` writes, as a write pause judges it: write commands (also when queued
    /// in MULTI), scripts, PUBLISH and SPUBLISH, and an EXEC whose queue writes.
    fn pausable_write(&self, args: &[Bytes]) -> bool {
        let Some(c) = cmd::lookup(&args[0]) else {
            return false;
        };
        match c.kind {
            // FUNCTION LIST, DUMP, STATS, KILL and HELP only read.
            Kind::Exclusive(_) if c.name == "function" => cmd::functions::writes(args),
            Kind::Write(_) | Kind::Exclusive(_) | Kind::Blocking(_) => true,
            Kind::Read(_) => false,
            Kind::Conn => match c.name {
                "publish" | "spublish" | "swapdb" => true,
                "exec" => self
                    .multi
                    .as_ref()
                    .is_some_and(|q| q.iter().any(|a| self.pausable_write(a))),
                _ => false,
            },
        }
    }
}
