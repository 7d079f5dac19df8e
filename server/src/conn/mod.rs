//! One client connection: reads requests, runs them in order, writes the replies.
//!
//! Every request a read brings in is parsed first, then the whole group runs and its replies
//! go out in one write (pipelining costs one read and one write per group, not per command).
//! Engine calls run on the I/O worker itself: a get served by the memtable or block cache
//! takes about a microsecond, a page-cache read a few, far less than a hop to another
//! thread. A group that may block for longer (any write with `appendfsync always`, which
//! fsyncs; scans over the whole keyspace or a set; EXEC; FLUSHDB) runs inside
//! `block_in_place`, so the runtime moves other connections off this worker meanwhile.
//! A blocking pop that must wait (BLPOP, ...) ends the group; the connection then awaits
//! its reply (`crate::blocking::wait`) and runs the rest of its requests after it.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

mod cluster_cmds;
mod handshake;
mod monitor;
mod pause;
mod replicated;
mod subscribe;
mod wait;
mod watching;

use crate::blocking::{self, Waiter, serve::Served, wait::Woken};
use crate::cmd::blocking::Outcome;
use crate::cmd::{self, Command, Kind};
use crate::cmd::{unknown_command, wrong_arity};
use crate::config::AppendFsync;
use crate::pubsub::Kind as SubKind;
use crate::resp::{Args, Limits, Parser, Reply};
use crate::server::Shared;
use crate::store::MAX_KEY_LEN;

/// Redis's protected-mode refusal, adapted to this server's flags.
pub const DENIED: &str = "DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. To accept clients from other hosts, restart bloomkv-server with --requirepass <password> (and connect with AUTH), or connect from the same host.";

const NOAUTH: &str = "NOAUTH Authentication required.";
const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// What the connection does after a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    Continue,
    Close,
    /// The command blocked (BLPOP, ...): the connection waits for `Conn::waiter`.
    Block,
    /// CLIENT PAUSE holds the command at the front of the batch: the connection waits for
    /// the pause to end, then runs it.
    Pause,
}

/// Per-connection state.
struct Conn {
    shared: Arc<Shared>,
    /// This client as CLIENT LIST shows it.
    entry: Arc<crate::clients::ClientEntry>,
    id: u64,
    proto: u8,
    authed: bool,
    name: Option<Bytes>,
    lib_name: Option<Bytes>,
    lib_ver: Option<Bytes>,
    multi: Option<Vec<Args>>,
    multi_error: bool,
    /// Bytes of the commands queued since MULTI.
    multi_bytes: usize,
    /// This client's WATCH mark, and the keys it watches (with whether each had expired,
    /// unreclaimed, when watched).
    watcher: Arc<crate::store::watch::Watcher>,
    watched: std::collections::HashMap<(crate::store::DbIndex, Bytes), bool>,
    /// The database this connection's commands address (`SELECT`).
    db: crate::store::DbIndex,
    /// Pub/sub channels, patterns and the mailbox their messages arrive in.
    subs: subscribe::Subscriptions,
    /// The blocked command's waiter, after a command answered [`Flow::Block`].
    waiter: Option<Arc<Waiter>>,
    /// A long reply still being produced (`Reply::Stream`): it goes out before anything
    /// else, [`OUT_CHUNK`] at a time.
    stream: Option<crate::resp::Stream>,
    /// Cluster mode: the connection's replication state (`None`: a standalone server).
    cluster: Option<replicated::ClusterConn>,
    /// Argument vectors of requests that have run, emptied, for the parser to fill again.
    spare: Vec<Args>,
    /// The commands the last script ran, for MONITOR (noted only while someone monitors).
    script_calls: Vec<crate::store::txn::ScriptCall>,
    /// CLIENT REPLY OFF: no replies until CLIENT REPLY ON.
    replies_off: bool,
    /// CLIENT REPLY SKIP: how many more replies to leave out (its own and the next one's).
    replies_skipped: u8,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.unwatch_all();
        self.unsubscribe_all();
    }
}

