//! SAVE, BGSAVE, BGREWRITEAOF and LASTSAVE. Every acknowledged write is already in the
//! write-ahead log (synced as `--appendfsync` says), so there is no snapshot file to write:
//! a save flushes the memtable into a table and syncs, which leaves the log short and the
//! data in its compacted form, the nearest thing to Redis's RDB point. LASTSAVE is the time
//! of the last save that succeeded (the server's start before any), as in Redis.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;

use parking_lot::Mutex;

use crate::resp::Reply;
use crate::store::Store;

/// The state of saves, shared by every connection.
#[derive(Debug)]
pub struct Saves {
    /// Unix seconds of the last successful save (the start before the first).
    last: AtomicU64,
    /// A background save is running.
    running: AtomicBool,
    /// Another background save is to run when this one ends (BGSAVE SCHEDULE).
    scheduled: AtomicBool,
    /// The last background save failed.
    last_failed: AtomicBool,
    /// The background save's thread, joined at shutdown: it holds the store, which must be
    /// closed before the server says it stopped.
    thread: Mutex<Option<JoinHandle<()>>>,
}

fn unix_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Default for Saves {
    fn default() -> Saves {
        Saves {
            last: AtomicU64::new(unix_secs()),
            running: AtomicBool::new(false),
            scheduled: AtomicBool::new(false),
            last_failed: AtomicBool::new(false),
            thread: Mutex::new(None),
        }
    }
}

impl Saves {
    /// `SAVE`: flushes in the caller's thread (run off the I/O workers).
    pub fn save(&self, store: &Store) -> Reply {
        if self.running.load(Ordering::Acquire) {
            return Reply::err("Background save already in progress");
        }
        match store.db().flush() {
            Ok(()) => {
                self.last.store(unix_secs(), Ordering::Relaxed);
                Reply::Ok
            }
            Err(e) => {
                crate::log::warn(&format!("SAVE failed: {e}"));
                Reply::err(format!("SAVE failed: {e}"))
            }
        }
    }

    /// `BGSAVE [SCHEDULE]` (and BGREWRITEAOF, `aof`): flushes on a thread of its own.
    pub fn background(self: &Arc<Saves>, store: &Arc<Store>, schedule: bool, aof: bool) -> Reply {
        if self.running.swap(true, Ordering::AcqRel) {
            if schedule || aof {
                self.scheduled.store(true, Ordering::Release);
                return Reply::Status(
                    if aof {
                        "Background append only file rewriting scheduled"
                    } else {
                        "Background saving scheduled"
                    }
                    .into(),
                );
            }
            return Reply::err("Background save already in progress");
        }
        let saves = Arc::clone(self);
        let store = Arc::clone(store);
        let spawned = std::thread::Builder::new()
            .name("bloomkv-bgsave".into())
            .spawn(move || {
                loop {
                    match store.db().flush() {
                        Ok(()) => {
                            saves.last.store(unix_secs(), Ordering::Relaxed);
                            saves.last_failed.store(false, Ordering::Relaxed);
                        }
                        Err(e) => {
                            crate::log::warn(&format!("background save failed: {e}"));
                            saves.last_failed.store(true, Ordering::Relaxed);
                        }
                    }
                    if !saves.scheduled.swap(false, Ordering::AcqRel) {
                        break;
                    }
                }
                saves.running.store(false, Ordering::Release);
            });
        match spawned {
            // The previous thread has ended (`running` was false): joining it is immediate.
            Ok(t) => {
                if let Some(old) = self.thread.lock().replace(t) {
                    let _ = old.join();
                }
            }
            Err(e) => {
                self.running.store(false, Ordering::Release);
                return Reply::err(format!("could not start a background save: {e}"));
            }
        }
        Reply::Status(
            if aof {
                "Background append only file rewriting started"
            } else {
                "Background saving started"
            }
            .into(),
        )
    }

    /// Waits for a background save to end (server shutdown).
    pub fn finish(&self) {
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
    }

    /// `LASTSAVE`.
    pub fn last(&self) -> u64 {
        self.last.load(Ordering::Relaxed)
    }

    /// A background save is running.
    pub fn running(&self) -> bool {
        self.running.load(Ordering::Acquire)
    }

    /// The last background save failed.
    pub fn last_failed(&self) -> bool {
        self.last_failed.load(Ordering::Relaxed)
    }
}
