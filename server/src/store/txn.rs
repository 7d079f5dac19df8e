//! [`Txn`]: the write set one command (or one `EXEC`, or one pipelined group) builds and
//! commits as a single atomic `WriteBatch`, and [`Ctx`]: what a command may depend on besides
//! the data (the time, randomness, fresh collection versions), so that the same command
//! decides the same way wherever it runs (a replica applying a log entry included).

use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};

use bloomkv::{Snapshot, WriteBatch};

use super::Store;
use super::keys::{self, DbIndex, db_version, expiry_key, meta_key, prefix_end, tag};
use super::meta::{Meta, Record};
use crate::fasthash::FastMap;
use crate::notify::{self, Event};
use crate::resp::Reply;
use crate::store::watch::Touched;

/// An engine key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Result of a command: its reply, or an error reply.
pub type R = Result<Reply, Reply>;

/// Where fresh collection versions come from.
#[derive(Clone, Copy, Debug)]
enum Versions {
    /// The store's allocator (a persisted high-water mark).
    Store,
    /// Derived from a replicated log entry's index: `index << 16` onwards.
    Log { next: u64, end: u64 },
}

/// What a command may depend on besides the data.
#[derive(Clone, Debug)]
pub struct Ctx {
    now_ms: u64,
    rng: u64,
    versions: Versions,
}

/// The current time in ms since the Unix epoch.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// SplitMix64's finaliser: a well-mixed 64-bit value from any seed.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Ctx {
    /// A command run by this server on its own: the wall clock, fresh randomness, versions
    /// from the store.
    pub fn local() -> Ctx {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let now_ms = unix_ms();
        Ctx {
            now_ms,
            rng: mix(now_ms ^ SEQ.fetch_add(1, Ordering::Relaxed).rotate_left(32)),
            versions: Versions::Store,
        }
    }

    /// A command applied from replicated log entry `index`, decided at `now_ms` by the
    /// leader: every replica derives the same time, randomness and versions from them.
    pub fn replicated(index: u64, now_ms: u64) -> Ctx {
        Ctx::from_log(index, now_ms, mix(index))
    }

    /// As [`Ctx::replicated`], with the entry's random seed given by the log (the
    /// replication layer derives it from the index, the same on every node).
    pub fn from_log(index: u64, now_ms: u64, seed: u64) -> Ctx {
        Ctx {
            now_ms,
            rng: seed,
            versions: Versions::Log {
                next: index << 16,
                end: (index + 1) << 16,
            },
        }
    }

    /// The time the command runs at, in ms since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }
}

/// A command a script ran, with the database it left selected (MONITOR's `[db lua]` line).
pub type ScriptCall = (DbIndex, Vec<bytes::Bytes>);

/// Pending writes of one command or transaction, read back by its own later reads.
pub struct Txn<'a> {
    store: &'a Store,
    /// A read-only view (`Store::reader`): its reads see one snapshot, taken at its first
    /// read (read commands: several engine reads, one moment). Write sets read the latest
    /// data (their writers hold the keys' locks).
    reader: bool,
    snap: OnceCell<Snapshot>,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    /// The database commands address (`SELECT`).
    db: DbIndex,
    /// Metadata records of database `db` as this write set sees them (including expired
    /// ones), by Redis key.
    records: RefCell<FastMap<Vec<u8>, Option<Record>>>,
    /// What FLUSHDB and FLUSHALL did in this write set, if they ran (rare: boxed, since a
    /// write set is moved a few times per command and each move copies all of it).
    cleared: Option<Box<Cleared>>,
    /// Engine key ranges `[start, end)` deleted by this write set (LTRIM, long pops), in
    /// order. `writes` holds only what was written after them, so the batch applies the
    /// ranges first and the point writes after.
    ranges: Vec<(Vec<u8>, Vec<u8>)>,
    /// Changes to the numbers of keys and of keys with a time to live.
    deltas: Deltas,
    ctx: Ctx,
    /// Lists and sorted sets that became non-empty (for blocked clients).
    ready: Vec<ScopedKey>,
    /// What undoes the changes made since each open savepoint, innermost last
    /// ([`Txn::savepoint`] replaces the innermost, [`Txn::begin_nested`] opens another).
    undo: Vec<Undo>,
    /// Redis keys written since [`Txn::track_touched`] (or the last
    /// [`Txn::take_touched`]), while tracking: a replicated state machine marks the WATCHes
    /// of each log entry's keys.
    touched_log: Option<BTreeSet<ScopedKey>>,
    /// The commands a script ran in this write set, with their database, noted only while
    /// a MONITOR asks for them (boxed: most write sets never have it).
    #[expect(
        clippy::box_collection,
        reason = "8 bytes in every write set instead of 24: its size is copied per command"
    )]
    script_calls: Option<Box<Vec<ScriptCall>>>,
    /// Big collections this write set drops (deleted, overwritten, re-created): their
    /// members' ranges are swept once it commits (`gc::Sweeps`).
    dropped: Vec<(Vec<u8>, Meta)>,
    /// Keyspace notifications noted so far (boxed, and `None` while notifications are off:
    /// 8 bytes in every write set, whose size is copied per command).
    notes: Option<Box<Notes>>,
    /// While set, commands tell nothing of their own (RESTORE rebuilds a value through
    /// them); a key's creation is still told.
    quiet: bool,
}

/// What a write set notes for keyspace notifications.
#[derive(Debug, Default)]
struct Notes {
    /// The events of the commands run so far, in order, published once the write set
    /// commits.
    events: Vec<Event>,
    /// A key the running command removed to store a new value under it (a `*STORE`
    /// destination): its re-creation overwrites it, so Redis sends no `new` for it.
    overwriting: Option<ScopedKey>,
}

/// The databases FLUSHDB (or FLUSHALL) cleared in a write set.
#[derive(Debug, Default)]
struct Cleared {
    /// Nothing in these databases before the write set exists any more.
    dbs: DbSet,
    /// FLUSHALL ran: the batch deletes the whole key space but the server's records.
    every: bool,
    /// Redis keys the write set wrote before a FLUSHDB dropped those writes (kept only
    /// while some client WATCHes: they count as touched).
    flushed: Vec<ScopedKey>,
}

/// A pending write of an engine key: its new value, or `None` for a deletion.
type Pending = Option<Vec<u8>>;

/// A Redis key and the database it is in.
pub type ScopedKey = (DbIndex, Vec<u8>);

/// A set of databases.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DbSet([u64; 4]);

