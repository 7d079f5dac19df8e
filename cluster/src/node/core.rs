//! What a node's API and its HTTP handlers share: the Raft handle, the state machine,
//! the transport, and serving an operation locally.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use bloomkv::env::Env;
use openraft::error::{CheckIsLeaderError, ClientWriteError, ForwardToLeader, RaftError};
use openraft::{BasicNode, ChangeMembers};

use super::config::NodeConfig;
use super::proposer::Proposer;
use super::status::{Events, Member, Role, Status};
use crate::clock::Stamp;
use crate::log_store::LogStore;
use crate::net::client::Transport;
use crate::net::wire::{Admin, Answer, Done, Op};
use crate::state_machine::Shared;
use crate::types::{Applied, Node, NodeId, Raft, Reply, Request};

pub(crate) struct Core {
    pub(crate) id: NodeId,
    pub(crate) raft: Raft,
    pub(crate) sm: Arc<Shared>,
    /// The log store's committed index (`LogStore::committed_handle`).
    pub(crate) committed: Arc<std::sync::atomic::AtomicU64>,
    pub(crate) env: Arc<dyn Env>,
    pub(crate) transport: Transport,
    pub(crate) config: NodeConfig,
    /// The log (its last log id, for pre-votes).
    pub(crate) log: LogStore,
    /// When this node last heard from a leader (for its own elections).
    pub(crate) contact: Stamp,
    /// When this node last granted another voter's pre-vote: it then holds back its own
    /// candidacy for a moment, so that the two do not split the vote.
    pub(crate) granted_prevote: Stamp,
    /// Set once this node learns it was removed from the cluster: it stops serving and
    /// campaigning (`events` sees the change applied; `election` hears it from the voters).
    pub(crate) removed: AtomicBool,
    /// Elections and leader changes, for INFO.
    pub(crate) counters: Counters,
    /// Client writes go into the log through it, several to an entry.
    pub(crate) proposer: Proposer,
    /// A follower's forwarded writes go to the leader through it, several to a call.
    pub(crate) forwarder: super::forwarder::Forwarder,
    /// Linearizable reads on this node share read indexes through it.
    pub(crate) read_indexes: super::read_index::ReadIndexes,
    /// Where this node's clients connect, once a server over it says ([`Status`]).
    pub(crate) client_addr: parking_lot::Mutex<Option<String>>,
}

/// The event counters behind [`Events`].
#[derive(Default)]
pub(crate) struct Counters {
    pub(crate) elections_started: AtomicU64,
    pub(crate) elections_won: AtomicU64,
    pub(crate) prevotes_lost: AtomicU64,
    pub(crate) leader_changes: AtomicU64,
}

impl Counters {
    fn read(&self) -> Events {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        Events {
            elections_started: get(&self.elections_started),
            elections_won: get(&self.elections_won),
            prevotes_lost: get(&self.prevotes_lost),
            leader_changes: get(&self.leader_changes),
        }
    }
}

impl Core {
    /// [`Error::Removed`] once this node knows it was removed.
    pub(crate) fn check_member(&self) -> crate::Result<()> {
        if self.removed.load(Ordering::Relaxed) {
            return Err(crate::Error::Removed { id: self.id });
        }
        Ok(())
    }

