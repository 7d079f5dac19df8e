//! Blocked clients in cluster mode: who waits on which key on this node, woken when an
//! applied log entry makes the key ready.
//!
//! A blocking pop's attempts go through the log (so the pop is decided the same way on
//! every node); only the waiting is local. A client registers on its keys *before* it
//! sends an attempt, so an entry applied after the attempt's (the push that feeds it) is
//! applied here after the registration and wakes it: no wake-up is lost. A wake-up stores
//! a permit, so one that comes while the client's attempt is still in flight is kept for
//! its next wait. Spurious wake-ups (the element went to another client first) only cost
//! another attempt, after which the client waits again.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;

/// The waiters on one key: registration id and wake-up.
type Waiters = Vec<(u64, Arc<Notify>)>;

/// The keys waited on, and their waiters.
#[derive(Debug, Default)]
pub struct KeyWaits {
    map: Mutex<HashMap<Vec<u8>, Waiters>>,
    waiters: AtomicUsize,
    next: AtomicU64,
}

/// One client's registration: woken through [`Registration::notified`], removed when
/// dropped.
#[derive(Debug)]
pub struct Registration {
    waits: Arc<KeyWaits>,
    id: u64,
    keys: Vec<Vec<u8>>,
    notify: Arc<Notify>,
}

impl KeyWaits {
    /// Registers a client on `keys`.
    pub fn register(self: &Arc<Self>, keys: &[&[u8]]) -> Registration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let notify = Arc::new(Notify::new());
        let mut uniq: Vec<Vec<u8>> = keys.iter().map(|k| k.to_vec()).collect();
        uniq.sort();
        uniq.dedup();
        {
            let mut m = self.map.lock();
            for k in &uniq {
                m.entry(k.clone())
                    .or_default()
                    .push((id, Arc::clone(&notify)));
            }
        }
        self.waiters.fetch_add(1, Ordering::AcqRel);
        Registration {
            waits: Arc::clone(self),
            id,
            keys: uniq,
            notify,
        }
    }

    /// Wakes every client waiting on one of `keys`.
    pub fn wake(&self, keys: &[Vec<u8>]) {
        if keys.is_empty() || self.waiters.load(Ordering::Acquire) == 0 {
            return;
        }
        let m = self.map.lock();
        for k in keys {
            if let Some(list) = m.get(k) {
                for (_, n) in list {
                    n.notify_one();
                }
            }
        }
    }

    /// Wakes every waiting client (a snapshot install replaced the data wholesale).
    pub fn wake_all(&self) {
        for list in self.map.lock().values() {
            for (_, n) in list {
                n.notify_one();
            }
        }
    }

    /// Clients waiting now.
    pub fn len(&self) -> usize {
        self.waiters.load(Ordering::Acquire)
    }

    /// True when nobody waits.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Registration {
    /// Resolves once an applied entry made one of the keys ready since the registration or
    /// the last wake-up.
    pub async fn notified(&self) {
        self.notify.notified().await;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut m = self.waits.map.lock();
        for k in &self.keys {
            if let Some(list) = m.get_mut(k) {
                list.retain(|(id, _)| *id != self.id);
                if list.is_empty() {
                    m.remove(k);
                }
            }
        }
        self.waits.waiters.fetch_sub(1, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wake_before_the_wait_is_kept_and_drop_cleans_up() {
        let w = Arc::new(KeyWaits::default());
        let r = w.register(&[b"a", b"b", b"a"]);
        assert_eq!(w.len(), 1);
        w.wake(&[b"zzz".to_vec()]);
        w.wake(&[b"b".to_vec()]);
        tokio::time::timeout(std::time::Duration::from_secs(5), r.notified())
            .await
            .expect("the permit stored before the wait");
        drop(r);
        assert!(w.is_empty());
        assert!(w.map.lock().is_empty());
    }
}
