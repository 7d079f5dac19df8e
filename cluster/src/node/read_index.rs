//! Linearizable reads share read indexes. Each read index costs the leader a round of
//! heartbeats to a quorum (and a follower a forward to the leader first), so concurrent
//! reads on one node ask once: a read that arrives while a request for the read index is
//! out waits for the next one, which starts after the current one ends. The next request
//! starts after the read arrived, so the index it returns covers every write acknowledged
//! before the read began, as the read's own request would have.
//!
//! A request that takes longer than a heartbeat interval (a leader that died, a node cut
//! off) stops holding back the reads behind it: the next request starts while it goes on,
//! so a read that arrives after a heal waits for a round of its own, not first for the end
//! of one that began during the fault.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::oneshot;

use super::core::Core;
use crate::error::{Error, Result};
use crate::net::wire::{Done, Op};

/// The reads waiting for the next read index, and whether a request for one is out.
#[derive(Default)]
pub(crate) struct ReadIndexes {
    round: Mutex<Round>,
}

#[derive(Default)]
struct Round {
    running: bool,
    waiting: Vec<oneshot::Sender<Result<u64>>>,
}

/// Each waiter's own copy of a round's error.
fn copy(e: &Error) -> Error {
    match e {
        Error::NoLeader { waited } => Error::NoLeader { waited: *waited },
        Error::Timeout { waited } => Error::Timeout { waited: *waited },
        Error::Stopped(s) => Error::Stopped(s.clone()),
        Error::Removed { id } => Error::Removed { id: *id },
        other => Error::Storage(other.to_string()),
    }
}

impl Core {
    /// A read index from the leader, shared with the reads that ask at the same time.
    pub(crate) async fn shared_read_index(self: &Arc<Core>) -> Result<u64> {
        let (tx, rx) = oneshot::channel();
        let start = {
            let mut r = self.read_indexes.round.lock();
            r.waiting.push(tx);
            !std::mem::replace(&mut r.running, true)
        };
        if start {
            tokio::spawn(rounds(Arc::clone(self)));
        }
        rx.await
            .unwrap_or_else(|_| Err(Error::Stopped("the read-index task stopped".into())))
    }
}

/// Asks for read indexes while reads wait for one, one request at a time (a slow one
/// aside, see the module's doc).
async fn rounds(core: Arc<Core>) {
    let mut running = Running {
        core: &core,
        ended: false,
    };
    loop {
        let waiting = {
            let mut r = core.read_indexes.round.lock();
            if r.waiting.is_empty() {
                r.running = false;
                running.ended = true;
                return;
            }
            std::mem::take(&mut r.waiting)
        };
        let round = tokio::spawn(round(Arc::clone(&core), waiting));
        // A round that panics drops its waiters' senders: they answer "stopped".
        let _ = tokio::time::timeout(core.config.heartbeat, round).await;
    }
}

/// One request for a read index, its answer handed to every read that waited for it.
async fn round(core: Arc<Core>, waiting: Vec<oneshot::Sender<Result<u64>>>) {
    let index = match core.route(Op::ReadIndex).await {
        Ok(Done::Index(i)) => Ok(i),
        Ok(other) => Err(Error::Storage(format!("a read index answered {other:?}"))),
        Err(e) => Err(e),
    };
    for tx in waiting {
        let _ = tx.send(index.as_ref().copied().map_err(copy));
    }
}

/// Clears the running flag if [`rounds`] ends other than by finding nobody waiting (a
/// panic, a runtime shutting down), so that the next read starts a new task instead of
/// waiting for one that is gone; the reads already queued are answered "stopped".
struct Running<'a> {
    core: &'a Core,
    ended: bool,
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if !self.ended {
            let mut r = self.core.read_indexes.round.lock();
            r.running = false;
            r.waiting.clear();
        }
    }
}