/// Writes `out` unless the client is cut off meanwhile (a subscriber past the pub/sub
/// limits: only `listening` clients can be); false when the connection should close.
async fn write_out(
    sock: &mut TcpStream,
    out: &[u8],
    mailbox: &crate::pubsub::Mailbox,
    listening: bool,
    stats: &crate::stats::Stats,
) -> bool {
    stats.wrote(out.len());
    if !listening {
        return sock.write_all(out).await.is_ok();
    }
    tokio::select! {
        r = sock.write_all(out) => r.is_ok() && !mailbox.is_killed(),
        _ = mailbox.killed() => false,
    }
}

/// Serves one client until it leaves, sends a malformed request, or the server shuts down.
pub async fn serve(
    mut sock: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    shared.total_connections.fetch_add(1, Ordering::Relaxed);
    if shared.requirepass.read().is_none() && !peer.ip().is_loopback() {
        let _ = sock.write_all(format!("-{DENIED}\r\n").as_bytes()).await;
        return;
    }
    let _slot = ClientSlot::take(&shared);
    let maxclients = shared.maxclients.load(Ordering::Relaxed);
    if shared.clients.load(Ordering::Relaxed) > maxclients {
        shared.rejected_connections.fetch_add(1, Ordering::Relaxed);
        shared.refusals_log.warn(
            1000,
            &format!("refused a client from {peer}: maxclients ({maxclients}) reached"),
        );
        let _ = sock
            .write_all(b"-ERR max number of clients reached\r\n")
            .await;
        return;
    }
    let _ = sock.set_nodelay(true);
    let limits = Limits {
        max_bulk_len: shared.config.proto_max_bulk_len,
        max_query_buffer: shared.config.client_query_buffer_limit,
        ..Limits::default()
    };
    let mut parser = Parser::new(limits);
    let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed) + 1;
    let laddr = sock
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::new(shared.config.bind, shared.port));
    let registration = shared.client_list.register(id, peer, laddr);
    let authed = shared.requirepass.read().is_none();
    let mut conn = Conn {
        entry: Arc::clone(&registration.entry),
        id,
        authed,
        cluster: shared.replica.clone().map(replicated::ClusterConn::new),
        shared,
        proto: 2,
        name: None,
        lib_name: None,
        lib_ver: None,
        multi: None,
        multi_error: false,
        multi_bytes: 0,
        replies_off: false,
        replies_skipped: 0,
        watcher: crate::store::watch::Watcher::new(),
        watched: std::collections::HashMap::new(),
        db: 0,
        subs: subscribe::Subscriptions::default(),
        waiter: None,
        stream: None,
        spare: Vec::new(),
        script_calls: Vec::new(),
    };
    let mailbox = Arc::clone(&conn.subs.mailbox);
    let mut buf = BytesMut::with_capacity(16 * 1024);
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut batch: VecDeque<Args> = VecDeque::new();
    // The two ends every wait of this connection watches, made once: a future made afresh
    // in each wait registers with its notifier and deregisters again after every request
    // (~1.5k instructions per command, and the shutdown notifier is shared by every
    // connection). The shutdown future has a receiver of its own, since the replicated path
    // borrows `shutdown` too.
    let mut stop_rx = shutdown.clone();
    let stop = stop_rx.changed();
    tokio::pin!(stop);
    let killed = registration.entry.killed();
    tokio::pin!(killed);
    'conn: loop {
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(64 * 1024);
        }
        // Only subscribers get messages (and can be cut off for them): others wait on their
        // socket alone, once the messages that came before they left are out.
        let listening = conn.listening() || mailbox.is_killed() || mailbox.has_messages();
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = &mut killed => break,
            _ = mailbox.killed(), if listening => break,
            r = sock.read_buf(&mut buf) => match r {
                Ok(0) | Err(_) => break,
                Ok(n) => conn.shared.stats.read(n),
            },
            // Pub/sub messages go out while the client is idle too.
            _ = mailbox.ready(), if listening => {}
        }
        while mailbox.has_messages() {
            let more = conn.deliver(&mut out);
            if !write_out(&mut sock, &out, &mailbox, true, &conn.shared.stats).await {
                break 'conn;
            }
            out.clear();
            if !more {
                break;
            }
        }
        // Parse, run and answer until the buffer holds no complete request. A client that
        // has not authenticated yet gets one request at a time, so the parser applies the
        // unauthenticated limits only to requests before a successful AUTH.
        loop {
            let mut bad = None;
            loop {
                parser.set_authenticated(conn.authed);
                match parser.next_reusing(&mut buf, &mut conn.spare) {
                    Ok(Some(args)) => {
                        batch.push_back(args);
                        if !conn.authed {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(e) => {
                        bad = Some(e);
                        break;
                    }
                }
            }
            if batch.is_empty() && bad.is_none() {
                if buf.len() > parser.limits().max_query_buffer {
                    // Redis closes a client over client-query-buffer-limit without a reply.
                    break 'conn;
                }
                break;
            }
            let mut close = bad.is_some();
            // Replies go out whenever they pass OUT_CHUNK, so a client that pipelines big
            // reads holds at most about one chunk of replies here (plus one reply) at a time.
            while !batch.is_empty() || conn.stream.is_some() {
                let flow = if conn.cluster.is_some() {
                    let mut io = replicated::Io {
                        sock: &mut sock,
                        buf: &mut buf,
                        max_buf: parser.limits().max_query_buffer,
                        shutdown: &mut shutdown,
                    };
                    conn.run_batch_replicated(&mut batch, &mut out, &mut io)
                        .await
                } else {
                    conn.run_batch(&mut batch, &mut out)
                };
                if flow == Flow::Close {
                    batch.clear();
                    close = true;
                    bad = None;
                }
                if flow == Flow::Pause {
                    // The replies before the held command go out; it runs once the pause ends.
                    if !out.is_empty() {
                        conn.shared.stats.wrote(out.len());
                        if sock.write_all(&out).await.is_err() {
                            break 'conn;
                        }
                        out.clear();
                    }
                    let shared = Arc::clone(&conn.shared);
                    tokio::select! {
                        _ = shared.pause.ended() => {}
                        _ = &mut stop => break 'conn,
                        _ = &mut killed => break 'conn,
                    }
                    continue;
                }
                if flow == Flow::Block
                    && let Some(w) = conn.waiter.take()
                {
                    // The replies before the blocking command go out first; then this
                    // connection awaits its reply (holding no thread) and runs the rest of
                    // the batch after it.
                    if !out.is_empty() {
                        conn.shared.stats.wrote(out.len());
                        if sock.write_all(&out).await.is_err() {
                            blocking::wait::abandon(&conn.shared.blocked, &w);
                            break 'conn;
                        }
                        out.clear();
                    }
                    if buf.capacity() - buf.len() < 4096 {
                        buf.reserve(64 * 1024);
                    }
                    let limit = parser.limits().max_query_buffer;
                    let shared = Arc::clone(&conn.shared);
                    match blocking::wait::wait(
                        &shared.blocked,
                        &w,
                        &mut sock,
                        &mut buf,
                        limit,
                        &mut shutdown,
                    )
                    .await
                    {
                        Woken::Reply(r) => r.encode(conn.proto, &mut out),
                        Woken::Closed => break 'conn,
                    }
                }
                if !out.is_empty() {
                    if !write_out(
                        &mut sock,
                        &out,
                        &mailbox,
                        conn.listening(),
                        &conn.shared.stats,
                    )
                    .await
                    {
                        break 'conn;
                    }
                    out.clear();
                    if out.capacity() > 1 << 20 {
                        out.shrink_to(64 * 1024);
                    }
                }
            }
            if let Some(e) = bad {
                // Replies to the requests before the bad one have gone out first.
                let r = Reply::err(&e);
                conn.note_error(&r);
                r.encode(conn.proto, &mut out);
                let _ = sock.write_all(&out).await;
            }
            if close {
                break 'conn;
            }
        }
    }
    if mailbox.is_killed() {
        crate::log::warn(&format!(
            "closed client id={} addr={peer}: pub/sub messages waiting for it passed the output limit ({} MiB, or {} MiB for {} s)",
            conn.id,
            crate::pubsub::HARD_LIMIT >> 20,
            crate::pubsub::SOFT_LIMIT >> 20,
            crate::pubsub::SOFT_SECONDS
        ));
    }
    let _ = sock.shutdown().await;
}

