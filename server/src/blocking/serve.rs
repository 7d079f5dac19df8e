//! Serving blocked clients inside the write set of the command that made their keys ready.
//!
//! After each write command (and once after a whole `EXEC`, as Redis serves after the
//! transaction), [`serve_ready`] takes the keys the command signalled and, for each, claims
//! the key's waiters in blocking order and runs their pops in the same write set, until the
//! key is empty. The claims and their replies wait in [`Served`] until the write set's
//! commit: [`Served::finish`] then delivers them (or, if the commit failed, releases them:
//! they stay blocked).
//!
//! Serving a BLMOVE writes its destination too, whose writer lock the pusher may not hold:
//! it is taken without waiting (`WriteGuard::try_add`, as group commit does, so no writer
//! ever waits while holding locks). If another writer holds it, the rest of that key's
//! waiters are served by a pass of their own right after the commit, with every lock they
//! need taken in order ([`Served::finish`]); an unblocked client's pop may come in between
//! there, the one case where a push is not served atomically.

use bytes::Bytes;

use super::{Registry, Waiter};
use crate::cmd::blocking::Attempt;
use crate::resp::Reply;
use crate::store::{ScopedKey, Store, Txn, WriteGuard};
use std::sync::Arc;

/// Waiters served by a write set, awaiting its commit.
#[derive(Debug, Default)]
pub struct Served {
    claims: Vec<(Arc<Waiter>, Reply)>,
    /// Keys whose remaining waiters need a pass of their own after the commit.
    deferred: Vec<ScopedKey>,
}

/// Rounds of deferred passes one commit may start (each needs a BLMOVE destination another
/// writer held); past them the waiters stay blocked until the next push.
const MAX_DEFERRED_ROUNDS: usize = 8;

impl Served {
    /// After the write set's commit: delivers the replies (`committed`) or releases the
    /// claims, then serves deferred keys.
    pub fn finish(self, committed: bool, reg: &Registry, store: &Store) {
        self.finish_round(committed, reg, store, 0);
    }

    fn finish_round(mut self, committed: bool, reg: &Registry, store: &Store, round: usize) {
        for (w, r) in std::mem::take(&mut self.claims) {
            if committed {
                w.deliver(r);
                reg.remove(&w);
            } else if w.release() {
                reg.remove(&w);
            }
        }
        if !committed || round >= MAX_DEFERRED_ROUNDS {
            return;
        }
        let mut deferred = std::mem::take(&mut self.deferred);
        deferred.dedup();
        for key in deferred {
            serve_deferred(reg, store, &key, round + 1);
        }
    }
}

impl Drop for Served {
    /// Claims never finished (an early return, a panic) are released: the waiters stay
    /// blocked rather than hang.
    fn drop(&mut self) {
        for (w, _) in self.claims.drain(..) {
            let _ = w.release();
        }
    }
}

/// Serves the waiters on the keys `txn` signalled ready since the last call, in `txn`.
/// `guard` holds the writer locks of the command(s) that ran in `txn` (`None`: every
/// writer is locked out, as under EXEC).
///
/// # Errors
/// Engine errors from a waiter's pop; the write set must then not be committed (that
/// waiter is released, the others stay claimed in `out` until it is dropped or finished).
pub fn serve_ready(
    reg: &Registry,
    txn: &mut Txn<'_>,
    mut guard: Option<&mut WriteGuard<'_>>,
    out: &mut Served,
) -> Result<(), Reply> {
    loop {
        let ready = txn.take_ready();
        if ready.is_empty() {
            return Ok(());
        }
        if reg.is_empty() {
            continue;
        }
        for key in ready {
            serve_key(reg, txn, guard.as_deref_mut(), &key, out)?;
        }
    }
}

/// Serves `key`'s waiters in `txn`, addressing the key's database meanwhile.
fn serve_key(
    reg: &Registry,
    txn: &mut Txn<'_>,
    guard: Option<&mut WriteGuard<'_>>,
    key: &ScopedKey,
    out: &mut Served,
) -> Result<(), Reply> {
    let db = txn.db();
    txn.select_stored(key.0);
    let r = serve_key_in_db(reg, txn, guard, key, out);
    txn.select_stored(db);
    r
}

