//! Power cuts (the engine's fault env: every file cut back to what was synced) on the
//! leader, with writes in flight, and then on a follower: no acknowledged write is lost,
//! and the nodes restart although snapshots had purged their logs; then on all nodes at
//! once.

use std::collections::BTreeMap;
use std::time::Duration;

use bloomkv_cluster::kv::{KvRequest, KvResponse};

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn power_cuts_lose_no_acknowledged_write() {
    let mut c = Cluster::start(3, |cfg| {
        cfg.snapshot_every = 50;
        cfg.keep_logs_after_snapshot = 0;
        cfg.request_timeout = Duration::from_secs(4);
    })
    .await;
    let mut acked = BTreeMap::new();
    c.fill(0..120, &mut acked).await;
    let leader = c.wait_leader().await;
    assert!(
        c.node(leader).status().purged_index.is_some(),
        "snapshots purged the log"
    );

    // Writes in flight through the followers while the leader loses power: they retry at
    // the new leader; those acknowledged must survive.
    let followers: Vec<_> = c
        .running()
        .into_iter()
        .filter(|&id| id != leader)
        .map(|id| c.node(id))
        .collect();
    let mut tasks = Vec::new();
    for i in 120..160u32 {
        let node = std::sync::Arc::clone(&followers[i as usize % 2]);
        tasks.push(tokio::spawn(async move {
            let req = KvRequest::set(format!("key{i:05}"), format!("v{i}"));
            (i, node.write(req.encode()).await)
        }));
        if i == 130 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    c.crash(leader).await;
    let mut failed = 0;
    for t in tasks {
        let (i, r) = t.await.unwrap();
        match r {
            Ok(reply) => {
                assert_eq!(KvResponse::decode(&reply).unwrap(), KvResponse::Ok);
                acked.insert(
                    format!("key{i:05}").into_bytes(),
                    format!("v{i}").into_bytes(),
                );
            }
            Err(_) => failed += 1,
        }
    }
    assert!(
        failed < 40,
        "some in-flight writes succeed through the new leader"
    );
    drop(followers);
    c.fill(160..200, &mut acked).await;
    c.restart(leader).await;
    // Writes whose outcome was unknown may or may not be there; count only acknowledged.
    c.wait_converged().await;
    check_acked(&c, &acked);

    let leader = c.wait_leader().await;
    let follower = c.running().into_iter().find(|&id| id != leader).unwrap();
    c.crash(follower).await;
    c.fill(200..260, &mut acked).await;
    c.restart(follower).await;
    c.wait_converged().await;
    check_acked(&c, &acked);

    // The whole cluster loses power at once: only what each node synced survives, and
    // that must include every acknowledged write.
    c.fill(260..300, &mut acked).await;
    for id in c.running() {
        c.stop(id).await;
    }
    for id in 1..=3 {
        c.crash_stopped(id).await;
    }
    for id in 1..=3 {
        c.restart(id).await;
    }
    c.wait_converged().await;
    check_acked(&c, &acked);
}

fn check_acked(c: &Cluster, acked: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for id in c.running() {
        let db = c.node(id).state_db();
        for (k, v) in acked {
            assert_eq!(
                bloomkv_cluster::kv::KvMachine::get(&db, k)
                    .unwrap()
                    .as_ref(),
                Some(v),
                "node {id} lost acknowledged {}",
                String::from_utf8_lossy(k)
            );
        }
    }
}
