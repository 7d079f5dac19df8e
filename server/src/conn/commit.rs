//! Committing a write set that may have made blocked clients ready: they are served inside
//! the write set (under the command's locks), the write set commits, the locks go, then the
//! served clients get their replies. A single command, an exclusive one and EXEC all end
//! this way.

use std::sync::Arc;
use std::time::Instant;

use super::{Conn, micros};
use crate::blocking::{self, serve::Served};
use crate::cmd::blocking::Outcome;
use crate::cmd::{self, Kind, unknown_command};
use crate::resp::Reply;
use crate::store::{Txn, WriteGuard};

/// The locks a write set was made under.
pub(super) enum Lock<'a> {
    /// Its keys' (a single write command's).
    Keys(WriteGuard<'a>),
    /// Every writer's (an exclusive command's, EXEC's): no key needs a lock of its own.
    All(parking_lot::RwLockWriteGuard<'a, ()>),
}

/// Serves the blocked clients `txn`'s pushes made ready, commits, releases `lock`, then
/// delivers their replies; `reply`, or the commit's error.
pub(super) fn commit_serving(
    reg: &blocking::Registry,
    mut txn: Txn<'_>,
    mut lock: Lock<'_>,
    reply: Reply,
) -> Reply {
    let store = txn.store();
    let mut served = Served::default();
    let keys = match &mut lock {
        Lock::Keys(g) => Some(g),
        Lock::All(_) => None,
    };
    let committed = match blocking::serve::serve_ready(reg, &mut txn, keys, &mut served) {
        Ok(()) => txn.commit().map(|_| ()),
        Err(e) => Err(e),
    };
    match lock {
        Lock::Keys(g) => drop(g),
        Lock::All(g) => drop(g),
    }
    served.finish(committed.is_ok(), reg, store);
    match committed {
        Ok(()) => reply,
        Err(e) => e,
    }
}

impl Conn {
    /// EXEC: every queued command runs against one write set, committed as one atomic
    /// batch, with every other writer locked out meanwhile; a nil array instead when a
    /// watched key changed since WATCH. Watches end either way.
    pub(super) fn exec(&mut self) -> Reply {
        let r = self.exec_queued();
        self.unwatch_all();
        r
    }

    fn exec_queued(&mut self) -> Reply {
        let Some(queue) = self.multi.take() else {
            return Reply::err("EXEC without MULTI");
        };
        if std::mem::take(&mut self.multi_error) {
            return Reply::Error(
                "EXECABORT Transaction discarded because of previous errors.".into(),
            );
        }
        let store = Arc::clone(&self.shared.store);
        let lock = Lock::All(store.lock_all());
        let mut txn = store.txn_in(self.db);
        match self.watch_broken(&txn) {
            Ok(false) => {}
            Ok(true) => return Reply::NilArray,
            Err(e) => return e,
        }
        // The user's rules may have changed since the commands were queued: each is checked
        // again, and one now refused answers NOPERM in its place, as in Redis.
        self.refresh_user();
        let mut replies = Vec::with_capacity(queue.len());
        for args in &queue {
            let Some(pos) = cmd::index(&args[0]) else {
                replies.push(unknown_command(args));
                continue;
            };
            let c = &cmd::COMMANDS[pos];
            if let Err(denied) = self.acl_check(pos, args) {
                replies.push(self.noperm_at_exec(&denied));
                continue;
            }
            let started = Instant::now();
            // A queued SELECT moves the commands after it (and the connection) to its
            // database.
            txn.select(self.db);
            // A command that fails part-way leaves none of its writes (the others' stay).
            txn.savepoint();
            let r = match c.kind {
                Kind::Read(f) | Kind::Write(f) | Kind::Exclusive(f) => f(&mut txn, args)
                    .unwrap_or_else(|e| {
                        txn.rollback();
                        e
                    }),
                // Inside MULTI a blocking pop never blocks: it answers as on a timeout.
                Kind::Blocking(f) => match f(&mut txn, args) {
                    Ok(Outcome::Done(r)) => r,
                    Ok(Outcome::Block(b)) => b.op.timeout_reply(),
                    Err(e) => {
                        txn.rollback();
                        e
                    }
                },
                Kind::Conn if c.name == "swapdb" => self.swapdb_waking(args, true, Some(&mut txn)),
                Kind::Conn => self.conn_command(c, args).0,
            };
            self.called(pos, args, micros(started), r.is_error());
            // Errors inside EXEC's reply count as Redis counts them (errorstats).
            self.note_error(&r);
            match r {
                // SUBSCRIBE a b answers twice: each confirmation is an element of its own.
                Reply::Seq(rs) => replies.extend(rs),
                r => replies.push(r),
            }
        }
        // Blocked clients are served once the whole transaction has run, as in Redis.
        commit_serving(&self.shared.blocked, txn, lock, Reply::Array(replies))
    }
}
