//! What travels between nodes besides openraft's own messages: client operations
//! forwarded to the leader, and their answers. Encoded with [`crate::codec`].

use serde::{Deserialize, Serialize};

use crate::types::Request;

/// A membership change.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Admin {
    AddLearner {
        id: u64,
        addr: String,
    },
    /// `force`: even if the voters would then be an even number.
    Promote {
        id: u64,
        force: bool,
    },
    Remove {
        id: u64,
    },
}

/// An operation a node routes to the leader.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) enum Op {
    /// A client write (with its dedup identity).
    Write(Request),
    /// The leader's read index: the log index a linearizable read must wait for.
    ReadIndex,
    /// A membership change.
    Admin(Admin),
    /// Client writes a follower forwards together (each with its dedup identity): the
    /// leader answers each with [`Done::Answers`], in order.
    Writes(Vec<Request>),
}

/// An operation as sent to another node, with the time the sender still waits.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct OpCall {
    pub op: Op,
    pub timeout_ms: u64,
}

/// What an operation produced.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) enum Done {
    Reply(Vec<u8>),
    Index(u64),
    Unit,
    /// One answer per write of an [`Op::Writes`].
    Answers(Vec<Answer>),
}

/// How a node answered an operation.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) enum Answer {
    Ok(Done),
    /// Not (or no longer) the leader; the leader it knows, if any. `proposed`: the
    /// operation had been handed to Raft before leadership was lost, so a write may still
    /// be applied (a later leader can commit the entry); otherwise nothing was done.
    NotLeader {
        leader: Option<(u64, String)>,
        proposed: bool,
    },
    /// A write below its client's mark: not applied.
    Stale,
    /// The leader accepted the operation but it did not finish in time: it may or may not
    /// take effect.
    Unknown,
    /// Refused for good (a membership change that cannot be made).
    Refused(String),
}
