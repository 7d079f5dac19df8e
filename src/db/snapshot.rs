//! [`Snapshot`]: a read-only view of a database at one moment, and [`Db::snapshot`], which
//! takes one (of a secondary, a frozen copy of its current view).

use std::sync::Arc;

use super::database::{Db, check_key};
use super::handle::Handle;
use super::recover::{self, Durable, Parts};
use crate::db::wal::LogWriter;
use super::key_range::KeyRange;
use crate::error::Result;
use crate::iter::db_iter::DbIter;
use crate::util::key::SeqNo;

/// A consistent, read-only view of a database at one moment.
///
/// A snapshot keeps its database open until it is dropped, also after every [`Db`] handle
/// of it is gone: the tables it reads stay alive, and so does the lock. Opening the
/// directory again meanwhile fails with [`Error::Locked`](crate::Error::Locked), whose
/// message says that this process holds it through a snapshot. A snapshot of a secondary
/// ([`Db::open_secondary`]) reads the state the secondary had when it was taken, whatever
/// catch-ups come after.
///
/// # Examples
/// ```
/// # fn main() -> bloomkv::Result<()> {
/// use bloomkv::{Db, Error, Options};
///
/// let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), Options::default())?;
/// db.put("k", "v")?;
/// let snap = db.snapshot();
/// drop(db);
/// assert_eq!(snap.get("k")?, Some(b"v".to_vec())); // still open...
/// let err = Db::open(dir.path(), Options::default()).unwrap_err();
/// assert!(matches!(err, Error::Locked(_)) && err.to_string().contains("Snapshot"));
/// drop(snap); // ...until the snapshot goes
/// let db = Db::open(dir.path(), Options::default())?;
/// # Ok(())
/// # }
/// ```
pub struct Snapshot {
    pub(super) db: Db,
    pub(super) seq: SeqNo,
}

impl std::fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot").field("seq", &self.seq).finish()
    }
}

impl Snapshot {
    /// The value `key` had when the snapshot was taken.
    ///
    /// # Errors
    /// As for [`Db::get`].
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "old")?;
    /// let snap = db.snapshot();
    /// db.delete("k")?;
    /// assert_eq!(snap.get("k")?, Some(b"old".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let key = key.as_ref();
        check_key(key)?;
        self.db.inner().get_at(key, self.seq, None)
    }

    /// The entries in `range` as they were when the snapshot was taken.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("a", "1")?;
    /// let snap = db.snapshot();
    /// db.put("b", "2")?;
    /// assert_eq!(snap.scan(..).count(), 1);
    /// assert_eq!(db.scan(..).count(), 2);
    /// # Ok(())
    /// # }
    /// ```
    pub fn scan(&self, range: impl KeyRange) -> DbIter {
        let (start, end) = range.into_bounds();
        self.db.inner().scan_at(start, end, self.seq)
    }

    /// The sequence number the snapshot reads at.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// let before = db.snapshot();
    /// db.put("k", "v")?;
    /// assert!(db.snapshot().sequence() > before.sequence());
    /// # Ok(())
    /// # }
    /// ```
    pub fn sequence(&self) -> SeqNo {
        self.seq
    }
}

impl Drop for Snapshot {
    fn drop(&mut self) {
        let mut snaps = self.db.inner().snapshots.lock();
        if let Some(n) = snaps.get_mut(&self.seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.seq);
            }
        }
    }
}

impl Db {
    /// A consistent view of the database as of now; later writes are invisible to it.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// db.put("k", "old")?;
    /// let snap = db.snapshot();
    /// db.put("k", "new")?;
    /// assert_eq!(snap.get("k")?, Some(b"old".to_vec()));
    /// assert_eq!(db.get("k")?, Some(b"new".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn snapshot(&self) -> Snapshot {
        if self.is_secondary() {
            return frozen_snapshot(self);
        }
        let seq = {
            // Register under the lock so a compaction never misses a snapshot being taken.
            let mut snaps = self.inner().snapshots.lock();
            let seq = self.inner().visible_seq();
            *snaps.entry(seq).or_insert(0) += 1;
            seq
        };
        Snapshot {
            db: self.clone(),
            seq,
        }
    }
}

/// A snapshot of a secondary: a handle of its own that reads the secondary's current view
/// forever, so that catching up (which installs a version the writer may have compacted
/// the snapshot's versions out of) never changes what it reads.
fn frozen_snapshot(db: &Db) -> Snapshot {
    let inner = db.inner();
    // The writer lock is what `install` holds while it changes the view.
    let _w = inner.writer.lock();
    let view = inner.read_view();
    let seq = view.read_seq(inner.visible_seq());
    let next_file_number = inner.state.lock().next_file_number;
    let frozen = recover::assemble(Parts {
        dir: &inner.dir,
        opts: inner.opts.clone(),
        env: Arc::clone(&inner.env),
        lock: None,
        table_cache: Arc::clone(&inner.table_cache),
        counters: Arc::clone(&inner.counters),
        durable: Durable {
            version: (*view.version).clone(),
            next_file_number,
            last_seq: seq,
            ..Durable::default()
        },
        mem: Arc::clone(&view.mem),
        log: LogWriter::closed(),
        log_number: 0,
        manifest: None,
        report: inner.recovery.clone(),
        view_seq: Some(seq),
    });
    let frozen = Db {
        handle: Arc::new(Handle {
            inner: Arc::new(frozen),
            background: parking_lot::Mutex::new(Vec::new()),
            secondary: None,
        }),
    };
    frozen.inner().snapshots.lock().insert(seq, 1);
    Snapshot { db: frozen, seq }
}
