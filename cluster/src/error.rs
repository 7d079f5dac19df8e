//! The package's one public error type.

use std::fmt;
use std::time::Duration;

/// What went wrong in a cluster operation. Every variant says what failed; none of them
/// carries openraft's types, so callers (the server) never depend on the Raft engine.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// No leader accepted the request within the bounded wait: an election is going on, or
    /// no quorum can be reached (a partition, too many nodes down). The request was not
    /// handed to any leader, so it was not applied. A server answers `-CLUSTERDOWN` or
    /// `-TRYAGAIN`.
    NoLeader {
        /// How long the node waited for a leader.
        waited: Duration,
    },
    /// The request reached a leader but no answer came within the bounded wait: it may or
    /// may not have been applied (a client retrying the same request id gets it applied
    /// once either way).
    Timeout {
        /// How long the node waited.
        waited: Duration,
    },
    /// The request id is below what its client already declared answered: it was either
    /// applied before (and its answer dropped from the dedup table) or never will be.
    /// Not applied by this call.
    Stale,
    /// The node is shut down, or its Raft core stopped after a fatal error.
    Stopped(String),
    /// The node's storage (the log or state-machine database, snapshot files) failed or is
    /// damaged; the message names the file or key.
    Storage(String),
    /// An engine error, with what was being done.
    Db {
        /// What the node was doing.
        context: String,
        /// The engine's error.
        source: bloomkv::Error,
    },
    /// A bad argument or configuration (an unparsable `--initial-cluster`, a node id the
    /// data directory does not belong to, ...).
    Config(String),
    /// A membership change was refused (unknown node, a change already in progress, ...).
    Membership(String),
    /// A peer could not be reached or answered something unreadable.
    Network(String),
    /// The Redis-protocol server of a cluster node could not start or stopped with an
    /// error (an address in use, ...).
    Server(String),
    /// This node was removed from the cluster: it no longer serves, votes or campaigns.
    /// Nothing was applied.
    Removed {
        /// This node's id.
        id: u64,
    },
}

impl Error {
    pub(crate) fn db(context: impl Into<String>, source: bloomkv::Error) -> Error {
        Error::Db {
            context: context.into(),
            source,
        }
    }

    /// Whether the request certainly was not applied, so that any request (even one that is
    /// not idempotent) may be sent again: true for [`Error::NoLeader`], [`Error::Stale`] and
    /// [`Error::Removed`].
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use bloomkv_cluster::Error;
    ///
    /// assert!(Error::NoLeader { waited: Duration::from_secs(1) }.not_applied());
    /// assert!(!Error::Timeout { waited: Duration::from_secs(1) }.not_applied());
    /// ```
    pub fn not_applied(&self) -> bool {
        matches!(
            self,
            Error::NoLeader { .. } | Error::Stale | Error::Removed { .. }
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoLeader { waited } => {
                write!(f, "no leader reachable within {} ms", waited.as_millis())
            }
            Error::Timeout { waited } => write!(
                f,
                "no answer from the leader within {} ms (the request may or may not have been applied)",
                waited.as_millis()
            ),
            Error::Stale => write!(
                f,
                "request id below its client's acknowledged mark: not applied"
            ),
            Error::Stopped(why) => write!(f, "node stopped: {why}"),
            Error::Storage(why) => write!(f, "cluster storage: {why}"),
            Error::Db { context, source } => write!(f, "{context}: {source}"),
            Error::Config(why) => write!(f, "cluster configuration: {why}"),
            Error::Membership(why) => write!(f, "membership change refused: {why}"),
            Error::Network(why) => write!(f, "cluster network: {why}"),
            Error::Server(why) => write!(f, "server: {why}"),
            Error::Removed { id } => write!(
                f,
                "node {id} was removed from the cluster and no longer serves: connect to a member, \
                 or to bring this node back, stop it, empty its --dir and add it again (kvctl cluster add)"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Db { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// Shorthand for `std::result::Result<T, bloomkv_cluster::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
