//! This node's client session: the (client, request id) pairs of its writes, and the mark
//! below which every request has been answered (or given up on).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::machine::seed_for;

pub(crate) struct Session {
    client: u64,
    next: AtomicU64,
    in_flight: Mutex<BTreeSet<u64>>,
}

/// Distinguishes sessions started in one process at the same nanosecond.
static SESSIONS: AtomicU64 = AtomicU64::new(0);

impl Session {
    /// A new session with a client id unique across nodes and restarts (with overwhelming
    /// probability: a mix of the node id, the time, the process id and a counter).
    pub(crate) fn new(node: u64) -> Session {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let client =
            seed_for(nanos ^ seed_for(node) ^ seed_for(u64::from(std::process::id()) << 20 | n));
        Session {
            client,
            next: AtomicU64::new(1),
            in_flight: Mutex::new(BTreeSet::new()),
        }
    }

    pub(crate) fn client(&self) -> u64 {
        self.client
    }

    /// A new request id and the mark to send with it: the lowest id still in flight (its
    /// own, at most).
    pub(crate) fn begin(&self) -> (u64, u64) {
        let mut f = self.in_flight.lock();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        f.insert(id);
        let mark = f.first().copied().unwrap_or(id);
        (id, mark)
    }

    /// Request `id` is answered or given up on: it will never be sent again.
    pub(crate) fn end(&self, id: u64) {
        self.in_flight.lock().remove(&id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mark_is_the_lowest_in_flight() {
        let s = Session::new(1);
        let (a, m) = s.begin();
        assert_eq!((a, m), (1, 1));
        let (b, m) = s.begin();
        assert_eq!((b, m), (2, 1));
        s.end(a);
        let (c, m) = s.begin();
        assert_eq!((c, m), (3, 2));
        assert_ne!(Session::new(1).client(), s.client());
    }
}