impl DbSet {
    /// Every database.
    pub fn every() -> DbSet {
        DbSet([u64::MAX; 4])
    }

    /// Adds `db`.
    pub fn insert(&mut self, db: DbIndex) {
        self.0[usize::from(db >> 6)] |= 1 << (db & 63);
    }

    /// True when `db` is in the set.
    pub fn contains(&self, db: DbIndex) -> bool {
        self.0[usize::from(db >> 6)] & (1 << (db & 63)) != 0
    }

    /// True when no database is in the set.
    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// The databases in the set, lowest first (nothing to do for an empty set: every
    /// commit asks).
    pub fn iter(&self) -> impl Iterator<Item = DbIndex> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            (0..64u8)
                .take(if bits == 0 { 0 } else { 64 })
                .filter(move |b| bits & (1 << b) != 0)
                .map(move |b| (w as u8) * 64 + b)
        })
    }
}

/// Changes to the numbers of keys and of keys with a time to live, per database (database
/// 0's inline: no allocation for a write set that stays there).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Deltas {
    zero: (i64, i64),
    others: Vec<(DbIndex, (i64, i64))>,
}

impl Deltas {
    fn slot(&mut self, db: DbIndex) -> &mut (i64, i64) {
        if db == 0 {
            return &mut self.zero;
        }
        let i = match self.others.iter().position(|o| o.0 == db) {
            Some(i) => i,
            None => {
                self.others.push((db, (0, 0)));
                self.others.len() - 1
            }
        };
        &mut self.others[i].1
    }

    /// Adds `keys` to database `db`'s key count and `volatile` to its count of keys with a
    /// time to live.
    pub fn add(&mut self, db: DbIndex, keys: i64, volatile: i64) {
        let s = self.slot(db);
        s.0 += keys;
        s.1 += volatile;
    }

    /// Forgets the changes to database `db` (FLUSHDB: its counts start again from zero).
    pub fn reset(&mut self, db: DbIndex) {
        *self.slot(db) = (0, 0);
    }

    /// Every database's (keys, volatile keys) change, database 0 first.
    pub fn iter(&self) -> impl Iterator<Item = (DbIndex, i64, i64)> + '_ {
        std::iter::once((0, self.zero.0, self.zero.1))
            .chain(self.others.iter().map(|&(db, (k, v))| (db, k, v)))
    }
}

/// A write set's overlay, range deletions and cleared databases, as a FLUSHDB found them,
/// and how many undo records came before it.
type BeforeClear = (
    BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    Vec<(Vec<u8>, Vec<u8>)>,
    (DbSet, bool),
    usize,
);

/// The changes made to a write set since its savepoint, newest last, and the state to go
/// back to: a command that fails after writing part of its changes leaves nothing behind in a
/// write set it shares with other commands (a pipelined group, EXEC).
#[derive(Default)]
struct Undo {
    /// Overlay entries as they were before each change (`None`: not in the overlay).
    writes: Vec<(Vec<u8>, Option<Pending>)>,
    ranges: usize,
    deltas: Deltas,
    ready: usize,
    flushed: usize,
    dropped: usize,
    events: usize,
    /// The whole overlay, its range deletions and whether it was cleared, if a FLUSHDB
    /// cleared them since the savepoint.
    before_clear: Option<BeforeClear>,
}

