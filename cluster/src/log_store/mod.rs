//! The Raft log and vote in one bloomkv database.
//!
//! Every `append` call is one [`WriteBatch`] (one WAL record); the database is opened
//! without `sync_writes` so that the entries are readable as soon as the batch is written,
//! and a syncer thread then fsyncs the WAL and calls openraft's callback: the callback comes
//! only once the entries are on disk, and appends queued behind one fsync share it (never
//! more than one fsync per append). `save_vote` writes and fsyncs before it returns.
//! Truncation and purging are single batches with a range delete; `m/purged` is written in
//! the purge's batch. The first and last log ids live in memory, read once at open.
//! A log in an older layout is rewritten in the current one when it is opened ([`upgrade`]).

pub(crate) mod upgrade;

use std::fmt::Debug;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;

use bloomkv::{Db, Options, WriteBatch};
use openraft::storage::{LogFlushed, RaftLogStorage};
use openraft::{AnyError, LogState, OptionalSend, RaftLogReader, StorageIOError};
use parking_lot::Mutex;

use crate::codec;
use crate::error::{Error, Result};
use crate::keys::{self, LOG_FORMAT_VERSION, log as k};
use crate::types::{Entry, LogId, StorageError, TypeConfig, Vote};

/// The log store; clones share it (openraft's log readers are clones).
#[derive(Clone)]
pub(crate) struct LogStore {
    inner: Arc<Inner>,
}

struct Ids {
    purged: Option<LogId>,
    last: Option<LogId>,
}

struct Inner {
    db: Db,
    /// The last committed index openraft saved plus one (0: none), for the status.
    committed: Arc<AtomicU64>,
    ids: Mutex<Ids>,
    to_sync: Mutex<Option<mpsc::Sender<LogFlushed<TypeConfig>>>>,
    syncer: Mutex<Option<JoinHandle<()>>>,
}

/// Reads a [`LogStore::committed_handle`].
pub(crate) fn committed_index(handle: &AtomicU64) -> Option<u64> {
    handle.load(Ordering::Relaxed).checked_sub(1)
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Closing the channel ends the syncer after the fsync it may be doing.
        self.to_sync.lock().take();
        if let Some(t) = self.syncer.lock().take() {
            let _ = t.join();
        }
    }
}

fn io_err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

fn read_err(e: impl std::fmt::Display) -> StorageError {
    StorageIOError::read_logs(AnyError::error(e.to_string())).into()
}

fn write_err(e: impl std::fmt::Display) -> StorageError {
    StorageIOError::write_logs(AnyError::error(e.to_string())).into()
}

/// An fsync of the log this slow is reported (throttled).
const SLOW_SYNC: std::time::Duration = std::time::Duration::from_millis(200);

/// Fsyncs the WAL for every append queued since the last fsync, then tells openraft.
fn run_syncer(db: Db, rx: mpsc::Receiver<LogFlushed<TypeConfig>>) {
    let slow = crate::clock::Throttle::default();
    while let Ok(first) = rx.recv() {
        let mut waiting = vec![first];
        while let Ok(more) = rx.try_recv() {
            waiting.push(more);
        }
        let started = std::time::Instant::now();
        let res = db.sync_wal();
        let took = started.elapsed();
        if took >= SLOW_SYNC
            && let Some(held) = slow.allow(std::time::Duration::from_secs(10))
        {
            tracing::warn!(
                target: "bloomkv_cluster::log",
                "an fsync of the Raft log took {} ms ({} appends waited on it; {held} more slow \
                 fsyncs since the last report): followers answer the leader only after it",
                took.as_millis(),
                waiting.len()
            );
        }
        for cb in waiting {
            cb.log_io_completed(res.as_ref().map(|_| ()).map_err(io_err));
        }
    }
}

fn decode_at<T: serde::de::DeserializeOwned>(db: &Db, key: &[u8], what: &str) -> Result<Option<T>> {
    match db.get(key) {
        Ok(None) => Ok(None),
        Ok(Some(v)) => codec::decode(&v).map(Some).map_err(|e| {
            Error::Storage(format!(
                "log database {}: {what} is damaged: {e}",
                db.path().display()
            ))
        }),
        Err(e) => Err(Error::db(format!("reading the {what}"), e)),
    }
}

