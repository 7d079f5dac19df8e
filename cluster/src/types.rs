//! The openraft type configuration and the application data carried in log entries.
//!
//! Nothing here is public: openraft's types stay inside this package.

use serde::{Deserialize, Serialize};

use crate::snapshot::SnapshotData;

openraft::declare_raft_types!(
    /// The Raft types of a bloomkv cluster.
    pub(crate) TypeConfig:
        D = Proposal,
        R = Applied,
        NodeId = u64,
        Node = openraft::BasicNode,
        Entry = openraft::Entry<TypeConfig>,
        SnapshotData = SnapshotData,
        Responder = openraft::impls::OneshotResponder<TypeConfig>,
        AsyncRuntime = openraft::TokioRuntime,
);

pub(crate) type NodeId = u64;
pub(crate) type Node = openraft::BasicNode;
pub(crate) type LogId = openraft::LogId<NodeId>;
pub(crate) type Vote = openraft::Vote<NodeId>;
pub(crate) type Entry = openraft::Entry<TypeConfig>;
pub(crate) type StoredMembership = openraft::StoredMembership<NodeId, Node>;
pub(crate) type SnapshotMeta = openraft::SnapshotMeta<NodeId, Node>;
pub(crate) type StorageError = openraft::StorageError<NodeId>;
pub(crate) type Raft = openraft::Raft<TypeConfig>;

/// What one log entry carries: the client requests the leader proposed together.
///
/// Requests that reach the leader while earlier proposals are still in flight wait and go
/// into one entry (group commit), so they share one append, one fsync and one slot of
/// every AppendEntries. They are applied in their order here, each on its own.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Proposal {
    pub requests: Vec<Request>,
}

/// One client request as it travels in the log.
///
/// `(client, id)` names it for deduplication: a retry after a leader change carries the
/// same pair and is applied once. `acked_below` says every id of this client below it has
/// been answered and will never be sent again, so the state machine may drop their saved
/// answers. `time_ms` is the leader's clock when it proposed the entry: every node applies
/// the request with the same time (expiry decided identically everywhere).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Request {
    pub client: u64,
    pub id: u64,
    pub acked_below: u64,
    pub time_ms: u64,
    pub body: Vec<u8>,
}

/// What applying one log entry produced (never stored: it goes back to the proposer).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Applied {
    /// One reply per request of the entry's [`Proposal`], in its order.
    Requests(Vec<Reply>),
    /// A blank or membership entry: no client waits for it.
    Internal,
}

/// What applying one client request produced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Reply {
    /// The machine's answer (or the saved answer of a duplicate).
    Response(Vec<u8>),
    /// The request's id is below its client's acknowledged mark: not applied.
    Stale,
}
