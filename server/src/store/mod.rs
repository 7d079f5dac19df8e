//! How Redis keys live in the engine, the per-key writer locks, and the write sets commands
//! commit (docs/SERVER.md, "Data model").
//!
//! * [`keys`]: the engine key layout (metadata, expiry index, versioned members).
//! * [`meta`]: metadata values (type, expiry, version, the type's fields).
//! * [`members`]: set members and hash fields of any length as engine keys.
//! * [`txn`]: [`Txn`], one command's (or transaction's) atomic write set, and [`Ctx`].
//! * [`migrate`]: format 1 (no versions, no expiry) to format 2, at open.
//! * [`expire`]: the background reclaimer of expired keys.
//! * [`copy`]: a key's value copied to another key or database (RENAME, COPY, MOVE).

pub mod bloom_meta;
pub mod copy;
pub mod cuckoo_meta;
pub mod expire;
pub mod gc;
pub mod keys;
pub mod members;
pub mod meta;
pub mod migrate;
pub mod scripts;
pub mod txn;
pub mod watch;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

use arc_swap::ArcSwap;
use bloomkv::Db;
use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

pub use keys::{
    DbIndex, bloom_chunk_key, chunk_key, cuckoo_chunk_key, meta_key, prefix_end, sub_key,
    sub_prefix, tag,
};
pub use meta::{Meta, Record};
pub use txn::{Committed, Ctx, Entry, R, ScopedKey, Txn};

use crate::resp::Reply;
use watch::Watches;

/// Bytes per chunk of a chunked string: one engine value, so one SETBIT writes at most this
/// much (plus the metadata key).
pub const CHUNK_BYTES: usize = 4096;

/// Longest Redis key accepted: the engine's 64 KiB key limit less the largest sub-key
/// overhead. A member (set member, hash field, sorted-set member) and its key together are
/// held to the same limit ([`MAX_MEMBER_KEY`]).
pub const MAX_KEY_LEN: usize = bloomkv::MAX_KEY_BYTES - keys::SUBKEY_OVERHEAD;

/// Longest key plus member (set member, hash field, sorted-set member) accepted.
pub const MAX_MEMBER_KEY: usize = MAX_KEY_LEN;

/// The error for a member, field or element whose engine key would pass the engine's limit.
pub fn member_too_long(key: &[u8], member: &[u8]) -> Reply {
    Reply::err(format!(
        "member of {} bytes too long for a key of {} bytes: bloomkv-server holds a key and \
         one member, field or sorted-set member to {MAX_MEMBER_KEY} bytes together",
        member.len(),
        key.len()
    ))
}

/// True when `key` and `member` fit together in one engine key.
pub fn member_fits(key: &[u8], member: &[u8]) -> bool {
    key.len() + member.len() <= MAX_MEMBER_KEY
}

/// Number of writer lock stripes.
const STRIPES: usize = 1024;

/// Versions handed out per write of the allocator's high-water mark.
const VERSION_BLOCK: u64 = 1 << 16;

impl From<bloomkv::Error> for Reply {
    fn from(e: bloomkv::Error) -> Reply {
        Reply::err(format!("storage error: {e}"))
    }
}

/// Resumable-scan cursors: Redis cursors are integers, the engine's positions are keys, so
/// each cursor handed out maps to the key to resume after. Bounded; an unknown (expired)
/// cursor ends the iteration.
#[derive(Debug, Default)]
struct Cursors {
    next: u64,
    map: std::collections::HashMap<u64, Vec<u8>>,
    order: std::collections::VecDeque<u64>,
    bytes: usize,
}

/// Most cursors remembered at once, and most bytes of resume keys they may hold (keys can be
/// 64 KiB long): the oldest are forgotten first.
const MAX_CURSORS: usize = 16 * 1024;
const MAX_CURSOR_BYTES: usize = 16 << 20;

