//! WATCH: which clients watch which Redis keys, marked dirty by the commits that touch them.
//!
//! A commit derives the Redis keys it touched from its write set (`store::txn::owner` of each
//! engine key) only while some client watches something ([`Watches::active`]), so the cost is
//! nil otherwise. Every commit path goes through `Store::committed`: connection groups, single
//! writes, EXEC, FLUSHDB and the expiry reclaimer. A client registers its keys while holding
//! their writer locks, and writers mark after their batch is written and before they release
//! those locks, so a write either lands before the WATCH (and the watcher reads it) or marks
//! the watcher; EXEC checks its mark under the exclusive lock.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;

use crate::store::{DbIndex, ScopedKey};

/// One client's WATCH state: set once any watched key changes.
#[derive(Debug, Default)]
pub struct Watcher {
    dirty: AtomicBool,
}

impl Watcher {
    /// A clean watcher.
    pub fn new() -> Arc<Watcher> {
        Arc::new(Watcher::default())
    }

    /// True once a watched key has changed.
    pub fn is_dirty(&self) -> bool {
        self.dirty.load(Ordering::Acquire)
    }

    /// Clears the mark (after the client's watches are gone).
    pub fn reset(&self) {
        self.dirty.store(false, Ordering::Release);
    }
}

#[derive(Debug)]
struct Entry {
    watcher: Arc<Watcher>,
    /// The key had expired (but was not yet reclaimed) when it was watched: its removal is
    /// no change (Redis's rule for stale watched keys); any other write is.
    stale: bool,
}

/// Watched Redis keys (with their databases) and their watchers.
#[derive(Debug, Default)]
pub struct Watches {
    map: Mutex<HashMap<ScopedKey, Vec<Entry>>>,
    /// Number of (key, watcher) pairs.
    entries: AtomicUsize,
}

/// A Redis key a commit touched (its database, the key), and whether the commit left it
/// absent.
pub type Touched = (DbIndex, Vec<u8>, bool);

impl Watches {
    /// True while any client watches a key: only then do commits work out what they touched.
    pub fn active(&self) -> bool {
        self.entries.load(Ordering::Acquire) > 0
    }

    /// Registers `watcher` on `key` of database `db` (`stale`: the key exists but has
    /// expired). Call with the key's writer lock held (see the module doc).
    pub fn watch(&self, db: DbIndex, key: &[u8], watcher: &Arc<Watcher>, stale: bool) {
        let mut map = self.map.lock();
        let list = map.entry((db, key.to_vec())).or_default();
        if list.iter().any(|e| Arc::ptr_eq(&e.watcher, watcher)) {
            return;
        }
        list.push(Entry {
            watcher: Arc::clone(watcher),
            stale,
        });
        self.entries.fetch_add(1, Ordering::AcqRel);
    }

    /// Removes `watcher` from `key`.
    pub fn unwatch(&self, key: &ScopedKey, watcher: &Arc<Watcher>) {
        let mut map = self.map.lock();
        let Some(list) = map.get_mut(key) else {
            return;
        };
        let before = list.len();
        list.retain(|e| !Arc::ptr_eq(&e.watcher, watcher));
        let gone = before - list.len();
        if list.is_empty() {
            map.remove(key);
        }
        self.entries.fetch_sub(gone, Ordering::AcqRel);
    }

    /// Every watched key (for FLUSHDB, which touches the watched keys that existed).
    pub fn keys(&self) -> Vec<ScopedKey> {
        self.map.lock().keys().cloned().collect()
    }

    /// Marks the watchers of every key in `touched` dirty, but for a stale watch of a key
    /// the commit removed.
    pub fn touch(&self, touched: &[Touched]) {
        let mut map = self.map.lock();
        let mut scoped = (0, Vec::new());
        for (db, key, gone) in touched {
            // One buffer for the lookups: the map's keys own their bytes.
            scoped.0 = *db;
            scoped.1.clear();
            scoped.1.extend_from_slice(key);
            let Some(list) = map.get_mut(&scoped) else {
                continue;
            };
            for e in list.iter_mut() {
                if e.stale && *gone {
                    // The expired key went, which changes nothing the client could see;
                    // from now on the key is watched as absent.
                    e.stale = false;
                } else {
                    e.watcher.dirty.store(true, Ordering::Release);
                }
            }
        }
    }

    /// Number of distinct keys watched (INFO's `total_watched_keys`).
    pub fn watched_keys(&self) -> usize {
        self.map.lock().len()
    }

    /// Number of (key, watcher) pairs.
    pub fn len(&self) -> usize {
        self.entries.load(Ordering::Acquire)
    }

    /// True when nobody watches anything.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touches_mark_watchers_of_the_key_only() {
        let w = Watches::default();
        let (a, b) = (Watcher::new(), Watcher::new());
        assert!(!w.active());
        w.watch(0, b"k", &a, false);
        w.watch(0, b"k", &a, false);
        w.watch(0, b"j", &b, false);
        assert_eq!(w.len(), 2);
        w.touch(&[(1, b"k".to_vec(), false)]);
        assert!(!a.is_dirty(), "the same key in another database");
        w.touch(&[(0, b"k".to_vec(), false)]);
        assert!(a.is_dirty() && !b.is_dirty());
        w.unwatch(&(0, b"k".to_vec()), &a);
        w.unwatch(&(0, b"j".to_vec()), &b);
        assert!(!w.active());
        assert!(w.keys().is_empty());
    }

    #[test]
    fn removing_a_stale_key_is_no_change() {
        let w = Watches::default();
        let a = Watcher::new();
        w.watch(0, b"k", &a, true);
        w.touch(&[(0, b"k".to_vec(), true)]);
        assert!(!a.is_dirty(), "the expired key's removal");
        w.touch(&[(0, b"k".to_vec(), false)]);
        assert!(a.is_dirty(), "a later write");
    }
}
