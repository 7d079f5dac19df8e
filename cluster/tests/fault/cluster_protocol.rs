//! Redis Cluster's protocol on a 3-node cluster: every node tells clients the same map (one
//! shard of all 16384 slots, the leader as master at its client port, the others as its
//! replicas), the map follows a failover, and a real cluster client (the `redis` crate's
//! `ClusterClient`, which routes by `CLUSTER SLOTS` as redis-py's `RedisCluster` does)
//! works against it unchanged.

use std::time::{Duration, Instant};

use redis::Commands;

use crate::procs::ProcCluster;
use crate::resp::{Conn, Value};

fn conn(c: &ProcCluster, id: u64) -> Conn {
    Conn::connect(c.port(id), Duration::from_secs(10)).unwrap()
}

/// Raft id `id` as a Redis Cluster node id.
fn name(id: u64) -> String {
    format!("{id:040x}")
}

/// The (port, id) of each node `CLUSTER SLOTS` names, master first, after checking its
/// one range covers every slot.
fn slot_nodes(v: &Value) -> Vec<(i64, String)> {
    let Value::Array(Some(ranges)) = v else {
        panic!("CLUSTER SLOTS: {v:?}")
    };
    assert_eq!(ranges.len(), 1, "one shard: {v:?}");
    let Value::Array(Some(range)) = &ranges[0] else {
        panic!("{v:?}")
    };
    assert_eq!(range[..2], [Value::Int(0), Value::Int(16383)], "{v:?}");
    range[2..]
        .iter()
        .map(|n| match n {
            Value::Array(Some(n)) => match (&n[0], &n[1], &n[2]) {
                (Value::Bulk(Some(host)), Value::Int(port), Value::Bulk(Some(id))) => {
                    assert_eq!(host, b"127.0.0.1");
                    (*port, String::from_utf8(id.clone()).unwrap())
                }
                other => panic!("{other:?}"),
            },
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Asks every running node for `CLUSTER SLOTS` until all name `leader` as the master and
/// `serving` nodes in all.
fn wait_map(c: &ProcCluster, leader: u64, serving: usize) {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let maps: Vec<Vec<(i64, String)>> = c
            .ids()
            .into_iter()
            .filter(|&id| c.is_up(id))
            .map(|id| slot_nodes(&conn(c, id).call(&["CLUSTER", "SLOTS"]).unwrap()))
            .collect();
        let good = maps.iter().all(|m| {
            m.len() == serving
                && m[0] == (i64::from(c.port(leader)), name(leader))
                && m.iter().all(|(port, id)| {
                    c.ids()
                        .into_iter()
                        .any(|i| i64::from(c.port(i)) == *port && name(i) == *id && c.is_up(i))
                })
        });
        if good {
            return;
        }
        assert!(Instant::now() < until, "maps never agreed: {maps:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn cluster_clients_find_the_leader_and_follow_a_failover() {
    let mut c = ProcCluster::start(3, &["--request-timeout-ms", "3000"]);
    let leader = c.wait_leader();
    wait_map(&c, leader, 3);

    let mut l = conn(&c, leader);
    let info = l.call(&["INFO", "cluster"]).unwrap().text();
    assert!(info.contains("cluster_enabled:1"), "{info}");
    let ci = l.call(&["CLUSTER", "INFO"]).unwrap().text();
    for field in [
        "cluster_state:ok",
        "cluster_slots_assigned:16384",
        "cluster_slots_ok:16384",
        "cluster_size:1",
    ] {
        assert!(ci.contains(field), "{field}: {ci}");
    }
    let nodes = l.call(&["CLUSTER", "NODES"]).unwrap().text();
    assert_eq!(nodes.lines().count(), 3, "{nodes}");
    let mine = nodes
        .lines()
        .find(|line| line.starts_with(&name(leader)))
        .unwrap();
    assert!(
        mine.contains("myself,master") && mine.ends_with(" 0-16383"),
        "{mine}"
    );

    // A real cluster client: keys spread over slots, a hash-tagged MSET in one slot.
    let seeds: Vec<String> = c
        .ids()
        .into_iter()
        .map(|id| format!("redis://127.0.0.1:{}", c.port(id)))
        .collect();
    let client = redis::cluster::ClusterClient::new(seeds).unwrap();
    let mut cc = client.get_connection().unwrap();
    for i in 0..50 {
        let _: () = cc.set(format!("key:{i}"), i).unwrap();
    }
    let _: () = redis::cmd("MSET")
        .arg("{user1}.name")
        .arg("ada")
        .arg("{user1}.lang")
        .arg("rust")
        .query(&mut cc)
        .unwrap();
    for i in 0..50 {
        let v: i64 = cc.get(format!("key:{i}")).unwrap();
        assert_eq!(v, i);
    }
    let v: Vec<String> = redis::cmd("MGET")
        .arg("{user1}.name")
        .arg("{user1}.lang")
        .query(&mut cc)
        .unwrap();
    assert_eq!(v, ["ada", "rust"]);

    // Slots as Redis computes them, and this node's keys in them.
    let slot = l.call(&["CLUSTER", "KEYSLOT", "key:7"]).unwrap();
    let Value::Int(slot) = slot else {
        panic!("{slot:?}")
    };
    let same_slot: Vec<String> = (0..50)
        .map(|i| format!("key:{i}"))
        .filter(|k| conn(&c, leader).call(&["CLUSTER", "KEYSLOT", k]).unwrap() == Value::Int(slot))
        .collect();
    let s = slot.to_string();
    assert_eq!(
        l.call(&["CLUSTER", "COUNTKEYSINSLOT", &s]).unwrap(),
        Value::Int(same_slot.len() as i64)
    );
    let Value::Array(Some(keys)) = l.call(&["CLUSTER", "GETKEYSINSLOT", &s, "100"]).unwrap() else {
        panic!("GETKEYSINSLOT")
    };
    assert_eq!(keys.len(), same_slot.len());
    assert!(keys.contains(&Value::Bulk(Some(b"key:7".to_vec()))));
    assert_eq!(
        l.call(&["CLUSTER", "COUNTKEYSINSLOT", "16384"]).unwrap(),
        Value::Error("ERR Invalid slot".into())
    );

    // The leader dies: the others elect a new one and every node's map names it. A client
    // that connects now (from the same seed list, the dead node in it) is sent there.
    // (The `redis` crate's client does not refresh its map on a refused connection to a
    // master, against Redis as here; redis-py's `RedisCluster` does.)
    c.kill(leader);
    let until = Instant::now() + Duration::from_secs(30);
    let new_leader = loop {
        let l = c.wait_leader();
        if l != leader {
            break l;
        }
        assert!(Instant::now() < until, "no new leader");
        std::thread::sleep(Duration::from_millis(100));
    };
    wait_map(&c, new_leader, 2);
    let mut cc = client.get_connection().unwrap();
    let v: i64 = cc.get("key:3").unwrap();
    assert_eq!(v, 3);
    let _: () = cc.set("after", "failover").unwrap();
    let v: String = conn(&c, new_leader).call(&["GET", "after"]).unwrap().text();
    assert_eq!(v, "failover");
}
