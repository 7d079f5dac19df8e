//! Blocked clients (BLPOP and the other blocking pops): who waits on which key, and serving
//! them atomically with the push that feeds them.
//!
//! * A blocking command that finds nothing registers a [`Waiter`] in the [`Registry`] while
//!   it still holds its keys' writer locks, so every later push to those keys finds it.
//! * A write command that pushes marks the key ready (`Txn::signal_ready`). Right after the
//!   command, still inside its write set and under its locks, [`serve::serve_ready`] serves
//!   the key's waiters in the order they blocked (first blocked, first served): each waiter
//!   is *claimed*, its pop runs in the pusher's write set, and its reply is held. The replies
//!   are delivered only once that write set has committed; if the commit fails the claims are
//!   released and the waiters stay blocked. So no other client's pop can take the element in
//!   between, and nothing a waiter is given is lost by a failed write.
//! * A waiter's connection ([`wait::wait`]) awaits its reply without holding a thread, and
//!   gives up on its timeout, on a disconnect or at shutdown by *cancelling*: a waiter is
//!   either cancelled (never served afterwards, removed from the registry) or claimed (then
//!   the connection waits for the claim's outcome), never both.

pub mod serve;
pub mod wait;

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::cmd::blocking::{Block, Op};
use crate::resp::Reply;
use crate::store::{DbIndex, ScopedKey};

/// Where a waiter stands.
#[derive(Debug)]
enum State {
    /// Blocked, may be claimed or cancelled.
    Waiting,
    /// A write set is serving it; `gone`: its client left meanwhile.
    Claimed { gone: bool },
    /// Served: the reply for its client.
    Served(Reply),
    /// Timed out, disconnected or served: never served (again).
    Done,
}

/// One blocked client.
#[derive(Debug)]
pub struct Waiter {
    id: u64,
    /// The client's id (CLIENT UNBLOCK finds it by that), 0 until [`Registry::name`].
    client: AtomicU64,
    block: Block,
    /// The stored database of the keys it waits on: `block.db` until a SWAPDB moves the
    /// client's database to other stored data ([`Registry::swap_dbs`]).
    db: AtomicU8,
    state: Mutex<State>,
    notify: Notify,
    /// Set by the first [`Registry::remove`]: the count drops once, also for a waiter on no
    /// key (WAIT).
    removed: AtomicBool,
}

/// What [`Waiter::cancel`] found.
#[derive(Debug)]
pub enum Cancel {
    /// It was waiting: now it is off the registry's books (the caller removes it).
    Cancelled,
    /// A write set is serving it: wait for the outcome.
    Busy,
    /// It was served already: its reply.
    Served(Reply),
}

impl Waiter {
    /// The command's wait: keys, pop and timeout.
    pub fn block(&self) -> &Block {
        &self.block
    }

    /// The pop it waits to run.
    pub fn op(&self) -> &Op {
        &self.block.op
    }

    /// True while it may be claimed.
    pub fn is_waiting(&self) -> bool {
        matches!(*self.state.lock(), State::Waiting)
    }

    /// Waiting -> claimed; false if it is not waiting.
    fn claim(&self) -> bool {
        let mut s = self.state.lock();
        if matches!(*s, State::Waiting) {
            *s = State::Claimed { gone: false };
            true
        } else {
            false
        }
    }

    /// Claimed -> waiting (the serving write set did not commit, or had nothing for it).
    /// Returns true when its client left meanwhile: it is done, and the caller removes it.
    fn release(&self) -> bool {
        let mut s = self.state.lock();
        let gone = matches!(*s, State::Claimed { gone: true });
        *s = if gone { State::Done } else { State::Waiting };
        drop(s);
        self.notify.notify_one();
        gone
    }

    /// Waiting -> served with `reply` without a pop (CLIENT UNBLOCK); false if it is not
    /// waiting (claimed by a write set, served or done: that outcome stands).
    fn interrupt(&self, reply: Reply) -> bool {
        let mut s = self.state.lock();
        if !matches!(*s, State::Waiting) {
            return false;
        }
        *s = State::Served(reply);
        drop(s);
        self.notify.notify_one();
        true
    }

    /// Claimed -> served with `reply` (its write set committed).
    fn deliver(&self, reply: Reply) {
        let mut s = self.state.lock();
        *s = match *s {
            State::Claimed { gone: true } => State::Done,
            _ => State::Served(reply),
        };
        drop(s);
        self.notify.notify_one();
    }

    /// The reply, once served (then it is done).
    pub fn take_served(&self) -> Option<Reply> {
        let mut s = self.state.lock();
        if matches!(*s, State::Served(_)) {
            match std::mem::replace(&mut *s, State::Done) {
                State::Served(r) => return Some(r),
                _ => unreachable!("checked above"),
            }
        }
        None
    }

    /// Gives up waiting (timeout, disconnect, shutdown). With `gone` (the client left), a
    /// claim in progress is marked so that its outcome is dropped.
    pub fn cancel(&self, gone: bool) -> Cancel {
        let mut s = self.state.lock();
        match &mut *s {
            State::Waiting => {
                *s = State::Done;
                Cancel::Cancelled
            }
            State::Claimed { gone: g } => {
                *g |= gone;
                Cancel::Busy
            }
            State::Served(_) => match std::mem::replace(&mut *s, State::Done) {
                State::Served(r) => Cancel::Served(r),
                _ => unreachable!("checked above"),
            },
            State::Done => Cancel::Cancelled,
        }
    }