    /// Marks this node removed (once), and says so in the log.
    pub(crate) fn mark_removed(&self, how: &str) {
        if !self.removed.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                target: "bloomkv_cluster::events",
                "node {} was removed from the cluster ({how}): it no longer serves, votes or \
                 campaigns; to bring it back, stop it, empty its --dir and add it again",
                self.id
            );
        }
    }

    /// The leader this node knows of, with the address to reach it.
    pub(crate) fn leader(&self) -> Option<(NodeId, String)> {
        let m = self.raft.metrics();
        let m = m.borrow();
        let id = m.current_leader?;
        let addr = m.membership_config.membership().get_node(&id)?.addr.clone();
        Some((id, self.transport.routes.resolve(id, &addr)))
    }

    fn hint(&self, f: ForwardToLeader<NodeId, Node>) -> Option<(NodeId, String)> {
        let id = f.leader_id?;
        match f.leader_node {
            Some(n) => Some((id, self.transport.routes.resolve(id, &n.addr))),
            None => self.leader().filter(|(l, _)| *l == id),
        }
    }

    fn is_leader(&self) -> bool {
        self.raft.metrics().borrow().current_leader == Some(self.id)
    }

    /// Serves `op` on this node, waiting at most `wait`.
    pub(crate) async fn serve(&self, op: &Op, wait: Duration) -> Answer {
        match op {
            Op::Write(req) => self.propose(req.clone(), wait).await,
            Op::ReadIndex => self.read_index(wait).await,
            Op::Admin(a) => self.admin(a.clone(), wait).await,
            Op::Writes(reqs) => {
                if !self.is_leader() {
                    return Answer::NotLeader {
                        leader: self.leader(),
                        proposed: false,
                    };
                }
                let each = reqs.iter().map(|r| self.propose(r.clone(), wait));
                Answer::Ok(Done::Answers(futures_util::future::join_all(each).await))
            }
        }
    }

    async fn propose(&self, req: Request, wait: Duration) -> Answer {
        if !self.is_leader() {
            return Answer::NotLeader {
                leader: self.leader(),
                proposed: false,
            };
        }
        let (outcome, position) = match tokio::time::timeout(wait, self.proposer.propose(req)).await
        {
            Ok(Ok(share)) => share,
            // No answer in time, or the entry was given up: it may still be applied.
            Err(_) | Ok(Err(_)) => return Answer::Unknown,
        };
        match &*outcome {
            Ok(resp) => match &resp.data {
                Applied::Requests(replies) => match replies.get(position) {
                    Some(Reply::Response(b)) => Answer::Ok(Done::Reply(b.clone())),
                    Some(Reply::Stale) => Answer::Stale,
                    None => Answer::Refused(format!(
                        "the entry answered {} requests, not request {position}",
                        replies.len()
                    )),
                },
                Applied::Internal => {
                    Answer::Refused("a client write applied as an internal entry".into())
                }
            },
            Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f))) => Answer::NotLeader {
                leader: self.hint(f.clone()),
                proposed: true,
            },
            Err(RaftError::APIError(ClientWriteError::ChangeMembershipError(e))) => {
                Answer::Refused(e.to_string())
            }
            Err(RaftError::Fatal(_)) => Answer::NotLeader {
                leader: None,
                proposed: true,
            },
        }
    }

    async fn read_index(&self, wait: Duration) -> Answer {
        match tokio::time::timeout(wait, self.raft.get_read_log_id()).await {
            Err(_) => Answer::Unknown,
            Ok(Ok((read, _applied))) => Answer::Ok(Done::Index(read.map_or(0, |l| l.index))),
            Ok(Err(RaftError::APIError(CheckIsLeaderError::ForwardToLeader(f)))) => {
                Answer::NotLeader {
                    leader: self.hint(f),
                    proposed: false,
                }
            }
            // Leadership not confirmed by a quorum, or the core stopped: try again.
            Ok(Err(_)) => Answer::NotLeader {
                leader: None,
                proposed: false,
            },
        }
    }

    async fn admin(&self, a: Admin, wait: Duration) -> Answer {
        if self.is_leader()
            && let Some(why) = self.refusal(&a).await
        {
            return Answer::Refused(why);
        }
        let work = async {
            match a {
                Admin::AddLearner { id, addr } => {
                    // Not blocking on the learner's catch-up: that can take longer than any
                    // request timeout; its lag shows in the leader's status.
                    self.raft.add_learner(id, BasicNode { addr }, false).await
                }
                Admin::Promote { id, .. } => {
                    self.raft
                        .change_membership(ChangeMembers::AddVoterIds(BTreeSet::from([id])), false)
                        .await
                }
                Admin::Remove { id } => {
                    let voter = self
                        .raft
                        .metrics()
                        .borrow()
                        .membership_config
                        .membership()
                        .voter_ids()
                        .any(|v| v == id);
                    let change = if voter {
                        ChangeMembers::RemoveVoters(BTreeSet::from([id]))
                    } else {
                        ChangeMembers::RemoveNodes(BTreeSet::from([id]))
                    };
                    self.raft.change_membership(change, false).await
                }
            }
        };
        match tokio::time::timeout(wait, work).await {
            Err(_) => Answer::Unknown,
            Ok(Ok(_)) => Answer::Ok(Done::Unit),
            Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f)))) => {
                Answer::NotLeader {
                    leader: self.hint(f),
                    proposed: false,
                }
            }
            Ok(Err(RaftError::APIError(ClientWriteError::ChangeMembershipError(e)))) => {
                Answer::Refused(e.to_string())
            }
            Ok(Err(RaftError::Fatal(_))) => Answer::NotLeader {
                leader: None,
                proposed: false,
            },
        }
    }

    /// Why the leader refuses a membership change before proposing it, if it does: a node
    /// that is not a member removed, an even number of voters without `force`, a node
    /// added whose directory holds another membership's state or another node's id.
    async fn refusal(&self, a: &Admin) -> Option<String> {
        let membership = self.raft.metrics().borrow().membership_config.clone();
        let m = membership.membership();
        let voters: BTreeSet<NodeId> = m.voter_ids().collect();
        let members: BTreeSet<NodeId> = m.nodes().map(|(id, _)| *id).collect();
        match a {
            Admin::Remove { id } if !members.contains(id) => Some(format!(
                "node {id} is not a member of the cluster (members: {members:?})"
            )),
            Admin::Promote { id, force: false }
                if !voters.contains(id) && (voters.len() + 1).is_multiple_of(2) =>
            {
                Some(format!(
                    "promoting node {id} would make {} voters: an even number tolerates no more \
                     failures than {} and needs a larger majority; add one more node too, or \
                     force it (CLUSTER PROMOTE {id} FORCE, kvctl cluster add --force)",
                    voters.len() + 1,
                    voters.len()
                ))
            }
            Admin::AddLearner { id, addr } if !members.contains(id) => {
                let status = self
                    .transport
                    .get_json::<Status>(
                        &self.transport.routes.resolve(*id, addr),
                        "/status",
                        self.config.forward_attempt_timeout,
                    )
                    .await
                    .ok()?;
                if status.id != *id {
                    return Some(format!(
                        "the node at {addr} is node {}, not node {id}",
                        status.id
                    ));
                }
                (!status.members.is_empty() || status.last_log_index.is_some()).then(|| {
                    format!(
                        "node {id} at {addr} holds state from an earlier membership (term {}, \
                         last log index {:?}): stop it, empty its --dir, start it without \
                         --initial-cluster, then add it again",
                        status.term, status.last_log_index
                    )
                })
            }
            _ => None,
        }
    }

    /// This node's status, from the Raft metrics.
    pub(crate) fn status(&self) -> Status {
        let m = self.raft.metrics();
        let m = m.borrow();
        let role = Role::from(m.state);
        let membership = m.membership_config.membership();
        let voters: BTreeSet<NodeId> = membership.voter_ids().collect();
        let members = membership
            .nodes()
            .map(|(id, node)| {
                let matched = m
                    .replication
                    .as_ref()
                    .and_then(|r| r.get(id).map(|l| l.map(|l| l.index)))
                    .flatten();
                let matched = if *id == self.id && role == Role::Leader {
                    m.last_log_index
                } else {
                    matched
                };
                Member {
                    id: *id,
                    addr: node.addr.clone(),
                    voter: voters.contains(id),
                    matched_index: matched,
                    lag: match (role, m.last_log_index) {
                        (Role::Leader, Some(last)) => {
                            Some(last.saturating_sub(matched.unwrap_or(0)))
                        }
                        _ => None,
                    },
                }
            })
            .collect();
        Status {
            id: self.id,
            role,
            term: m.current_term,
            leader: m.current_leader,
            last_log_index: m.last_log_index,
            // Never below what this node applied (applied entries are committed; the saved
            // value may trail it for a moment).
            committed_index: crate::log_store::committed_index(&self.committed)
                .max(m.last_applied.map(|l| l.index)),
            applied_index: m.last_applied.map(|l| l.index),
            snapshot_index: m.snapshot.map(|l| l.index),
            purged_index: m.purged.map(|l| l.index),
            millis_since_quorum_ack: m.millis_since_quorum_ack,
            events: self.counters.read(),
            members,
            client_addr: self.client_addr.lock().clone(),
        }
    }
}
