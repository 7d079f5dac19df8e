//! A connection in cluster mode (see `crate::replica`): writes go through the replicated
//! log, reads wait for a read barrier, blocked clients wait here for applied entries.
//!
//! The standalone path (`Conn::run_batch`) runs everything against the local store; this
//! one sends a connection's run of pipelined write commands as one log entry
//! ([`Request::Commands`]), a whole `MULTI`/`EXEC` as one, `WATCH`/`UNWATCH` and `PUBLISH`
//! as entries of their own, and runs everything else locally: reads after one read barrier
//! per run of pipelined reads (none after `READONLY`), connection commands as always.
//! Commands that never reach execution (unknown, wrong arity, refused while subscribed,
//! queued by MULTI) take the standalone path, which answers them.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use super::group::{MAX_GROUP, is_heavy};
use super::{Conn, Flow, OUT_CHUNK, micros, unknown_command};
use crate::cmd::keyspace::keys_in_slot;
use crate::cmd::parse_i64;
use crate::cmd::{self, Kind};
use crate::keyslot::{SLOTS, key_slot};
use crate::replica::codec::{Answer, Request, decode_answers};
use crate::replica::{Cluster, Membership, ReplicaError, report, topology};
use crate::resp::{Args, Reply};
use crate::store::{MAX_KEY_LEN, Store};

/// Most bytes of arguments one write entry carries (a longer pipeline becomes several
/// entries; one bigger command still goes alone).
const MAX_ENTRY_BYTES: usize = 4 << 20;

/// A connection's cluster-mode state.
pub(super) struct ClusterConn {
    pub(super) cluster: Cluster,
    /// `READONLY`: reads are served from this node's data without a barrier.
    pub(super) readonly: bool,
    /// The token of this connection's replicated WATCHes, while it watches.
    watch_token: Option<u64>,
    /// With redirections on: the slot of the first keyed command queued since MULTI (every
    /// other must be in it).
    pub(super) tx_slot: Option<u16>,
}

impl ClusterConn {
    pub(super) fn new(cluster: Cluster) -> ClusterConn {
        ClusterConn {
            cluster,
            readonly: false,
            watch_token: None,
            tx_slot: None,
        }
    }

    /// Forgets the connection's watches on every node, without waiting (a disconnect).
    fn drop_watch(&mut self) {
        if let Some(token) = self.watch_token.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            let f = self
                .cluster
                .replicator
                .propose(Request::Unwatch { token }.encode());
            rt.spawn(async move {
                let _ = f.await;
            });
        }
    }
}

impl Drop for ClusterConn {
    fn drop(&mut self) {
        self.drop_watch();
    }
}

/// The socket and input buffer, for a blocked client (disconnects are seen while it
/// waits; what it sends meanwhile is kept for later).
pub(super) struct Io<'a> {
    pub(super) sock: &'a mut TcpStream,
    pub(super) buf: &'a mut BytesMut,
    pub(super) max_buf: usize,
    pub(super) shutdown: &'a mut watch::Receiver<bool>,
}

/// Where a request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// The standalone path answers it (connection commands, refusals, MULTI queueing).
    Local,
    /// A read: after the read barrier, locally.
    Read,
    /// A write through the log; `blocking`: a blocking pop (it ends its entry).
    Write {
        blocking: bool,
    },
    Exec,
    Watch,
    /// UNWATCH, DISCARD, RESET: run locally, then forget the replicated watches.
    Unwatch,
    Publish,
    /// WAIT outside MULTI: polls the members (`wait.rs`).
    Wait,
    Cluster,
    ReadOnly(bool),
}

fn new_token(conn: u64, node: u64) -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    crate::store::txn::mix(nanos ^ conn.rotate_left(24) ^ node.rotate_left(48)).max(1)
}

impl Conn {
    fn cluster(&self) -> Option<Cluster> {
        self.cluster.as_ref().map(|c| c.cluster.clone())
    }

