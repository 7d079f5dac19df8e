//! The server's side of a replicated state machine: applying committed requests to the
//! store, the same way on every node.
//!
//! The replication layer hands over the requests of one apply call in log order, each with
//! its log index, the leader's time and a seed. They all run in **one** write set
//! (`store::Txn`), so a later request reads what an earlier one wrote before anything is
//! on disk. The first request of an entry runs with `Ctx::from_log(index, time, seed)`,
//! later requests of the same entry (the leader proposes concurrent requests together) go
//! on in the entry's range of versions with their own time and seed; so a request's time,
//! its random choices (SPOP, SRANDMEMBER's sampling, ...) and the versions of the
//! collections it creates depend on its entry and its place in it, not on how entries were
//! grouped into calls. The
//! write set then becomes the call's batch (`Txn::into_batch`), which the replication layer
//! writes with its own records, and `Store::committed` updates the key counts.
//!
//! Besides the data, applying an entry: marks the replicated WATCHes of the keys it touched
//! ([`super::watches`]), wakes this node's clients blocked on keys it made ready
//! ([`super::wake`]), and delivers a `PUBLISH` to this node's subscribers.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::{Db, WriteBatch};
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};

use super::codec::{Answer, Request, encode_answers};
use super::wake::KeyWaits;
use super::watches::WatchTable;
use crate::cmd::blocking::Outcome;
use crate::cmd::{self, Kind};
use crate::pubsub::PubSub;
use crate::resp::{Args, Reply};
use crate::store::{Ctx, MAX_KEY_LEN, Store, Txn};

/// A `PUBLISH` entry older than this (by this node's clock) is not delivered: it is being
/// replayed (a restart, a node catching up), and its subscribers are long gone or got it.
pub const PUBLISH_FRESH_MS: u64 = 10_000;

/// One committed request, as the replication layer hands it over.
#[derive(Clone, Copy, Debug)]
pub struct LogCommand<'a> {
    /// Its log index: non-decreasing; the requests of one entry share it.
    pub index: u64,
    /// The leader's time for it, ms since the Unix epoch (non-decreasing along the log).
    pub time_ms: u64,
    /// A random value derived from the index and the request's place in its entry (the
    /// same on every node, different for every request).
    pub seed: u64,
    /// The request's bytes ([`Request::encode`]).
    pub request: &'a [u8],
}

/// Applies replicated requests to the store, and holds what applying touches on this node:
/// the watch table, the blocked clients, the pub/sub subscribers.
pub struct Applier {
    node_id: u64,
    store: RwLock<Option<Arc<Store>>>,
    watches: Mutex<WatchTable>,
    waits: Arc<KeyWaits>,
    pubsub: Arc<PubSub>,
    log_clock: Arc<AtomicU64>,
}

impl std::fmt::Debug for Applier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Applier")
            .field("node_id", &self.node_id)
            .finish_non_exhaustive()
    }
}

