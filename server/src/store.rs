//! How Redis keys live in the engine (see docs/SERVER.md, "Data model"), the per-key writer
//! locks, and [`Txn`]: the write set one command (or one `EXEC`) builds and commits as a
//! single atomic `WriteBatch`.
//!
//! Engine keys:
//!
//! ```text
//! 'M' key                                  metadata: type tag + type fields (strings inline)
//! 'S' be32(len key) key member             a set member (empty value)
//! 'C' be32(len key) key be64(chunk)        a 4 KiB chunk of a chunked string (bitmap)
//! 'F' be32(len key) key be32(layer) be64(chunk)   a 4 KiB chunk of a Bloom sub-filter
//! ```
//!
//! The length prefix keeps one key's sub-keys from interleaving with those of a key it is a
//! prefix of (`a` and `ab`), so a prefix scan finds exactly one key's members.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use bloomkv::{Db, WriteBatch};
use parking_lot::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::resp::Reply;
use crate::walsync::WalSyncEnv;

/// Bytes per chunk of a chunked string or Bloom sub-filter: one engine value, so one SETBIT
/// or BF.ADD writes at most this much (plus the metadata key).
pub const CHUNK_BYTES: usize = 4096;

/// Longest Redis key (or set member) accepted: the engine's 64 KiB key limit less the
/// largest sub-key overhead.
pub const MAX_KEY_LEN: usize = 64 * 1024 - 32;

/// Number of writer lock stripes.
const STRIPES: usize = 1024;

/// Engine key prefixes (never renumber: they are on disk).
pub mod tag {
    /// Metadata keys.
    pub const META: u8 = b'M';
    /// Set members.
    pub const MEMBER: u8 = b'S';
    /// Chunks of chunked strings.
    pub const CHUNK: u8 = b'C';
    /// Chunks of Bloom sub-filters.
    pub const BLOOM: u8 = b'F';
}

/// The metadata key of `key`.
pub fn meta_key(key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(tag::META);
    k.extend_from_slice(key);
    k
}

/// The prefix every sub-key of `key` with tag `t` starts with.
pub fn sub_prefix(t: u8, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(key.len() + 5 + 16);
    k.push(t);
    k.extend_from_slice(&(key.len() as u32).to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// The engine key of set member `member` of `key`.
pub fn member_key(key: &[u8], member: &[u8]) -> Vec<u8> {
    let mut k = sub_prefix(tag::MEMBER, key);
    k.extend_from_slice(member);
    k
}

/// The engine key of chunk `idx` of the chunked string `key`.
pub fn chunk_key(key: &[u8], idx: u64) -> Vec<u8> {
    let mut k = sub_prefix(tag::CHUNK, key);
    k.extend_from_slice(&idx.to_be_bytes());
    k
}

/// The engine key of chunk `idx` of Bloom sub-filter `layer` of `key`.
pub fn bloom_chunk_key(key: &[u8], layer: u32, idx: u64) -> Vec<u8> {
    let mut k = sub_prefix(tag::BLOOM, key);
    k.extend_from_slice(&layer.to_be_bytes());
    k.extend_from_slice(&idx.to_be_bytes());
    k
}

/// The smallest key greater than every key starting with `prefix` (`None`: no bound).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

/// What a metadata key says about its Redis key.
#[derive(Clone, Debug, PartialEq)]
pub enum Meta {
    /// A string held inline in the metadata value.
    Str(Vec<u8>),
    /// A string of `len` bytes held in 4 KiB chunks (bitmaps); missing chunks are zeros.
    Chunked {
        /// Length of the string in bytes.
        len: u64,
    },
    /// A set of `card` members.
    Set {
        /// Number of members.
        card: u64,
    },
    /// A scalable Bloom filter.
    Bloom(crate::bloom::BloomMeta),
}

impl Meta {
    const STR: u8 = b's';
    const CHUNKED: u8 = b'c';
    const SET: u8 = b'S';
    const BLOOM: u8 = b'B';

    /// Decodes a metadata value.
    ///
    /// # Errors
    /// An `ERR` reply naming the damage.
    pub fn decode(v: &[u8]) -> Result<Meta, Reply> {
        let bad = || Reply::err("corrupt metadata value in the store");
        let (&t, rest) = v.split_first().ok_or_else(bad)?;
        let u64_at = |b: &[u8]| -> Result<u64, Reply> {
            Ok(u64::from_le_bytes(b.try_into().map_err(|_| bad())?))
        };
        match t {
            Self::STR => Ok(Meta::Str(rest.to_vec())),
            Self::CHUNKED => Ok(Meta::Chunked { len: u64_at(rest)? }),
            Self::SET => Ok(Meta::Set {
                card: u64_at(rest)?,
            }),
            Self::BLOOM => crate::bloom::BloomMeta::decode(rest)
                .map(Meta::Bloom)
                .ok_or_else(bad),
            _ => Err(bad()),
        }
    }

    /// Encodes a metadata value.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Meta::Str(v) => {
                let mut o = Vec::with_capacity(v.len() + 1);
                o.push(Self::STR);
                o.extend_from_slice(v);
                o
            }
            Meta::Chunked { len } => {
                let mut o = vec![Self::CHUNKED];
                o.extend_from_slice(&len.to_le_bytes());
                o
            }
            Meta::Set { card } => {
                let mut o = vec![Self::SET];
                o.extend_from_slice(&card.to_le_bytes());
                o
            }
            Meta::Bloom(b) => {
                let mut o = vec![Self::BLOOM];
                b.encode(&mut o);
                o
            }
        }
    }

    /// The name `TYPE` answers.
    pub fn type_name(&self) -> &'static str {
        match self {
            Meta::Str(_) | Meta::Chunked { .. } => "string",
            Meta::Set { .. } => "set",
            Meta::Bloom(_) => "MBbloom--",
        }
    }

    /// The sub-key tag this type stores its members or chunks under, if any.
    fn sub_tag(&self) -> Option<u8> {
        match self {
            Meta::Str(_) => None,
            Meta::Chunked { .. } => Some(tag::CHUNK),
            Meta::Set { .. } => Some(tag::MEMBER),
            Meta::Bloom(_) => Some(tag::BLOOM),
        }
    }
}

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

