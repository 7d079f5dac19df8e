//! The plain write commands of one connection's pipeline run together: one write set and
//! one commit for the run (one WAL record, and with `appendfsync always` one fsync), their
//! replies after that commit. Any other command first commits the group before it, so it
//! sees every earlier write of the connection.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use super::{Conn, Flow, OUT_CHUNK, micros};
use crate::blocking::{self, serve::Served};
use crate::cmd::{self, Command, Kind};
use crate::config::AppendFsync;
use crate::resp::{Args, Reply};
use crate::server::Shared;
use crate::store::MAX_KEY_LEN;

/// Most commands committed together by one group.
pub(super) const MAX_GROUP: usize = 256;

/// Most emptied argument vectors a connection keeps for reuse, and the largest it keeps.
const MAX_SPARE: usize = 256;
const MAX_SPARE_ARGS: usize = 64;

/// Write commands run together and committed as one batch.
struct Group<'a> {
    guard: crate::store::WriteGuard<'a>,
    txn: crate::store::Txn<'a>,
    replies: Vec<Reply>,
    /// The commands' positions in the command table, reply by reply.
    cmds: Vec<usize>,
    /// Blocked clients the group's pushes served, delivered after the commit.
    served: Served,
    /// Serving them failed: the group must not commit.
    failed: Option<Reply>,
}

/// Commits a group and encodes its replies: each command's own reply if the commit
/// succeeded, else the commit's error for every command that did not fail by itself.
fn flush(group: Option<Group<'_>>, shared: &Shared, proto: u8, out: &mut Vec<u8>) {
    let (reg, stats) = (&shared.blocked, &shared.stats);
    let Some(Group {
        guard,
        txn,
        replies,
        cmds,
        served,
        failed,
    }) = group
    else {
        return;
    };
    let store = txn.store();
    let committed = match failed {
        Some(e) => Err(e),
        None => txn.commit(),
    };
    drop(guard);
    served.finish(committed.is_ok(), reg, store);
    for (r, cmd) in replies.into_iter().zip(cmds) {
        let r = match &committed {
            Err(e) if !r.is_error() => {
                stats.failed(cmd);
                e
            }
            _ => &r,
        };
        if let Reply::Error(text) = r {
            stats.error(text);
        }
        r.encode(proto, out);
    }
}

/// List and sorted-set commands whose cost grows with the collection rather than with their
/// reply (they scan to a match, a rank or across a range).
fn is_collection_scan(name: &str) -> bool {
    matches!(
        name,
        "lrem"
            | "linsert"
            | "lpos"
            | "zrank"
            | "zrevrank"
            | "zcount"
            | "zlexcount"
            | "zremrangebyscore"
            | "zremrangebylex"
            | "zremrangebyrank"
            | "zrandmember"
    )
}

/// True for commands that may block for more than a few microseconds.
pub(super) fn is_heavy(c: &Command, always: bool) -> bool {
    matches!(
        c.name,
        "keys"
            | "flushdb"
            | "flushall"
            | "rename"
            | "renamenx"
            | "copy"
            | "move"
            | "lcs"
            | "save"
            | "sort"
            | "sort_ro"
            | "bitop"
            | "bitpos"
            | "bitcount"
            | "zunion"
            | "zinter"
            | "zdiff"
            | "zunionstore"
            | "zinterstore"
            | "zdiffstore"
            | "zintercard"
            | "zrangestore"
            | "smembers"
            | "exec"
            | "del"
            | "info"
            | "scan"
            | "sscan"
            | "hgetall"
            | "hkeys"
            | "hvals"
            | "hscan"
            | "hrandfield"
            | "spop"
            | "srandmember"
            | "sinter"
            | "sintercard"
            | "sinterstore"
            | "sunion"
            | "sunionstore"
            | "sdiff"
            | "sdiffstore"
    ) || is_collection_scan(c.name)
        || crate::script::is_script_command(c.name)
        || (always
            && matches!(
                c.kind,
                Kind::Write(_) | Kind::Exclusive(_) | Kind::Blocking(_)
            ))
}