impl<'a> Txn<'a> {
    /// A write set (or, with `reader`, a read-only view) addressing database `db`.
    pub(super) fn new(store: &'a Store, reader: bool, ctx: Ctx, db: DbIndex) -> Txn<'a> {
        Txn {
            store,
            reader,
            snap: OnceCell::new(),
            writes: BTreeMap::new(),
            db,
            records: RefCell::new(FastMap::default()),
            cleared: None,
            ranges: Vec::new(),
            deltas: Deltas::default(),
            ctx,
            ready: Vec::new(),
            undo: Vec::new(),
            touched_log: None,
            script_calls: None,
            dropped: Vec::new(),
            notes: None,
            quiet: false,
        }
    }

    /// The stored database commands address (after SWAPDB not the SELECT index: see
    /// [`Store::physical`]).
    pub fn db(&self) -> DbIndex {
        self.db
    }

    /// Makes later commands address database index `index` (`SELECT`; the caller checks the
    /// index against the configured number of databases).
    pub fn select(&mut self, index: DbIndex) {
        let db = self.store.physical(index);
        self.select_stored(db);
    }

    /// Makes later commands address stored database `db` (as [`Txn::db`] names it, not a
    /// SELECT index: the two differ after SWAPDB).
    pub fn select_stored(&mut self, db: DbIndex) {
        if db != self.db {
            self.db = db;
            self.records.get_mut().clear();
        }
    }

    /// Starts noting the commands scripts run in this write set (MONITOR shows them).
    pub fn trace_script_calls(&mut self) {
        self.script_calls.get_or_insert_default();
    }

    /// Notes a command a script runs, if [`Txn::trace_script_calls`] asked for them.
    pub fn note_script_call(&mut self, args: &[bytes::Bytes]) {
        if let Some(calls) = self.script_calls.as_mut() {
            calls.push((self.db, args.to_vec()));
        }
    }

    /// The commands scripts ran since tracing started, with their database.
    pub fn take_script_calls(&mut self) -> Vec<ScriptCall> {
        self.script_calls.take().map(|b| *b).unwrap_or_default()
    }

    /// Starts noting the Redis keys this write set writes (see [`Txn::take_touched`]).
    pub fn track_touched(&mut self) {
        self.touched_log.get_or_insert_with(BTreeSet::new);
    }

    /// The Redis keys written since tracking started or since the last call, each with
    /// whether the write set now leaves it absent. A key written and then restored by a
    /// rollback counts as touched (a WATCH on it fails: cautious, never wrong data).
    ///
    /// # Errors
    /// Engine errors reading a key's record.
    pub fn take_touched(&mut self) -> Result<Vec<Touched>, Reply> {
        let Some(log) = self.touched_log.as_mut() else {
            return Ok(Vec::new());
        };
        let keys = std::mem::take(log);
        keys.into_iter()
            .map(|(db, k)| {
                let gone = self.record_in(db, &k)?.is_none();
                Ok((db, k, gone))
            })
            .collect()
    }

    fn note_touched(&mut self, k: &[u8]) {
        if let Some(log) = self.touched_log.as_mut()
            && let Some((db, key)) = keys::owner(k)
        {
            log.insert((db, key.to_vec()));
        }
    }

    /// Starts recording what the next command changes, so [`Txn::rollback`] can undo it
    /// (replacing the innermost open savepoint).
    pub fn savepoint(&mut self) {
        self.undo.pop();
        self.begin_nested();
    }

    /// Opens a savepoint inside the open ones (a script's commands inside the script, itself
    /// inside EXEC): [`Txn::rollback`] undoes back to it, [`Txn::end_nested`] keeps its changes
    /// (an enclosing savepoint still undoes them).
    pub fn begin_nested(&mut self) {
        if let Some(n) = self.notes.as_mut() {
            n.overwriting = None;
        }
        self.undo.push(Undo {
            ranges: self.ranges.len(),
            deltas: self.deltas.clone(),
            ready: self.ready.len(),
            flushed: self.flushed_len(),
            dropped: self.dropped.len(),
            events: self.notes.as_ref().map_or(0, |n| n.events.len()),
            ..Undo::default()
        });
    }

    /// Closes the innermost savepoint keeping its changes: the enclosing one, if any, now
    /// undoes them too.
    pub fn end_nested(&mut self) {
        let Some(inner) = self.undo.pop() else {
            return;
        };
        if let Some(outer) = self.undo.last_mut() {
            // The inner records come after the outer ones: undone first, newest first.
            let at = outer.writes.len();
            outer.writes.extend(inner.writes);
            if outer.before_clear.is_none() {
                outer.before_clear = inner.before_clear.map(|(w, r, c, n)| (w, r, c, n + at));
            }
        }
    }

    /// Undoes every change made since the innermost open savepoint (a failed command's
    /// partial writes) and closes it. Nothing happens without one.
    pub fn rollback(&mut self) {
        let Some(mut u) = self.undo.pop() else {
            return;
        };
        if let Some((writes, ranges, cleared, n)) = u.before_clear {
            // The records after the FLUSHDB describe the cleared overlay, which the snapshot
            // replaces whole; those before it apply on top of the snapshot.
            u.writes.truncate(n);
            self.writes = writes;
            self.ranges = ranges;
            let c = self.cleared.get_or_insert_with(Box::default);
            (c.dbs, c.every) = cleared;
        }
        for (k, prev) in u.writes.into_iter().rev() {
            match prev {
                Some(v) => self.writes.insert(k, v),
                None => self.writes.remove(&k),
            };
        }
        // The record cache only mirrors what the overlay and the engine say: refilled on
        // demand.
        self.records.borrow_mut().clear();
        self.ranges.truncate(u.ranges);
        self.deltas = u.deltas;
        self.ready.truncate(u.ready);
        if let Some(c) = self.cleared.as_mut() {
            c.flushed.truncate(u.flushed);
        }
        self.dropped.truncate(u.dropped);
        if let Some(n) = self.notes.as_mut() {
            n.events.truncate(u.events);
        }
    }

    /// Records the overlay entry of `k` before a change, while a savepoint is open.
    /// Sets overlay entry `k` to `w`, keeping what it replaces in the innermost savepoint's
    /// undo log: moved there, not cloned (a group of writes to one key, such as a
    /// collection's metadata, would copy the previous value at every write).
    fn overlay_set(&mut self, k: Vec<u8>, w: Pending) {
        self.note_touched(&k);
        if self.undo.is_empty() {
            self.writes.insert(k, w);
            return;
        }
        let key = k.clone();
        let prev = self.writes.insert(k, w);
        if let Some(u) = self.undo.last_mut() {
            u.writes.push((key, prev));
        }
    }

    /// Remembers a big collection this write set drops, for a sweep after the commit.
    fn note_dropped(&mut self, key: &[u8], meta: &Meta) {
        // Clients blocked in XREADGROUP on a stream that goes are told (UNBLOCKED).
        if let Meta::Stream(_) = meta {
            self.signal_ready(key);
        }
        if super::gc::is_big(meta) {
            self.dropped.push((key.to_vec(), meta.clone()));
        }
    }

    fn cache_record(&mut self, key: &[u8], r: Option<Record>) {
        self.records.borrow_mut().insert(key.to_vec(), r);
    }

    /// The snapshot a read-only view reads (`Store::reader`), taken out of it for a reply
    /// streamed after the command (`resp::Stream`); `None` for write sets. The view reads the
    /// latest data afterwards, so take it last.
    pub fn take_snapshot(&mut self) -> Option<Snapshot> {
        if !self.is_empty() {
            return None;
        }
        self.snapshot();
        self.snap.take()
    }

    /// The snapshot a read-only view reads, taken now if this is its first read; `None` for
    /// write sets.
    fn snapshot(&self) -> Option<&Snapshot> {
        self.reader
            .then(|| self.snap.get_or_init(|| self.store.db().snapshot()))
    }

    /// The store.
    pub fn store(&self) -> &'a Store {
        self.store
    }

    /// The time the running command decides with (ms since the Unix epoch).
    pub fn now_ms(&self) -> u64 {
        self.ctx.now_ms
    }

    /// Moves on to `ctx` for the next command (or log entry) of a write set that spans
    /// several: its clock and randomness, and for a replicated entry its own range of
    /// versions, so that each entry decides exactly as it would in a write set of its own.
    pub fn set_ctx(&mut self, ctx: Ctx) {
        self.ctx = ctx;
    }

    /// Moves on to the next request of the same replicated entry: its own time and seed,
    /// but the entry's range of versions goes on where the previous request left it, so
    /// that no two requests of one entry make a collection under the same version.
    pub fn next_in_entry(&mut self, now_ms: u64, seed: u64) {
        self.ctx.now_ms = now_ms;
        self.ctx.rng = seed;
    }

