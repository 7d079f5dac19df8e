//! Linearizable reads on one node share read-index requests; a read still sees every
//! write acknowledged before it began. 20 tasks each write their own key through one node
//! and read it back through another, many times over, so that reads arrive while other
//! reads' requests for the read index are out (a read that joined a request already out
//! could miss the write acknowledged just before it).

use std::time::Duration;

use bloomkv_cluster::kv::{KvMachine, KvRequest};
use bloomkv_cluster_testkit::proxy::Link;

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_sees_every_write_acknowledged_before_it() {
    let c = Cluster::start(3, |_| {}).await;
    c.wait_leader().await;
    let nodes = c.running();
    let tasks: Vec<_> = (0..20usize)
        .map(|t| {
            let via = c.node(nodes[t % nodes.len()]);
            let read_on = c.node(nodes[(t + 1) % nodes.len()]);
            tokio::spawn(async move {
                let key = format!("task{t}");
                for n in 0..15u32 {
                    let value = n.to_string();
                    via.write(KvRequest::set(key.clone(), value.clone()).encode())
                        .await
                        .unwrap();
                    read_on.linearizable_read_barrier().await.unwrap();
                    let seen = KvMachine::get(&read_on.state_db(), key.as_bytes()).unwrap();
                    assert_eq!(seen, Some(value.into_bytes()), "{key} on {}", read_on.id());
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

/// A request for the read index that hangs (its link to the leader went silent) stops
/// holding back the reads behind it: a read that arrives once the link is back starts a
/// request of its own and answers while the hung one still waits for its attempt to time
/// out. Before, the second read waited for the first request to end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_read_index_request_does_not_hold_back_the_next() {
    let c = Cluster::start_steady(3, |cfg| {
        cfg.forward_attempt_timeout = Duration::from_secs(8);
        cfg.request_timeout = Duration::from_secs(30);
    })
    .await;
    // The follower reaches the leader through a proxy that swallows everything.
    let (leader, follower, proxy) = c.follower_through_proxy().await;
    proxy.set(Link::Blackhole);
    let node = c.node(follower);
    let hung = tokio::spawn(async move { node.linearizable_read_barrier().await });
    tokio::time::sleep(Duration::from_millis(300)).await;

    // The link is back (a direct route); the hung attempt still waits out its 8 s.
    c.node(follower).set_route(leader, None);
    c.node(follower).linearizable_read_barrier().await.unwrap();
    assert!(
        !hung.is_finished(),
        "the second read answered only after the hung request ended"
    );
    hung.await.unwrap().unwrap();
}
