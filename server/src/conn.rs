//! One client connection: reads requests, runs them in order, writes the replies.
//!
//! Every request a read brings in is parsed first, then the whole group runs and its replies
//! go out in one write (pipelining costs one read and one write per group, not per command).
//! Engine calls run on the I/O worker itself: a get served by the memtable or block cache
//! takes about a microsecond, a page-cache read a few, far less than a hop to another
//! thread. A group that may block for longer (any write with `appendfsync always`, which
//! fsyncs; scans over the whole keyspace or a set; EXEC; FLUSHDB) runs inside
//! `block_in_place`, so the runtime moves other connections off this worker meanwhile.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::watch;

use crate::cmd::{self, COMMANDS, Command, Kind, NOT_INT, parse_i64};
use crate::config::AppendFsync;
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
}

/// Per-connection state.
struct Conn {
    shared: Arc<Shared>,
    id: u64,
    peer: SocketAddr,
    proto: u8,
    authed: bool,
    name: Option<Bytes>,
    lib_name: Option<Bytes>,
    lib_ver: Option<Bytes>,
    multi: Option<Vec<Args>>,
    multi_error: bool,
    /// Bytes of the commands queued since MULTI.
    multi_bytes: usize,
}

/// Serves one client until it leaves, sends a malformed request, or the server shuts down.
pub async fn serve(
    mut sock: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    mut shutdown: watch::Receiver<bool>,
) {
    shared.total_connections.fetch_add(1, Ordering::Relaxed);
    if shared.config.requirepass.is_none() && !peer.ip().is_loopback() {
        let _ = sock.write_all(format!("-{DENIED}\r\n").as_bytes()).await;
        return;
    }
    let _slot = ClientSlot::take(&shared);
    if shared.clients.load(Ordering::Relaxed) > shared.config.maxclients {
        shared.rejected_connections.fetch_add(1, Ordering::Relaxed);
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
    let mut conn = Conn {
        id: shared.next_client_id.fetch_add(1, Ordering::Relaxed) + 1,
        authed: shared.config.requirepass.is_none(),
        shared,
        peer,
        proto: 2,
        name: None,
        lib_name: None,
        lib_ver: None,
        multi: None,
        multi_error: false,
        multi_bytes: 0,
    };
    let mut buf = BytesMut::with_capacity(16 * 1024);
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut batch: VecDeque<Args> = VecDeque::new();
    'conn: loop {
        if buf.capacity() - buf.len() < 4096 {
            buf.reserve(64 * 1024);
        }
        tokio::select! {
            biased;
            _ = shutdown.changed() => break,
            r = sock.read_buf(&mut buf) => match r {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            },
        }
        // Parse, run and answer until the buffer holds no complete request. A client that
        // has not authenticated yet gets one request at a time, so the parser applies the
        // unauthenticated limits only to requests before a successful AUTH.
        loop {
            let mut bad = None;
            loop {
                parser.set_authenticated(conn.authed);
                match parser.next(&mut buf) {
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
            while !batch.is_empty() {
                if conn.run_batch(&mut batch, &mut out) == Flow::Close {
                    batch.clear();
                    close = true;
                    bad = None;
                }
                if !out.is_empty() {
                    if sock.write_all(&out).await.is_err() {
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
                Reply::err(&e).encode(conn.proto, &mut out);
                let _ = sock.write_all(&out).await;
            }
            if close {
                break 'conn;
            }
        }
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

/// Write commands run together and committed as one batch.
struct Group<'a> {
    guard: crate::store::WriteGuard<'a>,
    txn: crate::store::Txn<'a>,
    replies: Vec<Reply>,
}

/// Commits a group and encodes its replies: each command's own reply if the commit
/// succeeded, else the commit's error for every command that did not fail by itself.
fn flush(group: Option<Group<'_>>, proto: u8, out: &mut Vec<u8>) {
    let Some(Group {
        guard,
        txn,
        replies,
    }) = group
    else {
        return;
    };
    let committed = txn.commit();
    drop(guard);
    for r in replies {
        match &committed {
            Err(e) if !r.is_error() => e.encode(proto, out),
            _ => r.encode(proto, out),
        }
    }
}

/// True for commands that may block for more than a few microseconds.
fn is_heavy(c: &Command, always: bool) -> bool {
    matches!(
        c.name,
        "keys" | "flushdb" | "smembers" | "exec" | "del" | "info" | "scan" | "sscan"
    ) || (always && matches!(c.kind, Kind::Write(_) | Kind::Exclusive(_)))
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
        if batch.is_empty() {
            return Flow::Continue;
        }
        let always = self.shared.config.appendfsync == AppendFsync::Always;
        let heavy = batch
            .iter()
            .any(|a| cmd::lookup(&a[0]).is_some_and(|c| is_heavy(c, always)));
        let store = Arc::clone(&self.shared.store);
        let mut run = || {
            let mut flow = Flow::Continue;
            let mut group: Option<Group<'_>> = None;
            while let Some(args) = batch.pop_front() {
                if flow == Flow::Close || out.len() >= OUT_CHUNK {
                    batch.push_front(args);
                    break;
                }
                let Some((c, f)) = self.groupable(&args) else {
                    flush(group.take(), self.proto, out);
                    flow = self.execute(args, out);
                    continue;
                };
                self.shared.total_commands.fetch_add(1, Ordering::Relaxed);
                let keys = || c.key_positions(args.len()).map(|i| &args[i][..]);
                if let Some(g) = group.as_mut()
                    && (g.replies.len() >= MAX_GROUP
                        || g.txn.len() >= MAX_GROUP * 4
                        || !g.guard.try_add(keys()))
                {
                    flush(group.take(), self.proto, out);
                }
                let g = group.get_or_insert_with(|| Group {
                    guard: store.lock_keys(keys()),
                    txn: store.txn(),
                    replies: Vec::new(),
                });
                let r = f(&mut g.txn, &args).unwrap_or_else(|e| e);
                g.replies.push(r);
            }
            flush(group.take(), self.proto, out);
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
    fn groupable(&self, args: &Args) -> Option<(&'static Command, cmd::Handler)> {
        if !self.authed || self.multi.is_some() {
            return None;
        }
        let c = cmd::lookup(&args[0])?;
        let Kind::Write(f) = c.kind else {
            return None;
        };
        let ok = c.arity_ok(args.len())
            && c.key_positions(args.len())
                .all(|i| args[i].len() <= MAX_KEY_LEN);
        ok.then_some((c, f))
    }

    /// Runs one request; appends its reply.
    fn execute(&mut self, args: Args, out: &mut Vec<u8>) -> Flow {
        self.shared.total_commands.fetch_add(1, Ordering::Relaxed);
        let (reply, flow) = self.dispatch(args);
        reply.encode(self.proto, out);
        flow
    }

    fn dispatch(&mut self, args: Args) -> (Reply, Flow) {
        // Redis's order of checks: existence, arity, then authentication.
        let Some(c) = cmd::lookup(&args[0]) else {
            self.flag_multi();
            return (unknown_command(&args), Flow::Continue);
        };
        if !c.arity_ok(args.len()) {
            self.flag_multi();
            return (wrong_arity(c.name), Flow::Continue);
        }
        if !self.authed && !matches!(c.name, "auth" | "hello" | "quit") {
            self.flag_multi();
            return (Reply::Error(NOAUTH.into()), Flow::Continue);
        }
        if c.key_positions(args.len())
            .any(|i| args[i].len() > MAX_KEY_LEN)
        {
            self.flag_multi();
            return (
                Reply::err(format!("key longer than {MAX_KEY_LEN} bytes")),
                Flow::Continue,
            );
        }
        if self.multi.is_some()
            && !matches!(c.name, "exec" | "discard" | "multi" | "quit" | "reset")
        {
            // The queue lives in memory until EXEC: bound it like the query buffer.
            let size: usize = args.iter().map(|a| a.len() + 16).sum();
            if self.multi_bytes + size > self.shared.config.client_query_buffer_limit {
                self.flag_multi();
                return (
                    Reply::err(
                        "transaction too large: queued commands exceed client-query-buffer-limit",
                    ),
                    Flow::Continue,
                );
            }
            self.multi_bytes += size;
            if let Some(q) = self.multi.as_mut() {
                q.push(args);
            }
            return (Reply::Status("QUEUED".into()), Flow::Continue);
        }
        self.run(c, &args)
    }

    fn flag_multi(&mut self) {
        if self.multi.is_some() {
            self.multi_error = true;
        }
    }

    /// Runs a known, checked command outside a transaction.
    fn run(&mut self, c: &Command, args: &[Bytes]) -> (Reply, Flow) {
        let store = Arc::clone(&self.shared.store);
        let reply = match c.kind {
            Kind::Read(f) => {
                let mut txn = store.txn();
                f(&mut txn, args).unwrap_or_else(|e| e)
            }
            Kind::Write(f) => {
                let _g = store.lock_keys(c.key_positions(args.len()).map(|i| &args[i][..]));
                let mut txn = store.txn();
                match f(&mut txn, args) {
                    Ok(r) => txn.commit().map(|()| r).unwrap_or_else(|e| e),
                    Err(e) => e,
                }
            }
            Kind::Exclusive(f) => {
                let _g = store.lock_all();
                let mut txn = store.txn();
                match f(&mut txn, args) {
                    Ok(r) => txn.commit().map(|()| r).unwrap_or_else(|e| e),
                    Err(e) => e,
                }
            }
            Kind::Conn => return self.conn_command(c, args),
        };
        (reply, Flow::Continue)
    }

    fn conn_command(&mut self, c: &Command, a: &[Bytes]) -> (Reply, Flow) {
        let r = match c.name {
            "ping" => match a.len() {
                1 => Reply::Status("PONG".into()),
                2 => Reply::Bulk(a[1].clone()),
                _ => wrong_arity("ping"),
            },
            "echo" => Reply::Bulk(a[1].clone()),
            "hello" => self.hello(a),
            "auth" => self.auth(a),
            "select" => match parse_i64(&a[1]) {
                Some(0) => Reply::Ok,
                Some(_) => Reply::err("DB index is out of range"),
                None => Reply::err(NOT_INT),
            },
            "quit" => return (Reply::Ok, Flow::Close),
            "reset" => {
                self.multi = None;
                self.multi_error = false;
                self.proto = 2;
                self.name = None;
                self.authed = self.shared.config.requirepass.is_none();
                Reply::Status("RESET".into())
            }
            "client" => self.client(a),
            "command" => command(a),
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
                    Reply::Ok
                } else {
                    Reply::err("DISCARD without MULTI")
                }
            }
            "exec" => self.exec(),
            _ => unknown_command(a),
        };
        (r, Flow::Continue)
    }

    /// EXEC: every queued command runs against one write set, committed as one atomic
    /// batch, with every other writer locked out meanwhile.
    fn exec(&mut self) -> Reply {
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
        let mut txn = store.txn();
        let mut replies = Vec::with_capacity(queue.len());
        for args in &queue {
            let Some(c) = cmd::lookup(&args[0]) else {
                replies.push(unknown_command(args));
                continue;
            };
            let r = match c.kind {
                Kind::Read(f) | Kind::Write(f) | Kind::Exclusive(f) => {
                    f(&mut txn, args).unwrap_or_else(|e| e)
                }
                Kind::Conn => self.conn_command(c, args).0,
            };
            replies.push(r);
        }
        match txn.commit() {
            Ok(()) => Reply::Array(replies),
            Err(e) => e,
        }
    }

    fn password_ok(&self, user: &[u8], pass: &[u8]) -> bool {
        let Some(want) = self.shared.config.requirepass.as_deref() else {
            // Without a password the default user takes any (Redis's `nopass`).
            return user == b"default";
        };
        // Compare without an early exit, so timing does not tell how much of it matched.
        let want = want.as_bytes();
        let mut diff = (want.len() != pass.len()) as u8;
        for (i, w) in want.iter().enumerate() {
            diff |= w ^ pass.get(i).copied().unwrap_or(0);
        }
        user == b"default" && diff == 0
    }

    fn auth(&mut self, a: &[Bytes]) -> Reply {
        let (user, pass) = match a.len() {
            2 => (&b"default"[..], &a[1][..]),
            3 => (&a[1][..], &a[2][..]),
            _ => return Reply::err("syntax error"),
        };
        if self.shared.config.requirepass.is_none() && a.len() == 2 {
            return Reply::err(
                "AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?",
            );
        }
        if self.password_ok(user, pass) {
            self.authed = true;
            Reply::Ok
        } else {
            Reply::Error(WRONGPASS.into())
        }
    }

    fn hello(&mut self, a: &[Bytes]) -> Reply {
        let mut proto = self.proto;
        if let Some(v) = a.get(1) {
            match parse_i64(v) {
                Some(p @ 2..=3) => proto = p as u8,
                Some(_) => return Reply::Error("NOPROTO unsupported protocol version".into()),
                None => return Reply::err("Protocol version is not an integer or out of range"),
            }
        }
        let mut i = 2;
        let mut auth = None;
        let mut name = None;
        while i < a.len() {
            let opt = a[i].to_ascii_uppercase();
            if opt == b"AUTH" && i + 2 < a.len() {
                auth = Some((a[i + 1].clone(), a[i + 2].clone()));
                i += 3;
            } else if opt == b"SETNAME" && i + 1 < a.len() {
                name = Some(a[i + 1].clone());
                i += 2;
            } else {
                return Reply::err(format!(
                    "Syntax error in HELLO option '{}'",
                    String::from_utf8_lossy(&a[i])
                ));
            }
        }
        if let Some((user, pass)) = auth {
            if !self.password_ok(&user, &pass) {
                return Reply::Error(WRONGPASS.into());
            }
            self.authed = true;
        }
        if !self.authed {
            return Reply::Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time".into());
        }
        if let Some(n) = name {
            if !valid_name(&n) {
                return Reply::err(
                    "Client names cannot contain spaces, newlines or special characters.",
                );
            }
            self.name = (!n.is_empty()).then_some(n);
        }
        self.proto = proto;
        let s = |x: &str| Reply::bulk(x.to_string());
        Reply::Map(vec![
            (s("server"), s("redis")),
            (s("version"), s(crate::info::REDIS_VERSION)),
            (s("proto"), Reply::Int(i64::from(proto))),
            (s("id"), Reply::Int(self.id as i64)),
            (s("mode"), s("standalone")),
            (s("role"), s("master")),
            (s("modules"), Reply::Array(Vec::new())),
        ])
    }

    fn client(&mut self, a: &[Bytes]) -> Reply {
        let sub = a[1].to_ascii_lowercase();
        let arity = |n: usize| a.len() == n;
        let sub_name = String::from_utf8_lossy(&sub).into_owned();
        let wrong = || wrong_arity(&format!("client|{sub_name}"));
        match sub.as_slice() {
            b"setname" => {
                if !arity(3) {
                    return wrong();
                }
                if !valid_name(&a[2]) {
                    return Reply::err(
                        "Client names cannot contain spaces, newlines or special characters.",
                    );
                }
                self.name = (!a[2].is_empty()).then(|| a[2].clone());
                Reply::Ok
            }
            b"getname" => {
                if !arity(2) {
                    return wrong();
                }
                self.name.clone().map_or(Reply::Nil, Reply::Bulk)
            }
            b"id" => {
                if !arity(2) {
                    return wrong();
                }
                Reply::Int(self.id as i64)
            }
            b"setinfo" => {
                if !arity(4) {
                    return wrong();
                }
                let attr = a[2].to_ascii_lowercase();
                let (slot, label) = match attr.as_slice() {
                    b"lib-name" => (&mut self.lib_name, "lib-name"),
                    b"lib-ver" => (&mut self.lib_ver, "lib-ver"),
                    _ => {
                        return Reply::err(format!(
                            "Unrecognized option '{}'",
                            String::from_utf8_lossy(&a[2])
                        ));
                    }
                };
                if !valid_name(&a[3]) {
                    return Reply::err(format!(
                        "{label} cannot contain spaces, newlines or special characters."
                    ));
                }
                *slot = Some(a[3].clone());
                Reply::Ok
            }
            b"info" => {
                if !arity(2) {
                    return wrong();
                }
                Reply::Verbatim(format!("{}\n", self.client_line()))
            }
            _ => Reply::err(format!(
                "unknown subcommand '{}'. Try CLIENT HELP.",
                String::from_utf8_lossy(&a[1])
            )),
        }
    }

    fn client_line(&self) -> String {
        let s = |b: &Option<Bytes>| b.as_ref().map(|b| String::from_utf8_lossy(b).into_owned());
        format!(
            "id={} addr={} name={} resp={} multi={} lib-name={} lib-ver={}",
            self.id,
            self.peer,
            s(&self.name).unwrap_or_default(),
            self.proto,
            self.multi.as_ref().map_or(-1, |q| q.len() as i64),
            s(&self.lib_name).unwrap_or_default(),
            s(&self.lib_ver).unwrap_or_default(),
        )
    }

    fn config(&self, a: &[Bytes]) -> Reply {
        let sub = a.get(1).map(|s| s.to_ascii_lowercase()).unwrap_or_default();
        match sub.as_slice() {
            b"get" if a.len() >= 3 => {
                let cfg = &self.shared.config;
                let items: [(&str, String); 8] = [
                    ("appendonly", "yes".into()),
                    (
                        "appendfsync",
                        format!("{:?}", cfg.appendfsync).to_ascii_lowercase(),
                    ),
                    ("save", String::new()),
                    ("databases", "1".into()),
                    ("maxclients", cfg.maxclients.to_string()),
                    ("port", self.shared.port.to_string()),
                    ("bind", cfg.bind.to_string()),
                    ("proto-max-bulk-len", cfg.proto_max_bulk_len.to_string()),
                ];
                let pairs = items
                    .into_iter()
                    .filter(|(k, _)| {
                        a[2..]
                            .iter()
                            .any(|p| crate::glob::matches(&p.to_ascii_lowercase(), k.as_bytes()))
                    })
                    .map(|(k, v)| (Reply::bulk(k.to_string()), Reply::bulk(v)))
                    .collect();
                Reply::Map(pairs)
            }
            b"get" => wrong_arity("config|get"),
            _ => Reply::err(format!(
                "unknown subcommand '{}'. Try CONFIG HELP.",
                String::from_utf8_lossy(a.get(1).map_or(&b""[..], |s| &s[..]))
            )),
        }
    }
}

/// Client names: printable ASCII without spaces (Redis's rule).
fn valid_name(n: &[u8]) -> bool {
    n.iter().all(|&c| (b'!'..=b'~').contains(&c))
}

/// Redis's arity error.
pub fn wrong_arity(name: &str) -> Reply {
    Reply::err(format!("wrong number of arguments for '{name}' command"))
}

/// Redis's unknown-command error: the name and the first arguments, up to about 128 bytes.
pub fn unknown_command(a: &[Bytes]) -> Reply {
    let name: String = String::from_utf8_lossy(&a[0]).chars().take(128).collect();
    let mut args = String::new();
    for arg in &a[1..] {
        if args.len() >= 128 {
            break;
        }
        let room = 128 - args.len();
        let text = String::from_utf8_lossy(arg);
        let mut cut = text.len().min(room);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        args.push_str(&format!("'{}' ", &text[..cut]));
    }
    Reply::err(format!(
        "unknown command '{name}', with args beginning with: {args}"
    ))
}

fn command_info(c: &Command) -> Reply {
    Reply::Array(vec![
        Reply::bulk(c.name),
        Reply::Int(i64::from(c.arity)),
        Reply::Set(c.flags.iter().map(|f| Reply::Status((*f).into())).collect()),
        Reply::Int(i64::from(c.first_key)),
        Reply::Int(i64::from(c.last_key)),
        Reply::Int(i64::from(c.step)),
        Reply::Set(Vec::new()),
        Reply::Set(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

fn command_doc(c: &Command) -> Reply {
    Reply::Map(vec![
        (Reply::bulk("summary"), Reply::bulk(c.summary)),
        (Reply::bulk("since"), Reply::bulk("1.0.0")),
        (Reply::bulk("group"), Reply::bulk(c.group)),
    ])
}

/// `COMMAND [COUNT | LIST | INFO name... | DOCS name...]`
fn command(a: &[Bytes]) -> Reply {
    let Some(sub) = a.get(1) else {
        return Reply::Array(COMMANDS.iter().map(command_info).collect());
    };
    let pick = |names: &[Bytes]| -> Vec<&'static Command> {
        if names.is_empty() {
            COMMANDS.iter().collect()
        } else {
            names.iter().filter_map(|n| cmd::lookup(n)).collect()
        }
    };
    match sub.to_ascii_lowercase().as_slice() {
        b"count" if a.len() == 2 => Reply::Int(COMMANDS.len() as i64),
        b"list" => Reply::Array(COMMANDS.iter().map(|c| Reply::bulk(c.name)).collect()),
        b"info" => {
            if a.len() == 2 {
                return Reply::Array(COMMANDS.iter().map(command_info).collect());
            }
            Reply::Array(
                a[2..]
                    .iter()
                    .map(|n| cmd::lookup(n).map_or(Reply::NilArray, command_info))
                    .collect(),
            )
        }
        b"docs" => Reply::Map(
            pick(&a[2..])
                .into_iter()
                .map(|c| (Reply::bulk(c.name), command_doc(c)))
                .collect(),
        ),
        b"count" => wrong_arity("command|count"),
        _ => Reply::err(format!(
            "unknown subcommand '{}'. Try COMMAND HELP.",
            String::from_utf8_lossy(sub)
        )),
    }
}