    fn route(&self, args: &Args) -> Route {
        let Some(c) = cmd::lookup(&args[0]) else {
            return Route::Local;
        };
        if !c.arity_ok(args.len())
            || (!self.authed && !matches!(c.name, "auth" | "hello" | "quit"))
            || self.acl_denies(args)
            || c.key_positions(args.len())
                .any(|i| args[i].len() > MAX_KEY_LEN)
            || self.refused_while_subscribed(c.name).is_some()
        {
            return Route::Local;
        }
        if self.multi.is_some()
            && !matches!(
                c.name,
                "exec" | "discard" | "multi" | "quit" | "reset" | "watch"
            )
        {
            return Route::Local;
        }
        match c.kind {
            Kind::Read(_) => Route::Read,
            // FUNCTION KILL and STATS are about this node's running functions; LIST, DUMP and
            // HELP read like any read.
            Kind::Exclusive(_) if c.name == "function" && !cmd::functions::writes(args) => {
                if cmd::functions::allowed_when_busy(args) {
                    Route::Local
                } else {
                    Route::Read
                }
            }
            Kind::Write(_) | Kind::Exclusive(_) => Route::Write { blocking: false },
            Kind::Blocking(_) => Route::Write { blocking: true },
            Kind::Conn => match c.name {
                // LOAD and FLUSH through the log: every node's script cache agrees, and an
                // EVALSHA sent to any node finds what was loaded through another.
                "script"
                    if args.len() >= 2
                        && (args[1].eq_ignore_ascii_case(b"load")
                            || args[1].eq_ignore_ascii_case(b"flush")) =>
                {
                    Route::Write { blocking: false }
                }
                "exec" if self.multi.is_some() => Route::Exec,
                "watch" if self.multi.is_none() => Route::Watch,
                "unwatch" | "discard" | "reset" => Route::Unwatch,
                "publish" | "spublish" => Route::Publish,
                "cluster" => Route::Cluster,
                "wait" => Route::Wait,
                "readonly" => Route::ReadOnly(true),
                "readwrite" => Route::ReadOnly(false),
                _ => Route::Local,
            },
        }
    }

    /// Counts a call of the command of `args` that took `usec` µs and answered `r` (INFO
    /// commandstats and errorstats), for commands run outside `execute`.
    fn account(&self, args: &[Bytes], usec: u64, r: &Reply) {
        if let Some(pos) = cmd::index(&args[0]) {
            self.called(pos, args, usec, r.is_error());
        }
        self.note_error(r);
    }

    /// Counts a command run outside `execute`, and sends the pub/sub messages that came
    /// before it.
    fn note_command(&mut self, args: &Args, out: &mut Vec<u8>) {
        self.shared.stats.processed();
        self.entry.touch(cmd::index(&args[0]));
        if self.subscribed() {
            while self.deliver(out) {}
        }
    }

