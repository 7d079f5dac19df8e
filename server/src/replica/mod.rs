//! Cluster mode: the seam between the server and a replication layer (docs/CLUSTER.md).
//!
//! The server does not know Raft. A replication layer (the `bloomkv-cluster` package, on
//! openraft) gives it a [`Replicator`]: propose a request through the replicated log and
//! get the leader's answers back, wait for a linearizable read barrier, report status,
//! change the membership. In return the server gives the layer an [`Applier`], the
//! deterministic state machine over its store, which every node runs on every committed
//! request.
//!
//! What a connection does in cluster mode (`conn::replicated`):
//!
//! * **Writes** (a connection's pipelined run of write commands, or a whole
//!   `MULTI`/`EXEC`) become one request ([`codec::Request`]) through the log; the leader's
//!   state machine answers, and the node the client is on encodes the replies in the
//!   client's RESP version.
//! * **Reads** run on the node the client is connected to, after a linearizable read
//!   barrier (one per run of pipelined reads), unless the connection sent `READONLY`
//!   (stale local reads, as Redis Cluster's replicas serve them) until `READWRITE`.
//! * **No leader**: `-CLUSTERDOWN` (the command was not applied) or `-TRYAGAIN` (it may
//!   have been), within the replication layer's bounded request timeout; never a hang.
//! * **Blocking pops** wait on the client's node ([`wake`]); each attempt goes through
//!   the log. **WATCH** is replicated state ([`watches`]). **PUBLISH** goes through the log
//!   and reaches the subscribers of every node. **Expiry**: only the leader looks for keys
//!   due ([`expire`]) and proposes their removal; every node applies it.

pub mod apply;
pub mod codec;
pub mod expire;
pub mod report;
pub mod topology;
pub mod wake;
pub mod watches;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

pub use apply::{Applier, LogCommand};

use crate::resp::Reply;

/// A future the replication layer runs (on its own runtime if it has one).
pub type Pending<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// Why a replicated operation did not complete.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplicaError {
    /// No leader took the request within the bounded wait (an election, no quorum): it was
    /// not applied. Clients get `-CLUSTERDOWN`.
    NoLeader(String),
    /// A leader may have taken it but no answer came in time, or the node stopped: it may
    /// or may not be applied. Clients get `-TRYAGAIN`.
    Unknown(String),
    /// Refused: a membership change the cluster would not make, a bad argument. Clients
    /// get `-ERR`.
    Refused(String),
}

impl ReplicaError {
    /// The reply a client gets.
    pub fn reply(&self) -> Reply {
        match self {
            ReplicaError::NoLeader(why) => {
                Reply::Error(format!("CLUSTERDOWN The cluster is down: {why}"))
            }
            ReplicaError::Unknown(why) => Reply::Error(format!(
                "TRYAGAIN {why} (the command may or may not have been applied)"
            )),
            ReplicaError::Refused(why) => Reply::err(why),
        }
    }
}

impl std::fmt::Display for ReplicaError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplicaError::NoLeader(w) => write!(f, "no leader: {w}"),
            ReplicaError::Unknown(w) => write!(f, "outcome unknown: {w}"),
            ReplicaError::Refused(w) => write!(f, "refused: {w}"),
        }
    }
}

impl std::error::Error for ReplicaError {}

/// A node's part in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RaftRole {
    /// Leads: writes are proposed here.
    Leader,
    /// A voter following a leader (or waiting for one).
    Follower,
    /// A voter asking for votes.
    Candidate,
    /// Replicates without voting.
    Learner,
    /// Stopped.
    Shutdown,
}

impl RaftRole {
    /// Lowercase name, as INFO and CLUSTER INFO print it.
    pub fn name(self) -> &'static str {
        match self {
            RaftRole::Leader => "leader",
            RaftRole::Follower => "follower",
            RaftRole::Candidate => "candidate",
            RaftRole::Learner => "learner",
            RaftRole::Shutdown => "shutdown",
        }
    }
}

/// One member as a node sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberInfo {
    /// Node id.
    pub id: u64,
    /// Raft address.
    pub addr: String,
    /// Votes (else a learner).
    pub voter: bool,
    /// Leader only: the last log index known to be on that member.
    pub matched_index: Option<u64>,
    /// Leader only: entries that member is behind the leader's log.
    pub lag: Option<u64>,
}

/// One node's view of itself and the cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeStatus {
    /// This node's id.
    pub id: u64,
    /// Its role.
    pub role: RaftRole,
    /// The current term.
    pub term: u64,
    /// The leader it knows of.
    pub leader: Option<u64>,
    /// Last index in its log.
    pub last_log_index: Option<u64>,
    /// Last index it knows to be committed (on a majority's disks).
    pub committed_index: Option<u64>,
    /// Last index its state machine applied.
    pub applied_index: Option<u64>,
    /// Last index its newest snapshot covers.
    pub snapshot_index: Option<u64>,
    /// Last index purged from its log (entries below are only in snapshots).
    pub purged_index: Option<u64>,
    /// The membership (with replication progress when this node leads).
    pub members: Vec<MemberInfo>,
    /// What happened to this node since it started: elections, leader changes.
    pub events: RaftEvents,
    /// `host:port` its clients connect to, if its server has said.
    pub client_addr: Option<String>,
}

