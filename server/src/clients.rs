//! The connected clients, as CLIENT LIST, CLIENT INFO and CLIENT KILL see them.
//!
//! Each connection registers a [`ClientEntry`] for its lifetime and keeps it current: the
//! last command and the time of the last interaction on every command (two atomic stores),
//! its name, libraries and protocol when they change. CLIENT KILL marks an entry and wakes
//! its connection, which closes.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

use parking_lot::Mutex;
use tokio::sync::Notify;

/// What a client has told about itself (changes rarely).
#[derive(Clone, Debug, Default)]
pub struct ClientMeta {
    /// CLIENT SETNAME / HELLO SETNAME.
    pub name: String,
    /// CLIENT SETINFO LIB-NAME.
    pub lib_name: String,
    /// CLIENT SETINFO LIB-VER.
    pub lib_ver: String,
    /// RESP version (2 or 3).
    pub proto: u8,
    /// The selected database.
    pub db: u8,
    /// The user it is logged in as (empty: `default`, before any AUTH).
    pub user: String,
}

impl ClientMeta {
    /// The user's name (`default` when none was set).
    pub fn user_name(&self) -> &str {
        if self.user.is_empty() {
            "default"
        } else {
            &self.user
        }
    }
}

/// One connected client.
#[derive(Debug)]
pub struct ClientEntry {
    /// CLIENT ID.
    pub id: u64,
    /// The peer's address.
    pub addr: SocketAddr,
    /// The server's address on this connection.
    pub laddr: SocketAddr,
    created: Instant,
    /// Milliseconds from `created` to the last command.
    last_ms: AtomicU64,
    /// Index in `cmd::COMMANDS` of the last command (`usize::MAX`: none or unknown).
    last_cmd: AtomicUsize,
    /// Commands queued by MULTI, or -1 outside a transaction (stored + 1).
    multi: AtomicUsize,
    /// Channels subscribed to.
    pub subscriptions: AtomicUsize,
    /// Pattern subscriptions.
    pub pattern_subscriptions: AtomicUsize,
    /// Shard channels subscribed to.
    pub shard_subscriptions: AtomicUsize,
    /// Blocked in a blocking command.
    pub blocked: AtomicBool,
    /// CLIENT NO-EVICT ON (flag `e`; this server never evicts, the flag is shown only).
    pub no_evict: AtomicBool,
    /// CLIENT NO-TOUCH ON (flag `T`; no access times are kept, the flag is shown only).
    pub no_touch: AtomicBool,
    meta: Mutex<ClientMeta>,
    killed: AtomicBool,
    kill: Notify,
}

impl ClientEntry {
    /// Records a command (by its index in the command table, if known).
    pub fn touch(&self, cmd: Option<usize>) {
        self.last_ms
            .store(self.created.elapsed().as_millis() as u64, Ordering::Relaxed);
        self.last_cmd
            .store(cmd.unwrap_or(usize::MAX), Ordering::Relaxed);
    }

    /// Records the transaction state: `Some(n)` commands queued, `None` outside MULTI.
    pub fn set_multi(&self, queued: Option<usize>) {
        self.multi
            .store(queued.map_or(0, |n| n + 1), Ordering::Relaxed);
    }

    /// Replaces what the client told about itself.
    pub fn set_meta(&self, meta: ClientMeta) {
        *self.meta.lock() = meta;
    }

    /// The user the client is logged in as.
    pub fn user(&self) -> String {
        self.meta.lock().user_name().to_string()
    }

    /// Asks the connection to close (CLIENT KILL).
    pub fn kill(&self) {
        self.killed.store(true, Ordering::Relaxed);
        self.kill.notify_one();
    }

    /// Resolves once [`ClientEntry::kill`] has been called.
    pub async fn killed(&self) {
        if !self.killed.load(Ordering::Relaxed) {
            self.kill.notified().await;
        }
    }

    /// Seconds connected.
    pub fn age(&self) -> u64 {
        self.created.elapsed().as_secs()
    }

