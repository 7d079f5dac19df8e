//! What a node is started with.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};

/// The most Raft groups one node may host.
pub const MAX_SHARDS: u32 = 1024;

/// The configuration of one node. [`NodeConfig::new`] fills in the defaults; change fields
/// as needed before [`crate::Node::start`].
///
/// Default timeouts aim at a failover (leader killed to first acknowledged write on the
/// new leader) under 1.5 s: heartbeats every 100 ms, an election after 250–500 ms without
/// one. openraft also keeps a leader lease of the maximum after each heartbeat, so a dead
/// leader is replaced after about 500 ms plus a random 250–500 ms (300–600 ms measured a
/// p99 of 1.56–1.77 s over 50 kills; 250–500 ms 1.33 s, docs/CLUSTER.md).
///
/// # Examples
/// ```
/// use bloomkv_cluster::{NodeConfig, parse_initial_cluster};
///
/// let mut config = NodeConfig::new(1, "127.0.0.1:7001", "/var/lib/bloomkv/node1");
/// config.initial_cluster = Some(parse_initial_cluster("1=127.0.0.1:7001,2=127.0.0.1:7002,3=127.0.0.1:7003")?);
/// assert_eq!(config.heartbeat, std::time::Duration::from_millis(100));
/// # Ok::<(), bloomkv_cluster::Error>(())
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct NodeConfig {
    /// This node's id: nonzero, stable for the life of its data directory.
    pub id: u64,
    /// The address (`host:port`) other nodes reach this node's Raft endpoint at. The node
    /// listens on it too, unless started with [`crate::Node::start_on`].
    pub raft_addr: String,
    /// The node's data directory: `log/`, `sm/`, `snapshots/` and a `NODE` id file (with
    /// several [`NodeConfig::shards`]: `NODE`, `SHARDS` and those three in `group-<g>/` for
    /// each group).
    pub data_dir: PathBuf,
    /// On the first start of an empty data directory: the whole initial membership
    /// (id -> Raft address, this node included), like etcd's `--initial-cluster`. Every
    /// initial node is given the same map. `None`: the node waits to be added by the
    /// cluster ([`crate::Node::add_learner`] on a member). Ignored once the node has state.
    pub initial_cluster: Option<BTreeMap<u64, String>>,
    /// Leader heartbeat interval.
    pub heartbeat: Duration,
    /// A follower starts an election after a random time in this range without hearing
    /// from a leader.
    pub election_timeout: (Duration, Duration),
    /// How long [`crate::Node::write`], the read barrier and membership changes wait in all
    /// (across elections and forwarding) before giving up with a typed error.
    pub request_timeout: Duration,
    /// The longest one forwarding attempt waits for the leader's answer before trying
    /// again (possibly at a new leader).
    pub forward_attempt_timeout: Duration,
    /// Build a snapshot after this many entries applied since the last one.
    pub snapshot_every: u64,
    /// Entries kept in the log below a snapshot, so a slightly lagging follower catches up
    /// from the log instead of a snapshot.
    pub keep_logs_after_snapshot: u64,
    /// The bound on sending one whole snapshot.
    pub snapshot_timeout: Duration,
    /// The leader proposes at most this many log entries at once; client requests that
    /// arrive meanwhile wait and go into the next entry together (group commit).
    pub proposals_in_flight: usize,
    /// The most client requests one log entry carries.
    pub max_requests_per_entry: usize,
    /// Options of both databases (the log's and the state machine's); their `env` is also
    /// used for the node's own files. `sync_writes` is managed by the node.
    pub options: bloomkv::Options,
    /// Addresses to dial instead of the membership's, per node id (routing a node pair
    /// through a proxy in tests). Changeable later with [`crate::Node::set_route`].
    pub routes: BTreeMap<u64, String>,
    /// How many Raft groups this node hosts (`--shards`), each owning an even share of
    /// Redis Cluster's 16384 hash slots (docs/CLUSTER.md "Sharding"). 1 (the default): one
    /// group, the data directory and routes as they always were, started with
    /// [`crate::Node::start`]; more: started with [`crate::ShardedNode::start`], the same
    /// number on every node, and fixed for the life of the data directory.
    pub shards: u32,
    /// The group this configuration is of (0 for a one-group node).
    pub(crate) group: u32,
}