    /// A pseudo-random number, the same on every replica for the same log entry.
    pub fn rand_u64(&mut self) -> u64 {
        self.ctx.rng = self.ctx.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.ctx.rng)
    }

    /// A version no collection has used: new collections put their members under it.
    ///
    /// # Errors
    /// The engine's error persisting the allocator's high-water mark.
    pub fn new_version(&mut self) -> Result<u64, Reply> {
        let n = match &mut self.ctx.versions {
            Versions::Store => self.store.alloc_version()?,
            Versions::Log { next, end } => {
                if *next >= *end {
                    return Err(Reply::err("too many new collections in one log entry"));
                }
                *next += 1;
                *next - 1
            }
        };
        if n > keys::VERSION_MAX {
            return Err(Reply::err("collection versions exhausted"));
        }
        Ok(db_version(self.db, n))
    }

    /// The value of engine key `k` as this write set sees it.
    ///
    /// # Errors
    /// Engine errors as `ERR` replies.
    pub fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
        if let Some(v) = self.writes.get(k) {
            return Ok(v.clone());
        }
        if self.cleared_covers(k) || self.range_deleted(k) {
            return Ok(None);
        }
        Ok(match self.snapshot() {
            Some(s) => s.get(k)?,
            None => self.store.db().get(k)?,
        })
    }

    /// Takes a read-only view's snapshot now, if it has none yet: whoever runs several
    /// commands over one view (a script) calls this first, so that no command reads past
    /// the snapshot through [`Txn::get_once`].
    pub fn pin_snapshot(&self) {
        self.snapshot();
    }

    /// [`Txn::get`] for a command that reads this one engine key and nothing else (GET of
    /// an inline string): a read-only view reads the latest data without taking a snapshot
    /// (one read is one moment by itself). A command that finds it must read more after
    /// all reads again through [`Txn::get`], which takes the snapshot then. A view shared
    /// by several commands has its snapshot pinned first ([`Txn::pin_snapshot`]).
    ///
    /// # Errors
    /// Engine errors as `ERR` replies.
    pub fn get_once(&self, k: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
        if self.reader && self.snap.get().is_none() {
            return Ok(self.store.db().get(k)?);
        }
        self.get(k)
    }

    /// The metadata record of Redis key `key`, expired or not.
    ///
    /// # Errors
    /// Engine errors or a corrupt value.
    pub fn record(&self, key: &[u8]) -> Result<Option<Record>, Reply> {
        if let Some(r) = self.records.borrow().get(key) {
            return Ok(r.clone());
        }
        let r = self.read_record(self.db, key)?;
        self.records.borrow_mut().insert(key.to_vec(), r.clone());
        Ok(r)
    }

    /// The metadata record of `key` in database `db`, expired or not (cached only for the
    /// current database).
    ///
    /// # Errors
    /// Engine errors or a corrupt value.
    pub fn record_in(&self, db: DbIndex, key: &[u8]) -> Result<Option<Record>, Reply> {
        if db == self.db
            && let Some(r) = self.records.borrow().get(key)
        {
            return Ok(r.clone());
        }
        self.read_record(db, key)
    }

    /// The metadata record of `key` in database `db` as the overlay and the engine hold it,
    /// past the record cache.
    fn read_record(&self, db: DbIndex, key: &[u8]) -> Result<Option<Record>, Reply> {
        match self.get(&meta_key(db, key))? {
            Some(v) => Ok(Some(Record::decode(&v)?)),
            None => Ok(None),
        }
    }

    /// The metadata record of `key`, expired or not, for a caller that replaces it at once
    /// ([`Txn::replace_record`]): read like [`Txn::record`] but not kept in the record cache
    /// (a string's record holds its value, and the write that follows drops it from the
    /// cache anyway).
    ///
    /// # Errors
    /// Engine errors or a corrupt value.
    pub fn record_to_replace(&self, key: &[u8]) -> Result<Option<Record>, Reply> {
        if let Some(r) = self.records.borrow().get(key) {
            return Ok(r.clone());
        }
        self.read_record(self.db, key)
    }

    /// The record of `key` if it exists and has not expired.
    ///
    /// # Errors
    /// Engine errors or a corrupt value.
    pub fn live(&self, key: &[u8]) -> Result<Option<Record>, Reply> {
        let now = self.ctx.now_ms;
        Ok(self.record(key)?.filter(|r| !r.expired(now)))
    }

    /// The metadata of Redis key `key`, if it exists (an expired key does not).
    ///
    /// # Errors
    /// Engine errors or a corrupt value.
    pub fn meta(&self, key: &[u8]) -> Result<Option<Meta>, Reply> {
        Ok(self.live(key)?.map(|r| r.meta))
    }

    /// Sets engine key `k`.
    pub fn put(&mut self, k: Vec<u8>, v: Vec<u8>) {
        self.overlay_set(k, Some(v));
    }

    /// Deletes engine key `k`.
    pub fn delete(&mut self, k: Vec<u8>) {
        self.overlay_set(k, None);
    }

    /// Deletes every engine key `k` with `start <= k < end`: one range tombstone in the
    /// batch, whatever the number of keys (a long LTRIM or pop). Writes made earlier by this
    /// write set inside the range go with it; later ones are kept.
    pub fn delete_range(&mut self, start: Vec<u8>, end: Vec<u8>) {
        if start >= end {
            return;
        }
        let inside: Vec<Vec<u8>> = self
            .writes
            .range::<[u8], _>((Bound::Included(&start[..]), Bound::Excluded(&end[..])))
            .map(|(k, _)| k.clone())
            .collect();
        for k in inside {
            let prev = self.writes.remove(&k);
            if let Some(u) = self.undo.last_mut() {
                u.writes.push((k, prev));
            }
        }
        self.note_touched(&start);
        self.ranges.push((start, end));
    }

    /// True when a range deletion of this write set covers `k`.
    fn range_deleted(&self, k: &[u8]) -> bool {
        self.ranges
            .iter()
            .any(|(s, e)| s.as_slice() <= k && k < e.as_slice())
    }

    /// Writes `meta` for `key`, keeping the key's time to live if it exists (as Redis's
    /// commands that modify a value do); a key that did not exist, or had expired, gets none.
    ///
    /// # Errors
    /// Engine errors reading the current record.
    pub fn put_meta(&mut self, key: &[u8], meta: Meta) -> Result<(), Reply> {
        let expire_at = self.live(key)?.map_or(0, |r| r.expire_at);
        self.put_record(key, Record { expire_at, meta })
    }

    /// Writes `record` for `key`: its metadata and expiry exactly as given, keeping the
    /// expiry index and the key count right.
    ///
    /// # Errors
    /// Engine errors reading the current record.
    pub fn put_record(&mut self, key: &[u8], record: Record) -> Result<(), Reply> {
        let old = self.record(key)?;
        self.replace_record(key, record, old.as_ref());
        Ok(())
    }

    /// [`Txn::put_record`] for a caller that has just read the record it replaces, `old`,
    /// through [`Txn::record`] or [`Txn::record_to_replace`] (expired or not, as stored),
    /// with no write to `key` in between.
    pub fn replace_record(&mut self, key: &[u8], record: Record, old: Option<&Record>) {
        // A key found expired goes first, as Redis's lookup deletes it before the command
        // (`expired`), and the command then creates it anew (`new`).
        if self
            .store
            .notifier()
            .wants(notify::class::EXPIRED | notify::class::NEW)
        {
            let expired = old.is_some_and(|o| o.expired(self.ctx.now_ms));
            if expired {
                self.notify(notify::class::EXPIRED, "expired", key);
            }
            let db = self.db;
            let overwrite = self
                .notes
                .as_mut()
                .and_then(|n| {
                    n.overwriting
                        .take_if(|(d, k)| *d == db && k.as_slice() == key)
                })
                .is_some();
            if (old.is_none() || expired) && !overwrite {
                self.notify(notify::class::NEW, "new", key);
            }
        }
        let was_volatile = old.is_some_and(|o| o.expire_at != 0);
        let db = self.db;
        let volatile = i64::from(record.expire_at != 0) - i64::from(was_volatile);
        self.deltas.add(db, i64::from(old.is_none()), volatile);
        if let Some(o) = old
            && o.expire_at != 0
            && o.expire_at != record.expire_at
        {
            self.delete(expiry_key(db, o.expire_at, key));
        }
        if let Some(o) = old
            && o.meta.version().is_some()
            && o.meta.version() != record.meta.version()
        {
            self.note_dropped(key, &o.meta);
        }
        if record.expire_at != 0 && old.is_none_or(|o| o.expire_at != record.expire_at) {
            self.put(expiry_key(db, record.expire_at, key), Vec::new());
        }
        self.put(meta_key(db, key), record.encode());
        // A string's record holds its value: decoding it again from the overlay, if it is
        // read again, costs less than a copy kept here.
        if let Meta::Str(_) = record.meta {
            let mut cache = self.records.borrow_mut();
            if !cache.is_empty() {
                cache.remove(key);
            }
        } else {
            self.cache_record(key, Some(record));
        }
    }

    /// Removes Redis key `key` (live or expired): one write of its metadata key, whatever it
    /// holds; its members stay behind under a version nothing names, for compaction to drop.
    /// Returns whether a live key was removed.
    ///
    /// # Errors
    /// Engine errors reading the current record.
    pub fn remove_key(&mut self, key: &[u8]) -> Result<bool, Reply> {
        let Some(old) = self.record(key)? else {
            return Ok(false);
        };
        let db = self.db;
        if old.expire_at != 0 {
            self.delete(expiry_key(db, old.expire_at, key));
        }
        self.deltas.add(db, -1, -i64::from(old.expire_at != 0));
        self.delete(meta_key(db, key));
        self.cache_record(key, None);
        self.note_dropped(key, &old.meta);
        let live = !old.expired(self.ctx.now_ms);
        if !live {
            // Whoever removes an expired key (the reclaimer, a replica applying the
            // leader's expiry, a command meeting it) tells of it, as Redis does.
            self.notify(notify::class::EXPIRED, "expired", key);
        }
        Ok(live)
    }

    /// Removes every key of the current database (FLUSHDB): one range deletion of its
    /// metadata and one of its expiry index; its members stay behind under versions nothing
    /// names, for compaction to drop.
    pub fn clear_db(&mut self) {
        let db = self.db;
        self.clear(|k| keys::db_of(k) == Some(db));
        self.cleared.get_or_insert_with(Box::default).dbs.insert(db);
        self.deltas.reset(db);
    }

    /// Removes every key of every database (FLUSHALL): one range deletion of the whole key
    /// space but the server's own records.
    pub fn clear_every_db(&mut self) {
        self.clear(|k| keys::db_of(k).is_some());
        let c = self.cleared.get_or_insert_with(Box::default);
        c.dbs = DbSet::every();
        c.every = true;
        self.deltas = Deltas::default();
    }

    /// Drops the overlay's writes and range deletions of the keys `in_scope` says are
    /// cleared, remembering what undoes it and which watched keys it touched.
    fn clear(&mut self, in_scope: impl Fn(&[u8]) -> bool) {
        let cleared = (self.cleared_dbs(), self.cleared_every());
        if let Some(u) = self.undo.last_mut()
            && u.before_clear.is_none()
        {
            // Taken once per savepoint: the earlier undo entries apply on top of it.
            let n = u.writes.len();
            u.before_clear = Some((self.writes.clone(), self.ranges.clone(), cleared, n));
        }
        if self.store.watches().active() {
            let owners = self.writes.keys().filter(|k| in_scope(k));
            let owners = owners.filter_map(|k| keys::owner(k));
            let flushed = owners
                .map(|(db, key)| (db, key.to_vec()))
                .collect::<Vec<_>>();
            self.cleared
                .get_or_insert_with(Box::default)
                .flushed
                .extend(flushed);
        }
        self.writes.retain(|k, _| !in_scope(k));
        self.ranges.retain(|(start, _)| !in_scope(start));
        self.records.get_mut().clear();
    }

    /// True when a FLUSHDB or FLUSHALL of this write set removed what the engine holds at
    /// `k`.
    fn cleared_covers(&self, k: &[u8]) -> bool {
        self.cleared
            .as_ref()
            .is_some_and(|c| keys::db_of(k).is_some_and(|db| c.dbs.contains(db)))
    }

    /// The databases FLUSHDB or FLUSHALL cleared in this write set.
    fn cleared_dbs(&self) -> DbSet {
        self.cleared.as_ref().map_or_else(DbSet::default, |c| c.dbs)
    }

    /// True when FLUSHALL ran in this write set.
    fn cleared_every(&self) -> bool {
        self.cleared.as_ref().is_some_and(|c| c.every)
    }

    /// How many keys written before a FLUSHDB the write set keeps as touched.
    fn flushed_len(&self) -> usize {
        self.cleared.as_ref().map_or(0, |c| c.flushed.len())
    }

    /// Notes keyspace notification `name` of class `class` (`crate::notify::class`) for
    /// `key` of the current database, published if the write set commits (and the command
    /// is not rolled back). Costs one atomic load while the class is off.
    #[inline]
    pub fn notify(&mut self, class: u32, name: &'static str, key: &[u8]) {
        if self.store.notifier().wants(class) && (!self.quiet || class == notify::class::NEW) {
            self.push_event(name, self.db, key);
        }
    }

    fn push_event(&mut self, name: &'static str, db: DbIndex, key: &[u8]) {
        self.notes.get_or_insert_default().events.push(Event {
            name,
            db,
            key: key.to_vec(),
        });
    }

    /// Runs `f` with the events of the commands it runs left out, but `new` (RESTORE
    /// writes a value through ZADD, HSET...: Redis tells only of the restore).
    pub fn quietly<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let was = std::mem::replace(&mut self.quiet, true);
        let out = f(self);
        self.quiet = was;
        out
    }

    /// [`Txn::remove_key`] for a command that stores a new value under `key` next (SORT's
    /// and the sorted sets' STORE forms): Redis overwrites the key, so its re-creation in
    /// this command sends no `new` event. Returns whether a live key was removed.
    ///
    /// # Errors
    /// Engine errors reading the current record.
    pub fn remove_to_overwrite(&mut self, key: &[u8]) -> Result<bool, Reply> {
        let live = self.remove_key(key)?;
        if live {
            self.overwrites(key);
        }
        Ok(live)
    }

    /// Says the running command's next creation of `key` replaces a value it removed
    /// itself (LMOVE of a one-element list onto itself): no `new` event for it.
    pub fn overwrites(&mut self, key: &[u8]) {
        if self.store.notifier().wants(notify::class::NEW) {
            self.notes.get_or_insert_default().overwriting = Some((self.db, key.to_vec()));
        }
    }

    /// [`Txn::notify`] for `key` of stored database `db` (MOVE's and COPY's destination).
    pub fn notify_in(&mut self, db: DbIndex, class: u32, name: &'static str, key: &[u8]) {
        if self.store.notifier().wants(class) && !self.quiet {
            self.push_event(name, db, key);
        }
    }

    /// [`Txn::notify`], then `del` if the command left `key` absent: a collection emptied
    /// by removing its last elements, as Redis follows such an event with `del`.
    pub fn notify_then_del_if_gone(
        &mut self,
        class: u32,
        name: &'static str,
        key: &[u8],
    ) -> Result<(), Reply> {
        if self.store.notifier().wants(class | notify::class::GENERIC) {
            self.notify(class, name, key);
            if self.record(key)?.is_none() {
                self.notify(notify::class::GENERIC, "del", key);
            }
        }
        Ok(())
    }

    /// Marks the list or sorted set `key` as having elements now, for blocked clients.
    pub fn signal_ready(&mut self, key: &[u8]) {
        let db = self.db;
        if !self.ready.iter().any(|(d, k)| *d == db && k == key) {
            self.ready.push((db, key.to_vec()));
        }
    }

    /// The keys [`Txn::signal_ready`] named so far.
    pub fn ready_keys(&self) -> &[ScopedKey] {
        &self.ready
    }

    /// Takes the keys [`Txn::signal_ready`] named so far (blocked clients are served inside
    /// the write set, after each command: `crate::blocking`); a key signalled again after
    /// this is reported again.
    pub fn take_ready(&mut self) -> Vec<ScopedKey> {
        std::mem::take(&mut self.ready)
    }

    /// Up to `limit` entries whose keys start with `prefix`, after `after` (exclusive) when
    /// given, merging the engine's entries with this write set's.
    ///
    /// # Errors
    /// Engine errors from the scan.
    pub fn scan_prefix(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<Entry>, Reply> {
        let mut out = Vec::new();
        self.for_each_prefix(prefix, after, false, |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            Ok(out.len() < limit)
        })?;
        Ok(out)
    }

    /// Calls `f` with each entry whose key starts with `prefix` (after `after`, exclusive,
    /// when given; newest key first when `reverse`, then `after` bounds from above), merging
    /// the engine's entries with this write set's, until `f` returns `false`. Holds one entry
    /// at a time: for scans too long to collect.
    ///
    /// # Errors
    /// Engine errors from the scan, or `f`'s.
    pub fn for_each_prefix(
        &self,
        prefix: &[u8],
        after: Option<&[u8]>,
        reverse: bool,
        f: impl FnMut(&[u8], &[u8]) -> Result<bool, Reply>,
    ) -> Result<(), Reply> {
        let mut start = Bound::Included(prefix.to_vec());
        let mut end = match prefix_end(prefix) {
            Some(e) => Bound::Excluded(e),
            None => Bound::Unbounded,
        };
        if let Some(a) = after.filter(|a| a.starts_with(prefix)) {
            if reverse {
                end = Bound::Excluded(a.to_vec());
            } else {
                start = Bound::Excluded(a.to_vec());
            }
        }
        self.for_each_in(start, end, reverse, f)
    }

    /// Calls `f` with each entry between `start` and `end` (in key order, or newest key
    /// first when `reverse`), merging the engine's entries with this write set's, until `f`
    /// returns `false`. An empty or inverted range calls `f` never.
    ///
    /// # Errors
    /// Engine errors from the scan, or `f`'s.
    pub fn for_each_in(
        &self,
        start: Bound<Vec<u8>>,
        end: Bound<Vec<u8>>,
        reverse: bool,
        mut f: impl FnMut(&[u8], &[u8]) -> Result<bool, Reply>,
    ) -> Result<(), Reply> {
        let empty = match (&start, &end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s) | Bound::Excluded(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e)) => s >= e,
            _ => false,
        };
        if empty {
            return Ok(());
        }
        let range = (start.clone(), end.clone());
        let mut engine = if self.cleared_every() {
            None
        } else {
            Some(match self.snapshot() {
                Some(s) => s.scan(range.clone()),
                None => self.store.db().scan(range.clone()),
            })
        };
        let overlay = self.writes.range(range);
        let mut overlay: Box<dyn Iterator<Item = _>> = if reverse {
            Box::new(overlay.rev())
        } else {
            Box::new(overlay)
        };
        let next_engine = |e: &mut Option<bloomkv::DbIter>| -> Result<Option<Entry>, Reply> {
            let Some(it) = e.as_mut() else {
                return Ok(None);
            };
            let item = if reverse { it.next_back() } else { it.next() };
            Ok(item.transpose()?)
        };
        let mut e_head = next_engine(&mut engine)?;
        let mut o_head = overlay.next();
        loop {
            let from_engine = match (&e_head, &o_head) {
                (None, None) => return Ok(()),
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (Some((ek, _)), Some((ok, _))) => {
                    let o = ek.as_slice().cmp(ok.as_slice());
                    let o = if reverse { o.reverse() } else { o };
                    if o == std::cmp::Ordering::Equal {
                        // The write set's version of the key replaces the engine's.
                        e_head = next_engine(&mut engine)?;
                    }
                    o == std::cmp::Ordering::Less
                }
            };
            let go_on = if from_engine {
                match e_head.take() {
                    Some((k, _)) if self.range_deleted(&k) || self.cleared_covers(&k) => {
                        e_head = next_engine(&mut engine)?;
                        true
                    }
                    Some((k, v)) => {
                        e_head = next_engine(&mut engine)?;
                        f(&k, &v)?
                    }
                    None => true,
                }
            } else {
                match o_head.take() {
                    Some((k, Some(v))) => {
                        o_head = overlay.next();
                        f(k, v)?
                    }
                    Some((_, None)) => {
                        o_head = overlay.next();
                        true
                    }
                    None => true,
                }
            };
            if !go_on {
                return Ok(());
            }
        }
    }

    /// Number of engine keys written or deleted so far (a range deletion counts one).
    pub fn len(&self) -> usize {
        self.writes.len() + self.ranges.len()
    }

    /// True when nothing is to be written.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty() && self.ranges.is_empty() && self.cleared_dbs().is_empty()
    }

    /// The batch this write set commits and its bookkeeping, for a caller that writes the
    /// batch itself (a replicated state machine) and then calls [`Store::committed`].
    pub fn into_batch(self) -> (WriteBatch, Committed) {
        let touched = if self.store.watches().active() {
            self.touched()
        } else {
            Vec::new()
        };
        let ops: usize = self
            .writes
            .iter()
            .map(|(k, v)| WriteBatch::op_bytes(k, v.as_deref()))
            .chain(
                self.ranges
                    .iter()
                    .map(|(s, e)| WriteBatch::op_bytes(s, Some(e))),
            )
            .sum();
        let mut batch = WriteBatch::with_capacity(ops);
        let cleared = self.cleared_dbs();
        if self.cleared_every() {
            batch.delete_range([tag::SYSTEM + 1], [0xff]);
        } else if !cleared.is_empty() {
            for db in cleared.iter() {
                for prefix in [keys::meta_prefix(db), keys::expiry_prefix(db)] {
                    if let Some(end) = prefix_end(&prefix) {
                        batch.delete_range(prefix, end);
                    }
                }
            }
        }
        for (start, end) in self.ranges {
            batch.delete_range(start, end);
        }
        for (k, v) in self.writes {
            match v {
                Some(v) => batch.put(k, v),
                None => batch.delete(k),
            }
        }
        let done = Committed {
            deltas: self.deltas,
            cleared,
            ready: self.ready,
            touched,
            dropped: self.dropped,
            events: self.notes.map(|n| n.events).unwrap_or_default(),
        };
        (batch, done)
    }

    /// The Redis keys this write set changes, each with whether it leaves the key absent
    /// (for WATCH). A FLUSHDB touches the watched keys that existed before it (Redis leaves
    /// the watchers of absent keys alone) and those the write set wrote before it.
    fn touched(&self) -> Vec<Touched> {
        let mut keys: BTreeSet<(DbIndex, &[u8])> =
            self.writes.keys().filter_map(|k| keys::owner(k)).collect();
        let watched;
        let cleared = self.cleared_dbs();
        if let Some(c) = self.cleared.as_ref().filter(|_| !cleared.is_empty()) {
            keys.extend(c.flushed.iter().map(|(db, k)| (*db, k.as_slice())));
            watched = self.store.watches().keys();
            for (db, k) in &watched {
                // Read before the batch is written; FLUSHDB and EXEC hold every writer out.
                if cleared.contains(*db)
                    && matches!(self.store.db().get(meta_key(*db, k)), Ok(Some(_)) | Err(_))
                {
                    keys.insert((*db, k));
                }
            }
        }
        let records = self.records.borrow();
        keys.into_iter()
            .map(|(db, k)| {
                // The metadata key's write says it; else the record as last read (a write
                // of members only leaves the key in place).
                let gone = match self.writes.get(&meta_key(db, k)) {
                    Some(w) => w.is_none(),
                    None => match records.get(k).filter(|_| db == self.db) {
                        Some(r) => r.is_none(),
                        None => cleared.contains(db),
                    },
                };
                (db, k.to_vec(), gone)
            })
            .collect()
    }

    /// Writes everything as one atomic batch. Returns the keys made ready for blocked clients.
    ///
    /// # Errors
    /// The engine's write error, as an `ERR` reply; nothing was applied then.
    pub fn commit(self) -> Result<Vec<ScopedKey>, Reply> {
        if self.is_empty() {
            // A command may take effect without a write (none does yet): its events go
            // out all the same.
            if let Some(n) = self.notes.as_ref().filter(|n| !n.events.is_empty()) {
                self.store.publish_events(&n.events);
            }
            return Ok(self.ready);
        }
        let store = self.store;
        if let Some(cause) = store.writes_stopped() {
            return Err(super::misconf(&cause));
        }
        let (batch, done) = self.into_batch();
        if let Err(e) = store.db().write(batch) {
            return Err(store.note_write_error(&e));
        }
        Ok(store.committed(done))
    }
}