fn serve_key_in_db(
    reg: &Registry,
    txn: &mut Txn<'_>,
    mut guard: Option<&mut WriteGuard<'_>>,
    scoped: &ScopedKey,
    out: &mut Served,
) -> Result<(), Reply> {
    let key = Bytes::copy_from_slice(&scoped.1);
    for w in reg.waiting_on(scoped) {
        if !w.is_waiting() {
            continue;
        }
        if let (Some(g), Some(dst)) = (guard.as_deref_mut(), w.op().extra_keys())
            && !g.try_add([dst])
        {
            out.deferred.push(scoped.clone());
            return Ok(());
        }
        if !w.claim() {
            continue;
        }
        match w.op().attempt(txn, &key, false) {
            Ok(Attempt::Served(r)) => out.claims.push((w, r)),
            Ok(Attempt::Empty) => {
                if w.release() {
                    reg.remove(&w);
                }
                return Ok(());
            }
            Ok(Attempt::Skip) => {
                if w.release() {
                    reg.remove(&w);
                }
            }
            Err(e) => {
                if w.release() {
                    reg.remove(&w);
                }
                return Err(e);
            }
        }
    }
    Ok(())
}

/// A pass of its own for `key`'s waiters, after a commit that could not serve them all: it
/// takes the key's lock and those of the waiters' destinations, in order, holding nothing
/// else.
fn serve_deferred(reg: &Registry, store: &Store, key: &ScopedKey, round: usize) {
    let waiters = reg.waiting_on(key);
    let dsts: Vec<&[u8]> = waiters.iter().filter_map(|w| w.op().extra_keys()).collect();
    let own = key.1.as_slice();
    let mut guard = store.lock_keys(std::iter::once(own).chain(dsts.iter().copied()));
    let mut txn = store.txn();
    txn.select_stored(key.0);
    txn.signal_ready(own);
    let mut served = Served::default();
    let ok =
        serve_ready(reg, &mut txn, Some(&mut guard), &mut served).is_ok() && txn.commit().is_ok();
    drop(guard);
    served.finish_round(ok, reg, store, round);
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use bytes::Bytes;

    use super::*;
    use crate::cmd::blocking::{Block, Op};

    /// A BLMOVE waiter whose destination another writer holds is served by a pass of its
    /// own once that writer is done, not left blocked.
    #[test]
    fn a_busy_destination_defers_the_serving_until_after_the_commit() {
        let (_dir, store) = crate::store::temp_store();
        let reg = Registry::new();
        let w = reg.register(Block {
            db: 0,
            keys: vec![Bytes::from_static(b"src")],
            op: Op::ListMove {
                dst: Bytes::from_static(b"dst"),
                from_left: true,
                to_left: true,
            },
            timeout: None,
        });
        std::thread::scope(|s| {
            let (held_tx, held_rx) = std::sync::mpsc::channel();
            let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
            let st = &store;
            let holder = s.spawn(move || {
                let _dst = st.lock_keys([&b"dst"[..]]);
                held_tx.send(()).unwrap();
                go_rx.recv().unwrap();
                std::thread::sleep(Duration::from_millis(50));
            });
            held_rx.recv().unwrap();
            let mut guard = store.lock_keys([&b"src"[..]]);
            let mut txn = store.txn();
            crate::cmd::lists::store::push(&mut txn, b"src", [&b"e"[..]], false, false).unwrap();
            let mut served = Served::default();
            serve_ready(&reg, &mut txn, Some(&mut guard), &mut served).unwrap();
            assert!(
                served.claims.is_empty(),
                "served without the destination's lock"
            );
            assert_eq!(served.deferred, vec![(0, b"src".to_vec())]);
            txn.commit().unwrap();
            drop(guard);
            go_tx.send(()).unwrap();
            // Waits for the holder, then serves.
            served.finish(true, &reg, &store);
            holder.join().unwrap();
        });
        assert_eq!(w.take_served(), Some(Reply::bulk(&b"e"[..])));
        assert!(reg.is_empty());
        assert_eq!(reg.keys_waited_on(), 0);
        let txn = store.reader();
        let l = crate::cmd::lists::store::get_list(&txn, b"dst")
            .unwrap()
            .unwrap();
        assert_eq!(l.len(), 1);
        assert!(
            crate::cmd::lists::store::get_list(&txn, b"src")
                .unwrap()
                .is_none()
        );
    }
}
