//! The shared state behind every `Db` handle, and the locks that guard it.
//!
//! Locks, always taken in this order when nested: `writer` (held by the leader of a commit
//! group, see [`super::write_queue`]; owns the WAL and the active memtable), then `state`
//! (background-work bookkeeping); `wal_tip` (what `sync_wal` needs) is a leaf. `view` (what
//! readers see) is no lock: an `ArcSwap` that readers load without locking, replaced only
//! under `state`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use arc_swap::ArcSwap;
use parking_lot::{Condvar, Mutex};

use crate::env::{Env, FileLock};
use crate::util::key::SeqNo;
use crate::db::manifest::ManifestWriter;
use crate::db::memtable::MemTable;
use crate::stats::metrics::{LevelCounters, ReadCounters, WorkCounters};
use crate::options::{NUM_LEVELS, Options};
use crate::db::table_cache::TableCache;
use crate::db::version::Version;
use crate::db::wal::LogWriter;

/// What a reader needs: the memtables and the table set at one moment.
#[derive(Debug, Clone)]
pub(crate) struct ReadView {
    pub mem: Arc<MemTable>,
    pub imm: Option<Arc<MemTable>>,
    pub version: Arc<Version>,
    /// A secondary's view (see `secondary.rs`) holds exactly the writes up to this number
    /// and is read at it, whatever sequence number the caller loaded: catching up replaces
    /// the view and the published number in two steps, and a sequence number older than the
    /// view it meets could miss versions the writer's compactions dropped since. `None` for
    /// a database that writes: its readers pass the published number, which never runs
    /// ahead of the view.
    pub seq: Option<SeqNo>,
}

impl ReadView {
    /// The sequence number a read that asked for `asked` reads this view at.
    pub fn read_seq(&self, asked: SeqNo) -> SeqNo {
        self.seq.unwrap_or(asked)
    }
}

/// The writer's exclusive state.
pub(crate) struct Writer {
    pub log: LogWriter,
    pub log_number: u64,
    pub mem: Arc<MemTable>,
    /// Paces writes while they are delayed (see [`super::write_delay`]).
    pub pacing: crate::util::rate::TokenBucket,
    /// Syncs the WAL in the background as it grows (see [`super::wal_sync`]).
    pub wal_sync: super::wal_sync::WalSyncer,
}

/// What `sync_wal` needs to make the acknowledged writes durable without the writer lock:
/// which WAL, and a handle that fsyncs it while writers keep appending and knows how much of
/// it the writes acknowledged so far fill (each commit group's leader records that in the
/// log). Replaced at every WAL switch.
#[derive(Debug)]
pub(crate) struct WalTip {
    pub log_number: u64,
    /// `None` when the env cannot sync a file from another thread: `sync_wal` then syncs
    /// under the writer lock.
    pub sync: Option<crate::db::wal::LogSyncHandle>,
    /// The WAL's directory entry is durable: `sync_wal` need not sync the directory again
    /// until the next WAL.
    pub entry_synced: bool,
}

/// Bookkeeping shared between writers, the background threads and `flush()`.
pub(crate) struct State {
    /// The memtable being flushed, and the number of the WAL that became current when it was
    /// frozen (every older WAL is obsolete once it is flushed).
    pub imm: Option<(Arc<MemTable>, u64)>,
    pub next_file_number: u64,
    /// The oldest WAL still needed, as recorded in the manifest.
    pub log_number: u64,
    pub bg_error: Option<String>,
    /// Failures reported by [`DbInner::set_bg_error`] so far, the ones after the first
    /// included: `resume` clears the error only if none came while it ran.
    pub bg_failures: u64,
    pub shutting_down: bool,
    /// Full manual compactions asked for by `compact()` so far (a caller waits until
    /// `manual_completed` reaches the count its own request made).
    pub manual_requested: u64,
    /// The request count the last finished manual compaction started with.
    pub manual_completed: u64,
    /// The smallest key range holding every manual request not yet started.
    pub manual_range: Option<crate::db::compaction::pick::UserRange>,
    /// The flush thread is writing the frozen memtable.
    pub flushing: bool,
    /// Compactions (and re-filters) running now. While a job runs the table set may be about
    /// to change and obsolete files may still be awaiting deletion.
    pub compactions_running: usize,
    /// A manual compaction runs (alone: no other compaction starts meanwhile).
    pub manual_running: bool,
    /// What the running compactions and re-filters hold.
    pub busy: crate::db::compaction::pick::Busy,
    /// Completed background jobs, so waiters can tell theirs has run.
    pub jobs_done: u64,
    /// Per level, the largest key of the last compaction's inputs: the next compaction of
    /// that level starts after it, so every part of the level gets its turn.
    pub compact_pointers: [Option<Vec<u8>>; NUM_LEVELS],
    /// Tables a re-filter could not bring to their level's figure (the rewritten table came
    /// out with other bits): never picked again, so re-filtering cannot loop.
    pub refilter_given_up: Vec<u64>,
    /// Outputs of flushes and compactions whose MANIFEST append failed: the record may be in
    /// the old MANIFEST, so they stay on disk until [`DbInner::resume`] has made a new
    /// MANIFEST, which does not name them, current (a reopen instead keeps them if the
    /// record is there, and removes them as orphans if not).
    pub unsettled_tables: Vec<u64>,
    /// How long no write has arrived (see [`super::idle`]).
    pub idle: super::idle::IdleWatch,
    /// Callers of `wait_for_compactions` waiting now: while there are any, level-0 tables
    /// left over are compacted without waiting for `Options::idle_compaction_delay`.
    pub settling: usize,
}

