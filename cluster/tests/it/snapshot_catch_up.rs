//! A follower that was down while the cluster snapshotted and purged its log catches up by
//! installing a snapshot; then the leader is killed and restarted: every acknowledged key
//! is on every node.

use std::collections::BTreeMap;

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn follower_installs_a_snapshot_and_leader_restart_loses_nothing() {
    let mut c = Cluster::start(3, |cfg| {
        cfg.snapshot_every = 50;
        cfg.keep_logs_after_snapshot = 0;
    })
    .await;
    let mut acked = BTreeMap::new();
    let leader = c.wait_leader().await;
    c.fill(0..30, &mut acked).await;

    let follower = c.running().into_iter().find(|&id| id != leader).unwrap();
    let behind = c.node(follower).status().last_log_index.unwrap();
    c.stop(follower).await;
    c.fill(30..230, &mut acked).await;
    // The leader purges once no replication is reading the entries (its retries to the
    // stopped follower pause between attempts).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while c
        .node(leader)
        .status()
        .purged_index
        .is_none_or(|p| p <= behind)
    {
        assert!(
            std::time::Instant::now() < until,
            "the leader never purged past the follower"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    c.restart(follower).await;
    c.check_all(&acked).await;
    let m = &c.machines[&follower];
    assert!(
        m.resets() >= 2,
        "the follower installed a snapshot (resets: {})",
        m.resets()
    );
    assert!(
        m.applied_commands() < 200,
        "the follower applied {} commands itself: it replayed the log instead",
        m.applied_commands()
    );

    c.stop(leader).await;
    let new_leader = c.wait_leader().await;
    assert_ne!(new_leader, leader);
    c.fill(230..300, &mut acked).await;
    c.restart(leader).await;
    c.check_all(&acked).await;
}
