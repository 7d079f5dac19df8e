//! Online membership changes through any node: a new node joins as a learner, is
//! promoted, serves; a member is removed; the cluster keeps working.

use std::collections::BTreeMap;

use bloomkv_cluster::Role;

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_promote_remove() {
    let mut c = Cluster::start_steady(3, |_| {}).await;
    let mut acked = BTreeMap::new();
    c.fill(0..20, &mut acked).await;
    let leader = c.wait_leader().await;
    let follower = c.running().into_iter().find(|&id| id != leader).unwrap();

    c.add_node(4).await;
    assert!(c.node(4).status().members.is_empty(), "not a member yet");
    // Through a follower: forwarded to the leader.
    c.node(follower)
        .add_learner(4, c.addrs[&4].clone())
        .await
        .unwrap();
    // Four voters: refused unless forced (here, as when replacing a node: one is removed next).
    let e = c.node(follower).promote(4, false).await.unwrap_err();
    assert!(
        matches!(&e, bloomkv_cluster::Error::Membership(m) if m.contains("even")),
        "{e}"
    );
    c.node(follower).promote(4, true).await.unwrap();
    let st = c.node(leader).status();
    assert_eq!(st.members.iter().filter(|m| m.voter).count(), 4, "{st:#?}");
    c.fill(20..40, &mut acked).await;
    c.check_all(&acked).await;
    assert_eq!(c.node(4).status().role, Role::Follower);

    // Remove the leader itself: the others elect a new one and go on.
    c.node(follower).remove(leader).await.unwrap();
    c.stop(leader).await;
    let new_leader = c.wait_leader().await;
    assert_ne!(new_leader, leader);
    let st = c.node(new_leader).status();
    assert_eq!(st.members.len(), 3, "{st:#?}");
    assert!(st.members.iter().all(|m| m.id != leader));
    c.fill(40..60, &mut acked).await;
    c.check_all(&acked).await;
    // Promoting an unknown node is refused with a typed error.
    let e = c.node(new_leader).promote(42, true).await.unwrap_err();
    assert!(matches!(e, bloomkv_cluster::Error::Membership(_)), "{e}");
    // Removing a node that is not a member is refused, not reported done.
    let e = c.node(new_leader).remove(9).await.unwrap_err();
    assert!(
        matches!(&e, bloomkv_cluster::Error::Membership(m) if m.contains("not a member")),
        "{e}"
    );
}

/// Only node 1 knows the initial membership; nodes 2 and 3 start with none (as when their
/// bootstrap loses the race to node 1's first vote request, seen under load). They cannot
/// judge node 1, so they must not refuse it: node 1 wins, leads, and sends them the
/// membership. They used to answer "not a member", and node 1, hearing that from a majority,
/// took itself for removed: a cluster with no leader, for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn voters_without_a_membership_yet_let_the_bootstrapped_node_lead() {
    let mut c = Cluster::start_some(3, 1, |_| {}).await;
    // Node 1's first election (at its bootstrap) finds nobody; by the time the others are
    // up, it campaigns through pre-votes.
    let timeout = c.config(1, true).election_timeout.1;
    tokio::time::sleep(timeout * 3).await;
    assert_eq!(c.node(1).leader(), None);
    c.launch_unbootstrapped(2).await;
    c.launch_unbootstrapped(3).await;
    assert_eq!(c.wait_leader().await, 1);
    let mut acked = BTreeMap::new();
    c.fill(0..10, &mut acked).await;
    c.wait_converged().await;
    for id in [2, 3] {
        let members: Vec<u64> = c.node(id).status().members.iter().map(|m| m.id).collect();
        assert_eq!(members, [1, 2, 3], "node {id}");
    }
    c.check_all(&acked).await;
}
