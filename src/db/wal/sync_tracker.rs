//! How far one log is durable, shared by everyone who fsyncs it: its writer (a switch, a
//! `sync_writes` group), `Db::sync_wal` from another thread while writers keep appending, and
//! the background syncer.
//!
//! Two reasons for one shared record rather than each caller syncing on its own:
//! * **Coalescing.** A caller whose bytes an fsync in flight already covers waits for it
//!   instead of starting another, and one whose bytes an earlier fsync covered returns at
//!   once. A caller the fsyncs in flight do not cover starts its own at once, beside them (a
//!   memtable switch does not wait for a slow background sync to end before its own begins).
//! * **A failed fsync is final.** After a failed fsync the kernel may have dropped the dirty
//!   pages and reported the error once, to whichever fsync of the file (through any
//!   descriptor of it) asked first: another fsync running at the same time, or a later one,
//!   can then succeed although the data is gone. So after the first failure every later sync
//!   of the log fails too, whoever asks; and an fsync that succeeded counts only once every
//!   fsync that overlapped it has ended without failing (the error may have gone to one of
//!   them).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use parking_lot::{Condvar, Mutex};

use crate::env::SyncHandle;
use crate::error::{Error, Result};

/// The shared sync record of one log.
#[derive(Debug, Default)]
pub(crate) struct SyncTracker {
    state: Mutex<TrackerState>,
    /// Wakes callers waiting for fsyncs in flight (notified whenever one ends).
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
    /// The fsyncs running now: id -> the length each will make durable.
    in_flight: BTreeMap<u64, u64>,
    /// Lengths of fsyncs that succeeded and wait for those that overlapped them.
    confirming: Vec<u64>,
    next_id: u64,
    /// Why an fsync of this log failed, if one did.
    failed: Option<String>,
}

impl TrackerState {
    fn refusal(&self) -> Option<Error> {
        self.failed.as_ref().map(|why| {
            Error::WritesStopped(format!("an earlier sync of this log failed: {why}"))
        })
    }

    /// Whether an fsync running or confirming now will make the first `len` bytes durable.
    fn covered_in_flight(&self, len: u64) -> bool {
        self.in_flight.values().chain(&self.confirming).any(|&l| l >= len)
    }
}

impl SyncTracker {
    /// Makes the first `len` bytes of the log durable, calling `sync` (an fsync of a file
    /// whose first `len` bytes the OS already has) unless they already are, or an fsync in
    /// flight covers them (then it waits for that one and shares its outcome).
    ///
    /// # Errors
    /// `sync`'s error (the log then counts as failed for good), or [`Error::WritesStopped`]
    /// if an fsync of this log failed before, or while this one ran.
    pub(crate) fn sync_to(&self, len: u64, sync: impl FnOnce() -> Result<()>) -> Result<()> {
        let mut st = self.state.lock();
        loop {
            if let Some(e) = st.refusal() {
                return Err(e);
            }
            if st.synced >= len {
                return Ok(());
            }
            if !st.covered_in_flight(len) {
                break;
            }
            self.done.wait(&mut st);
        }
        let id = st.next_id;
        st.next_id += 1;
        st.in_flight.insert(id, len);
        drop(st);
        let result = sync();
        let mut st = self.state.lock();
        st.in_flight.remove(&id);
        if let Err(e) = &result {
            if st.failed.is_none() {
                st.failed = Some(e.to_string());
            }
            self.failed.store(true, Ordering::Release);
            self.done.notify_all();
            return result;
        }
        // Those still running began before this one ended: an error meant for this one may
        // be theirs to report. Those that began and ended meanwhile left `failed` set if so.
        let overlapping: Vec<u64> = st.in_flight.keys().copied().collect();
        if !overlapping.is_empty() {
            st.confirming.push(len);
            while overlapping.iter().any(|o| st.in_flight.contains_key(o)) {
                self.done.wait(&mut st);
            }
            if let Some(i) = st.confirming.iter().position(|&l| l == len) {
                st.confirming.swap_remove(i);
            }
        }
        let outcome = match st.refusal() {
            Some(e) => Err(e),
            None => {
                st.synced = st.synced.max(len);
                Ok(())
            }
        };
        self.done.notify_all();
        outcome
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

    /// A caller the fsync in flight does not cover starts its own beside it, and its success
    /// counts only if the one it overlapped does not fail.
    #[test]
    fn an_uncovered_caller_syncs_at_once_and_shares_an_overlapping_failure() {
        for first_fails in [false, true] {
            let t = Arc::new(SyncTracker::default());
            let (entered, wait_entered) = std::sync::mpsc::channel();
            let (go, wait_go) = std::sync::mpsc::channel::<()>();
            let first = {
                let t = Arc::clone(&t);
                std::thread::spawn(move || {
                    t.sync_to(100, || {
                        entered.send(()).unwrap();
                        wait_go.recv().unwrap();
                        if first_fails {
                            Err(Error::WritesStopped("EIO".into()))
                        } else {
                            Ok(())
                        }
                    })
                })
            };
            wait_entered.recv().unwrap();
            let (second_entered, wait_second) = std::sync::mpsc::channel();
            let second = {
                let t = Arc::clone(&t);
                std::thread::spawn(move || {
                    t.sync_to(200, || {
                        second_entered.send(()).unwrap();
                        Ok(())
                    })
                })
            };
            // The second fsync runs while the first is still held.
            wait_second.recv().unwrap();
            std::thread::sleep(std::time::Duration::from_millis(20));
            assert!(!second.is_finished(), "it must wait for the fsync it overlapped");
            go.send(()).unwrap();
            assert_eq!(first.join().unwrap().is_err(), first_fails);
            assert_eq!(second.join().unwrap().is_err(), first_fails, "first_fails={first_fails}");
            assert_eq!(t.has_failed(), first_fails);
        }
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