impl Conn {
    /// Runs requests off the front of `batch` in order, appending replies to `out`, until
    /// `out` holds [`OUT_CHUNK`] bytes or `batch` is empty.
    ///
    /// Consecutive plain write commands share one write set and are committed together
    /// (group commit: one WAL record, and with `appendfsync always` one fsync, for the run);
    /// their replies go out only after that commit. Any other command first commits the
    /// group, so it sees every earlier write of the connection.
    pub(super) fn run_batch(&mut self, batch: &mut VecDeque<Args>, out: &mut Vec<u8>) -> Flow {
        if self.continue_stream(out) == Flow::Close {
            return Flow::Close;
        }
        if batch.is_empty() || self.stream.is_some() {
            return Flow::Continue;
        }
        let always = self.shared.config.appendfsync == AppendFsync::Always;
        // A write the engine is pacing or holding (level 0 or the memtable behind its
        // flushes) would hold this I/O worker, and every other connection on it, for the
        // stall: such groups run off the worker too.
        let pressed = || self.shared.store.db().write_pressure().may_wait();
        let heavy = batch.iter().any(|a| {
            cmd::lookup(&a[0]).is_some_and(|c| {
                is_heavy(c, always)
                    || (matches!(
                        c.kind,
                        Kind::Write(_) | Kind::Exclusive(_) | Kind::Blocking(_)
                    ) && pressed())
            })
        });
        let store = Arc::clone(&self.shared.store);
        let shared = Arc::clone(&self.shared);
        let mut run = || {
            let mut flow = Flow::Continue;
            let mut group: Option<Group<'_>> = None;
            while let Some(args) = batch.pop_front() {
                if flow != Flow::Continue || out.len() >= OUT_CHUNK || self.stream.is_some() {
                    batch.push_front(args);
                    break;
                }
                if self.held_by_pause(&args) {
                    batch.push_front(args);
                    flow = Flow::Pause;
                    break;
                }
                let Some((pos, c, f)) = self.groupable(&args) else {
                    flush(group.take(), &shared, self.proto, out);
                    flow = self.execute(args, out);
                    if flow == Flow::Continue {
                        flow = self.continue_stream(out);
                    }
                    continue;
                };
                self.shared.stats.processed();
                self.entry.touch(Some(pos));
                let keys = || c.key_positions(args.len()).map(|i| &args[i][..]);
                if let Some(g) = group.as_mut()
                    && (g.replies.len() >= MAX_GROUP
                        || g.txn.len() >= MAX_GROUP * 4
                        || !g.guard.try_add(keys()))
                {
                    flush(group.take(), &shared, self.proto, out);
                }
                let g = group.get_or_insert_with(|| Group {
                    guard: store.lock_keys(keys()),
                    txn: store.txn_in(self.db),
                    replies: Vec::new(),
                    cmds: Vec::new(),
                    served: Served::default(),
                    failed: None,
                });
                g.txn.set_ctx(crate::store::Ctx::local());
                // A command that fails after writing part of its changes must leave none of
                // them in the group's write set (the other commands' writes stay).
                g.txn.savepoint();
                let started = Instant::now();
                let r = f(&mut g.txn, &args).unwrap_or_else(|e| {
                    g.txn.rollback();
                    e
                });
                self.called(pos, &args, micros(started), r.is_error());
                g.replies.push(r);
                g.cmds.push(pos);
                self.recycle(args);
                // Blocked clients are served after each command, as Redis does.
                if g.failed.is_none()
                    && let Err(e) = blocking::serve::serve_ready(
                        &self.shared.blocked,
                        &mut g.txn,
                        Some(&mut g.guard),
                        &mut g.served,
                    )
                {
                    g.failed = Some(e);
                }
            }
            flush(group.take(), &shared, self.proto, out);
            flow
        };
        if heavy {
            tokio::task::block_in_place(run)
        } else {
            run()
        }
    }

    /// The handler of `args` when it is a plain write command that may join a group:
    /// authenticated, known, well-formed, outside MULTI.
    fn groupable(&self, args: &Args) -> Option<(usize, &'static Command, cmd::Handler)> {
        if !self.authed
            || !self.user.unrestricted()
            || self.user_generation != self.shared.acl.generation()
            || self.multi.is_some()
            || self.replies_off
            || self.replies_skipped > 0
            || self.resp2_subscribed()
            || self.shared.store.writes_stopped().is_some()
            || self.shared.store.scripts().running() > 0
        {
            return None;
        }
        let pos = cmd::index(&args[0])?;
        let c = &cmd::COMMANDS[pos];
        let Kind::Write(f) = c.kind else {
            return None;
        };
        let ok = c.arity_ok(args.len())
            && c.key_positions(args.len())
                .all(|i| args[i].len() <= MAX_KEY_LEN);
        ok.then_some((pos, c, f))
    }

    /// Keeps a request's argument vector, emptied, for the parser to reuse.
    pub(super) fn recycle(&mut self, mut args: Args) {
        args.clear();
        if self.spare.len() < MAX_SPARE && args.capacity() <= MAX_SPARE_ARGS {
            self.spare.push(args);
        }
    }
}
