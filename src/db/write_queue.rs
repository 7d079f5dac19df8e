//! Group commit (LevelDB's writer queue): concurrent writers line up, and one of them, the
//! leader, commits the batches of those waiting behind it together with its own — one WAL
//! flush, and with `sync_writes` one fsync, for the whole group — while the others sleep
//! until it tells them how their batch fared.
//!
//! A writer that finds no leader at work leads at once: one compare-and-swap, no lock, no
//! allocation, so a writer alone pays next to nothing for the queue. A writer that finds a
//! leader at work lines up; when the leader is done it hands the lead to the first writer
//! waiting, so waiting writers are served in arrival order (one arriving just then may lead
//! first, and then takes the waiting writers into its group).

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::db::batch::WriteBatch;
use crate::error::{Error, Result};

/// A group grows to at most this many bytes of batches...
const MAX_GROUP_BYTES: usize = 1 << 20;
/// ...and, when its leader's own batch is small, to at most this much beyond it, so a small
/// write is not made to wait for a megabyte of others (LevelDB's limits).
const SMALL_BATCH: usize = 128 << 10;

/// The line of writers.
///
/// The hand-over between a leader finishing and a writer lining up uses two flags, each
/// written before the other is read (sequentially consistent): the leader clears `leading`,
/// then looks at `waiting_len`; a writer lining up raises `waiting_len`, then tries to set
/// `leading`. At least one of them sees the other, and whichever then wins `leading` hands
/// the lead to the first writer waiting; so no writer waits while no one leads.
#[derive(Default)]
pub(crate) struct WriteQueue {
    /// A leader is committing a group now.
    leading: AtomicBool,
    waiting: Mutex<VecDeque<Arc<Waiter>>>,
    /// `waiting.len()`, readable without the lock.
    waiting_len: AtomicUsize,
}

/// One waiting writer. Its slot is only touched with the queue's lock held (the slot's own
/// lock is never contended); its condvar waits on the queue's lock.
#[derive(Default)]
struct Waiter {
    wake: Condvar,
    slot: Mutex<Slot>,
}

#[derive(Default)]
struct Slot {
    /// The batch, until a leader takes it into its group.
    batch: Option<WriteBatch>,
    /// Set by the leader that committed the batch.
    outcome: Option<Result<()>>,
    /// Set when this writer is to lead the next group (its batch is still in `batch`).
    lead: bool,
}

/// What a writer joining the queue is to do.
pub(crate) enum Turn<'a> {
    /// Another writer's group committed the batch, with this outcome.
    Done(Result<()>),
    /// Lead a group, starting with the batch.
    Lead(Leader<'a>),
}

/// The writer leading a group. Dropping it without [`Leader::finish`] (a panic while
/// committing) fails the followers it took and still hands the lead on, so no writer waits
/// forever.
pub(crate) struct Leader<'a> {
    queue: &'a WriteQueue,
    group: Group,
    /// The writers whose batches follow the leader's in the group, in the same order.
    followers: Vec<Arc<Waiter>>,
    finished: bool,
}

/// A commit group's batches: the leader's, then its followers' in arrival order. (Two
/// fields rather than one vector: a writer alone allocates nothing for its group.)
pub(crate) struct Group {
    first: WriteBatch,
    rest: Vec<WriteBatch>,
}

impl Group {
    /// The batches, in commit order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &WriteBatch> {
        std::iter::once(&self.first).chain(&self.rest)
    }

    /// The batches, in commit order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut WriteBatch> {
        std::iter::once(&mut self.first).chain(&mut self.rest)
    }

    /// How many batches.
    pub(crate) fn len(&self) -> usize {
        1 + self.rest.len()
    }
}

