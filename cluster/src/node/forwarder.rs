//! A follower's forwarded writes travel together. Each client write a follower receives
//! goes to the leader; one HTTP call per write costs the follower, the leader and the
//! link a round each. Here at most two calls per follower are out at once, and the writes
//! that arrive meanwhile go to the leader in the next call, as one [`Op::Writes`]; the
//! leader proposes them (into one entry, by its own group commit) and answers each. A
//! write's outcome is its own answer: retries, leader changes and "maybe applied" work per
//! write exactly as for a write sent alone.
//!
//! A call that takes longer than a heartbeat interval (a leader that died) gives its slot
//! to the next call, so writes re-routed to a new leader are not held behind it.

use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};

use super::batch::{Batches, holding_slot};
use super::config::NodeConfig;
use crate::net::client::{CallError, Transport};
use crate::net::wire::{Answer, Done, Op};
use crate::types::Request;

/// The most writes one call carries.
const MAX_WRITES: usize = 256;

/// The most calls out at once.
const IN_FLIGHT: usize = 2;

type Outcome = Result<Answer, CallError>;

struct Waiting {
    addr: String,
    request: Request,
    timeout: Duration,
    done: oneshot::Sender<Outcome>,
}

/// The handle writes are forwarded through; the batching task ends when it is dropped.
pub(crate) struct Forwarder {
    tx: mpsc::UnboundedSender<Waiting>,
}

impl Forwarder {
    /// Starts the batching task on the current runtime.
    pub(crate) fn start(transport: Transport, config: &NodeConfig) -> Forwarder {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(transport, rx, config.heartbeat));
        Forwarder { tx }
    }

    /// Forwards `request` to the leader at `addr`, waiting at most `timeout` for its
    /// answer. Dropping the future gives the write up (its outcome is then unknown, as for
    /// any call given up).
    pub(crate) async fn forward(&self, addr: &str, request: Request, timeout: Duration) -> Outcome {
        let (done, rx) = oneshot::channel();
        let w = Waiting {
            addr: addr.to_string(),
            request,
            timeout,
            done,
        };
        if self.tx.send(w).is_err() {
            return Err(CallError::NotSent("the node is stopping".into()));
        }
        match tokio::time::timeout(timeout + Duration::from_millis(200), rx).await {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(_)) => Err(CallError::Broken("the forwarding task stopped".into())),
            Err(_) => Err(CallError::Timeout),
        }
    }
}

async fn run(transport: Transport, rx: mpsc::UnboundedReceiver<Waiting>, hold: Duration) {
    let mut batches = Batches::new(rx, IN_FLIGHT, MAX_WRITES);
    // A write for another address than the call being filled starts the next call.
    let same_leader = |first: &Waiting, next: &Waiting| next.addr == first.addr;
    // A write whose caller stopped waiting has been given up: not sending it is one of
    // the outcomes that allowed.
    let gone = |w: &Waiting| w.done.is_closed();
    while let Some((batch, slot)) = batches.next(same_leader, |_| 0, usize::MAX, gone).await {
        if !batch.is_empty() {
            tokio::spawn(call(transport.clone(), batch, slot, hold));
        }
    }
}

/// Sends `batch` in one call and hands each write its answer.
async fn call(
    transport: Transport,
    batch: Vec<Waiting>,
    slot: OwnedSemaphorePermit,
    hold: Duration,
) {
    let addr = batch[0].addr.clone();
    let timeout = batch.iter().map(|w| w.timeout).max().unwrap_or_default();
    let n = batch.len();
    let (requests, waiters): (Vec<Request>, Vec<oneshot::Sender<Outcome>>) =
        batch.into_iter().map(|w| (w.request, w.done)).unzip();
    let op = Op::Writes(requests);
    let result = holding_slot(transport.forward(&addr, &op, timeout), slot, hold).await;
    match result {
        Ok(Answer::Ok(Done::Answers(answers))) if answers.len() == n => {
            for (done, a) in waiters.into_iter().zip(answers) {
                let _ = done.send(Ok(a));
            }
        }
        Ok(Answer::Ok(other)) => {
            let why = format!("{n} forwarded writes answered {other:?}");
            for done in waiters {
                let _ = done.send(Err(CallError::Broken(why.clone())));
            }
        }
        Ok(a) => {
            for done in waiters {
                let _ = done.send(Ok(a.clone()));
            }
        }
        Err(e) => {
            for done in waiters {
                let _ = done.send(Err(e.clone()));
            }
        }
    }
}
