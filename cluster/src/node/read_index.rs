//! Linearizable reads share read indexes. Each read index costs the leader a round of
//! heartbeats to a quorum (and a follower a forward to the leader first), so concurrent
//! reads on one node ask once: a read that arrives while a request for the read index is
//! out waits for the next one, which starts after the current one ends. The next request
//! starts after the read arrived, so the index it returns covers every write acknowledged
//! before the read began, as the read's own request would have.

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

/// Asks for read indexes while reads wait for one, one request at a time.
async fn rounds(core: Arc<Core>) {
    loop {
        let waiting = {
            let mut r = core.read_indexes.round.lock();
            if r.waiting.is_empty() {
                r.running = false;
                return;
            }
            std::mem::take(&mut r.waiting)
        };
        let index = match core.route(Op::ReadIndex).await {
            Ok(Done::Index(i)) => Ok(i),
            Ok(other) => Err(Error::Storage(format!("a read index answered {other:?}"))),
            Err(e) => Err(e),
        };
        for tx in waiting {
            let _ = tx.send(index.as_ref().copied().map_err(copy));
        }
    }
}