/// What a write set's commit changes besides the data: the key counts, and the keys whose
/// blocked clients may now be served.
#[derive(Debug, Default)]
pub struct Committed {
    /// Changes to the numbers of keys and of keys with a time to live, per database.
    pub deltas: Deltas,
    /// Databases the write set cleared (FLUSHDB, FLUSHALL): their counts start from zero.
    pub cleared: DbSet,
    /// Lists and sorted sets that became non-empty.
    pub ready: Vec<ScopedKey>,
    /// Redis keys written (for WATCH), each with whether the commit left it absent; empty
    /// while nobody watches.
    pub touched: Vec<Touched>,
    /// Big collections dropped, for a sweep of their ranges (`gc::Sweeps`).
    pub dropped: Vec<(Vec<u8>, Meta)>,
    /// Keyspace notifications to publish, in order.
    pub events: Vec<Event>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::temp_store;

    /// The write set's pending state as a comparable value.
    type State = (
        Vec<(Vec<u8>, Pending)>,
        Vec<(Vec<u8>, Vec<u8>)>,
        Deltas,
        DbSet,
    );

    fn state(t: &Txn<'_>) -> State {
        (
            t.writes
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            t.ranges.clone(),
            t.deltas.clone(),
            t.cleared_dbs(),
        )
    }

