//! Which peers this node cannot reach, for the log: a peer whose calls keep failing for
//! [`REPORT_AFTER`] is reported unreachable once, and reachable again once a call gets
//! through (one line per outage, however many calls failed). AppendEntries that time out
//! are reported apart, at most once per [`TIMEOUT_EVERY`]: openraft gives each append one
//! heartbeat interval, so a network round trip plus a follower's fsync longer than that
//! stalls replication without any failure.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::clock::Throttle;
use crate::types::NodeId;

/// How long calls to a peer must keep failing before it is reported unreachable.
pub(crate) const REPORT_AFTER: Duration = Duration::from_secs(1);
/// The least time between two reports of timed-out appends to one peer.
pub(crate) const TIMEOUT_EVERY: Duration = Duration::from_secs(30);

#[derive(Default)]
struct Peer {
    failing_since: Option<Instant>,
    reported: bool,
    timeouts: std::sync::Arc<Throttle>,
}

/// The peers' health as this node's calls saw it.
#[derive(Default)]
pub(crate) struct Health {
    peers: Mutex<BTreeMap<NodeId, Peer>>,
}

impl Health {
    /// A call to `peer` at `addr` succeeded.
    pub(crate) fn ok(&self, peer: NodeId, addr: &str) {
        let mut peers = self.peers.lock();
        let p = peers.entry(peer).or_default();
        if let Some(since) = p.failing_since.take()
            && std::mem::take(&mut p.reported)
        {
            tracing::info!(
                target: "bloomkv_cluster::peers",
                "node {peer} ({addr}) is reachable again after {:.1} s",
                since.elapsed().as_secs_f64()
            );
        }
    }

    /// A call to `peer` at `addr` failed with `why`.
    pub(crate) fn failed(&self, peer: NodeId, addr: &str, why: &str) {
        let mut peers = self.peers.lock();
        let p = peers.entry(peer).or_default();
        let since = *p.failing_since.get_or_insert_with(Instant::now);
        if !p.reported && since.elapsed() >= REPORT_AFTER {
            p.reported = true;
            tracing::warn!(
                target: "bloomkv_cluster::peers",
                "node {peer} ({addr}) is unreachable: calls have failed for {:.1} s, the last with: {why}",
                since.elapsed().as_secs_f64()
            );
        }
    }

    /// An AppendEntries to `peer` timed out after `ttl`.
    pub(crate) fn append_timed_out(&self, peer: NodeId, ttl: Duration) {
        let throttle = {
            let mut peers = self.peers.lock();
            std::sync::Arc::clone(&peers.entry(peer).or_default().timeouts)
        };
        if let Some(held) = throttle.allow(TIMEOUT_EVERY) {
            tracing::warn!(
                target: "bloomkv_cluster::peers",
                "an AppendEntries to node {peer} timed out after {} ms, the heartbeat interval \
                 ({held} more since the last report): replication stalls while the network round \
                 trip plus a follower's fsync takes longer; raise --heartbeat-ms if it persists",
                ttl.as_millis()
            );
        }
    }
}