    /// [`Conn::run_batch`] in cluster mode: runs requests off the front of `batch` until
    /// `out` holds [`OUT_CHUNK`] bytes or `batch` is empty. Never answers [`Flow::Block`]:
    /// a blocked client waits inside (on `io`).
    pub(super) async fn run_batch_replicated(
        &mut self,
        batch: &mut VecDeque<Args>,
        out: &mut Vec<u8>,
        io: &mut Io<'_>,
    ) -> Flow {
        if self.continue_stream(out) == Flow::Close {
            return Flow::Close;
        }
        let Some(cluster) = self.cluster() else {
            return self.run_batch(batch, out);
        };
        while let Some(args) = batch.pop_front() {
            if out.len() >= OUT_CHUNK || self.stream.is_some() {
                batch.push_front(args);
                break;
            }
            if self.held_by_pause(&args) {
                batch.push_front(args);
                return Flow::Pause;
            }
            let route = self.route(&args);
            if cluster.redirects
                && let Some(r) = self.redirect(&cluster, &args, route).await
            {
                self.note_command(&args, out);
                self.account(&args, 0, &r);
                r.encode(self.proto, out);
                continue;
            }
            let flow = match route {
                Route::Local => self.local(args, out),
                Route::Read => {
                    batch.push_front(args);
                    self.reads(&cluster, batch, out).await
                }
                Route::Write { blocking } => {
                    let mut cmds = vec![args];
                    let mut bytes: usize = cmds[0].iter().map(Bytes::len).sum();
                    if !blocking {
                        while cmds.len() < MAX_GROUP && bytes < MAX_ENTRY_BYTES {
                            let Some(next) = batch.front() else { break };
                            let route = self.route(next);
                            let Route::Write { blocking } = route else {
                                break;
                            };
                            if cluster.redirects && self.redirected(&cluster, next, route) {
                                break;
                            }
                            bytes += next.iter().map(Bytes::len).sum::<usize>();
                            if let Some(a) = batch.pop_front() {
                                cmds.push(a);
                            }
                            if blocking {
                                break;
                            }
                        }
                    }
                    self.writes(&cluster, cmds, out, io).await
                }
                Route::Exec => {
                    self.note_command(&args, out);
                    let started = Instant::now();
                    let r = self.exec_replicated(&cluster).await;
                    self.account(&args, micros(started), &r);
                    r.encode(self.proto, out);
                    Flow::Continue
                }
                Route::Watch => {
                    self.note_command(&args, out);
                    let started = Instant::now();
                    let r = self.watch_replicated(&cluster, &args).await;
                    self.account(&args, micros(started), &r);
                    r.encode(self.proto, out);
                    Flow::Continue
                }
                Route::Unwatch => {
                    let in_multi = self.multi.is_some();
                    let forget = !args[0].eq_ignore_ascii_case(b"discard") || in_multi;
                    let flow = self.local(args, out);
                    if forget {
                        self.unwatch_replicated(&cluster).await;
                    }
                    flow
                }
                Route::Publish => {
                    self.note_command(&args, out);
                    let started = Instant::now();
                    let r = self.publish_replicated(&cluster, &args).await;
                    self.account(&args, micros(started), &r);
                    r.encode(self.proto, out);
                    Flow::Continue
                }
                Route::Wait => {
                    self.note_command(&args, out);
                    let started = Instant::now();
                    let r = super::wait::wait_replicated(&cluster, &args).await;
                    self.account(&args, micros(started), &r);
                    r.encode(self.proto, out);
                    Flow::Continue
                }
                Route::Cluster => {
                    self.note_command(&args, out);
                    let started = Instant::now();
                    let r = cluster_command(&cluster, &self.shared.store, &args).await;
                    self.account(&args, micros(started), &r);
                    r.encode(self.proto, out);
                    Flow::Continue
                }
                Route::ReadOnly(on) => {
                    self.note_command(&args, out);
                    if let Some(c) = self.cluster.as_mut() {
                        c.readonly = on;
                    }
                    Reply::Ok.encode(self.proto, out);
                    Flow::Continue
                }
            };
            if flow == Flow::Close {
                return Flow::Close;
            }
        }
        Flow::Continue
    }

    /// Runs a request on the standalone path (it never blocks here: blocking pops are
    /// routed to the log).
    fn local(&mut self, args: Args, out: &mut Vec<u8>) -> Flow {
        let always = false;
        let heavy = cmd::lookup(&args[0]).is_some_and(|c| is_heavy(c, always));
        let run = || match self.execute(args, out) {
            Flow::Close => Flow::Close,
            _ => self.continue_stream(out),
        };
        if heavy {
            tokio::task::block_in_place(run)
        } else {
            run()
        }
    }

    /// A run of reads off the front of `batch`: one read barrier (unless `READONLY`),
    /// then each read on this node's data. Stops early at a streamed reply.
    async fn reads(
        &mut self,
        cluster: &Cluster,
        batch: &mut VecDeque<Args>,
        out: &mut Vec<u8>,
    ) -> Flow {
        let mut n = 0;
        while n < batch.len()
            && n < MAX_GROUP
            && self.route(&batch[n]) == Route::Read
            && !(cluster.redirects && n > 0 && self.redirected(cluster, &batch[n], Route::Read))
        {
            n += 1;
        }
        let readonly = self.cluster.as_ref().is_some_and(|c| c.readonly);
        let barrier = if readonly {
            Ok(())
        } else {
            cluster.replicator.read_barrier().await
        };
        if let Err(e) = barrier {
            for args in batch.drain(..n) {
                self.note_command(&args, out);
                e.reply().encode(self.proto, out);
            }
            return Flow::Continue;
        }
        for _ in 0..n {
            if out.len() >= OUT_CHUNK || self.stream.is_some() {
                // The rest take a barrier of their own later.
                break;
            }
            let Some(args) = batch.pop_front() else { break };
            if self.local(args, out) == Flow::Close {
                return Flow::Close;
            }
        }
        Flow::Continue
    }

