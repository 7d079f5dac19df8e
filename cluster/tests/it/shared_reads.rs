//! Linearizable reads on one node share read-index requests; a read still sees every
//! write acknowledged before it began. 20 tasks each write their own key through one node
//! and read it back through another, many times over, so that reads arrive while other
//! reads' requests for the read index are out (a read that joined a request already out
//! could miss the write acknowledged just before it).

use bloomkv_cluster::kv::{KvMachine, KvRequest};

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
