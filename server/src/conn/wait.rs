//! WAIT numreplicas timeout: blocks until the writes before it are on `numreplicas`
//! replicas, or the timeout (milliseconds, 0: forever) passes, and answers how many replicas
//! have them.
//!
//! A standalone server has no replicas: WAIT answers 0 at once when asked for none, and
//! otherwise blocks like a blocking pop waiting on no key (timeout, CLIENT UNBLOCK or the
//! client leaving end it) and answers 0, as Redis without replicas does. In cluster mode the
//! replicas are the members other than the leader, and a replica "has" the writes once its
//! state machine applied the leader's commit index as it was when the WAIT arrived (every
//! write acknowledged before it is at or below that index); the members' own reports
//! (`Replicator::cluster_status`) are polled until enough have, or the timeout passes. Inside
//! MULTI it never blocks: it answers from what this node knows now.

use std::time::{Duration, Instant};

use bytes::Bytes;

use super::{Conn, Flow};
use crate::cmd::blocking::{Block, Op};
use crate::cmd::parse_i64;
use crate::replica::{Cluster, NodeStatus, RaftRole};
use crate::resp::Reply;

/// How often a waiting WAIT asks the members again.
const POLL: Duration = Duration::from_millis(20);

/// (numreplicas, timeout; `None`: forever), checked in Redis's order (the timeout first).
fn wait_args(a: &[Bytes]) -> Result<(i64, Option<Duration>), Reply> {
    let ms =
        parse_i64(&a[2]).ok_or_else(|| Reply::err("timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(Reply::err("timeout is negative"));
    }
    let n = parse_i64(&a[1]).ok_or_else(|| Reply::err(crate::cmd::NOT_INT))?;
    Ok((n, (ms > 0).then(|| Duration::from_millis(ms as u64))))
}

/// Replicas of the leader `leader` whose state machine reached `target`.
fn applied(statuses: &[&NodeStatus], leader: u64, target: u64) -> i64 {
    statuses
        .iter()
        .filter(|s| s.id != leader && s.applied_index.unwrap_or(0) >= target)
        .count() as i64
}

impl Conn {
    /// `WAIT` on a standalone server, outside MULTI: 0 at once when asked for no replica,
    /// else the client blocks until the timeout.
    pub(super) fn wait_standalone(&mut self, a: &[Bytes]) -> (Reply, Flow) {
        let (n, timeout) = match wait_args(a) {
            Ok(x) => x,
            Err(e) => return (e, Flow::Continue),
        };
        if n <= 0 {
            return (Reply::Int(0), Flow::Continue);
        }
        let w = self.shared.blocked.register(Block {
            db: self.db,
            keys: Vec::new(),
            op: Op::Wait,
            timeout,
        });
        self.shared.blocked.name(self.id, &w);
        self.waiter = Some(w);
        (Reply::Nil, Flow::Block)
    }

    /// `WAIT` where it may not block (inside MULTI): standalone 0; in cluster mode, on the
    /// leader, the replicas its log shows holding its commit index.
    pub(super) fn wait_now(&self, a: &[Bytes]) -> Reply {
        if let Err(e) = wait_args(a) {
            return e;
        }
        let Some(c) = self.cluster.as_ref() else {
            return Reply::Int(0);
        };
        let s = c.cluster.replicator.status();
        let target = s.committed_index.unwrap_or(0);
        Reply::Int(
            s.members
                .iter()
                .filter(|m| m.id != s.id && m.matched_index.is_some_and(|i| i >= target))
                .count() as i64,
        )
    }
}

/// `WAIT` in cluster mode: polls the members until `numreplicas` of them applied what the
/// leader had committed when it arrived, or the timeout passes.
pub(super) async fn wait_replicated(cluster: &Cluster, a: &[Bytes]) -> Reply {
    let (n, timeout) = match wait_args(a) {
        Ok(x) => x,
        Err(e) => return e,
    };
    let deadline = timeout.map(|t| Instant::now() + t);
    let mut target = None;
    loop {
        let reports = cluster.replicator.cluster_status().await;
        let statuses: Vec<&NodeStatus> = reports
            .iter()
            .filter_map(|r| r.status.as_ref().ok())
            .collect();
        let count = match statuses.iter().find(|s| s.role == RaftRole::Leader) {
            Some(l) => {
                let t = *target.get_or_insert(l.committed_index.unwrap_or(0));
                applied(&statuses, l.id, t)
            }
            None => 0,
        };
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if count >= n || left.is_some_and(|l| l.is_zero()) {
            return Reply::Int(count);
        }
        tokio::time::sleep(left.map_or(POLL, |l| l.min(POLL))).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(words: &[&'static str]) -> Vec<Bytes> {
        words
            .iter()
            .map(|w| Bytes::from_static(w.as_bytes()))
            .collect()
    }

    #[test]
    fn arguments_as_redis_checks_them() {
        assert_eq!(
            wait_args(&b(&["WAIT", "1", "100"])),
            Ok((1, Some(Duration::from_millis(100))))
        );
        assert_eq!(wait_args(&b(&["WAIT", "2", "0"])), Ok((2, None)));
        assert_eq!(
            wait_args(&b(&["WAIT", "x", "-1"])),
            Err(Reply::err("timeout is negative"))
        );
        assert_eq!(
            wait_args(&b(&["WAIT", "x", "y"])),
            Err(Reply::err("timeout is not an integer or out of range"))
        );
        assert_eq!(
            wait_args(&b(&["WAIT", "x", "5"])),
            Err(Reply::err(crate::cmd::NOT_INT))
        );
    }
}