    /// Write commands as one log entry; the last may be a blocking pop, whose client then
    /// waits here until it is served or times out.
    async fn writes(
        &mut self,
        cluster: &Cluster,
        cmds: Vec<Args>,
        out: &mut Vec<u8>,
        io: &mut Io<'_>,
    ) -> Flow {
        for args in &cmds {
            self.note_command(args, out);
        }
        let cmds: Vec<Args> = cmds.into_iter().map(|a| self.inline_script(a)).collect();
        let last = cmds.last().cloned().unwrap_or_default();
        let blocking = cmd::lookup(&last[0]).is_some_and(|c| matches!(c.kind, Kind::Blocking(_)));
        // Registered before the first attempt: a push applied after the attempt's entry
        // finds the registration (replica::wake).
        let registration = blocking.then(|| {
            let c = cmd::lookup(&last[0]);
            let keys: Vec<&[u8]> = c
                .map(|c| c.key_positions(last.len()).map(|i| &last[i][..]).collect())
                .unwrap_or_default();
            cluster.applier.waits().register(&keys)
        });
        let n = cmds.len();
        // Each command of the entry is charged an equal share of its time.
        let names: Vec<Bytes> = cmds.iter().map(|c| c[0].clone()).collect();
        let started = Instant::now();
        let answers = propose(cluster, Request::in_db(self.db, Request::Commands(cmds))).await;
        let usec = micros(started) / n.max(1) as u64;
        let answers = match answers {
            Ok(a) if a.len() == n => a,
            Ok(a) => {
                let e = Reply::err(format!("the leader answered {} of {n} commands", a.len()));
                for name in &names {
                    self.account(std::slice::from_ref(name), usec, &e);
                    e.encode(self.proto, out);
                }
                return Flow::Continue;
            }
            Err(e) => {
                for name in &names {
                    self.account(std::slice::from_ref(name), usec, &e);
                    e.encode(self.proto, out);
                }
                return Flow::Continue;
            }
        };
        for (a, name) in answers.into_iter().zip(&names) {
            let args = std::slice::from_ref(name);
            match a {
                Answer::Reply(r) => {
                    self.account(args, usec, &r);
                    r.encode(self.proto, out);
                }
                Answer::Block {
                    timeout,
                    on_timeout,
                    retry,
                    ..
                } => {
                    self.account(args, usec, &on_timeout);
                    let Some(reg) = registration.as_ref() else {
                        on_timeout.encode(self.proto, out);
                        continue;
                    };
                    // The replies before the blocking command go out first.
                    if !out.is_empty() {
                        if io.sock.write_all(out).await.is_err() {
                            return Flow::Close;
                        }
                        out.clear();
                    }
                    let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
                    let again = retry.unwrap_or_else(|| last.clone());
                    match self
                        .block(cluster, &again, reg, deadline, on_timeout, io)
                        .await
                    {
                        Some(r) => r.encode(self.proto, out),
                        None => return Flow::Close,
                    }
                }
            }
        }
        Flow::Continue
    }

