//! What `ROLE`, `INFO replication` and `CLUSTER INFO` show in cluster mode.
//!
//! `ROLE` keeps Redis's shape so that tools reading it keep working: the leader answers
//! `master`, its applied index as the offset and one `[host, port, offset]` per other
//! member (the member's Raft address and the last log index it is known to hold); a
//! follower or learner answers `slave` with its leader's Raft host and port, `connected`
//! (or `connect` while there is no leader) and its applied index.

use std::fmt::Write as _;

use super::{NodeStatus, PeerReport, RaftRole};
use crate::keyslot::SLOTS;
use crate::resp::Reply;

fn split_addr(addr: &str) -> (String, i64) {
    match addr.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse().unwrap_or(0)),
        None => (addr.to_string(), 0),
    }
}

fn opt(v: Option<u64>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// `ROLE` for a node with status `s`.
pub fn role(s: &NodeStatus) -> Reply {
    let applied = s.applied_index.unwrap_or(0) as i64;
    if s.role == RaftRole::Leader {
        let replicas = s
            .members
            .iter()
            .filter(|m| m.id != s.id)
            .map(|m| {
                let (h, p) = split_addr(&m.addr);
                Reply::Array(vec![
                    Reply::bulk(h),
                    Reply::bulk(p.to_string()),
                    Reply::bulk(m.matched_index.unwrap_or(0).to_string()),
                ])
            })
            .collect();
        return Reply::Array(vec![
            Reply::bulk("master"),
            Reply::Int(applied),
            Reply::Array(replicas),
        ]);
    }
    let leader = s
        .leader
        .and_then(|l| s.members.iter().find(|m| m.id == l))
        .map(|m| split_addr(&m.addr));
    let (host, port) = leader.clone().unwrap_or_default();
    Reply::Array(vec![
        Reply::bulk("slave"),
        Reply::bulk(host),
        Reply::Int(port),
        Reply::bulk(if leader.is_some() {
            "connected"
        } else {
            "connect"
        }),
        Reply::Int(applied),
    ])
}

/// The `# Replication` section of INFO for a node with status `s`.
pub fn info_replication(s: &NodeStatus, out: &mut String) {
    let leader = s.role == RaftRole::Leader;
    let _ = write!(
        out,
        "# Replication\r\nrole:{}\r\nraft_node_id:{}\r\nraft_role:{}\r\nraft_term:{}\r\nraft_leader_id:{}\r\nraft_last_log_index:{}\r\nraft_commit_index:{}\r\nraft_applied_index:{}\r\nraft_snapshot_index:{}\r\nraft_purged_index:{}\r\n",
        if leader { "master" } else { "slave" },
        s.id,
        s.role.name(),
        s.term,
        opt(s.leader),
        opt(s.last_log_index),
        opt(s.committed_index),
        opt(s.applied_index),
        opt(s.snapshot_index),
        opt(s.purged_index),
    );
    let e = &s.events;
    let _ = write!(
        out,
        "raft_elections_started:{}\r\nraft_elections_won:{}\r\nraft_prevotes_lost:{}\r\nraft_leader_changes:{}\r\n",
        e.elections_started, e.elections_won, e.prevotes_lost, e.leader_changes
    );
    if leader {
        let others: Vec<_> = s.members.iter().filter(|m| m.id != s.id).collect();
        let _ = write!(out, "connected_slaves:{}\r\n", others.len());
        for (i, m) in others.iter().enumerate() {
            let (h, p) = split_addr(&m.addr);
            let _ = write!(
                out,
                "slave{i}:id={},ip={h},port={p},voter={},state={},offset={},lag={}\r\n",
                m.id,
                u8::from(m.voter),
                if m.matched_index.is_some() {
                    "online"
                } else {
                    "wait_bgsave"
                },
                m.matched_index.unwrap_or(0),
                opt(m.lag),
            );
        }
    } else if let Some(l) = s.leader {
        let addr = s
            .members
            .iter()
            .find(|m| m.id == l)
            .map(|m| m.addr.as_str());
        let (h, p) = split_addr(addr.unwrap_or(""));
        let _ = write!(
            out,
            "master_host:{h}\r\nmaster_port:{p}\r\nmaster_link_status:up\r\nslave_repl_offset:{}\r\n",
            s.applied_index.unwrap_or(0)
        );
    } else {
        out.push_str("master_link_status:down\r\n");
    }
    let _ = write!(
        out,
        "master_repl_offset:{}\r\n",
        s.applied_index.unwrap_or(0)
    );
}

/// `CLUSTER INFO`: the cluster's state (`ok` when a leader is known and every voter
/// answered), then one line per member with its role, applied index and lag behind the
/// leader's log.
pub fn cluster_info(own: &NodeStatus, peers: &[PeerReport]) -> String {
    let leader_last = peers
        .iter()
        .filter_map(|p| p.status.as_ref().ok())
        .find(|s| s.role == RaftRole::Leader)
        .and_then(|s| s.last_log_index);
    let voters = own.members.iter().filter(|m| m.voter).count();
    let reachable_voters = peers
        .iter()
        .filter(|p| p.status.is_ok() && own.members.iter().any(|m| m.id == p.id && m.voter))
        .count();
    let state = if own.leader.is_some() && reachable_voters > voters / 2 {
        "ok"
    } else {
        "fail"
    };
    // Redis Cluster's fields first, for its clients and tools: one shard (this Raft group)
    // owning every slot, served while the cluster is `ok`; the term is the epoch.
    let slots_ok = if state == "ok" { SLOTS } else { 0 };
    let mut out = String::new();
    let _ = write!(
        out,
        "cluster_state:{state}\r\ncluster_slots_assigned:{SLOTS}\r\ncluster_slots_ok:{slots_ok}\r\ncluster_slots_pfail:0\r\ncluster_slots_fail:{}\r\ncluster_known_nodes:{}\r\ncluster_size:1\r\ncluster_current_epoch:{term}\r\ncluster_my_epoch:{term}\r\n",
        SLOTS - slots_ok,
        own.members.len(),
        term = own.term,
    );
    let _ = write!(
        out,
        "cluster_leader:{}\r\ncluster_term:{}\r\ncluster_voters:{voters}\r\ncluster_reachable_voters:{reachable_voters}\r\ncluster_leader_last_log_index:{}\r\ncluster_my_id:{}\r\n",
        opt(own.leader),
        own.term,
        opt(leader_last),
        own.id,
    );
    for p in peers {
        let voter = own.members.iter().any(|m| m.id == p.id && m.voter);
        let _ = match &p.status {
            Ok(s) => write!(
                out,
                "node{}:addr={},voter={},state=up,role={},term={},commit={},applied={},last_log={},lag={}\r\n",
                p.id,
                p.addr,
                u8::from(voter),
                s.role.name(),
                s.term,
                opt(s.committed_index),
                opt(s.applied_index),
                opt(s.last_log_index),
                match (leader_last, s.applied_index) {
                    (Some(l), Some(a)) => l.saturating_sub(a).to_string(),
                    (Some(l), None) => l.to_string(),
                    _ => "-".into(),
                },
            ),
            Err(e) => write!(
                out,
                "node{}:addr={},voter={},state=down,error={}\r\n",
                p.id,
                p.addr,
                u8::from(voter),
                e.replace(['\r', '\n', ','], " "),
            ),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::MemberInfo;
    use super::*;

    fn status(id: u64, role: RaftRole, applied: u64) -> NodeStatus {
        NodeStatus {
            id,
            role,
            term: 3,
            leader: Some(1),
            last_log_index: Some(applied + 2),
            committed_index: Some(applied + 1),
            applied_index: Some(applied),
            snapshot_index: None,
            purged_index: None,
            members: (1..=3)
                .map(|i| MemberInfo {
                    id: i,
                    addr: format!("127.0.0.1:700{i}"),
                    voter: true,
                    matched_index: (role == RaftRole::Leader).then_some(applied),
                    lag: (role == RaftRole::Leader).then_some(0),
                })
                .collect(),
            events: super::super::RaftEvents {
                elections_started: 2,
                elections_won: 1,
                prevotes_lost: 5,
                leader_changes: 3,
            },
            client_addr: None,
        }
    }

    #[test]
    fn role_keeps_redis_shape() {
        let l = role(&status(1, RaftRole::Leader, 10));
        let Reply::Array(items) = l else {
            panic!("array")
        };
        assert_eq!(items[0], Reply::bulk("master"));
        assert_eq!(items[1], Reply::Int(10));
        assert!(matches!(&items[2], Reply::Array(r) if r.len() == 2));
        let f = role(&status(2, RaftRole::Follower, 7));
        assert_eq!(
            f,
            Reply::Array(vec![
                Reply::bulk("slave"),
                Reply::bulk("127.0.0.1"),
                Reply::Int(7001),
                Reply::bulk("connected"),
                Reply::Int(7),
            ])
        );
    }

    #[test]
    fn cluster_info_shows_every_nodes_lag() {
        let own = status(2, RaftRole::Follower, 7);
        let peers = vec![
            PeerReport {
                id: 1,
                addr: "127.0.0.1:7001".into(),
                status: Ok(status(1, RaftRole::Leader, 10)),
            },
            PeerReport {
                id: 2,
                addr: "127.0.0.1:7002".into(),
                status: Ok(own.clone()),
            },
            PeerReport {
                id: 3,
                addr: "127.0.0.1:7003".into(),
                status: Err("connection refused".into()),
            },
        ];
        let text = cluster_info(&own, &peers);
        assert!(text.contains("cluster_state:ok"), "{text}");
        assert!(text.contains("node2:addr=127.0.0.1:7002,voter=1,state=up,role=follower,term=3,commit=8,applied=7,last_log=9,lag=5"), "{text}");
        assert!(
            text.contains("node3:addr=127.0.0.1:7003,voter=1,state=down"),
            "{text}"
        );
        let mut info = String::new();
        info_replication(&status(1, RaftRole::Leader, 10), &mut info);
        assert!(info.contains("role:master\r\n") && info.contains("connected_slaves:2"));
        assert!(
            info.contains("raft_term:3\r\nraft_leader_id:1\r\n"),
            "{info}"
        );
        assert!(
            info.contains("raft_commit_index:11\r\nraft_applied_index:10\r\n"),
            "{info}"
        );
        assert!(
            info.contains("raft_elections_started:2\r\nraft_elections_won:1\r\nraft_prevotes_lost:5\r\nraft_leader_changes:3\r\n"),
            "{info}"
        );
        assert!(
            info.contains(
                "slave0:id=2,ip=127.0.0.1,port=7002,voter=1,state=online,offset=10,lag=0\r\n"
            ),
            "{info}"
        );
        let mut f = String::new();
        info_replication(&status(2, RaftRole::Follower, 7), &mut f);
        assert!(f.contains("role:slave\r\n"), "{f}");
        assert!(
            f.contains("master_host:127.0.0.1\r\nmaster_port:7001\r\nmaster_link_status:up\r\nslave_repl_offset:7\r\n"),
            "{f}"
        );
    }
}
