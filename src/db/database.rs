//! [`Db`], the handle to an open database: opening, writing, reading, scanning, flushing,
//! compacting and its figures. Snapshots, read cursors, batched gets and secondaries add their
//! own methods in the files named after them.

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use parking_lot::Mutex;

use super::core::DbInner;
use super::read::GetExplain;
use super::recovery_report::RecoveryReport;
use super::verify::VerifyReport;
use super::write_pressure::WritePressure;
use super::{background, open_handles, recover};
use super::handle::Handle;
use super::key_range::KeyRange;
use crate::db::batch::WriteBatch;
use crate::error::{Error, Result};
use crate::iter::db_iter::DbIter;
use crate::options::{MAX_KEY_BYTES, MAX_VALUE_BYTES, NUM_LEVELS, Options};
use crate::stats::{LevelStats, Stats, TableStats};

/// An open database. Cheap to clone: clones share one database; it closes when the last
/// handle (and the last [`Snapshot`](crate::Snapshot)) is dropped.
///
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
/// db.put(b"apple", b"red")?;
/// assert_eq!(db.get(b"apple")?, Some(b"red".to_vec()));
/// db.delete(b"apple")?;
/// assert_eq!(db.get(b"apple")?, None);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Db {
    pub(super) handle: Arc<Handle>,
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Db")
            .field("dir", &self.handle.inner.dir)
            .finish_non_exhaustive()
    }
}

pub(super) fn check_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "key of {} bytes exceeds the {MAX_KEY_BYTES}-byte limit",
            key.len()
        )));
    }
    Ok(())
}

