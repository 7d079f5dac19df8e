//! A [`Node`] as bloomkv-server's [`Replicator`].
//!
//! The server runs its own tokio runtime; the node runs on another (its HTTP client and
//! Raft tasks are bound to it). Every call is spawned on the node's runtime and awaited
//! through its join handle, which any runtime may await.

use std::sync::Arc;

use bloomkv_server::replica::{
    MemberInfo, Membership, NodeStatus, PeerReport, Pending, RaftEvents, RaftRole, ReplicaError,
    Replicator,
};
use tokio::runtime::Handle;

use crate::error::Error;
use crate::node::Node;
use crate::node::status::{Role, Status};

/// [`Replicator`] over a [`Node`] running on the runtime `rt`.
#[derive(Debug, Clone)]
pub struct NodeReplicator {
    node: Arc<Node>,
    rt: Handle,
}

impl NodeReplicator {
    /// Wraps `node`, which runs on `rt`.
    pub fn new(node: Arc<Node>, rt: Handle) -> NodeReplicator {
        NodeReplicator { node, rt }
    }

    fn run<T: Send + 'static>(
        &self,
        f: impl std::future::Future<Output = Result<T, Error>> + Send + 'static,
    ) -> Pending<Result<T, ReplicaError>> {
        let h = self.rt.spawn(f);
        Box::pin(async move {
            match h.await {
                Ok(r) => r.map_err(map_error),
                Err(e) => Err(ReplicaError::Unknown(format!(
                    "the node's task failed: {e}"
                ))),
            }
        })
    }
}

/// How a node's error reaches a client: not applied (`CLUSTERDOWN`), perhaps applied
/// (`TRYAGAIN`), or refused.
fn map_error(e: Error) -> ReplicaError {
    match e {
        Error::NoLeader { .. } | Error::Stale => ReplicaError::NoLeader(e.to_string()),
        Error::Membership(_) | Error::Config(_) | Error::Removed { .. } => {
            ReplicaError::Refused(e.to_string())
        }
        // The client's reply says "may or may not have been applied" itself.
        Error::Timeout { waited } => ReplicaError::Unknown(format!(
            "no answer from the leader within {} ms",
            waited.as_millis()
        )),
        _ => ReplicaError::Unknown(e.to_string()),
    }
}

/// The server's view of a node's [`Status`].
pub fn node_status(s: &Status) -> NodeStatus {
    NodeStatus {
        id: s.id,
        role: match s.role {
            Role::Leader => RaftRole::Leader,
            Role::Follower => RaftRole::Follower,
            Role::Candidate => RaftRole::Candidate,
            Role::Learner => RaftRole::Learner,
            Role::Shutdown => RaftRole::Shutdown,
        },
        term: s.term,
        leader: s.leader,
        last_log_index: s.last_log_index,
        committed_index: s.committed_index,
        applied_index: s.applied_index,
        snapshot_index: s.snapshot_index,
        purged_index: s.purged_index,
        client_addr: s.client_addr.clone(),
        members: s
            .members
            .iter()
            .map(|m| MemberInfo {
                id: m.id,
                addr: m.addr.clone(),
                voter: m.voter,
                matched_index: m.matched_index,
                lag: m.lag,
            })
            .collect(),
        events: RaftEvents {
            elections_started: s.events.elections_started,
            elections_won: s.events.elections_won,
            prevotes_lost: s.events.prevotes_lost,
            leader_changes: s.events.leader_changes,
        },
    }
}

impl Replicator for NodeReplicator {
    fn node_id(&self) -> u64 {
        self.node.id()
    }

    fn propose(&self, request: Vec<u8>) -> Pending<Result<Vec<u8>, ReplicaError>> {
        let node = Arc::clone(&self.node);
        self.run(async move { node.write(request).await })
    }

    fn read_barrier(&self) -> Pending<Result<(), ReplicaError>> {
        let node = Arc::clone(&self.node);
        self.run(async move { node.linearizable_read_barrier().await })
    }

    fn status(&self) -> NodeStatus {
        node_status(&self.node.status())
    }

    fn leader(&self) -> Option<u64> {
        self.node.leader()
    }

    fn cluster_status(&self) -> Pending<Vec<PeerReport>> {
        let node = Arc::clone(&self.node);
        let h = self.rt.spawn(async move { node.cluster_status().await });
        Box::pin(async move {
            h.await
                .unwrap_or_default()
                .into_iter()
                .map(|p| PeerReport {
                    id: p.id,
                    addr: p.addr,
                    status: p.status.map(|s| node_status(&s)),
                })
                .collect()
        })
    }

    fn change_membership(&self, change: Membership) -> Pending<Result<(), ReplicaError>> {
        let node = Arc::clone(&self.node);
        self.run(async move {
            match change {
                Membership::AddLearner { id, addr } => node.add_learner(id, addr).await,
                Membership::Promote { id, force } => node.promote(id, force).await,
                Membership::Remove { id } => node.remove(id).await,
            }
        })
    }
}