impl Applier {
    /// An applier for node `node_id`; it has no store until the first [`Applier::reset`].
    pub fn new(node_id: u64) -> Arc<Applier> {
        Arc::new(Applier {
            node_id,
            store: RwLock::new(None),
            watches: Mutex::new(WatchTable::default()),
            waits: Arc::new(KeyWaits::default()),
            pubsub: Arc::new(PubSub::default()),
            log_clock: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The newest leader time (ms since the epoch) this node applied from the log (0
    /// before the first apply since start): the "now" of the state machine's
    /// compaction-filter GC (`Config::replicated_engine_options`). It never goes back: the
    /// log's times are non-decreasing and a snapshot install only moves forward.
    pub fn log_clock(&self) -> &Arc<AtomicU64> {
        &self.log_clock
    }

    /// The node this applier serves.
    pub fn node_id(&self) -> u64 {
        self.node_id
    }

    /// The store over the state-machine database (`None` before the first reset).
    pub fn store(&self) -> Option<Arc<Store>> {
        self.store.read().clone()
    }

    /// This node's blocked clients.
    pub fn waits(&self) -> &Arc<KeyWaits> {
        &self.waits
    }

    /// This node's pub/sub subscribers.
    pub fn pubsub(&self) -> &Arc<PubSub> {
        &self.pubsub
    }

    /// Connections watching keys (INFO).
    pub fn watching(&self) -> usize {
        self.watches.lock().len()
    }

    /// The state-machine database is now `db` (at start, and after a snapshot install):
    /// the store serves it, the watch table is read back from it, and every blocked client
    /// looks again.
    ///
    /// # Errors
    /// Opening the store on `db` failed (engine error, newer format, damaged watch
    /// record).
    pub fn reset(&self, db: &Db) -> Result<(), String> {
        let table = WatchTable::load(db)?;
        {
            let mut slot = self.store.write();
            match slot.as_ref() {
                Some(s) => s
                    .replace_db(db.clone())
                    .map_err(|e| format!("opening the state machine's data: {e}"))?,
                None => {
                    let s = Store::new(db.clone())
                        .map_err(|e| format!("opening the state machine's data: {e}"))?;
                    // Keyspace notifications of the writes this node applies go to this
                    // node's subscribers, as a Redis replica's do.
                    s.notifier().attach(Arc::clone(&self.pubsub));
                    *slot = Some(Arc::new(s));
                }
            }
        }
        *self.watches.lock() = table;
        self.waits.wake_all();
        Ok(())
    }

    /// Applies `commands` (in log order): their writes go into `batch`; returns one
    /// encoded answer list ([`super::codec::encode_answers`]) per command. A request that
    /// does not decode is answered with an error (deterministically: every node decodes
    /// the same bytes the same way).
    ///
    /// # Errors
    /// Only when nothing can be applied: no store yet, or an engine error reading the
    /// watch state. A command's own failure (a wrong type, a read error inside a command)
    /// is its reply.
    pub fn apply(
        &self,
        commands: &[LogCommand<'_>],
        batch: &mut WriteBatch,
    ) -> Result<Vec<Vec<u8>>, String> {
        let Some(first) = commands.first() else {
            return Ok(Vec::new());
        };
        let store = self
            .store()
            .ok_or("the state machine was applied to before it was reset")?;
        let mut watches = self.watches.lock();
        let mut sys = WriteBatch::new();
        let mut ready: Vec<Vec<u8>> = Vec::new();
        let mut delivered = Vec::new();
        let mut out = Vec::with_capacity(commands.len());
        let mut txn = store.txn_with(Ctx::from_log(first.index, first.time_ms, first.seed));
        for (i, c) in commands.iter().enumerate() {
            if i > 0 && commands[i - 1].index == c.index {
                txn.next_in_entry(c.time_ms, c.seed);
            } else {
                txn.set_ctx(Ctx::from_log(c.index, c.time_ms, c.seed));
            }
            if !watches.is_empty() {
                txn.track_touched();
            }
            // Every request starts in database 0 ([`Request::InDb`] and a SELECT inside an
            // EXEC change it for the rest of theirs only).
            txn.select(0);
            let answers = match Request::decode(c.request) {
                Err(e) => vec![Answer::Reply(Reply::err(e))],
                Ok(req) => {
                    let mut e = Entry {
                        node_id: self.node_id,
                        txn: &mut txn,
                        watches: &mut watches,
                        sys: &mut sys,
                        flushed: Vec::new(),
                    };
                    let a = e.apply(req, &mut delivered, &store);
                    let flushed = std::mem::take(&mut e.flushed);
                    let mut touched = txn.take_touched().map_err(reply_text)?;
                    touched.extend(flushed);
                    if !touched.is_empty() {
                        watches.touch(&touched, &mut sys);
                    }
                    a
                }
            };
            // Clients blocked on a key of that name in any database look again (a key
            // ready in another database only costs them one more attempt).
            ready.extend(txn.take_ready().into_iter().map(|(_, k)| k));
            out.push(encode_answers(&answers));
        }
        drop(watches);
        let (data, done) = txn.into_batch();
        batch.append(&data);
        batch.append(&sys);
        store.committed(done);
        if let Some(t) = commands.iter().map(|c| c.time_ms).max() {
            self.log_clock.fetch_max(t, Ordering::AcqRel);
        }
        ready.sort();
        ready.dedup();
        self.waits.wake(&ready);
        let now = crate::store::txn::unix_ms();
        for d in delivered {
            if d.time_ms.saturating_add(PUBLISH_FRESH_MS) >= now {
                if d.shard {
                    self.pubsub.spublish(&d.channel, &d.message);
                } else {
                    self.pubsub.publish(&d.channel, &d.message);
                }
            }
        }
        Ok(out)
    }
}

/// A PUBLISH or SPUBLISH of another node, for this node's subscribers once its entry commits.
struct Delivery {
    time_ms: u64,
    shard: bool,
    channel: Bytes,
    message: Bytes,
}

fn reply_text(r: Reply) -> String {
    match r {
        Reply::Error(t) => t,
        other => format!("{other:?}"),
    }
}

/// One log entry being applied.
struct Entry<'a, 't> {
    node_id: u64,
    txn: &'a mut Txn<'t>,
    watches: &'a mut WatchTable,
    sys: &'a mut WriteBatch,
    /// Watched keys a FLUSHDB of this entry removed (FLUSHDB touches the watched keys that
    /// existed, as in Redis).
    flushed: Vec<crate::store::watch::Touched>,
}

impl Entry<'_, '_> {
    fn apply(&mut self, req: Request, delivered: &mut Vec<Delivery>, store: &Store) -> Vec<Answer> {
        match req {
            // Any index the store has, whatever this node's `--databases`: the nodes'
            // flags may differ, their state may not (the client's node checked SELECT).
            Request::InDb { db, request } => {
                self.txn.select(db);
                let answers = self.apply(*request, delivered, store);
                self.txn.select(0);
                answers
            }
            Request::Commands(cmds) => cmds.iter().map(|a| self.command(a, false)).collect(),
            Request::Exec { watch, commands } => vec![Answer::Reply(self.exec(watch, &commands))],
            Request::Watch { token, keys } => {
                let now = self.txn.now_ms();
                let mut flagged = Vec::with_capacity(keys.len());
                for k in keys {
                    match self.txn.record(&k) {
                        Ok(r) => flagged.push((k.to_vec(), r.is_some_and(|r| r.expired(now)))),
                        Err(e) => return vec![Answer::Reply(e)],
                    }
                }
                self.watches.watch(token, flagged, now, self.sys);
                self.txn.track_touched();
                vec![Answer::Reply(Reply::Ok)]
            }
            Request::Unwatch { token } => {
                self.watches.remove(token, self.sys);
                vec![Answer::Reply(Reply::Ok)]
            }
            Request::Expire { due } => {
                let mut n = 0u64;
                for (at, key) in &due {
                    match crate::store::expire::remove_if_due(self.txn, *at, key) {
                        Ok(removed) => n += u64::from(removed),
                        Err(e) => return vec![Answer::Reply(e)],
                    }
                }
                store.note_expired(n);
                let now = self.txn.now_ms();
                self.watches.expire(now, self.sys);
                vec![Answer::Reply(Reply::Int(n as i64))]
            }
            Request::Publish {
                origin,
                shard,
                channel,
                message,
            } => {
                // The origin node delivers to its own subscribers when the entry commits.
                if origin != self.node_id {
                    delivered.push(Delivery {
                        time_ms: self.txn.now_ms(),
                        shard,
                        channel,
                        message,
                    });
                }
                vec![Answer::Reply(Reply::Ok)]
            }
        }
    }

    /// Runs one command in the entry's write set, as the standalone server runs it in a
    /// group or an EXEC: a failure leaves none of its writes. `in_exec`: a blocking pop
    /// answers as on a timeout instead of blocking.
    fn command(&mut self, args: &Args, in_exec: bool) -> Answer {
        let Some(c) = cmd::lookup(&args[0]) else {
            return Answer::Reply(crate::cmd::unknown_command(args));
        };
        if !c.arity_ok(args.len()) {
            return Answer::Reply(crate::cmd::wrong_arity(c.name));
        }
        if c.key_positions(args.len())
            .any(|i| args[i].len() > MAX_KEY_LEN)
        {
            return Answer::Reply(Reply::err(format!("key longer than {MAX_KEY_LEN} bytes")));
        }
        match c.name {
            // The origin node sent the body (`script::body_for_sha`); an EVALSHA reaching
            // the log named a script that node did not hold. Never looked up here: caches
            // differ between nodes.
            "evalsha" => {
                return Answer::Reply(Reply::Error(crate::script::NOSCRIPT.into()));
            }
            // SCRIPT LOAD and FLUSH go through the log, so every node's cache agrees.
            "script" => {
                return Answer::Reply(crate::script::script(self.txn.store().scripts(), args));
            }
            // SELECT queued in a MULTI: the EXEC's later commands address that database.
            "select" => {
                return Answer::Reply(match crate::cmd::parse_i64(&args[1]) {
                    Some(n @ 0..=255) => {
                        self.txn.select(n as crate::store::DbIndex);
                        Reply::Ok
                    }
                    _ => Reply::err("DB index is out of range"),
                });
            }
            // Data does not move between databases in a cluster, as in Redis Cluster (the
            // log's entries from before databases were replicated refused these too).
            "move" => {
                return Answer::Reply(Reply::err("MOVE is not allowed in cluster mode"));
            }
            "copy" if other_database(args) => {
                return Answer::Reply(Reply::err(
                    "Copying to another database is not allowed in cluster mode",
                ));
            }
            _ => {}
        }
        if matches!(c.name, "flushdb" | "flushall") && !self.watches.is_empty() {
            for k in self.watches.keys() {
                if matches!(self.txn.record(k), Ok(Some(_)) | Err(_)) {
                    self.flushed.push((0, k.clone(), true));
                }
            }
        }
        self.txn.savepoint();
        let reply = match c.kind {
            // Every node runs the script alike, to the same writes (not killable).
            _ if c.name == "eval" => crate::script::eval_replicated(self.txn, args),
            _ if c.name == "fcall" => crate::cmd::functions::fcall_replicated(self.txn, args),
            Kind::Read(f) | Kind::Write(f) | Kind::Exclusive(f) => f(self.txn, args),
            Kind::Blocking(f) => match f(self.txn, args) {
                Ok(Outcome::Done(r)) => Ok(r),
                Ok(Outcome::Block(b)) if in_exec => Ok(b.op.timeout_reply()),
                Ok(Outcome::Block(b)) => {
                    // What the command wrote before it blocked (XREADGROUP's consumer) is
                    // applied with the entry.
                    return Answer::Block {
                        on_timeout: b.op.timeout_reply(),
                        retry: b.op.retry_args(),
                        keys: b.keys,
                        timeout: b.timeout,
                    };
                }
                Err(e) => Err(e),
            },
            Kind::Conn => Err(Reply::err(format!(
                "'{}' is a connection command and cannot be replicated",
                c.name
            ))),
        };
        Answer::Reply(reply.unwrap_or_else(|e| {
            self.txn.rollback();
            e
        }))
    }

    /// EXEC: nil when the token's watch broke (a watched key written since, or live then
    /// and expired now, or the token unknown); else every command, as one array.
    fn exec(&mut self, watch: Option<u64>, commands: &[Args]) -> Reply {
        if let Some(token) = watch {
            let now = self.txn.now_ms();
            let broken = match self.watches.remove(token, self.sys) {
                None => true,
                Some(w) if w.dirty => true,
                Some(w) => {
                    let mut expired = false;
                    for (k, stale) in &w.keys {
                        match self.txn.record(k) {
                            Ok(r) => expired |= !stale && r.is_some_and(|r| r.expired(now)),
                            Err(e) => return e,
                        }
                    }
                    expired
                }
            };
            if broken {
                return Reply::NilArray;
            }
        }
        let mut replies = Vec::with_capacity(commands.len());
        for args in commands {
            match self.command(args, true) {
                Answer::Reply(Reply::Seq(rs)) => replies.extend(rs),
                Answer::Reply(r) => replies.push(r),
                Answer::Block { on_timeout, .. } => replies.push(on_timeout),
            }
        }
        Reply::Array(replies)
    }
}

/// Whether a COPY names a destination database other than 0 (`DB n`).
fn other_database(args: &Args) -> bool {
    args.windows(2)
        .skip(3)
        .any(|w| w[0].eq_ignore_ascii_case(b"DB") && w[1].as_ref() != b"0")
}
