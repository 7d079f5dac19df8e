//! Regressions of the election livelock (issue 31): a node that could not win raised its
//! term on every election timeout, the leader stepped down whenever that term reached it,
//! and a lagging node that collided on a term with the next leader refused its entries
//! for good. With pre-votes (`node::election`), a node that cannot win leaves the term
//! alone, and the burst of kills that once left a cluster without a leader for minutes is
//! over within seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::history::Workload;
use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

/// Every running node's `raft_term` (INFO replication).
fn terms(c: &ProcCluster) -> Vec<u64> {
    c.ids()
        .into_iter()
        .filter(|&id| c.nodes[&id].is_up())
        .filter_map(|id| {
            let text = Conn::connect(c.port(id), Duration::from_secs(5))
                .and_then(|mut x| x.call(&["INFO", "replication"]))
                .ok()?
                .text();
            text.lines()
                .find_map(|l| l.strip_prefix("raft_term:"))
                .and_then(|t| t.trim().parse().ok())
        })
        .collect()
}

fn leader(c: &ProcCluster) -> Option<u64> {
    c.ids().into_iter().find_map(|id| {
        match Conn::connect(c.port(id), Duration::from_millis(500))
            .and_then(|mut x| x.call(&["CLUSTER", "LEADER"]))
        {
            Ok(Value::Int(l)) => Some(l as u64),
            _ => None,
        }
    })
}

/// Every node answers a linearizable read, each within `bound` of `from`.
fn reads_everywhere(c: &ProcCluster, from: Instant, bound: Duration) {
    for id in c.ids() {
        loop {
            let r = Conn::connect(c.port(id), Duration::from_secs(2))
                .and_then(|mut x| x.call(&["GET", "probe"]));
            if matches!(r, Ok(Value::Bulk(_))) {
                break;
            }
            assert!(
                from.elapsed() < bound,
                "node {id} answered no linearizable read {:?} after the faults ended: {r:?}\n{}",
                from.elapsed(),
                c.log_tail(id)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// One numeric field of a node's INFO replication.
fn replication_field(c: &ProcCluster, id: u64, name: &str) -> u64 {
    let text = Conn::connect(c.port(id), Duration::from_secs(5))
        .and_then(|mut x| x.call(&["INFO", "replication"]))
        .unwrap()
        .text();
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in {text}"))
}

#[test]
fn a_paused_follower_rejoins_without_an_election() {
    let mut c = ProcCluster::start(3, &[]);
    let first = c.wait_leader();
    let ports: Vec<u16> = c.ids().iter().map(|&id| c.port(id)).collect();
    let w = Workload::new(ports, Duration::from_secs(8));
    let stop = Arc::new(AtomicBool::new(false));
    let threads = w.clients(4, &stop);
    let follower = c.ids().into_iter().find(|&i| i != first).unwrap();
    // What the resumed node itself does is the point: on a loaded machine the leader may
    // miss heartbeats and the other follower start an election, which says nothing of it.
    let started = replication_field(&c, follower, "raft_elections_started");
    for round in 0..4u64 {
        c.pause(follower);
        // Well past the election timeout: the paused node's timer runs out while it sleeps.
        std::thread::sleep(Duration::from_millis(1500 + 400 * round));
        c.resume(follower);
        std::thread::sleep(Duration::from_secs(1));
        assert_eq!(
            replication_field(&c, follower, "raft_elections_started"),
            started,
            "round {round}: the resumed node started an election (it should lose its pre-vote)"
        );
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    c.wait_converged();
}

#[test]
fn the_burst_that_wedged_a_cluster_heals() {
    // As the cluster was run when it wedged: fsync on every write, default timeouts and
    // snapshot policy.
    let mut c = ProcCluster::start(3, &["--appendfsync", "always"]);
    c.wait_leader();
    let ports: Vec<u16> = c.ids().iter().map(|&id| c.port(id)).collect();
    let w = Workload::new(ports, Duration::from_secs(8));
    let stop = Arc::new(AtomicBool::new(false));
    let threads = w.clients(8, &stop);
    std::thread::sleep(Duration::from_secs(1));
    let start_term = terms(&c).into_iter().max().unwrap_or(0);
    let mut heals = Vec::new();
    for _ in 0..2 {
        // Kill a follower and restart it, 2 s later the leader, 3 s later the first again.
        let l = c.wait_leader();
        let a = c.ids().into_iter().find(|&i| i != l).unwrap();
        c.kill(a);
        c.restart(a);
        std::thread::sleep(Duration::from_secs(2));
        let l = leader(&c).filter(|&l| l != a).unwrap_or(l);
        c.kill(l);
        c.restart(l);
        std::thread::sleep(Duration::from_secs(3));
        c.kill(a);
        c.restart(a);
        let healed = Instant::now();
        heals.push(healed);
        reads_everywhere(&c, healed, Duration::from_secs(5));
    }
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let outage = w.outages_after(&heals);
    assert!(
        outage.longest <= Duration::from_secs(5),
        "no acknowledged operation for {:?} after a burst",
        outage.longest
    );
    // Two leader kills per burst at most (the second kill may hit a new leader): each
    // costs an election, a split vote perhaps one more; nothing like the hundreds of
    // terms of the livelock.
    let end_term = terms(&c).into_iter().max().unwrap_or(0);
    assert!(
        end_term <= start_term + 8,
        "terms {start_term} -> {end_term} over two bursts"
    );
    c.wait_converged();
    let report = w.verify(c.dir.path());
    assert!(report.ok > 100, "{report}");
}