/// The collection-version allocator: versions below `limit` may be handed out, because a
/// high-water mark at least `limit` is written before any of them is used (the WAL keeps
/// writes in order, so a crash never keeps a write under a version and loses the mark).
#[derive(Debug)]
struct Versions {
    next: u64,
    limit: u64,
}

/// The engine, the writer locks and the key count.
#[derive(Debug)]
pub struct Store {
    /// The database. Replaced only in cluster mode, when a node installs a snapshot of the
    /// state machine ([`Store::replace_db`]); a swap, so readers never wait.
    db: ArcSwap<Db>,
    /// `appendfsync everysec` syncs that found writes to make durable.
    wal_syncs: AtomicU64,
    stripes: Vec<Mutex<()>>,
    global: RwLock<()>,
    /// Per database: metadata keys present (expired ones too, until reclaimed), as DBSIZE
    /// reports.
    keys: Vec<AtomicI64>,
    /// Per database: keys with a time to live (INFO keyspace's `expires`).
    volatile: Vec<AtomicI64>,
    cursors: Mutex<Cursors>,
    versions: Mutex<Versions>,
    /// Keys the reclaimer removed since start (INFO's `expired_keys`).
    expired: AtomicU64,
    /// WATCHed keys, marked by every commit that touches them.
    watches: Watches,
    /// Lua scripts: the cache and the scripts running now (EVAL's handler reaches them
    /// through its write set's store).
    scripts: scripts::Scripts,
    /// Ranges of big dropped collections waiting for a sweep.
    sweeps: gc::Sweeps,
    /// Databases `SELECT` can address (`--databases`).
    databases: std::sync::atomic::AtomicU16,
    /// Per database index: the stored database it names (its metadata prefix, the top byte
    /// of its versions). The identity until SWAPDB exchanges two; kept in the `DBMAP_KEY`
    /// record.
    db_map: Vec<std::sync::atomic::AtomicU8>,
    /// Why the engine stopped writes, until `Db::resume` succeeds (`None`: writes go on).
    stopped: Mutex<Option<String>>,
    /// Fast check of `stopped`.
    is_stopped: std::sync::atomic::AtomicBool,
    /// Times writes were stopped, and resumed, since start.
    stops: AtomicU64,
    resumes: AtomicU64,
    /// Keyspace notifications: the classes enabled, and the pub/sub they go to.
    notify: crate::notify::Notifier,
}

/// The reply to a write while the engine refuses writes (Redis's reply when it cannot
/// write its append-only file).
pub fn misconf(cause: &str) -> Reply {
    Reply::Error(format!("MISCONF Errors writing to the AOF file: {cause}"))
}

/// Writer locks held while one write command (or a group of them) runs.
pub struct WriteGuard<'a> {
    store: &'a Store,
    _global: RwLockReadGuard<'a, ()>,
    stripes: Vec<(usize, MutexGuard<'a, ()>)>,
}

impl<'a> WriteGuard<'a> {
    /// Also takes the stripes of `keys`, without waiting: `false` (having taken some of them,
    /// perhaps) if one is held by another writer. Never blocking while holding locks is what
    /// keeps writers that grow their lock set from deadlocking.
    pub fn try_add<'k, I>(&mut self, keys: I) -> bool
    where
        I: IntoIterator<Item = &'k [u8]>,
    {
        for k in keys {
            let i = stripe(k);
            if self.stripes.iter().any(|(j, _)| *j == i) {
                continue;
            }
            match self.store.stripes[i].try_lock() {
                Some(g) => self.stripes.push((i, g)),
                None => return false,
            }
        }
        true
    }
}

/// Runs a wait that may be long inside `block_in_place` when on a runtime worker (elsewhere:
/// background threads, tests, it just runs).
fn wait_off_worker<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

fn stripe(key: &[u8]) -> usize {
    (bloomkv::filter::hash_key(key) % STRIPES as u64) as usize
}