impl LogStore {
    /// Opens (creating) the log database in `dir`.
    pub(crate) fn open(dir: &Path, options: Options) -> Result<LogStore> {
        // No compaction filter: the caller's options are the state machine's, whose GC
        // is written for the server's key space, where `l` is the list-element tag (the
        // log's 9-byte entry keys are too short to parse as sub-keys today, so it keeps
        // them, but nothing should depend on that).
        let options = Options {
            sync_writes: false,
            compaction_filter: None,
            ..options
        };
        let db = Db::open(dir, options)
            .map_err(|e| Error::db(format!("opening the log database {}", dir.display()), e))?;
        match decode_at::<u32>(&db, k::FORMAT, "format version")? {
            None => {
                let v = codec::encode(&LOG_FORMAT_VERSION).map_err(Error::Storage)?;
                db.put(k::FORMAT, v)
                    .map_err(|e| Error::db("writing the log format version", e))?;
            }
            Some(LOG_FORMAT_VERSION) => {}
            Some(1) => {
                let n = upgrade::from_v1(&db)?;
                tracing::info!(
                    target: "bloomkv_cluster::events",
                    "log {} upgraded from format 1 to {LOG_FORMAT_VERSION} ({n} entries rewritten)",
                    dir.display()
                );
            }
            Some(v) => {
                return Err(Error::Storage(format!(
                    "log database {} has format version {v}; this build reads 1 and \
                     {LOG_FORMAT_VERSION}",
                    dir.display()
                )));
            }
        }
        let purged = decode_at::<LogId>(&db, k::PURGED, "last purged log id")?;
        let committed = decode_at::<Option<LogId>>(&db, k::COMMITTED, "committed log id")?
            .flatten()
            .map_or(0, |c| c.index.saturating_add(1));
        let last = match db
            .scan((
                Bound::Included(k::entry(0).to_vec()),
                Bound::Excluded(k::ENTRY_END.to_vec()),
            ))
            .next_back()
        {
            None => purged,
            Some(Err(e)) => return Err(Error::db("reading the last log entry", e)),
            Some(Ok((key, v))) => {
                let e: Entry = codec::decode(&v).map_err(|e| {
                    Error::Storage(format!(
                        "log database {}: entry {:?} is damaged: {e}",
                        dir.display(),
                        keys::log::index_of(&key)
                    ))
                })?;
                Some(e.log_id).max(purged)
            }
        };
        let (tx, rx) = mpsc::channel();
        let sync_db = db.clone();
        let syncer = std::thread::Builder::new()
            .name("bloomkv-raft-log-sync".into())
            .spawn(move || run_syncer(sync_db, rx))
            .map_err(|e| Error::Storage(format!("starting the log syncer thread: {e}")))?;
        Ok(LogStore {
            inner: Arc::new(Inner {
                db,
                committed: Arc::new(AtomicU64::new(committed)),
                ids: Mutex::new(Ids { purged, last }),
                to_sync: Mutex::new(Some(tx)),
                syncer: Mutex::new(Some(syncer)),
            }),
        })
    }