impl State {
    pub fn new_file_number(&mut self) -> u64 {
        let n = self.next_file_number;
        self.next_file_number += 1;
        n
    }
}

/// Everything one open database shares between its handles and its background threads.
pub(crate) struct DbInner {
    pub dir: PathBuf,
    pub opts: Options,
    pub env: Arc<dyn Env>,
    /// Opened by `Db::open_read_only`: nothing is ever written, no background thread runs,
    /// and every call that would change the database fails with `Error::ReadOnly`.
    pub read_only: bool,
    pub table_cache: Arc<TableCache>,
    pub counters: Arc<ReadCounters>,
    pub level_counters: [LevelCounters; NUM_LEVELS],
    pub work: WorkCounters,
    /// The newest sequence number whose write is complete and visible.
    pub last_seq: AtomicU64,
    /// Writers line up here; the leader of each group takes `writer`.
    pub write_queue: super::write_queue::WriteQueue,
    pub writer: Mutex<Writer>,
    pub wal_tip: Mutex<WalTip>,
    pub state: Mutex<State>,
    /// `state.bg_error.is_some()`, readable without the lock (for `write_pressure`).
    pub writes_stopped: AtomicBool,
    /// Wakes the background threads (always with `notify_all`: flush and compaction threads
    /// wait on it for different things).
    pub work_cv: Condvar,
    /// Wakes writers and `flush()`/`compact()` callers waiting on background work.
    pub done_cv: Condvar,
    /// Replaced whole, never changed in place: a reader's `load` takes no lock and (in
    /// arc-swap's fast path) no reference count. Every replacement happens under `state`
    /// ([`DbInner::update_view`]), so two can never race and lose each other's change.
    pub view: ArcSwap<ReadView>,
    /// Held for the whole of [`DbInner::log_and_apply`], so that edits from the flush and
    /// compaction threads reach the MANIFEST and the installed version in one order. Taken
    /// before `state`, never while holding it. `None` when read-only.
    pub manifest: Mutex<Option<ManifestWriter>>,
    /// Live snapshots: sequence number -> count.
    pub snapshots: Mutex<BTreeMap<SeqNo, usize>>,
    pub recovery: super::recovery_report::RecoveryReport,
    /// Paces compaction and re-filter writes (`Options::compaction_bytes_per_sec`).
    pub compaction_limiter: Option<crate::util::rate::RateLimiter>,
    /// Set when the last handle is dropped: until the lock goes, an open of the database in
    /// this process is told that it is closing.
    pub closing: Mutex<Option<super::open_handles::Busy>>,
    /// The LOCK file, held exclusively by a writer, shared by read-only openers (`None` for
    /// a read-only open of a directory without a LOCK file, which it must not create).
    /// Last, as fields are dropped in order: the lock goes only after everything else of
    /// the database (its files, its memtables, the removal of obsolete tables).
    pub _lock: Option<FileLock>,
}

impl DbInner {
    /// The current view, owned (for iterators and anything that outlives one call).
    pub fn read_view(&self) -> Arc<ReadView> {
        self.view.load_full()
    }

    /// The current view for the span of one call (a point lookup): cheaper than
    /// [`DbInner::read_view`], but not to be held for long.
    pub fn view_guard(&self) -> arc_swap::Guard<Arc<ReadView>> {
        self.view.load()
    }

    /// Replaces the view with a changed copy. Takes the state lock's guard as proof that
    /// view changes are serialized.
    pub fn update_view(&self, _st: &mut State, change: impl FnOnce(&mut ReadView)) {
        let mut next = ReadView::clone(&self.view.load());
        change(&mut next);
        self.view.store(Arc::new(next));
    }

    pub fn visible_seq(&self) -> SeqNo {
        self.last_seq.load(Ordering::Acquire)
    }

    /// Sequence numbers of live snapshots, ascending.
    pub fn snapshot_list(&self) -> Vec<SeqNo> {
        self.snapshots.lock().keys().copied().collect()
    }

    /// `Err(Error::ReadOnly)` naming `operation` if the database was opened read-only.
    pub fn refuse_if_read_only(&self, operation: &str) -> crate::error::Result<()> {
        if self.read_only {
            return Err(crate::error::Error::ReadOnly(format!(
                "{operation} refused: database {} was opened read-only (Db::open_read_only \
                 or Db::open_secondary)",
                self.dir.display()
            )));
        }
        Ok(())
    }

    pub fn set_bg_error(&self, st: &mut State, err: &crate::error::Error) {
        st.bg_failures += 1;
        if st.bg_error.is_none() {
            st.bg_error = Some(err.to_string());
        }
        self.writes_stopped.store(true, Ordering::Release);
        self.done_cv.notify_all();
    }
}
