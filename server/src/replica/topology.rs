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
use std::ops::RangeInclusive;

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

/// One Raft group as the node answering sees it, for a node of several groups (docs/
/// CLUSTER.md "Sharding"): the slots it owns, this node's status in it and its members'
/// reports.
#[derive(Clone, Copy, Debug)]
pub struct GroupView<'a> {
    /// The slot ranges the group owns.
    pub ranges: &'a [RangeInclusive<u16>],
    /// This node's status in the group.
    pub own: &'a NodeStatus,
    /// Every member's report of its status in the group.
    pub peers: &'a [PeerReport],
}

const ALL: [RangeInclusive<u16>; 1] = [0..=SLOTS - 1];

/// `CLUSTER SLOTS`: `[[0, 16383, [host, port, id, []], ...]]`.
pub fn slots(own: &NodeStatus, peers: &[PeerReport]) -> Reply {
    slots_of(&[GroupView {
        ranges: &ALL,
        own,
        peers,
    }])
}

/// `CLUSTER SLOTS` of several groups: each range of each group with a reachable leader,
/// that leader first, then the group's other members that answer; by first slot.
pub fn slots_of(groups: &[GroupView<'_>]) -> Reply {
    let mut entries = Vec::new();
    for g in groups {
        let nodes = serving(g.own, g.peers);
        if nodes.is_empty() {
            continue;
        }
        for r in g.ranges {
            let mut range = vec![
                Reply::Int(i64::from(*r.start())),
                Reply::Int(i64::from(*r.end())),
            ];
            for m in &nodes {
                let (host, port) = m.client.clone().unwrap_or_default();
                range.push(Reply::Array(vec![
                    Reply::bulk(host),
                    Reply::Int(i64::from(port)),
                    Reply::bulk(name(m.id)),
                    Reply::Array(Vec::new()),
                ]));
            }
            entries.push((*r.start(), Reply::Array(range)));
        }
    }
    entries.sort_by_key(|(first, _)| *first);
    Reply::Array(entries.into_iter().map(|(_, r)| r).collect())
}

/// `CLUSTER SHARDS`: one shard, its slot range and its nodes.
pub fn shards(own: &NodeStatus, peers: &[PeerReport]) -> Reply {
    shards_of(&[GroupView {
        ranges: &ALL,
        own,
        peers,
    }])
}

/// `CLUSTER SHARDS` of several groups: one shard per group with a reachable leader, its
/// ranges and its nodes (the leader the master).
pub fn shards_of(groups: &[GroupView<'_>]) -> Reply {
    let mut out = Vec::new();
    for g in groups {
        let nodes = serving(g.own, g.peers);
        if nodes.is_empty() {
            continue;
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
        let slots = g
            .ranges
            .iter()
            .flat_map(|r| {
                [
                    Reply::Int(i64::from(*r.start())),
                    Reply::Int(i64::from(*r.end())),
                ]
            })
            .collect();
        out.push(Reply::Map(vec![
            (Reply::bulk("slots"), Reply::Array(slots)),
            (Reply::bulk("nodes"), Reply::Array(nodes)),
        ]));
    }
    Reply::Array(out)
}

/// `CLUSTER NODES`: one line per member, Redis's columns (id, `ip:port@bus-port`, flags,
/// master, ping sent, pong received, config epoch (the term here), link state, slots).
pub fn nodes(own: &NodeStatus, peers: &[PeerReport]) -> String {
    nodes_of(&[GroupView {
        ranges: &ALL,
        own,
        peers,
    }])
}

/// `CLUSTER NODES` of several groups: one line per node (Redis gives a node one role). A
/// node leading groups is a `master` of all their slots, its config epoch the highest term
/// among them; one leading none is a `slave` of group 0's leader. Members, addresses and
/// liveness are group 0's (every node is in every group).
pub fn nodes_of(groups: &[GroupView<'_>]) -> String {
    let Some(first) = groups.first() else {
        return String::new();
    };
    let master0 = first.own.leader.map(name);
    let mut out = String::new();
    for m in members(first.own, first.peers) {
        let (host, port) = m.client.clone().unwrap_or_default();
        let led: Vec<&GroupView<'_>> = groups
            .iter()
            .filter(|g| g.own.leader == Some(m.id))
            .collect();
        let master = !led.is_empty();
        let mut flags = Vec::new();
        if m.myself {
            flags.push("myself");
        }
        flags.push(if master { "master" } else { "slave" });
        if !m.up {
            flags.push("fail");
        }
        if m.client.is_none() {
            flags.push("noaddr");
        }
        let of = match (&master0, master) {
            (Some(id), false) => id.as_str(),
            _ => "-",
        };
        let epoch = led
            .iter()
            .map(|g| g.own.term)
            .max()
            .unwrap_or(first.own.term);
        let _ = write!(
            out,
            "{} {host}:{port}@{} {} {of} 0 0 {epoch} {}",
            name(m.id),
            m.raft_port,
            flags.join(","),
            if m.up { "connected" } else { "disconnected" },
        );
        let mut ranges: Vec<&RangeInclusive<u16>> =
            led.iter().flat_map(|g| g.ranges.iter()).collect();
        ranges.sort_by_key(|r| *r.start());
        for r in ranges {
            if r.start() == r.end() {
                let _ = write!(out, " {}", r.start());
            } else {
                let _ = write!(out, " {}-{}", r.start(), r.end());
            }
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

    fn group_status(id: u64, leader: u64, term: u64) -> NodeStatus {
        let mut s = status(id, Some(leader), Some(&format!("10.0.0.{id}:638{id}")));
        s.term = term;
        s
    }

    fn group_peers(leader: u64, down: Option<u64>) -> Vec<PeerReport> {
        peers(Some(leader), down)
    }

    #[test]
    fn several_groups_show_a_range_per_group_and_a_line_per_node() {
        // Three groups, group g led by node g + 1, seen from node 2.
        let ranges = [vec![0..=5460], vec![5461..=10921], vec![10922..=16383]];
        let owns: Vec<NodeStatus> = (0..3u64).map(|g| group_status(2, g + 1, 10 + g)).collect();
        let peers: Vec<Vec<PeerReport>> = (0..3u64).map(|g| group_peers(g + 1, None)).collect();
        let groups: Vec<GroupView<'_>> = (0..3)
            .map(|g| GroupView {
                ranges: &ranges[g],
                own: &owns[g],
                peers: &peers[g],
            })
            .collect();
        let Reply::Array(slots) = slots_of(&groups) else {
            panic!("array")
        };
        assert_eq!(slots.len(), 3);
        for (g, entry) in slots.iter().enumerate() {
            let Reply::Array(e) = entry else {
                panic!("range")
            };
            let r = &ranges[g][0];
            assert_eq!(e[0], Reply::Int(i64::from(*r.start())));
            assert_eq!(e[1], Reply::Int(i64::from(*r.end())));
            let leader = g as u64 + 1;
            assert_eq!(
                e[2],
                node(&format!("10.0.0.{leader}"), 6380 + leader as i64, leader),
                "group {g}'s master"
            );
            assert_eq!(e.len(), 5, "master and two replicas");
        }
        let Reply::Array(shards) = shards_of(&groups) else {
            panic!("array")
        };
        assert_eq!(shards.len(), 3);
        let text = nodes_of(&groups);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                format!(
                    "{} 10.0.0.1:6381@7001 master - 0 0 10 connected 0-5460",
                    name(1)
                ),
                format!(
                    "{} 10.0.0.2:6382@7002 myself,master - 0 0 11 connected 5461-10921",
                    name(2)
                ),
                format!(
                    "{} 10.0.0.3:6383@7003 master - 0 0 12 connected 10922-16383",
                    name(3)
                ),
            ]
        );
        // Node 1 leads groups 0 and 2, node 3 none (a slave of group 0's leader); a group
        // without a reachable leader has no range in SLOTS.
        let owns: Vec<NodeStatus> = [1, 2, 1].iter().map(|&l| group_status(2, l, 5)).collect();
        let peers: Vec<Vec<PeerReport>> = [1, 2, 1].iter().map(|&l| group_peers(l, None)).collect();
        let groups: Vec<GroupView<'_>> = (0..3)
            .map(|g| GroupView {
                ranges: &ranges[g],
                own: &owns[g],
                peers: &peers[g],
            })
            .collect();
        let text = nodes_of(&groups);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "{} 10.0.0.1:6381@7001 master - 0 0 5 connected 0-5460 10922-16383",
                name(1)
            )
        );
        assert_eq!(
            lines[2],
            format!(
                "{} 10.0.0.3:6383@7003 slave {} 0 0 5 connected",
                name(3),
                name(1)
            )
        );
        let down = group_peers(1, Some(1));
        let groups = [
            GroupView {
                ranges: &ranges[0],
                own: &owns[0],
                peers: &down,
            },
            groups[1],
        ];
        let Reply::Array(slots) = slots_of(&groups) else {
            panic!("array")
        };
        assert_eq!(slots.len(), 1, "only group 1's range has a master");
    }
}
