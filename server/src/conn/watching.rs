//! WATCH and UNWATCH on a connection, and the check EXEC makes (docs/SERVER.md, "WATCH").

use std::sync::Arc;

use bytes::Bytes;

use super::Conn;
use crate::resp::Reply;
use crate::store::Txn;

impl Conn {
    /// `WATCH key [key ...]`: registers the keys while holding their writer locks, so a
    /// write to one either lands before (and the client reads it) or marks this client.
    pub(super) fn watch(&mut self, a: &[Bytes]) -> Reply {
        if self.multi.is_some() {
            return Reply::err("WATCH inside MULTI is not allowed");
        }
        let store = Arc::clone(&self.shared.store);
        let _g = store.lock_keys(a[1..].iter().map(|k| &k[..]));
        let mut txn = store.txn();
        txn.select(self.db);
        let now = txn.now_ms();
        for key in &a[1..] {
            let scoped = (txn.db(), key.clone());
            if self.watched.contains_key(&scoped) {
                continue;
            }
            let stale = match txn.record(key) {
                Ok(r) => r.is_some_and(|r| r.expired(now)),
                Err(e) => return e,
            };
            store.watches().watch(txn.db(), key, &self.watcher, stale);
            self.watched.insert(scoped, stale);
        }
        Reply::Ok
    }

    /// Forgets every watched key (UNWATCH, EXEC, DISCARD, RESET, disconnect).
    pub(super) fn unwatch_all(&mut self) {
        if self.watched.is_empty() {
            return;
        }
        let watches = self.shared.store.watches();
        for ((db, key), _) in self.watched.drain() {
            watches.unwatch(&(db, key.to_vec()), &self.watcher);
        }
        self.watcher.reset();
    }

    /// Whether a watched key changed since WATCH: a commit marked it, or it was live then and
    /// has expired since without the reclaimer having removed it yet. Call under the
    /// exclusive lock, before the transaction runs.
    ///
    /// # Errors
    /// Engine errors reading a watched key.
    pub(super) fn watch_broken(&self, txn: &Txn<'_>) -> Result<bool, Reply> {
        if self.watcher.is_dirty() {
            return Ok(true);
        }
        let now = txn.now_ms();
        for ((db, key), stale) in &self.watched {
            if !stale && txn.record_in(*db, key)?.is_some_and(|r| r.expired(now)) {
                return Ok(true);
            }
        }
        Ok(false)
    }
}
