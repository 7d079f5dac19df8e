//! The leader's group commit: client requests that reach the leader while its earlier
//! proposals are still in flight wait here, and go into the log together as one entry.
//!
//! openraft 0.9's core hands the log one append per entry and waits for that append's
//! fsync before it appends the next, so a leader that proposed every request as an entry
//! of its own wrote at most one request per fsync, however many clients were waiting. Here
//! at most `in_flight` entries are proposed at once; whatever arrives meanwhile becomes the
//! next entry (up to `max_requests` requests and [`MAX_ENTRY_BYTES`] of bodies). A lone
//! request on an idle leader is proposed at once: batching adds no wait of its own, only
//! the wait for a free slot that the log imposed anyway.
//!
//! An entry that takes longer than a heartbeat interval (a leader losing its majority: its
//! entry waits until a later leader commits or truncates it) gives its slot to the next
//! entry, so the slots never all hang on entries that may never be answered; it is given
//! up after the request timeout, and its callers see their answer channel closed.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use openraft::error::{ClientWriteError, RaftError};
use openraft::raft::ClientWriteResponse;
use tokio::sync::{OwnedSemaphorePermit, mpsc, oneshot};

use super::batch::{Batches, holding_slot};
use super::config::NodeConfig;
use crate::types::{Node, NodeId, Proposal, Raft, Request, TypeConfig};

/// Bodies beyond this size in one entry start the next entry (a single larger request
/// still goes, alone).
pub(crate) const MAX_ENTRY_BYTES: usize = 1 << 20;

/// What `client_write` of one entry returned, shared by every request in it.
pub(crate) type Outcome =
    Arc<Result<ClientWriteResponse<TypeConfig>, RaftError<NodeId, ClientWriteError<NodeId, Node>>>>;

/// A request's share of its entry's outcome: the outcome and the request's position.
pub(crate) type Share = (Outcome, usize);

struct Waiting {
    request: Request,
    done: oneshot::Sender<Share>,
}

/// The handle requests are proposed through; the batching task ends when it is dropped.
pub(crate) struct Proposer {
    tx: mpsc::UnboundedSender<Waiting>,
}

impl Proposer {
    /// Starts the batching task on the current runtime, proposing through `raft` with
    /// `config`'s bounds (entries in flight, requests per entry, heartbeat, request
    /// timeout).
    pub(crate) fn start(raft: Raft, config: &NodeConfig) -> Proposer {
        let (tx, rx) = mpsc::unbounded_channel();
        let limits = Limits {
            in_flight: config.proposals_in_flight.max(1),
            max_requests: config.max_requests_per_entry.max(1),
            hold: config.heartbeat,
            give_up: config.request_timeout,
        };
        tokio::spawn(run(raft, rx, limits));
        Proposer { tx }
    }

    /// Queues `request` for the next entry. The receiver gets the entry's outcome, or is
    /// closed unanswered if the node's Raft core stopped first.
    pub(crate) fn propose(&self, request: Request) -> oneshot::Receiver<Share> {
        let (done, rx) = oneshot::channel();
        // A closed channel (the task ended with the node) drops `done`: the caller sees
        // its receiver closed.
        let _ = self.tx.send(Waiting { request, done });
        rx
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[derive(Clone, Copy)]
struct Limits {
    in_flight: usize,
    max_requests: usize,
    /// How long an entry keeps its slot.
    hold: Duration,
    /// How long an entry is waited for at all.
    give_up: Duration,
}

async fn run(raft: Raft, rx: mpsc::UnboundedReceiver<Waiting>, limits: Limits) {
    let mut batches = Batches::new(rx, limits.in_flight, limits.max_requests);
    // A request whose caller stopped waiting (it answered "unknown") is left out: not
    // applying it is one of the outcomes that answer allowed.
    let gone = |w: &Waiting| w.done.is_closed();
    let body = |w: &Waiting| w.request.body.len();
    while let Some((batch, slot)) = batches.next(|_, _| true, body, MAX_ENTRY_BYTES, gone).await {
        if !batch.is_empty() {
            tokio::spawn(propose(raft.clone(), batch, slot, limits));
        }
    }
}

/// Proposes `batch` as one entry and hands each caller its share of the outcome.
async fn propose(raft: Raft, batch: Vec<Waiting>, slot: OwnedSemaphorePermit, limits: Limits) {
    // The leader's clock, taken once: every node applies the entry with this time.
    let time_ms = now_ms();
    let (requests, waiters): (Vec<Request>, Vec<oneshot::Sender<Share>>) = batch
        .into_iter()
        .map(|mut w| {
            w.request.time_ms = time_ms;
            (w.request, w.done)
        })
        .unzip();
    let write = raft.client_write(Proposal { requests });
    let result = holding_slot(
        tokio::time::timeout(limits.give_up, write),
        slot,
        limits.hold,
    )
    .await
    .ok();
    // Given up: the waiters' channels close unanswered (the entry may still be applied).
    let Some(result) = result else { return };
    let outcome = Arc::new(result);
    for (position, done) in waiters.into_iter().enumerate() {
        let _ = done.send((Arc::clone(&outcome), position));
    }
}