/// The engine, the writer locks and the key count.
#[derive(Debug)]
pub struct Store {
    db: Db,
    env: Arc<WalSyncEnv>,
    stripes: Vec<Mutex<()>>,
    global: RwLock<()>,
    keys: AtomicI64,
    cursors: Mutex<Cursors>,
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

fn stripe(key: &[u8]) -> usize {
    (bloomkv::filter::hash_key(key) % STRIPES as u64) as usize
}

impl Store {
    /// Wraps an open database; counts its keys once (one scan of the metadata keys).
    ///
    /// # Errors
    /// Engine errors from the count.
    pub fn new(db: Db, env: Arc<WalSyncEnv>) -> Result<Store, bloomkv::Error> {
        let mut n = 0i64;
        let end = [tag::META + 1];
        for kv in db.scan([tag::META].as_slice()..end.as_slice()) {
            kv?;
            n += 1;
        }
        Ok(Store {
            db,
            env,
            stripes: (0..STRIPES).map(|_| Mutex::new(())).collect(),
            global: RwLock::new(()),
            keys: AtomicI64::new(n),
            cursors: Mutex::new(Cursors::default()),
        })
    }

    /// The engine.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// The env whose WAL files [`Store::sync_wal`] syncs.
    pub fn env(&self) -> &Arc<WalSyncEnv> {
        &self.env
    }

    /// Forces the WAL to stable storage.
    ///
    /// # Errors
    /// The sync error.
    pub fn sync_wal(&self) -> std::io::Result<()> {
        self.env.sync_logs()
    }

    /// Number of Redis keys.
    pub fn dbsize(&self) -> i64 {
        self.keys.load(Ordering::Relaxed)
    }

    /// Takes the writer locks of `keys` (their stripes, in ascending order so two commands
    /// never wait on each other) under the shared side of the global lock.
    pub fn lock_keys<'k, I>(&self, keys: I) -> WriteGuard<'_>
    where
        I: IntoIterator<Item = &'k [u8]>,
    {
        let global = self.global.read();
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
    /// (`EXEC`, `FLUSHDB`).
    pub fn lock_all(&self) -> RwLockWriteGuard<'_, ()> {
        self.global.write()
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

    /// A new, empty write set over this store.
    pub fn txn(&self) -> Txn<'_> {
        Txn {
            store: self,
            writes: BTreeMap::new(),
            key_delta: 0,
        }
    }
}

/// Pending writes of one command or transaction, read back by its own later reads.
pub struct Txn<'a> {
    store: &'a Store,
    writes: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    key_delta: i64,
}

/// An engine key and its value.
pub type Entry = (Vec<u8>, Vec<u8>);

/// Result of a command: its reply, or an error reply.
pub type R = Result<Reply, Reply>;

