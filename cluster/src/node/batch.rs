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
    /// a batch holds: items that `joins(first, next)` allows, while the sum of their
    /// `weight`s stays within `max_weight` (the first item goes even if heavier); `None`
    /// once the queue is closed. Items that `gone` says nobody waits for any more are left
    /// out (a batch may then be empty: the caller skips it).
    pub(crate) async fn next(
        &mut self,
        joins: impl Fn(&T, &T) -> bool,
        weight: impl Fn(&T) -> usize,
        max_weight: usize,
        gone: impl Fn(&T) -> bool,
    ) -> Option<(Vec<T>, OwnedSemaphorePermit)> {
        let first = match self.carried.take() {
            Some(x) => x,
            None => self.rx.recv().await?,
        };
        let slot = Arc::clone(&self.slots).acquire_owned().await.ok()?;
        // Everything that arrived while the slots were taken joins this batch.
        let mut total = weight(&first);
        let mut batch = vec![first];
        while batch.len() < self.max {
            let Ok(x) = self.rx.try_recv() else { break };
            let w = weight(&x);
            if !joins(&batch[0], &x) || total.saturating_add(w) > max_weight {
                self.carried = Some(x);
                break;
            }
            total += w;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn batches_keep_to_their_weight_and_group_and_carry_the_rest() {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut b = Batches::new(rx, 1, 3);
        // (group, weight)
        for item in [
            (1, 5),
            (1, 4),
            (1, 2),
            (1, 1),
            (2, 1),
            (2, 1),
            (2, 1),
            (2, 1),
        ] {
            tx.send(item).unwrap();
        }
        let joins = |a: &(u8, usize), b: &(u8, usize)| a.0 == b.0;
        let weight = |x: &(u8, usize)| x.1;
        let never = |_: &(u8, usize)| false;
        // 5 + 4 would pass 8: the second item starts the next batch.
        let (batch, slot) = b.next(joins, weight, 8, never).await.unwrap();
        assert_eq!(batch, [(1, 5)]);
        drop(slot);
        let (batch, slot) = b.next(joins, weight, 8, never).await.unwrap();
        assert_eq!(batch, [(1, 4), (1, 2), (1, 1)]);
        drop(slot);
        // At most 3 a batch; another group starts a batch of its own.
        let (batch, slot) = b.next(joins, weight, 8, never).await.unwrap();
        assert_eq!(batch, [(2, 1), (2, 1), (2, 1)]);
        drop(slot);
        let (batch, slot) = b.next(joins, weight, 8, |x| x.0 == 2).await.unwrap();
        assert!(batch.is_empty(), "an item nobody waits for is left out");
        drop(slot);
        // A heavy first item goes alone.
        tx.send((3, 100)).unwrap();
        drop(tx);
        let (batch, _slot) = b.next(joins, weight, 8, never).await.unwrap();
        assert_eq!(batch, [(3, 100)]);
        assert!(
            b.next(joins, weight, 8, never).await.is_none(),
            "the queue closed"
        );
    }

    #[tokio::test]
    async fn a_slow_batch_gives_its_slot_up() {
        let (tx, rx) = mpsc::unbounded_channel::<u8>();
        let mut b = Batches::new(rx, 1, 4);
        tx.send(1).unwrap();
        let (_, slot) = b.next(|_, _| true, |_| 0, 0, |_| false).await.unwrap();
        let (release, wait) = oneshot_pair();
        let slow = tokio::spawn(holding_slot(wait, slot, Duration::from_millis(20)));
        // The only slot comes back while the first batch still waits.
        tx.send(2).unwrap();
        let (batch, _slot) = b.next(|_, _| true, |_| 0, 0, |_| false).await.unwrap();
        assert_eq!(batch, [2]);
        let _ = release.send(());
        slow.await.unwrap().unwrap();
    }

    fn oneshot_pair() -> (
        tokio::sync::oneshot::Sender<()>,
        tokio::sync::oneshot::Receiver<()>,
    ) {
        tokio::sync::oneshot::channel()
    }
}