    /// Waits for one of the keys to be made ready by an applied entry, then tries the pop
    /// again through the log; until served or the deadline. `None`: the client left or the
    /// server is shutting down.
    async fn block(
        &mut self,
        cluster: &Cluster,
        args: &Args,
        reg: &crate::replica::wake::Registration,
        deadline: Option<tokio::time::Instant>,
        on_timeout: Reply,
        io: &mut Io<'_>,
    ) -> Option<Reply> {
        loop {
            tokio::select! {
                _ = reg.notified() => {}
                _ = sleep_until(deadline) => return Some(on_timeout),
                r = io.sock.read_buf(io.buf) => match r {
                    Ok(0) | Err(_) => return None,
                    Ok(_) if io.buf.len() > io.max_buf => return None,
                    Ok(_) => continue,
                },
                _ = io.shutdown.changed() => return None,
            }
            match propose(
                cluster,
                Request::in_db(self.db, Request::Commands(vec![args.clone()])),
            )
            .await
            {
                Err(e) => return Some(e),
                Ok(mut a) if a.len() == 1 => match a.remove(0) {
                    Answer::Reply(r) => return Some(r),
                    // Another client took it first: wait again.
                    Answer::Block { .. } => {}
                },
                Ok(a) => {
                    return Some(Reply::err(format!(
                        "the leader answered {} of 1 commands",
                        a.len()
                    )));
                }
            }
        }
    }

    /// EXEC: the queued data commands as one entry (with the WATCH token, if any); the
    /// queued connection commands (PING, ECHO, ...) run here and their replies take their
    /// places in the array.
    async fn exec_replicated(&mut self, cluster: &Cluster) -> Reply {
        let queue = self.multi.take().unwrap_or_default();
        self.entry.set_multi(None);
        let token = self.cluster.as_mut().and_then(|c| c.watch_token.take());
        if std::mem::take(&mut self.multi_error) {
            if let Some(t) = token {
                forget(cluster, t);
            }
            return Reply::Error(
                "EXECABORT Transaction discarded because of previous errors.".into(),
            );
        }
        let db = self.db;
        let data: Vec<Args> = queue
            .iter()
            .filter(|a| cmd::lookup(&a[0]).is_some_and(|c| self.replicated_in_exec(c, a)))
            .cloned()
            .map(|a| self.inline_script(a))
            .collect();
        // The database the EXEC starts in; a queued SELECT changes it for the commands
        // after it there as here.
        let req = Request::in_db(
            db,
            Request::Exec {
                watch: token,
                commands: data,
            },
        );
        let answer = match propose(cluster, req).await {
            Ok(mut a) if a.len() == 1 => a.remove(0),
            Ok(a) => {
                return Reply::err(format!("the leader answered {} of 1 commands", a.len()));
            }
            Err(e) => {
                // The token may or may not have been consumed: make sure it goes.
                if let Some(t) = token {
                    forget(cluster, t);
                }
                return e;
            }
        };
        let replies = match answer {
            Answer::Reply(Reply::Array(rs)) => rs,
            Answer::Reply(other) => return other,
            Answer::Block { on_timeout, .. } => return on_timeout,
        };
        let mut data_replies = replies.into_iter();
        let mut out = Vec::with_capacity(queue.len());
        for args in &queue {
            match cmd::lookup(&args[0]) {
                Some(c) if c.name == "select" && self.replicated_in_exec(c, args) => {
                    // Applied in the entry too; this node's connection follows it here.
                    let applied = data_replies.next().unwrap_or(Reply::Nil);
                    let here = self.conn_command(c, args).0;
                    out.push(if here.is_error() { here } else { applied });
                }
                Some(c) if matches!(c.kind, Kind::Conn) => match self.conn_command(c, args).0 {
                    Reply::Seq(rs) => out.extend(rs),
                    r => out.push(r),
                },
                Some(_) => out.push(data_replies.next().unwrap_or(Reply::Nil)),
                None => out.push(unknown_command(args)),
            }
        }
        Reply::Array(out)
    }

    /// Whether a command queued in MULTI goes into the EXEC's log entry: the data commands,
    /// and a SELECT this node accepts (the commands after it address its database on every
    /// node; one it refuses answers its error and changes nothing, as in Redis).
    fn replicated_in_exec(&self, c: &cmd::Command, args: &Args) -> bool {
        !matches!(c.kind, Kind::Conn) || (c.name == "select" && self.select_index(&args[1]).is_ok())
    }

