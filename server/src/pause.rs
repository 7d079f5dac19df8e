//! CLIENT PAUSE: holding clients' commands for a while, all of them or only those that write,
//! as an operator does before a failover or to let a replica catch up.
//!
//! The state is one deadline and one strength. A new pause keeps the later deadline and the
//! stronger kind of the two, as Redis does; CLIENT UNPAUSE ends it at once. Commands check
//! [`Pause::holds`] (one atomic load while no pause is on) and a held connection awaits
//! [`Pause::ended`].

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::Notify;

/// What a pause holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Hold {
    /// Commands that write (and EXEC of a transaction that writes, PUBLISH, scripts).
    Writes = 1,
    /// Every command.
    All = 2,
}

/// The server's pause.
#[derive(Debug, Default)]
pub struct Pause {
    /// 0: none; else the [`Hold`] as a number. Read by every command.
    strength: AtomicU8,
    until: Mutex<Option<(Instant, Hold)>>,
    changed: Notify,
}

impl Pause {
    /// Pauses `hold` commands for `ms` milliseconds from now (or longer or stronger, if a
    /// pause already on says so).
    pub fn pause(&self, ms: u64, hold: Hold) {
        let end = Instant::now() + Duration::from_millis(ms);
        let mut u = self.until.lock();
        let merged = match *u {
            Some((t, h)) => (t.max(end), h.max(hold)),
            None => (end, hold),
        };
        *u = Some(merged);
        self.strength.store(merged.1 as u8, Ordering::Release);
        drop(u);
        self.changed.notify_waiters();
    }

    /// Ends the pause at once.
    pub fn unpause(&self) {
        *self.until.lock() = None;
        self.strength.store(0, Ordering::Release);
        self.changed.notify_waiters();
    }

    /// True while a pause may be on (its deadline may have passed): the cheap first check.
    pub fn on(&self) -> bool {
        self.strength.load(Ordering::Acquire) != 0
    }

    /// Whether a command now is held: `writes` tells whether it writes.
    pub fn holds(&self, writes: bool) -> bool {
        match self.strength.load(Ordering::Acquire) {
            0 => false,
            s if s == Hold::Writes as u8 && !writes => false,
            _ => self.current().is_some(),
        }
    }

    /// The pause on now, ending it if its deadline passed.
    fn current(&self) -> Option<(Instant, Hold)> {
        let mut u = self.until.lock();
        match *u {
            Some((t, _)) if t <= Instant::now() => {
                *u = None;
                self.strength.store(0, Ordering::Release);
                None
            }
            other => other,
        }
    }

    /// Waits until no pause is on (its deadline passes, or CLIENT UNPAUSE). A held command
    /// is checked again after this, since a new pause may have started meanwhile.
    pub async fn ended(&self) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            let Some((until, _)) = self.current() else {
                return;
            };
            tokio::select! {
                _ = tokio::time::sleep_until(until.into()) => {}
                _ = changed => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longer_and_stronger_pause_wins_and_unpause_ends_it() {
        let p = Pause::default();
        assert!(!p.holds(true));
        p.pause(60_000, Hold::Writes);
        assert!(p.holds(true));
        assert!(!p.holds(false), "reads go on during a write pause");
        p.pause(1, Hold::All);
        assert!(p.holds(false), "the stronger kind wins");
        std::thread::sleep(Duration::from_millis(5));
        assert!(p.holds(false), "the later deadline wins");
        p.unpause();
        assert!(!p.holds(true));
    }

    #[test]
    fn a_pause_ends_at_its_deadline() {
        let p = Pause::default();
        p.pause(1, Hold::All);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        rt.block_on(p.ended());
        assert!(!p.holds(true));
    }
}
