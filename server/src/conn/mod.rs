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

mod acl;
mod cluster_cmds;
mod commit;
mod dispatch;
mod group;
mod handshake;
mod monitor;
mod pause;
mod redirect;
mod replicated;
mod subscribe;
mod wait;
mod watching;

use crate::blocking::{self, Waiter, wait::Woken};
use crate::cmd;
use crate::cmd::{unknown_command, wrong_arity};
use crate::resp::{Args, Limits, Parser, Reply};
use crate::server::Shared;

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
    /// The user this connection runs as (`default` until AUTH says otherwise), as of
    /// `user_generation` of the registry.
    user: Arc<crate::acl::User>,
    user_generation: u64,
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

/// Whether a new client may stay: not from another host while protected mode is on (no
/// password), not past `maxclients`. A refused client gets Redis's error; an admitted one
/// is counted for as long as the returned slot lives.
async fn admit(sock: &mut TcpStream, peer: SocketAddr, shared: &Arc<Shared>) -> Option<ClientSlot> {
    // Redis's test: the default user has no password (whether or not it is on).
    let open = shared.acl.get("default").is_some_and(|u| u.nopass);
    if open && !peer.ip().is_loopback() {
        let _ = sock.write_all(format!("-{DENIED}\r\n").as_bytes()).await;
        return None;
    }
    let slot = ClientSlot::take(shared);
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
        return None;
    }
    Some(slot)
}

/// Writes the replies gathered so far (before the connection waits); false when the
/// client is gone.
async fn write_pending(
    sock: &mut TcpStream,
    out: &mut Vec<u8>,
    stats: &crate::stats::Stats,
) -> bool {
    if out.is_empty() {
        return true;
    }
    stats.wrote(out.len());
    let ok = sock.write_all(out).await.is_ok();
    out.clear();
    ok
}

impl Conn {
    /// A new connection's state: RESP2, database 0, authenticated when no password is set.
    fn new(shared: Arc<Shared>, id: u64, entry: Arc<crate::clients::ClientEntry>) -> Conn {
        let user_generation = shared.acl.generation();
        let user = shared
            .acl
            .get("default")
            .unwrap_or_else(|| Arc::new(crate::acl::User::default_user(None)));
        // Redis: a new connection is the default user's when that needs no password.
        let authed = user.enabled && user.nopass;
        Conn {
            entry,
            id,
            authed,
            user,
            user_generation,
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
        }
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
    let Some(_slot) = admit(&mut sock, peer, &shared).await else {
        return;
    };
    let _ = sock.set_nodelay(true);
    let mut parser = Parser::new(Limits {
        max_bulk_len: shared.config.proto_max_bulk_len,
        max_query_buffer: shared.config.client_query_buffer_limit,
        ..Limits::default()
    });
    let id = shared.next_client_id.fetch_add(1, Ordering::Relaxed) + 1;
    let laddr = sock
        .local_addr()
        .unwrap_or_else(|_| SocketAddr::new(shared.config.bind, shared.port));
    let registration = shared.client_list.register(id, peer, laddr);
    let mut conn = Conn::new(shared, id, Arc::clone(&registration.entry));
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
                    if !write_pending(&mut sock, &mut out, &conn.shared.stats).await {
                        break 'conn;
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
                    if !write_pending(&mut sock, &mut out, &conn.shared.stats).await {
                        blocking::wait::abandon(&conn.shared.blocked, &w);
                        break 'conn;
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
        let name = cmd::COMMANDS[pos].name;
        if !matches!(name, "auth" | "hello") {
            self.shared.slowlog.record(
                &monitor::redacted(name, args),
                usec,
                || self.entry.addr.to_string(),
                self.name.as_deref(),
            );
        }
    }
}

/// Microseconds since `t` (INFO commandstats' `usec`).
fn micros(t: Instant) -> u64 {
    t.elapsed().as_micros() as u64
}