impl Db {
    /// Opens (creating if missing, unless `create_if_missing` is off) the database in `path`,
    /// recovering whatever its WAL holds.
    ///
    /// # Errors
    /// [`Error::Locked`] if another process or handle has it open; [`Error::Corruption`] for
    /// damaged files (naming the file and offset); [`Error::UnsupportedVersion`] for a newer
    /// format; [`Error::InvalidArgument`] if `path` is a file; [`Error::Io`] otherwise.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::{Db, Error, Options};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let db = Db::open(dir.path(), Options::default())?;
    /// // The directory is locked while a handle is open.
    /// assert!(matches!(Db::open(dir.path(), Options::default()), Err(Error::Locked(_))));
    /// drop(db);
    /// let opts = Options { create_if_missing: false, ..Options::default() };
    /// let db = Db::open(dir.path(), opts)?;
    /// # drop(db);
    /// # Ok(())
    /// # }
    /// ```
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let opening = open_handles::busy(path.as_ref(), open_handles::Activity::Opening);
        let inner = match recover::open(path.as_ref(), options) {
            Ok(inner) => Arc::new(inner),
            Err(e) => {
                drop(opening);
                return Err(open_handles::explain(path.as_ref(), e));
            }
        };
        // The handle exists before the threads do, so that if starting one fails, dropping
        // it stops those already running.
        let handle = Arc::new(Handle {
            inner: Arc::clone(&inner),
            background: Mutex::new(Vec::new()),
            secondary: None,
        });
        for i in 0..=inner.opts.background_threads {
            let bg_inner = Arc::clone(&inner);
            let builder = std::thread::Builder::new();
            let spawned = if i == 0 {
                builder
                    .name("bloomkv-flush".into())
                    .spawn(move || background::run_flushes(bg_inner))
            } else {
                builder
                    .name(format!("bloomkv-compact-{i}"))
                    .spawn(move || background::run_compactions(bg_inner))
            };
            let thread = spawned.map_err(|e| Error::io(path.as_ref(), e))?;
            handle.background.lock().push(thread);
        }
        open_handles::register(path.as_ref(), &handle);
        Ok(Db { handle })
    }

    /// Opens the existing database in `path` for reading only, as it is at this moment:
    /// its tables, and its WALs' contents replayed into memory (never flushed). Later writes
    /// by others are not seen; reopen to see them.
    ///
    /// It writes nothing at all: no WAL, no MANIFEST, no LOCK file, no removal of leftover
    /// files, no flush or compaction. So it works on a read-only file system and on a full
    /// disk. Everything that reads works ([`Db::get`], [`Db::multi_get`], [`Db::scan`],
    /// [`Db::range`], [`Db::cursor`], snapshots, [`Db::stats`]); everything that would change
    /// the database ([`Db::put`], [`Db::delete`], [`Db::write`], [`Db::flush`],
    /// [`Db::compact`], [`Db::compact_range`], [`Db::sync_wal`], [`Db::resume`]) returns
    /// [`Error::ReadOnly`].
    ///
    /// Locking: any number of read-only handles, in any processes, may have a database open
    /// together; they share the `LOCK` file's advisory lock, and a writer ([`Db::open`])
    /// needs it exclusively, so the two exclude each other, and [`Error::Locked`] says which
    /// kind holds it and, where it can tell, their process ids. To read while a writer has
    /// the database open, use [`Db::open_secondary`], which takes no lock. A directory with no `LOCK` file (never opened for writing, or a copy)
    /// is opened without a lock, since creating one would be a write: a writer opening it
    /// later cannot see this reader, and may then delete tables the reader has not opened
    /// yet (the reader gets I/O errors, never wrong answers).
    ///
    /// `create_if_missing` is ignored; `error_if_exists` is an [`Error::InvalidArgument`].
    /// The replayed WALs are held in memory whole, whatever `memtable_bytes` says.
    ///
    /// # Errors
    /// [`Error::Locked`] if a writer has it open; [`Error::InvalidArgument`] if `path` holds
    /// no database; [`Error::Corruption`], [`Error::UnsupportedVersion`] and [`Error::Io`] as
    /// for [`Db::open`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::{Db, Error, Options};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let db = Db::open(dir.path(), Options::default())?;
    /// db.put("k", "v")?; // in the WAL only
    /// // A writer excludes read-only openers...
    /// assert!(matches!(Db::open_read_only(dir.path(), Options::default()), Err(Error::Locked(_))));
    /// drop(db);
    /// let a = Db::open_read_only(dir.path(), Options::default())?;
    /// let b = Db::open_read_only(dir.path(), Options::default())?; // ...readers share
    /// assert_eq!(a.get("k")?, Some(b"v".to_vec()));
    /// assert!(matches!(b.put("k", "w"), Err(Error::ReadOnly(_))));
    /// // ...and exclude writers.
    /// assert!(matches!(Db::open(dir.path(), Options::default()), Err(Error::Locked(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn open_read_only(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let opening = open_handles::busy(path.as_ref(), open_handles::Activity::Opening);
        let inner = match recover::open_read_only(path.as_ref(), options) {
            Ok(inner) => Arc::new(inner),
            Err(e) => {
                drop(opening);
                return Err(open_handles::explain(path.as_ref(), e));
            }
        };
        let handle = Arc::new(Handle {
            inner,
            background: Mutex::new(Vec::new()),
            secondary: None,
        });
        open_handles::register(path.as_ref(), &handle);
        Ok(Db { handle })
    }

    /// Whether this handle was opened with [`Db::open_read_only`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// drop(bloomkv::Db::open(dir.path(), bloomkv::Options::default())?);
    /// let db = bloomkv::Db::open_read_only(dir.path(), bloomkv::Options::default())?;
    /// assert!(db.is_read_only());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_read_only(&self) -> bool {
        self.inner().read_only
    }

    /// Whether `dir` holds a database: true when it has a `CURRENT` file naming the live
    /// manifest. It does not open, lock or verify anything.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::{Db, Options};
    ///
    /// let dir = tempfile::tempdir()?;
    /// assert!(!Db::exists(dir.path()));
    /// drop(Db::open(dir.path(), Options::default())?);
    /// assert!(Db::exists(dir.path()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn exists(dir: impl AsRef<Path>) -> bool {
        crate::util::filename::current_path(dir.as_ref()).is_file()
    }

    pub(super) fn inner(&self) -> &DbInner {
        &self.handle.inner
    }

    /// The database directory, as given to [`Db::open`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// assert_eq!(db.path(), dir.path());
    /// # Ok(())
    /// # }
    /// ```
    pub fn path(&self) -> &Path {
        &self.inner().dir
    }

    /// The options it was opened with.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use bloomkv::{Db, Options};
    ///
    /// let db = Db::open(dir.path(), Options { memtable_bytes: 1 << 20, ..Options::default() })?;
    /// assert_eq!(db.options().memtable_bytes, 1 << 20);
    /// # Ok(())
    /// # }
    /// ```
    pub fn options(&self) -> &Options {
        &self.inner().opts
    }

    /// What recovery found when this database was opened.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use bloomkv::{Db, Options};
    ///
    /// let db = Db::open(dir.path(), Options::default())?;
    /// db.put("k", "v")?; // in the WAL and the memtable only
    /// drop(db);
    /// let db = Db::open(dir.path(), Options::default())?;
    /// let report = db.recovery_report();
    /// assert_eq!(report.records, 1);
    /// assert!(report.dropped.is_empty());
    /// assert_eq!(db.get("k")?, Some(b"v".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.inner().recovery
    }

    /// Sets `key` to `value`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a key over 64 KiB or a value over 256 MiB;
    /// [`Error::WritesStopped`] after an earlier write or background failure; I/O errors.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("colour", "red")?;
    /// db.put("colour", "blue")?; // replaces
    /// assert_eq!(db.get("colour")?, Some(b"blue".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        let (key, value) = (key.as_ref(), value.as_ref());
        let mut b = WriteBatch::with_capacity(WriteBatch::op_bytes(key, Some(value)));
        b.put(key, value);
        if key.len() > MAX_KEY_BYTES || value.len() > MAX_VALUE_BYTES {
            // Refused, naming the limit; a put within them needs no check of the batch.
            return self.inner().write(b);
        }
        self.inner().write_valid(b)
    }

    /// Deletes `key` (a no-op if absent).
    ///
    /// # Errors
    /// As for [`Db::put`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "v")?;
    /// db.delete("k")?;
    /// db.delete("never-there")?; // not an error
    /// assert_eq!(db.get("k")?, None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        let key = key.as_ref();
        let mut b = WriteBatch::with_capacity(WriteBatch::op_bytes(key, None));
        b.delete(key);
        if key.len() > MAX_KEY_BYTES {
            return self.inner().write(b);
        }
        self.inner().write_valid(b)
    }

    /// Deletes every key `k` with `start <= k < end` (half-open, bytewise), like RocksDB's
    /// `DeleteRange`: one write, whatever the number of keys, stored as a range tombstone.
    ///
    /// Versions written before it are hidden from every read that does not use an older
    /// snapshot (`get`, `multi_get`, `key_may_exist`, iterators, cursors); a put into the
    /// range afterwards is visible as usual. Compaction drops the covered versions and, once
    /// nothing below can hold keys of the range and no snapshot needs it, the tombstone.
    ///
    /// `start == end` is an empty range: nothing is written.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `start > end` or a bound is longer than
    /// [`crate::MAX_KEY_BYTES`]; otherwise as for [`Db::put`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// for k in ["a", "b", "c", "d"] {
    ///     db.put(k, "v")?;
    /// }
    /// let before = db.snapshot();
    /// db.delete_range("b", "d")?; // deletes "b" and "c", not "d"
    /// assert_eq!(db.get("b")?, None);
    /// assert_eq!(db.get("d")?, Some(b"v".to_vec()));
    /// assert_eq!(before.get("c")?, Some(b"v".to_vec())); // the older snapshot still sees it
    /// db.put("c", "again")?;
    /// assert_eq!(db.get("c")?, Some(b"again".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete_range(&self, start: impl AsRef<[u8]>, end: impl AsRef<[u8]>) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range(start, end);
        self.write(b)
    }

    /// Applies every operation of `batch` atomically, also across a crash.
    ///
    /// # Errors
    /// As for [`Db::put`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// use bloomkv::WriteBatch;
    ///
    /// db.put("from", "100")?;
    /// let mut transfer = WriteBatch::new();
    /// transfer.delete("from");
    /// transfer.put("to", "100");
    /// db.write(transfer)?; // both or neither
    /// assert_eq!(db.get("from")?, None);
    /// assert_eq!(db.get("to")?, Some(b"100".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.inner().write(batch)
    }

    /// The current value of `key`.
    ///
    /// # Errors
    /// Corruption or I/O errors from the files consulted.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put(b"k", b"v")?;
    /// assert_eq!(db.get(b"k")?, Some(b"v".to_vec()));
    /// assert_eq!(db.get(b"other")?, None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        check_key(key)?;
        self.inner().get_at(key, self.inner().visible_seq(), None)
    }

    /// Looks `key` up like [`Db::get`] and reports every step: memtables, each table
    /// consulted, its filter's verdict, blocks read, cache hits, false positives.
    ///
    /// # Errors
    /// As for [`Db::get`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?; // now in a level-0 table
    /// let trace = db.get_explained("k")?;
    /// assert_eq!(trace.value, Some(b"v".to_vec()));
    /// assert!(trace.tables.iter().any(|probe| probe.found));
    /// # Ok(())
    /// # }
    /// ```
    pub fn get_explained(&self, key: impl AsRef<[u8]>) -> Result<GetExplain> {
        let key = key.as_ref();
        check_key(key)?;
        let mut trace = GetExplain::default();
        trace.value = self
            .inner()
            .get_at(key, self.inner().visible_seq(), Some(&mut trace))?;
        Ok(trace)
    }

    /// The live entries in `range`, in ascending key order, as of now. The iterator is
    /// double-ended: `.rev()` gives descending order (see [`Db::range`], [`Db::cursor`]).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// for k in ["a", "b", "c"] { db.put(k, "v")?; }
    /// let keys: Vec<Vec<u8>> = db.scan("b"..).map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, vec![b"b".to_vec(), b"c".to_vec()]);
    /// # Ok(())
    /// # }
    /// ```
    pub fn scan(&self, range: impl KeyRange) -> DbIter {
        let (start, end) = range.into_bounds();
        self.inner().scan_at(start, end, self.inner().visible_seq())
    }

    /// Writes the memtable to a level-0 table; returns when that table is durable.
    ///
    /// # Errors
    /// I/O errors, or [`Error::WritesStopped`] after an earlier failure.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// assert_eq!(db.stats().tables.len(), 1);
    /// assert_eq!(db.get("k")?, Some(b"v".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.inner().flush()
    }

    /// Runs a full manual compaction: flushes the memtable, then merges every level down into
    /// the deepest level that holds data, rewriting every table once, so that versions no
    /// snapshot reads and tombstones are gone afterwards. Returns when a compaction that
    /// started after this call has finished (concurrent callers each get one).
    ///
    /// # Errors
    /// I/O or corruption errors met while compacting.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("a", "1")?;
    /// db.put("b", "2")?;
    /// db.flush()?;
    /// db.delete("a")?;
    /// db.compact()?;
    /// // The deleted key and its tombstone are gone from the tables.
    /// let entries: u64 = db.stats().tables.iter().map(|t| t.entries).sum();
    /// assert_eq!(entries, 1);
    /// assert_eq!(db.get("a")?, None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn compact(&self) -> Result<()> {
        self.inner()
            .compact_range((Bound::Unbounded, Bound::Unbounded))
    }

    /// Compacts the tables holding keys of `range`, level by level, down to the deepest
    /// level holding any (as LevelDB's `CompactRange(begin, end)`): overwritten versions no
    /// snapshot reads and tombstones that hide nothing are dropped there. Tables outside the
    /// range are left alone, except those a compaction must take because they overlap it.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put(b"user:1", b"old")?;
    /// db.put(b"user:1", b"new")?;
    /// db.delete(b"user:2")?;
    /// db.compact_range(b"user:".as_slice()..b"user;".as_slice())?;
    /// assert_eq!(db.get(b"user:1")?, Some(b"new".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// As for [`Db::compact`].
    pub fn compact_range(&self, range: impl KeyRange) -> Result<()> {
        self.inner().compact_range(range.into_bounds())
    }

    /// Resumes writes after a failure stopped them (a full disk, an I/O error in a write,
    /// flush or compaction), once the cause is gone, without a reopen: a fresh WAL is
    /// started, and if a MANIFEST write failed, a fresh MANIFEST holding the whole current
    /// state is written and made current (as open does); then background work is retried.
    /// Does nothing if writes are not stopped.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.resume()?; // nothing to resume
    /// db.put(b"k", b"v")?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// The error that keeps the new WAL or MANIFEST from being written; writes then stay
    /// stopped.
    pub fn resume(&self) -> Result<()> {
        self.inner().resume()
    }

    /// Makes every write acknowledged so far durable (fsyncs the WAL), for a database
    /// opened without `sync_writes`: after it returns, a power cut loses none of them.
    ///
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put(b"k", b"v")?;
    /// db.sync_wal()?;
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// The sync's error (writes then stop, as after any failed WAL write), or
    /// [`Error::WritesStopped`] if they already had.
    pub fn sync_wal(&self) -> Result<()> {
        self.inner().sync_wal()
    }

    /// Whether writes are being held back now, and why: delayed or stopped by level 0 or by
    /// a memtable flush that is behind, or refused after a failure until [`Db::resume`]. Cheap
    /// (a few atomic loads, no lock), so it can be asked before every write: a server can
    /// run a write that [may wait](WritePressure::may_wait) on a thread of its own rather
    /// than one shared with other clients' reads, and answer writes with an error while it is
    /// [`WritePressure::Failed`] without trying them.
    ///
    /// It is a forecast, not a promise: the pressure can start or end right after the call.
    /// A read-only database reports [`WritePressure::None`] (its writes fail at once with
    /// [`Error::ReadOnly`]).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use bloomkv::{Db, Options, WritePressure};
    ///
    /// let db = Db::open(dir.path(), Options::default())?;
    /// assert_eq!(db.write_pressure(), WritePressure::None);
    /// if !db.write_pressure().may_wait() {
    ///     db.put("k", "v")?; // returns without waiting for background work
    /// }
    /// # Ok(())
    /// # }
    /// ```
    pub fn write_pressure(&self) -> WritePressure {
        self.inner().write_pressure()
    }

    /// Writes a checkpoint: a new directory `dir` holding an openable copy of the database as
    /// of one moment, while writes go on. Tables are hard links into this directory (copies
    /// where the file system or env cannot link), so a checkpoint costs little space until
    /// compactions replace the live tables; the memtables' contents go into a fresh WAL, and
    /// a fresh MANIFEST names exactly what the copy holds. Returns the checkpoint's sequence
    /// number: the copy holds every write numbered up to it (every write that returned before
    /// this call started, and none that started after it returned), and this database's WAL
    /// is durable up to it, so a caller may drop its own log of those writes.
    ///
    /// Open the checkpoint like any database ([`Db::open`], [`Db::open_read_only`]); it
    /// shares nothing with this one but immutable table files. A read-only handle can
    /// checkpoint too (it writes only into `dir`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `dir` already exists; I/O errors. A failed checkpoint
    /// leaves no directory behind (it is built under `dir`'s name plus `.checkpoint-tmp` and
    /// renamed into place once complete).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let tmp = tempfile::tempdir()?;
    /// use bloomkv::{Db, Options};
    ///
    /// let db = Db::open(tmp.path().join("live"), Options::default())?;
    /// db.put("k", "v1")?;
    /// let seq = db.checkpoint(tmp.path().join("copy"))?;
    /// db.put("k", "v2")?;
    ///
    /// let copy = Db::open(tmp.path().join("copy"), Options::default())?;
    /// assert_eq!(copy.get("k")?, Some(b"v1".to_vec()));
    /// assert!(seq >= 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<u64> {
        self.inner().checkpoint(dir.as_ref())
    }

    /// Reads every live table from its file (past the block cache) and checks all of it:
    /// footer, index, properties, every data block's checksum, decoding and key order (also
    /// across blocks), the entry count, the filter block, and that each file is the table the
    /// MANIFEST names (file number, size, key range). Reads and writes go on meanwhile. Like
    /// RocksDB's `VerifyChecksum`; a read checks only the blocks it touches.
    ///
    /// # Errors
    /// [`Error::Corruption`] naming the file and offset of the first damage found; I/O errors.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// let report = db.verify()?;
    /// assert_eq!((report.tables, report.entries), (1, 1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn verify(&self) -> Result<VerifyReport> {
        self.inner().verify()
    }

    /// Waits until no flush or compaction is pending, so the tree has a settled shape: with
    /// `Options::idle_compaction_delay` set (the default), that includes compacting the
    /// level-0 tables left over below `level0_compaction_trigger`, without waiting for the
    /// delay, so that afterwards a point lookup probes at most one table per level.
    ///
    /// # Errors
    /// The error of a failed background job.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use bloomkv::{Db, Options};
    ///
    /// let db = Db::open(dir.path(), Options { memtable_bytes: 64 << 10, ..Options::default() })?;
    /// for i in 0..3000u32 {
    ///     db.put(i.to_be_bytes(), [7u8; 100])?;
    /// }
    /// db.wait_for_compactions()?;
    /// assert_eq!(db.stats().levels[0].files, 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn wait_for_compactions(&self) -> Result<()> {
        self.inner().wait_idle()
    }

    /// Counters and per-level shape.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "v")?;
    /// db.get("k")?;
    /// let stats = db.stats();
    /// assert_eq!(stats.gets, 1);
    /// assert_eq!(stats.levels.len(), bloomkv::NUM_LEVELS);
    /// # Ok(())
    /// # }
    /// ```
    pub fn stats(&self) -> Stats {
        let inner = self.inner();
        let c = inner.counters.snapshot();
        let w = &inner.work;
        let version = Arc::clone(&inner.read_view().version);
        let mut levels = Stats::empty_levels();
        // The engine counts filter answers per level only (see `Table::get_in_range`): the
        // totals are the levels' sums.
        let (mut filter_checks, mut filter_useful, mut filter_false_positives) = (0, 0, 0);
        for (level, files) in version.levels().iter().enumerate().take(NUM_LEVELS) {
            let l: &mut LevelStats = &mut levels[level];
            l.files = files.len() as u64;
            l.bytes = files.iter().map(|f| f.meta.size).sum();
            l.entries = files.iter().map(|f| f.meta.entries).sum();
            l.filter_bytes = files.iter().map(|f| f.meta.filter_bytes).sum();
            let filtered: u64 = files
                .iter()
                .filter(|f| f.meta.filter_bytes > 0)
                .map(|f| f.meta.entries)
                .sum();
            if filtered > 0 {
                l.filter_bits_per_key = (l.filter_bytes * 8) as f64 / filtered as f64;
                l.expected_fpr = files
                    .iter()
                    .filter(|f| f.meta.filter_bytes > 0)
                    .map(|f| f.meta.expected_fpr * f.meta.entries as f64)
                    .sum::<f64>()
                    / filtered as f64;
            } else if !files.is_empty() {
                l.expected_fpr = 1.0;
            }
            let (checks, useful, fps) = inner.level_counter_values(level);
            l.filter_checks = checks;
            l.filter_useful = useful;
            l.filter_false_positives = fps;
            l.compactions = w.level_compactions[level].load(Ordering::Relaxed);
            l.compaction_bytes_read = w.level_compaction_bytes_read[level].load(Ordering::Relaxed);
            l.compaction_bytes_written =
                w.level_compaction_bytes_written[level].load(Ordering::Relaxed);
            filter_checks += checks;
            filter_useful += useful;
            filter_false_positives += fps;
        }
        Stats {
            filter_checks,
            filter_useful,
            filter_false_positives,
            filter_unavailable: c.filter_unavailable,
            data_blocks_read: c.data_blocks_read,
            block_cache_hits: c.block_cache_hits,
            bytes_read: c.bytes_read,
            gets: w.gets.load(Ordering::Relaxed),
            flushes: w.flushes.load(Ordering::Relaxed),
            compactions: w.compactions.load(Ordering::Relaxed),
            compaction_bytes_read: w.compaction_bytes_read.load(Ordering::Relaxed),
            compaction_bytes_written: w.compaction_bytes_written.load(Ordering::Relaxed),
            user_bytes_written: w.user_bytes_written.load(Ordering::Relaxed),
            wal_bytes_written: w.wal_bytes_written.load(Ordering::Relaxed),
            flush_bytes_written: w.flush_bytes_written.load(Ordering::Relaxed),
            refilter_bytes_written: w.refilter_bytes_written.load(Ordering::Relaxed),
            trivial_moves: w.trivial_moves.load(Ordering::Relaxed),
            trivial_move_bytes: w.trivial_move_bytes.load(Ordering::Relaxed),
            stall_micros: w.stall_micros.load(Ordering::Relaxed),
            write_delay_micros: w.delay_micros.load(Ordering::Relaxed),
            write_stop_micros: w.stop_micros.load(Ordering::Relaxed),
            longest_stall_micros: w.longest_stall_micros.load(Ordering::Relaxed),
            writes_delayed: w.writes_delayed.load(Ordering::Relaxed),
            writes_stopped: w.writes_stopped.load(Ordering::Relaxed),
            levels,
            tables: table_stats(&version),
        }
    }

    /// File numbers of every table the database currently uses, ascending (table `n` is the
    /// file [`sstable::table_file_name(n)`](crate::sstable::table_file_name) in its directory).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// assert!(db.live_files().is_empty());
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// assert_eq!(db.live_files().len(), 1);
    /// # Ok(())
    /// # }
    /// ```
    pub fn live_files(&self) -> Vec<u64> {
        let version = self.inner().current_version();
        let mut numbers: Vec<u64> = version.all_files().map(|f| f.meta.number).collect();
        numbers.sort_unstable();
        numbers
    }
}

/// Per-table figures: the manifest's record of each table plus, for tables whose reader is
/// open, that reader's filter counters.
fn table_stats(version: &crate::db::version::Version) -> Vec<TableStats> {
    let mut out = Vec::new();
    for (level, files) in version.levels().iter().enumerate() {
        for f in files {
            let open = f.open_reader_now();
            let (checks, fps) = open.as_ref().map_or((0, 0), |t| t.filter_stats());
            out.push(TableStats {
                level,
                file_number: f.meta.number,
                bytes: f.meta.size,
                smallest_key: f.smallest_user_key().to_vec(),
                largest_key: f.largest_user_key().to_vec(),
                entries: f.meta.entries,
                filter_bits_per_key: f.meta.filter_bits_per_key,
                filter_bytes: f.meta.filter_bytes,
                expected_fpr: f.meta.expected_fpr,
                open: open.is_some(),
                filter_checks: checks,
                filter_false_positives: fps,
            });
        }
    }
    out
}
