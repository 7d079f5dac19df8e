//! Online membership changes through any node: a new node joins as a learner, is
//! promoted, serves; a member is removed; the cluster keeps working.

use std::collections::BTreeMap;

use bloomkv_cluster::Role;

use crate::harness::Cluster;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_promote_remove() {
    let mut c = Cluster::start(3, |_| {}).await;
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
