//! The server's background thread: the `appendfsync everysec` WAL sync, getting writes going
//! again after the engine stopped them (a full disk, a failed sync), and logging stalls.
//!
//! When a write fails in a way that stops the engine's writes, the store remembers why
//! (`Store::note_write_error`), every write command answers `MISCONF` and reads go on. This
//! thread then calls `Db::resume` with a growing pause (100 ms to 5 s): once space is back
//! (or the fault gone) writes resume by themselves, without a restart; each outcome is logged.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::config::AppendFsync;
use crate::log;
use crate::store::Store;

/// How often the thread wakes.
const TICK: Duration = Duration::from_millis(100);
/// Longest pause between two resume attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// A second in which writers were stopped longer than this is logged.
const STALL_LOG: Duration = Duration::from_millis(500);

/// The running threads: the housekeeper's, and the sweeper's (compactions of the ranges of
/// big dropped collections, which can take seconds and must not hold up the WAL sync).
pub struct Housekeeper {
    state: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
    sweeper: JoinHandle<()>,
}

/// How often the sweeper looks for dropped collections.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

struct Work {
    store: Arc<Store>,
    everysec: bool,
    last_sync: Instant,
    next_resume: Instant,
    backoff: Duration,
    last_stall_check: Instant,
    stop_micros: u64,
    resume_failures: u64,
}

impl Work {
    fn tick(&mut self) {
        let now = Instant::now();
        if self.everysec && now.duration_since(self.last_sync) >= Duration::from_secs(1) {
            self.last_sync = now;
            if let Err(e) = self.store.sync_wal() {
                log::warn(&format!("WAL sync failed: {e}"));
            }
        }
        if self.store.writes_stopped().is_some() && now >= self.next_resume {
            match self.store.try_resume() {
                Ok(()) => {
                    log::notice("writes resumed: the engine accepted them again");
                    self.backoff = TICK;
                    self.resume_failures = 0;
                }
                Err(e) => {
                    // The first failure and then one in ten, so a long outage is visible
                    // without flooding the log.
                    if self.resume_failures.is_multiple_of(10) {
                        log::warn(&format!(
                            "writes still stopped, resume failed (attempt {}): {e}",
                            self.resume_failures + 1
                        ));
                    }
                    self.resume_failures += 1;
                    self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                }
            }
            self.next_resume = now + self.backoff;
        }
        if now.duration_since(self.last_stall_check) >= Duration::from_secs(1) {
            let stats = self.store.db().stats();
            let stopped = stats.write_stop_micros.saturating_sub(self.stop_micros);
            self.stop_micros = stats.write_stop_micros;
            let span = now.duration_since(self.last_stall_check);
            self.last_stall_check = now;
            if stopped > STALL_LOG.as_micros() as u64 {
                log::warn(&format!(
                    "writes were stopped for {} ms of the last {} ms, waiting for the engine's flushes and compactions to catch up",
                    stopped / 1000,
                    span.as_millis()
                ));
            }
        }
    }
}

impl Housekeeper {
    /// Starts the thread.
    ///
    /// # Errors
    /// The error spawning it.
    pub fn start(store: Arc<Store>, appendfsync: AppendFsync) -> std::io::Result<Housekeeper> {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let st = Arc::clone(&state);
        let now = Instant::now();
        let mut work = Work {
            stop_micros: store.db().stats().write_stop_micros,
            store,
            everysec: appendfsync == AppendFsync::Everysec,
            last_sync: now,
            next_resume: now,
            backoff: TICK,
            last_stall_check: now,
            resume_failures: 0,
        };
        let sweep_state = Arc::clone(&state);
        let sweep_store = Arc::clone(&work.store);
        let sweeper = std::thread::Builder::new()
            .name("bloomkv-sweeper".into())
            .spawn(move || {
                let (lock, cv) = &*sweep_state;
                let mut stopped = lock.lock();
                while !*stopped {
                    cv.wait_for(&mut stopped, SWEEP_EVERY);
                    if *stopped {
                        break;
                    }
                    drop(stopped);
                    if let Err(e) = crate::store::gc::sweep(&sweep_store) {
                        log::warn(&format!(
                            "compacting a dropped collection's range failed: {e}"
                        ));
                    }
                    stopped = lock.lock();
                }
            })?;
        let thread = std::thread::Builder::new()
            .name("bloomkv-housekeeping".into())
            .spawn(move || {
                let (lock, cv) = &*st;
                let mut stopped = lock.lock();
                while !*stopped {
                    cv.wait_for(&mut stopped, TICK);
                    if *stopped {
                        break;
                    }
                    drop(stopped);
                    work.tick();
                    stopped = lock.lock();
                }
            })?;
        Ok(Housekeeper {
            state,
            thread,
            sweeper,
        })
    }

    /// Stops the thread and waits for it.
    pub fn stop(self) {
        *self.state.0.lock() = true;
        self.state.1.notify_all();
        let _ = self.thread.join();
        let _ = self.sweeper.join();
    }
}