/// Counts a connected client for as long as it lives.
struct ClientSlot(Arc<Shared>);

impl ClientSlot {
    fn take(shared: &Arc<Shared>) -> ClientSlot {
        shared.clients.fetch_add(1, Ordering::Relaxed);
        ClientSlot(Arc::clone(shared))
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        self.0.clients.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Reply bytes after which a connection writes before running more of its requests.
const OUT_CHUNK: usize = 4 << 20;

/// Most commands committed together by one group.
const MAX_GROUP: usize = 256;

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
fn flush(
    group: Option<Group<'_>>,
    reg: &blocking::Registry,
    stats: &crate::stats::Stats,
    proto: u8,
    out: &mut Vec<u8>,
) {
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
fn is_heavy(c: &Command, always: bool) -> bool {
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
    fn run_batch(&mut self, batch: &mut VecDeque<Args>, out: &mut Vec<u8>) -> Flow {
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
                    flush(
                        group.take(),
                        &self.shared.blocked,
                        &self.shared.stats,
                        self.proto,
                        out,
                    );
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
                    flush(
                        group.take(),
                        &self.shared.blocked,
                        &self.shared.stats,
                        self.proto,
                        out,
                    );
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
            flush(
                group.take(),
                &self.shared.blocked,
                &self.shared.stats,
                self.proto,
                out,
            );
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
    fn recycle(&mut self, mut args: Args) {
        args.clear();
        if self.spare.len() < MAX_SPARE && args.capacity() <= MAX_SPARE_ARGS {
            self.spare.push(args);
        }
    }

    /// Runs one request; appends its reply.
    fn execute(&mut self, mut args: Args, out: &mut Vec<u8>) -> Flow {
        self.shared.stats.processed();
        self.entry.touch(cmd::index(&args[0]));
        // Messages that arrived before this command go out before its reply (an UNSUBSCRIBE
        // confirmation comes after every message of the channel), as in Redis.
        if self.subscribed() {
            while self.deliver(out) {}
        }
        let (reply, flow) = self.dispatch(&mut args);
        self.recycle(args);
        self.note_error(&reply);
        self.entry.set_multi(self.multi.as_ref().map(Vec::len));
        self.publish_sub_counts();
        // CLIENT REPLY OFF or SKIP: the command runs, its reply is left out.
        let silent = self.replies_off || self.replies_skipped > 0;
        self.replies_skipped = self.replies_skipped.saturating_sub(1);
        match reply {
            _ if silent && flow != Flow::Block => {}
            Reply::Stream(s) => self.stream = Some(s),
            _ if flow == Flow::Block => {}
            r => r.encode(self.proto, out),
        }
        flow
    }

    fn dispatch(&mut self, args: &mut Args) -> (Reply, Flow) {
        // Redis's order of checks: existence, arity, then authentication.
        let Some(pos) = cmd::index(&args[0]) else {
            self.flag_multi();
            return (unknown_command(args), Flow::Continue);
        };
        let c = &cmd::COMMANDS[pos];
        if let Some(refused) = self.refusal(c, args) {
            self.shared.stats.rejected(pos);
            return (refused, Flow::Continue);
        }
        if self.multi.is_some()
            && !matches!(
                c.name,
                "exec" | "discard" | "multi" | "quit" | "reset" | "watch"
            )
        {
            // The queue lives in memory until EXEC: bound it like the query buffer.
            let size: usize = args.iter().map(|a| a.len() + 16).sum();
            if self.multi_bytes + size > self.shared.config.client_query_buffer_limit {
                self.flag_multi();
                self.shared.stats.rejected(pos);
                return (
                    Reply::err(
                        "transaction too large: queued commands exceed client-query-buffer-limit",
                    ),
                    Flow::Continue,
                );
            }
            self.multi_bytes += size;
            if let Some(q) = self.multi.as_mut() {
                q.push(std::mem::take(args));
            }
            return (Reply::Status("QUEUED".into()), Flow::Continue);
        }
        self.run(pos, args)
    }

    /// Why a known command is refused before it runs (arity, authentication, a key too
    /// long, a subscribed RESP2 client), if it is; inside MULTI the transaction is flagged.
    fn refusal(&mut self, c: &Command, args: &[Bytes]) -> Option<Reply> {
        if !c.arity_ok(args.len()) {
            if c.name == "exec" {
                // Redis aborts the transaction on a malformed EXEC instead of leaving it open.
                self.multi = None;
                self.multi_error = false;
                self.unwatch_all();
                return Some(Reply::Error(format!(
                    "EXECABORT Transaction discarded because of: wrong number of arguments for '{}' command",
                    c.name
                )));
            }
            self.flag_multi();
            return Some(wrong_arity(c.name));
        }
        if !self.authed && !matches!(c.name, "auth" | "hello" | "quit") {
            self.flag_multi();
            return Some(Reply::Error(NOAUTH.into()));
        }
        if c.key_positions(args.len())
            .any(|i| args[i].len() > MAX_KEY_LEN)
        {
            self.flag_multi();
            return Some(Reply::err(format!("key longer than {MAX_KEY_LEN} bytes")));
        }
        if let Some(refused) = self.refused_while_subscribed(c.name) {
            self.flag_multi();
            return Some(refused);
        }
        None
    }

    /// Counts an error reply going to the client (INFO errorstats).
    fn note_error(&self, r: &Reply) {
        if let Reply::Error(text) = r {
            self.shared.stats.error(text);
        }
    }

    fn flag_multi(&mut self) {
        if self.multi.is_some() {
            self.multi_error = true;
        }
    }

    /// Runs a known, checked command outside a transaction (`pos`: its place in the
    /// command table), counting it for INFO commandstats.
    fn run(&mut self, pos: usize, args: &[Bytes]) -> (Reply, Flow) {
        let c = &cmd::COMMANDS[pos];
        let store = Arc::clone(&self.shared.store);
        if matches!(c.kind, Kind::Write(_) | Kind::Exclusive(_))
            && let Some(cause) = store.writes_stopped()
        {
            self.shared.stats.rejected(pos);
            return (crate::store::misconf(&cause), Flow::Continue);
        }
        if matches!(
            c.kind,
            Kind::Write(_) | Kind::Exclusive(_) | Kind::Blocking(_)
        ) && let Some(busy) = crate::script::busy(store.scripts())
        {
            self.shared.stats.rejected(pos);
            return (busy, Flow::Continue);
        }
        let started = Instant::now();
        let (reply, flow) = self.run_checked(c, args);
        let failed = match &reply {
            Reply::Error(_) => true,
            // EXEC answers its commands' replies; its own failure is EXECABORT or an error.
            _ => false,
        };
        if c.name != "exec" {
            self.called(pos, args, micros(started), failed);
            if !self.script_calls.is_empty() {
                self.feed_script_calls();
            }
        } else {
            self.shared.stats.call(pos, micros(started), failed);
            if self.shared.pubsub.has_monitors() {
                self.feed_monitors(pos, args);
            }
        }
        (reply, flow)
    }

    fn run_checked(&mut self, c: &Command, args: &[Bytes]) -> (Reply, Flow) {
        let store = Arc::clone(&self.shared.store);
        let reply = match c.kind {
            Kind::Read(f) => {
                let mut txn = store.reader();
                txn.select(self.db);
                let tracing = self.shared.pubsub.has_monitors();
                if tracing {
                    txn.trace_script_calls();
                }
                let r = f(&mut txn, args).unwrap_or_else(|e| e);
                if tracing {
                    self.script_calls = txn.take_script_calls();
                }
                r
            }
            Kind::Write(f) => {
                let g = store.lock_keys(c.key_positions(args.len()).map(|i| &args[i][..]));
                let mut txn = store.txn_in(self.db);
                match f(&mut txn, args) {
                    Ok(r) => self.commit_serving(txn, g, r),
                    Err(e) => e,
                }
            }
            Kind::Blocking(f) => {
                let g = store.lock_keys(c.key_positions(args.len()).map(|i| &args[i][..]));
                let mut txn = store.txn_in(self.db);
                match f(&mut txn, args) {
                    Ok(Outcome::Done(r)) => self.commit_serving(txn, g, r),
                    Ok(Outcome::Block(b)) => {
                        // What the command wrote before it blocked (XREADGROUP's consumer)
                        // stays.
                        if !txn.is_empty()
                            && let Err(e) = txn.commit()
                        {
                            return (e, Flow::Continue);
                        }
                        // Registered under the keys' locks: a push after this finds it.
                        let w = self.shared.blocked.register(b);
                        self.shared.blocked.name(self.id, &w);
                        self.waiter = Some(w);
                        drop(g);
                        return (Reply::Nil, Flow::Block);
                    }
                    Err(e) => e,
                }
            }
            Kind::Exclusive(f) => {
                let g = store.lock_all();
                let mut txn = store.txn_in(self.db);
                let tracing = self.shared.pubsub.has_monitors();
                if tracing {
                    txn.trace_script_calls();
                }
                let r = f(&mut txn, args);
                if tracing {
                    self.script_calls = txn.take_script_calls();
                }
                match r {
                    Ok(r) => commit_exclusive(&self.shared.blocked, txn, g, r),
                    Err(e) => e,
                }
            }
            Kind::Conn if c.name == "wait" => return self.wait_standalone(args),
            Kind::Conn => return self.conn_command(c, args),
        };
        (reply, Flow::Continue)
    }

    /// Produces more of a streamed reply, until `out` holds [`OUT_CHUNK`] bytes or the reply
    /// is complete. A read error in the middle of it closes the connection (the client
    /// cannot be told inside an array).
    fn continue_stream(&mut self, out: &mut Vec<u8>) -> Flow {
        let Some(s) = &self.stream else {
            return Flow::Continue;
        };
        // A stream is long by definition (thousands of items): off the I/O worker, as
        // other long reads run.
        let proto = self.proto;
        match tokio::task::block_in_place(|| s.fill(proto, out, OUT_CHUNK)) {
            Ok(true) => {
                self.stream = None;
                Flow::Continue
            }
            Ok(false) => Flow::Continue,
            Err(e) => {
                eprintln!("bloomkv-server: client {}: reply cut short: {e}", self.id);
                self.stream = None;
                Flow::Close
            }
        }
    }

    /// Serves the blocked clients the command's pushes made ready (in its write set, under
    /// its locks), commits, then delivers their replies; the command's reply, or the
    /// commit's error.
    fn commit_serving(
        &self,
        mut txn: crate::store::Txn<'_>,
        mut g: crate::store::WriteGuard<'_>,
        reply: Reply,
    ) -> Reply {
        let reg = &self.shared.blocked;
        let store = txn.store();
        let mut served = Served::default();
        let committed = match blocking::serve::serve_ready(reg, &mut txn, Some(&mut g), &mut served)
        {
            Ok(()) => txn.commit().map(|_| ()),
            Err(e) => Err(e),
        };
        drop(g);
        served.finish(committed.is_ok(), reg, store);
        match committed {
            Ok(()) => reply,
            Err(e) => e,
        }
    }

    fn conn_command(&mut self, c: &Command, a: &[Bytes]) -> (Reply, Flow) {
        let r = match c.name {
            "ping" => self.ping(a),
            "echo" => Reply::Bulk(a[1].clone()),
            "hello" => self.hello(a),
            "auth" => self.auth(a),
            "select" => self.select(&a[1]),
            "swapdb" => self.swapdb(a, false),
            "quit" => return (Reply::Ok, Flow::Close),
            "shutdown" => {
                // NOSAVE / SAVE / NOW / FORCE change nothing here: every acknowledged write is
                // in the WAL, and a clean stop syncs it. ABORT has nothing to abort.
                for o in &a[1..] {
                    match o.to_ascii_uppercase().as_slice() {
                        b"NOSAVE" | b"SAVE" | b"NOW" | b"FORCE" => {}
                        b"ABORT" => {
                            return (Reply::err("No shutdown in progress."), Flow::Continue);
                        }
                        _ => return (Reply::err("syntax error"), Flow::Continue),
                    }
                }
                crate::log::notice("SHUTDOWN asked by a client: stopping");
                let _ = self.shared.stop.send(true);
                // Redis closes the connection without a reply when it shuts down.
                return (Reply::NoReply, Flow::Close);
            }
            "reset" => {
                self.multi = None;
                self.multi_error = false;
                self.unwatch_all();
                self.unsubscribe_all();
                self.proto = 2;
                self.db = 0;
                self.name = None;
                self.authed = self.shared.requirepass.read().is_none();
                self.replies_off = false;
                self.replies_skipped = 0;
                self.entry
                    .no_evict
                    .store(false, std::sync::atomic::Ordering::Relaxed);
                self.entry
                    .no_touch
                    .store(false, std::sync::atomic::Ordering::Relaxed);
                self.publish_meta();
                Reply::Status("RESET".into())
            }
            "client" => self.client(a),
            "command" => handshake::command(a),
            "config" => self.config(a),
            "info" => Reply::Verbatim(crate::info::render(&self.shared, &a[1..])),
            "multi" => {
                if self.multi.is_some() {
                    Reply::err("MULTI calls can not be nested")
                } else {
                    self.multi = Some(Vec::new());
                    self.multi_error = false;
                    self.multi_bytes = 0;
                    Reply::Ok
                }
            }
            "discard" => {
                if self.multi.take().is_some() {
                    self.multi_error = false;
                    self.unwatch_all();
                    Reply::Ok
                } else {
                    Reply::err("DISCARD without MULTI")
                }
            }
            "exec" => self.exec(),
            "watch" => self.watch(a),
            "subscribe" => self.subscribe(a, SubKind::Channel),
            "psubscribe" => self.subscribe(a, SubKind::Pattern),
            "ssubscribe" => self.subscribe(a, SubKind::Shard),
            "unsubscribe" => self.unsubscribe(a, SubKind::Channel),
            "punsubscribe" => self.unsubscribe(a, SubKind::Pattern),
            "sunsubscribe" => self.unsubscribe(a, SubKind::Shard),
            "publish" => self.publish(a),
            "spublish" => self.spublish(a),
            "pubsub" => self.pubsub(a),
            "script" => crate::script::script(self.shared.store.scripts(), a),
            "unwatch" => {
                self.unwatch_all();
                Reply::Ok
            }
            "role" => self.role(),
            "save" => self.shared.saves.save(&self.shared.store),
            "bgsave" => match a.get(1).map(|o| o.to_ascii_uppercase()) {
                None => self
                    .shared
                    .saves
                    .background(&self.shared.store, false, false),
                Some(o) if o == b"SCHEDULE" && a.len() == 2 => {
                    self.shared
                        .saves
                        .background(&self.shared.store, true, false)
                }
                Some(_) => Reply::err("syntax error"),
            },
            "bgrewriteaof" => self
                .shared
                .saves
                .background(&self.shared.store, false, true),
            "lastsave" => Reply::Int(self.shared.saves.last() as i64),
            "slowlog" => self.slowlog(a),
            "monitor" => self.monitor(),
            "latency" => self.latency(a),
            "wait" => self.wait_now(a),
            "cluster" | "readonly" | "readwrite" => self.cluster_disabled(a),
            _ => unknown_command(a),
        };
        (r, Flow::Continue)
    }

    /// EXEC: every queued command runs against one write set, committed as one atomic
    /// batch, with every other writer locked out meanwhile; a nil array instead when a
    /// watched key changed since WATCH. Watches end either way.
    fn exec(&mut self) -> Reply {
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
        let _g = store.lock_all();
        let mut txn = store.txn_in(self.db);
        match self.watch_broken(&txn) {
            Ok(false) => {}
            Ok(true) => return Reply::NilArray,
            Err(e) => return e,
        }
        let mut replies = Vec::with_capacity(queue.len());
        for args in &queue {
            let Some(pos) = cmd::index(&args[0]) else {
                replies.push(unknown_command(args));
                continue;
            };
            let c = &cmd::COMMANDS[pos];
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
                Kind::Conn if c.name == "swapdb" => self.swapdb(args, true),
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
        // Blocked clients are served once the whole transaction has run, as in Redis;
        // every other writer is locked out, so no lock is needed for their keys.
        let reg = &self.shared.blocked;
        let mut served = Served::default();
        let committed = match blocking::serve::serve_ready(reg, &mut txn, None, &mut served) {
            Ok(()) => txn.commit().map(|_| ()),
            Err(e) => Err(e),
        };
        drop(_g);
        served.finish(committed.is_ok(), reg, &store);
        match committed {
            Ok(()) => Reply::Array(replies),
            Err(e) => e,
        }
    }
}

/// Commits an exclusive command's write set (EVAL's, FLUSHDB's) after serving the blocked
/// clients its pushes made ready (every other writer is locked out, as under EXEC); its
/// reply, or the commit's error.
fn commit_exclusive(
    reg: &blocking::Registry,
    mut txn: crate::store::Txn<'_>,
    guard: parking_lot::RwLockWriteGuard<'_, ()>,
    reply: Reply,
) -> Reply {
    let store = txn.store();
    let mut served = Served::default();
    let committed = match blocking::serve::serve_ready(reg, &mut txn, None, &mut served) {
        Ok(()) => txn.commit().map(|_| ()),
        Err(e) => Err(e),
    };
    drop(guard);
    served.finish(committed.is_ok(), reg, store);
    match committed {
        Ok(()) => reply,
        Err(e) => e,
    }
}

/// Microseconds since `t` (INFO commandstats' `usec`).
impl Conn {
    /// Counts a call in INFO's commandstats, logs it when it was slow (SLOWLOG, LATENCY)
    /// and shows it to monitors. AUTH and HELLO are never in the slow log: their arguments
    /// may hold a password.
    fn called(&self, pos: usize, args: &[Bytes], usec: u64, failed: bool) {
        self.shared.stats.call(pos, usec, failed);
        self.shared
            .latency
            .command(usec, || cmd::COMMANDS[pos].flags.contains(&"fast"));
        if self.shared.pubsub.has_monitors() {
            self.feed_monitors(pos, args);
        }
        if !matches!(cmd::COMMANDS[pos].name, "auth" | "hello") {
            self.shared.slowlog.record(
                args,
                usec,
                || self.entry.addr.to_string(),
                self.name.as_deref(),
            );
        }
    }
}

fn micros(t: Instant) -> u64 {
    t.elapsed().as_micros() as u64
}
