//! `ROLE`, and `CLUSTER`, `READONLY`, `READWRITE` on a server that is not in cluster mode
//! (in cluster mode the last three are routed by `conn::replicated`).

use bytes::Bytes;

use super::Conn;
use crate::replica::report;
use crate::resp::Reply;

/// `CLUSTER HELP`.
pub(super) const HELP: &[&str] = &[
    "CLUSTER <subcommand> [<arg> ...]. Subcommands are:",
    "INFO",
    "    The cluster's state, leader and term, and every node's role, applied index and lag.",
    "MYID",
    "    This node's id.",
    "LEADER",
    "    The id of the leader this node knows of (nil while there is none).",
    "ADDLEARNER <node-id> <raft-host:port>",
    "    Add a node as a learner: it catches up from the log or a snapshot, without voting.",
    "PROMOTE <node-id> [FORCE]",
    "    Make a learner a voter. Refused if the voters would then be an even number, unless FORCE.",
    "REMOVE <node-id>",
    "    Remove a node (voter or learner) from the cluster.",
    "SLOTS",
    "    The slot ranges and the nodes serving them: one shard, the leader as its master.",
    "SHARDS",
    "    The same as shards, each with its slot ranges and nodes.",
    "NODES",
    "    Every node in Redis's CLUSTER NODES format.",
    "KEYSLOT <key>",
    "    The hash slot of <key>.",
    "COUNTKEYSINSLOT <slot>",
    "    How many keys this node holds in <slot>.",
    "GETKEYSINSLOT <slot> <count>",
    "    At most <count> of this node's keys in <slot>.",
    "HELP",
    "    Print this help.",
];

/// Redis's answer to cluster commands on a server without cluster support.
const DISABLED: &str = "ERR This instance has cluster support disabled";

impl Conn {
    /// `ROLE`: a standalone server is a master without replicas; in cluster mode the
    /// node's Raft role in Redis's shape (`replica::report::role`).
    pub(super) fn role(&self) -> Reply {
        match &self.shared.replica {
            Some(c) => report::role(&c.replicator.status()),
            None => Reply::Array(vec![
                Reply::bulk("master"),
                Reply::Int(0),
                Reply::Array(Vec::new()),
            ]),
        }
    }

    /// `CLUSTER`, `READONLY`, `READWRITE` reaching the standalone path: only a server in
    /// cluster mode has them.
    pub(super) fn cluster_disabled(&self, _a: &[Bytes]) -> Reply {
        Reply::Error(DISABLED.into())
    }
}
