//! Background syncing of the WAL as it grows (RocksDB's `wal_bytes_per_sync`).
//!
//! Without `sync_writes` the WAL is synced only when a memtable switch retires it (see
//! `make_room`): the writer that fills the memtable then waits for the whole log, 64 MiB by
//! default, to reach the disk, while every other writer waits for the writer lock. Syncing the
//! log every [`WAL_BYTES_PER_SYNC`] on a thread of its own leaves that switch only the last
//! stretch to sync. It changes no guarantee: the sync at the switch and `Db::sync_wal` still
//! do the syncing that acknowledged writes rely on, and report its failures. A failed
//! background sync is remembered by the log's sync record (`wal::SyncTracker`): the kernel
//! may have dropped the pages it failed to write, so the log's next sync fails too instead
//! of succeeding over the loss.

use std::sync::mpsc::{Sender, channel};

use crate::db::wal::LogSyncHandle;

/// Bytes appended to the WAL between background syncs.
pub(crate) const WAL_BYTES_PER_SYNC: u64 = 1 << 20;

/// Hands sync requests to the syncing thread; the thread ends when this is dropped.
#[derive(Debug)]
pub(crate) struct WalSyncer {
    requests: Option<Sender<(LogSyncHandle, u64)>>,
    /// The log length at the last request (reset when a new log starts).
    requested_at: u64,
}

impl WalSyncer {
    /// Starts the syncing thread (without one, e.g. if the thread cannot be spawned, the log
    /// is synced only at switches and by `sync_wal`, as before).
    pub(crate) fn start() -> WalSyncer {
        let (tx, rx) = channel::<(LogSyncHandle, u64)>();
        let spawned = std::thread::Builder::new()
            .name("bloomkv-wal-sync".into())
            .spawn(move || {
                while let Ok(mut request) = rx.recv() {
                    // Requests that queued up while a sync ran: the newest covers them all
                    // (older ones name the same log or one already retired and synced).
                    while let Ok(newer) = rx.try_recv() {
                        request = newer;
                    }
                    // A failure is reported by the log's next foreground sync (see above).
                    let (handle, len) = request;
                    let _ = handle.sync_to(len);
                }
            });
        WalSyncer {
            requests: spawned.ok().map(|_| tx),
            requested_at: 0,
        }
    }

    /// A syncer without a thread: requests are dropped (for a read-only database).
    pub(crate) fn disabled() -> WalSyncer {
        WalSyncer {
            requests: None,
            requested_at: 0,
        }
    }

    /// A new log starts: the next request comes after its first [`WAL_BYTES_PER_SYNC`].
    pub(crate) fn new_log(&mut self) {
        self.requested_at = 0;
    }

    /// Called after appending to a log of `len` bytes, all of them flushed to the OS: asks
    /// for a background sync once [`WAL_BYTES_PER_SYNC`] have accumulated since the last
    /// request.
    pub(crate) fn appended(&mut self, len: u64, handle: impl FnOnce() -> Option<LogSyncHandle>) {
        if len < self.requested_at + WAL_BYTES_PER_SYNC {
            return;
        }
        self.requested_at = len;
        if let (Some(tx), Some(h)) = (&self.requests, handle()) {
            let _ = tx.send((h, len));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};

    use crate::env::{SyncHandle, WritableFile};
    use crate::db::wal::LogWriter;

    /// A file whose sync handle counts its calls.
    struct Counted(Arc<AtomicU64>);

    impl WritableFile for Counted {
        fn append(&mut self, _: &[u8]) -> crate::error::Result<()> {
            Ok(())
        }
        fn flush(&mut self) -> crate::error::Result<()> {
            Ok(())
        }
        fn sync(&mut self) -> crate::error::Result<()> {
            Ok(())
        }
        fn len(&self) -> u64 {
            0
        }
        fn sync_handle(&self) -> Option<SyncHandle> {
            let s = Arc::clone(&self.0);
            Some(Arc::new(move || {
                s.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }))
        }
    }

    #[test]
    fn a_sync_is_requested_once_per_megabyte_appended_and_runs_in_the_background() {
        let synced = Arc::new(AtomicU64::new(0));
        let mut log = LogWriter::new(Box::new(Counted(Arc::clone(&synced))));
        let mut handle = || log.sync_handle();
        let mut w = WalSyncer::start();
        let mut asked = 0;
        for len in (0..=4 * WAL_BYTES_PER_SYNC).step_by(4096) {
            w.appended(len, || {
                asked += 1;
                handle()
            });
        }
        assert_eq!(asked, 4, "one request per megabyte");
        w.new_log();
        w.appended(WAL_BYTES_PER_SYNC - 1, || panic!("too early in a new log"));
        let t = Instant::now();
        while synced.load(Ordering::SeqCst) == 0 && t.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let n = synced.load(Ordering::SeqCst);
        assert!((1..=4).contains(&n), "{n} syncs ran");
    }
}