impl Store {
    /// Wraps an open database: migrates a format-1 database to format 2 (`migrate`), then
    /// counts its keys once (one scan of the metadata keys).
    ///
    /// # Errors
    /// Engine errors; a database of a newer format than this server's.
    pub fn new(db: Db) -> Result<Store, bloomkv::Error> {
        let (counts, hw) = open_counts(&db)?;
        let map = load_db_map(&db)?;
        Ok(Store {
            db_map: map
                .into_iter()
                .map(std::sync::atomic::AtomicU8::new)
                .collect(),
            db: ArcSwap::from_pointee(db),
            wal_syncs: AtomicU64::new(0),
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            global: RwLock::new(()),
            keys: counts.iter().map(|c| AtomicI64::new(c.0)).collect(),
            volatile: counts.iter().map(|c| AtomicI64::new(c.1)).collect(),
            cursors: Mutex::new(Cursors::default()),
            versions: Mutex::new(Versions {
                next: hw,
                limit: hw,
            }),
            expired: AtomicU64::new(0),
            stopped: Mutex::new(None),
            is_stopped: std::sync::atomic::AtomicBool::new(false),
            stops: AtomicU64::new(0),
            resumes: AtomicU64::new(0),
            watches: Watches::default(),
            scripts: scripts::Scripts::new(),
            sweeps: gc::Sweeps::default(),
            databases: std::sync::atomic::AtomicU16::new(16),
            notify: crate::notify::Notifier::default(),
        })
    }

    /// Serves `db` from now on instead of the current database (cluster mode: a snapshot
    /// install replaced the state machine's database). Migrates and counts it as
    /// [`Store::new`] does; scan cursors are forgotten (they name keys of the old data).
    /// Commands already running finish on the database they started with. The caller
    /// makes sure no write set is being built meanwhile (a replicated state machine applies
    /// from one task at a time).
    ///
    /// # Errors
    /// Engine errors; a database of a newer format. The old database stays in use then.
    pub fn replace_db(&self, db: Db) -> Result<(), bloomkv::Error> {
        let (counts, hw) = open_counts(&db)?;
        let map = load_db_map(&db)?;
        for (slot, p) in self.db_map.iter().zip(map) {
            slot.store(p, Ordering::Release);
        }
        {
            let mut v = self.versions.lock();
            v.next = v.next.max(hw);
            v.limit = v.limit.max(hw);
        }
        self.db.store(Arc::new(db));
        for (db, (keys, volatile)) in counts.into_iter().enumerate() {
            self.keys[db].store(keys, Ordering::Relaxed);
            self.volatile[db].store(volatile, Ordering::Relaxed);
        }
        *self.cursors.lock() = Cursors::default();
        Ok(())
    }

    /// A fresh collection version (see [`Versions`]).
    pub(crate) fn alloc_version(&self) -> Result<u64, Reply> {
        let mut v = self.versions.lock();
        if v.next >= v.limit {
            let limit = v.next + VERSION_BLOCK;
            self.db.load().put(keys::VERSION_KEY, limit.to_le_bytes())?;
            v.limit = limit;
        }
        v.next += 1;
        Ok(v.next - 1)
    }

    /// Why writes are refused now, if they are: the engine stopped them after an error (a
    /// full disk, a failed sync) and `Db::resume` has not succeeded since.
    pub fn writes_stopped(&self) -> Option<String> {
        if !self.is_stopped.load(Ordering::Acquire) {
            return None;
        }
        self.stopped.lock().clone()
    }