impl NodeConfig {
    /// A configuration with the default timeouts and snapshot policy.
    pub fn new(id: u64, raft_addr: impl Into<String>, data_dir: impl Into<PathBuf>) -> NodeConfig {
        NodeConfig {
            id,
            raft_addr: raft_addr.into(),
            data_dir: data_dir.into(),
            initial_cluster: None,
            heartbeat: Duration::from_millis(100),
            election_timeout: (Duration::from_millis(250), Duration::from_millis(500)),
            request_timeout: Duration::from_secs(5),
            forward_attempt_timeout: Duration::from_secs(1),
            snapshot_every: 10_000,
            keep_logs_after_snapshot: 1_000,
            snapshot_timeout: Duration::from_secs(300),
            proposals_in_flight: 2,
            max_requests_per_entry: 256,
            options: bloomkv::Options::default(),
            routes: BTreeMap::new(),
            shards: 1,
            group: 0,
        }
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.id == 0 {
            return Err(Error::Config("node id 0 is reserved; use 1 and up".into()));
        }
        if let Some(init) = &self.initial_cluster {
            if !init.contains_key(&self.id) {
                return Err(Error::Config(format!(
                    "the initial cluster {init:?} does not include this node ({})",
                    self.id
                )));
            }
            if init.contains_key(&0) {
                return Err(Error::Config("node id 0 is reserved".into()));
            }
        }
        let (lo, hi) = self.election_timeout;
        if self.heartbeat.is_zero() || lo <= self.heartbeat || hi <= lo {
            return Err(Error::Config(format!(
                "need 0 < heartbeat ({:?}) < election timeout min ({lo:?}) < max ({hi:?})",
                self.heartbeat
            )));
        }
        if self.shards == 0 || self.shards > MAX_SHARDS {
            return Err(Error::Config(format!(
                "shards must be 1 to {MAX_SHARDS}, not {}",
                self.shards
            )));
        }
        if self.snapshot_every == 0 {
            return Err(Error::Config("snapshot_every must be at least 1".into()));
        }
        Ok(())
    }
}

/// Parses an etcd-style initial cluster: `1=host:port,2=host:port,...`.
///
/// # Errors
/// [`Error::Config`] naming the bad item: a missing `=`, an id that is not a positive
/// integer, an empty address, a repeated id.
///
/// # Examples
/// ```
/// let m = bloomkv_cluster::parse_initial_cluster("1=127.0.0.1:7001, 2=127.0.0.1:7002")?;
/// assert_eq!(m[&2], "127.0.0.1:7002");
/// assert!(bloomkv_cluster::parse_initial_cluster("1=a:1,1=b:2").is_err());
/// # Ok::<(), bloomkv_cluster::Error>(())
/// ```
pub fn parse_initial_cluster(s: &str) -> Result<BTreeMap<u64, String>> {
    let mut out = BTreeMap::new();
    for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
        let (id, addr) = item
            .split_once('=')
            .ok_or_else(|| Error::Config(format!("{item:?} is not id=host:port")))?;
        let id: u64 = id.trim().parse().ok().filter(|&i| i > 0).ok_or_else(|| {
            Error::Config(format!("{item:?}: node id must be a positive integer"))
        })?;
        let addr = addr.trim();
        if addr.is_empty() {
            return Err(Error::Config(format!("{item:?}: empty address")));
        }
        if out.insert(id, addr.to_string()).is_some() {
            return Err(Error::Config(format!("node id {id} given twice")));
        }
    }
    if out.is_empty() {
        return Err(Error::Config("the initial cluster is empty".into()));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_name_the_item() {
        for bad in ["", "1", "x=a:1", "0=a:1", "1=", "1=a:1,1=a:2"] {
            assert!(parse_initial_cluster(bad).is_err(), "{bad:?}");
        }
        let m = parse_initial_cluster("3=c:3,1=a:1").unwrap();
        assert_eq!(m.keys().copied().collect::<Vec<_>>(), vec![1, 3]);
    }

    #[test]
    fn validation() {
        let mut c = NodeConfig::new(1, "a:1", "/tmp/x");
        c.validate().unwrap();
        c.initial_cluster = Some(parse_initial_cluster("2=b:2").unwrap());
        assert!(c.validate().is_err());
        c.initial_cluster = None;
        c.election_timeout = (Duration::from_millis(50), Duration::from_millis(600));
        assert!(c.validate().is_err());
        c.id = 0;
        assert!(c.validate().is_err());
    }
}
