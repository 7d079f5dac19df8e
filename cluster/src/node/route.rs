//! Routing an operation to the leader: this node serves it if it leads, otherwise it is
//! forwarded, following leader changes, until the request timeout.

use std::time::{Duration, Instant};

use super::core::Core;
use crate::error::{Error, Result};
use crate::net::client::CallError;
use crate::net::wire::{Answer, Done, Op};

impl Core {
    /// Routes `op` to the leader (this node or another), across elections and leader
    /// changes, within the request timeout.
    pub(crate) async fn route(&self, op: Op) -> Result<Done> {
        let core = self;
        let start = Instant::now();
        let deadline = start + core.config.request_timeout;
        let is_write = matches!(op, Op::Write(_));
        // Whether a write may have reached a leader's log (then the outcome is unknown).
        let mut maybe_applied = false;
        let mut hint: Option<(u64, String)> = None;
        loop {
            let now = Instant::now();
            if now >= deadline {
                let waited = start.elapsed();
                return Err(if maybe_applied {
                    Error::Timeout { waited }
                } else {
                    Error::NoLeader { waited }
                });
            }
            if core.raft.metrics().borrow().running_state.is_err() {
                return Err(Error::Stopped("the Raft core has stopped".into()));
            }
            let left = deadline - now;
            let target = hint.take().or_else(|| core.leader());
            let target_id = target.as_ref().map(|t| t.0);
            let answer = match target {
                None => {
                    self.wait_for_change(left).await;
                    continue;
                }
                Some((id, _)) if id == core.id => core.serve(&op, left).await,
                Some((id, addr)) => {
                    let attempt = left.min(core.config.forward_attempt_timeout);
                    // A leader that died with its machine answers nothing: the attempt would
                    // wait its whole timeout. Once another leader is known, the attempt is
                    // given up (its outcome unknown) and the request goes there, with the
                    // same request id, so it is applied once either way.
                    let send = async {
                        match &op {
                            Op::Write(req) => {
                                core.forwarder.forward(&addr, req.clone(), attempt).await
                            }
                            _ => core.transport.forward(&addr, &op, attempt).await,
                        }
                    };
                    let forwarded = tokio::select! {
                        r = send => r,
                        () = self.leader_other_than(id) => Err(CallError::Timeout),
                    };
                    match forwarded {
                        Ok(a) => a,
                        Err(CallError::NotSent(_)) => {
                            self.wait_for_change(left).await;
                            continue;
                        }
                        Err(CallError::Timeout | CallError::Broken(_)) => {
                            maybe_applied |= is_write;
                            continue;
                        }
                    }
                }
            };
            match answer {
                Answer::Ok(done) => return Ok(done),
                Answer::Stale => return Err(Error::Stale),
                Answer::Refused(why) => return Err(Error::Membership(why)),
                Answer::Unknown => maybe_applied |= is_write,
                Answer::NotLeader { leader, proposed } => {
                    maybe_applied |= is_write && proposed;
                    match leader {
                        Some(l) if Some(l.0) != target_id => hint = Some(l),
                        _ => self.wait_for_change(left).await,
                    }
                }
            }
        }
    }

    /// Resolves once this node knows of a leader other than `id` (never, if it shuts down).
    async fn leader_other_than(&self, id: u64) {
        let mut rx = self.raft.metrics();
        loop {
            if rx.borrow().current_leader.is_some_and(|l| l != id) {
                return;
            }
            if rx.changed().await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    /// Waits a little for the Raft metrics to change (a leader elected), at most `left`.
    async fn wait_for_change(&self, left: Duration) {
        let mut rx = self.raft.metrics();
        let pause = left.min(Duration::from_millis(50));
        let _ = tokio::time::timeout(pause, rx.changed()).await;
    }
}