    /// WATCH: registers the keys under this connection's token through the log.
    async fn watch_replicated(&mut self, cluster: &Cluster, args: &Args) -> Reply {
        let node = cluster.replicator.node_id();
        let id = self.id;
        let Some(c) = self.cluster.as_mut() else {
            return Reply::err("not in cluster mode");
        };
        let token = *c.watch_token.get_or_insert_with(|| new_token(id, node));
        let req = Request::in_db(
            self.db,
            Request::Watch {
                token,
                keys: args[1..].to_vec(),
            },
        );
        match propose(cluster, req).await {
            Ok(_) => Reply::Ok,
            Err(e) => e,
        }
    }

    /// Forgets this connection's watches on every node (UNWATCH, DISCARD, RESET).
    async fn unwatch_replicated(&mut self, cluster: &Cluster) {
        let token = self.cluster.as_mut().and_then(|c| c.watch_token.take());
        if let Some(token) = token {
            // A failure leaves the token to the hour's sweep; a new WATCH takes a new one.
            let _ = propose(cluster, Request::Unwatch { token }).await;
        }
    }

    /// `EVALSHA sha ...` becomes `EVAL body ...` when this node's cache holds the script,
    /// so that applying it never depends on another node's cache (an EVALSHA left as it
    /// is answers NOSCRIPT on every node); `SCRIPT LOAD` enters this node's cache at once.
    fn inline_script(&self, mut args: Args) -> Args {
        crate::script::cache_before_replicating(self.shared.store.scripts(), &args);
        if args[0].eq_ignore_ascii_case(b"evalsha")
            && args.len() >= 2
            && let Some(body) = crate::script::body_for_sha(self.shared.store.scripts(), &args[1])
        {
            args[0] = Bytes::from_static(b"EVAL");
            args[1] = body;
        }
        args
    }

    /// PUBLISH and SPUBLISH: through the log, so every node's subscribers get it (the
    /// nodes are one shard, so a shard channel's message reaches them all); this node's own
    /// subscribers get it once the entry is committed, and they are what the reply counts
    /// (as Redis Cluster's PUBLISH counts the receiving node's clients).
    async fn publish_replicated(&mut self, cluster: &Cluster, args: &Args) -> Reply {
        let shard = args[0].eq_ignore_ascii_case(b"spublish");
        let req = Request::Publish {
            origin: cluster.replicator.node_id(),
            shard,
            channel: args[1].clone(),
            message: args[2].clone(),
        };
        let ps = &self.shared.pubsub;
        match propose(cluster, req).await {
            Ok(_) if shard => Reply::Int(ps.spublish(&args[1], &args[2]) as i64),
            Ok(_) => Reply::Int(ps.publish(&args[1], &args[2]) as i64),
            Err(e) => e,
        }
    }
}

/// Drops watch `token` on every node without waiting.
fn forget(cluster: &Cluster, token: u64) {
    let f = cluster
        .replicator
        .propose(Request::Unwatch { token }.encode());
    tokio::spawn(async move {
        let _ = f.await;
    });
}

