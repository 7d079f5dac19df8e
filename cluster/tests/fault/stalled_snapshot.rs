//! A snapshot stream whose connection stops forwarding bytes without breaking (a middlebox
//! dropping packets) is given up and sent again once nothing moved for a few seconds: the
//! follower it was for catches up after the link heals, instead of waiting out the
//! whole-transfer bound (minutes), as it once did in the nemesis (issue 31).

use std::time::Duration;

use bloomkv_cluster_testkit::proxy::Link;

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

fn info_field(c: &ProcCluster, id: u64, field: &str) -> Option<u64> {
    let text = Conn::connect(c.port(id), Duration::from_secs(5))
        .and_then(|mut x| x.call(&["INFO", "replication"]))
        .ok()?
        .text();
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

fn fill(c: &ProcCluster, leader: u64, keys: std::ops::Range<u32>) {
    let mut conn = Conn::connect(c.port(leader), Duration::from_secs(5)).unwrap();
    for k in keys {
        let key = format!("k{k}");
        assert_eq!(
            conn.call(&["SET", &key, &key]).unwrap(),
            Value::Status("OK".into())
        );
    }
}

/// Sets the links both ways between `node` and each of `others`.
fn link_all(c: &ProcCluster, others: &[u64], node: u64, link: Link) {
    for &o in others {
        c.link(o, node, link);
        c.link(node, o, link);
    }
}

/// The last lines of each of `nodes`' logs.
fn tails(c: &ProcCluster, nodes: &[u64]) -> String {
    nodes
        .iter()
        .map(|&o| c.log_tail(o))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_stalled_snapshot_stream_is_sent_again() {
    let mut c = ProcCluster::start(3, &["--snapshot-every", "100", "--keep-logs", "0"]);
    let leader = c.wait_leader();
    let behind = c.ids().into_iter().find(|&i| i != leader).unwrap();
    // Leadership may move among the others meanwhile (a loaded machine misses heartbeats):
    // whichever of them leads when the node returns sends the snapshot, so every check and
    // every link below covers them all.
    let others: Vec<u64> = c.ids().into_iter().filter(|&i| i != behind).collect();
    fill(&c, leader, 0..20);
    c.wait_converged();
    let seen = info_field(&c, behind, "raft_applied_index").unwrap();
    c.kill(behind);
    // Past a few snapshots: the others purge the entries the stopped node lacks, so only a
    // snapshot brings it back.
    let mut next = 20;
    while others
        .iter()
        .any(|&o| info_field(&c, o, "raft_purged_index").is_none_or(|p| p <= seen))
    {
        fill(&c, c.wait_leader(), next..next + 100);
        next += 100;
        assert!(next < 5_000, "the others never purged past {seen}");
    }
    // The node comes back behind links that swallow every byte: the leader's snapshot
    // stream to it stalls, neither side seeing an error.
    link_all(&c, &others, behind, Link::Blackhole);
    c.restart(behind);
    let until = std::time::Instant::now() + Duration::from_secs(30);
    while !others.iter().any(|&o| c.log_text(o).contains("stalled")) {
        assert!(
            std::time::Instant::now() < until,
            "no node gave up the stalled snapshot:\n{}",
            tails(&c, &others)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    link_all(&c, &others, behind, Link::Pass);
    c.wait_converged();
    assert!(
        others
            .iter()
            .any(|&o| c.log_text(o).contains(&format!("to node {behind} in"))),
        "the snapshot was sent again and arrived:\n{}",
        tails(&c, &others)
    );
    let mut conn = Conn::connect(c.port(behind), Duration::from_secs(5)).unwrap();
    let last = format!("k{}", next - 1);
    assert_eq!(
        conn.call(&["GET", &last]).unwrap(),
        Value::Bulk(Some(last.clone().into_bytes()))
    );
}
