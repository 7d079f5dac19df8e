//! Running one request: the checks Redis makes before a command runs (existence, arity,
//! authentication, key length, pub/sub mode), MULTI's queue, then the command by its kind
//! (a read on a snapshot, a write under its keys' locks, a blocking pop, an exclusive
//! command, a connection command), counted for INFO and shown to MONITOR.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;

use super::commit::{Lock, commit_serving};
use super::{Conn, Flow, NOAUTH, OUT_CHUNK, handshake, micros};
use crate::cmd::blocking::Outcome;
use crate::cmd::{self, Command, Kind, unknown_command, wrong_arity};
use crate::pubsub::Kind as SubKind;
use crate::resp::{Args, Reply};
use crate::store::MAX_KEY_LEN;

impl Conn {
    /// Runs one request; appends its reply.
    pub(super) fn execute(&mut self, mut args: Args, out: &mut Vec<u8>) -> Flow {
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
        if let Some(refused) = self.refusal(pos, c, args) {
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
    fn refusal(&mut self, pos: usize, c: &Command, args: &[Bytes]) -> Option<Reply> {
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
        if let Some(denied) = self.acl_refusal(pos, args) {
            self.flag_multi();
            return Some(denied);
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
    pub(super) fn note_error(&self, r: &Reply) {
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
        // FUNCTION LIST, DUMP, STATS, KILL and HELP only read: refused neither when writes
        // stop nor (KILL and STATS) while a script is busy, as in Redis.
        let reads_functions = c.name == "function" && !cmd::functions::writes(args);
        if matches!(c.kind, Kind::Write(_) | Kind::Exclusive(_))
            && !reads_functions
            && let Some(cause) = store.writes_stopped()
        {
            self.shared.stats.rejected(pos);
            return (crate::store::misconf(&cause), Flow::Continue);
        }
        if matches!(
            c.kind,
            Kind::Write(_) | Kind::Exclusive(_) | Kind::Blocking(_)
        ) && !(reads_functions && cmd::functions::allowed_when_busy(args))
            && let Some(busy) = crate::script::busy(store.scripts())
        {
            self.shared.stats.rejected(pos);
            return (busy, Flow::Continue);
        }
        let started = Instant::now();
        // The scripts this command runs call commands as this connection's user.
        let _caller = (!self.user.unrestricted()
            && matches!(
                c.name,
                "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" | "exec"
            ))
        .then(|| {
            crate::script::caller::enter(crate::script::caller::Caller {
                user: Arc::clone(&self.user),
                acl: Arc::clone(&self.shared.acl),
                client_info: self.entry.line(),
            })
        });
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
            // Without the lock: a running function holds it, and FUNCTION KILL must reach it.
            Kind::Exclusive(f) if c.name == "function" && !cmd::functions::writes(args) => {
                let mut txn = store.reader();
                f(&mut txn, args).unwrap_or_else(|e| e)
            }
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
                    Ok(r) => commit_serving(&self.shared.blocked, txn, Lock::Keys(g), r),
                    Err(e) => e,
                }
            }
            Kind::Blocking(f) => {
                let g = store.lock_keys(c.key_positions(args.len()).map(|i| &args[i][..]));
                let mut txn = store.txn_in(self.db);
                match f(&mut txn, args) {
                    Ok(Outcome::Done(r)) => {
                        commit_serving(&self.shared.blocked, txn, Lock::Keys(g), r)
                    }
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
                    Ok(r) => commit_serving(&self.shared.blocked, txn, Lock::All(g), r),
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
    pub(super) fn continue_stream(&mut self, out: &mut Vec<u8>) -> Flow {
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

    pub(super) fn conn_command(&mut self, c: &Command, a: &[Bytes]) -> (Reply, Flow) {
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
                self.log_in_as_default();
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
            "acl" => self.acl(a),
            "monitor" => self.monitor(),
            "latency" => self.latency(a),
            "wait" => self.wait_now(a),
            // No slot moves in: ASKING has nothing to permit yet, and is accepted as Redis
            // Cluster accepts it.
            "asking" if self.cluster.is_some() => Reply::Ok,
            "cluster" | "readonly" | "readwrite" | "asking" => self.cluster_disabled(a),
            _ => unknown_command(a),
        };
        (r, Flow::Continue)
    }
}