    /// Records a failed write: if the error is one that stops the engine's writes, every
    /// write command answers MISCONF until [`Store::try_resume`] succeeds. Returns the reply
    /// for the failed write.
    pub fn note_write_error(&self, e: &bloomkv::Error) -> Reply {
        let stops = matches!(
            e,
            bloomkv::Error::Io { .. }
                | bloomkv::Error::WritesStopped(_)
                | bloomkv::Error::OutcomeUnknown(_)
                | bloomkv::Error::Corruption { .. }
        );
        if !stops {
            return Reply::from(bloomkv::Error::InvalidArgument(e.to_string()));
        }
        let cause = e.to_string();
        let mut st = self.stopped.lock();
        if st.is_none() {
            crate::log::warn(&format!(
                "the engine stopped writes: {cause}; write commands answer MISCONF until it resumes (retrying)"
            ));
            self.stops.fetch_add(1, Ordering::Relaxed);
            *st = Some(cause.clone());
            self.is_stopped.store(true, Ordering::Release);
        }
        misconf(&cause)
    }

    /// Asks the engine to resume writes after a failure (`Db::resume`); clears the stopped
    /// state when it succeeds.
    ///
    /// # Errors
    /// The engine's error: writes stay stopped.
    pub fn try_resume(&self) -> Result<(), bloomkv::Error> {
        self.db.load().resume()?;
        let mut st = self.stopped.lock();
        *st = None;
        self.is_stopped.store(false, Ordering::Release);
        self.resumes.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }

    /// Times writes were stopped and resumed since start.
    pub fn stop_counts(&self) -> (u64, u64) {
        (
            self.stops.load(Ordering::Relaxed),
            self.resumes.load(Ordering::Relaxed),
        )
    }

    /// Counts keys the reclaimer removed.
    pub(crate) fn note_expired(&self, n: u64) {
        self.expired.fetch_add(n, Ordering::Relaxed);
    }

    /// Starts the count of [`Store::expired_keys`] again from zero (`CONFIG RESETSTAT`).
    pub fn reset_expired_count(&self) {
        self.expired.store(0, Ordering::Relaxed);
    }

    /// Keys removed because their time to live ran out, since start.
    pub fn expired_keys(&self) -> u64 {
        self.expired.load(Ordering::Relaxed)
    }

    /// Applies what a committed write set changed besides the data (see [`Txn::into_batch`]);
    /// returns the keys whose blocked clients may now be served.
    pub fn committed(&self, done: Committed) -> Vec<ScopedKey> {
        if !done.events.is_empty() {
            self.publish_events(&done.events);
        }
        if !done.touched.is_empty() {
            self.watches.touch(&done.touched);
        }
        for (key, meta) in &done.dropped {
            self.sweeps.dropped(key, meta);
        }
        if !done.cleared.is_empty() {
            for db in done.cleared.iter() {
                self.keys[usize::from(db)].store(0, Ordering::Relaxed);
                self.volatile[usize::from(db)].store(0, Ordering::Relaxed);
            }
        }
        for (db, keys, volatile) in done.deltas.iter() {
            let db = usize::from(db);
            if keys != 0 {
                self.keys[db].fetch_add(keys, Ordering::Relaxed);
            }
            if volatile != 0 {
                self.volatile[db].fetch_add(volatile, Ordering::Relaxed);
            }
        }
        done.ready
    }

    /// Keyspace notifications: the classes enabled, where they go.
    pub fn notifier(&self) -> &crate::notify::Notifier {
        &self.notify
    }

    /// Publishes the keyspace notifications of a committed write set, in order.
    pub(crate) fn publish_events(&self, events: &[crate::notify::Event]) {
        self.notify.publish(events, |db| self.index_of(db));
    }

    /// Ranges of big dropped collections waiting for a sweep (`gc`).
    pub fn sweeps(&self) -> &gc::Sweeps {
        &self.sweeps
    }

    /// The WATCH registry.
    pub fn watches(&self) -> &Watches {
        &self.watches
    }

    /// The script cache and the scripts running now.
    pub fn scripts(&self) -> &scripts::Scripts {
        &self.scripts
    }

    /// Number of keys with a time to live in database `db`.
    pub fn volatile_keys(&self, db: DbIndex) -> i64 {
        self.volatile[usize::from(db)].load(Ordering::Relaxed)
    }

