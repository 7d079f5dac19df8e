//! How far one log is durable, shared by everyone who fsyncs it: its writer (a switch, a
//! `sync_writes` group), `Db::sync_wal` from another thread while writers keep appending, and
//! the background syncer.
//!
//! Two reasons for one shared record rather than each caller syncing on its own:
//! * **Coalescing.** One fsync at a time per log; a caller whose bytes an fsync in flight
//!   already covers waits for it instead of starting another, and one whose bytes an earlier
//!   fsync covered returns at once.
//! * **A failed fsync is final.** After a failed fsync the kernel may have dropped the dirty
//!   pages and reported the error once: a later fsync of the same file (through any
//!   descriptor of it) can then succeed although the data is gone. So after the first
//!   failure every later sync of the log fails too, whoever asks.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{Condvar, Mutex};

use crate::env::SyncHandle;
use crate::error::{Error, Result};

/// The shared sync record of one log.
#[derive(Debug, Default)]
pub(crate) struct SyncTracker {
    state: Mutex<TrackerState>,
    /// Wakes callers waiting for the fsync in flight.
    done: Condvar,
    /// `state.failed.is_some()`, readable without the lock (the writer asks before every
    /// append).
    failed: AtomicBool,
    /// Bytes of the log holding acknowledged records, all handed to the OS: how far a sync
    /// from another thread must reach (set by the writer after each commit).
    acknowledged: AtomicU64,
}

#[derive(Debug, Default)]
struct TrackerState {
    /// Bytes from the start of the log known durable.
    synced: u64,
    /// The length an fsync in flight will make durable, if one runs.
    in_flight: Option<u64>,
    /// Why an fsync of this log failed, if one did.
    failed: Option<String>,
}

impl SyncTracker {
    /// Makes the first `len` bytes of the log durable, calling `sync` (an fsync of a file
    /// whose first `len` bytes the OS already has) unless they already are. One fsync runs
    /// at a time: a caller whose `len` the fsync in flight covers waits for it and shares its
    /// outcome; one it does not cover waits for it and then runs its own.
    ///
    /// # Errors
    /// `sync`'s error (the log then counts as failed for good), or [`Error::WritesStopped`]
    /// if an earlier fsync of this log failed.
    pub(crate) fn sync_to(&self, len: u64, sync: impl FnOnce() -> Result<()>) -> Result<()> {
        let mut st = self.state.lock();
        loop {
            if let Some(why) = &st.failed {
                return Err(Error::WritesStopped(format!(
                    "an earlier sync of this log failed: {why}"
                )));
            }
            if st.synced >= len {
                return Ok(());
            }
            if st.in_flight.is_none() {
                break;
            }
            self.done.wait(&mut st);
        }
        st.in_flight = Some(len);
        drop(st);
        let result = sync();
        let mut st = self.state.lock();
        st.in_flight = None;
        match &result {
            Ok(()) => st.synced = st.synced.max(len),
            Err(e) => {
                if st.failed.is_none() {
                    st.failed = Some(e.to_string());
                }
                self.failed.store(true, Ordering::Release);
            }
        }
        self.done.notify_all();
        result
    }

    /// Records that the first `len` bytes hold acknowledged records and are flushed.
    pub(crate) fn set_acknowledged(&self, len: u64) {
        self.acknowledged.store(len, Ordering::Release);
    }

    /// Whether an fsync of this log has failed.
    pub(crate) fn has_failed(&self) -> bool {
        self.failed.load(Ordering::Acquire)
    }
}

/// Syncs a log from another thread while its writer keeps appending: the file's
/// [`SyncHandle`] with the log's [`SyncTracker`].
#[derive(Clone)]
pub(crate) struct LogSyncHandle {
    pub(super) tracker: std::sync::Arc<SyncTracker>,
    pub(super) handle: SyncHandle,
}

impl std::fmt::Debug for LogSyncHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogSyncHandle")
            .field("tracker", &self.tracker)
            .finish_non_exhaustive()
    }
}

impl LogSyncHandle {
    /// Makes the first `len` bytes of the log durable; they must already have been handed
    /// to the OS (the writer flushed them). See [`SyncTracker::sync_to`].
    ///
    /// # Errors
    /// As for [`SyncTracker::sync_to`].
    pub(crate) fn sync_to(&self, len: u64) -> Result<()> {
        self.tracker.sync_to(len, || (self.handle)())
    }

    /// Bytes of the log holding acknowledged records (see [`LogWriter::acknowledged`]).
    ///
    /// [`LogWriter::acknowledged`]: super::LogWriter::acknowledged
    pub(crate) fn acknowledged_len(&self) -> u64 {
        self.tracker.acknowledged.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    use super::*;

    #[test]
    fn a_covered_length_needs_no_fsync_and_a_failure_is_final() {
        let t = SyncTracker::default();
        let calls = AtomicU64::new(0);
        let ok = || {
            calls.fetch_add(1, Ordering::SeqCst);
            Ok(())
        };
        t.sync_to(100, ok).unwrap();
        t.sync_to(50, ok).unwrap();
        t.sync_to(100, ok).unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        t.sync_to(150, ok).unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2);

        let failed = t.sync_to(200, || Err(Error::WritesStopped("EIO".into())));
        assert!(failed.is_err());
        assert!(t.has_failed());
        // A later fsync would succeed (the kernel reported the error once): it is not asked.
        let later = t.sync_to(200, ok).unwrap_err();
        assert!(later.to_string().contains("EIO"), "{later}");
        // Even bytes an earlier fsync covered are refused: the log is done.
        assert!(t.sync_to(10, ok).is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn concurrent_callers_share_the_fsync_in_flight() {
        let t = Arc::new(SyncTracker::default());
        let calls = Arc::new(AtomicU64::new(0));
        let (entered, wait_entered) = std::sync::mpsc::channel();
        let (go, wait_go) = std::sync::mpsc::channel::<()>();
        let first = {
            let (t, calls) = (Arc::clone(&t), Arc::clone(&calls));
            std::thread::spawn(move || {
                t.sync_to(1000, || {
                    calls.fetch_add(1, Ordering::SeqCst);
                    entered.send(()).unwrap();
                    wait_go.recv().unwrap();
                    Ok(())
                })
            })
        };
        wait_entered.recv().unwrap();
        // Covered by the fsync in flight: these wait for it and share its result.
        let followers: Vec<_> = (0..4)
            .map(|i| {
                let (t, calls) = (Arc::clone(&t), Arc::clone(&calls));
                std::thread::spawn(move || {
                    t.sync_to(100 * (i + 1), || {
                        calls.fetch_add(1, Ordering::SeqCst);
                        Ok(())
                    })
                })
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(50));
        go.send(()).unwrap();
        first.join().unwrap().unwrap();
        for f in followers {
            f.join().unwrap().unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1, "one fsync for all five");
    }
}
