//! Storage slower than the election timeout: Raft's core waits on every vote it saves, so
//! elections asked for meanwhile queue behind it. The survivors of a lost leader must still
//! elect one, without running a backlog of elections back to back once storage is fast again.

use std::time::Duration;

use bloomkv_cluster::kv::{KvRequest, KvResponse};

use crate::harness::Cluster;

/// Each fsync on the survivors: several election timeouts (250-500 ms by default).
const SLOW: Duration = Duration::from_millis(1200);
/// How long storage stays slow after the leader goes.
const STALL: Duration = Duration::from_secs(12);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_fsyncs_neither_wedge_an_election_nor_pile_up_terms() {
    let mut c = Cluster::start(3, |_| {}).await;
    let leader = c.wait_leader().await;
    c.write(leader, KvRequest::set("before", "1"))
        .await
        .unwrap();
    let survivors: Vec<u64> = c.running().into_iter().filter(|&id| id != leader).collect();
    let term_before = c.node(survivors[0]).status().term;
    for &id in &survivors {
        c.fault(id).set_sync_delay(SLOW);
    }
    c.stop(leader).await;
    tokio::time::sleep(STALL).await;
    for &id in &survivors {
        c.fault(id).set_sync_delay(Duration::ZERO);
    }
    // Storage is fast again: a leader among the two, and the write goes through it.
    let new_leader = c.wait_leader().await;
    assert_ne!(new_leader, leader);
    let r = c.write(new_leader, KvRequest::set("after", "1")).await;
    assert_eq!(r.unwrap(), KvResponse::Ok);
    // Every term a node enters costs it one save of its vote (SLOW), one after another on
    // its core: over the stall the term can move about once per SLOW (11-12 terms in all
    // here), then by the election each survivor may still have asked for, and by a split
    // vote or two once storage is fast again. A timer that asked anew at every pre-vote it
    // won (each election timeout) queued an election per ask behind the saves, each a term
    // of its own, run back to back once storage caught up (18-20 terms here).
    let settled = c.node(new_leader).status();
    let bound = u64::try_from(STALL.as_millis() / SLOW.as_millis()).unwrap() + 5;
    let terms = settled.term - term_before;
    eprintln!(
        "term {term_before} -> {} over {STALL:?} of {SLOW:?} fsyncs",
        settled.term
    );
    // The stall reached the vote saves (else this test would test nothing): the survivors
    // took several terms to elect through it.
    assert!(
        terms >= 3,
        "the term moved only {terms}: the fsyncs were not slowed"
    );
    assert!(
        terms <= bound,
        "the term moved {term_before} -> {} ({terms} terms) over {STALL:?} of {SLOW:?} fsyncs: \
         at most {bound} expected",
        settled.term
    );
}
