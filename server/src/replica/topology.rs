//! Redis Cluster's view of the cluster, for cluster clients (redis-py `RedisCluster`,
//! ioredis, Jedis, go-redis) to find where to send each key: `CLUSTER SLOTS`, `CLUSTER
//! SHARDS` and `CLUSTER NODES` as Redis 7.0 answers them.
//!
//! The cluster is one Raft group, so it is one shard owning all 16384 slots: the leader is
//! its master and the other members are its replicas, each at the address its clients
//! connect to (which every node reports in its status). Node ids are the Raft ids written
//! as 40 hex digits, the length of Redis's. A member that does not answer, or has not said
//! where its clients connect, is left out of `SLOTS` and `SHARDS` and flagged `fail` or
//! `noaddr` in `NODES`. While no leader is known there is no master: `SLOTS` and `SHARDS`
//! are empty, and clients retry.

use std::fmt::Write as _;

use super::{NodeStatus, PeerReport};
use crate::keyslot::SLOTS;
use crate::resp::Reply;

/// One member as Redis Cluster shows it.
struct Member {
    id: u64,
    /// Client `host` and `port`, if known.
    client: Option<(String, u16)>,
    /// Raft endpoint's port (Redis's cluster bus port, shown after `@`).
    raft_port: u16,
    master: bool,
    myself: bool,
    up: bool,
    applied: u64,
}

/// The Redis Cluster node id of Raft node `id`.
fn name(id: u64) -> String {
    format!("{id:040x}")
}

fn split(addr: &str) -> Option<(String, u16)> {
    let (h, p) = addr.rsplit_once(':')?;
    Some((
        h.trim_start_matches('[').trim_end_matches(']').to_string(),
        p.parse().ok()?,
    ))
}

fn members(own: &NodeStatus, peers: &[PeerReport]) -> Vec<Member> {
    peers
        .iter()
        .map(|p| {
            let status = p.status.as_ref().ok();
            Member {
                id: p.id,
                client: status
                    .and_then(|s| s.client_addr.as_deref())
                    .and_then(split),
                raft_port: split(&p.addr).map_or(0, |(_, port)| port),
                master: own.leader == Some(p.id),
                myself: p.id == own.id,
                up: status.is_some(),
                applied: status.and_then(|s| s.applied_index).unwrap_or(0),
            }
        })
        .collect()
}

/// The members clients can be sent to, master first; empty without a reachable master.
fn serving(own: &NodeStatus, peers: &[PeerReport]) -> Vec<Member> {
    let mut m: Vec<Member> = members(own, peers)
        .into_iter()
        .filter(|m| m.up && m.client.is_some())
        .collect();
    m.sort_by_key(|m| !m.master);
    if m.first().is_some_and(|m| m.master) {
        m
    } else {
        Vec::new()
    }
}

/// `CLUSTER SLOTS`: `[[0, 16383, [host, port, id, []], ...]]`.
pub fn slots(own: &NodeStatus, peers: &[PeerReport]) -> Reply {
    let nodes = serving(own, peers);
    if nodes.is_empty() {
        return Reply::Array(Vec::new());
    }
    let mut range = vec![Reply::Int(0), Reply::Int(i64::from(SLOTS - 1))];
    for m in &nodes {
        let (host, port) = m.client.clone().unwrap_or_default();
        range.push(Reply::Array(vec![
            Reply::bulk(host),
            Reply::Int(i64::from(port)),
            Reply::bulk(name(m.id)),
            Reply::Array(Vec::new()),
        ]));
    }
    Reply::Array(vec![Reply::Array(range)])
}

/// `CLUSTER SHARDS`: one shard, its slot range and its nodes.
pub fn shards(own: &NodeStatus, peers: &[PeerReport]) -> Reply {
    let nodes = serving(own, peers);
    if nodes.is_empty() {
        return Reply::Array(Vec::new());
    }
    let nodes = nodes
        .iter()
        .map(|m| {
            let (host, port) = m.client.clone().unwrap_or_default();
            Reply::Map(vec![
                (Reply::bulk("id"), Reply::bulk(name(m.id))),
                (Reply::bulk("port"), Reply::Int(i64::from(port))),
                (Reply::bulk("ip"), Reply::bulk(host.clone())),
                (Reply::bulk("endpoint"), Reply::bulk(host)),
                (
                    Reply::bulk("role"),
                    Reply::bulk(if m.master { "master" } else { "replica" }),
                ),
                (
                    Reply::bulk("replication-offset"),
                    Reply::Int(i64::try_from(m.applied).unwrap_or(i64::MAX)),
                ),
                (Reply::bulk("health"), Reply::bulk("online")),
            ])
        })
        .collect();
    Reply::Array(vec![Reply::Map(vec![
        (
            Reply::bulk("slots"),
            Reply::Array(vec![Reply::Int(0), Reply::Int(i64::from(SLOTS - 1))]),
        ),
        (Reply::bulk("nodes"), Reply::Array(nodes)),
    ])])
}