impl<'a> Txn<'a> {
    /// The store.
    pub fn store(&self) -> &'a Store {
        self.store
    }

    /// The value of engine key `k` as this write set sees it.
    ///
    /// # Errors
    /// Engine errors as `ERR` replies.
    pub fn get(&self, k: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
        if let Some(v) = self.writes.get(k) {
            return Ok(v.clone());
        }
        Ok(self.store.db.get(k)?)
    }

    /// The metadata of Redis key `key`, if it exists.
    ///
    /// # Errors
    /// Engine errors or a corrupt value.
    pub fn meta(&self, key: &[u8]) -> Result<Option<Meta>, Reply> {
        match self.get(&meta_key(key))? {
            Some(v) => Meta::decode(&v).map(Some),
            None => Ok(None),
        }
    }

    /// Sets engine key `k`.
    pub fn put(&mut self, k: Vec<u8>, v: Vec<u8>) {
        self.writes.insert(k, Some(v));
    }

    /// Deletes engine key `k`.
    pub fn delete(&mut self, k: Vec<u8>) {
        self.writes.insert(k, None);
    }

    /// Writes `meta` for `key`; `existed` says whether the key existed before (for DBSIZE).
    pub fn put_meta(&mut self, key: &[u8], meta: &Meta, existed: bool) {
        if !existed {
            self.key_delta += 1;
        }
        self.put(meta_key(key), meta.encode());
    }

    /// Removes Redis key `key` whose metadata is `old`: its metadata and every member or
    /// chunk key.
    ///
    /// # Errors
    /// Engine errors from the member scan.
    pub fn remove_key(&mut self, key: &[u8], old: &Meta) -> Result<(), Reply> {
        self.remove_subkeys(key, old)?;
        self.delete(meta_key(key));
        self.key_delta -= 1;
        Ok(())
    }

    /// Removes every member or chunk key of `key` (whose metadata is `old`), keeping the
    /// metadata key.
    ///
    /// # Errors
    /// Engine errors from the scan.
    pub fn remove_subkeys(&mut self, key: &[u8], old: &Meta) -> Result<(), Reply> {
        if let Some(t) = old.sub_tag() {
            let prefix = sub_prefix(t, key);
            for (k, _) in self.scan_prefix(&prefix, None, usize::MAX)? {
                self.delete(k);
            }
        }
        Ok(())
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
        let start = match after {
            Some(a) if a >= prefix => Bound::Excluded(a.to_vec()),
            _ => Bound::Included(prefix.to_vec()),
        };
        let end = match prefix_end(prefix) {
            Some(e) => Bound::Excluded(e),
            None => Bound::Unbounded,
        };
        let mut engine = self.store.db.scan((start.clone(), end.clone())).peekable();
        let mut overlay = self.writes.range((start, end)).peekable();
        let mut out = Vec::new();
        while out.len() < limit {
            let take_overlay = match (engine.peek(), overlay.peek()) {
                (None, None) => break,
                (Some(Err(_)), _) => {
                    if let Some(Err(e)) = engine.next() {
                        return Err(e.into());
                    }
                    continue;
                }
                (None, Some(_)) => true,
                (Some(_), None) => false,
                (Some(Ok((ek, _))), Some((ok, _))) => {
                    if ek.as_slice() == ok.as_slice() {
                        engine.next();
                        true
                    } else {
                        ok.as_slice() < ek.as_slice()
                    }
                }
            };
            if take_overlay {
                if let Some((k, v)) = overlay.next()
                    && let Some(v) = v
                {
                    out.push((k.clone(), v.clone()));
                }
            } else if let Some(Ok(kv)) = engine.next() {
                out.push(kv);
            }
        }
        Ok(out)
    }

    /// Number of engine keys written or deleted so far.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    /// True when nothing is to be written.
    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Writes everything as one atomic batch.
    ///
    /// # Errors
    /// The engine's write error, as an `ERR` reply; nothing was applied then.
    pub fn commit(self) -> Result<(), Reply> {
        if self.writes.is_empty() {
            return Ok(());
        }
        let mut batch = WriteBatch::new();
        for (k, v) in self.writes {
            match v {
                Some(v) => batch.put(k, v),
                None => batch.delete(k),
            }
        }
        self.store.db.write(batch)?;
        self.store.keys.fetch_add(self.key_delta, Ordering::Relaxed);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_keys_of_a_prefix_key_do_not_interleave() {
        let a = sub_prefix(tag::MEMBER, b"a");
        let ab = member_key(b"ab", b"");
        assert!(!ab.starts_with(&a));
        assert_eq!(prefix_end(b"a\xff\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_end(b"\xff"), None);
    }

    #[test]
    fn cursor_memory_is_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let env = Arc::new(WalSyncEnv::new());
        let opts = bloomkv::Options {
            env: env.clone(),
            ..Default::default()
        };
        let store = Store::new(Db::open(dir.path(), opts).unwrap(), env).unwrap();
        let first = store.save_cursor(vec![b'k'; 60_000]);
        assert_eq!(store.cursor(first).map(|k| k.len()), Some(60_000));
        for _ in 0..400 {
            store.save_cursor(vec![b'k'; 60_000]);
        }
        assert_eq!(store.cursor(first), None, "oldest cursor forgotten");
        assert!(store.cursors.lock().bytes <= MAX_CURSOR_BYTES);
    }

    #[test]
    fn meta_round_trips() {
        for m in [
            Meta::Str(b"hello".to_vec()),
            Meta::Chunked { len: 12345 },
            Meta::Set { card: 7 },
        ] {
            assert_eq!(Meta::decode(&m.encode()).unwrap(), m);
        }
        assert!(Meta::decode(b"").is_err());
        assert!(Meta::decode(b"S\x01").is_err());
    }
}