    /// The engine (a cheap guard: hold it for one operation, not across commands).
    pub fn db(&self) -> arc_swap::Guard<Arc<Db>> {
        self.db.load()
    }

    /// Background WAL syncs that found a WAL to sync.
    pub fn wal_syncs(&self) -> u64 {
        self.wal_syncs.load(Ordering::Relaxed)
    }

    /// Forces the WAL to stable storage (`Db::sync_wal`: writers go on appending meanwhile;
    /// a sync with nothing new to sync costs nothing). A failed sync stops the engine's
    /// writes, which the store then answers with MISCONF until a resume succeeds.
    ///
    /// # Errors
    /// The sync error.
    pub fn sync_wal(&self) -> Result<(), bloomkv::Error> {
        match self.db.load().sync_wal() {
            Ok(()) => {
                self.wal_syncs.fetch_add(1, Ordering::Relaxed);
                Ok(())
            }
            Err(e) => {
                self.note_write_error(&e);
                Err(e)
            }
        }
    }

    /// Number of databases `SELECT` can address.
    pub fn databases(&self) -> u16 {
        self.databases.load(Ordering::Relaxed)
    }

    /// Sets the number of databases `SELECT` can address (1 to 256).
    pub fn set_databases(&self, n: u16) {
        self.databases.store(n.clamp(1, 256), Ordering::Relaxed);
    }

    /// Number of Redis keys in database `db`.
    pub fn dbsize(&self, db: DbIndex) -> i64 {
        self.keys[usize::from(db)].load(Ordering::Relaxed)
    }

    /// Number of Redis keys in all databases.
    pub fn total_keys(&self) -> i64 {
        self.keys.iter().map(|k| k.load(Ordering::Relaxed)).sum()
    }

    /// The database indexes holding keys, with their numbers of keys and of keys with a time
    /// to live (INFO keyspace), lowest first.
    pub fn keyspace(&self) -> Vec<(DbIndex, i64, i64)> {
        (0..=255u8)
            .map(|index| {
                let db = self.physical(index);
                (index, self.dbsize(db), self.volatile_keys(db))
            })
            .filter(|&(_, keys, _)| keys > 0)
            .collect()
    }

    /// The stored database that database index `index` names (the identity until SWAPDB).
    pub fn physical(&self, index: DbIndex) -> DbIndex {
        self.db_map[usize::from(index)].load(Ordering::Acquire)
    }

    /// The database index naming stored database `db` (what MONITOR shows).
    pub fn index_of(&self, db: DbIndex) -> DbIndex {
        (0..=255u8).find(|&i| self.physical(i) == db).unwrap_or(db)
    }

    /// SWAPDB: database indexes `a` and `b` exchange the data they name. Writes the map
    /// record, then switches; the caller holds [`Store::lock_all`], so no writer runs
    /// across the switch.
    ///
    /// # Errors
    /// The engine's, when the record cannot be written (nothing switches then).
    pub fn swap_dbs(&self, a: DbIndex, b: DbIndex) -> Result<(), Reply> {
        let (pa, pb) = (self.physical(a), self.physical(b));
        let mut map: Vec<u8> = (0..=255u8).map(|i| self.physical(i)).collect();
        map.swap(usize::from(a), usize::from(b));
        if let Some(cause) = self.writes_stopped() {
            return Err(misconf(&cause));
        }
        // Synced at once whatever `appendfsync` says: a swap is rare, and one lost in a crash
        // would show each client the other database's data.
        let written = self.db.load().put(keys::DBMAP_KEY, &map);
        if let Err(e) = written.and_then(|()| self.db.load().sync_wal()) {
            return Err(self.note_write_error(&e));
        }
        self.db_map[usize::from(a)].store(pb, Ordering::Release);
        self.db_map[usize::from(b)].store(pa, Ordering::Release);
        Ok(())
    }