    fn event_names(t: Txn<'_>) -> Vec<(&'static str, Vec<u8>)> {
        let (_, done) = t.into_batch();
        done.events.into_iter().map(|e| (e.name, e.key)).collect()
    }

    #[test]
    fn events_follow_savepoints_and_the_enabled_classes() {
        let (_d, store) = temp_store();
        let mut t = store.txn();
        t.notify(notify::class::STRING, "set", b"off");
        assert!(
            t.notes.is_none(),
            "nothing is kept while notifications are off"
        );
        store
            .notifier()
            .set_flags(notify::parse(b"KE$").unwrap_or_default());
        t.notify(notify::class::STRING, "set", b"a");
        t.notify(notify::class::LIST, "lpush", b"not-enabled");
        t.savepoint();
        t.notify(notify::class::STRING, "append", b"rolled-back");
        t.rollback();
        t.begin_nested();
        t.notify(notify::class::STRING, "incrby", b"kept");
        t.end_nested();
        t.quietly(|t| t.notify(notify::class::STRING, "set", b"quiet"));
        assert_eq!(
            event_names(t),
            [("set", b"a".to_vec()), ("incrby", b"kept".to_vec())]
        );
    }

    #[test]
    fn rollback_undoes_a_failed_commands_writes_only() {
        let (_dir, store) = temp_store();
        store
            .db()
            .put(
                meta_key(0, b"old"),
                Record {
                    expire_at: 0,
                    meta: Meta::Str(b"x".to_vec()),
                }
                .encode(),
            )
            .unwrap();
        let mut t = store.txn();
        // An earlier command of the group.
        t.put_record(
            b"a",
            Record {
                expire_at: 0,
                meta: Meta::Str(b"1".to_vec()),
            },
        )
        .unwrap();
        t.put(b"zz".to_vec(), b"v".to_vec());
        let before = state(&t);
        let seen = t.meta(b"old").unwrap();
        // The failing command: every kind of change, then a rollback.
        t.savepoint();
        t.put_record(
            b"a",
            Record {
                expire_at: 99_999_999_999_999,
                meta: Meta::Str(b"2".to_vec()),
            },
        )
        .unwrap();
        t.remove_key(b"old").unwrap();
        t.delete(b"zz".to_vec());
        t.put(b"new".to_vec(), b"n".to_vec());
        t.delete_range(b"a".to_vec(), b"zzz".to_vec());
        t.signal_ready(b"list");
        t.rollback();
        assert_eq!(state(&t), before);
        assert_eq!(
            t.meta(b"old").unwrap(),
            seen,
            "the record cache forgot the undone removal"
        );
        assert_eq!(t.meta(b"a").unwrap(), Some(Meta::Str(b"1".to_vec())));
        assert!(t.ready_keys().is_empty());
        // FLUSHDB inside the failed command is undone too.
        t.savepoint();
        t.clear_db();
        t.put(b"after".to_vec(), b"1".to_vec());
        t.rollback();
        assert_eq!(state(&t), before);
        assert_eq!(t.meta(b"old").unwrap(), seen);
        // Without a savepoint, rollback does nothing; a committed write set holds only what
        // survived.
        t.rollback();
        assert_eq!(state(&t), before);
        t.commit().unwrap();
        assert!(store.db().get(b"new").unwrap().is_none());
        assert_eq!(store.db().get(b"zz").unwrap(), Some(b"v".to_vec()));
    }

