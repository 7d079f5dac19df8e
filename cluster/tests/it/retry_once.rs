//! A forward retried after a slow link (the same request id sent again) is applied once:
//! the follower's first attempts reach the leader late, after the follower gave up on
//! them, and are answered from the dedup table.

use std::time::{Duration, Instant};

use bloomkv_cluster::kv::{KvMachine, KvRequest, KvResponse};
use bloomkv_cluster_testkit::proxy::Link;

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_forward_is_applied_once() {
    let c = Cluster::start_steady(3, |cfg| {
        cfg.forward_attempt_timeout = Duration::from_millis(300);
        cfg.request_timeout = Duration::from_secs(10);
    })
    .await;
    // The follower reaches the leader through a proxy that holds requests for 500 ms.
    let (leader, follower, proxy) = c.follower_through_proxy().await;
    let before = c.node(leader).status().last_log_index.unwrap();
    proxy.set(Link::Delay(Duration::from_millis(500)));
    let node = c.node(follower);
    let write = tokio::spawn(async move { node.write(KvRequest::incr("ctr", 1).encode()).await });
    tokio::time::sleep(Duration::from_millis(700)).await;
    proxy.set(Link::Pass);
    let reply = write.await.unwrap().unwrap();
    assert_eq!(KvResponse::decode(&reply).unwrap(), KvResponse::Int(1));

    // Every attempt that reached the leader became a log entry; at least the first (late)
    // one and the last one did.
    let until = Instant::now() + Duration::from_secs(5);
    while c.node(leader).status().last_log_index.unwrap() < before + 2 {
        assert!(
            Instant::now() < until,
            "the retried attempts never reached the log"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    c.wait_converged().await;
    for id in c.running() {
        let db = c.node(id).state_db();
        assert_eq!(
            KvMachine::get(&db, b"ctr").unwrap(),
            Some(b"1".to_vec()),
            "node {id}"
        );
        assert_eq!(
            c.machines[&id].applied_commands(),
            1,
            "node {id} applied INCR once"
        );
    }
}
