//! Without a quorum there is no leader: writes, read barriers and membership changes end
//! with a typed error within the configured bound, never a hang.

use std::time::{Duration, Instant};

use bloomkv_cluster::Error;
use bloomkv_cluster::kv::KvRequest;

use crate::harness::Cluster;

const BOUND: Duration = Duration::from_millis(1500);

fn tweak(cfg: &mut bloomkv_cluster::NodeConfig) {
    cfg.request_timeout = BOUND;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_never_saw_a_leader_answers_no_leader() {
    // Three nodes in the initial cluster, only one ever started.
    let c = Cluster::start_some(3, 1, tweak).await;
    let t = Instant::now();
    let e = c
        .node(1)
        .write(KvRequest::set("k", "v").encode())
        .await
        .unwrap_err();
    let took = t.elapsed();
    assert!(matches!(e, Error::NoLeader { .. }), "{e}");
    assert!(e.not_applied());
    assert!(
        took >= BOUND && took < BOUND + Duration::from_secs(1),
        "{took:?}"
    );
    let e = c.node(1).linearizable_read_barrier().await.unwrap_err();
    assert!(matches!(e, Error::NoLeader { .. }), "{e}");
    let e = c.node(1).add_learner(9, "127.0.0.1:1").await.unwrap_err();
    assert!(matches!(e, Error::NoLeader { .. }), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn losing_the_quorum_ends_writes_and_reads_in_bounded_time() {
    let mut c = Cluster::start(3, tweak).await;
    let leader = c.wait_leader().await;
    c.write(leader, KvRequest::set("k", "v")).await.unwrap();
    let others: Vec<u64> = c.running().into_iter().filter(|&id| id != leader).collect();
    for id in others {
        c.stop(id).await;
    }
    // The old leader may still believe it leads: its write cannot commit (outcome unknown
    // to it), its read barrier cannot confirm leadership.
    let t = Instant::now();
    let e = c
        .write(leader, KvRequest::set("k2", "v"))
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Timeout { .. } | Error::NoLeader { .. }),
        "{e}"
    );
    assert!(
        t.elapsed() < BOUND + Duration::from_secs(1),
        "{:?}",
        t.elapsed()
    );
    let t = Instant::now();
    let e = c
        .node(leader)
        .linearizable_read_barrier()
        .await
        .unwrap_err();
    assert!(
        matches!(e, Error::Timeout { .. } | Error::NoLeader { .. }),
        "{e}"
    );
    assert!(
        t.elapsed() < BOUND + Duration::from_secs(1),
        "{:?}",
        t.elapsed()
    );
}