    #[test]
    fn nested_savepoints_keep_or_undo_their_writes() {
        let (_dir, store) = temp_store();
        let mut t = store.txn();
        t.put(b"k0".to_vec(), b"0".to_vec());
        t.put(b"j".to_vec(), b"pending".to_vec());
        let before = state(&t);
        // EXEC's savepoint, then a script's, then the script's commands.
        t.savepoint();
        t.begin_nested();
        t.begin_nested();
        t.put(b"k1".to_vec(), b"1".to_vec());
        t.end_nested();
        t.begin_nested();
        t.put(b"k2".to_vec(), b"2".to_vec());
        t.rollback(); // a failed command inside the script
        assert_eq!(t.get(b"k1").unwrap(), Some(b"1".to_vec()));
        assert_eq!(t.get(b"k2").unwrap(), None);
        // FLUSHDB, then a write of a key that was pending before the savepoints.
        t.begin_nested();
        t.clear_db();
        t.put(b"j".to_vec(), b"after".to_vec());
        t.end_nested();
        // The script is killed: everything it did goes, what came before stays.
        t.rollback();
        assert_eq!(state(&t), before);
        assert_eq!(t.get(b"j").unwrap(), Some(b"pending".to_vec()));
        // The enclosing (EXEC) savepoint is still open and undoes nothing more.
        t.rollback();
        assert_eq!(state(&t), before);
    }