    /// The last committed index this node knows (openraft's `save_committed`), shared:
    /// plus one, 0 while none is known (see [`committed_index`]).
    pub(crate) fn committed_handle(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.inner.committed)
    }

    /// The log database (tests look at its keys).
    #[cfg(test)]
    pub(crate) fn db(&self) -> &Db {
        &self.inner.db
    }

    /// The last purged log id (everything up to it is gone from this log).
    pub(crate) fn purged(&self) -> Option<LogId> {
        self.inner.ids.lock().purged
    }

    /// The id of the last entry this log holds (or last held, if all are purged): what a
    /// vote compares.
    pub(crate) fn last_log_id(&self) -> Option<LogId> {
        let ids = self.inner.ids.lock();
        ids.last.or(ids.purged)
    }

    fn entries(&self, start: u64, end: Option<u64>) -> Result<Vec<Entry>, String> {
        let lo = k::entry(start).to_vec();
        let hi = match end {
            Some(e) => k::entry(e).to_vec(),
            None => k::ENTRY_END.to_vec(),
        };
        if lo >= hi {
            return Ok(Vec::new());
        }
        let mut out = Vec::new();
        for kv in self
            .inner
            .db
            .scan((Bound::Included(lo), Bound::Excluded(hi)))
        {
            let (key, v) = kv.map_err(|e| e.to_string())?;
            let e: Entry = codec::decode(&v).map_err(|e| {
                format!("log entry {:?} is damaged: {e}", keys::log::index_of(&key))
            })?;
            out.push(e);
        }
        Ok(out)
    }

    /// Runs a blocking database call off the async runtime's workers.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Db) -> bloomkv::Result<T> + Send + 'static,
    ) -> bloomkv::Result<T> {
        let db = self.inner.db.clone();
        match tokio::task::spawn_blocking(move || f(&db)).await {
            Ok(r) => r,
            Err(e) => Err(bloomkv::Error::Io {
                path: None,
                source: io::Error::other(format!("log task failed: {e}")),
            }),
        }
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        let start = match range.start_bound() {
            Bound::Included(&i) => i,
            Bound::Excluded(&i) => match i.checked_add(1) {
                Some(s) => s,
                None => return Ok(Vec::new()),
            },
            Bound::Unbounded => 0,
        };
        let end = match range.end_bound() {
            Bound::Included(&i) => i.checked_add(1),
            Bound::Excluded(&i) => Some(i),
            Bound::Unbounded => None,
        };
        self.entries(start, end).map_err(read_err)
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let ids = self.inner.ids.lock();
        Ok(LogState {
            last_purged_log_id: ids.purged,
            last_log_id: ids.last.max(ids.purged),
        })
    }

    async fn get_log_reader(&mut self) -> Self::LogReader {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote) -> Result<(), StorageError> {
        let v = codec::encode(vote).map_err(|e| StorageIOError::write_vote(AnyError::error(e)))?;
        // Durable before returning: a node must never vote twice in a term.
        self.blocking(move |db| {
            db.put(k::VOTE, v)?;
            db.sync_wal()
        })
        .await
        .map_err(|e| StorageIOError::write_vote(AnyError::new(&e)).into())
    }

    async fn read_vote(&mut self) -> Result<Option<Vote>, StorageError> {
        decode_at(&self.inner.db, k::VOTE, "vote")
            .map_err(|e| StorageIOError::read_vote(AnyError::error(e.to_string())).into())
    }

    async fn save_committed(&mut self, committed: Option<LogId>) -> Result<(), StorageError> {
        // Not synced: it only lets a restart re-apply sooner, and the next append's fsync
        // covers it.
        let v = codec::encode(&committed).map_err(write_err)?;
        self.inner.db.put(k::COMMITTED, v).map_err(write_err)?;
        if let Some(c) = committed {
            self.inner
                .committed
                .fetch_max(c.index.saturating_add(1), Ordering::Relaxed);
        }
        Ok(())
    }

    async fn read_committed(&mut self) -> Result<Option<LogId>, StorageError> {
        Ok(
            decode_at::<Option<LogId>>(&self.inner.db, k::COMMITTED, "committed log id")
                .map_err(read_err)?
                .flatten(),
        )
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut batch = WriteBatch::new();
        let mut last = None;
        for e in entries {
            let v = codec::encode(&e).map_err(write_err)?;
            batch.put(k::entry(e.log_id.index), v);
            last = Some(e.log_id);
        }
        if !batch.is_empty() {
            self.inner.db.write(batch).map_err(write_err)?;
        }
        if last.is_some() {
            let mut ids = self.inner.ids.lock();
            ids.last = last;
        }
        let to_sync = self.inner.to_sync.lock();
        match to_sync.as_ref() {
            Some(tx) => tx
                .send(callback)
                .map_err(|_| write_err("the log syncer thread has stopped")),
            None => Err(write_err("the log store is closed")),
        }
    }

    async fn truncate(&mut self, log_id: LogId) -> Result<(), StorageError> {
        // No fsync needed: the next append's fsync covers this record (one WAL, in order),
        // and entries that come back after a crash are the valid log they were before.
        let mut batch = WriteBatch::new();
        batch.delete_range(k::entry(log_id.index), k::ENTRY_END);
        self.inner.db.write(batch).map_err(write_err)?;
        let prev = match log_id.index.checked_sub(1) {
            Some(i) => self
                .entries(i, Some(log_id.index))
                .map_err(read_err)?
                .pop()
                .map(|e| e.log_id),
            None => None,
        };
        let mut ids = self.inner.ids.lock();
        ids.last = prev.max(ids.purged);
        Ok(())
    }

    async fn purge(&mut self, log_id: LogId) -> Result<(), StorageError> {
        // `m/purged` goes in the same batch as the range delete, so the two agree after any
        // crash. Purged entries that come back after a crash are harmless copies.
        let mut batch = WriteBatch::new();
        batch.put(k::PURGED, codec::encode(&log_id).map_err(write_err)?);
        match log_id.index.checked_add(1) {
            Some(end) => batch.delete_range(k::entry(0), k::entry(end)),
            None => batch.delete_range(k::entry(0), k::ENTRY_END),
        }
        self.inner.db.write(batch).map_err(write_err)?;
        let mut ids = self.inner.ids.lock();
        ids.purged = Some(log_id).max(ids.purged);
        if ids.last < ids.purged {
            ids.last = ids.purged;
        }
        Ok(())
    }
}