impl WriteQueue {
    /// Lines `batch` up: returns [`Turn::Lead`] at once if no leader is at work, else waits
    /// until a leader has committed the batch ([`Turn::Done`]) or hands this writer the lead.
    pub(crate) fn join(&self, batch: WriteBatch) -> Turn<'_> {
        if self
            .leading
            .compare_exchange(false, true, SeqCst, SeqCst)
            .is_ok()
        {
            return Turn::Lead(Leader::new(self, batch));
        }
        let me = Arc::new(Waiter::default());
        me.slot.lock().batch = Some(batch);
        let mut q = self.waiting.lock();
        q.push_back(Arc::clone(&me));
        self.waiting_len.store(q.len(), SeqCst);
        // The leader may have finished after the swap above failed, too early to see this
        // writer: then the lead is free, and goes to the first writer waiting.
        self.hand_on_if_free(&mut q);
        loop {
            {
                let mut slot = me.slot.lock();
                if let Some(outcome) = slot.outcome.take() {
                    return Turn::Done(outcome);
                }
                if slot.lead {
                    let batch = slot.batch.take().unwrap_or_default();
                    return Turn::Lead(Leader::new(self, batch));
                }
            }
            me.wake.wait(&mut q);
        }
    }

    /// If no one leads and a writer waits, makes the first writer waiting the leader.
    fn hand_on_if_free(&self, q: &mut MutexGuard<'_, VecDeque<Arc<Waiter>>>) {
        if q.is_empty()
            || self
                .leading
                .compare_exchange(false, true, SeqCst, SeqCst)
                .is_err()
        {
            return;
        }
        if let Some(next) = q.pop_front() {
            self.waiting_len.store(q.len(), SeqCst);
            next.slot.lock().lead = true;
            next.wake.notify_one();
        }
    }
}