/// `CLUSTER NODES`: one line per member, Redis's columns (id, `ip:port@bus-port`, flags,
/// master, ping sent, pong received, config epoch (the term here), link state, slots).
pub fn nodes(own: &NodeStatus, peers: &[PeerReport]) -> String {
    let master = own.leader.map(name);
    let mut out = String::new();
    for m in members(own, peers) {
        let (host, port) = m.client.clone().unwrap_or_default();
        let mut flags = Vec::new();
        if m.myself {
            flags.push("myself");
        }
        flags.push(if m.master { "master" } else { "slave" });
        if !m.up {
            flags.push("fail");
        }
        if m.client.is_none() {
            flags.push("noaddr");
        }
        let of = match (&master, m.master) {
            (Some(id), false) => id.as_str(),
            _ => "-",
        };
        let _ = write!(
            out,
            "{} {host}:{port}@{} {} {of} 0 0 {} {}",
            name(m.id),
            m.raft_port,
            flags.join(","),
            own.term,
            if m.up { "connected" } else { "disconnected" },
        );
        if m.master {
            let _ = write!(out, " 0-{}", SLOTS - 1);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::{MemberInfo, RaftRole};
    use super::*;

    fn status(id: u64, leader: Option<u64>, client: Option<&str>) -> NodeStatus {
        NodeStatus {
            id,
            role: if leader == Some(id) {
                RaftRole::Leader
            } else {
                RaftRole::Follower
            },
            term: 7,
            leader,
            last_log_index: Some(12),
            committed_index: Some(12),
            applied_index: Some(10 + id),
            snapshot_index: None,
            purged_index: None,
            members: (1..=3)
                .map(|i| MemberInfo {
                    id: i,
                    addr: format!("10.0.0.{i}:700{i}"),
                    voter: true,
                    matched_index: None,
                    lag: None,
                })
                .collect(),
            events: super::super::RaftEvents::default(),
            client_addr: client.map(str::to_string),
        }
    }

    fn peers(leader: Option<u64>, down: Option<u64>) -> Vec<PeerReport> {
        (1..=3)
            .map(|i| PeerReport {
                id: i,
                addr: format!("10.0.0.{i}:700{i}"),
                status: if down == Some(i) {
                    Err("connection refused".into())
                } else {
                    Ok(status(i, leader, Some(&format!("10.0.0.{i}:638{i}"))))
                },
            })
            .collect()
    }

    fn node(host: &str, port: i64, id: u64) -> Reply {
        Reply::Array(vec![
            Reply::bulk(host.to_string()),
            Reply::Int(port),
            Reply::bulk(name(id)),
            Reply::Array(Vec::new()),
        ])
    }

    #[test]
    fn slots_name_the_leader_first_and_leave_out_members_that_are_down() {
        let own = status(3, Some(2), Some("10.0.0.3:6383"));
        assert_eq!(
            slots(&own, &peers(Some(2), Some(1))),
            Reply::Array(vec![Reply::Array(vec![
                Reply::Int(0),
                Reply::Int(16383),
                node("10.0.0.2", 6382, 2),
                node("10.0.0.3", 6383, 3),
            ])])
        );
        // No leader, or a leader nobody reaches: no slot has a master.
        let lost = status(3, None, Some("10.0.0.3:6383"));
        assert_eq!(slots(&lost, &peers(None, None)), Reply::Array(Vec::new()));
        assert_eq!(
            slots(&own, &peers(Some(2), Some(2))),
            Reply::Array(Vec::new())
        );
    }

    #[test]
    fn nodes_lines_have_redis_columns() {
        let own = status(1, Some(1), Some("10.0.0.1:6381"));
        let text = nodes(&own, &peers(Some(1), Some(3)));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                format!(
                    "{} 10.0.0.1:6381@7001 myself,master - 0 0 7 connected 0-16383",
                    name(1)
                ),
                format!(
                    "{} 10.0.0.2:6382@7002 slave {} 0 0 7 connected",
                    name(2),
                    name(1)
                ),
                format!(
                    "{} :0@7003 slave,fail,noaddr {} 0 0 7 disconnected",
                    name(3),
                    name(1)
                ),
            ]
        );
        assert_eq!(name(1).len(), 40);
    }

    #[test]
    fn shards_are_one_shard_of_every_slot() {
        let own = status(2, Some(1), Some("10.0.0.2:6382"));
        let Reply::Array(shards) = shards(&own, &peers(Some(1), None)) else {
            panic!("array")
        };
        assert_eq!(shards.len(), 1);
        let Reply::Map(fields) = &shards[0] else {
            panic!("map")
        };
        assert_eq!(
            fields[0],
            (
                Reply::bulk("slots"),
                Reply::Array(vec![Reply::Int(0), Reply::Int(16383)])
            )
        );
        let Reply::Array(nodes) = &fields[1].1 else {
            panic!("nodes")
        };
        assert_eq!(nodes.len(), 3);
        let Reply::Map(first) = &nodes[0] else {
            panic!("node map")
        };
        assert!(first.contains(&(Reply::bulk("role"), Reply::bulk("master"))));
        assert!(first.contains(&(Reply::bulk("id"), Reply::bulk(name(1)))));
        assert!(first.contains(&(Reply::bulk("port"), Reply::Int(6381))));
    }
}
