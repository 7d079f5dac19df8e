//! What a node reports about itself and the cluster (for `ROLE`, `INFO replication`,
//! `CLUSTER INFO` and `kvctl cluster status`).

use serde::{Deserialize, Serialize};

/// A node's part in the cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Role {
    /// It leads: writes are proposed here.
    Leader,
    /// A voter following a leader (or waiting for one).
    Follower,
    /// A voter asking for votes.
    Candidate,
    /// Replicates but does not vote (just added, or not a member yet).
    Learner,
    /// Stopped.
    Shutdown,
}

impl From<openraft::ServerState> for Role {
    fn from(s: openraft::ServerState) -> Role {
        match s {
            openraft::ServerState::Leader => Role::Leader,
            openraft::ServerState::Follower => Role::Follower,
            openraft::ServerState::Candidate => Role::Candidate,
            openraft::ServerState::Learner => Role::Learner,
            openraft::ServerState::Shutdown => Role::Shutdown,
        }
    }
}

/// Counts of a node's Raft events since it started.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Events {
    /// Elections this node started (each after a won pre-vote).
    pub elections_started: u64,
    /// Elections it won.
    pub elections_won: u64,
    /// Pre-votes it lost: it wanted an election and a majority said no (no term raised).
    pub prevotes_lost: u64,
    /// Times the leader it knows of changed.
    pub leader_changes: u64,
}

/// One member as this node sees it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Member {
    /// Node id.
    pub id: u64,
    /// Raft address in the membership.
    pub addr: String,
    /// Whether it votes (else a learner).
    pub voter: bool,
    /// Leader only: the last log index known to be on that member.
    pub matched_index: Option<u64>,
    /// Leader only: entries the member is behind the leader's log.
    pub lag: Option<u64>,
}

/// One node's view of itself and of the cluster.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Status {
    /// This node's id.
    pub id: u64,
    /// Its role.
    pub role: Role,
    /// The current term.
    pub term: u64,
    /// The leader it knows of.
    pub leader: Option<u64>,
    /// The last index in its log.
    pub last_log_index: Option<u64>,
    /// The last index it knows to be committed (on a majority's disks).
    #[serde(default)]
    pub committed_index: Option<u64>,
    /// The last index its state machine applied.
    pub applied_index: Option<u64>,
    /// The last index its newest snapshot covers.
    pub snapshot_index: Option<u64>,
    /// The last index purged from its log.
    pub purged_index: Option<u64>,
    /// Leader only: milliseconds since a quorum last acknowledged it.
    pub millis_since_quorum_ack: Option<u64>,
    /// Counts of elections and leader changes since the node started.
    #[serde(default)]
    pub events: Events,
    /// The membership, with replication progress when this node leads.
    pub members: Vec<Member>,
    /// `host:port` its clients connect to (a server over the node sets it), so that
    /// every node can tell clients where the others serve (`CLUSTER SLOTS`).
    #[serde(default)]
    pub client_addr: Option<String>,
}

/// One member's own report, as gathered by [`crate::Node::cluster_status`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerStatus {
    /// Node id.
    pub id: u64,
    /// Its Raft address.
    pub addr: String,
    /// Its status, or why it could not be had.
    pub status: Result<Status, String>,
}