    /// Takes the writer locks of `keys` (their stripes, in ascending order so two commands
    /// never wait on each other) under the shared side of the global lock.
    pub fn lock_keys<'k, I>(&self, keys: I) -> WriteGuard<'_>
    where
        I: IntoIterator<Item = &'k [u8]>,
    {
        let global = self.global_shared();
        let mut idx: Vec<usize> = keys.into_iter().map(stripe).collect();
        idx.sort_unstable();
        idx.dedup();
        let stripes = idx
            .into_iter()
            .map(|i| (i, self.stripes[i].lock()))
            .collect();
        WriteGuard {
            store: self,
            _global: global,
            stripes,
        }
    }

    /// Takes the global lock exclusively: no other writer runs until it is dropped
    /// (`EXEC`, `FLUSHDB`, `EVAL`).
    pub fn lock_all(&self) -> RwLockWriteGuard<'_, ()> {
        match self.global.try_write() {
            Some(g) => g,
            None => wait_off_worker(|| self.global.write()),
        }
    }

    /// The shared side of the global lock. While an exclusive holder runs (a script may run
    /// for seconds, until `SCRIPT KILL`) the wait happens off the I/O worker, so the other
    /// connections, and the `SCRIPT KILL` that ends the wait, are still served.
    fn global_shared(&self) -> RwLockReadGuard<'_, ()> {
        match self.global.try_read() {
            Some(g) => g,
            None => wait_off_worker(|| self.global.read()),
        }
    }

    /// Remembers `resume_after` and returns a cursor number for it.
    pub fn save_cursor(&self, resume_after: Vec<u8>) -> u64 {
        let mut c = self.cursors.lock();
        c.next += 1;
        if c.next == 0 {
            c.next = 1;
        }
        let id = c.next;
        c.bytes += resume_after.len();
        c.map.insert(id, resume_after);
        c.order.push_back(id);
        while c.order.len() > MAX_CURSORS || c.bytes > MAX_CURSOR_BYTES {
            let Some(old) = c.order.pop_front() else {
                break;
            };
            if let Some(k) = c.map.remove(&old) {
                c.bytes -= k.len();
            }
        }
        id
    }

    /// The key a cursor resumes after; `None` for an unknown cursor.
    pub fn cursor(&self, id: u64) -> Option<Vec<u8>> {
        self.cursors.lock().map.get(&id).cloned()
    }

    /// A new, empty write set over this store, reading the latest data (writers hold their
    /// keys' locks, so what they read cannot change under them).
    pub fn txn(&self) -> Txn<'_> {
        Txn::new(self, false, Ctx::local(), 0)
    }

    /// A new, empty write set over database index `index` of this store ([`Store::txn`]).
    pub fn txn_in(&self, index: DbIndex) -> Txn<'_> {
        Txn::new(self, false, Ctx::local(), self.physical(index))
    }

    /// A write set whose time, randomness and versions come from `ctx` (a replicated log
    /// entry's).
    pub fn txn_with(&self, ctx: Ctx) -> Txn<'_> {
        Txn::new(self, false, ctx, 0)
    }

    /// A read-only view for one read command: every engine read it makes sees one snapshot,
    /// so a command reading several keys (MGET, SINTER) or a key and its members answers as
    /// of one moment, as Redis's single thread does.
    pub fn reader(&self) -> Txn<'_> {
        Txn::new(self, true, Ctx::local(), 0)
    }
}

/// The database map record (`DBMAP_KEY`): the identity when absent; a damaged one (not 256
/// bytes, or not each stored database once) refuses the open rather than mixing databases.
fn load_db_map(db: &Db) -> Result<Vec<u8>, bloomkv::Error> {
    let Some(v) = db.get(keys::DBMAP_KEY)? else {
        return Ok((0..=255u8).collect());
    };
    let mut seen = [false; 256];
    let permutation = v.len() == 256
        && v.iter()
            .all(|&p| !std::mem::replace(&mut seen[usize::from(p)], true));
    if !permutation {
        return Err(bloomkv::Error::corrupt_bytes(
            0,
            format!(
                "server database map record: {} bytes that do not name each database once",
                v.len()
            ),
        ));
    }
    Ok(v)
}

