//! Secondary instances: read-only handles that work while a writer, in this process or
//! another, has the database open, and follow it on request (RocksDB's secondary instances
//! are the model). The reading itself is in `secondary_tail.rs`, the tables kept open in
//! `secondary_files.rs`.

use std::path::Path;
use std::sync::Arc;

use parking_lot::Mutex;

use super::recover::{self, Parts};
use super::secondary_files::HeldFiles;
use super::secondary_tail::Tail;
use super::handle::Handle;
use super::recovery_report::RecoveryReport;
use super::database::Db;
use crate::env::Env;
use crate::error::{Error, Result};
use crate::util::filename;
use crate::options::Options;
use crate::db::wal::LogWriter;

impl Db {
    /// Opens the database in `path` as a **secondary**: a read-only handle that works while a
    /// writer has the database open, in another process or this one, and takes no lock, so it
    /// never keeps a writer out. It reads the state the MANIFEST, the tables and the WALs
    /// hold at this moment (the newest WAL's records as far as they are complete: a record
    /// the writer is appending is left for later); [`Db::try_catch_up`] moves it to the
    /// writer's latest state. Between catch-ups it reads one fixed state: every answer is
    /// one the database gave at that moment, and a batch is seen whole or not at all.
    ///
    /// Everything that reads works as on [`Db::open_read_only`] (gets, scans, cursors,
    /// snapshots, [`Db::stats`], [`Db::verify`], [`Db::checkpoint`]); everything that would
    /// change the database returns [`Error::ReadOnly`]. It also works with no writer at all.
    ///
    /// **Tables the writer deletes.** The writer's compactions delete tables without knowing
    /// of secondaries. A secondary opens every table of the state it reads when it reads it
    /// (at open and at each catch-up) and keeps that descriptor until no reader of that state
    /// is left: on Unix a deleted file stays readable through an open descriptor, so a
    /// secondary never sees a table vanish under a get, scan, cursor or snapshot. A table (or
    /// WAL) deleted before the secondary could open it means the writer has made a newer
    /// state durable: the secondary reads that one instead (a bounded number of times).
    ///
    /// **What it can lag.** Nothing moves by itself: the secondary reads the state of its
    /// last open or catch-up until the next [`Db::try_catch_up`]. A catch-up sees every
    /// write whose WAL record is complete in the file, which for the writer's `Db::put`
    /// and `Db::write` is every write that has returned (records reach the OS before the
    /// call returns, whether or not `sync_writes` is on). It can see a write the writer
    /// reports failed with [`Error::OutcomeUnknown`], whose record reached the file before
    /// its sync failed (as a reopen of the writer may).
    ///
    /// **Costs.** One file descriptor per table of the state it reads (the soft open-file
    /// limit is raised to make room, and open or catch-up fails with
    /// [`Error::InvalidArgument`] if it cannot be), plus those of older states readers still
    /// use; table readers (index and filter) are opened lazily as for any handle, within
    /// `max_open_files`. The WALs the MANIFEST still needs are held in memory, in one
    /// memtable, whatever `memtable_bytes` says (about the writer's own memtables' size). A
    /// catch-up reads only what is new: the MANIFEST's new edits and the WALs' new records;
    /// when the writer has flushed or reopened since, the WALs it still needs are read again
    /// from their start.
    ///
    /// `create_if_missing` is ignored; `error_if_exists` is an [`Error::InvalidArgument`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `path` holds no database; [`Error::Corruption`] and
    /// [`Error::UnsupportedVersion`] for damaged or newer files; [`Error::Io`] otherwise,
    /// including one of kind `NotFound` when the writer kept deleting what the secondary was
    /// about to open (retry).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// use bloomkv::{Db, Options};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let writer = Db::open(dir.path(), Options::default())?;
    /// writer.put("k", "v1")?;
    ///
    /// // Works while the writer has the database open (in any process).
    /// let reader = Db::open_secondary(dir.path(), Options::default())?;
    /// assert_eq!(reader.get("k")?, Some(b"v1".to_vec()));
    ///
    /// writer.put("k", "v2")?;
    /// writer.compact()?; // deletes the tables the secondary read
    /// assert_eq!(reader.get("k")?, Some(b"v1".to_vec())); // its state, until it catches up
    /// reader.try_catch_up()?;
    /// assert_eq!(reader.get("k")?, Some(b"v2".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn open_secondary(path: impl AsRef<Path>, options: Options) -> Result<Db> {
        let dir = path.as_ref();
        options.validate()?;
        if options.error_if_exists {
            return Err(Error::InvalidArgument(
                "Options::error_if_exists cannot hold for a secondary, which needs an existing \
                 database"
                    .into(),
            ));
        }
        recover::check_open_file_limit(options.max_open_files)?;
        let env = Arc::clone(&options.env);
        if !env.is_dir(dir) {
            return Err(Error::InvalidArgument(format!(
                "database {} does not exist (a secondary creates nothing)",
                dir.display()
            )));
        }
        if !env.exists(&filename::current_path(dir)) {
            return Err(Error::InvalidArgument(format!(
                "{} holds no database (no CURRENT file)",
                dir.display()
            )));
        }
        let files = Arc::new(HeldFiles::new(Arc::clone(&env), options.mmap_reads));
        let held: Arc<dyn Env> = Arc::clone(&files) as Arc<dyn Env>;
        let (counters, table_cache) = recover::table_cache(&held, dir, &options);
        let mut tail = Tail::new(dir, &options, files, Arc::clone(&table_cache));
        let plan = tail.plan()?;
        let (logs_replayed, records) = plan.counts();
        let report = RecoveryReport {
            logs_replayed,
            records,
            dropped: plan.dropped.clone(),
            ..RecoveryReport::default()
        };
        let (durable, mem, seq) = tail.open_with(plan);
        let inner = recover::assemble(Parts {
            dir,
            opts: options,
            env: held,
            lock: None,
            table_cache,
            counters,
            durable,
            mem,
            log: LogWriter::closed(),
            log_number: 0,
            manifest: None,
            report,
            view_seq: Some(seq),
        });
        Ok(Db {
            handle: Arc::new(Handle {
                inner: Arc::new(inner),
                background: parking_lot::Mutex::new(Vec::new()),
                secondary: Some(Mutex::new(tail)),
            }),
        })
    }

    /// Moves a secondary ([`Db::open_secondary`]) to the writer's latest state: the
    /// MANIFEST's new edits (flushes and compactions), the tables they name, and the WALs'
    /// new records. Reads that started before keep the state they started with (an
    /// iterator, cursor or [`Snapshot`](crate::Snapshot) reads on from it); reads that start
    /// after see the new one. Calls from several threads are serialised.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] on a handle that is not a secondary; as for
    /// [`Db::open_secondary`] otherwise. After an error the handle keeps reading the state
    /// it had, and a later call may succeed.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// use bloomkv::{Db, Options};
    ///
    /// let writer = Db::open(dir.path(), Options::default())?;
    /// let reader = Db::open_secondary(dir.path(), Options::default())?;
    /// writer.put("k", "v")?;
    /// assert_eq!(reader.get("k")?, None);
    /// reader.try_catch_up()?;
    /// assert_eq!(reader.get("k")?, Some(b"v".to_vec()));
    /// assert!(writer.try_catch_up().is_err()); // only a secondary catches up
    /// # Ok(())
    /// # }
    /// ```
    pub fn try_catch_up(&self) -> Result<()> {
        let Some(tail) = &self.handle.secondary else {
            return Err(Error::InvalidArgument(format!(
                "try_catch_up: {} was not opened with Db::open_secondary",
                self.path().display()
            )));
        };
        let mut tail = tail.lock();
        let plan = tail.plan()?;
        tail.install(self.inner(), plan);
        Ok(())
    }

    /// Whether this handle was opened with [`Db::open_secondary`] (such a handle is also
    /// [`Db::is_read_only`]).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> bloomkv::Result<()> {
    /// # let dir = tempfile::tempdir()?;
    /// let writer = bloomkv::Db::open(dir.path(), bloomkv::Options::default())?;
    /// let reader = bloomkv::Db::open_secondary(dir.path(), bloomkv::Options::default())?;
    /// assert!(reader.is_secondary() && reader.is_read_only());
    /// assert!(!writer.is_secondary());
    /// # Ok(())
    /// # }
    /// ```
    pub fn is_secondary(&self) -> bool {
        self.handle.secondary.is_some()
    }

    /// Table files a secondary holds open right now (0 for other handles).
    #[cfg(test)]
    pub(crate) fn secondary_held_files(&self) -> usize {
        self.handle
            .secondary
            .as_ref()
            .map_or(0, |t| t.lock().held_files())
    }
}