    fn string(v: &[u8]) -> Record {
        Record {
            expire_at: 0,
            meta: Meta::Str(v.to_vec()),
        }
    }

    #[test]
    fn a_db_set_lists_its_members_in_order() {
        let mut s = DbSet::default();
        assert_eq!(s.iter().count(), 0);
        for db in [0, 63, 64, 200, 255] {
            s.insert(db);
        }
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 63, 64, 200, 255]);
        assert_eq!(DbSet::every().iter().count(), 256);
    }

    #[test]
    fn databases_hold_their_own_keys_and_flush_alone() {
        let (_dir, store) = temp_store();
        let mut t = store.txn();
        t.put_record(b"k", string(b"zero")).unwrap();
        t.select(3);
        assert_eq!(
            t.meta(b"k").unwrap(),
            None,
            "database 3 sees database 0's key"
        );
        t.put_record(b"k", string(b"three")).unwrap();
        let v3 = t.new_version().unwrap();
        assert_eq!(keys::version_db(v3), 3);
        let done = t.commit().unwrap();
        assert!(done.is_empty());
        let mut t = store.txn();
        assert_eq!(t.meta(b"k").unwrap(), Some(Meta::Str(b"zero".to_vec())));
        t.select(3);
        assert_eq!(t.meta(b"k").unwrap(), Some(Meta::Str(b"three".to_vec())));
        // FLUSHDB in database 3, then a write there, in one write set: database 0 keeps
        // its key, database 3 holds only the new one.
        t.clear_db();
        assert_eq!(t.meta(b"k").unwrap(), None);
        t.put_record(b"n", string(b"new")).unwrap();
        let (batch, done) = t.into_batch();
        assert_eq!(done.deltas.iter().find(|d| d.0 == 3), Some((3, 1, 0)));
        assert!(done.cleared.contains(3) && !done.cleared.contains(0));
        store.db().write(batch).unwrap();
        let mut t = store.reader();
        assert_eq!(t.meta(b"k").unwrap(), Some(Meta::Str(b"zero".to_vec())));
        t.select(3);
        assert_eq!(t.meta(b"k").unwrap(), None);
        assert_eq!(t.meta(b"n").unwrap(), Some(Meta::Str(b"new".to_vec())));
        // FLUSHALL clears both.
        let mut t = store.txn();
        t.clear_every_db();
        t.commit().unwrap();
        let mut t = store.reader();
        assert_eq!(t.meta(b"k").unwrap(), None);
        t.select(3);
        assert_eq!(t.meta(b"n").unwrap(), None);
    }
}