/// Migrates `db` to the current format, then counts each database's keys and keys with a
/// time to live (one scan of each index) and reads the version allocator's high-water mark.
fn open_counts(db: &Db) -> Result<(Vec<(i64, i64)>, u64), bloomkv::Error> {
    migrate::to_current(db)?;
    let mut counts = vec![(0i64, 0i64); 256];
    // Database 0's keys are `tag key`; the others' `tag db key`.
    let mut count = |tags: [u8; 2], volatile: bool| -> Result<(), bloomkv::Error> {
        for t in tags {
            for kv in db.scan([t].as_slice()..[t + 1].as_slice()) {
                let (k, _) = kv?;
                let n = if t == tags[0] {
                    0
                } else {
                    k.get(1).copied().unwrap_or(0)
                };
                let c = &mut counts[usize::from(n)];
                if volatile { c.1 += 1 } else { c.0 += 1 }
            }
        }
        Ok(())
    };
    count([tag::META, tag::META_DB], false)?;
    count([tag::EXPIRY, tag::EXPIRY_DB], true)?;
    let hw = match db.get(keys::VERSION_KEY)? {
        Some(v) => v
            .as_slice()
            .try_into()
            .map(u64::from_le_bytes)
            .map_err(|_| {
                bloomkv::Error::corrupt_bytes(0, "version high-water mark: not 8 bytes")
            })?,
        None => 1,
    };
    Ok((counts, hw))
}

/// A store over a database opened in `dir` with the server's engine options, for unit tests.
#[cfg(test)]
pub(crate) fn store_at(dir: &std::path::Path) -> Store {
    let opts = crate::Config::default().engine_options();
    Store::new(Db::open(dir, opts).unwrap()).unwrap()
}

/// A store in a fresh temporary directory, for unit tests.
#[cfg(test)]
pub(crate) fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = store_at(dir.path());
    (dir, store)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_database_map_survives_reopening_and_a_damaged_one_refuses_the_open() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = store_at(dir.path());
            assert_eq!((store.physical(0), store.physical(7)), (0, 7));
            store.swap_dbs(0, 7).unwrap();
            assert_eq!((store.physical(0), store.physical(7)), (7, 0));
            assert_eq!((store.index_of(7), store.index_of(3)), (0, 3));
        }
        let opts = crate::Config::default().engine_options();
        {
            let store = store_at(dir.path());
            assert_eq!((store.physical(0), store.physical(7)), (7, 0));
            let db = store.db();
            db.put(keys::DBMAP_KEY, [0u8; 256]).unwrap();
        }
        let e = Store::new(Db::open(dir.path(), opts.clone()).unwrap()).unwrap_err();
        assert!(e.to_string().contains("database map"), "{e}");
        {
            let db = Db::open(dir.path(), opts.clone()).unwrap();
            db.put(keys::DBMAP_KEY, [1u8, 0]).unwrap();
        }
        assert!(Store::new(Db::open(dir.path(), opts).unwrap()).is_err());
    }

    #[test]
    fn cursor_memory_is_bounded() {
        let (_dir, store) = temp_store();
        let first = store.save_cursor(vec![b'k'; 60_000]);
        assert_eq!(store.cursor(first).map(|k| k.len()), Some(60_000));
        for _ in 0..400 {
            store.save_cursor(vec![b'k'; 60_000]);
        }
        assert_eq!(store.cursor(first), None, "oldest cursor forgotten");
        assert!(store.cursors.lock().bytes <= MAX_CURSOR_BYTES);
    }
}
