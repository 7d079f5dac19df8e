//! Reclaiming expired keys in the background, as Redis's active expiry does.
//!
//! Every key with a time to live has an entry in its database's expiry index (`'e' be64(at)
//! key`, or `'E' db be64(at) key` beside database 0), so the keys due are one short scan
//! from the start of each index that has entries. Each is removed like a DEL (one
//! write of its metadata key; its members are left for compaction), under its writer lock,
//! so DBSIZE drops and WATCH sees the change. No command ever sees an expired key meanwhile:
//! reads check the time themselves (`Txn::live`).

use std::ops::Bound;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::keys::{DbIndex, expiry_key, expiry_prefix, parse_expiry_key};
use super::{Store, Txn};
use crate::resp::Reply;

/// Keys removed per write batch.
const PER_BATCH: usize = 128;

/// How often the reclaimer looks (Redis's active expiry runs ten times a second).
const PERIOD: Duration = Duration::from_millis(100);

/// An expiry-index entry: the database, the time and the key.
pub type Due = (DbIndex, u64, Vec<u8>);

/// Up to `limit` expiry-index entries due at `now_ms`, oldest first within each database
/// (databases in order; only those with keys that have a time to live are looked at).
///
/// # Errors
/// Engine errors from the scan.
pub fn due(store: &Store, now_ms: u64, limit: usize) -> Result<Vec<Due>, Reply> {
    let mut out = Vec::new();
    for db in 0..=255u8 {
        if db != 0 && store.volatile_keys(db) <= 0 {
            continue;
        }
        let start = expiry_prefix(db);
        let end = expiry_key(db, now_ms.saturating_add(1), b"");
        for kv in store
            .db()
            .scan((Bound::Included(start), Bound::Excluded(end)))
        {
            let (k, _) = kv?;
            if let Some((db, at, key)) = parse_expiry_key(&k) {
                out.push((db, at, key.to_vec()));
            }
            if out.len() >= limit {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// Removes `key` (of the write set's database) if its record still expires at `at` and that time has come; drops the
/// index entry if the key's expiry has changed since. Returns whether a key was removed.
///
/// # Errors
/// Engine errors reading the record.
pub fn remove_if_due(txn: &mut Txn<'_>, at: u64, key: &[u8]) -> Result<bool, Reply> {
    match txn.record(key)? {
        Some(r) if r.expire_at == at && r.expired(txn.now_ms()) => {
            txn.remove_key(key)?;
            Ok(true)
        }
        Some(r) if r.expire_at == at => Ok(false),
        // Stale: the key went, or its expiry changed, without this entry (never written so
        // by this server, but a crash between versions of it could leave one).
        _ => {
            txn.delete(expiry_key(txn.db(), at, key));
            Ok(false)
        }
    }
}

/// One pass: removes every key due now, in batches. Returns how many were removed.
///
/// # Errors
/// Engine errors.
pub fn reclaim(store: &Store) -> Result<u64, Reply> {
    let mut removed = 0;
    loop {
        let now = super::txn::unix_ms();
        let batch = due(store, now, PER_BATCH)?;
        if batch.is_empty() {
            return Ok(removed);
        }
        let n = batch.len();
        let _g = store.lock_keys(batch.iter().map(|(_, _, k)| k.as_slice()));
        let mut txn = store.txn();
        for (db, at, key) in &batch {
            txn.select_stored(*db);
            removed += u64::from(remove_if_due(&mut txn, *at, key)?);
        }
        txn.commit()?;
        if n < PER_BATCH {
            return Ok(removed);
        }
    }
}

/// The background thread that runs [`reclaim`] ten times a second.
pub struct Reclaimer {
    state: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

impl Reclaimer {
    /// Starts the thread (`None` if it cannot be spawned: expired keys then stay until a
    /// command meets them, invisible all the same).
    pub fn start(store: Arc<Store>) -> Option<Reclaimer> {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let st = Arc::clone(&state);
        let thread = std::thread::Builder::new()
            .name("bloomkv-expire".into())
            .spawn(move || {
                let (lock, cv) = &*st;
                let mut stopped = lock.lock();
                let mut logged = false;
                while !*stopped {
                    cv.wait_for(&mut stopped, PERIOD);
                    if *stopped {
                        break;
                    }
                    drop(stopped);
                    match reclaim(&store) {
                        Ok(n) => {
                            store.note_expired(n);
                            logged = false;
                        }
                        Err(e) if !logged => {
                            let text = match &e {
                                Reply::Error(t) => t.clone(),
                                other => format!("{other:?}"),
                            };
                            crate::log::warn(&format!("reclaiming expired keys failed: {text}"));
                            logged = true;
                        }
                        Err(_) => {}
                    }
                    stopped = lock.lock();
                }
            })
            .ok()?;
        Some(Reclaimer { state, thread })
    }

    /// Stops the thread and waits for it.
    pub fn stop(self) {
        *self.state.0.lock() = true;
        self.state.1.notify_all();
        let _ = self.thread.join();
    }
}
