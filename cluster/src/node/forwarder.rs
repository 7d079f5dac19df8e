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

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};

use super::config::NodeConfig;
use crate::net::client::{CallError, Transport};
use crate::net::wire::{Answer, Done, Op};
use crate::types::Request;

/// The most writes one call carries.
const MAX_WRITES: usize = 256;

/// The most entries in flight at once.
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

async fn run(transport: Transport, mut rx: mpsc::UnboundedReceiver<Waiting>, hold: Duration) {
    let slots = Arc::new(Semaphore::new(IN_FLIGHT));
    // A write for another address than the call being filled starts the next call.
    let mut carried: Option<Waiting> = None;
    loop {
        let first = match carried.take() {
            Some(w) => w,
            None => match rx.recv().await {
                Some(w) => w,
                None => return,
            },
        };
        let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let mut batch = vec![first];
        while batch.len() < MAX_WRITES {
            let Ok(w) = rx.try_recv() else { break };
            if w.addr != batch[0].addr {
                carried = Some(w);
                break;
            }
            batch.push(w);
        }
        // A write whose caller stopped waiting has been given up: not sending it is one of
        // the outcomes that allowed.
        batch.retain(|w| !w.done.is_closed());
        if batch.is_empty() {
            continue;
        }
        tokio::spawn(call(transport.clone(), batch, slot, hold));
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
    let sent = transport.forward(&addr, &op, timeout);
    tokio::pin!(sent);
    let mut slot = Some(slot);
    let result = loop {
        tokio::select! {
            r = &mut sent => break r,
            () = tokio::time::sleep(hold), if slot.is_some() => slot = None,
        }
    };
    drop(slot);
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
