//! Time stamps and throttles shared by the node and its transport: lock-free, cheap enough
//! to touch on every message.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// When something last happened (a leader's message accepted, a pre-vote granted, a
/// snapshot frame taken), as milliseconds since the stamp was made.
pub(crate) struct Stamp {
    origin: Instant,
    last_ms: AtomicU64,
}

impl Stamp {
    pub(crate) fn new() -> Stamp {
        Stamp {
            origin: Instant::now(),
            last_ms: AtomicU64::new(0),
        }
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// It happened just now.
    pub(crate) fn touch(&self) {
        self.last_ms.fetch_max(self.now_ms(), Ordering::Relaxed);
    }

    /// Time since it last happened (or since the stamp was made).
    pub(crate) fn elapsed(&self) -> Duration {
        Duration::from_millis(
            self.now_ms()
                .saturating_sub(self.last_ms.load(Ordering::Relaxed)),
        )
    }
}

/// A report held back to at most one per interval, counting the rest.
#[derive(Debug, Default)]
pub(crate) struct Throttle {
    last_ms: AtomicU64,
    held: AtomicU64,
}

impl Throttle {
    /// Whether to report now (at most once per `every`); returns how many were held back
    /// since the last report.
    pub(crate) fn allow(&self, every: Duration) -> Option<u64> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let last = self.last_ms.load(Ordering::Relaxed);
        let every = u64::try_from(every.as_millis()).unwrap_or(u64::MAX);
        if last != 0 && now.saturating_sub(last) < every
            || self
                .last_ms
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.held.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        Some(self.held.swap(0, Ordering::Relaxed))
    }
}