impl<'a> Leader<'a> {
    fn new(queue: &'a WriteQueue, batch: WriteBatch) -> Leader<'a> {
        Leader {
            queue,
            group: Group {
                first: batch,
                rest: Vec::new(),
            },
            followers: Vec::new(),
            finished: false,
        }
    }

    /// Takes the batches of the writers waiting now into the group (in arrival order, up to
    /// the group's size limit) and returns the group.
    pub(crate) fn gather(&mut self) -> &mut Group {
        if self.queue.waiting_len.load(SeqCst) == 0 {
            return &mut self.group;
        }
        let first = self.group.first.approximate_size();
        let limit = if first <= SMALL_BATCH {
            first + SMALL_BATCH
        } else {
            MAX_GROUP_BYTES.max(first)
        };
        let mut size = first;
        let mut q = self.queue.waiting.lock();
        while let Some(next) = q.front() {
            let mut slot = next.slot.lock();
            let Some(bytes) = slot.batch.as_ref().map(|b| b.approximate_size()) else {
                break;
            };
            if size + bytes > limit {
                break;
            }
            size += bytes;
            if let Some(batch) = slot.batch.take() {
                self.group.rest.push(batch);
            }
            drop(slot);
            if let Some(w) = q.pop_front() {
                self.followers.push(w);
            }
        }
        self.queue.waiting_len.store(q.len(), SeqCst);
        &mut self.group
    }

    /// Tells every follower the group's outcome (each gets its own copy of an error), hands
    /// the lead to the first writer still waiting, and returns the leader's own outcome.
    pub(crate) fn finish(mut self, outcome: Result<()>) -> Result<()> {
        self.finished = true;
        self.release(&outcome);
        outcome
    }

    fn release(&mut self, outcome: &Result<()>) {
        if !self.followers.is_empty() {
            let _q = self.queue.waiting.lock();
            for f in self.followers.drain(..) {
                f.slot.lock().outcome = Some(match outcome {
                    Ok(()) => Ok(()),
                    Err(e) => Err(e.duplicate()),
                });
                f.wake.notify_one();
            }
        }
        self.queue.leading.store(false, SeqCst);
        if self.queue.waiting_len.load(SeqCst) > 0 {
            self.queue.hand_on_if_free(&mut self.queue.waiting.lock());
        }
    }
}

impl Drop for Leader<'_> {
    fn drop(&mut self) {
        if !self.finished {
            self.release(&Err(Error::WritesStopped(
                "the writer committing this batch's group panicked".into(),
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn batch(key: &str, value_bytes: usize) -> WriteBatch {
        let mut b = WriteBatch::new();
        b.put(key, vec![0u8; value_bytes]);
        b
    }

    /// Followers that queue behind a leader are committed in its group (or a later one),
    /// and each learns its outcome.
    #[test]
    fn waiting_writers_are_committed_in_groups_in_order() {
        let q = Arc::new(WriteQueue::default());
        let committed = Arc::new(Mutex::new(Vec::<Vec<usize>>::new()));
        let leads = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let (q, committed, leads) =
                    (Arc::clone(&q), Arc::clone(&committed), Arc::clone(&leads));
                std::thread::spawn(move || match q.join(batch(&format!("k{i}"), 10)) {
                    Turn::Done(r) => r,
                    Turn::Lead(mut l) => {
                        leads.fetch_add(1, Ordering::SeqCst);
                        // Slow enough that others line up behind.
                        std::thread::sleep(std::time::Duration::from_millis(5));
                        let sizes = l.gather().iter().map(|b| b.approximate_size()).collect();
                        committed.lock().push(sizes);
                        l.finish(Ok(()))
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap().unwrap();
        }
        let groups = committed.lock();
        let all: usize = groups.iter().map(Vec::len).sum();
        assert_eq!(all, 16, "{groups:?}");
        assert_eq!(leads.load(Ordering::SeqCst), groups.len());
        assert!(
            groups.len() < 16,
            "no two writers shared a group: {groups:?}"
        );
    }

    /// Many writers with leaders that finish at once: the hand-over between a leader
    /// finishing and a writer lining up never leaves a writer waiting with no one leading
    /// (the test would hang), and every batch is committed exactly once.
    #[test]
    fn no_writer_is_left_waiting_without_a_leader() {
        let q = Arc::new(WriteQueue::default());
        let committed = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (q, committed) = (Arc::clone(&q), Arc::clone(&committed));
                std::thread::spawn(move || {
                    for _ in 0..5000 {
                        match q.join(batch("k", 1)) {
                            Turn::Done(r) => r.unwrap(),
                            Turn::Lead(mut l) => {
                                committed.fetch_add(l.gather().len(), Ordering::SeqCst);
                                l.finish(Ok(())).unwrap();
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(committed.load(Ordering::SeqCst), 8 * 5000);
        assert!(!q.leading.load(SeqCst));
        assert_eq!(q.waiting_len.load(SeqCst), 0);
    }

    /// A failed group fails every batch in it.
    #[test]
    fn a_failed_group_fails_each_of_its_writers() {
        let q = Arc::new(WriteQueue::default());
        let Turn::Lead(mut first) = q.join(batch("lead", 1)) else {
            panic!("an idle queue leads at once");
        };
        let followers: Vec<_> = (0..3)
            .map(|i| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || match q.join(batch(&format!("f{i}"), 1)) {
                    Turn::Done(r) => r,
                    Turn::Lead(l) => l.finish(Ok(())),
                })
            })
            .collect();
        while q.waiting_len.load(SeqCst) < 3 {
            std::thread::yield_now();
        }
        assert_eq!(first.gather().len(), 4);
        let e = first
            .finish(Err(Error::Io {
                path: None,
                source: std::io::Error::other("disk gone"),
            }))
            .unwrap_err();
        assert!(e.to_string().contains("disk gone"));
        for f in followers {
            let e = f.join().unwrap().unwrap_err();
            assert!(e.to_string().contains("disk gone"), "{e}");
        }
        assert!(!q.leading.load(SeqCst));
    }

    /// A group stops growing at its size limit; the rest lead later groups.
    #[test]
    fn a_group_stops_at_its_size_limit() {
        let q = Arc::new(WriteQueue::default());
        let Turn::Lead(mut first) = q.join(batch("lead", 100)) else {
            panic!("an idle queue leads at once");
        };
        let followers: Vec<_> = (0..3)
            .map(|i| {
                let q = Arc::clone(&q);
                std::thread::spawn(move || match q.join(batch(&format!("f{i}"), 100 << 10)) {
                    Turn::Done(r) => r.map(|()| false),
                    Turn::Lead(mut l) => {
                        l.gather();
                        l.finish(Ok(())).map(|()| true)
                    }
                })
            })
            .collect();
        while q.waiting_len.load(SeqCst) < 3 {
            std::thread::yield_now();
        }
        // 100 bytes + 128 KiB: room for one 100 KiB follower.
        assert_eq!(first.gather().len(), 2);
        first.finish(Ok(())).unwrap();
        let led = followers
            .into_iter()
            .map(|f| f.join().unwrap().unwrap())
            .filter(|&led| led)
            .count();
        assert!(led >= 1, "the writers left out lead later groups");
    }

    #[test]
    fn a_leader_that_panics_fails_its_group_and_hands_the_lead_on() {
        let q = Arc::new(WriteQueue::default());
        let Turn::Lead(mut first) = q.join(batch("lead", 1)) else {
            panic!("an idle queue leads at once");
        };
        let follower = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || match q.join(batch("f", 1)) {
                Turn::Done(r) => r,
                Turn::Lead(l) => l.finish(Ok(())),
            })
        };
        while q.waiting_len.load(SeqCst) == 0 {
            std::thread::yield_now();
        }
        first.gather();
        drop(first);
        assert!(follower.join().unwrap().is_err());
        // The queue works on.
        let Turn::Lead(l) = q.join(batch("after", 1)) else {
            panic!("the lead was handed back");
        };
        l.finish(Ok(())).unwrap();
    }
}