    /// Resolves when the waiter's state may have changed.
    pub async fn changed(&self) {
        self.notify.notified().await;
    }
}

/// The blocked clients, by key, in the order they blocked.
#[derive(Debug, Default)]
pub struct Registry {
    queues: Mutex<HashMap<ScopedKey, VecDeque<Arc<Waiter>>>>,
    /// The named waiters by client id (CLIENT UNBLOCK).
    clients: Mutex<HashMap<u64, Arc<Waiter>>>,
    /// Waiters registered: when 0, a push skips the registry altogether.
    count: AtomicUsize,
    next_id: AtomicU64,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// True when no client is blocked.
    pub fn is_empty(&self) -> bool {
        self.count.load(Ordering::Acquire) == 0
    }

    /// Number of blocked clients (INFO's `blocked_clients`).
    pub fn len(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    /// Registers a client blocked on `block.keys`. The caller holds those keys' writer
    /// locks, so a push to them either came before (and the command found its element) or
    /// comes after and finds this waiter.
    pub fn register(&self, block: Block) -> Arc<Waiter> {
        let w = Arc::new(Waiter {
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            client: AtomicU64::new(0),
            db: AtomicU8::new(block.db),
            block,
            state: Mutex::new(State::Waiting),
            notify: Notify::new(),
            removed: AtomicBool::new(false),
        });
        let mut seen = std::collections::HashSet::new();
        let mut q = self.queues.lock();
        for k in &w.block.keys {
            if seen.insert(&k[..]) {
                let scoped = (w.block.db, k.to_vec());
                q.entry(scoped).or_default().push_back(Arc::clone(&w));
            }
        }
        self.count.fetch_add(1, Ordering::AcqRel);
        w
    }

    /// The waiters on `key` (of its database), first blocked first.
    pub fn waiting_on(&self, key: &ScopedKey) -> Vec<Arc<Waiter>> {
        self.queues
            .lock()
            .get(key)
            .map(|q| q.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Records that `w` is client `client`'s wait, for [`Registry::unblock`].
    pub fn name(&self, client: u64, w: &Arc<Waiter>) {
        w.client.store(client, Ordering::Relaxed);
        self.clients.lock().insert(client, Arc::clone(w));
    }

    /// CLIENT UNBLOCK: ends client `client`'s wait as its timeout would (or, with `error`,
    /// with Redis's UNBLOCKED error). False when it is not blocked, or a write set is
    /// serving it already (that outcome stands).
    pub fn unblock(&self, client: u64, error: bool) -> bool {
        let Some(w) = self.clients.lock().get(&client).cloned() else {
            return false;
        };
        let reply = if error {
            Reply::Error("UNBLOCKED client unblocked via CLIENT UNBLOCK".into())
        } else {
            w.op().timeout_reply()
        };
        if !w.interrupt(reply) {
            return false;
        }
        self.remove(&w);
        true
    }

    /// Takes `w` off every key it waits on (once; later calls do nothing).
    pub fn remove(&self, w: &Waiter) {
        let client = w.client.load(Ordering::Relaxed);
        if client != 0 {
            let mut clients = self.clients.lock();
            if clients.get(&client).is_some_and(|x| x.id == w.id) {
                clients.remove(&client);
            }
        }
        if w.removed.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut q = self.queues.lock();
        let db = w.db.load(Ordering::Acquire);
        for k in &w.block.keys {
            let scoped = (db, k.to_vec());
            if let Some(list) = q.get_mut(&scoped) {
                list.retain(|x| x.id != w.id);
                if list.is_empty() {
                    q.remove(&scoped);
                }
            }
        }
        self.count.fetch_sub(1, Ordering::AcqRel);
    }

    /// SWAPDB of stored databases `a` and `b`: a client blocked on a key of one now waits on
    /// that key of the other (its SELECTed index names the other's data now). Returns the
    /// keys waited on afterwards, to look at as if pushed to: Redis serves a client whose
    /// key the swap brought. The caller holds every writer lock.
    pub fn swap_dbs(&self, a: DbIndex, b: DbIndex) -> Vec<ScopedKey> {
        let other = |db: DbIndex| if db == a { b } else { a };
        let mut q = self.queues.lock();
        let moved: Vec<(ScopedKey, VecDeque<Arc<Waiter>>)> =
            q.extract_if(|(db, _), _| *db == a || *db == b).collect();
        let mut keys = Vec::with_capacity(moved.len());
        for ((db, key), waiters) in moved {
            let to = other(db);
            for w in &waiters {
                // Once per waiter: each of its keys' queues holds it.
                let _ =
                    w.db.compare_exchange(db, to, Ordering::AcqRel, Ordering::Acquire);
            }
            keys.push((to, key.clone()));
            q.insert((to, key), waiters);
        }
        keys
    }

    /// Number of keys with blocked clients (for tests: nothing is left behind).
    pub fn keys_waited_on(&self) -> usize {
        self.queues.lock().len()
    }
}