    /// The CLIENT LIST / CLIENT INFO line (Redis 7.2's fields; memory figures this server
    /// does not track are 0).
    pub fn line(&self) -> String {
        let m = self.meta.lock().clone();
        let now = self.created.elapsed().as_millis() as u64;
        let idle = now.saturating_sub(self.last_ms.load(Ordering::Relaxed)) / 1000;
        let cmd = match self.last_cmd.load(Ordering::Relaxed) {
            usize::MAX => "NULL",
            i => crate::cmd::COMMANDS.get(i).map_or("NULL", |c| c.name),
        };
        let multi = self.multi.load(Ordering::Relaxed) as i64 - 1;
        let subs = self.subscriptions.load(Ordering::Relaxed);
        let psubs = self.pattern_subscriptions.load(Ordering::Relaxed);
        let ssubs = self.shard_subscriptions.load(Ordering::Relaxed);
        let mut flags = String::new();
        if multi >= 0 {
            flags.push('x');
        }
        if self.blocked.load(Ordering::Relaxed) {
            flags.push('b');
        }
        if subs + psubs + ssubs > 0 {
            flags.push('P');
        }
        if self.no_evict.load(Ordering::Relaxed) {
            flags.push('e');
        }
        if self.no_touch.load(Ordering::Relaxed) {
            flags.push('T');
        }
        if flags.is_empty() {
            flags.push('N');
        }
        format!(
            "id={} addr={} laddr={} fd=-1 name={} age={} idle={idle} flags={flags} db={} sub={} psub={psubs} ssub={ssubs} multi={multi} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={cmd} user={} redir=-1 resp={} lib-name={} lib-ver={}",
            self.id,
            self.addr,
            self.laddr,
            m.name,
            self.age(),
            m.db,
            subs,
            m.user_name(),
            m.proto,
            m.lib_name,
            m.lib_ver,
        )
    }

    /// True for a client in subscribed mode (CLIENT LIST TYPE pubsub).
    pub fn is_pubsub(&self) -> bool {
        self.subscriptions.load(Ordering::Relaxed)
            + self.pattern_subscriptions.load(Ordering::Relaxed)
            + self.shard_subscriptions.load(Ordering::Relaxed)
            > 0
    }
}

/// Every connected client, by id.
#[derive(Debug, Default)]
pub struct Clients {
    map: Mutex<BTreeMap<u64, Arc<ClientEntry>>>,
}

/// Unregisters its client when dropped (the connection's end, however it ends).
pub struct Registration {
    clients: Arc<Clients>,
    /// The registered entry.
    pub entry: Arc<ClientEntry>,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.clients.map.lock().remove(&self.entry.id);
    }
}

impl Clients {
    /// Registers client `id`.
    pub fn register(
        self: &Arc<Self>,
        id: u64,
        addr: SocketAddr,
        laddr: SocketAddr,
    ) -> Registration {
        let entry = Arc::new(ClientEntry {
            id,
            addr,
            laddr,
            created: Instant::now(),
            last_ms: AtomicU64::new(0),
            last_cmd: AtomicUsize::new(usize::MAX),
            multi: AtomicUsize::new(0),
            subscriptions: AtomicUsize::new(0),
            pattern_subscriptions: AtomicUsize::new(0),
            shard_subscriptions: AtomicUsize::new(0),
            blocked: AtomicBool::new(false),
            no_evict: AtomicBool::new(false),
            no_touch: AtomicBool::new(false),
            meta: Mutex::new(ClientMeta {
                proto: 2,
                ..ClientMeta::default()
            }),
            killed: AtomicBool::new(false),
            kill: Notify::new(),
        });
        self.map.lock().insert(id, Arc::clone(&entry));
        Registration {
            clients: Arc::clone(self),
            entry,
        }
    }

    /// Every client, by id, but those killed: one is gone for Redis the moment CLIENT
    /// KILL answers, so a later LIST does not show it and a later KILL does not count it
    /// again, although its connection may still be closing.
    pub fn all(&self) -> Vec<Arc<ClientEntry>> {
        self.map
            .lock()
            .values()
            .filter(|c| !c.killed.load(Ordering::Relaxed))
            .cloned()
            .collect()
    }
}