/// Proposes `req`; the answers, or the error reply.
async fn propose(cluster: &Cluster, req: Request) -> Result<Vec<Answer>, Reply> {
    let bytes = cluster
        .replicator
        .propose(req.encode())
        .await
        .map_err(|e| e.reply())?;
    decode_answers(&bytes).map_err(Reply::err)
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

fn parse_id(b: &[u8]) -> Option<u64> {
    std::str::from_utf8(b).ok()?.parse().ok().filter(|&i| i > 0)
}

/// `CLUSTER INFO | MYID | LEADER | ADDLEARNER id raft-addr | PROMOTE id | REMOVE id | HELP`,
/// and Redis Cluster's `SLOTS | SHARDS | NODES | KEYSLOT key | COUNTKEYSINSLOT slot |
/// GETKEYSINSLOT slot count` (the last two read this node's copy, as Redis's do).
pub(super) async fn cluster_command(cluster: &Cluster, store: &Store, a: &[Bytes]) -> Reply {
    let sub = a[1].to_ascii_lowercase();
    if let Some(r) = slot_command(cluster, store, &sub, a).await {
        return r;
    }
    let r = &cluster.replicator;
    let change = |m: Membership| async {
        match r.change_membership(m).await {
            Ok(()) => Reply::Ok,
            Err(ReplicaError::Refused(why)) => Reply::err(why),
            Err(e) => e.reply(),
        }
    };
    match (sub.as_slice(), a.len()) {
        (b"info", 2) => {
            let own = r.status();
            let peers = r.cluster_status().await;
            Reply::Verbatim(report::cluster_info(&own, &peers))
        }
        (b"myid", 2) => Reply::bulk(r.node_id().to_string()),
        (b"leader", 2) => match r.status().leader {
            Some(l) => Reply::Int(l as i64),
            None => Reply::Nil,
        },
        (b"addlearner", 4) => match (parse_id(&a[2]), std::str::from_utf8(&a[3])) {
            (Some(id), Ok(addr)) if !addr.is_empty() => {
                change(Membership::AddLearner {
                    id,
                    addr: addr.to_string(),
                })
                .await
            }
            _ => Reply::err("usage: CLUSTER ADDLEARNER <node-id> <raft-host:port>"),
        },
        (b"promote", 3 | 4) => {
            let force = match a.get(3) {
                None => Some(false),
                Some(f) if f.eq_ignore_ascii_case(b"force") => Some(true),
                Some(_) => None,
            };
            match (parse_id(&a[2]), force) {
                (Some(id), Some(force)) => change(Membership::Promote { id, force }).await,
                _ => Reply::err("usage: CLUSTER PROMOTE <node-id> [FORCE]"),
            }
        }
        (b"remove", 3) => match parse_id(&a[2]) {
            Some(id) => change(Membership::Remove { id }).await,
            None => Reply::err("usage: CLUSTER REMOVE <node-id>"),
        },
        (b"help", 2) => Reply::Array(
            super::cluster_cmds::HELP
                .iter()
                .map(|l| Reply::Status((*l).into()))
                .collect(),
        ),
        _ => Reply::err(format!(
            "unknown subcommand or wrong number of arguments for '{}'. Try CLUSTER HELP.",
            String::from_utf8_lossy(&a[1])
        )),
    }
}

/// The Redis Cluster subcommands (`replica::topology`, `keyslot`); `None` for the others.
async fn slot_command(cluster: &Cluster, store: &Store, sub: &[u8], a: &[Bytes]) -> Option<Reply> {
    let arity = match sub {
        b"slots" | b"shards" | b"nodes" => 2,
        b"keyslot" | b"countkeysinslot" => 3,
        b"getkeysinslot" => 4,
        _ => return None,
    };
    if a.len() != arity {
        return Some(Reply::err(format!(
            "wrong number of arguments for 'cluster|{}' command",
            String::from_utf8_lossy(sub)
        )));
    }
    let r = &cluster.replicator;
    let slot = |b: &[u8]| parse_i64(b).map(|s| u16::try_from(s).ok().filter(|&s| s < SLOTS));
    const NOT_INT: &str = "value is not an integer or out of range";
    Some(match sub {
        b"slots" | b"shards" | b"nodes" => {
            let own = r.status();
            let peers = r.cluster_status().await;
            match sub {
                b"slots" => topology::slots(&own, &peers),
                b"shards" => topology::shards(&own, &peers),
                _ => Reply::Verbatim(topology::nodes(&own, &peers)),
            }
        }
        b"keyslot" => Reply::Int(i64::from(key_slot(&a[2]))),
        b"countkeysinslot" => match slot(&a[2]) {
            None => Reply::err(NOT_INT),
            Some(None) => Reply::err("Invalid slot"),
            Some(Some(s)) => match keys_in_slot(&store.reader(), s, usize::MAX) {
                Ok(keys) => Reply::Int(keys.len() as i64),
                Err(e) => e,
            },
        },
        _ => match (slot(&a[2]), parse_i64(&a[3])) {
            (None, _) | (_, None) => Reply::err(NOT_INT),
            (Some(Some(s)), Some(n)) if n >= 0 => {
                let limit = usize::try_from(n).unwrap_or(usize::MAX);
                match keys_in_slot(&store.reader(), s, limit) {
                    Ok(keys) => Reply::Array(keys.into_iter().map(Reply::bulk).collect()),
                    Err(e) => e,
                }
            }
            _ => Reply::err("Invalid slot or number of keys"),
        },
    })
}
