//! What the leader's group commit ([`super::proposer`]) and a follower's forwarding
//! ([`super::forwarder`]) share: a queue of waiting calls, drained into batches while at
//! most a few batches are out, and a batch that stops holding its slot when it is slow.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// A queue drained into batches, at most `in_flight` of them out at once.
pub(crate) struct Batches<T> {
    rx: mpsc::UnboundedReceiver<T>,
    slots: Arc<Semaphore>,
    max: usize,
    /// An item that did not fit the previous batch: it starts the next one.
    carried: Option<T>,
}

impl<T> Batches<T> {
    pub(crate) fn new(rx: mpsc::UnboundedReceiver<T>, in_flight: usize, max: usize) -> Batches<T> {
        Batches {
            rx,
            slots: Arc::new(Semaphore::new(in_flight.max(1))),
            max: max.max(1),
            carried: None,
        }
    }

    /// Waits for an item and a free slot, then takes what else is queued, up to the most
    /// a batch holds, while `fits(batch, next)`; `None` once the queue is closed. Items
    /// that `gone` says nobody waits for any more are left out (a batch may then be
    /// empty: the caller skips it).
    pub(crate) async fn next(
        &mut self,
        mut fits: impl FnMut(&[T], &T) -> bool,
        gone: impl Fn(&T) -> bool,
    ) -> Option<(Vec<T>, OwnedSemaphorePermit)> {
        let first = match self.carried.take() {
            Some(x) => x,
            None => self.rx.recv().await?,
        };
        let slot = Arc::clone(&self.slots).acquire_owned().await.ok()?;
        // Everything that arrived while the slots were taken joins this batch.
        let mut batch = vec![first];
        while batch.len() < self.max {
            let Ok(x) = self.rx.try_recv() else { break };
            if !fits(&batch, &x) {
                self.carried = Some(x);
                break;
            }
            batch.push(x);
        }
        batch.retain(|x| !gone(x));
        Some((batch, slot))
    }
}

/// Runs `work`, giving its slot up after `hold` if it has not finished by then, so that a
/// batch that may never be answered (a leader that died or lost its majority) does not
/// hold back the batches behind it.
pub(crate) async fn holding_slot<F: Future>(
    work: F,
    slot: OwnedSemaphorePermit,
    hold: Duration,
) -> F::Output {
    tokio::pin!(work);
    tokio::select! {
        r = &mut work => r,
        () = tokio::time::sleep(hold) => {
            drop(slot);
            work.await
        }
    }
}
