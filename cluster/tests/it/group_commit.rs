//! Concurrent writes share log entries: 300 INCRs sent at once through all three nodes
//! are each applied exactly once, in some order (their answers are 1..=300), in far fewer
//! log entries than writes (the leader proposes at most two entries at a time and the rest
//! wait for the next one).

use bloomkv_cluster::kv::{KvMachine, KvRequest, KvResponse};

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_share_entries_and_each_is_applied_once() {
    let c = Cluster::start(3, |_| {}).await;
    let leader = c.wait_leader().await;
    let before = c.node(leader).status().last_log_index.unwrap_or(0);

    let writes = 300u64;
    let nodes = c.running();
    let tasks: Vec<_> = (0..writes)
        .map(|i| {
            let node = c.node(nodes[i as usize % nodes.len()]);
            tokio::spawn(async move { node.write(KvRequest::incr("n", 1).encode()).await })
        })
        .collect();
    let mut answers = Vec::new();
    for t in tasks {
        let reply = t.await.unwrap().unwrap();
        match KvResponse::decode(&reply).unwrap() {
            KvResponse::Int(n) => answers.push(n),
            other => panic!("{other:?}"),
        }
    }
    answers.sort_unstable();
    assert_eq!(answers, (1..=writes as i64).collect::<Vec<_>>());

    let after = c.node(leader).status().last_log_index.unwrap_or(0);
    let entries = after - before;
    assert!(
        entries < writes / 3,
        "{writes} concurrent writes took {entries} log entries"
    );
    for id in c.running() {
        let n = c.node(id);
        n.linearizable_read_barrier().await.unwrap();
        assert_eq!(
            KvMachine::get(&n.state_db(), b"n").unwrap(),
            Some(writes.to_string().into_bytes()),
            "node {id}"
        );
    }
}

/// Followers forward concurrent writes to the leader several to a call: each write still
/// gets its own answer (an INCR of its own key by its own amount answers that amount).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_forwarded_together_each_get_their_own_answer() {
    let c = Cluster::start(3, |_| {}).await;
    let leader = c.wait_leader().await;
    let followers: Vec<u64> = c.running().into_iter().filter(|&id| id != leader).collect();
    let tasks: Vec<_> = (1..=300i64)
        .map(|i| {
            let node = c.node(followers[i as usize % followers.len()]);
            tokio::spawn(async move {
                let reply = node
                    .write(KvRequest::incr(format!("k{i}"), i).encode())
                    .await
                    .unwrap();
                (i, KvResponse::decode(&reply).unwrap())
            })
        })
        .collect();
    for t in tasks {
        let (i, r) = t.await.unwrap();
        assert_eq!(r, KvResponse::Int(i), "k{i}");
    }
    let n = c.node(leader);
    n.linearizable_read_barrier().await.unwrap();
    for i in [1i64, 150, 300] {
        assert_eq!(
            KvMachine::get(&n.state_db(), format!("k{i}").as_bytes()).unwrap(),
            Some(i.to_string().into_bytes())
        );
    }
}