/// Counts of a node's Raft events since it started (INFO replication's `raft_*` counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaftEvents {
    /// Elections this node started (each after a won pre-vote).
    pub elections_started: u64,
    /// Elections it won.
    pub elections_won: u64,
    /// Pre-votes it lost (it wanted an election, a majority said no: no term raised).
    pub prevotes_lost: u64,
    /// Times the leader it knows of changed (to another node or to none).
    pub leader_changes: u64,
}

/// One member's own report, or why it could not be had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerReport {
    /// Node id.
    pub id: u64,
    /// Raft address.
    pub addr: String,
    /// Its status, or the error reaching it.
    pub status: Result<NodeStatus, String>,
}

/// A membership change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Membership {
    /// Add node `id` at Raft address `addr` as a learner (it catches up, does not vote).
    AddLearner {
        /// Node id.
        id: u64,
        /// Its Raft address.
        addr: String,
    },
    /// Make learner `id` a voter.
    Promote {
        /// Node id.
        id: u64,
        /// Even if the voters would then be an even number (refused otherwise: an even
        /// count tolerates no more failures than one voter fewer).
        force: bool,
    },
    /// Remove node `id`.
    Remove {
        /// Node id.
        id: u64,
    },
}

/// What the server needs from a replication layer.
///
/// Every call is bounded in time by the layer (its request timeout): a future resolves
/// with an error rather than hang when there is no leader.
pub trait Replicator: Send + Sync + 'static {
    /// This node's id.
    fn node_id(&self) -> u64;

    /// Applies `request` ([`codec::Request`]'s bytes) through the replicated log; resolves
    /// with the leader's state machine's answers once a majority has the entry on disk
    /// and the leader applied it. A retry inside the layer is applied once.
    fn propose(&self, request: Vec<u8>) -> Pending<Result<Vec<u8>, ReplicaError>>;

    /// Resolves once a read of this node's store sees every write acknowledged anywhere
    /// before the call.
    fn read_barrier(&self) -> Pending<Result<(), ReplicaError>>;

    /// This node's status, now (no I/O).
    fn status(&self) -> NodeStatus;

    /// The leader this node knows of, now (no I/O; asked once per command by a node that
    /// redirects clients, so cheaper than [`Replicator::status`] where the layer can).
    fn leader(&self) -> Option<u64> {
        self.status().leader
    }

    /// Every member's own status, asked of each (bounded wait per member).
    fn cluster_status(&self) -> Pending<Vec<PeerReport>>;

    /// Changes the membership; resolves once the change is committed.
    fn change_membership(&self, change: Membership) -> Pending<Result<(), ReplicaError>>;
}

/// What a server in cluster mode shares with its connections.
#[derive(Clone)]
pub struct Cluster {
    /// The replication layer.
    pub replicator: Arc<dyn Replicator>,
    /// The state machine the layer applies through.
    pub applier: Arc<Applier>,
    /// Answer as a Redis Cluster node does (`--cluster-redirects yes`): `-MOVED` to the
    /// leader for a keyed command reaching a follower, `-CROSSSLOT` for keys in different
    /// slots (`conn::redirect`). Otherwise every node serves every key.
    pub redirects: bool,
    /// The leader's client address, as last learnt: `(leader id, host:port)`. Held while
    /// it is asked for, so that a failover costs one round of questions, not one per
    /// client.
    leader_addr: Arc<tokio::sync::Mutex<Option<(u64, String)>>>,
}

impl Cluster {
    /// A cluster over `replicator` applying through `applier`; every node serves every
    /// key (see [`Cluster::redirects`]).
    pub fn new(replicator: Arc<dyn Replicator>, applier: Arc<Applier>) -> Cluster {
        Cluster {
            replicator,
            applier,
            redirects: false,
            leader_addr: Arc::default(),
        }
    }

    /// Where clients of node `leader` connect (`host:port`), asked of the members when not
    /// known for that node; `None` when it does not answer or has not said.
    pub async fn client_addr_of(&self, leader: u64) -> Option<String> {
        let mut known = self.leader_addr.lock().await;
        if let Some((id, addr)) = known.as_ref()
            && *id == leader
        {
            return Some(addr.clone());
        }
        let addr = self
            .replicator
            .cluster_status()
            .await
            .into_iter()
            .find(|p| p.id == leader)
            .and_then(|p| p.status.ok())
            .and_then(|s| s.client_addr)?;
        *known = Some((leader, addr.clone()));
        Some(addr)
    }
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node_id", &self.replicator.node_id())
            .field("redirects", &self.redirects)
            .finish_non_exhaustive()
    }
}
